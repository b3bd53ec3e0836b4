//! What chunking produces and the store keeps: chunks (the unit of retrieval) and symbols
//! (every definition, the unit of navigation: summaries, boosts and callers read them).

use crate::Language;
use serde::{Deserialize, Serialize};

/// A contiguous slice of a file that search returns. Lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub start_line: u32,
    pub end_line: u32,
    /// The primary definition's qualified name (`Class.method`), if the chunk is a definition.
    pub symbol: Option<String>,
    /// What the chunk is: `function`, `method`, `class`, `struct`, `impl`, `section`,
    /// `module` (top-level code between definitions), `text` (line window), …
    pub kind: String,
    /// The enclosing definition's qualified name, e.g. `Class` for `Class.method`.
    pub parent: Option<String>,
    /// The definition's first line (its signature), trimmed.
    pub signature: Option<String>,
    pub language: Language,
    /// Qualified names of every definition whose start lies inside this chunk (merged
    /// neighbours, nested methods); indexed as the chunk's symbol field.
    pub symbols: Vec<String>,
    pub text: String,
    /// The PDF page the chunk is on (1-based); its lines are then the page's lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// The notebook cell the chunk is in (1-based); its lines are then the cell's lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
}

/// A definition in a file. `name` is the bare name; `parent` the enclosing definition's
/// qualified name, so the qualified name is `parent.name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    pub name: String,
    pub kind: String,
    pub parent: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
}

impl Symbol {
    pub fn qualified_name(&self) -> String {
        match &self.parent {
            Some(p) => format!("{p}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A call in the source: the called name and the definition the call is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallSite {
    /// The called name as written, last segment only (`a.b.run()` → `run`).
    pub callee: String,
    /// Qualified name of the innermost definition containing the call; `None` at top level.
    pub caller: Option<String>,
    pub line: u32,
}

/// The result of chunking one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileChunks {
    pub chunks: Vec<Chunk>,
    pub symbols: Vec<Symbol>,
    /// Call sites, for code files with a grammar.
    pub calls: Vec<CallSite>,
}

/// A document whose text was extracted page by page (a PDF): what the PDF chunker cuts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PagedText {
    pub pages: Vec<PageText>,
}

/// One page's text, its lines as the extractor laid them out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageText {
    /// 1-based, as a viewer numbers pages.
    pub number: u32,
    pub text: String,
    /// Headings on this page, by line (1-based within `text`).
    pub headings: Vec<PageHeading>,
}

/// A heading the extractor found: from the document's outline (bookmarks) or set in a larger
/// font than the body text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageHeading {
    pub line: u32,
    /// 1 = outermost.
    pub level: usize,
    pub text: String,
}

/// A run of one line of a file with its syntax class (`keyword`, `string`, `function`, …, the
/// tree-sitter highlight names; none for plain text), as the file view draws it.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct CodeSpan {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}
