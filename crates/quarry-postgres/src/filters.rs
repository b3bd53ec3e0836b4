//! The SQL every read shares: parameters, and the repo, language, content and path filters
//! pushed into the same statement as the ranking (chunks in read.rs and bm25.rs, commits in
//! history.rs), with the embedded store's rules.

use quarry_core::{ContentType, Language};
use tokio_postgres::types::ToSql;

pub(crate) type Params = Vec<Box<dyn ToSql + Sync>>;

pub(crate) fn refs(params: &Params) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p.as_ref()).collect()
}

/// A path filter as a POSIX regular expression with the embedded store's GLOB meaning: `*`
/// and `?` match any characters (`/` too), `[...]` a class; a filter without glob characters
/// matches paths that contain it.
pub(crate) fn path_regex(filter: &str) -> String {
    if !filter.contains(['*', '?', '[']) {
        return regex_escape(filter);
    }
    let mut out = String::from("^");
    let mut in_class = false;
    // Brace alternatives (`{core,solvers}`) as regex groups, when the braces pair up.
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
            c if in_class => out.push(c),
            '{' if braces => {
                depth += 1;
                out.push_str("(?:");
            }
            '}' if braces && depth > 0 => {
                depth -= 1;
                out.push(')');
            }
            ',' if braces && depth > 0 => out.push('|'),
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            c => out.push_str(&regex_escape(&c.to_string())),
        }
    }
    out.push('$');
    out
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Appends the shared pre-filters (repo names, path) for tables aliased `r` and `f`;
/// `push_scope` adds language and content type.
pub(crate) fn push_filters(
    sql: &mut String,
    params: &mut Params,
    repos: &[String],
    path_glob: Option<&str>,
) {
    if !repos.is_empty() {
        params.push(Box::new(repos.to_vec()));
        sql.push_str(&format!(" AND r.name = ANY(${})", params.len()));
    }
    if let Some(glob) = path_glob {
        params.push(Box::new(path_regex(glob)));
        sql.push_str(&format!(" AND f.path ~ ${}", params.len()));
    }
}

/// Restricts a search by language and to code or documents. For chunks (aliased `chunk`)
/// both are judged by the chunk's own language (`--lang python` also finds a notebook's
/// Python cells; `--lang notebook` every cell of one); without an alias, files by the file's.
pub(crate) fn push_scope(
    sql: &mut String,
    params: &mut Params,
    language: Option<Language>,
    content: ContentType,
    chunk: Option<&str>,
) {
    if let Some(lang) = language {
        params.push(Box::new(lang.name().to_string()));
        let n = params.len();
        match chunk {
            Some(alias) => sql.push_str(&format!(
                " AND ({alias}.language = ${n} OR f.language = ${n})"
            )),
            None => sql.push_str(&format!(" AND f.language = ${n}")),
        }
    }
    let own = match chunk {
        Some(alias) => format!("coalesce({alias}.language, f.language)"),
        None => "f.language".to_string(),
    };
    if let Some(condition) = content.sql_condition(&own, chunk.is_none()) {
        sql.push_str(" AND ");
        sql.push_str(&condition);
    }
}
