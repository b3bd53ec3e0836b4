//! Name lookups behind callers, impact and symbol context: call sites by called name, and
//! definitions by name. Both are indexed columns, so a lookup is a few B-tree probes.

use crate::search::push_filters;
use quarry_core::{CallRef, SymbolRef};
use rusqlite::{types::Value, Connection};

pub fn callers(
    conn: &Connection,
    name: &str,
    repos: &[String],
    limit: usize,
) -> rusqlite::Result<Vec<CallRef>> {
    let mut sql = String::from(
        "SELECT r.name, f.path, c.caller, c.callee, c.line
         FROM calls c JOIN files f ON f.id = c.file_id JOIN repos r ON r.id = f.repo_id
         WHERE c.callee = ?1",
    );
    let mut args = vec![Value::Text(name.to_string())];
    push_filters(&mut sql, &mut args, repos, None);
    args.push(Value::Integer(limit as i64));
    sql.push_str(&format!(
        " ORDER BY r.name, f.path, c.line LIMIT ?{}",
        args.len()
    ));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), call_ref)?;
    rows.collect()
}

/// A `calls` row selected as `r.name, f.path, c.caller, c.callee, c.line`.
fn call_ref(r: &rusqlite::Row) -> rusqlite::Result<CallRef> {
    Ok(CallRef {
        repo: r.get(0)?,
        path: r.get(1)?,
        caller: r.get(2)?,
        callee: r.get(3)?,
        line: r.get(4)?,
    })
}

pub fn calls_from(
    conn: &Connection,
    repo: &str,
    path: &str,
    caller: &str,
    limit: usize,
) -> rusqlite::Result<Vec<CallRef>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.name, f.path, c.caller, c.callee, c.line
         FROM repos r JOIN files f ON f.repo_id = r.id JOIN calls c ON c.file_id = f.id
         WHERE r.name = ?1 AND f.path = ?2 AND c.caller = ?3
         ORDER BY c.line LIMIT ?4",
    )?;
    let rows = stmt.query_map(
        rusqlite::params![repo, path, caller, limit as i64],
        call_ref,
    )?;
    rows.collect()
}

pub fn definitions(
    conn: &Connection,
    query: &quarry_core::DefinitionQuery,
) -> rusqlite::Result<Vec<SymbolRef>> {
    let mut sql = String::from(
        "SELECT r.name, f.path, s.name, s.parent, s.kind, s.start_line, s.end_line, s.signature,
                f.language
         FROM symbols s JOIN files f ON f.id = s.file_id JOIN repos r ON r.id = f.repo_id
         WHERE s.name = ?1",
    );
    let mut args = vec![Value::Text(query.name.clone())];
    push_filters(
        &mut sql,
        &mut args,
        &query.repos,
        query.path_glob.as_deref(),
    );
    crate::search::push_scope(&mut sql, &mut args, query.language, query.content, false);
    args.push(Value::Integer(query.limit as i64));
    sql.push_str(&format!(
        " ORDER BY r.name, f.path, s.start_line LIMIT ?{}",
        args.len()
    ));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        let name: String = r.get(2)?;
        let parent: Option<String> = r.get(3)?;
        let language: String = r.get(8)?;
        Ok(SymbolRef {
            repo: r.get(0)?,
            path: r.get(1)?,
            qualified_name: match &parent {
                Some(p) => format!("{p}.{name}"),
                None => name.clone(),
            },
            name,
            kind: r.get(4)?,
            start_line: r.get(5)?,
            end_line: r.get(6)?,
            signature: r.get(7)?,
            language: quarry_core::Language::from_name(&language)
                .unwrap_or(quarry_core::Language::Text),
        })
    })?;
    rows.collect()
}
