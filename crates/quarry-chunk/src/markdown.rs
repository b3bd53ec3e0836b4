//! Markdown: one chunk per section, cut at ATX headings (`#` … `######`).
//!
//! Hand-written rather than a tree-sitter grammar: headings are all the structure chunking
//! needs, and finding them only takes knowing which lines are inside fenced code blocks (where
//! `# comment` is code, not a heading). A grammar would add another large C parser to compile
//! and run for no better result. Setext headings (text underlined with `===`/`---`) are not
//! recognised; their sections stay part of the enclosing one.

use crate::sections::{self, Heading};
use crate::{ChunkOptions, Lines};
use quarry_core::{FileChunks, Language};

pub(crate) fn chunk(lines: &Lines, opts: &ChunkOptions) -> FileChunks {
    sections::chunk(lines, opts, &headings(lines), Language::Markdown)
}

/// ATX headings outside fenced code blocks.
fn headings(lines: &Lines) -> Vec<Heading> {
    let mut out = Vec::new();
    // The open fence: its character and length.
    let mut fence: Option<(char, usize)> = None;
    for n in 1..=lines.len() {
        let Some(line) = strip_indent(lines.get(n)) else {
            continue;
        };
        if let Some((ch, len)) = fence {
            let run = line.chars().take_while(|&c| c == ch).count();
            if run >= len && line[run * ch.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if let Some(open) = fence_open(line) {
            fence = Some(open);
            continue;
        }
        if let Some((level, text)) = atx(line) {
            out.push(Heading {
                line: n,
                title_line: n,
                level,
                text,
            });
        }
    }
    out
}

/// The line without up to three spaces of indentation; `None` when indented further (an
/// indented code block line, never a heading or fence).
fn strip_indent(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    if spaces > 3 || line[spaces..].starts_with('\t') {
        return None;
    }
    Some(&line[spaces..])
}

/// A fence opening: three or more backticks (whose info string has none) or tildes.
fn fence_open(line: &str) -> Option<(char, usize)> {
    let ch = line.chars().next().filter(|&c| c == '`' || c == '~')?;
    let run = line.chars().take_while(|&c| c == ch).count();
    if run < 3 || (ch == '`' && line[run..].contains('`')) {
        return None;
    }
    Some((ch, run))
}

/// `## Title ##` → (2, "Title").
fn atx(line: &str) -> Option<(usize, String)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let mut text = rest.trim();
    // An optional closing sequence of #s, preceded by a space.
    let without = text.trim_end_matches('#');
    if without.is_empty() || without.ends_with(' ') || without.ends_with('\t') {
        text = without.trim_end();
    }
    Some((level, text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atx_headings() {
        assert_eq!(atx("# Title"), Some((1, "Title".to_string())));
        assert_eq!(atx("### Title ###"), Some((3, "Title".to_string())));
        assert_eq!(atx("## C# notes"), Some((2, "C# notes".to_string())));
        assert_eq!(atx("## Issue #42"), Some((2, "Issue #42".to_string())));
        assert_eq!(atx("#"), Some((1, String::new())));
        assert_eq!(atx("#hashtag"), None);
        assert_eq!(atx("####### seven"), None);
        assert_eq!(strip_indent("    # indented code"), None);
        assert_eq!(strip_indent("   # ok"), Some("# ok"));
    }

    #[test]
    fn fences() {
        assert_eq!(fence_open("```rust"), Some(('`', 3)));
        assert_eq!(fence_open("~~~~"), Some(('~', 4)));
        assert_eq!(fence_open("``not`"), None);
        assert_eq!(fence_open("```a`b"), None);
        // A longer fence is only closed by one at least as long; an unclosed fence runs to
        // the end.
        let lines = Lines::new("````\n```\n# in\n````\n# out\n```\n# never\n");
        let found: Vec<u32> = headings(&lines).iter().map(|h| h.line).collect();
        assert_eq!(found, [5]);
    }

    #[test]
    fn heading_parents_follow_levels() {
        let text = "# A\n## B\n### C\n## D\n# E\n### F\n";
        let fc = chunk(&Lines::new(text), &ChunkOptions::default());
        let parents: Vec<(&str, Option<&str>)> = fc
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.parent.as_deref()))
            .collect();
        assert_eq!(
            parents,
            [
                ("A", None),
                ("B", Some("A")),
                ("C", Some("B")),
                ("D", Some("A")),
                ("E", None),
                ("F", Some("E"))
            ]
        );
        let ends: Vec<u32> = fc.symbols.iter().map(|s| s.end_line).collect();
        assert_eq!(ends, [4, 3, 3, 4, 6, 6]);
    }
}
