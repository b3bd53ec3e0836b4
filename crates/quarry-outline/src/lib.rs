//! quarry-outline: what is in a file, in a few hundred tokens. Agents spend most of their
//! tokens reading whole files to learn their shape; an outline gives every definition with its
//! exact lines, signature and the first line of its doc comment, the members of each type, and
//! the imports on one line — enough to ask for the exact lines needed next.
//!
//! Built on the chunker's symbols (tree-sitter definitions with lines and signatures), plus
//! three things read from the source lines around them: doc comments, type members (the lines
//! directly inside a type that are not definitions themselves: fields, attributes, interface
//! members), and import blocks. Files the chunker has no grammar for get a heuristic outline of
//! definition-looking lines.

mod compact;
mod fold;
mod parts;
mod render;
mod source;
mod units;

use quarry_core::{Language, Symbol};
use serde::Serialize;
use std::collections::HashMap;

pub use render::render;

/// A file's outline.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Outline {
    pub path: String,
    pub language: Language,
    pub total_lines: u32,
    /// The file's size in characters: `render` keeps a code file's outline to a share of it.
    pub total_chars: u32,
    /// Runs of consecutive import lines, each shown as one line.
    pub imports: Vec<ImportBlock>,
    /// Definitions in file order; `depth` gives the nesting.
    pub items: Vec<OutlineItem>,
    /// True when the outline comes from the heuristic (no grammar, or the parse failed).
    pub heuristic: bool,
    /// A PDF's page count (its items then carry pages, their lines counted within the page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ImportBlock {
    pub start_line: u32,
    pub end_line: u32,
    /// What is imported, in order (module paths as written).
    pub names: Vec<String>,
    /// The notebook cell the block is in (its lines are then the cell's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OutlineItem {
    pub name: String,
    /// `Parent.name` for nested definitions.
    pub qualified_name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
    /// First sentence of the doc comment or docstring (its first paragraph, cut at the end of
    /// the sentence; at most 160 characters).
    pub doc: Option<String>,
    /// 0 for top-level definitions.
    pub depth: u32,
    /// For types: the lines directly inside that are not definitions (fields, variants,
    /// interface members), trimmed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// The PDF page the heading is on (its lines are then the page's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// The notebook cell the item is in (its lines are then the cell's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
}

/// Kinds whose direct non-definition lines are listed as members.
const TYPE_KINDS: &[&str] = &[
    "class",
    "struct",
    "enum",
    "interface",
    "trait",
    "union",
    "type",
    "record",
    "module",
    "namespace",
    "object",
];

/// At most this many members are listed per type; the rest are counted.
pub const MAX_MEMBERS: usize = 16;

/// Outlines `text`, the contents of `path` in `language`.
pub fn outline(path: &str, language: Language, text: &str) -> Outline {
    if language == Language::Notebook {
        if let Some(cells) = quarry_chunk::notebook_cells(text) {
            return outline_notebook(path, &cells);
        }
    }
    // A script without an extension is outlined in the language of its `#!` line.
    let language = match language {
        Language::Text => quarry_chunk::script_language(text).unwrap_or(language),
        other => other,
    };
    let symbols = if language == Language::Text {
        Vec::new()
    } else {
        quarry_chunk::file_symbols(language, text)
    };
    outline_from_symbols(path, language, text, &symbols)
}

/// Outlines `text` from symbols the caller already has (one parse serves the outline and
/// whatever else the caller needs from the chunker, such as call sites).
pub fn outline_from_symbols(
    path: &str,
    language: Language,
    text: &str,
    symbols: &[Symbol],
) -> Outline {
    let lines = source::Lines::new(text);
    let total_lines = lines.len() as u32;
    let heuristic = symbols.is_empty() && language != Language::Markdown;
    let items = if heuristic {
        source::heuristic_items(&lines)
    } else {
        items_from_symbols(symbols, &lines, language)
    };
    let imports = if language.is_code() {
        lines.import_blocks(language)
    } else {
        Vec::new()
    };
    Outline {
        path: path.to_string(),
        language,
        total_lines,
        total_chars: text.chars().count() as u32,
        imports,
        items,
        heuristic,
        pages: None,
    }
}

/// A notebook's outline: each cell's definitions, headings and imports, with the cell they are
/// in (their lines count within the cell). Markdown headings nest by level across cells (a
/// cell is usually one heading), and a code cell's definitions sit under the heading above
/// them, as in the notebook's own table of contents. Sizes are of the cells' sources, not of
/// the JSON around them.
fn outline_notebook(path: &str, cells: &[quarry_chunk::Cell]) -> Outline {
    let mut items = Vec::new();
    let mut imports = Vec::new();
    // The levels (`#` count) of the headings open above the current cell.
    let mut open: Vec<usize> = Vec::new();
    for cell in cells {
        let inner = outline(path, cell.language, &cell.source);
        imports.extend(inner.imports.into_iter().map(|block| ImportBlock {
            cell: Some(cell.number),
            ..block
        }));
        if inner.heuristic {
            continue;
        }
        for item in inner.items {
            let depth = if item.kind == "heading" {
                let level = item
                    .signature
                    .as_deref()
                    .map_or(1, |s| s.chars().take_while(|&c| c == '#').count().max(1));
                while open.last().is_some_and(|&l| l >= level) {
                    open.pop();
                }
                open.push(level);
                open.len() as u32 - 1
            } else {
                item.depth + open.len() as u32
            };
            items.push(OutlineItem {
                cell: Some(cell.number),
                depth,
                ..item
            });
        }
    }
    Outline {
        path: path.to_string(),
        language: Language::Notebook,
        total_lines: cells.iter().map(|c| c.source.lines().count() as u32).sum(),
        total_chars: cells.iter().map(|c| c.source.chars().count() as u32).sum(),
        imports,
        items,
        heuristic: false,
        pages: None,
    }
}

/// A PDF's outline: the headings its extractor found (bookmarks, or larger type), each with
/// its page and line on the page, nested by level.
pub fn outline_pdf(path: &str, doc: &quarry_core::PagedText) -> Outline {
    let mut items: Vec<OutlineItem> = Vec::new();
    // Open headings: (level, qualified name).
    let mut open: Vec<(usize, String)> = Vec::new();
    for page in &doc.pages {
        for h in &page.headings {
            while open.last().is_some_and(|(level, _)| *level >= h.level) {
                open.pop();
            }
            let qualified_name = match open.last() {
                Some((_, parent)) => format!("{parent}.{}", h.text),
                None => h.text.clone(),
            };
            items.push(OutlineItem {
                name: h.text.clone(),
                qualified_name: qualified_name.clone(),
                kind: "heading".into(),
                start_line: h.line,
                end_line: h.line,
                signature: None,
                doc: None,
                depth: open.len() as u32,
                members: Vec::new(),
                page: Some(page.number),
                cell: None,
            });
            open.push((h.level, qualified_name));
        }
    }
    Outline {
        path: path.to_string(),
        language: Language::Pdf,
        total_lines: doc
            .pages
            .iter()
            .map(|p| p.text.lines().count() as u32)
            .sum(),
        total_chars: doc
            .pages
            .iter()
            .map(|p| p.text.chars().count() as u32)
            .sum(),
        imports: Vec::new(),
        items,
        heuristic: false,
        pages: Some(doc.pages.len() as u32),
    }
}

fn items_from_symbols(
    symbols: &[Symbol],
    lines: &source::Lines,
    language: Language,
) -> Vec<OutlineItem> {
    let mut sorted: Vec<&Symbol> = symbols.iter().collect();
    sorted.sort_by_key(|s| (s.start_line, std::cmp::Reverse(s.end_line)));
    // Looked up by name, not searched for: a file may hold tens of thousands of definitions.
    let mut children: HashMap<&str, Vec<(u32, u32)>> = HashMap::new();
    for c in symbols {
        if let Some(parent) = c.parent.as_deref() {
            children
                .entry(parent)
                .or_default()
                .push((c.start_line, c.end_line));
        }
    }
    let mut depths: HashMap<String, u32> = HashMap::new();
    let mut items: Vec<OutlineItem> = Vec::with_capacity(sorted.len());
    for s in sorted {
        let qualified_name = s.qualified_name();
        let depth = s
            .parent
            .as_ref()
            .map_or(0, |p| depths.get(p).map_or(1, |d| d + 1));
        depths.insert(qualified_name.clone(), depth);
        let signature_line = lines.signature_line(s.start_line, s.end_line, s.signature.as_deref());
        let doc = lines.doc_comment(signature_line, s.start_line, s.end_line, language);
        let members = if TYPE_KINDS.contains(&s.kind.as_str()) {
            let children = children
                .get(qualified_name.as_str())
                .map_or(&[][..], Vec::as_slice);
            lines.members(signature_line, s.end_line, children, language)
        } else {
            Vec::new()
        };
        items.push(OutlineItem {
            name: s.name.clone(),
            qualified_name,
            kind: s.kind.clone(),
            start_line: s.start_line,
            end_line: s.end_line,
            signature: s.signature.clone(),
            doc,
            depth,
            members,
            page: None,
            cell: None,
        });
    }
    items
}

#[cfg(test)]
mod tests;
