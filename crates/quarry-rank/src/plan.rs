//! The deterministic query planner: reads a query once and says what kind of query it is —
//! which identifiers and file hints it names, whether it is natural language, and, for a
//! whole issue text, what its stack traces, code blocks and module paths point at (`issue`).
//! Fusion weights, boosts and file evidence follow from the plan, never from a model.

use crate::issue::{self, IssueReading};
use crate::role::{self, FileRole};
use quarry_core::tokens;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
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
    /// File roles the query asks for by name (`tests`, `docs`, …): those files are not ranked
    /// below source code. Whole issue texts name none (their "test" is the failing case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<FileRole>,
    /// What a whole issue text (several lines, or more than `NATURAL_LANGUAGE_MAX_TERMS`
    /// terms) says about code; its cleaned text is what `terms` come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<IssueReading>,
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

impl QueryPlan {
    /// The BM25 terms, with an issue title's terms listed `title_repeat` more times (a term
    /// listed n times counts n times) and the phrases of its error messages `message_repeat`
    /// times (`message_phrases`).
    pub fn lexical_terms(&self, title_repeat: usize, message_repeat: usize) -> Vec<String> {
        let mut terms = self.terms.clone();
        if let Some(title) = self.issue.as_ref().and_then(|i| i.title.as_deref()) {
            let title_terms: Vec<String> = tokens::query_terms(title)
                .into_iter()
                .filter(|t| self.terms.contains(t))
                .collect();
            for _ in 0..title_repeat {
                terms.extend(title_terms.iter().cloned());
            }
        }
        if let Some(issue) = &self.issue {
            let phrases = message_phrases(&issue.messages);
            for _ in 0..message_repeat {
                terms.extend(phrases.iter().cloned());
            }
        }
        terms
    }
}

/// Words of a message fragment shorter than this are no phrase (`is not`, `got an`).
const MIN_PHRASE_WORDS: usize = 3;
const MAX_PHRASES: usize = 8;

/// The fixed parts of error messages as phrases for BM25 (tokens joined by spaces, which the
/// store quotes into an FTS5 phrase: the tokens in this order, adjacent). A message printed at
/// run time is a template filled with values — `'header_rows'`, `3`, `<Foo at 0x7f…>` — so it
/// is cut at quotes, numbers and punctuation, and each run of at least three words is a
/// phrase that the code raising it contains word for word.
pub fn message_phrases(messages: &[String]) -> Vec<String> {
    let mut phrases: Vec<String> = Vec::new();
    for message in messages {
        let mut run: Vec<&str> = Vec::new();
        let flush = |run: &mut Vec<&str>, phrases: &mut Vec<String>| {
            if run.len() >= MIN_PHRASE_WORDS {
                let mut tokens_of = Vec::new();
                tokens::for_each_token(&run.join(" "), |t| tokens_of.push(t.to_string()));
                let phrase = tokens_of.join(" ");
                if !phrases.contains(&phrase) {
                    phrases.push(phrase);
                }
            }
            run.clear();
        };
        for word in message.split(' ') {
            // Letters only, with at most a trailing `,`/`.`/`:` that ends the run after it.
            let core = word.trim_end_matches([',', '.', ':', ';', '!', '?']);
            let plain = !core.is_empty()
                && core
                    .chars()
                    .all(|c| c.is_alphabetic() || c == '_' || c == '-');
            if plain {
                run.push(core);
                if core.len() != word.len() {
                    flush(&mut run, &mut phrases);
                }
            } else {
                flush(&mut run, &mut phrases);
            }
        }
        flush(&mut run, &mut phrases);
    }
    phrases.truncate(MAX_PHRASES);
    phrases
}

/// An issue text rather than a query: several non-empty lines, or many words.
pub fn is_issue_text(query: &str) -> bool {
    query.lines().filter(|l| !l.trim().is_empty()).count() >= 3
        || tokens::query_terms(query).len() > NATURAL_LANGUAGE_MAX_TERMS
}

/// The BM25 terms of an issue's cleaned text: one-character words (`a`, `x` of a pasted
/// session) and bare numbers (line numbers, versions, printed values) match everywhere and
/// mean nothing here.
fn issue_terms(text: &str) -> Vec<String> {
    tokens::query_terms(text)
        .into_iter()
        .filter(|t| t.chars().count() > 1 && !t.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

pub fn plan(query: &str) -> QueryPlan {
    let reading = is_issue_text(query).then(|| issue::read(query));
    let text = reading.as_ref().map_or(query, |r| r.text.as_str());
    let mut p = plan_words(text);
    if let Some(r) = &reading {
        p.terms = issue_terms(&r.text);
        if p.terms.is_empty() {
            p.terms = tokens::query_terms(query);
        }
        for path in &r.linked_paths {
            if !p.file_hints.contains(path) {
                p.file_hints.push(path.clone());
            }
        }
        // A frame's path is evidence as a frame, not again as a path the text names.
        p.file_hints
            .retain(|h| !r.frames.iter().any(|f| h.contains(f.path.as_str())));
        // A function a stack frame names is an identifier the issue names.
        for f in r.frames.iter().filter_map(|f| f.function.as_ref()) {
            if !p.identifiers.contains(f) {
                p.identifiers.push(f.clone());
            }
        }
        p.natural_language = false;
        p.roles.clear();
    }
    p.issue = reading;
    p
}

fn plan_words(query: &str) -> QueryPlan {
    let mut identifiers: Vec<String> = Vec::new();
    let mut file_hints: Vec<String> = Vec::new();
    let push = |list: &mut Vec<String>, v: String| {
        if !list.contains(&v) {
            list.push(v);
        }
    };
    // A `backticked` span is code: the name it starts with is an identifier, whatever its
    // shape (`refine()`, `Session.send(prepared)`, `KeyError`).
    for (i, span) in query.split('`').enumerate() {
        let span = span.trim();
        if i % 2 == 0 || span.is_empty() || file_hint(span).is_some() {
            continue;
        }
        let name: String = span
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
            .collect();
        let name = name.trim_end_matches(['.', ':']);
        let rest = span[name.len()..].trim_start();
        let ends_name = rest.is_empty() || rest.starts_with(['(', '[', '<', '=', ',']);
        if name.chars().count() >= 2
            && name.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && ends_name
        {
            push(&mut identifiers, name.to_string());
        }
    }
    for word in query.split_whitespace() {
        if let Some(hint) = file_hint(word) {
            push(&mut file_hints, hint);
        }
    }
    // Identifiers: words split at code punctuation too (`app.register(bp)` names
    // `app.register` and `bp`).
    let pieces =
        query.split(|c: char| c.is_whitespace() || "()[]{}<>,;=\"'!*+|&^%$#@?`~".contains(c));
    for word in pieces {
        if file_hint(word).is_some() {
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
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    QueryPlan {
        identifiers,
        file_hints,
        terms,
        natural_language,
        roles: role::roles_named(&words),
        issue: None,
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
        let code = plan("`refine()` ignores `Q.positive(x)` and `x` in `a b c`");
        assert_eq!(code.identifiers, ["refine", "Q.positive"]);
        let code = plan("calling app.register_blueprint(parent_bp) fails");
        assert_eq!(code.identifiers, ["app.register_blueprint", "parent_bp"]);
        assert_eq!(p.file_hints, ["src/upload/queue.rs", "config.toml"]);
        assert!(!p.natural_language);

        let p = plan("getUserName returns None for parse_config");
        assert_eq!(p.identifiers, ["getUserName", "parse_config"]);

        let p = plan("See https://example.org/a/b. It is fine, e.g. this.");
        assert!(p.file_hints.is_empty(), "{p:?}");
        let long = "word ".repeat(5) + &(0..30).map(|i| format!("term{i} ")).collect::<String>();
        assert!(!plan(&long).natural_language);
        assert!(plan(&long).issue.is_some());
        assert_eq!(
            plan("where are the tests for retries").roles,
            [FileRole::Test]
        );
    }

    #[test]
    fn issue_texts_are_read_and_cleaned() {
        let p = plan("apart gives a wrong result\n```\nIn [3]: bug.apart(t)\nOut[3]: -a*t\n```\nSee sympy/polys/partfrac.py, the test in test_partfrac fails.\n");
        let issue = p.issue.as_ref().expect("an issue text");
        assert!(issue.code_names.contains(&"apart".to_string()));
        assert!(p.terms.contains(&"apart".to_string()));
        assert!(
            !p.terms.iter().any(|t| t.len() == 1 || t == "3"),
            "{:?}",
            p.terms
        );
        assert_eq!(p.file_hints, ["sympy/polys/partfrac.py"]);
        assert!(
            p.roles.is_empty(),
            "an issue's test words do not ask for tests"
        );
        let weighted = p.lexical_terms(2, 0);
        assert_eq!(
            weighted.iter().filter(|t| *t == "apart").count(),
            3,
            "{weighted:?}"
        );
        assert_eq!(weighted.iter().filter(|t| *t == "partfrac").count(), 1);
        assert!(!p.natural_language);
    }

    #[test]
    fn error_messages_give_their_fixed_parts_as_phrases() {
        let phrases = message_phrases(&[
            "RST.__init__() got an unexpected keyword argument 'header_rows'".to_string(),
            "a row needs at least two fields, found 1".to_string(),
        ]);
        assert_eq!(
            phrases,
            [
                "got an unexpected keyword argument",
                "a row needs at least two fields"
            ]
        );
        let p = plan("Reading fails\n\n```\nTraceback (most recent call last):\nValueError: a row needs at least two fields\n```\n");
        let terms = p.lexical_terms(0, 2);
        assert_eq!(
            terms
                .iter()
                .filter(|t| *t == "a row needs at least two fields")
                .count(),
            2,
            "{terms:?}"
        );
    }
}
