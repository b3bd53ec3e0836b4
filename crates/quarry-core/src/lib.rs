//! quarry-core: the vocabulary every stage of the pipeline speaks.
//!
//! sources → chunking → embedding → store → retrieval → fusion → interfaces.
//! Each stage lives in its own crate and meets the others only through the types and traits
//! here, so a stage (a PostgreSQL store, a different embedder) can be swapped without touching
//! the rest.

pub mod conformance;
pub mod embed;
pub mod glob;
pub mod hash;
pub mod history;
pub mod language;
pub mod model;
pub mod store;
pub mod tokens;

pub use embed::{chunk_embed_hash, embed_text, EmbedSource, Embedder};
pub use hash::{content_hash, mtime_ns};
pub use language::{ContentType, Language};
pub use model::{CallSite, Chunk, FileChunks, PageHeading, PageText, PagedText, Symbol};
pub use store::{
    CallRef, ChunkHit, Coverage, DefinitionQuery, FileHit, FileState, IndexedFile, LexicalQuery,
    PendingEmbedding, RepoInfo, RepoStats, SkipCounts, Store, SymbolRef, TrigramFile,
    TrigramLookup, VectorQuery,
};
