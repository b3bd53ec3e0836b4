use super::*;
use quarry_chunk::{chunk_file, ChunkOptions};

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

// ---- The budget: what an outline over its share of the file gives up, and what it keeps. ----

fn def(
    qualified: &str,
    kind: &str,
    lines: (u32, u32),
    sig: &str,
    doc: Option<&str>,
) -> OutlineItem {
    let depth = qualified.matches('.').count() as u32;
    OutlineItem {
        name: qualified.rsplit('.').next().unwrap().to_string(),
        qualified_name: qualified.to_string(),
        kind: kind.to_string(),
        start_line: lines.0,
        end_line: lines.1,
        signature: Some(sig.to_string()),
        doc: doc.map(str::to_string),
        depth,
        members: Vec::new(),
        page: None,
        cell: None,
    }
}

/// An outline of `items`, for a Python file of `total_chars` characters (its budget is
/// `max(MIN_BUDGET, 8%)` of that).
fn synthetic(items: Vec<OutlineItem>, imports: Vec<ImportBlock>, total_chars: u32) -> Outline {
    Outline {
        path: "pkg/big.py".into(),
        language: Language::Python,
        total_lines: 2000,
        total_chars,
        imports,
        items,
        heuristic: false,
        pages: None,
    }
}

/// A module with a big class (documented methods, many attributes), a function with nested
/// functions, and documented top-level functions.
fn big_items() -> Vec<OutlineItem> {
    let mut items = Vec::new();
    let mut class = def(
        "Store",
        "class",
        (10, 900),
        "class Store(Base):",
        Some("Keeps the records."),
    );
    class.members = (0..20).map(|i| format!("field_{i}: int = {i}")).collect();
    items.push(class);
    for m in 0..40 {
        let start = 40 + m * 20;
        items.push(def(
            &format!("Store.method_{m}"),
            "method",
            (start, start + 18),
            &format!(
                "def method_{m}(self, key: str, value: dict[str, int] | None = None) -> bool:"
            ),
            Some("Does one of the forty things a store does, at some length."),
        ));
    }
    items.push(def(
        "outer",
        "function",
        (910, 950),
        "def outer(x):",
        Some("Wraps things."),
    ));
    items.push(def(
        "outer.inner_a",
        "function",
        (911, 920),
        "def inner_a(y):",
        None,
    ));
    items.push(def(
        "outer.inner_b",
        "function",
        (921, 930),
        "def inner_b(y):",
        None,
    ));
    for f in 0..10 {
        let start = 1000 + f * 10;
        items.push(def(
            &format!("helper_{f}"),
            "function",
            (start, start + 8),
            &format!("def helper_{f}(value: int, scale: float = 1.0) -> float:"),
            Some("Scales the value. More words that are not shown."),
        ));
    }
    items
}

fn imports(n: usize) -> Vec<ImportBlock> {
    vec![ImportBlock {
        cell: None,
        start_line: 1,
        end_line: n as u32,
        names: (0..n).map(|i| format!("module_{i}")).collect(),
    }]
}

/// The render without its closing `(shortened …)` line: what the budget bounds.
fn body(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.starts_with("(shortened"))
        .map(|l| l.chars().count() + 1)
        .sum()
}

#[test]
fn a_big_budget_shows_everything() {
    let text = render(&synthetic(big_items(), imports(12), 10_000_000));
    assert!(!text.contains("(shortened"), "{text}");
    assert!(text.contains("  40-58 def method_0(key: str, value: dict[str, int] | None = None) -> bool — Does one of"), "{text}");
    assert!(text.contains("  911-920 def inner_a(y)"), "{text}");
    assert!(
        text.contains("{ field_0: int = 0; field_1: int = 1;"),
        "{text}"
    );
}

#[test]
fn every_budget_keeps_every_top_level_definition_and_method_with_its_line() {
    let items = big_items();
    for total_chars in [LEAST, 20_000, 40_000, 80_000, 160_000, 10_000_000] {
        let o = synthetic(items.clone(), imports(12), total_chars);
        let text = render(&o);
        for item in items.iter().filter(|i| i.depth == 0) {
            let line = format!("\n{}-{} ", item.start_line, item.end_line);
            assert!(
                text.contains(&line),
                "{line:?} missing at {total_chars}: {text}"
            );
            assert!(
                text.contains(&format!(
                    "{line}{} {}(",
                    if item.kind == "class" { "class" } else { "def" },
                    item.name
                )),
                "{text}"
            );
        }
        for m in items
            .iter()
            .filter(|i| i.kind == "method")
            .take(MAX_LISTED_FOR_TEST)
        {
            assert!(
                text.contains(&format!("{} {}", m.name, m.start_line))
                    || text.contains(&format!("{}-{} def {}(", m.start_line, m.end_line, m.name)),
                "{} missing at {total_chars}: {text}",
                m.name
            );
        }
        assert!(
            text.starts_with("pkg/big.py — python, 2000 lines, 54 definitions\n"),
            "{text}"
        );
    }
}

/// A file whose outline is at the least detail of every part, and still within the size
/// below which definitions are not folded to their names (`FOLD_FLOOR`).
const LEAST: u32 = 0;

/// The methods listed by name at the last level.
const MAX_LISTED_FOR_TEST: usize = 24;

#[test]
fn an_outline_over_its_budget_fits_it_when_its_top_level_lines_do() {
    for total_chars in [20_000u32, 40_000, 80_000] {
        let text = render(&synthetic(big_items(), imports(12), total_chars));
        let budget = (total_chars as usize * 8 / 100).max(600);
        assert!(body(&text) <= budget, "{} > {budget}: {text}", body(&text));
        assert!(text.contains('…'), "what is left out is marked: {text}");
    }
}

#[test]
fn method_docs_and_types_go_before_the_top_level_ones() {
    // A budget the class's methods do not fit in with their docs.
    let text = render(&synthetic(big_items(), imports(12), 60_000));
    assert!(
        text.contains("class Store(Base) — Keeps the records."),
        "{text}"
    );
    assert!(
        text.contains("def helper_0(value: int, scale: float = 1.0) -> float — Scales the value."),
        "{text}"
    );
    assert!(!text.contains("Does one of the forty"), "{text}");
    assert!(text.contains("docs left out"), "{text}");
}

#[test]
fn methods_of_a_big_class_are_listed_by_name_and_line() {
    let text = render(&synthetic(big_items(), imports(12), 20_000));
    assert!(
        text.contains("\n  40 definitions: method_0 40, method_1 60, method_2 80,"),
        "{text}"
    );
    assert!(text.contains("listed by name"), "{text}");
    // The least: still every name with its line (issue 64: once, past the 24th, the rest
    // were counted, `… 16 more (lines 520-838)`, though their names fit).
    let text = render(&synthetic(big_items(), imports(12), LEAST));
    assert!(
        text.contains(", method_23 500, method_24 520, ") && text.contains(", method_39 820\n"),
        "{text}"
    );
    assert!(!text.contains("more ("), "{text}");
}

#[test]
fn type_members_past_the_budget_are_counted() {
    let text = render(&synthetic(big_items(), imports(12), 60_000));
    assert!(text.contains("\n  { field_0: int = 0; field_1: int = 1; field_2: int = 2; field_3: int = 3; … 16 more }\n"), "{text}");
    let text = render(&synthetic(big_items(), imports(12), 20_000));
    assert!(
        text.contains("\n  { 20 members }\n")
            || text.contains("\n  { field_0, field_1, field_2, field_3, … 16 more }\n"),
        "{text}"
    );
}

#[test]
fn functions_nested_in_functions_are_named_on_their_function() {
    let text = render(&synthetic(big_items(), imports(12), 10_000_000));
    assert!(
        text.contains("\n910-950 def outer(x) — Wraps things.\n  911-920 def inner_a(y)\n"),
        "{text}"
    );
    // Past the first level by name and line on their function's line (issue 64: once only
    // counted there, `(+2 nested)`).
    let text = render(&synthetic(big_items(), imports(12), LEAST));
    assert!(
        text.contains("\n910-950 def outer(x) (nested: inner_a 911, inner_b 921)\n"),
        "{text}"
    );
}

#[test]
fn long_signatures_are_cut_to_their_parameter_names() {
    use crate::compact::shorten_signature as short;
    let py = "def open_resource(self, resource: str, mode: str = \"rb\", encoding: str | None = None) -> t.IO[t.AnyStr]";
    assert_eq!(
        short(py, "open_resource", Language::Python).as_deref(),
        Some("def open_resource(self, resource, mode=…, encoding=…)")
    );
    let py = "def url_for(self, /, endpoint: str, *, _anchor: str | None = None, **values: t.Any) -> str";
    assert_eq!(
        short(py, "url_for", Language::Python).as_deref(),
        Some("def url_for(self, /, endpoint, *, _anchor=…, **values)")
    );
    let rs = "pub fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>, f: fn(u8) -> u8) -> Poll<Result<(), io::Error>>";
    assert_eq!(
        short(rs, "poll_flush", Language::Rust).as_deref(),
        Some("pub fn poll_flush(self, cx, f)")
    );
    let go = "func (c *Command) SetFlagErrorFunc(f func(*Command, error) error, a, b string)";
    assert_eq!(
        short(go, "SetFlagErrorFunc", Language::Go).as_deref(),
        Some("func (c *Command) SetFlagErrorFunc(f, a, b)")
    );
    let java = "public static List<String> split(final String text, Map<String, Integer> limits)";
    assert_eq!(
        short(java, "split", Language::Java).as_deref(),
        Some("public static List<String> split(text, limits)")
    );
    // Cut by the chunker inside its parameters: the last (maybe cut) one goes, `…` says so.
    let cut = "def __init__(self, import_name: str, static_url_path: str | None = None, static_fol";
    assert_eq!(
        short(cut, "__init__", Language::Python).as_deref(),
        Some("def __init__(self, import_name, static_url_path=…, …)")
    );
    assert_eq!(
        short(
            "pub(crate) async fn poll_read(self: Pin<&mut Self>,",
            "poll_read",
            Language::Rust
        )
        .as_deref(),
        Some("pub(crate) async fn poll_read(self, …)")
    );
    assert_eq!(
        short("def f(a, b)", "f", Language::Python),
        None,
        "not shorter"
    );

    // Over MAX_SIGNATURE characters, at every budget.
    let long = format!(
        "def configure(self, {}) -> None:",
        (0..12)
            .map(|i| format!("option_{i}: int = {i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let text = render(&synthetic(
        vec![def("configure", "function", (5, 50), &long, None)],
        vec![],
        10_000_000,
    ));
    assert!(
        text.contains("\n5-50 def configure(option_0=…, option_1=…,"),
        "{text}"
    );
    assert!(!text.contains("-> None"), "{text}");
}

#[test]
fn imports_are_cut_to_a_few_names_then_counted() {
    let text = render(&synthetic(big_items(), imports(12), 10_000_000));
    assert!(
        text.contains("\n1-12 imports (12): module_0, module_1, module_2, module_3,"),
        "{text}"
    );
    let text = render(&synthetic(big_items(), imports(12), LEAST));
    assert!(
        text.contains("\n1-12 imports (12)\n")
            || text.contains("\n1-12 imports (12): module_0, module_1, module_2, …\n"),
        "{text}"
    );
    // A block of a few names keeps them.
    let text = render(&synthetic(big_items(), imports(2), 0));
    assert!(
        text.contains("\n1-2 imports (2): module_0, module_1\n"),
        "{text}"
    );
}

#[test]
fn documents_are_not_budgeted() {
    let items: Vec<OutlineItem> = (0..300)
        .map(|i| OutlineItem {
            kind: "heading".into(),
            signature: None,
            ..def(
                &format!("Section {i}"),
                "heading",
                (i * 3 + 1, i * 3 + 2),
                "",
                None,
            )
        })
        .collect();
    let o = Outline {
        language: Language::Markdown,
        ..synthetic(items, vec![], 1000)
    };
    let text = render(&o);
    assert!(text.contains("heading Section 299"), "{text}");
    assert!(!text.contains("(shortened"), "{text}");
}

#[test]
fn docs_are_their_first_sentence() {
    let py = "def f(x):\n    \"\"\"Finds the thing, e.g. a file or\n    a folder.  More words follow here.\n\n    Details.\n    \"\"\"\n    return x\n";
    let o = outline("f.py", Language::Python, py);
    assert_eq!(
        o.items[0].doc.as_deref(),
        Some("Finds the thing, e.g. a file or a folder.")
    );
    let rs = "/// Reads the file\n/// at `path`. Then more.\n///\n/// Details.\nfn read(path: &str) {}\n";
    let o = outline("f.rs", Language::Rust, rs);
    assert_eq!(o.items[0].doc.as_deref(), Some("Reads the file at `path`."));
}

/// The Python module of the hook's test (quarry-cli/tests/hook.rs), 4 kB with 38 definitions:
/// over its budget even with every method by name, so it shows the least detail.
#[test]
fn a_dense_module_keeps_every_definition_by_name_and_line() {
    let mut text = String::from("import os\nimport sys\n\n\nclass UploadQueue:\n    \"\"\"Jobs waiting to be uploaded.\"\"\"\n\n    max_attempts = 5\n\n");
    for i in 0..20 {
        text.push_str(&format!("    def step_{i}(self, job):\n        \"\"\"Step {i} of the upload.\"\"\"\n        job.log('step {i}')\n        job.attempts += {i}\n        return job\n\n"));
    }
    text.push_str("    def requeue_with_backoff(self, job):\n        \"\"\"Puts a failed job back with a delay.\"\"\"\n        job.delay = 2 ** job.attempts\n        self.jobs.append(job)\n\n\n");
    for i in 0..16 {
        text.push_str(&format!(
            "def helper_{i}(value):\n    total = value * {i}\n    return total\n\n\n"
        ));
    }
    let rendered = render(&outline("app/upload.py", Language::Python, &text));
    assert!(rendered.starts_with("app/upload.py — python, 215 lines, 38 definitions\n1-2 imports (2): os, sys\n5-133 class UploadQueue"), "{rendered}");
    assert!(
        rendered.contains("21 definitions: step_0 10, step_1 16,"),
        "{rendered}"
    );
    assert!(
        rendered.contains(", requeue_with_backoff 130\n"),
        "{rendered}"
    );
    assert!(
        rendered.contains("\n211-213 def helper_15(value)\n"),
        "{rendered}"
    );
    assert!(rendered.len() * 4 < text.len(), "{rendered}");
}

#[test]
fn go_import_blocks_name_their_paths_and_string_tables_are_not_imports() {
    let go = "package main\n\nimport (\n\t\"fmt\"\n\tstr \"strings\"\n)\n\nvar cases = map[string]int{\n\t\"happy path\": 1,\n}\n\nfunc main() {\n\tfmt.Println(str.ToUpper(\"x\"))\n}\n";
    let o = outline("main.go", Language::Go, go);
    assert_eq!(o.imports.len(), 1, "{:?}", o.imports);
    assert_eq!((o.imports[0].start_line, o.imports[0].end_line), (3, 6));
    assert_eq!(o.imports[0].names, ["fmt", "strings"]);
}

#[test]
fn lint_directives_are_not_docs() {
    let ts = "// eslint-disable-next-line @typescript-eslint/no-explicit-any\nexport function parse(input: any): number {\n  return 1;\n}\n\n/** Sums the values. */\n// @ts-ignore\nexport function sum(xs: number[]): number {\n  return 0;\n}\n";
    let o = outline("a.ts", Language::TypeScript, ts);
    let doc = |name: &str| o.items.iter().find(|i| i.name == name).unwrap().doc.clone();
    assert_eq!(doc("parse"), None);
    assert_eq!(doc("sum").as_deref(), Some("Sums the values."));
}

#[test]
fn go_methods_are_listed_under_their_receiver_type_wherever_they_stand() {
    // go-zero's bloom.go: the type, its constructor, then the type's methods.
    let mut go = String::from("package bloom\n\n// A Filter is a bloom filter.\ntype Filter struct {\n\tbits   uint\n\tbitSet bitSetProvider\n}\n\n// New creates a Filter.\nfunc New(store *redis.Redis, key string, bits uint) *Filter {\n\treturn &Filter{bits: bits}\n}\n\n");
    for name in ["Add", "AddCtx", "Exists", "ExistsCtx", "getLocations"] {
        go.push_str(&format!(
            "// {name} does its part.\nfunc (f *Filter) {name}(data []byte) error {{\n\tlocations := f.getLocations(data)\n\treturn f.bitSet.set(locations)\n}}\n\n"
        ));
    }
    let o = outline("core/bloom/bloom.go", Language::Go, &go);
    let text = render(&o);
    assert!(!text.contains("nested"), "{text}");
    let type_at = text.find("type Filter struct").expect("the type");
    let new_at = text.find("func New(").expect("the constructor");
    for name in ["Add", "AddCtx", "Exists", "ExistsCtx", "getLocations"] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" func (f *Filter) {name}(")))
            .unwrap_or_else(|| panic!("{name} is missing: {text}"));
        assert!(line.starts_with("  "), "{name} is not under Filter: {text}");
        let at = text.find(line).unwrap();
        assert!(
            type_at < at && at < new_at,
            "{name} is not under Filter: {text}"
        );
    }
}

#[test]
fn a_file_of_many_small_functions_keeps_to_its_budget() {
    // 1,000 one-line functions (and 200 methods of one class): their names alone are half the
    // file, so they are listed by name and line as far as the hard bound goes (the budget
    // grows for names, up to `NAMES_PERCENT` of the file), the rest counted with their lines.
    let mut py = String::new();
    for i in 0..1000 {
        py.push_str(&format!(
            "def function_number_{i}(a, b): return a + b + {i}\n"
        ));
    }
    py.push_str("class Many:\n");
    for i in 0..200 {
        py.push_str(&format!("    def method_{i}(self): return {i}\n"));
    }
    let o = outline("gen/many.py", Language::Python, &py);
    assert_eq!(o.items.len(), 1201);
    let text = render(&o);
    let bound = py.chars().count() * crate::render::NAMES_PERCENT / 100;
    assert!(body(&text) <= bound, "{} > {bound}", body(&text));
    assert!(text.contains("definitions: function_number_"), "{text}");
    assert!(text.contains("function_number_0 1,"), "{text}");
    // What did not fit is counted with its lines, and said at the end.
    let counted = text
        .lines()
        .find(|l| l.starts_with("… ") && l.contains("more definitions, lines "))
        .unwrap_or_else(|| panic!("no count of what is left out: {text}"));
    let listed = text.matches("function_number_").count()
        + text.matches("method_").count()
        + text.contains("Many 1001") as usize;
    let left: usize = counted["… ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        listed + left,
        1201,
        "every definition is listed or counted: {text}"
    );
    assert!(text.contains("counted only)"), "{text}");
}

mod names;
