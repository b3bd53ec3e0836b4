//! Answers the search page reads beside search: a file as the file view draws it.

use quarry_core::CodeSpan;
use schemars::JsonSchema;
use serde::Serialize;

/// A file of an indexed repo, line by line, coloured by its grammar's highlight query.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileView {
    pub repo: String,
    pub path: String,
    pub language: String,
    /// Whether `lines` carry syntax classes (a grammar coloured them); plain text otherwise.
    pub highlighted: bool,
    /// Each line's spans; a line's text is its spans' texts joined.
    pub lines: Vec<Vec<CodeSpan>>,
    /// The file was longer than the view shows: `lines` holds its first lines only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Lines were not valid UTF-8 and were read with replacement characters.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lossy: bool,
}
