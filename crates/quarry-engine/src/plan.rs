//! The deterministic query planner: reads a query once and says what kind of query it is —
//! which identifiers and file hints it names, and whether it is natural language. Fusion
//! weights and boosts follow from the plan, never from a model.

use quarry_core::tokens;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QueryPlan {
    /// Code identifiers the query names: CamelCase, snake_case, dotted (`a.b`), `backticked`.
    pub identifiers: Vec<String>,
    /// Paths, file names or extensions (`src/auth/session.go`, `session.go`, `.toml`).
    pub file_hints: Vec<String>,
    /// The BM25 terms (code-aware tokens minus stop words).
    pub terms: Vec<String>,
    /// No identifiers, no file hints and at most `NATURAL_LANGUAGE_MAX_TERMS` terms: a question in
    /// words, where meaning beats word overlap.
    pub natural_language: bool,
}

/// Longer queries are issue texts or pasted code: their words overlap the code they are about.
pub const NATURAL_LANGUAGE_MAX_TERMS: usize = 16;

const FILE_EXTENSIONS: &[&str] = &[
    "rs", "py", "go", "js", "ts", "tsx", "jsx", "java", "c", "h", "cc", "cpp", "hpp", "cs", "rb",
    "php", "md", "toml", "yaml", "yml", "json", "txt", "rst", "cfg", "ini", "sh",
];

fn is_identifier(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    if w.len() < 3 || !w.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return false;
    }
    let inner_upper =
        w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
    let snake = w.trim_matches('_').contains('_');
    inner_upper || snake
}

fn file_hint(word: &str) -> Option<String> {
    let w = word.trim_matches(|c: char| {
        matches!(
            c,
            '`' | '\'' | '"' | ',' | ';' | ':' | '(' | ')' | '[' | ']'
        )
    });
    let w = w.trim_end_matches('.');
    if w.contains("://") || w.len() < 3 {
        return None;
    }
    let ext = w.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let has_ext = ext.as_deref().is_some_and(|e| FILE_EXTENSIONS.contains(&e));
    let pathlike = w.contains('/') && w.split('/').filter(|p| !p.is_empty()).count() >= 2;
    (has_ext || pathlike).then(|| w.to_string())
}

pub fn plan(query: &str) -> QueryPlan {
    let mut identifiers: Vec<String> = Vec::new();
    let mut file_hints: Vec<String> = Vec::new();
    let push = |list: &mut Vec<String>, v: String| {
        if !list.contains(&v) {
            list.push(v);
        }
    };
    // `backticked` spans are identifiers whatever their shape.
    for (i, span) in query.split('`').enumerate() {
        if i % 2 == 1
            && !span.trim().is_empty()
            && !span.contains(char::is_whitespace)
            && file_hint(span).is_none()
        {
            push(&mut identifiers, span.trim().to_string());
        }
    }
    for word in query.split_whitespace() {
        if let Some(hint) = file_hint(word) {
            push(&mut file_hints, hint);
            continue;
        }
        let w = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'));
        let dotted = w.contains('.')
            && w.split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if dotted && w.split('.').count() >= 2 && w.chars().any(char::is_alphabetic) {
            push(&mut identifiers, w.to_string());
        } else if is_identifier(w) {
            push(
                &mut identifiers,
                w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .to_string(),
            );
        }
    }
    let terms = tokens::query_terms(query);
    let natural_language = identifiers.is_empty()
        && file_hints.is_empty()
        && terms.len() <= NATURAL_LANGUAGE_MAX_TERMS;
    QueryPlan {
        identifiers,
        file_hints,
        terms,
        natural_language,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_identifiers_hints_and_natural_language() {
        let p = plan("where do we retry failed uploads");
        assert!(p.natural_language);
        assert!(p.identifiers.is_empty() && p.file_hints.is_empty());

        let p = plan("UploadQueue.requeue_with_backoff fails in src/upload/queue.rs, see `retry` and config.toml");
        assert_eq!(p.identifiers, ["retry", "UploadQueue.requeue_with_backoff"]);
        assert_eq!(p.file_hints, ["src/upload/queue.rs", "config.toml"]);
        assert!(!p.natural_language);

        let p = plan("getUserName returns None for parse_config");
        assert_eq!(p.identifiers, ["getUserName", "parse_config"]);

        let p = plan("See https://example.org/a/b. It is fine, e.g. this.");
        assert!(p.file_hints.is_empty(), "{p:?}");
        let long = "word ".repeat(5) + &(0..30).map(|i| format!("term{i} ")).collect::<String>();
        assert!(!plan(&long).natural_language);
    }
}

/// What a search pattern (an agent's Grep) is, which decides who should answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// One identifier (`UploadQueue`, `parse_config`, `os.path.join`): grep finds it exactly;
    /// the symbol table adds where it is defined.
    Identifier,
    /// Code with metavariables or structure (`fn $NAME(`, `foo($$$)`): a structural search.
    Structural,
    /// A regular expression or other literal text: grep's job.
    Regex,
    /// Words (`where do we retry failed uploads`): a meaning search.
    NaturalLanguage,
}

/// Classifies a pattern. Natural language: at least three words of letters, no regex
/// operators, no code punctuation.
pub fn classify_pattern(pattern: &str) -> PatternKind {
    let p = pattern.trim();
    if p.contains('$') && p.chars().any(|c| c.is_ascii_uppercase()) && !p.ends_with('$') {
        return PatternKind::Structural;
    }
    let identifier = !p.is_empty()
        && p.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && p.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
        && !p.ends_with('.');
    if identifier {
        return PatternKind::Identifier;
    }
    let words: Vec<&str> = p.split_whitespace().collect();
    let wordy = words.len() >= 3
        && words.iter().all(|w| {
            w.trim_end_matches(['?', ',', '.', '!'])
                .chars()
                .all(|c| c.is_alphabetic() || c == '\'' || c == '-')
        });
    if wordy {
        PatternKind::NaturalLanguage
    } else {
        PatternKind::Regex
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::*;

    #[test]
    fn patterns_are_classified_by_shape() {
        use PatternKind::*;
        for (p, want) in [
            ("UploadQueue", Identifier),
            ("parse_config_file", Identifier),
            ("os.path.join", Identifier),
            ("std::fs::read", Identifier),
            ("fn \\w+\\(", Regex),
            ("TODO|FIXME", Regex),
            ("def test_.*upload", Regex),
            ("import os$", Regex),
            ("fn $NAME($$$ARGS)", Structural),
            ("where do we retry failed uploads", NaturalLanguage),
            ("how is the config file parsed?", NaturalLanguage),
            ("retry uploads", Regex),
        ] {
            assert_eq!(classify_pattern(p), want, "{p}");
        }
    }
}
