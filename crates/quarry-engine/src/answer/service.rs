//! The servers' answers (HTTP and MCP): each is a stage's answer with the index's freshness
//! beside it (`Answer`), so an agent can tell when a result may be stale and a sync is due.

use quarry_core::history::HistoryStats;
use quarry_core::RepoStats;
use schemars::JsonSchema;
use serde::Serialize;

use super::index::IndexReport;
use super::summary::{CallGraph, Outline, SymbolContext};

/// How current the index is for one repo: when it was last indexed and how many files changed
/// on disk since (judged by size and modification time, like the indexer's own pre-check).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Freshness {
    pub repo: String,
    /// RFC 3339; `None` while the first index run is unfinished.
    pub indexed_at: Option<String>,
    /// Files added, changed or deleted on disk since the last index run; `None` when the
    /// repo's folder cannot be read (moved or removed).
    pub files_changed_since: Option<u64>,
    /// Commits stored for the repo.
    pub commits: u64,
}

/// A service answer: the body's fields, then `freshness` for every repo it covers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Answer<T> {
    #[serde(flatten)]
    pub body: T,
    pub freshness: Vec<Freshness>,
    /// The database server that answered (PostgreSQL: the primary, or a standby and its lag);
    /// absent on the embedded store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<quarry_core::ServedBy>,
}

/// `summary`: the file's outline, one symbol's context, or the file's call graph (the `mode`
/// asked for decides which).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FileSummary {
    Structure(Outline),
    Context(SymbolContext),
    Extract(CallGraph),
}

/// `status`: the repos, their history, and the embedding model's coverage.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Status {
    pub repos: Vec<RepoStats>,
    pub history: Vec<HistoryStats>,
    pub embedding: EmbeddingStatus,
    /// Bytes the index takes on disk (the embedded store's files; 0 on PostgreSQL).
    pub store_bytes: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbeddingStatus {
    /// The model the index's vectors were made with, if any.
    pub model: Option<String>,
    /// Chunks with a vector, of `total`.
    pub embedded: u64,
    pub total: u64,
    /// Why queries are not embedded here, when they are not (no model installed, another
    /// model than the index's).
    pub note: Option<String>,
}

/// `list_files`: the indexed files of each repo.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileList {
    pub repos: Vec<RepoFiles>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RepoFiles {
    pub repo: String,
    pub root: String,
    pub files: Vec<IndexedFileEntry>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IndexedFileEntry {
    pub path: String,
    pub language: String,
    pub size: u64,
    /// Content hash (hex).
    pub hash: String,
}

/// `sync_files`: what each repo's re-index changed, and the embedding of the new chunks.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SyncAnswer {
    pub repos: Vec<IndexReport>,
    pub embedding: EmbeddingJob,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbeddingJob {
    /// `done` (nothing to embed), `started` (embedding in the background now) or `running`
    /// (a job started earlier embeds these too).
    pub state: String,
    /// Chunks without a vector yet.
    pub pending: u64,
}
