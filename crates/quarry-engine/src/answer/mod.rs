//! The answers: plain data at the bottom of the engine. Every stage above builds them, every
//! interface (CLI `--json`, HTTP, MCP) serialises them as they are, and their JSON schemas
//! (OpenAPI responses, MCP `outputSchema`) are generated from these types — a field renamed
//! here is renamed in every schema at once. Nothing here imports another module of the engine.

pub mod ask;
pub mod commits;
pub mod index;
pub mod reports;
pub mod search;
pub mod service;
pub mod summary;
pub mod views;

pub use ask::AskResponse;
pub use commits::{CommitSearch, Touches};
pub use index::{FileChange, IndexReport, KeptAsText};
pub use reports::{AgenticReport, AgenticRound, RerankReport, RouteReport};
pub use search::{
    fit_to_budget, fit_to_request, location, mark_matched_lines, rank_files, FileResult, FileRole,
    FileScoreParts, IndexSummary, MatchedLine, Mention, Mode, QueryPlan, RankedFile, ScoreParts,
    SearchResponse, SearchResult, MAX_ANSWER_TEXT_BYTES, MAX_RESULT_TEXT_BYTES,
};
pub use service::{
    Answer, EmbeddingJob, EmbeddingStatus, FileList, FileSummary, Freshness, IndexedFileEntry,
    RepoFiles, Status, SyncAnswer,
};
pub use summary::{
    CallGraph, CallerSite, Edge, Outline, OutlineItem, SliceAnswer, SliceLine, SymbolContext,
    Target,
};
pub use views::FileView;
