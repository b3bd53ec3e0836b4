//! What commit search by words (history.rs) and by vectors (history_vectors.rs) share: the
//! SQL filters (repo, dates, author, path) and how a row becomes a `CommitHit`.

use quarry_core::history::{CommitHit, CommitQuery};
use rusqlite::types::Value;

/// Filters shared by search and touches; `c` is `commits`, `r` is `repos`.
pub(crate) fn push_commit_filters(sql: &mut String, args: &mut Vec<Value>, q: &CommitQuery) {
    crate::search::push_filters(sql, args, &q.repos, None);
    if let Some(since) = q.since {
        args.push(Value::Integer(since));
        sql.push_str(&format!(" AND c.author_time >= ?{}", args.len()));
    }
    if let Some(until) = q.until {
        args.push(Value::Integer(until));
        sql.push_str(&format!(" AND c.author_time <= ?{}", args.len()));
    }
    if let Some(author) = &q.author {
        args.push(Value::Text(format!("%{}%", author.to_lowercase())));
        sql.push_str(&format!(
            " AND (lower(c.author) LIKE ?{0} OR lower(c.email) LIKE ?{0})",
            args.len()
        ));
    }
    if let Some(path) = &q.path {
        let condition = crate::search::path_condition(args, path, &["cf.path", "cf.old_path"]);
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM commit_files cf WHERE cf.commit_id = c.id AND {condition})"
        ));
    }
}

/// Read by `hit_from_row`; the last says whether the commit has a vector (fusion needs to
/// know "not embedded" from "embedded and far").
pub(crate) const HIT_COLUMNS: &str =
    "r.name, c.sha, c.author, c.email, c.author_time, c.subject, c.files_changed,
     EXISTS(SELECT 1 FROM commit_vectors v WHERE v.commit_id = c.id)";

pub(crate) fn hit_columns() -> &'static str {
    HIT_COLUMNS
}

pub(crate) fn hit_from_row(r: &rusqlite::Row, score: f64) -> rusqlite::Result<CommitHit> {
    Ok(CommitHit {
        repo: r.get(0)?,
        sha: r.get(1)?,
        author: r.get(2)?,
        email: r.get(3)?,
        date: quarry_core::history::format_time(r.get(4)?),
        subject: r.get(5)?,
        files_changed: r.get::<_, i64>(6)? as u32,
        score,
        embedded: r.get(7)?,
        why: None,
    })
}
