//! What one index run did to one repo (`quarry index`, `sync`, watch passes, the servers'
//! sync).

use quarry_core::store::SkipCounts;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileChange {
    pub path: String,
    /// `added`, `changed` or `removed`.
    pub change: &'static str,
}

/// What one index run did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IndexReport {
    pub repo: String,
    pub root: String,
    pub added: u64,
    pub changed: u64,
    pub removed: u64,
    pub unchanged: u64,
    /// Files and chunks in the index for this repo after the run.
    pub files: u64,
    pub chunks: u64,
    /// Chunks written by this run.
    pub chunks_written: u64,
    pub skipped: SkipCounts,
    /// Files that were not valid UTF-8 and were indexed with invalid bytes replaced.
    pub lossy_utf8: u64,
    pub elapsed_ms: u64,
    /// Added, changed and removed files (at most 1000; the counts above are complete).
    pub changes: Vec<FileChange>,
    /// The repo's previous root, when it was found moved on disk (its index was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<String>,
    /// The run was stopped (Ctrl-C) before every file was read: what it stored stays, the
    /// next run reads the rest.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// A rebuild (`--rebuild`) stopped before it finished, on a store that builds it beside
    /// the old index: it did not take effect, the repo's index is as it was (`files` and
    /// `chunks` count it), and the rebuild must be run again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rebuild_undone: bool,
    /// The repo's files in code languages quarry does not parse, indexed as text (no
    /// definitions, no calls), by language, most files first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_as_text: Vec<KeptAsText>,
}

/// Files of one code language quarry does not parse, kept as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct KeptAsText {
    pub language: String,
    pub files: u64,
}

impl KeptAsText {
    /// The counts of `paths` (`quarry_core::count_unparsed`) as answers carry them.
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<KeptAsText> {
        quarry_core::count_unparsed(paths)
            .into_iter()
            .map(|(language, files)| KeptAsText { language, files })
            .collect()
    }
}
