//! quarry-engine: the one API every interface (CLI, and later MCP, HTTP, the agent hook)
//! calls. It joins the pipeline — sources → chunking → store → retrieval — and owns the
//! workspace: where the index lives and who may write it.

pub mod agentic;
pub mod answer;
pub mod commit_search;
mod embedding;
pub mod error;
mod evidence;
pub mod exact;
mod filter;
mod freshness;
pub mod graph;
pub mod history;
mod history_evidence;
mod index;
mod name_lookup;
pub mod pool;
mod progress;
pub mod request;
pub mod rerank;
pub mod routing;
pub mod schema;
pub mod search;
pub mod service;
pub mod summary;
pub mod symbol_history;
pub mod views;
pub mod watch;
pub mod workspace;

pub use answer::{AskResponse, RerankReport};
pub use answer::{FileChange, IndexReport};
pub use answer::{Freshness, Mode, SearchResponse};
pub use embedding::{build_embedder, EmbedPurpose, EmbedReport, EmbedderNote, EmbedderNoteKind};
pub use error::{is_bad_request, BadRequest};
pub use index::IndexOptions;
pub use progress::{NoProgress, Progress};
pub use quarry_chunk::ChunkOptions;
pub use quarry_core::history::CommitQuery;
/// Whether an error says the store's server cannot answer now (down, unreachable, an index
/// recovering): HTTP answers it 503 with `Retry-After`.
pub use quarry_core::store::is_unavailable as is_store_unavailable;
/// The planner and fusion live in quarry-rank; these paths stay for the interfaces.
pub use quarry_rank::{fusion, plan, route as rank_route};
pub use quarry_sources::pdf::PdfLimits;
pub use quarry_sources::DiscoverOptions;
/// Vectors kept in memory between searches, for a long-lived process (the workspace daemon).
pub use quarry_store::keep_vectors_in_memory;
/// What a check of the index file found (`status --check`).
pub use quarry_store::Checked;
pub use request::SearchRequest;
pub use rerank::{language_model, write_json_atomically};
pub use service::Service;
pub use workspace::config::{self, Config};
pub use workspace::lock::{is_lock_busy, LockBusy, WriteLock};
pub use workspace::Workspace;

/// A store URL with its password hidden, for messages and `quarry status`.
/// A store URL (PostgreSQL or OpenSearch) with its password shown as `***`.
pub fn redact_store_url(url: &str) -> String {
    if quarry_opensearch::is_opensearch_url(url) {
        quarry_opensearch::redact(url)
    } else {
        quarry_postgres::redact(url)
    }
}
