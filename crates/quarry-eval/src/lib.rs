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
mod functions;
#[cfg(test)]
mod judge_test;
mod metrics;
pub mod pointwise;

use anyhow::{bail, Context, Result};
use quarry_core::store::FieldWeights;
use quarry_core::Language;
use quarry_engine::answer::{rank_files, Mode};
use quarry_engine::request::SearchRequest;
use quarry_engine::{IndexOptions, Progress, Workspace};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use metrics::{FunctionMetrics, Metrics};
use std::collections::{BTreeMap, HashMap};

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
    /// Finer labels: qualified names of the definitions the answer changes, per file
    /// (`{"src/a.py": ["Class.method"]}`); scored at function level when present.
    #[serde(default)]
    pub relevant_symbols: HashMap<String, Vec<String>>,
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
    pub fusion: quarry_engine::fusion::FusionConfig,
    /// Settings to score side by side on the same index, each with a label (`key=value`);
    /// empty: just `fusion`.
    pub variants: Vec<(String, quarry_engine::fusion::FusionConfig)>,
    /// The model for semantic and hybrid modes.
    pub embedder: Option<std::sync::Arc<dyn quarry_core::Embedder>>,
    /// Score agentic search's offline variant (follow-ups from the top results' names).
    pub agentic: bool,
    /// Sync each git corpus's history as it stood at the query's commit (commits that commit
    /// reaches, never a later one), so that ranking may take past changes as evidence.
    pub history: bool,
    /// Answer each query through the router, as `quarry search` does.
    pub route: bool,
    /// A local model that judges each search's top results (the pointwise second stage),
    /// scored beside the first stage at each blend weight.
    pub judge: Option<Judge>,
}

/// The pointwise second stage under evaluation.
#[derive(Clone)]
pub struct Judge {
    pub scorer: std::sync::Arc<dyn quarry_llm::RelevanceScorer>,
    /// Top results each query's judge reads.
    pub candidates: usize,
    /// Weights of the judge's order against the first stage's (1: the judge alone).
    pub model_weights: Vec<f64>,
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
    /// The file ranking's first 20 files with their scores and score parts (for analysing
    /// what a change of ranking would do without searching again).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ranked_files: Vec<quarry_rank::RankedFile>,
    /// The first 10 results (chunks), as `path:start-end symbol`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_results: Vec<String>,
    /// 1-based rank of the first result (chunk) that overlaps a labelled definition, when the
    /// query has `relevant_symbols` found in the index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_rank: Option<usize>,
    /// Whether the query's definition labels were found in the index (it counts at function
    /// level).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub function_labelled: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub queries_file: String,
    /// The mode the searches ran in (`auto` resolved).
    pub mode: Mode,
    /// The settings varied for this report (`--sweep`), as `key=value` pairs.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub setting: String,
    pub queries: usize,
    pub metrics: Metrics,
    /// Per repository, when the queries span several.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_repo: BTreeMap<String, Metrics>,
    /// Function level, over the queries with definition labels found in the index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionMetrics>,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    /// Time spent laying out corpora and indexing them.
    pub index_ms: u64,
    /// Queries that could not be run, with the reason (counted as misses in `metrics`).
    pub unavailable: Vec<(String, String)>,
    pub per_query: Vec<QueryOutcome>,
}

/// Every combination of the swept values (`KEY=V1,V2,...` each), a labelled copy of `config`
/// per combination (`key=v1 other=v2`): what `quarry eval --sweep` scores side by side.
pub fn swept_settings(
    config: &quarry_engine::Config,
    sweeps: &[String],
) -> Result<Vec<(String, quarry_engine::Config)>> {
    let mut variants: Vec<(String, quarry_engine::Config)> = Vec::new();
    for sweep in sweeps {
        let (key, values) = sweep
            .split_once('=')
            .with_context(|| format!("`--sweep {sweep}` is not KEY=V1,V2,..."))?;
        let base = if variants.is_empty() {
            vec![(String::new(), config.clone())]
        } else {
            std::mem::take(&mut variants)
        };
        for (label, cfg) in base {
            for value in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                let mut cfg = cfg.clone();
                cfg.set(key.trim(), value)?;
                let label = format!(
                    "{label}{}{}={value}",
                    if label.is_empty() { "" } else { " " },
                    key.trim()
                );
                variants.push((label, cfg));
            }
        }
    }
    Ok(variants)
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
    let mut runs = mode_runs(opts, queries.len());
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
        ws.index_repo(&tree, &index_opts, &quarry_engine::NoProgress)?;
        if needs_vectors {
            ws.embed_pending(progress, &[])?;
        }
        // The history as it stood at the query's commit: no later commit (the fix) is there.
        if opts.history {
            if let corpus::Source::Git {
                git_dir: Some(git_dir),
                commit,
                ..
            } = &group.source
            {
                ws.sync_history_at(
                    git_dir,
                    &group.repo_name,
                    commit,
                    &quarry_engine::NoProgress,
                )?;
            }
        }
        index_time += started.elapsed();

        progress.begin(
            &format!("querying {}", group.label),
            (group.queries.len() * runs.len()) as u64,
        );
        let labels: HashMap<usize, Vec<functions::Span>> = group
            .queries
            .iter()
            .map(|&i| Ok((i, functions::resolve(&ws, &queries[i], &group.repo_name)?)))
            .collect::<Result<_>>()?;
        for run in &mut runs {
            for &i in &group.queries {
                let outcome =
                    run_query(&ws, &queries[i], run, &group.repo_name, opts, &labels[&i])?;
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

/// One mode's (and setting's) outcomes, query by query (`None`: the query could not run).
struct ModeRun {
    /// The mode asked for, then the one searches resolved to (`auto` → hybrid or lexical).
    mode: Mode,
    /// The label of the settings varied, and the settings.
    setting: String,
    fusion: quarry_engine::fusion::FusionConfig,
    /// The judge's blend weight, when this run reorders by the judge.
    model_weight: Option<f64>,
    outcomes: Vec<Option<QueryOutcome>>,
}

/// Every mode × every setting variant.
fn mode_runs(opts: &EvalOptions, queries: usize) -> Vec<ModeRun> {
    let variants = if opts.variants.is_empty() {
        vec![(String::new(), opts.fusion)]
    } else {
        opts.variants.clone()
    };
    // The first stage alone, then each judge weight on top of it.
    let mut weights = vec![None];
    if let Some(judge) = &opts.judge {
        weights.extend(judge.model_weights.iter().copied().map(Some));
    }
    let mut runs = Vec::new();
    for &mode in &opts.modes {
        for (setting, fusion) in &variants {
            for &model_weight in &weights {
                let setting = match model_weight {
                    Some(w) => format!("{setting} judge_weight={w}").trim().to_string(),
                    None => setting.clone(),
                };
                runs.push(ModeRun {
                    mode,
                    setting,
                    fusion: *fusion,
                    model_weight,
                    outcomes: vec![None; queries],
                });
            }
        }
    }
    runs
}

/// Runs one query; returns the mode the search resolved to and the outcome.
fn run_query(
    ws: &Workspace,
    q: &EvalQuery,
    run: &ModeRun,
    repo: &str,
    opts: &EvalOptions,
    labels: &[functions::Span],
) -> Result<(Mode, QueryOutcome)> {
    // A query over the cap is cut to it, as a client must: scored, not refused.
    let text: String = q
        .query
        .chars()
        .take(quarry_engine::request::MAX_QUERY_CHARS)
        .collect();
    let mut request = SearchRequest::new(text);
    request.mode = run.mode;
    request.repos = vec![repo.to_string()];
    request.language = opts.language;
    request.limit = opts.candidates;
    request.weights = opts.weights;
    request.fusion = run.fusion;
    // The file ranking comes back with each outcome (`ranked_files`); it changes no order.
    request.explain = true;
    let started = Instant::now();
    let judge = opts.judge.as_ref().zip(run.model_weight);
    if let Some((judge, _)) = judge {
        request.full_text = request.full_text.max(judge.candidates);
    }
    let mut response = if opts.agentic {
        ws.search_agentic(&request, None)?
    } else if opts.route {
        let mut routed = request.clone();
        routed.mode = Mode::Auto;
        ws.search_routed(&routed)?
    } else {
        ws.search(&request)?
    };
    if let Some((judge, weight)) = judge {
        let n = judge.candidates.min(response.results.len());
        let scores = crate::pointwise::relevance_scores(
            &ws,
            &request.query,
            &response.results[..n],
            &*judge.scorer,
        )?;
        crate::pointwise::reorder(&mut response.results, &scores, weight);
    }
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
            ranked_files: response.files.iter().take(20).cloned().collect(),
            top_results: response
                .results
                .iter()
                .take(10)
                .map(|r| {
                    format!(
                        "{}:{}-{} {}",
                        r.path,
                        r.start_line,
                        r.end_line,
                        r.symbol.as_deref().unwrap_or("-")
                    )
                })
                .collect(),
            function_rank: functions::first_rank(&response.results, labels),
            function_labelled: !labels.is_empty(),
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
    let mut by_repo: BTreeMap<String, Metrics> = BTreeMap::new();
    let mut function = FunctionMetrics::default();
    let mut latencies = Vec::new();
    for (q, outcome) in queries.iter().zip(&outcomes) {
        let repo = by_repo
            .entry(q.repo.clone().unwrap_or_default())
            .or_default();
        match outcome {
            Some(o) => {
                metrics.add(&o.top, o.first_relevant_rank, &q.relevant);
                repo.add(&o.top, o.first_relevant_rank, &q.relevant);
                if o.function_labelled {
                    function.add(o.function_rank);
                }
                latencies.push(o.latency_ms);
            }
            None => {
                metrics.add(&[], None, &q.relevant);
                repo.add(&[], None, &q.relevant);
            }
        }
    }
    metrics.finish();
    by_repo.values_mut().for_each(Metrics::finish);
    if by_repo.len() < 2 {
        by_repo.clear();
    }
    function.finish();
    EvalReport {
        queries_file: queries_file.display().to_string(),
        mode: run.mode,
        setting: run.setting,
        queries: queries.len(),
        metrics,
        by_repo,
        function: (function.queries > 0).then_some(function),
        latency_ms_p50: metrics::percentile(&mut latencies, 0.50),
        latency_ms_p95: metrics::percentile(&mut latencies, 0.95),
        index_ms,
        unavailable: unavailable.to_vec(),
        per_query: outcomes.into_iter().flatten().collect(),
    }
}
