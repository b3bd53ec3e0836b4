use super::*;

const RUST: &str = r#"use std::collections::HashMap;
use std::path::{Path, PathBuf};
use serde::Deserialize;

/// Settings read from disk.
///
/// More detail here.
#[derive(Debug, Deserialize)]
pub struct Config {
    pub name: String,
    /// Where it lives.
    pub root: PathBuf,
}

pub enum Mode {
    Fast,
    Slow(u32),
}

impl Config {
    /// Reads the settings file.
    pub fn load(path: &Path) -> Config {
        let text = std::fs::read_to_string(path).unwrap();
        toml::from_str(&text).unwrap()
    }

    // Not a doc comment, but still the best description.
    fn validate(&self) -> bool {
        !self.name.is_empty()
    }
}

fn helper(map: &HashMap<String, u32>) -> u32 {
    map.len() as u32
}
"#;

const PYTHON: &str = r#"import os
import sys
from typing import (
    List,
    Optional,
)


class UploadQueue:
    """Jobs waiting to be uploaded."""

    max_attempts = 5
    backoff: float = 1.5

    def __init__(self, jobs):
        self.jobs = jobs

    def requeue_with_backoff(self, job):
        """
        Puts a failed job back with a delay.
        """
        job.attempts += 1
        self.jobs.append(job)


def main(argv: List[str]) -> Optional[int]:
    # no docstring
    return 0
"#;

fn item<'a>(o: &'a Outline, qualified: &str) -> &'a OutlineItem {
    o.items
        .iter()
        .find(|i| i.qualified_name == qualified)
        .unwrap_or_else(|| panic!("{qualified} missing from {:#?}", o.items))
}

#[test]
fn rust_outline_has_every_definition_with_lines_docs_and_members() {
    let o = outline("src/config.rs", Language::Rust, RUST);
    assert_eq!(o.total_lines as usize, RUST.lines().count());
    assert!(!o.heuristic);
    assert_eq!(o.imports.len(), 1);
    assert_eq!((o.imports[0].start_line, o.imports[0].end_line), (1, 3));
    assert_eq!(
        o.imports[0].names,
        [
            "std::collections::HashMap",
            "std::path::{Path, PathBuf}",
            "serde::Deserialize"
        ]
    );

    let config = item(&o, "Config");
    assert_eq!(config.kind, "struct");
    assert_eq!(config.doc.as_deref(), Some("Settings read from disk."));
    assert_eq!(config.members, ["pub name: String,", "pub root: PathBuf,"]);
    assert!(RUST
        .lines()
        .nth(config.end_line as usize - 1)
        .unwrap()
        .starts_with('}'));

    let mode = item(&o, "Mode");
    assert_eq!(mode.members, ["Fast,", "Slow(u32),"]);

    let load = item(&o, "Config.load");
    assert_eq!(load.depth, 1);
    assert_eq!(load.doc.as_deref(), Some("Reads the settings file."));
    assert_eq!(
        load.signature.as_deref(),
        Some("pub fn load(path: &Path) -> Config {")
    );
    let sig_line = RUST.lines().nth(load.end_line as usize - 3).unwrap();
    assert!(sig_line.contains("read_to_string"), "{sig_line}");
    assert_eq!(
        item(&o, "Config.validate").doc.as_deref(),
        Some("Not a doc comment, but still the best description.")
    );
    assert_eq!(item(&o, "helper").depth, 0);

    let text = render(&o);
    assert!(text.starts_with("src/config.rs — rust, 35 lines"), "{text}");
    assert!(
        text.contains("1-3 imports (3): std::collections::HashMap"),
        "{text}"
    );
    assert!(
        text.contains("\n  { name: String; root: PathBuf }\n"),
        "{text}"
    );
    assert!(
        text.contains("pub fn load(path: &Path) -> Config — Reads the settings file."),
        "{text}"
    );
}

#[test]
fn python_outline_reads_docstrings_class_attributes_and_multiline_imports() {
    let o = outline("app/upload.py", Language::Python, PYTHON);
    assert_eq!(o.imports.len(), 1);
    assert_eq!((o.imports[0].start_line, o.imports[0].end_line), (1, 6));
    assert_eq!(o.imports[0].names, ["os", "sys", "typing"]);

    let queue = item(&o, "UploadQueue");
    assert_eq!(queue.doc.as_deref(), Some("Jobs waiting to be uploaded."));
    assert_eq!(queue.members, ["max_attempts = 5", "backoff: float = 1.5"]);
    let requeue = item(&o, "UploadQueue.requeue_with_backoff");
    assert_eq!(
        requeue.doc.as_deref(),
        Some("Puts a failed job back with a delay.")
    );
    assert_eq!(requeue.depth, 1);
    let main = item(&o, "main");
    assert_eq!(main.doc, None);
    assert_eq!(
        PYTHON.lines().nth(main.start_line as usize - 1).unwrap(),
        "def main(argv: List[str]) -> Optional[int]:"
    );
}

#[test]
fn every_symbol_of_the_chunker_is_in_the_outline_at_its_lines() {
    for (lang, text) in [(Language::Rust, RUST), (Language::Python, PYTHON)] {
        let symbols = chunk_file(lang, text, &ChunkOptions::default()).symbols;
        let o = outline("f", lang, text);
        let mut want: Vec<(String, u32, u32)> = symbols
            .iter()
            .map(|s| (s.qualified_name(), s.start_line, s.end_line))
            .collect();
        let mut got: Vec<(String, u32, u32)> = o
            .items
            .iter()
            .map(|i| (i.qualified_name.clone(), i.start_line, i.end_line))
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want);
    }
}

#[test]
fn files_without_a_grammar_get_a_heuristic_outline() {
    let lua = "local M = {}\n\nlocal function helper(x)\n  return x\nend\n\nfunction M.run(args)\n  return helper(args)\nend\n";
    let o = outline("init.lua", Language::Text, lua);
    assert!(o.heuristic);
    let names: Vec<(&str, u32)> = o
        .items
        .iter()
        .map(|i| (i.name.as_str(), i.start_line))
        .collect();
    assert_eq!(names, [("helper", 3), ("M.run", 7)]);
    let empty = outline("empty.rs", Language::Rust, "");
    assert!(empty.items.is_empty() && empty.total_lines == 0);
}
