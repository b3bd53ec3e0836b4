//! A pointwise second stage: a small local model judges each of the first stage's top
//! candidates on its own ("is this what the search is looking for?"), and its judgements are
//! blended with the first stage's order (quarry-rank's `blend`).
//!
//! Unlike the listwise rerank (`rerank.rs`), which shows one prompt with every candidate to a
//! capable model, this asks one small question per candidate, so it runs in-process with no
//! service at all. Judgements are cached in the workspace per (model, query, candidate text), so
//! a repeated query, or the same query scored at another blend, costs nothing.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Result;
use quarry_llm::RelevanceScorer;
use serde::{Deserialize, Serialize};

use quarry_engine::answer::SearchResult;
use quarry_engine::Workspace;

#[derive(Serialize, Deserialize, Default)]
struct CachedJudgements {
    scorer: String,
    /// Candidate key (path, lines, text hash) → probability of "yes".
    scores: HashMap<String, f32>,
}

/// What the judge reads for one candidate: its path (a file's name says much of what it is)
/// and its text.
fn passage(result: &SearchResult) -> String {
    format!(
        "# {}\n{}",
        result.path,
        result.text.as_deref().unwrap_or("")
    )
}

fn candidate_key(result: &SearchResult) -> String {
    format!(
        "{}:{}-{}:{}",
        result.path,
        result.start_line,
        result.end_line,
        quarry_core::content_hash(result.text.as_deref().unwrap_or("").as_bytes())
    )
}

/// The judge's probability of "yes" for each of `results` (which need their text), from the
/// workspace's cache where it has them.
pub fn relevance_scores(
    ws: &Workspace,
    query: &str,
    results: &[SearchResult],
    scorer: &dyn RelevanceScorer,
) -> Result<Vec<f32>> {
    let name = scorer.describe();
    let file = relevance_cache_file(ws, &name, query);
    let mut cache: CachedJudgements = std::fs::read(&file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .filter(|c: &CachedJudgements| c.scorer == name)
        .unwrap_or_default();
    cache.scorer = name;
    let mut asked = false;
    let mut scores = Vec::with_capacity(results.len());
    for result in results {
        let key = candidate_key(result);
        let score = match cache.scores.get(&key) {
            Some(&score) => score,
            None => {
                let score = scorer.relevance(query, &passage(result))?;
                cache.scores.insert(key, score);
                asked = true;
                score
            }
        };
        scores.push(score);
    }
    if asked {
        quarry_engine::write_json_atomically(&file, &cache);
    }
    Ok(scores)
}

fn relevance_cache_file(ws: &Workspace, scorer: &str, query: &str) -> PathBuf {
    let key = quarry_core::content_hash(format!("{scorer}\n{query}").as_bytes());
    ws.dir()
        .join("cache")
        .join("relevance")
        .join(format!("{key}.json"))
}

/// Reorders the first `scores.len()` results by the judge's scores blended with their
/// first-stage order (`model_weight` 1: the judge alone).
pub fn reorder(results: &mut Vec<SearchResult>, scores: &[f32], model_weight: f64) {
    let n = scores.len().min(results.len());
    let order = quarry_rank::rerank::blend(&scores[..n], model_weight);
    let mut slots: Vec<Option<SearchResult>> = results.drain(..n).map(Some).collect();
    let reordered: Vec<SearchResult> = order.into_iter().filter_map(|i| slots[i].take()).collect();
    results.splice(0..0, reordered);
}
