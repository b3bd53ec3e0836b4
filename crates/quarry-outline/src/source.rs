//! What the outline reads from the source lines themselves: doc comments, type members,
//! import blocks, and the heuristic outline for files without a grammar. Line-based by design:
//! the chunker already found the definitions and their ranges; what is left is local text.

use crate::{ImportBlock, OutlineItem, MAX_MEMBERS};
use quarry_core::Language;

pub(crate) struct Lines<'a> {
    lines: Vec<&'a str>,
}

/// Longest doc or member text kept, in characters.
const MAX_TEXT: usize = 160;

fn clip(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= MAX_TEXT {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_TEXT - 1).collect();
    out.push('…');
    out
}

/// Lines of a doc's first paragraph read for its first sentence.
const PARAGRAPH_LINES: usize = 4;

/// `text` up to the end of its first sentence: a `.`, `?` or `!` followed by spaces and a
/// capital or digit (so `e.g. this` does not end it), or the whole text.
fn first_sentence(text: &str) -> &str {
    for (i, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') {
            continue;
        }
        let rest = &text[i + 1..];
        if rest.starts_with(' ')
            && rest
                .trim_start_matches(' ')
                .chars()
                .next()
                .is_some_and(|n| n.is_uppercase() || n.is_ascii_digit())
        {
            return &text[..=i];
        }
    }
    text
}

fn is_comment(trimmed: &str) -> bool {
    ["//", "/*", "*", "#", "--", "\"\"\"", "'''"]
        .iter()
        .any(|p| trimmed.starts_with(p))
        && !trimmed.starts_with("#[")
        && !trimmed.starts_with("#include")
        && !trimmed.starts_with("#define")
}

/// A comment line's text without its markers.
fn comment_text(trimmed: &str) -> &str {
    let mut t = trimmed;
    for marker in [
        "///", "//!", "//", "/**", "/*!", "/*", "*/", "*", "##", "#", "--",
    ] {
        if let Some(rest) = t.strip_prefix(marker) {
            t = rest;
            break;
        }
    }
    t.trim_end_matches("*/").trim()
}

/// Python docstring quotes, with optional string prefixes.
fn docstring_open(trimmed: &str) -> Option<(&str, &'static str)> {
    let unprefixed = trimmed.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    for quote in ["\"\"\"", "'''"] {
        if let Some(rest) = unprefixed.strip_prefix(quote) {
            return Some((rest, quote));
        }
    }
    None
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut lines: Vec<&str> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        if text.ends_with('\n') || text.is_empty() {
            lines.pop();
        }
        Lines { lines }
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Line `n` (1-based); "" past the end.
    pub(crate) fn get(&self, n: u32) -> &'a str {
        n.checked_sub(1)
            .and_then(|i| self.lines.get(i as usize))
            .copied()
            .unwrap_or("")
    }

    fn indent(line: &str) -> usize {
        line.len() - line.trim_start().len()
    }

    /// The line the definition's signature is on (its range may start at attached comments,
    /// attributes or decorators).
    pub(crate) fn signature_line(&self, start: u32, end: u32, signature: Option<&str>) -> u32 {
        let head: String = signature
            .unwrap_or("")
            .chars()
            .take(24)
            .collect::<String>()
            .trim()
            .to_string();
        if head.is_empty() {
            return start;
        }
        (start..=end)
            .find(|&n| self.get(n).trim_start().starts_with(&head))
            .unwrap_or(start)
    }

    /// First line of the definition's doc: a docstring right after a Python signature, else
    /// the comment block right above the signature (inside the range or just before it).
    pub(crate) fn doc_comment(
        &self,
        signature_line: u32,
        start: u32,
        end: u32,
        language: Language,
    ) -> Option<String> {
        if language == Language::Python {
            // The header may span lines up to the one ending with ':'.
            let body = (signature_line..=end)
                .find(|&n| self.get(n).trim_end().ends_with(':'))
                .map_or(signature_line + 1, |n| n + 1);
            let first = (body..=end).find(|&n| !self.get(n).trim().is_empty())?;
            let (rest, quote) = docstring_open(self.get(first).trim())?;
            // The first paragraph: from the opening quotes to a blank line or the closing ones.
            let mut paragraph: Vec<&str> = Vec::new();
            let (mut n, mut line) = (first, rest);
            loop {
                let (text, closed) = match line.find(quote) {
                    Some(at) => (line[..at].trim(), true),
                    None => (line.trim(), false),
                };
                if text.is_empty() && !paragraph.is_empty() {
                    break;
                }
                if !text.is_empty() {
                    paragraph.push(text);
                }
                if closed || paragraph.len() >= PARAGRAPH_LINES || n >= end {
                    break;
                }
                n += 1;
                line = self.get(n);
            }
            return (!paragraph.is_empty()).then(|| clip(first_sentence(&paragraph.join(" "))));
        }
        // Walk up from the line above the signature over attributes, then over comments.
        let mut n = signature_line.checked_sub(1)?;
        let floor = start.saturating_sub(1).max(1).min(signature_line);
        let mut block = Vec::new();
        let is_attribute =
            |t: &str| t.starts_with("#[") || t.starts_with('@') || t.starts_with('[');
        while n >= 1
            && (n >= floor || is_comment(self.get(n).trim()) || is_attribute(self.get(n).trim()))
        {
            let t = self.get(n).trim();
            if t.is_empty() {
                break;
            }
            if is_attribute(t) && !is_comment(t) {
                n -= 1;
                continue;
            }
            if !is_comment(t) {
                break;
            }
            block.push(n);
            n -= 1;
        }
        // The block's first paragraph: from its first line with words in it to a line without.
        // Lint and coverage directives are not descriptions.
        let has_words = |t: &&str| {
            t.chars().any(char::is_alphanumeric)
                && ![
                    "eslint-",
                    "@ts-",
                    "prettier-",
                    "istanbul ",
                    "c8 ",
                    "nolint",
                    "noqa",
                ]
                .iter()
                .any(|d| t.starts_with(d))
        };
        let paragraph: Vec<&str> = block
            .iter()
            .rev()
            .map(|&n| comment_text(self.get(n).trim()))
            .skip_while(|t| !has_words(t))
            .take_while(has_words)
            .take(PARAGRAPH_LINES)
            .collect();
        (!paragraph.is_empty()).then(|| clip(first_sentence(&paragraph.join(" "))))
    }

    /// The lines directly inside a type that are not part of a nested definition: fields,
    /// enum variants, interface members, class attributes.
    pub(crate) fn members(
        &self,
        signature_line: u32,
        end: u32,
        children: &[(u32, u32)],
        language: Language,
    ) -> Vec<String> {
        // Whether line `n` is inside a child: by the children's starts, with the furthest end
        // reached so far (a type may hold thousands of methods; this runs for each line).
        let mut starts: Vec<(u32, u32)> = children.to_vec();
        starts.sort_unstable();
        let mut reach = 0;
        let furthest: Vec<u32> = starts
            .iter()
            .map(|&(_, e)| {
                reach = reach.max(e);
                reach
            })
            .collect();
        let inside = |n: u32| {
            let before = starts.partition_point(|&(s, _)| s <= n);
            before > 0 && furthest[before - 1] >= n
        };
        let body_start = if language == Language::Python {
            (signature_line..=end)
                .find(|&n| self.get(n).trim_end().ends_with(':'))
                .map_or(signature_line + 1, |n| n + 1)
        } else {
            signature_line + 1
        };
        let Some(first) = (body_start..end.max(body_start))
            .chain(std::iter::once(end).filter(|_| language == Language::Python))
            .find(|&n| !inside(n) && !self.get(n).trim().is_empty())
        else {
            return Vec::new();
        };
        let member_indent = Self::indent(self.get(first));
        let last = if language == Language::Python {
            end
        } else {
            end.saturating_sub(1)
        };
        let mut members = Vec::new();
        let mut more = 0;
        let mut in_docstring = false;
        for n in body_start..=last {
            let line = self.get(n);
            let t = line.trim();
            if let Some((rest, quote)) = docstring_open(t) {
                in_docstring = !rest.contains(quote);
                continue;
            }
            if in_docstring {
                in_docstring = !(t.contains("\"\"\"") || t.contains("'''"));
                continue;
            }
            if t.is_empty()
                || inside(n)
                || Self::indent(line) != member_indent
                || is_comment(t)
                || t.starts_with('@')
                || t.starts_with("#[")
                || matches!(t, "{" | "}" | "};" | "})" | "pass" | "...")
                || t.starts_with("public:")
                    | t.starts_with("private:")
                    | t.starts_with("protected:")
            {
                continue;
            }
            if members.len() < MAX_MEMBERS {
                members.push(clip(t));
            } else {
                more += 1;
            }
        }
        if more > 0 {
            members.push(format!("… {more} more"));
        }
        members
    }

    /// Runs of top-level import lines (blank lines and comments inside a run are allowed).
    pub(crate) fn import_blocks(&self, language: Language) -> Vec<ImportBlock> {
        let mut blocks: Vec<ImportBlock> = Vec::new();
        let mut open: Option<ImportBlock> = None;
        let mut continuation = false;
        for n in 1..=self.len() as u32 {
            let line = self.get(n);
            let t = line.trim();
            if continuation {
                // A multi-line import: `from x import (` … `)`, `use a::{` … `};`, `import (` … `)`.
                if let Some(b) = open.as_mut() {
                    b.end_line = n;
                    // Go's `import (` block: one quoted path a line, maybe after an alias.
                    if language == Language::Go {
                        if let Some(path) = t.split('"').nth(1).filter(|p| !p.is_empty()) {
                            b.names.push(path.to_string());
                        }
                    }
                }
                continuation = !(t.ends_with(')')
                    || t.ends_with("};")
                    || t.ends_with(';') && !t.ends_with("{;"));
                continue;
            }
            match import_name(line, language) {
                Some(name) => {
                    let b = open.get_or_insert_with(|| ImportBlock {
                        start_line: n,
                        end_line: n,
                        names: Vec::new(),
                        cell: None,
                    });
                    b.end_line = n;
                    if !name.is_empty() {
                        b.names.push(name);
                    }
                    continuation = t.ends_with('(') || t.ends_with('{') || t.ends_with(',');
                }
                None if t.is_empty() || is_comment(t) => {}
                None => {
                    if let Some(b) = open.take() {
                        blocks.push(b);
                    }
                }
            }
        }
        blocks.extend(open);
        blocks
    }
}

/// The module an import line names, if it is an import (`""` for an import without one).
fn import_name(line: &str, language: Language) -> Option<String> {
    if line.starts_with([' ', '\t']) && language != Language::Go {
        return None;
    }
    let mut t = line.trim();
    if language == Language::Python {
        // A trailing comment (`import x  # noqa`) is no part of the name.
        t = t.split(" #").next().unwrap_or(t).trim_end();
    }
    let word = |prefixes: &[&str]| prefixes.iter().find_map(|p| t.strip_prefix(p));
    let rest = match language {
        Language::Rust => word(&["use ", "pub use ", "pub(crate) use ", "extern crate "]),
        Language::Python => word(&["import ", "from "]),
        Language::Go => word(&["import "]),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            word(&["import "]).or_else(|| {
                (t.starts_with("const ") || t.starts_with("var ") || t.starts_with("let "))
                    .then_some(t)
                    .filter(|t| t.contains("require("))
            })
        }
        Language::Java => word(&["import ", "package "]),
        Language::C | Language::Cpp => word(&["#include "]),
        Language::CSharp => word(&["using "]).filter(|r| !r.starts_with('(')),
        Language::Ruby => word(&["require ", "require_relative "]),
        Language::Php => word(&["use ", "require ", "require_once ", "include "]),
        _ => None,
    }?;
    let name = match language {
        Language::Python if t.starts_with("from ") => rest.split_whitespace().next().unwrap_or(""),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            rest.rsplit(['\'', '"']).nth(1).unwrap_or("")
        }
        _ => rest.trim_end_matches([';', '{', '(']).trim(),
    };
    Some(name.trim_matches(['"', '\'', '<', '>', ' ']).to_string())
}

/// Definition-looking lines, for files the chunker has no grammar for.
pub(crate) fn heuristic_items(lines: &Lines) -> Vec<OutlineItem> {
    const STARTS: &[&str] = &[
        "def ",
        "class ",
        "function ",
        "fn ",
        "func ",
        "sub ",
        "proc ",
        "module ",
        "interface ",
        "struct ",
        "type ",
        "trait ",
        "impl ",
        "enum ",
        "object ",
        "record ",
        "local function ",
        "export function ",
        "export class ",
        "pub fn ",
        "defmodule ",
        "defp ",
        "let ",
    ];
    let mut items = Vec::new();
    for n in 1..=lines.len() as u32 {
        let line = lines.get(n);
        let t = line.trim_start();
        let Some(prefix) = STARTS.iter().find(|p| t.starts_with(*p)) else {
            continue;
        };
        // `let` only at the top level (OCaml, F#), the rest at any depth.
        if *prefix == "let " && line.len() != t.len() {
            continue;
        }
        let name: String = t[prefix.len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == ':')
            .collect();
        if name.is_empty() {
            continue;
        }
        items.push(OutlineItem {
            qualified_name: name.clone(),
            name,
            kind: prefix.trim().rsplit(' ').next().unwrap_or("").to_string(),
            start_line: n,
            end_line: n,
            signature: Some(clip(t)),
            doc: None,
            depth: u32::from(line.len() != t.len()),
            members: Vec::new(),
            page: None,
            cell: None,
        });
    }
    items
}
