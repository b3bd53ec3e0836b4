//! Which definition a name means. The query agents send most is a bare name (`Flask`,
//! `solve`, `BufStream`) or a qualified one (`JSONProvider.dumps`, `sympy.solve`,
//! `tokio::io::BufStream`, `src/auth.py::Session.login`); a large repository defines the same
//! name many times (sympy has over fifty `solve`s). The definitions are ordered by what the code
//! itself says about them, never by the repository at hand:
//!
//! - **qualified match**: every qualifier the query gives (`JSONProvider` in
//!   `JSONProvider.dumps`, `json` in `json.dumps`, a path before `::`) matches the definition's
//!   enclosing names or its path; a qualified query that a definition does not match at all
//!   sinks it;
//! - **exported**: a package entry file re-exports it (`from .solvers import solve` in an
//!   `__init__.py` above it, `pub use` in `lib.rs`/`mod.rs`, `export { X } from` in an
//!   `index.ts`): the package's own word on which `solve` it means;
//! - **public** by the language's convention (no leading `_` in Python, `pub` in Rust,
//!   `export` in JS/TS, a capital in Go, `public` in Java/C#);
//! - **top level** for a bare name: a module's `solve` over `SATSolver.solve`;
//! - **the thing itself**: a type or function over an `impl` block of it;
//! - **source** over tests, docs, examples, benchmarks and vendored code (role.rs);
//! - **named file**: `lambdify.py` defining `lambdify`;
//! - document headings (a README's `# Flask`) never outrank code unless the query asks for
//!   documents.
//!
//! How many places reference a definition is not a signal: calls are stored by their bare
//! name (calls.rs), so they cannot tell two same-named definitions apart. docs/ARCHITECTURE.md
//! has the ablation behind each weight.

use crate::role::{classify as role_of, FileRole};
use quarry_core::Language;
use serde::{Deserialize, Serialize};

/// A name as a query gives it: the bare name, and what qualifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameQuery {
    /// The last segment: what the symbols table is keyed by.
    pub name: String,
    /// Enclosing names or module segments, outermost first (`sympy.solvers.solve` →
    /// `["sympy", "solvers"]`).
    pub qualifiers: Vec<String>,
    /// A file path before `::` (`src/auth.py::Session.login` → `src/auth.py`).
    pub path: Option<String>,
}

impl NameQuery {
    /// Reads a name query; `None` when the text is not a name.
    pub fn parse(query: &str) -> Option<NameQuery> {
        let q = query.trim().trim_matches('`').trim_end_matches("()");
        if q.is_empty() || q.chars().any(char::is_whitespace) {
            return None;
        }
        // `path/to/file.py::Class.method`: a path, then a name within it.
        let (path, rest) = match q.split_once("::") {
            Some((p, r))
                if p.contains('/') || p.contains('.') && !p.contains("::") && is_file(p) =>
            {
                (Some(p.to_string()), r)
            }
            _ => (None, q),
        };
        let segments: Vec<&str> = rest
            .split(['.', ':', '#'])
            .filter(|s| !s.is_empty())
            .collect();
        let (name, qualifiers) = segments.split_last()?;
        let ident = |s: &str| {
            s.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
                && s.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        };
        if !ident(name) || !qualifiers.iter().all(|s| ident(s)) {
            return None;
        }
        Some(NameQuery {
            name: name.to_string(),
            qualifiers: qualifiers.iter().map(|s| s.to_string()).collect(),
            path,
        })
    }
}

fn is_file(p: &str) -> bool {
    p.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && ext.len() <= 5 && ext.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

/// What the engine knows about one definition of the name.
#[derive(Debug, Clone)]
pub struct DefinitionFacts<'a> {
    pub path: &'a str,
    pub kind: &'a str,
    /// `Parent.name`, or the name at top level.
    pub qualified_name: &'a str,
    pub signature: Option<&'a str>,
    pub language: Language,
    pub start_line: u32,
    /// The entry file that re-exports it, when one does (`exported_by`).
    pub exported_by: Option<&'a str>,
}

/// The weights of the signals above (settings `search.name_*`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct NameWeights {
    pub qualified: f64,
    pub exported: f64,
    pub public: f64,
    pub top_level: f64,
    pub definition_kind: f64,
    pub source: f64,
    pub named_file: f64,
}

impl Default for NameWeights {
    fn default() -> Self {
        NameWeights {
            qualified: 8.0,
            exported: 4.0,
            public: 1.0,
            top_level: 2.0,
            definition_kind: 1.0,
            source: 3.0,
            named_file: 1.0,
        }
    }
}

/// Points that put a document heading below every code definition.
const HEADING_PENALTY: f64 = 100.0;

/// One definition's place in the order.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedDefinition {
    /// Index into the facts given.
    pub index: usize,
    /// The points, squashed into (0, 1): comparable within one answer only.
    pub score: f64,
    /// Why it ranks where it does, for `--explain` and JSON (`definition; exported by …`).
    pub reason: String,
}

/// Orders the definitions of `query.name`, best first; `wants_docs`: the query asks for
/// documents (`--type docs`), so headings compete with code.
pub fn rank_definitions(
    query: &NameQuery,
    defs: &[DefinitionFacts],
    weights: &NameWeights,
    wants_docs: bool,
) -> Vec<RankedDefinition> {
    let mut scored: Vec<(f64, usize, String)> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (mut points, mut reasons) = points(query, d, weights, wants_docs);
            // Python's `@overload` stubs, TypeScript's overload signatures: the same name
            // bound again later in the same scope of the same file is the one in effect.
            let rebound = defs.iter().any(|o| {
                o.path == d.path
                    && o.qualified_name == d.qualified_name
                    && o.start_line > d.start_line
            });
            if rebound {
                points -= weights.definition_kind;
                reasons.push("bound again later in its file".into());
            }
            (points, i, reasons.join("; "))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| defs[a.1].path.len().cmp(&defs[b.1].path.len()))
            .then(a.1.cmp(&b.1))
    });
    // Scores fall with the order; a heading's keeps its own points, scaled under 0.1, so it
    // reads as "far below the code" rather than as nothing.
    let mut last = 1.0f64;
    scored
        .into_iter()
        .map(|(points, index, reason)| {
            let squash = |p: f64| 1.0 / (1.0 + (-p / 4.0).exp());
            let score = if points < -HEADING_PENALTY / 2.0 {
                0.1 * squash(points + HEADING_PENALTY)
            } else {
                squash(points)
            };
            last = last.min(score);
            RankedDefinition {
                index,
                score: last,
                reason,
            }
        })
        .collect()
}

fn points(
    query: &NameQuery,
    d: &DefinitionFacts,
    w: &NameWeights,
    wants_docs: bool,
) -> (f64, Vec<String>) {
    let mut points = 0.0;
    let mut reasons = Vec::new();
    let heading = is_heading(d.kind);
    reasons.push(format!("{} {}", d.kind, d.qualified_name));
    if heading && !wants_docs {
        points -= HEADING_PENALTY;
        reasons.push("a document heading".into());
    }
    let parents: Vec<&str> = d
        .qualified_name
        .rsplit_once('.')
        .map(|(p, _)| p.split('.').collect())
        .unwrap_or_default();
    let path_parts: Vec<&str> = d
        .path
        .split('/')
        .map(|p| p.split_once('.').map_or(p, |(stem, _)| stem))
        .collect();
    // Qualifiers: each must name an enclosing definition or a path segment.
    if !query.qualifiers.is_empty() || query.path.is_some() {
        let mut matched = query
            .qualifiers
            .iter()
            .filter(|q| {
                parents.iter().any(|p| p.eq_ignore_ascii_case(q))
                    || path_parts.iter().any(|p| p.eq_ignore_ascii_case(q))
                    || (*q == "crate" || *q == "self" || *q == "super")
            })
            .count() as f64;
        let mut wanted = query.qualifiers.len() as f64;
        if let Some(path) = &query.path {
            wanted += 1.0;
            if d.path == path || d.path.ends_with(&format!("/{path}")) {
                matched += 1.0;
            }
        }
        // The innermost qualifier naming the direct parent is the strongest reading
        // (`JSONProvider.dumps` is a member of JSONProvider, not any `dumps` under json/).
        let direct = query
            .qualifiers
            .last()
            .is_some_and(|q| parents.last().is_some_and(|p| p == q));
        let share = matched / wanted;
        if share == 0.0 {
            points -= w.qualified;
            reasons.push("matches no qualifier".into());
        } else {
            points += w.qualified * share + if direct { w.qualified / 2.0 } else { 0.0 };
            reasons.push(if direct {
                "qualified name matches".into()
            } else {
                format!("{matched} of {wanted} qualifiers match")
            });
        }
    } else if parents.is_empty() && !heading {
        points += w.top_level;
        reasons.push("top level".into());
    }
    if let Some(entry) = d.exported_by {
        points += w.exported;
        reasons.push(format!("exported by {entry}"));
    }
    match is_public(d) {
        Some(true) => {
            points += w.public;
            reasons.push("public".into());
        }
        Some(false) => {
            points -= w.public;
            reasons.push("private".into());
        }
        None => {}
    }
    if !heading {
        if d.kind == "impl" {
            points -= w.definition_kind;
            reasons.push("an impl block, not the type".into());
        } else if d.signature.is_some_and(|s| s.trim_end().ends_with("...")) {
            // `@overload def f(…) -> T: ...`, a protocol's or a stub file's signature: the
            // implementation beside it is the definition.
            points -= w.definition_kind;
            reasons.push("a signature without a body".into());
        } else if is_definition_kind(d.kind) {
            points += w.definition_kind;
        }
    }
    let role = role_of(d.path);
    if role == FileRole::Source {
        points += w.source;
    } else {
        reasons.push(format!("{} file", role.name()));
    }
    let stem = path_parts.last().copied().unwrap_or("");
    if !heading && normalised(stem) == normalised(d.qualified_name.rsplit('.').next().unwrap_or(""))
    {
        points += w.named_file;
        reasons.push("its file is named after it".into());
    }
    // Shallower paths first among equals (a package's own module over a nested copy).
    points -= 0.01 * d.path.matches('/').count() as f64;
    (points, reasons)
}

fn normalised(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A heading of a document (Markdown, reStructuredText, AsciiDoc, text, PDF, notebook text).
pub fn is_heading(kind: &str) -> bool {
    matches!(kind, "section" | "heading" | "page")
}

fn is_definition_kind(kind: &str) -> bool {
    matches!(
        kind,
        "class"
            | "struct"
            | "enum"
            | "trait"
            | "interface"
            | "type"
            | "function"
            | "method"
            | "constructor"
            | "macro"
            | "module"
            | "namespace"
    )
}

/// Whether the language's own convention makes the definition public (`None`: it has none
/// that the signature shows).
fn is_public(d: &DefinitionFacts) -> Option<bool> {
    let name = d.qualified_name.rsplit('.').next().unwrap_or("");
    let signature = d.signature.unwrap_or("").trim_start();
    let starts = |w: &str| {
        signature
            .split(|c: char| c.is_whitespace() || c == '(')
            .any(|t| t == w)
    };
    match d.language {
        Language::Python => {
            Some(!name.starts_with('_') || (name.starts_with("__") && name.ends_with("__")))
        }
        // `pub(crate)`, `pub(super)`, `pub(in …)` are visible inside the crate only.
        Language::Rust => Some(
            (signature.starts_with("pub ") || signature.starts_with("pub\t")) || d.kind == "impl",
        ),
        Language::Go => name.chars().next().map(char::is_uppercase),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            if signature.starts_with("export") {
                Some(true)
            } else {
                None
            }
        }
        Language::Java | Language::CSharp => Some(starts("public")),
        _ => None,
    }
}

/// The files where a package says what it exports, above a definition in `path`, nearest
/// first: `__init__.py` of each enclosing package, `mod.rs`/`lib.rs` above a Rust file,
/// `index.{js,ts,…}` of each enclosing folder. The definition's own file is left out.
pub fn entry_files(path: &str, language: Language) -> Vec<String> {
    let names: &[&str] = match language {
        Language::Python => &["__init__.py"],
        Language::Rust => &["mod.rs", "lib.rs"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            &["index.ts", "index.js", "index.tsx", "index.mjs"]
        }
        _ => return Vec::new(),
    };
    let parent = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
    let mut dirs = Vec::new();
    let mut dir = parent(path);
    while let Some(d) = dir {
        dir = parent(&d);
        dirs.push(d);
    }
    dirs.push(String::new());
    let mut out = Vec::new();
    for d in dirs {
        for name in names {
            let entry = if d.is_empty() {
                name.to_string()
            } else {
                format!("{d}/{name}")
            };
            if entry != path {
                out.push(entry);
            }
        }
    }
    out
}

/// What an entry file says it exports, read once and asked for many definitions.
#[derive(Debug, Clone)]
pub struct EntryFile {
    path: String,
    language: Language,
    /// Python: each `from MODULE import names` statement.
    imports: Vec<(String, Vec<String>)>,
    /// Rust: `pub use …;` statements; JS/TS: `export …` statements.
    statements: Vec<String>,
}

impl EntryFile {
    pub fn parse(path: &str, text: &str, language: Language) -> EntryFile {
        let (imports, statements) = match language {
            Language::Python => (python_imports(text), Vec::new()),
            Language::Rust => (Vec::new(), owned(statements(text, "pub use "))),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                (Vec::new(), owned(statements(text, "export ")))
            }
            _ => (Vec::new(), Vec::new()),
        };
        EntryFile {
            path: path.to_string(),
            language,
            imports,
            statements,
        }
    }

    /// Whether this entry file re-exports `name` from where the definition in `def_path`
    /// lives. Python: a `from MODULE import …name…` whose module resolves to the definition's
    /// file or a package above it. Rust: a `pub use` naming it from its module. JS/TS: an
    /// `export { … }` naming it, or `export * from` the definition's file.
    pub fn reexports(&self, name: &str, def_path: &str) -> bool {
        match self.language {
            Language::Python => self.imports.iter().any(|(module, names)| {
                names.iter().any(|n| n == name) && python_module_holds(&self.path, module, def_path)
            }),
            // `pub use crate::io::util::{BufStream, …}`: the name, from the definition's
            // module (its file's stem, or its folder for `mod.rs`), or a glob of that module.
            Language::Rust => {
                let mut parts = def_path.rsplit('/');
                let stem = parts.next().unwrap_or("").trim_end_matches(".rs");
                let module = match stem {
                    "mod" | "lib" => parts.next().unwrap_or(stem),
                    _ => stem,
                };
                self.statements.iter().any(|s| {
                    has_word(s, module) && (has_word(s, name) || s.trim_end().ends_with("::*"))
                })
            }
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                self.statements.iter().any(|s| {
                    (s.contains('{') && has_word(s, name))
                        || (s.starts_with("export *") && {
                            let stem = def_path.rsplit('/').next().unwrap_or(def_path);
                            let stem = stem.split('.').next().unwrap_or(stem);
                            s.contains(&format!("/{stem}'")) || s.contains(&format!("/{stem}\""))
                        })
                })
            }
            _ => false,
        }
    }
}

fn owned(statements: Vec<&str>) -> Vec<String> {
    statements.into_iter().map(str::to_string).collect()
}

/// Whether `entry_text` (an entry file at `entry_path`) re-exports `name` from where the
/// definition in `def_path` lives (`EntryFile::reexports`, for one question).
pub fn reexports(
    entry_path: &str,
    entry_text: &str,
    language: Language,
    name: &str,
    def_path: &str,
) -> bool {
    EntryFile::parse(entry_path, entry_text, language).reexports(name, def_path)
}

/// Statements starting at a line that begins with `start`, through the `;` that ends them.
fn statements<'t>(text: &'t str, start: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(start) {
        let begin = from + at;
        let line_start = text[..begin].rfind('\n').map_or(0, |i| i + 1);
        let end = text[begin..].find(';').map_or(text.len(), |e| begin + e);
        if text[line_start..begin].trim().is_empty() {
            out.push(&text[begin..end]);
        }
        from = end.max(begin + start.len()).min(text.len());
    }
    out
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        boundary(before) && boundary(after)
    })
}

/// `from MODULE import a, b as c, (d, e)` statements: each module and the names it binds
/// under their own name (an `x as y` binds `y` to another definition's name: left out).
fn python_imports(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("from ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once(" import ") else {
            continue;
        };
        let mut names = names.to_string();
        if names.trim_start().starts_with('(') {
            while !names.contains(')') {
                match lines.next() {
                    Some(next) => {
                        names.push(' ');
                        names.push_str(next.split('#').next().unwrap_or(""));
                    }
                    None => break,
                }
            }
        } else {
            while names.trim_end().ends_with('\\') {
                names = names.trim_end().trim_end_matches('\\').to_string();
                match lines.next() {
                    Some(next) => names.push_str(next),
                    None => break,
                }
            }
        }
        let names = names.split('#').next().unwrap_or("");
        let bound: Vec<String> = names
            .trim_matches(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .split(',')
            .filter_map(|item| {
                let item = item.trim_matches(|c: char| c.is_whitespace() || c == '(' || c == ')');
                match item.split_once(" as ") {
                    Some((a, b)) if a.trim() == b.trim() => Some(a.trim().to_string()),
                    Some(_) => None,
                    None if !item.is_empty() => Some(item.to_string()),
                    None => None,
                }
            })
            .collect();
        out.push((module.trim().to_string(), bound));
    }
    out
}

/// The repo-relative paths (without `.py`) that `module`, imported in the entry file
/// `entry_path`, may be: relative imports resolve against the entry's package; an absolute
/// `pkg.sub` is tried under each folder above the entry (a `src/` layout, a sibling package
/// such as pytest's `_pytest`), nearest first.
pub fn python_module_paths(entry_path: &str, module: &str) -> Vec<String> {
    let parts: Vec<&str> = entry_path.split('/').collect();
    let entry_dir = &parts[..parts.len() - 1];
    let dots = module.chars().take_while(|&c| c == '.').count();
    let rest: Vec<&str> = module[dots..]
        .split('.')
        .filter(|s| !s.is_empty())
        .collect();
    if dots > 0 {
        if dots - 1 > entry_dir.len() {
            return Vec::new();
        }
        let mut t = entry_dir[..entry_dir.len() - (dots - 1)].to_vec();
        t.extend(&rest);
        return if t.is_empty() {
            Vec::new()
        } else {
            vec![t.join("/")]
        };
    }
    if rest.is_empty() {
        return Vec::new();
    }
    (0..=entry_dir.len())
        .rev()
        .map(|n| {
            let mut t = entry_dir[..n].to_vec();
            t.extend(&rest);
            t.join("/")
        })
        .collect()
}

/// Whether `module`, imported in the entry file `entry_path`, is `def_path`'s module or a
/// package above it.
fn python_module_holds(entry_path: &str, module: &str, def_path: &str) -> bool {
    python_module_paths(entry_path, module)
        .iter()
        .any(|target| {
            def_path == format!("{target}.py")
                || def_path == format!("{target}.pyi")
                || def_path.starts_with(&format!("{target}/"))
        })
}

/// The modules an entry file imports `name` from (`from MODULE import name`), as written.
pub fn python_import_sources(entry_text: &str, name: &str) -> Vec<String> {
    python_imports(entry_text)
        .into_iter()
        .filter(|(_, names)| names.iter().any(|n| n == name))
        .map(|(module, _)| module)
        .collect()
}

/// The line (1-based) of a module-level assignment of `name` in Python source: `name = …`,
/// `name: T = …` at column 0 — a definition the syntax tree's def/class rules do not see
/// (flask's `session`, `request`, signals; sympy's `Eq = Equality`).
pub fn python_assignment_line(text: &str, name: &str) -> Option<u32> {
    text.lines()
        .position(|line| assigns(line, name))
        .map(|i| i as u32 + 1)
}

/// Whether a column-0 line assigns `name`: `name = …`, `name: T = …`, a chain
/// `a = name = …` or a tuple `a, name = …`.
fn assigns(line: &str, name: &str) -> bool {
    if !line.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return false;
    }
    // `name: Annotation[with, brackets] = …`
    if let Some(rest) = line.strip_prefix(name) {
        let rest = rest.trim_start();
        if rest.starts_with(':') && !rest.starts_with(":=") && rest.contains('=') {
            return true;
        }
    }
    // Split at each `=` that is an assignment (not `==`, `<=`, `>=`, `!=`), before any
    // bracket or string: targets are the parts before the last one.
    let bytes = line.as_bytes();
    let mut cuts = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' | b'"' | b'\'' | b'#' => break,
            b'=' => {
                let prev = if i > 0 { bytes[i - 1] } else { b' ' };
                let next = bytes.get(i + 1).copied().unwrap_or(b' ');
                if next != b'=' && !matches!(prev, b'=' | b'<' | b'>' | b'!') {
                    cuts.push(i);
                }
            }
            _ => {}
        }
    }
    let mut start = 0;
    cuts.iter().any(|&cut| {
        let target = &line[start..cut];
        start = cut + 1;
        target.split(',').any(|t| {
            let t = t.split(':').next().unwrap_or("").trim();
            t == name
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(path: &'a str, kind: &'a str, qname: &'a str) -> DefinitionFacts<'a> {
        DefinitionFacts {
            path,
            kind,
            qualified_name: qname,
            signature: None,
            language: Language::detect(std::path::Path::new(path)),
            start_line: 1,
            exported_by: None,
        }
    }

    fn order(query: &str, defs: &[DefinitionFacts]) -> Vec<String> {
        let q = NameQuery::parse(query).unwrap();
        rank_definitions(&q, defs, &NameWeights::default(), false)
            .into_iter()
            .map(|r| format!("{}:{}", defs[r.index].path, defs[r.index].qualified_name))
            .collect()
    }

    #[test]
    fn names_are_parsed_with_their_qualifiers_and_paths() {
        let q = NameQuery::parse("JSONProvider.dumps").unwrap();
        assert_eq!(
            (q.name.as_str(), q.qualifiers.clone()),
            ("dumps", vec!["JSONProvider".to_string()])
        );
        let q = NameQuery::parse("tokio::io::BufStream").unwrap();
        assert_eq!(q.qualifiers, vec!["tokio", "io"]);
        assert_eq!(q.path, None);
        let q = NameQuery::parse("src/auth.py::Session.login").unwrap();
        assert_eq!(q.path.as_deref(), Some("src/auth.py"));
        assert_eq!(
            (q.name.as_str(), q.qualifiers.clone()),
            ("login", vec!["Session".to_string()])
        );
        assert_eq!(NameQuery::parse("url_for()").unwrap().name, "url_for");
        assert!(NameQuery::parse("two words").is_none());
        assert!(NameQuery::parse("a-b").is_none());
    }

    #[test]
    fn a_heading_never_outranks_code_and_a_type_outranks_its_impl() {
        let defs = [
            facts("README.md", "section", "Flask"),
            facts("src/flask/app.py", "class", "Flask"),
        ];
        assert_eq!(order("Flask", &defs)[0], "src/flask/app.py:Flask");
        let defs = [
            facts("src/io/util.rs", "impl", "BufStream"),
            facts("src/io/buf_stream.rs", "struct", "BufStream"),
        ];
        assert_eq!(
            order("BufStream", &defs)[0],
            "src/io/buf_stream.rs:BufStream"
        );
    }

    #[test]
    fn the_exported_top_level_definition_comes_first() {
        let mut defs = vec![
            facts(
                "sympy/logic/algorithms/minisat22_wrapper.py",
                "method",
                "SATSolver.solve",
            ),
            facts(
                "sympy/physics/continuum_mechanics/cable.py",
                "method",
                "Cable.solve",
            ),
            facts("sympy/solvers/solvers.py", "function", "solve"),
            facts("sympy/solvers/tests/test_solvers.py", "function", "solve"),
        ];
        assert_eq!(order("solve", &defs)[0], "sympy/solvers/solvers.py:solve");
        // A re-export outweighs being at top level.
        defs.push(facts("sympy/holonomic/other.py", "function", "solve"));
        defs[2].exported_by = None;
        defs[4].exported_by = Some("sympy/__init__.py");
        assert_eq!(order("solve", &defs)[0], "sympy/holonomic/other.py:solve");
    }

    #[test]
    fn a_qualified_query_prefers_its_qualifier() {
        let defs = [
            facts("src/flask/json/__init__.py", "function", "dumps"),
            facts("src/flask/json/provider.py", "method", "JSONProvider.dumps"),
            facts(
                "src/flask/json/provider.py",
                "method",
                "DefaultJSONProvider.dumps",
            ),
        ];
        assert_eq!(
            order("JSONProvider.dumps", &defs)[0],
            "src/flask/json/provider.py:JSONProvider.dumps"
        );
        assert_eq!(
            order("json.dumps", &defs)[0],
            "src/flask/json/__init__.py:dumps"
        );
        assert_eq!(order("dumps", &defs)[0], "src/flask/json/__init__.py:dumps");
    }

    #[test]
    fn python_reexports_resolve_to_the_defining_module() {
        let init = "from .core import Symbol\nfrom .solvers import (solve, solve_linear,\n    nsolve)\nfrom .x import y as solve\n";
        assert!(reexports(
            "sympy/__init__.py",
            init,
            Language::Python,
            "solve",
            "sympy/solvers/solvers.py"
        ));
        assert!(reexports(
            "sympy/__init__.py",
            init,
            Language::Python,
            "nsolve",
            "sympy/solvers/solvers.py"
        ));
        assert!(!reexports(
            "sympy/__init__.py",
            init,
            Language::Python,
            "solve",
            "sympy/logic/sat.py"
        ));
        let init = "from flask.app import Flask as Flask\nfrom .helpers import url_for\n";
        assert!(reexports(
            "src/flask/__init__.py",
            init,
            Language::Python,
            "Flask",
            "src/flask/app.py"
        ));
        assert!(reexports(
            "src/flask/__init__.py",
            init,
            Language::Python,
            "url_for",
            "src/flask/helpers.py"
        ));
        assert!(!reexports(
            "src/flask/__init__.py",
            init,
            Language::Python,
            "url_for",
            "src/flask/app.py"
        ));
        let lib = "mod io;\npub use crate::io::buf_stream::{BufStream, Other};\n";
        assert!(!reexports(
            "src/lib.rs",
            lib,
            Language::Rust,
            "BufStream",
            "src/net/util.rs"
        ));
        assert!(reexports(
            "src/lib.rs",
            lib,
            Language::Rust,
            "BufStream",
            "src/io/buf_stream.rs"
        ));
        assert!(!reexports(
            "src/lib.rs",
            lib,
            Language::Rust,
            "Buf",
            "src/io/buf.rs"
        ));
        let index = "export { createApp } from './app';\nexport * from './router';\n";
        assert!(reexports(
            "src/index.ts",
            index,
            Language::TypeScript,
            "createApp",
            "src/app.ts"
        ));
        assert!(reexports(
            "src/index.ts",
            index,
            Language::TypeScript,
            "route",
            "src/router.ts"
        ));
    }

    #[test]
    fn entry_files_are_the_packages_above_nearest_first() {
        assert_eq!(
            entry_files("sympy/solvers/solvers.py", Language::Python),
            vec![
                "sympy/solvers/__init__.py",
                "sympy/__init__.py",
                "__init__.py"
            ]
        );
        assert!(entry_files("a.go", Language::Go).is_empty());
    }
}
