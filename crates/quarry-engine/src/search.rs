//! The search API under every interface: a request in, ranked chunks out, in the JSON shape
//! documented in docs/JSON.md (later modes extend it, never break it).

use crate::Workspace;
use anyhow::{bail, Result};
use quarry_core::store::FieldWeights;
use quarry_core::{tokens, ChunkHit, Language, LexicalQuery};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How results are retrieved. Only lexical exists so far; `auto` picks the best available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Lexical,
    #[default]
    Auto,
}

impl Mode {
    /// The mode actually used for `self` with what the workspace has.
    fn resolve(self) -> Mode {
        match self {
            Mode::Auto | Mode::Lexical => Mode::Lexical,
        }
    }
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
    pub weights: FieldWeights,
}

impl SearchRequest {
    pub fn new(query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            mode: Mode::Auto,
            repos: Vec::new(),
            language: None,
            path: None,
            limit: 10,
            weights: FieldWeights::default(),
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
    pub text: String,
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
            text: h.text,
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
        let mode = request.mode.resolve();
        let query = LexicalQuery {
            terms: tokens::query_terms(&request.query),
            repos: request.repos.clone(),
            language: request.language,
            path_glob: request.path.clone(),
            limit: request.limit,
            weights: request.weights,
        };
        let results = self
            .store()
            .search_lexical(&query)?
            .into_iter()
            .map(SearchResult::from)
            .collect();
        Ok(SearchResponse {
            query: request.query.clone(),
            mode,
            results,
            index,
        })
    }
}
