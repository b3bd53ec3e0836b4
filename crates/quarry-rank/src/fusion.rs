//! Hybrid ranking: the BM25 and kNN lists combined with weights set by the query plan (a convex
//! combination of normalised scores by default, weighted RRF as the alternative), then boosts
//! for named symbols and files, then at most a few chunks a file.
//!
//! Why adaptive weights: on natural-language questions dense retrieval is far better than
//! BM25 (CoSQA dev: MRR 0.54 vs 0.34) and equal-weight fusion loses to dense alone, while
//! issue texts full of identifiers and paths are where word overlap is the strongest evidence.
//! The planner tells the two apart without a model, so the rule is cheap and explainable:
//!
//! | query (from the plan)                     | lexical weight | semantic weight |
//! |-------------------------------------------|----------------|-----------------|
//! | natural language (no identifiers/paths)   | `nl_lexical`   | 1               |
//! | names identifiers or files, or is long    | 1              | `code_semantic` |
//!
//! convex: fused = (w_lex · bm25/bm25_max + w_sem · (cos − cos_min)/(cos_max − cos_min)) / (w_lex + w_sem);
//! rrf: fused = Σ wᵢ / (k + rankᵢ) divided by its best value Σ wᵢ / (k + 1). Both lie in 0..1 and a
//! hit missing from a list gets 0 from it; boosts are added on that scale.

use crate::plan::QueryPlan;
use quarry_core::ChunkHit;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How the two lists' evidence is combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FusionMethod {
    /// Weighted sum of normalised scores: BM25 / the list's best BM25, and the cosine min-max
    /// scaled over the kNN list. Keeps how *much* better one hit is than the next, which rank
    /// fusion throws away (CoSQA dev, MiniLM: MRR 0.534 vs 0.510 for the best weighted RRF).
    Convex,
    /// Weighted reciprocal rank fusion, Σ wᵢ / (k + rankᵢ).
    Rrf,
}

/// Every constant of the hybrid pipeline, in one place.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FusionConfig {
    pub method: FusionMethod,
    pub lexical_candidates: usize,
    pub semantic_candidates: usize,
    pub rrf_k: f64,
    /// Lexical weight for natural-language queries.
    pub nl_lexical: f64,
    /// Semantic weight for queries that name code.
    pub code_semantic: f64,
    /// Added when a query identifier is the chunk's primary symbol.
    pub symbol_boost: f64,
    /// Added when a file hint matches the chunk's path.
    pub path_boost: f64,
    /// Chunks per file before the others: later ones of a file go after every file's first
    /// `max_per_file`.
    pub max_per_file: usize,
    /// Cosine below which a result nothing else supports is not an answer (answers.rs).
    pub answer_floor: f64,
    /// The same for commits found by meaning alone: commit messages sit at other cosines
    /// than code (docs/EVAL.md, "What counts as an answer").
    pub commit_answer_floor: f64,
    /// Lexical weight beside meaning (1) when a whole issue text ranks commits: higher than
    /// `nl_lexical`, since an issue's code names and pasted expressions are the words its
    /// fix's patch and test repeat (docs/EVAL.md, issue [19]).
    pub commit_issue_lexical: f64,
    /// Factor on the score of a commit that changed code and tests when an issue text ranks
    /// commits (role::fix_shaped).
    pub commit_fix_prior: f64,
    /// How much a commit gains when its changed lines repeat an issue text's code (echo.rs):
    /// its score times `1 + w · ln(1 + shingles echoed)`.
    pub commit_code_echo: f64,
    /// Factor on a commit authored before the release an issue text says it runs
    /// (releases.rs): the fix came after the bug was released.
    pub commit_before_release_prior: f64,
    /// File-level ranking (files.rs).
    pub files: crate::files::FileRankConfig,
}

impl Default for FusionConfig {
    fn default() -> Self {
        FusionConfig {
            method: FusionMethod::Convex,
            lexical_candidates: 300,
            semantic_candidates: 50,
            rrf_k: 60.0,
            nl_lexical: 0.2,
            code_semantic: 0.5,
            symbol_boost: 0.25,
            path_boost: 0.10,
            max_per_file: 3,
            answer_floor: 0.35,
            commit_answer_floor: 0.40,
            commit_issue_lexical: 0.4,
            commit_fix_prior: 1.25,
            commit_code_echo: 0.15,
            commit_before_release_prior: 0.5,
            files: crate::files::FileRankConfig::default(),
        }
    }
}

/// How a hybrid result's score was made (`--explain`, `score_parts` in JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ScoreParts {
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// BM25 score, when the chunk was in the lexical list.
    pub bm25: Option<f64>,
    /// Cosine similarity, when the chunk was in the semantic list.
    pub cosine: Option<f64>,
    pub lexical_weight: f64,
    pub semantic_weight: f64,
    /// Normalised fused score, before boosts.
    pub fused: f64,
    pub boost: f64,
}

/// The (lexical, semantic) weights for a query.
pub fn weights(plan: &QueryPlan, cfg: &FusionConfig) -> (f64, f64) {
    if plan.natural_language {
        (cfg.nl_lexical, 1.0)
    } else {
        (1.0, cfg.code_semantic)
    }
}

fn last_segment(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

fn boost(hit: &ChunkHit, plan: &QueryPlan, cfg: &FusionConfig) -> f64 {
    let mut b = 0.0;
    if let Some(symbol) = &hit.symbol {
        let own = last_segment(symbol);
        if plan
            .identifiers
            .iter()
            .any(|id| last_segment(id).eq_ignore_ascii_case(own))
        {
            b += cfg.symbol_boost;
        }
    }
    let file_name = hit.path.rsplit('/').next().unwrap_or(&hit.path);
    if plan.file_hints.iter().any(|h| {
        let h = h.trim_start_matches("./");
        hit.path.ends_with(h) || (!h.contains('/') && file_name.eq_ignore_ascii_case(h))
    }) {
        b += cfg.path_boost;
    }
    b
}

/// Fuses the two ranked lists into one, best first.
pub fn fuse(
    lexical: Vec<ChunkHit>,
    semantic: Vec<ChunkHit>,
    plan: &QueryPlan,
    cfg: &FusionConfig,
) -> Vec<(ChunkHit, ScoreParts)> {
    // Without a semantic list (lexical mode, or no vectors) the lexical scores are the whole
    // evidence, on the same 0..1 scale as in hybrid.
    let (wl, ws) = if semantic.is_empty() {
        (1.0, 0.0)
    } else {
        weights(plan, cfg)
    };
    let best = wl / (cfg.rrf_k + 1.0) + ws / (cfg.rrf_k + 1.0);
    let mut by_id: HashMap<i64, (ChunkHit, ScoreParts)> = HashMap::new();
    for (rank, hit) in lexical.into_iter().enumerate() {
        let parts = ScoreParts {
            lexical_rank: Some(rank + 1),
            bm25: Some(hit.score),
            ..Default::default()
        };
        by_id.insert(hit.id, (hit, parts));
    }
    for (rank, hit) in semantic.into_iter().enumerate() {
        let cosine = hit.score;
        let entry = by_id
            .entry(hit.id)
            .or_insert_with(|| (hit, ScoreParts::default()));
        entry.1.semantic_rank = Some(rank + 1);
        entry.1.cosine = Some(cosine);
    }
    let convex = cfg.method == FusionMethod::Convex;
    let bm25_max = by_id
        .values()
        .filter_map(|(_, p)| p.bm25)
        .fold(f64::MIN, f64::max);
    let cos_max = by_id
        .values()
        .filter_map(|(_, p)| p.cosine)
        .fold(f64::MIN, f64::max);
    let cos_min = by_id
        .values()
        .filter_map(|(_, p)| p.cosine)
        .fold(f64::MAX, f64::min);
    let mut fused: Vec<(ChunkHit, ScoreParts)> = by_id
        .into_values()
        .map(|(mut hit, mut parts)| {
            let rrf = |w: f64, r: Option<usize>| r.map_or(0.0, |r| w / (cfg.rrf_k + r as f64));
            parts.lexical_weight = wl;
            parts.semantic_weight = ws;
            parts.fused = if convex {
                let lex = parts
                    .bm25
                    .map_or(0.0, |b| if bm25_max > 0.0 { b / bm25_max } else { 0.0 });
                let sem = parts.cosine.map_or(0.0, |c| {
                    if cos_max > cos_min {
                        (c - cos_min) / (cos_max - cos_min)
                    } else {
                        1.0
                    }
                });
                (wl * lex + ws * sem) / (wl + ws)
            } else {
                (rrf(wl, parts.lexical_rank) + rrf(ws, parts.semantic_rank)) / best
            };
            parts.boost = boost(&hit, plan, cfg);
            hit.score = parts.fused + parts.boost;
            (hit, parts)
        })
        .collect();
    fused.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.id.cmp(&b.0.id)));
    fused
}

/// Puts at most `max_per_file` results of each file first, in order, and every later result
/// of a file after them (in order too): a file's fourth chunk is not lost, it waits until
/// every file has shown its best, so a larger `-k` still reaches it. `unit_of` names a
/// result's repo, path and PDF page: each page of a PDF counts as a file of its own (a
/// 600-page manual is many documents, and three pages of it must not hide the rest).
pub fn diversify<T>(
    results: Vec<T>,
    unit_of: impl Fn(&T) -> (&str, &str, Option<u32>),
    max_per_file: usize,
) -> Vec<T> {
    let mut seen: HashMap<(String, String, Option<u32>), usize> = HashMap::new();
    let (mut first, mut later) = (Vec::new(), Vec::new());
    for r in results {
        let (repo, path, page) = unit_of(&r);
        let n = seen
            .entry((repo.to_string(), path.to_string(), page))
            .or_insert(0);
        *n += 1;
        if *n <= max_per_file {
            first.push(r);
        } else {
            later.push(r);
        }
    }
    first.extend(later);
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan;
    use quarry_core::Language;

    fn hit(id: i64, path: &str, symbol: Option<&str>, score: f64) -> ChunkHit {
        ChunkHit {
            id,
            repo: "r".into(),
            path: path.into(),
            start_line: 1,
            end_line: 2,
            symbol: symbol.map(Into::into),
            kind: "function".into(),
            language: Language::Rust,
            score,
            text: String::new(),
            page: None,
            cell: None,
        }
    }

    #[test]
    fn natural_language_leans_semantic_and_code_queries_lean_lexical() {
        for method in [FusionMethod::Convex, FusionMethod::Rrf] {
            let cfg = FusionConfig {
                method,
                ..FusionConfig::default()
            };
            let lex = vec![hit(1, "a.rs", None, 9.0), hit(2, "b.rs", None, 4.0)];
            let sem = vec![
                hit(2, "b.rs", None, 0.80),
                hit(1, "a.rs", None, 0.75),
                hit(3, "c.rs", None, 0.5),
            ];
            let nl = fuse(
                lex.clone(),
                sem.clone(),
                &plan("where do we retry failed uploads"),
                &cfg,
            );
            assert_eq!(
                nl[0].0.id, 2,
                "{method:?}: semantic's first wins a natural-language query"
            );
            let code = fuse(
                lex,
                sem,
                &plan("requeue_with_backoff is never called"),
                &cfg,
            );
            assert_eq!(
                code[0].0.id, 1,
                "{method:?}: lexical's first wins a query naming code"
            );
            let top = &code[0].1;
            assert_eq!((top.lexical_rank, top.semantic_rank), (Some(1), Some(2)));
            assert!(code
                .iter()
                .all(|(h, p)| h.score <= 1.0 + p.boost + 1e-12 && p.fused >= 0.0));
            assert_eq!(code.last().unwrap().0.id, 3);
        }
    }

    #[test]
    fn a_chunk_first_in_both_lists_scores_one() {
        for method in [FusionMethod::Convex, FusionMethod::Rrf] {
            let cfg = FusionConfig {
                method,
                ..FusionConfig::default()
            };
            let fused = fuse(
                vec![hit(7, "x.rs", None, 3.0)],
                vec![hit(7, "x.rs", None, 0.9)],
                &plan("anything at all"),
                &cfg,
            );
            assert!((fused[0].1.fused - 1.0).abs() < 1e-12, "{method:?}");
        }
    }

    #[test]
    fn boosts_named_symbols_and_files() {
        let cfg = FusionConfig::default();
        let lex = vec![
            hit(1, "src/other.rs", Some("helper"), 5.0),
            hit(2, "src/queue.rs", Some("Queue.requeue"), 4.0),
        ];
        let fused = fuse(
            lex,
            vec![],
            &plan("why does Queue.requeue drop jobs in queue.rs"),
            &cfg,
        );
        assert_eq!(fused[0].0.id, 2);
        assert!((fused[0].1.boost - (cfg.symbol_boost + cfg.path_boost)).abs() < 1e-12);
        assert_eq!(fused[1].1.boost, 0.0);
    }

    #[test]
    fn diversify_moves_a_files_extra_chunks_after_the_others() {
        let hits: Vec<ChunkHit> = (0..6)
            .map(|i| hit(i, if i < 4 { "a.rs" } else { "b.rs" }, None, 1.0))
            .collect();
        let kept = diversify(hits, |h| (h.repo.as_str(), h.path.as_str(), h.page), 3);
        assert_eq!(
            kept.iter().map(|h| h.id).collect::<Vec<_>>(),
            [0, 1, 2, 4, 5, 3]
        );
    }
}
