//! The query DSL every read shares: the repo, language, content and path filters with the
//! embedded store's rules, as filter clauses (they narrow before ranking, and inside a kNN
//! search they are Lucene's efficient filtering: the graph is walked only through documents
//! that pass), and BM25 over quarry's terms with the per-field weights.

use quarry_core::store::FieldWeights;
use quarry_core::{ContentType, Language};
use serde_json::{json, Value};

/// A path filter as a Lucene regular expression (always anchored) with the embedded store's
/// GLOB meaning: `*` and `?` match any characters (`/` too), `[...]` a class, `{a,b}`
/// alternatives; a filter without glob characters matches paths that contain it.
pub(crate) fn path_regex(filter: &str) -> String {
    if !filter.contains(['*', '?', '[']) {
        return format!(".*{}.*", escape(filter));
    }
    let mut out = String::new();
    let mut in_class = false;
    let braces = quarry_core::glob::brace_alternatives(filter).is_some_and(|a| a.len() > 1);
    let mut depth = 0usize;
    for c in filter.replace("**/", "*").chars() {
        match c {
            '[' if !in_class => {
                in_class = true;
                out.push('[');
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            c if in_class => {
                if c == '\\' || c == '"' {
                    out.push('\\');
                }
                out.push(c)
            }
            '{' if braces => {
                depth += 1;
                out.push('(');
            }
            '}' if braces && depth > 0 => {
                depth -= 1;
                out.push(')');
            }
            ',' if braces && depth > 0 => out.push('|'),
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            c => out.push_str(&escape(&c.to_string())),
        }
    }
    out
}

/// Every character Lucene's regular expressions read as syntax, escaped.
fn escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if ".?+*|{}[]()\"\\#@&<>~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A `regexp` clause on a keyword field (optional operators off: only the core syntax).
pub(crate) fn regexp(field: &str, filter: &str) -> Value {
    json!({"regexp": {field: {"value": path_regex(filter), "flags": "NONE", "max_determinized_states": 100000}}})
}

/// Filter clauses narrowing a search.
#[derive(Default)]
pub(crate) struct Filters(pub Vec<Value>);

impl Filters {
    pub fn repos(mut self, repos: &[String]) -> Self {
        if !repos.is_empty() {
            self.0.push(json!({"terms": {"repo": repos}}));
        }
        self
    }

    pub fn path(mut self, glob: Option<&str>) -> Self {
        if let Some(glob) = glob {
            self.0.push(regexp("path", glob));
        }
        self
    }

    /// Language and content type of chunks, judged by their own language (`--lang python`
    /// also finds a notebook's Python cells; `--lang notebook` every cell of one).
    pub fn chunk_scope(mut self, language: Option<Language>, content: ContentType) -> Self {
        if let Some(language) = language {
            self.0.push(json!({"bool": {"should": [
                {"term": {"language": language.name()}},
                {"term": {"file_language": language.name()}},
            ], "minimum_should_match": 1}}));
        }
        self.content("language", content, false)
    }

    /// Language and content type of whole files (or definitions), judged by the file's
    /// language in `field`; a notebook counts as documents too.
    pub fn file_scope(
        mut self,
        field: &str,
        language: Option<Language>,
        content: ContentType,
    ) -> Self {
        if let Some(language) = language {
            self.0.push(json!({"term": {field: language.name()}}));
        }
        self.content(field, content, true)
    }

    fn content(mut self, field: &str, content: ContentType, files: bool) -> Self {
        let mut docs: Vec<&str> = Language::ALL
            .into_iter()
            .filter(|l| l.is_docs())
            .map(|l| l.name())
            .collect();
        match content {
            ContentType::All => {}
            ContentType::Docs => {
                if files {
                    docs.push(Language::Notebook.name());
                }
                self.0.push(json!({"terms": {field: docs}}));
            }
            ContentType::Code => {
                self.0
                    .push(json!({"bool": {"must_not": {"terms": {field: docs}}}}));
            }
        }
        self
    }

    pub fn push(mut self, clause: Value) -> Self {
        self.0.push(clause);
        self
    }

    pub fn clauses(&self) -> Value {
        Value::Array(self.0.clone())
    }

    /// The filters as one query (`match_all` when there are none).
    pub fn query(&self) -> Value {
        if self.0.is_empty() {
            json!({"match_all": {}})
        } else {
            json!({"bool": {"filter": self.0}})
        }
    }
}

/// The chunk and file fields with the query's weights.
pub(crate) fn code_fields(weights: &FieldWeights) -> [(&'static str, f64); 3] {
    [
        ("t_path", weights.path),
        ("t_symbols", weights.symbol),
        ("t_body", weights.body),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_become_anchored_lucene_expressions() {
        assert_eq!(path_regex("src/*.py"), "src/.*\\.py");
        assert_eq!(path_regex("store"), ".*store.*");
        assert_eq!(path_regex("a/**/b?.rs"), "a/.*b.\\.rs");
        assert_eq!(path_regex("{core,solvers}/*"), "(core|solvers)/.*");
        assert_eq!(path_regex("x[ab]*"), "x[ab].*");
        assert_eq!(path_regex("we#ird@"), ".*we\\#ird\\@.*");
    }
}
