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
use std::collections::HashMap;

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
        // PHP's `App\Models\User` qualifies as `App.Models.User` does.
        let segments: Vec<&str> = rest
            .split(['.', ':', '#', '\\'])
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
    // Python's `@overload` stubs, TypeScript's overload signatures: the same name bound again
    // later in the same scope of the same file is the one in effect.
    // An `impl` block binds nothing: a struct is not "bound again" by its impl below it.
    let mut last_binding: HashMap<(&str, &str), u32> = HashMap::new();
    for d in defs.iter().filter(|d| d.kind != "impl") {
        let line = last_binding.entry((d.path, d.qualified_name)).or_default();
        *line = (*line).max(d.start_line);
    }
    let mut scored: Vec<(f64, usize, String)> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (mut points, mut reasons) = points(query, d, weights, wants_docs);
            if last_binding
                .get(&(d.path, d.qualified_name))
                .is_some_and(|&last| last > d.start_line)
            {
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
    let scored = impls_after_their_types(scored, defs);
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

/// An `impl` block never comes before the type it implements: the name means the struct,
/// enum or trait itself (tokio's `Harness`, a `pub(crate)` struct whose `impl` is seen as
/// public, would otherwise tie with it). Each impl moves to just after the best-ranked type of
/// its name and language below it; the rest keep their order.
fn impls_after_their_types<T>(
    scored: Vec<(f64, usize, T)>,
    defs: &[DefinitionFacts],
) -> Vec<(f64, usize, T)> {
    let is_type = |d: &DefinitionFacts| {
        matches!(
            d.kind,
            "struct" | "enum" | "trait" | "union" | "type" | "class" | "interface"
        )
    };
    let same = |a: &DefinitionFacts, b: &DefinitionFacts| {
        a.qualified_name == b.qualified_name && a.language == b.language
    };
    let mut order: Vec<Option<(f64, usize, T)>> = scored.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(order.len());
    let mut waiting: Vec<(usize, (f64, usize, T))> = Vec::new();
    for at in 0..order.len() {
        let Some(entry) = order[at].take() else {
            continue;
        };
        let d = &defs[entry.1];
        let its_type = (d.kind == "impl")
            .then(|| {
                (at + 1..order.len()).find(|&later| {
                    order[later]
                        .as_ref()
                        .is_some_and(|e| is_type(&defs[e.1]) && same(&defs[e.1], d))
                })
            })
            .flatten();
        match its_type {
            Some(later) => waiting.push((later, entry)),
            None => out.push(entry),
        }
        // Impls waiting for this type follow it.
        let mut k = 0;
        while k < waiting.len() {
            if waiting[k].0 == at {
                out.push(waiting.remove(k).1);
            } else {
                k += 1;
            }
        }
    }
    out.extend(waiting.into_iter().map(|(_, e)| e));
    out
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
            | "constant"
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
    fn a_crate_private_type_still_comes_before_its_impl() {
        // tokio's `pub(crate) struct Harness` and `impl<T, S> Harness<T, S>`: the impl reads
        // as public, the struct as crate-private; the struct is what the name means. A
        // test's struct of the name ranks below both.
        let mut strukt = facts("tokio/src/runtime/task/harness.rs", "struct", "Harness");
        strukt.signature = Some("pub(crate) struct Harness<T: Future, S: 'static> {");
        strukt.start_line = 17;
        let mut imp = facts("tokio/src/runtime/task/harness.rs", "impl", "Harness");
        imp.signature = Some("impl<T, S> Harness<T, S>");
        imp.start_line = 30;
        let test = facts("tokio/tests/support/harness.rs", "struct", "Harness");
        assert_eq!(
            order("Harness", &[imp.clone(), test.clone(), strukt.clone()]),
            [
                "tokio/src/runtime/task/harness.rs:Harness",
                "tokio/src/runtime/task/harness.rs:Harness",
                "tokio/tests/support/harness.rs:Harness",
            ]
        );
        let q = NameQuery::parse("Harness").unwrap();
        let defs = [imp, test, strukt];
        let ranked = rank_definitions(&q, &defs, &NameWeights::default(), false);
        assert_eq!(
            ranked
                .iter()
                .map(|r| defs[r.index].kind)
                .collect::<Vec<_>>(),
            ["struct", "impl", "struct"]
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
}
