//! Commit retrieval sets (`relevant` = commit SHAs, corpus = a repo's whole history): each
//! repo's history is synced once into the evaluation workspace, then every query's issue text
//! ranks commits.

use super::{corpus, report, EvalOptions, EvalQuery, EvalReport, ModeRun, QueryOutcome};
use anyhow::{bail, Result};
use quarry_core::history::CommitQuery;
use quarry_engine::answer::Mode;
use quarry_engine::{Progress, Workspace};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub fn run(
    queries_file: &Path,
    queries: &[EvalQuery],
    opts: &EvalOptions,
    progress: &dyn Progress,
) -> Result<Vec<EvalReport>> {
    let Some(repos_dir) = &opts.repos_dir else {
        bail!(
            "{} ranks commits of git repositories: pass --repos DIR",
            queries_file.display()
        );
    };
    let ws_dir = opts.work_dir.join("workspace");
    let (mut ws, _lock) = Workspace::open_for_writing(&ws_dir, Duration::from_secs(30), true)?;
    let needs_vectors = opts.modes.iter().any(|m| *m != Mode::Lexical);
    if needs_vectors {
        if opts.embedder.is_none() {
            bail!("semantic and hybrid evaluation need the embedding model: run `quarry model install`");
        }
        ws.set_embedder(opts.embedder.clone());
    }
    let mut index_time = Duration::ZERO;
    let mut names: HashMap<String, Result<String, String>> = HashMap::new();
    for q in queries {
        let Some(repo) = &q.repo else { continue };
        if names.contains_key(repo) {
            continue;
        }
        let name = format!("{}-history", repo.replace('/', "+"));
        let synced = match corpus::find_git_dir(repos_dir, repo) {
            None => Err(format!(
                "no git repository for {repo} in {}",
                repos_dir.display()
            )),
            Some(git_dir) => {
                let started = Instant::now();
                let result = ws
                    .sync_history(&git_dir, Some(&name), true, progress)
                    .map(|r| r.repo)
                    .map_err(|e| format!("{e:#}"));
                index_time += started.elapsed();
                result
            }
        };
        names.insert(repo.clone(), synced);
    }
    if needs_vectors {
        let started = Instant::now();
        if let Some(report) = ws.embed_history(
            progress,
            quarry_engine::commit_search::HistoryEmbedScope::All,
            &[],
        )? {
            if let Some(why) = report.interrupted {
                bail!("embedding the histories failed: {why}");
            }
        }
        index_time += started.elapsed();
    }
    let mut runs: Vec<ModeRun> = super::mode_runs(opts, queries.len());
    let mut unavailable = Vec::new();
    progress.begin("querying commits", queries.len() as u64);
    for (i, q) in queries.iter().enumerate() {
        let name = match q.repo.as_ref().and_then(|r| names.get(r)) {
            Some(Ok(name)) => name.clone(),
            Some(Err(why)) => {
                unavailable.push((q.id.clone(), why.clone()));
                continue;
            }
            None => {
                unavailable.push((q.id.clone(), "the query names no repo".to_string()));
                continue;
            }
        };
        for run in &mut runs {
            let started = Instant::now();
            let found = ws.search_commits(
                &q.query,
                CommitQuery {
                    repos: vec![name.clone()],
                    limit: opts.candidates.max(10),
                    ..Default::default()
                },
                run.mode,
                &run.fusion,
            )?;
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            run.mode = found.mode;
            let top: Vec<String> = found.commits.into_iter().map(|h| h.sha).collect();
            let first_relevant_rank = top
                .iter()
                .position(|s| q.relevant.contains(s))
                .map(|p| p + 1);
            run.outcomes[i] = Some(QueryOutcome {
                id: q.id.clone(),
                first_relevant_rank,
                latency_ms,
                top: top.iter().take(10).cloned().collect(),
                top_results: Vec::new(),
                ranked_files: Vec::new(),
                function_rank: None,
                function_labelled: false,
            });
        }
        progress.advance(1);
    }
    progress.end();
    let index_ms = index_time.as_millis() as u64;
    Ok(runs
        .into_iter()
        .map(|run| report(queries_file, queries, run, index_ms, &unavailable))
        .collect())
}
