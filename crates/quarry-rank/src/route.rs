//! The router: what a query is, by its shape alone, and so which engine answers it. People and
//! agents type names and patterns far more often than prose; each kind has an engine that
//! answers it exactly (a symbol lookup, grep, ast-grep) or by rank (hybrid search, the issue
//! planner). No model is involved: the rules below are read off the query's characters, so
//! they hold for any repository.

use serde::{Deserialize, Serialize};

/// What a query is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryClass {
    /// One name: `UploadQueue`, `parse_config`, `os.path.join`, `std::fs::read`.
    Identifier,
    /// A file or folder: `src/flask/app.py`, `sympy/core/`, `conftest.py`.
    Path,
    /// A place in a file as tools print it: `ctx.py:395`, `src/app.py:12:5`.
    Location,
    /// Exact text to find as written: a quoted string, an error message, a code fragment
    /// (`evaluate=False`, `x.unwrap()`, `"connection refused"`).
    Literal,
    /// A regular expression: `def test_\w+`, `TODO|FIXME`, `^import os$`.
    Regex,
    /// Code with metavariables: `def $F($$$ARGS):`, `$X.unwrap()`.
    Structural,
    /// A question or description in words: `where do we retry failed uploads`.
    Question,
    /// A whole bug report or issue: several lines or sentences, often with code and traces.
    IssueText,
}

/// Which engine answers a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// The definitions of the name first, then ranked search.
    Symbol,
    /// Files whose path matches.
    Path,
    /// The definition enclosing a line of a file.
    Location,
    /// grep, literal (`-F`).
    GrepLiteral,
    /// grep, regular expression.
    GrepRegex,
    /// ast-grep structural search.
    Structural,
    /// Ranked search (lexical + semantic, fused).
    Ranked,
}

impl QueryClass {
    pub fn route(self) -> Route {
        match self {
            QueryClass::Identifier => Route::Symbol,
            QueryClass::Path => Route::Path,
            QueryClass::Location => Route::Location,
            QueryClass::Literal => Route::GrepLiteral,
            QueryClass::Regex => Route::GrepRegex,
            QueryClass::Structural => Route::Structural,
            QueryClass::Question | QueryClass::IssueText => Route::Ranked,
        }
    }
}

/// File name endings that make a word a path.
const FILE_ENDINGS: &[&str] = &[
    ".py", ".rs", ".go", ".js", ".ts", ".tsx", ".jsx", ".java", ".c", ".h", ".cc", ".cpp", ".hpp",
    ".cs", ".rb", ".php", ".md", ".rst", ".txt", ".toml", ".yaml", ".yml", ".json", ".cfg", ".ini",
    ".sh", ".html", ".css", ".lock", ".pyi", ".ipynb",
];

/// Classifies a query.
pub fn classify(query: &str) -> QueryClass {
    let q = query.trim();
    let lines = q.lines().filter(|l| !l.trim().is_empty()).count();
    let words: Vec<&str> = q.split_whitespace().collect();
    if lines >= 3 || (words.len() >= 40) || (lines >= 2 && words.len() >= 12) {
        return QueryClass::IssueText;
    }
    if is_structural(q) {
        return QueryClass::Structural;
    }
    if is_quoted(q) || is_error_message(&words) {
        return QueryClass::Literal;
    }
    if is_spaced_path(&words) {
        return QueryClass::Path;
    }
    if words.len() == 1 {
        if location(q).is_some() {
            return QueryClass::Location;
        }
        if is_path(q) {
            return QueryClass::Path;
        }
        if is_identifier(q) {
            return QueryClass::Identifier;
        }
    }
    if looks_like_regex(q) {
        return QueryClass::Regex;
    }
    if is_code_fragment(&words) {
        return QueryClass::Literal;
    }
    if is_prose(&words) {
        return if words.len() >= 25 || q.matches(". ").count() >= 2 {
            QueryClass::IssueText
        } else {
            QueryClass::Question
        };
    }
    QueryClass::Literal
}

/// `path:line` or `path:line:column` (a file with an extension, a line number): the file and
/// the line.
pub fn location(q: &str) -> Option<(&str, u32)> {
    let mut parts = q.trim().splitn(3, ':');
    let path = parts.next()?;
    let line: u32 = parts.next()?.parse().ok()?;
    if let Some(column) = parts.next() {
        column.parse::<u32>().ok()?;
    }
    let file = path.rsplit(['/', '\\']).next()?;
    let has_extension = file.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    (has_extension && line > 0 && is_path(path)).then_some((path, line))
}

/// A short statement written as code, not words: a keyword that starts statements in the
/// languages quarry reads, then a name with a code shape (`raise ValueError`, `import
/// numpy.linalg`, `return self._cache`, `impl Display for`): grep -F finds it as written.
/// Prose that happens to start with such a word (`import data from csv`) goes on as a question.
fn is_code_fragment(words: &[&str]) -> bool {
    const KEYWORDS: &[&str] = &[
        "raise",
        "throw",
        "import",
        "from",
        "return",
        "yield",
        "await",
        "def",
        "class",
        "fn",
        "func",
        "impl",
        "struct",
        "enum",
        "trait",
        "let",
        "const",
        "var",
        "pub",
        "use",
        "new",
        "assert",
        "except",
        "catch",
        "#include",
        "#define",
        "package",
        "interface",
        "extends",
        "if",
        "elif",
        "while",
        "for",
        "with",
        "match",
    ];
    const OPERATORS: &[&str] = &[
        "==", "!=", "=", "+=", "-=", "->", "=>", "&&", "||", ":=", "::",
    ];
    if words.len() < 2 || words.len() > 8 {
        return false;
    }
    // `x == y`, `a -> b`: an operator standing alone is code, whatever the words around it.
    if words.iter().any(|w| OPERATORS.contains(w)) {
        return true;
    }
    if words.len() > 6 || !KEYWORDS.contains(&words[0]) {
        return false;
    }
    let coded = |w: &str| {
        let inner_capital = w.chars().skip(1).any(char::is_uppercase)
            && w.chars().next().is_some_and(char::is_alphabetic);
        w.contains([
            '_', '.', '(', ')', ':', '=', '<', '>', '"', '\'', '[', '{', ';', '&', '*',
        ]) || inner_capital
    };
    coded(words[1])
}

/// Metavariables: `$NAME`, `$_`, `$$$`, `$$$ARGS` (a `$` at the end is a regex anchor).
fn is_structural(q: &str) -> bool {
    let bytes = q.as_bytes();
    bytes
        .windows(2)
        .any(|w| w[0] == b'$' && (w[1].is_ascii_uppercase() || w[1] == b'_' || w[1] == b'$'))
}

fn is_quoted(q: &str) -> bool {
    q.len() >= 2
        && ((q.starts_with('"') && q.ends_with('"'))
            || (q.starts_with('\'') && q.ends_with('\''))
            || (q.starts_with('`') && q.ends_with('`')))
}

/// `ValueError: message`, `AssertionError: …`: an error as printed, to find where it is raised.
fn is_error_message(words: &[&str]) -> bool {
    words.len() >= 2
        && words[0].ends_with(':')
        && ["Error:", "Exception:", "Warning:", "Exit:", "Interrupt:"]
            .iter()
            .any(|end| words[0].ends_with(end))
}

/// A path with spaces in its names (`docs/release notes.md`, `assets/My Icons/app.png`): a
/// first word that is a folder path, a last word that is a file name with its extension, and
/// nothing between that a path would not hold. Prose that mentions a path
/// (`why does src/app.py crash`) does not end with a file name.
fn is_spaced_path(words: &[&str]) -> bool {
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    let has_extension = last.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_lowercase())
    });
    (2..=6).contains(&words.len())
        && (first.contains('/') || first.contains('\\'))
        && !first.starts_with("//")
        && has_extension
        && words.iter().all(|w| {
            w.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '\\' | '(' | ')')
            })
        })
}

fn is_path(q: &str) -> bool {
    let lower = q.to_ascii_lowercase();
    let allowed = q
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '\\'));
    allowed
        && (q.contains('/') && q.chars().any(char::is_alphabetic)
            || FILE_ENDINGS
                .iter()
                .any(|e| lower.ends_with(e) && lower.len() > e.len()))
}

/// A name, possibly qualified (`a.b.c`, `a::b`, `a#b`, PHP's `App\Models\User`: each
/// segment after a backslash capitalised, so `foo\sbar` stays a regex).
fn is_identifier(q: &str) -> bool {
    let php = q.contains('\\')
        && q.split('\\')
            .skip(1)
            .all(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
    q.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && q.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '#') || (php && c == '\\')
        })
        && !q.ends_with(['.', ':', '\\'])
}

/// Regex syntax that literal text rarely has: escapes of a class (`\w`, `\d`, `\s`, `\b`,
/// `\(`), wildcards (`.*`, `.+`), classes (`[a-z]`), repetition braces, alternation, anchors.
fn looks_like_regex(q: &str) -> bool {
    const ESCAPES: &[&str] = &[
        "\\w", "\\d", "\\s", "\\b", "\\W", "\\D", "\\S", "\\B", "\\(", "\\)", "\\.", "\\[", "\\{",
        "\\|", "\\+", "\\*", "\\?", "\\$", "\\^",
    ];
    if ESCAPES.iter().any(|e| q.contains(e)) {
        return true;
    }
    if [".*", ".+", ".?", ")*", ")+", ")?", "]+", "]*", "]?"]
        .iter()
        .any(|w| q.contains(w))
    {
        return true;
    }
    if q.starts_with('^') || (q.ends_with('$') && !q.ends_with("\\$")) {
        return true;
    }
    let has_class = q.find('[').is_some_and(|open| {
        q[open..]
            .find(']')
            .is_some_and(|close| close > 1 && q[open + 1..open + close].contains('-'))
    });
    if has_class {
        return true;
    }
    if q.contains('{') && q.contains('}') {
        let inner = q
            .split('{')
            .nth(1)
            .and_then(|s| s.split('}').next())
            .unwrap_or("");
        if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit() || c == ',') {
            return true;
        }
    }
    // `TODO|FIXME`, `(get|set)_item`: alternation of words without spaces around it.
    q.contains('|') && !q.contains(" | ") && !q.contains("||") && !q.contains(' ')
}

/// Words a person writes: mostly letters, at least two words, few code characters.
fn is_prose(words: &[&str]) -> bool {
    if words.len() < 2 {
        return false;
    }
    let plain = words
        .iter()
        .filter(|w| {
            let w = w.trim_matches(|c: char| ",.?!:;\"'()".contains(c));
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphabetic() || matches!(c, '\'' | '-' | '_'))
        })
        .count();
    // Questions with one or two code names in them are still questions.
    plain * 3 >= words.len() * 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use QueryClass::*;

    #[test]
    fn queries_are_classified_by_shape() {
        for (q, want) in [
            ("UploadQueue", Identifier),
            ("parse_config_file", Identifier),
            ("os.path.join", Identifier),
            ("std::fs::read", Identifier),
            ("GuzzleHttp\\Handler\\MockHandler", Identifier),
            ("foo\\sbar", Regex),
            ("src/flask/app.py", Path),
            ("conftest.py", Path),
            ("sympy/core/", Path),
            ("docs/release notes.md", Path),
            ("assets/My Icons/app (old).png", Path),
            ("why does src/app.py crash on start", Question),
            ("\"connection refused\"", Literal),
            ("evaluate=False", Literal),
            ("x.unwrap()", Literal),
            ("ValueError: invalid literal for int() with base 10", Literal),
            ("def test_\\w+", Regex),
            ("TODO|FIXME", Regex),
            ("^import os$", Regex),
            ("fn \\w+\\(", Regex),
            ("def $F($$$ARGS):", Structural),
            ("$X.unwrap()", Structural),
            ("console.log($$$)", Structural),
            ("ctx.py:395", Location),
            ("src/flask/app.py:12:5", Location),
            ("raise ValueError", Literal),
            ("if __name__ == \"__main__\":", Literal),
            ("import numpy.linalg", Literal),
            ("import data from a csv file", Question),
            ("return early when the config is missing", Question),
            ("where do we retry failed uploads", Question),
            ("how is the config file parsed?", Question),
            ("how does url_for build external urls", Question),
            (
                "Pretty printing of Matrix fails\n\nWhen I print a matrix with symbols I get\n```\nTraceback...\n```",
                IssueText,
            ),
        ] {
            assert_eq!(classify(q), want, "{q}");
        }
        assert_eq!(classify("def $F($$$ARGS):").route(), Route::Structural);
        assert_eq!(classify("UploadQueue").route(), Route::Symbol);
    }
}
