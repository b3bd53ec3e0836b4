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
    // `func`, `fun`, `def` captured as `@keyword.function`: a keyword, not a function name.
    "keyword.function",
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

/// The language's highlight and injection queries, from its entry in `languages.rs`.
fn queries(language: Language) -> Option<(String, &'static str)> {
    let spec = crate::languages::spec(language)?;
    // Queries written for editors also capture `@spell`/`@nospell` (what a spell checker
    // reads); tree-sitter-highlight would let that capture hide `@comment` and `@string`.
    let highlights = (spec.highlights)()
        .replace(" @spell", "")
        .replace(" @nospell", "");
    Some((highlights, spec.injections))
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
        let parsed: Vec<Language> = Language::ALL
            .into_iter()
            .filter(|l| crate::grammar(*l).is_some())
            .collect();
        assert!(parsed.len() >= 18, "{parsed:?}");
        for language in parsed {
            assert!(configuration(language).is_some(), "{language:?}");
        }
        assert!(configuration(Language::Markdown).is_none());
    }

    /// Each language's keywords, strings and comments are coloured (Kotlin's query is
    /// quarry's own: its grammar ships none).
    #[test]
    fn the_new_languages_colour_keywords_strings_and_comments() {
        for (language, text, keyword) in [
            (Language::Kotlin, "// c\nfun f() = \"s\"\n", "fun"),
            (
                Language::Swift,
                "// c\nfunc f() -> String { return \"s\" }\n",
                "func",
            ),
            (
                Language::Shell,
                "# c\nf() { echo \"s\"; }\nif true; then f; fi\n",
                "if",
            ),
            (
                Language::Lua,
                "-- c\nlocal function f() return \"s\" end\n",
                "function",
            ),
            (Language::Scala, "// c\ndef f(): String = \"s\"\n", "def"),
            (Language::R, "# c\nf <- function(x) \"s\"\n", "function"),
            (
                Language::ObjectiveC,
                "// c\n@interface A\n- (id)s; // \"s\"\n@end\nchar *t = \"s\";\n",
                "@interface",
            ),
            (
                Language::Elixir,
                "# c\ndefmodule A do\n  def f, do: \"s\"\nend\n",
                "do",
            ),
            (
                Language::Haskell,
                "-- c\nmodule M where\nf = \"s\"\n",
                "module",
            ),
            (
                Language::Zig,
                "// c\nfn f() []const u8 { return \"s\"; }\n",
                "fn",
            ),
            (
                Language::Julia,
                "# c\nfunction f()\n    return \"s\"\nend\n",
                "function",
            ),
            (
                Language::Dart,
                "// c\nString f() { return \"s\"; }\n",
                "return",
            ),
        ] {
            let lines = highlight(language, text).unwrap_or_else(|| panic!("{language:?}"));
            let all: Vec<&str> = lines
                .iter()
                .flatten()
                .filter_map(|s| s.class.as_deref())
                .collect();
            assert!(
                classes(&lines, keyword)
                    .iter()
                    .any(|c| c.starts_with("keyword")),
                "{language:?}: {lines:?}"
            );
            assert!(all.contains(&"comment"), "{language:?}: {all:?}");
            assert!(
                all.iter().any(|c| c.starts_with("string")),
                "{language:?}: {all:?}"
            );
        }
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
