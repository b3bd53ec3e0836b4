//! Jupyter notebooks (`.ipynb`, nbformat 4, and 3's worksheets): cut cell by cell. Code cells
//! are chunked as code of the kernel's language (definitions become symbols), markdown cells
//! as Markdown, raw cells as text; outputs are left out (images and logs, not what anyone
//! searches for). Every chunk carries its cell number (1-based, counting every cell) and lines
//! counted within the cell. A file that is not a notebook's JSON is cut as plain text.

use crate::{chunk_file, text_chunks, ChunkOptions, Lines};
use quarry_core::{FileChunks, Language};
use serde_json::Value;

/// One cell of a notebook: its number (1-based, every cell counted), language and source.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub number: u32,
    pub language: Language,
    pub source: String,
}

/// The cells of a notebook's JSON; `None` when `text` is not a notebook.
pub fn notebook_cells(text: &str) -> Option<Vec<Cell>> {
    let doc = serde_json::from_str::<Value>(text).ok()?;
    let language = kernel_language(&doc);
    let cells = doc
        .get("cells")
        .or_else(|| doc.pointer("/worksheets/0/cells"))
        .and_then(Value::as_array)?;
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("raw");
        let source = cell.get("source").or_else(|| cell.get("input"));
        let source = match source {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        let language = match kind {
            "code" => language,
            "markdown" | "heading" => Language::Markdown,
            _ => Language::Text,
        };
        out.push(Cell {
            number: i as u32 + 1,
            language,
            source,
        });
    }
    Some(out)
}

pub fn chunk_notebook(text: &str, opts: &ChunkOptions) -> FileChunks {
    let Some(cells) = notebook_cells(text) else {
        return text_chunks(Language::Text, &Lines::new(text), &opts.normalized());
    };
    let mut out = FileChunks::default();
    for cell in cells {
        let mut cut = chunk_file(cell.language, &cell.source, opts);
        for chunk in &mut cut.chunks {
            chunk.cell = Some(cell.number);
        }
        out.chunks.extend(cut.chunks);
        out.symbols.extend(cut.symbols);
        out.calls.extend(cut.calls);
    }
    out
}

/// The language of the notebook's code cells: `metadata.language_info.name`, else the
/// kernel spec's; Python when neither names one quarry knows (Jupyter's default kernel).
fn kernel_language(doc: &Value) -> Language {
    [
        "/metadata/language_info/name",
        "/metadata/kernelspec/language",
    ]
    .iter()
    .filter_map(|p| doc.pointer(p).and_then(Value::as_str))
    .find_map(Language::from_name)
    .filter(|l| l.is_code())
    .unwrap_or(Language::Python)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_become_chunks_in_their_own_language() {
        let nb = serde_json::json!({
            "nbformat": 4,
            "metadata": {"language_info": {"name": "python"}},
            "cells": [
                {"cell_type": "markdown", "source": ["# Loading data\n", "We read the CSV."]},
                {"cell_type": "code", "source": "import pandas as pd\n\ndef load(path):\n    return pd.read_csv(path)\n", "outputs": [{"text": "noise"}]},
                {"cell_type": "code", "source": []},
                {"cell_type": "raw", "source": "raw text"}
            ]
        });
        let fc = chunk_notebook(&nb.to_string(), &ChunkOptions::default());
        let got: Vec<(Option<u32>, Language)> =
            fc.chunks.iter().map(|c| (c.cell, c.language)).collect();
        assert!(got.contains(&(Some(1), Language::Markdown)), "{got:?}");
        assert!(got.contains(&(Some(2), Language::Python)), "{got:?}");
        assert!(got.contains(&(Some(4), Language::Text)), "{got:?}");
        assert!(fc.symbols.iter().any(|s| s.name == "load"));
        assert!(fc.symbols.iter().any(|s| s.name == "Loading data"));
        assert!(!fc.chunks.iter().any(|c| c.text.contains("noise")));
    }

    #[test]
    fn broken_json_is_cut_as_text() {
        let fc = chunk_notebook("{\"cells\": [ not json", &ChunkOptions::default());
        assert_eq!(fc.chunks.len(), 1);
        assert_eq!(fc.chunks[0].language, Language::Text);
        assert_eq!(fc.chunks[0].cell, None);
    }
}
