//! Shared helpers: fixtures, compact views of results, and the invariants every result must
//! satisfy.
#![allow(dead_code)]

use quarry_chunk::{chunk_file, ChunkOptions};
use quarry_core::{FileChunks, Language};

/// Every fixture: (language, file text).
pub fn fixtures() -> Vec<(Language, &'static str)> {
    vec![
        (Language::Rust, include_str!("../fixtures/sample.rs")),
        (Language::Python, include_str!("../fixtures/sample.py")),
        (Language::Go, include_str!("../fixtures/sample.go")),
        (Language::JavaScript, include_str!("../fixtures/sample.js")),
        (Language::TypeScript, include_str!("../fixtures/sample.ts")),
        (Language::Tsx, include_str!("../fixtures/sample.tsx")),
        (Language::Java, include_str!("../fixtures/Sample.java")),
        (Language::C, include_str!("../fixtures/sample.c")),
        (Language::Cpp, include_str!("../fixtures/sample.cpp")),
        (Language::Ruby, include_str!("../fixtures/sample.rb")),
        (Language::CSharp, include_str!("../fixtures/sample.cs")),
        (Language::Php, include_str!("../fixtures/sample.php")),
        (Language::Kotlin, include_str!("../fixtures/sample.kt")),
        (Language::Swift, include_str!("../fixtures/sample.swift")),
        (Language::Shell, include_str!("../fixtures/sample.sh")),
        (Language::Lua, include_str!("../fixtures/sample.lua")),
        (Language::Scala, include_str!("../fixtures/sample.scala")),
        (Language::Dart, include_str!("../fixtures/sample.dart")),
        (Language::R, include_str!("../fixtures/sample.r")),
        (Language::ObjectiveC, include_str!("../fixtures/sample.m")),
        (Language::Elixir, include_str!("../fixtures/sample.ex")),
        (Language::Haskell, include_str!("../fixtures/sample.hs")),
        (Language::Zig, include_str!("../fixtures/sample.zig")),
        (Language::Julia, include_str!("../fixtures/sample.jl")),
        (Language::Markdown, include_str!("../fixtures/sample.md")),
        (Language::Text, include_str!("../fixtures/sample.txt")),
    ]
}

/// Options with no merging, so each definition's own chunk is visible.
pub fn unmerged(max_lines: u32) -> ChunkOptions {
    ChunkOptions {
        max_lines,
        min_lines: 0,
        ..ChunkOptions::default()
    }
}

/// Symbols as (qualified name, kind, start, end).
pub fn symbols(fc: &FileChunks) -> Vec<(String, &str, u32, u32)> {
    fc.symbols
        .iter()
        .map(|s| {
            (
                s.qualified_name(),
                s.kind.as_str(),
                s.start_line,
                s.end_line,
            )
        })
        .collect()
}

/// Chunks as (start, end, symbol, kind).
pub fn chunks(fc: &FileChunks) -> Vec<(u32, u32, Option<&str>, &str)> {
    fc.chunks
        .iter()
        .map(|c| {
            (
                c.start_line,
                c.end_line,
                c.symbol.as_deref(),
                c.kind.as_str(),
            )
        })
        .collect()
}

pub fn owned_symbols(expected: &[(&str, &str, u32, u32)]) -> Vec<(String, &'static str, u32, u32)> {
    expected
        .iter()
        .map(|&(n, k, s, e)| (n.to_string(), leak(k), s, e))
        .collect()
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// The file's lines the way chunk text is defined: split on `\n`, one trailing `\r` dropped.
pub fn file_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    lines
}

/// Chunks the text and checks every invariant; returns the result.
pub fn chunk_checked(language: Language, text: &str, opts: &ChunkOptions) -> FileChunks {
    let fc = chunk_file(language, text, opts);
    check_invariants(language, text, opts, &fc);
    fc
}

/// Ranges are within the file, text is exactly the lines, every non-blank line is covered,
/// chunks are in order and overlap only as windows of the same definition, no chunk is
/// all blank, and chunks respect max_lines.
pub fn check_invariants(language: Language, text: &str, opts: &ChunkOptions, fc: &FileChunks) {
    let lines = file_lines(text);
    let n = lines.len() as u32;
    let mut covered = vec![false; lines.len() + 1];
    for c in &fc.chunks {
        assert!(
            1 <= c.start_line && c.start_line <= c.end_line && c.end_line <= n,
            "bad range {c:?} (n={n})"
        );
        // A notebook that is not valid JSON is cut as plain text.
        if language == Language::Notebook {
            assert_eq!(c.language, Language::Text);
        } else if language == Language::Text {
            // A script without an extension is its `#!` line's language.
            let script = quarry_chunk::script_language(text);
            assert_eq!(c.language, script.unwrap_or(Language::Text));
        } else {
            assert_eq!(c.language, language);
        }
        let expected = lines[c.start_line as usize - 1..c.end_line as usize].join("\n");
        assert_eq!(c.text, expected, "chunk text must be its lines");
        assert!(
            c.text.lines().any(|l| !l.trim().is_empty()),
            "all-blank chunk {c:?}"
        );
        let size = c.end_line - c.start_line + 1;
        assert!(
            size <= opts.max_lines.max(1),
            "chunk of {size} lines exceeds max_lines: {c:?}"
        );
        for line in c.start_line..=c.end_line {
            covered[line as usize] = true;
        }
    }
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.trim().is_empty() || covered[i + 1],
            "line {} not covered: {line:?}",
            i + 1
        );
    }
    for pair in fc.chunks.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            a.start_line < b.start_line,
            "chunks out of order: {a:?} / {b:?}"
        );
        if b.start_line <= a.end_line {
            assert_eq!(
                (&a.symbol, &a.kind),
                (&b.symbol, &b.kind),
                "only windows of one definition overlap"
            );
        }
    }
    for s in &fc.symbols {
        assert!(
            1 <= s.start_line && s.start_line <= s.end_line && s.end_line <= n,
            "bad symbol {s:?}"
        );
    }
}
