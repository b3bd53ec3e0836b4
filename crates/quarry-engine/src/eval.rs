//! `quarry eval`: scores retrieval on a query set in the format of the shared evaluation
//! sets (one JSON object per line: `query`, `relevant` files, and the corpus — a JSONL file of
//! documents, or a repository at a commit).
//!
//! Each distinct corpus is indexed once into a separate evaluation workspace (never the
//! user's). Repositories are laid out commit by commit in one folder per repo, writing only
//! the files that differ, so the incremental indexer re-reads just what changed between
//! commits — this keeps a 77-commit sympy set to minutes on a laptop.

mod commits;
mod corpus;
mod metrics;

use crate::search::{rank_files, Mode, SearchRequest};
use crate::{IndexOptions, Progress, Workspace};
use anyhow::{bail, Context, Result};
use quarry_core::store::FieldWeights;
use quarry_core::Language;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use metrics::Metrics;

/// One line of a query file.
#[derive(Debug, Clone, Deserialize)]
pub struct EvalQuery {
    pub id: String,
    pub query: String,
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub corpus: Option<String>,
    pub relevant: Vec<String>,
}

#[derive(Clone)]
pub struct EvalOptions {
    /// The modes to score; each corpus is indexed once and every mode runs against it.
    pub modes: Vec<Mode>,
    /// Where git repositories for `repo`/`commit` rows are found: `DIR/owner+name/repo`,
    /// `DIR/owner+name`, `DIR/name` or `DIR/name.git` (bare or not).
    pub repos_dir: Option<PathBuf>,
    /// Where evaluation trees and the evaluation workspace live.
    pub work_dir: PathBuf,
    /// Chunks retrieved per query before ranking files.
    pub candidates: usize,
    pub language: Option<Language>,
    /// Evaluate only the first N queries.
    pub max_queries: Option<usize>,
    pub weights: FieldWeights,
    pub fusion: crate::search::FusionConfig,
    /// The model for semantic and hybrid modes.
    pub embedder: Option<std::sync::Arc<dyn quarry_core::Embedder>>,
}

/// The outcome of one query.
#[derive(Debug, Clone, Serialize)]
pub struct QueryOutcome {
    pub id: String,
    /// 1-based rank of the first relevant file among distinct files, if retrieved.
    pub first_relevant_rank: Option<usize>,
    pub latency_ms: f64,
    /// The top 10 files returned.
    pub top: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub queries_file: String,
    /// The mode the searches ran in (`auto` resolved).
    pub mode: Mode,
    pub queries: usize,
    pub metrics: Metrics,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    /// Time spent laying out corpora and indexing them.
    pub index_ms: u64,
    /// Queries that could not be run, with the reason (counted as misses in `metrics`).
    pub unavailable: Vec<(String, String)>,
    pub per_query: Vec<QueryOutcome>,
}

/// Reads a query file.
pub fn read_queries(path: &Path) -> Result<Vec<EvalQuery>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{}:{}: not a query object", path.display(), i + 1))
        })
        .collect()
}

fn looks_like_commit_labels(queries: &[EvalQuery]) -> bool {
    let is_sha = |s: &String| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    !queries.is_empty()
        && queries
            .iter()
            .all(|q| !q.relevant.is_empty() && q.relevant.iter().all(is_sha))
}

/// Runs the evaluation: one report per mode, in the order of `opts.modes`.
pub fn run(
    queries_file: &Path,
    opts: &EvalOptions,
    progress: &dyn Progress,
) -> Result<Vec<EvalReport>> {
    if opts.modes.is_empty() {
        bail!("no mode to evaluate");
    }
    let mut queries = read_queries(queries_file)?;
    if let Some(n) = opts.max_queries {
        queries.truncate(n);
    }
    if looks_like_commit_labels(&queries) {
        return commits::run(queries_file, &queries, opts, progress);
    }
    let base = queries_file.parent().unwrap_or(Path::new("."));
    let plan = corpus::plan(&queries, base, opts)?;

    let ws_dir = opts.work_dir.join("workspace");
    let (mut ws, _lock) = Workspace::open_for_writing(&ws_dir, Duration::from_secs(30), true)?;
    let needs_vectors = opts.modes.iter().any(|m| *m != Mode::Lexical) && opts.embedder.is_some();
    if needs_vectors {
        ws.set_embedder(opts.embedder.clone());
    } else if let Some(mode) = opts
        .modes
        .iter()
        .find(|m| matches!(m, Mode::Semantic | Mode::Hybrid))
    {
        bail!("{mode:?} evaluation needs the embedding model: run `quarry model install`");
    }
    let mut runs: Vec<ModeRun> = opts
        .modes
        .iter()
        .map(|&mode| ModeRun {
            mode,
            outcomes: vec![None; queries.len()],
        })
        .collect();
    let mut unavailable = Vec::new();
    let mut index_time = Duration::ZERO;

    for group in &plan {
        let tree = match corpus::lay_out(group, opts) {
            Ok(tree) => tree,
            Err(e) => {
                for &i in &group.queries {
                    unavailable.push((queries[i].id.clone(), format!("{e:#}")));
                }
                continue;
            }
        };
        let started = Instant::now();
        let index_opts = IndexOptions {
            name: Some(group.repo_name.clone()),
            keep_unused_vectors: true,
            ..Default::default()
        };
        ws.index_repo(&tree, &index_opts, &crate::NoProgress)?;
        if needs_vectors {
            ws.embed_pending(progress)?;
        }
        index_time += started.elapsed();

        progress.begin(
            &format!("querying {}", group.label),
            (group.queries.len() * runs.len()) as u64,
        );
        for run in &mut runs {
            for &i in &group.queries {
                let outcome = run_query(&ws, &queries[i], run.mode, &group.repo_name, opts)?;
                run.mode = outcome.0;
                run.outcomes[i] = Some(outcome.1);
                progress.advance(1);
            }
        }
        progress.end();
    }

    let index_ms = index_time.as_millis() as u64;
    Ok(runs
        .into_iter()
        .map(|run| report(queries_file, &queries, run, index_ms, &unavailable))
        .collect())
}

/// One mode's outcomes, query by query (`None`: the query could not run).
struct ModeRun {
    /// The mode asked for, then the one searches resolved to (`auto` → hybrid or lexical).
    mode: Mode,
    outcomes: Vec<Option<QueryOutcome>>,
}

/// Runs one query; returns the mode the search resolved to and the outcome.
fn run_query(
    ws: &Workspace,
    q: &EvalQuery,
    mode: Mode,
    repo: &str,
    opts: &EvalOptions,
) -> Result<(Mode, QueryOutcome)> {
    let mut request = SearchRequest::new(q.query.clone());
    request.mode = mode;
    request.repos = vec![repo.to_string()];
    request.language = opts.language;
    request.limit = opts.candidates;
    request.weights = opts.weights;
    request.fusion = opts.fusion;
    let started = Instant::now();
    let response = ws.search(&request)?;
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let files: Vec<String> = rank_files(&response.results)
        .into_iter()
        .map(|f| f.path)
        .collect();
    let first_relevant_rank = files
        .iter()
        .position(|f| q.relevant.contains(f))
        .map(|p| p + 1);
    Ok((
        response.mode,
        QueryOutcome {
            id: q.id.clone(),
            first_relevant_rank,
            latency_ms,
            top: files.iter().take(10).cloned().collect(),
        },
    ))
}

fn report(
    queries_file: &Path,
    queries: &[EvalQuery],
    run: ModeRun,
    index_ms: u64,
    unavailable: &[(String, String)],
) -> EvalReport {
    let outcomes = run.outcomes;
    let mut metrics = Metrics::default();
    let mut latencies = Vec::new();
    for (q, outcome) in queries.iter().zip(&outcomes) {
        match outcome {
            Some(o) => {
                metrics.add(&o.top, o.first_relevant_rank, &q.relevant);
                latencies.push(o.latency_ms);
            }
            None => metrics.add(&[], None, &q.relevant),
        }
    }
    metrics.finish();
    EvalReport {
        queries_file: queries_file.display().to_string(),
        mode: run.mode,
        queries: queries.len(),
        metrics,
        latency_ms_p50: metrics::percentile(&mut latencies, 0.50),
        latency_ms_p95: metrics::percentile(&mut latencies, 0.95),
        index_ms,
        unavailable: unavailable.to_vec(),
        per_query: outcomes.into_iter().flatten().collect(),
    }
}
