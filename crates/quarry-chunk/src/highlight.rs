//! Syntax colours for the file view, from the same grammars the chunker parses with and their
//! own highlight queries (tree-sitter-highlight), so the page needs no highlighter of its own
//! and colours exactly the languages quarry understands. A language whose query does not build
//! is drawn plain.

use std::collections::HashMap;
use std::sync::OnceLock;

use quarry_core::{CodeSpan, Language};
use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

/// The highlight names the page has colours for (a capture like `function.method` takes the
/// longest of these it starts with).
const NAMES: &[&str] = &[
    "attribute",
    "comment",
    "constant",
    "constant.builtin",
    "constructor",
    "embedded",
    "escape",
    "function",
    "function.builtin",
    "function.method",
    "keyword",
    "label",
    "module",
    "number",
    "operator",
    "property",
    "punctuation",
    "string",
    "string.special",
    "tag",
    "type",
    "type.builtin",
    "variable",
    "variable.builtin",
    "variable.parameter",
];

/// Files larger than this are drawn plain: colouring a megabyte costs more than the reader gains.
pub const MAX_HIGHLIGHT_BYTES: usize = 1 << 20;

fn queries(language: Language) -> Option<(String, &'static str)> {
    use tree_sitter_javascript as js;
    use tree_sitter_typescript as ts;
    Some(match language {
        Language::Rust => (
            tree_sitter_rust::HIGHLIGHTS_QUERY.into(),
            tree_sitter_rust::INJECTIONS_QUERY,
        ),
        Language::Python => (tree_sitter_python::HIGHLIGHTS_QUERY.into(), ""),
        Language::Go => (tree_sitter_go::HIGHLIGHTS_QUERY.into(), ""),
        Language::JavaScript => (
            format!("{}\n{}", js::JSX_HIGHLIGHT_QUERY, js::HIGHLIGHT_QUERY),
            "",
        ),
        // TypeScript's query adds to JavaScript's (its grammar extends it), and comes first so
        // that its more specific patterns win.
        Language::TypeScript => (
            format!("{}\n{}", ts::HIGHLIGHTS_QUERY, js::HIGHLIGHT_QUERY),
            "",
        ),
        Language::Tsx => (
            format!(
                "{}\n{}\n{}",
                ts::HIGHLIGHTS_QUERY,
                js::JSX_HIGHLIGHT_QUERY,
                js::HIGHLIGHT_QUERY
            ),
            "",
        ),
        Language::Java => (tree_sitter_java::HIGHLIGHTS_QUERY.into(), ""),
        Language::C => (tree_sitter_c::HIGHLIGHT_QUERY.into(), ""),
        Language::Cpp => (
            format!(
                "{}\n{}",
                tree_sitter_cpp::HIGHLIGHT_QUERY,
                tree_sitter_c::HIGHLIGHT_QUERY
            ),
            "",
        ),
        Language::CSharp => (tree_sitter_c_sharp::HIGHLIGHTS_QUERY.into(), ""),
        Language::Ruby => (tree_sitter_ruby::HIGHLIGHTS_QUERY.into(), ""),
        Language::Php => (tree_sitter_php::HIGHLIGHTS_QUERY.into(), ""),
        _ => return None,
    })
}

/// Each language's configuration, built once per process (compiling a query takes
/// milliseconds); `None` where the language has no grammar or its query does not build.
fn configuration(language: Language) -> Option<&'static HighlightConfiguration> {
    static CONFIGS: OnceLock<
        std::sync::Mutex<HashMap<Language, Option<&'static HighlightConfiguration>>>,
    > = OnceLock::new();
    let configs = CONFIGS.get_or_init(Default::default);
    let mut configs = configs.lock().unwrap_or_else(|e| e.into_inner());
    *configs.entry(language).or_insert_with(|| {
        let grammar = crate::grammar(language)?;
        let (highlights, injections) = queries(language)?;
        let mut config = HighlightConfiguration::new(
            grammar,
            format!("{language:?}"),
            &highlights,
            injections,
            "",
        )
        .ok()?;
        config.configure(NAMES);
        Some(&*Box::leak(Box::new(config)))
    })
}

/// `text` as lines of classed spans, or `None` when the language is not coloured (no grammar,
/// too large, or the parse gave up): the caller shows the lines plain.
pub fn highlight(language: Language, text: &str) -> Option<Vec<Vec<CodeSpan>>> {
    if text.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let config = configuration(language)?;
    let mut highlighter = Highlighter::new();
    let events = highlighter
        .highlight(config, text.as_bytes(), None, None, |_| None)
        .ok()?;
    let mut lines: Vec<Vec<CodeSpan>> = vec![Vec::new()];
    let mut stack: Vec<usize> = Vec::new();
    for event in events {
        match event.ok()? {
            HighlightEvent::HighlightStart(h) => stack.push(h.0),
            HighlightEvent::HighlightEnd => {
                stack.pop();
            }
            HighlightEvent::Source { start, end } => {
                let class = stack.last().map(|&i| NAMES[i].to_string());
                let source = text.get(start..end)?;
                for (n, piece) in source.split('\n').enumerate() {
                    if n > 0 {
                        lines.push(Vec::new());
                    }
                    let piece = piece.strip_suffix('\r').unwrap_or(piece);
                    if piece.is_empty() {
                        continue;
                    }
                    let line = lines.last_mut().expect("one line at least");
                    match line.last_mut() {
                        Some(last) if last.class == class => last.text.push_str(piece),
                        _ => line.push(CodeSpan {
                            text: piece.to_string(),
                            class: class.clone(),
                        }),
                    }
                }
            }
        }
    }
    if text.ends_with('\n') {
        lines.pop();
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(lines: &[Vec<CodeSpan>], text: &str) -> Vec<String> {
        lines
            .iter()
            .flatten()
            .filter(|s| s.text == text)
            .filter_map(|s| s.class.clone())
            .collect()
    }

    #[test]
    fn every_grammar_has_a_query_that_builds() {
        for language in [
            Language::Rust,
            Language::Python,
            Language::Go,
            Language::JavaScript,
            Language::TypeScript,
            Language::Tsx,
            Language::Java,
            Language::C,
            Language::Cpp,
            Language::CSharp,
            Language::Ruby,
            Language::Php,
        ] {
            assert!(configuration(language).is_some(), "{language:?}");
        }
        assert!(configuration(Language::Markdown).is_none());
    }

    #[test]
    fn python_is_coloured_line_by_line_and_keeps_every_character() {
        let text = "def parse(path):\n    # read it\n    return open(path, \"r\")\n";
        let lines = highlight(Language::Python, text).unwrap();
        assert_eq!(lines.len(), 3);
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|s| s.text.as_str()).collect())
            .collect();
        assert_eq!(joined.join("\n") + "\n", text);
        assert!(classes(&lines, "def").contains(&"keyword".to_string()));
        assert!(classes(&lines, "parse")
            .iter()
            .any(|c| c.starts_with("function")));
        assert!(lines[1]
            .iter()
            .any(|s| s.class.as_deref() == Some("comment")));
        assert!(lines[2]
            .iter()
            .any(|s| s.class.as_deref() == Some("string")));
    }

    #[test]
    fn text_without_a_grammar_is_not_coloured() {
        assert!(highlight(Language::Markdown, "# Title\n").is_none());
    }
}
