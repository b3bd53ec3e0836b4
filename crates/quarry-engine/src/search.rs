//! The search API under every interface: a request in, ranked chunks out, in the JSON shape
//! documented in docs/JSON.md (later modes extend it, never break it).

use crate::fusion;
pub use crate::fusion::{FusionConfig, FusionMethod, ScoreParts};
use crate::plan::QueryPlan;
use crate::Workspace;
use anyhow::{bail, Result};
use quarry_core::store::FieldWeights;
use quarry_core::{tokens, ChunkHit, Coverage, Language, LexicalQuery, VectorQuery};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How results are retrieved.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 over code-aware tokens.
    Lexical,
    /// Nearest neighbours of the query's embedding.
    Semantic,
    /// Both, fused by the query plan (see `fusion`).
    Hybrid,
    /// Hybrid when the workspace has a model and vectors, else lexical.
    #[default]
    Auto,
}

#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    pub mode: Mode,
    /// Only these repos (by name); empty for all.
    pub repos: Vec<String>,
    pub language: Option<Language>,
    /// Path glob or substring.
    pub path: Option<String>,
    /// Chunks to return.
    pub limit: usize,
    /// Results that carry their text; later ones carry path, lines and symbol only, so an
    /// agent reading a long result list does not pay for text it will not read.
    pub full_text: usize,
    pub weights: FieldWeights,
    pub fusion: FusionConfig,
}

/// Results returned when the caller does not say, and how many of them carry their text.
pub const DEFAULT_LIMIT: usize = 16;
pub const DEFAULT_FULL_TEXT: usize = 8;

impl SearchRequest {
    pub fn new(query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            mode: Mode::Auto,
            repos: Vec::new(),
            language: None,
            path: None,
            limit: DEFAULT_LIMIT,
            full_text: DEFAULT_FULL_TEXT,
            weights: FieldWeights::default(),
            fusion: FusionConfig::default(),
        }
    }
}

/// One ranked chunk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchResult {
    /// Stable across re-indexing while the chunk is unchanged: `repo:path:start-end`.
    pub id: String,
    pub repo: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub kind: String,
    pub language: Language,
    pub score: f64,
    /// The chunk's lines; `None` past the request's `full_text` results.
    #[serde(default)]
    pub text: Option<String>,
    /// How a hybrid score was made.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub score_parts: Option<ScoreParts>,
}

impl From<ChunkHit> for SearchResult {
    fn from(h: ChunkHit) -> Self {
        SearchResult {
            id: format!("{}:{}:{}-{}", h.repo, h.path, h.start_line, h.end_line),
            repo: h.repo,
            path: h.path,
            start_line: h.start_line,
            end_line: h.end_line,
            symbol: h.symbol,
            kind: h.kind,
            language: h.language,
            score: h.score,
            text: Some(h.text),
            score_parts: None,
        }
    }
}

/// What was searched: lets a caller judge how complete and fresh the answer is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IndexSummary {
    pub repos: Vec<String>,
    pub files: u64,
    pub chunks: u64,
    /// When the most recently indexed of the searched repos finished (RFC 3339), if any did.
    pub indexed_at: Option<String>,
    /// Files skipped by the last runs, all reasons together.
    pub skipped: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchResponse {
    pub query: String,
    pub mode: Mode,
    pub results: Vec<SearchResult>,
    pub index: IndexSummary,
    /// Embedded vs all chunks of the searched repos (semantic and hybrid modes): a search
    /// during backfill uses what is embedded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub coverage: Option<Coverage>,
    /// The query plan (hybrid mode).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub plan: Option<QueryPlan>,
    /// What went wrong but did not stop the search (an unreachable embedding endpoint: the
    /// answer is lexical then).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
}

/// A file ranked by its best chunk.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    pub repo: String,
    pub path: String,
    pub score: f64,
}

/// Distinct files in the order of their best chunk.
pub fn rank_files(results: &[SearchResult]) -> Vec<FileResult> {
    let mut seen: HashMap<(&str, &str), ()> = HashMap::new();
    let mut files = Vec::new();
    for r in results {
        if seen.insert((&r.repo, &r.path), ()).is_none() {
            files.push(FileResult {
                repo: r.repo.clone(),
                path: r.path.clone(),
                score: r.score,
            });
        }
    }
    files
}

pub(crate) fn format_time(unix: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

impl Workspace {
    /// Runs one search.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let repos = self.store().repos()?;
        for wanted in &request.repos {
            if !repos.iter().any(|r| &r.name == wanted) {
                let known: Vec<&str> = repos.iter().map(|r| r.name.as_str()).collect();
                bail!(
                    "no repo named `{wanted}` in this workspace (repos: {})",
                    known.join(", ")
                );
            }
        }
        let searched: Vec<_> = repos
            .iter()
            .filter(|r| request.repos.is_empty() || request.repos.contains(&r.name))
            .collect();
        let index = IndexSummary {
            repos: searched.iter().map(|r| r.name.clone()).collect(),
            files: searched.iter().map(|r| r.files).sum(),
            chunks: searched.iter().map(|r| r.chunks).sum(),
            indexed_at: searched
                .iter()
                .filter_map(|r| r.indexed_at)
                .max()
                .map(format_time),
            skipped: searched.iter().flat_map(|r| r.skipped.values()).sum(),
        };
        let lexical = |limit: usize| -> Result<Vec<ChunkHit>> {
            self.store().search_lexical(&LexicalQuery {
                terms: tokens::query_terms(&request.query),
                repos: request.repos.clone(),
                language: request.language,
                path_glob: request.path.clone(),
                limit,
                weights: request.weights,
            })
        };
        let coverage = match (&self.embedder, request.mode) {
            (_, Mode::Lexical) | (None, Mode::Auto) => None,
            (None, _) => bail!(
                "{:?} search needs the embedding model: run `quarry model install` (or search with --mode lexical)",
                request.mode
            ),
            (Some(_), _) => Some(self.store().coverage(&request.repos)?),
        };
        let mut mode = match request.mode {
            Mode::Auto if coverage.is_some_and(|c| c.embedded > 0) => Mode::Hybrid,
            Mode::Auto => Mode::Lexical,
            m => m,
        };
        // The query's vector first: if the embedder fails (an endpoint that went down), the
        // answer is lexical with a warning, never an error and never a hang.
        let mut warnings = Vec::new();
        let mut query_vector = None;
        if let (Mode::Semantic | Mode::Hybrid, Some(embedder)) = (mode, &self.embedder) {
            match embedder.embed(&[request.query.as_str()]) {
                Ok(mut v) => query_vector = v.pop(),
                Err(e) => {
                    warnings.push(format!("{e:#}; answered lexically"));
                    mode = Mode::Lexical;
                }
            }
        }
        let semantic = |limit: usize| -> Result<Vec<ChunkHit>> {
            let Some(vector) = query_vector.clone() else {
                return Ok(Vec::new());
            };
            self.store().search_vector(&VectorQuery {
                vector,
                repos: request.repos.clone(),
                language: request.language,
                path_glob: request.path.clone(),
                limit,
            })
        };
        let mut plan = None;
        let results = match mode {
            Mode::Lexical | Mode::Auto => lexical(request.limit)?
                .into_iter()
                .map(SearchResult::from)
                .collect(),
            Mode::Semantic => semantic(request.limit)?
                .into_iter()
                .map(SearchResult::from)
                .collect(),
            Mode::Hybrid => {
                let cfg = &request.fusion;
                let query_plan = crate::plan::plan(&request.query);
                let fused = fusion::fuse(
                    lexical(cfg.lexical_candidates)?,
                    semantic(cfg.semantic_candidates)?,
                    &query_plan,
                    cfg,
                );
                let fused = fusion::diversify(
                    fused,
                    |(h, _)| (h.repo.as_str(), h.path.as_str()),
                    cfg.max_per_file,
                );
                plan = Some(query_plan);
                fused
                    .into_iter()
                    .take(request.limit)
                    .map(|(hit, parts)| SearchResult {
                        score_parts: Some(parts),
                        ..SearchResult::from(hit)
                    })
                    .collect()
            }
        };
        let mut results: Vec<SearchResult> = results;
        for r in results.iter_mut().skip(request.full_text) {
            r.text = None;
        }
        Ok(SearchResponse {
            query: request.query.clone(),
            mode,
            results,
            index,
            coverage,
            plan,
            warnings,
        })
    }
}
