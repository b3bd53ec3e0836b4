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
pub mod requirement;
pub mod store;
pub mod tokens;
pub mod trigrams;

pub use embed::{chunk_embed_hash, embed_text, EmbedSource, Embedder};
pub use hash::{content_hash, mtime_ns};
pub use language::{count_unparsed, unparsed_language, ContentType, Language};
pub use model::{CallSite, Chunk, CodeSpan, FileChunks, PageHeading, PageText, PagedText, Symbol};
pub use requirement::Requirement;
pub use store::{
    CallRef, ChunkHit, Coverage, DefinitionQuery, FileHit, FileState, IndexedFile, LexicalQuery,
    PendingEmbedding, RepoInfo, RepoStats, ServedBy, SkipCounts, Store, SymbolRef, TrigramFile,
    TrigramLookup, VectorQuery,
};

/// A path (or any name) as human output prints it: one result per line, so control
/// characters in a file name (a newline, a tab, an escape) are written escaped, as `ls -b`
/// does; a terminal would obey them otherwise. `--json` keeps the name exact.
pub fn shown_path(path: &str) -> std::borrow::Cow<'_, str> {
    if path.chars().any(char::is_control) {
        path.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        path.into()
    }
}

#[cfg(test)]
mod shown_path_tests {
    #[test]
    fn control_characters_in_names_are_escaped() {
        assert_eq!(super::shown_path("src/a.py"), "src/a.py");
        assert_eq!(
            super::shown_path("evil\u{1b}[2Jname\n.py"),
            "evil\\u{1b}[2Jname\\n.py"
        );
    }
}
