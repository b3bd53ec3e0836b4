//! Commits: stored per repo with their changed files, searched with BM25 over subject, body,
//! changed paths and patch (code-aware tokens, like chunks), with every filter (repo, dates,
//! author, path) in the same SQL statement as the ranking — a pre-filter, never a post-filter.

use crate::commit_rows::{hit_from_row, push_commit_filters, HIT_COLUMNS};
use crate::history_vectors;
use crate::SqliteStore;
use anyhow::Result;
use quarry_core::history::{
    ChangedFile, CommitHit, CommitQuery, CommitRecord, HistoryStats, HistoryStore, PendingCommit,
    COMMIT_FIELD_WEIGHTS, COMMIT_LENGTH_NORMALISATION,
};
use quarry_core::tokens;
use rusqlite::{params, types::Value, Connection};
use std::collections::{HashMap, HashSet};

fn put(conn: &mut Connection, repo: i64, commits: &[CommitRecord]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT OR IGNORE INTO commits(repo_id, sha, parents, author, email, author_time, commit_time,
                                           subject, body, patch, patch_truncated, files_changed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        let mut insert_file = tx.prepare_cached(
            "INSERT INTO commit_files(commit_id, path, old_path, status, added, removed, merged_in) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut insert_fts = tx.prepare_cached(
            "INSERT INTO commits_fts(rowid, subject, body, paths, patch) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for c in commits {
            let inserted = insert.execute(params![
                repo,
                c.sha,
                c.parents.join(" "),
                c.author,
                c.email,
                c.author_time,
                c.commit_time,
                c.subject,
                c.body,
                c.patch,
                c.patch_truncated,
                c.files.len() as i64,
            ])?;
            if inserted == 0 {
                continue;
            }
            let id = tx.last_insert_rowid();
            let mut paths = String::new();
            for f in &c.files {
                insert_file.execute(params![
                    id,
                    f.path,
                    f.old_path,
                    f.status,
                    f.added,
                    f.removed,
                    f.merged_in
                ])?;
                paths.push_str(&f.path);
                paths.push(' ');
                if let Some(old) = &f.old_path {
                    paths.push_str(old);
                    paths.push(' ');
                }
            }
            insert_fts.execute(params![
                id,
                tokens::index_text(&c.subject),
                tokens::index_text(&c.body),
                tokens::index_text(&paths),
                tokens::index_text(&c.patch),
            ])?;
        }
    }
    tx.commit()
}

fn drop_commits(conn: &mut Connection, repo: i64, shas: &[String]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut find =
            tx.prepare_cached("SELECT id FROM commits WHERE repo_id = ?1 AND sha = ?2")?;
        for sha in shas {
            let ids: Vec<i64> = find
                .query_map(params![repo, sha], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for id in ids {
                tx.execute("DELETE FROM commits_fts WHERE rowid = ?1", [id])?;
                tx.execute("DELETE FROM commits WHERE id = ?1", [id])?;
            }
        }
    }
    tx.commit()
}

fn search(conn: &Connection, q: &CommitQuery) -> rusqlite::Result<Vec<CommitHit>> {
    let mut args: Vec<Value> = Vec::new();
    let limit = q.limit.max(1) as i64;
    if q.terms.is_empty() {
        let mut sql = format!(
            "SELECT {HIT_COLUMNS}, 0.0 FROM commits c JOIN repos r ON r.id = c.repo_id WHERE 1"
        );
        push_commit_filters(&mut sql, &mut args, q);
        args.push(Value::Integer(limit));
        sql.push_str(&format!(
            " ORDER BY c.author_time DESC LIMIT ?{}",
            args.len()
        ));
        return collect_hits(conn, &sql, args);
    }
    let (expression, phrase_weights) =
        crate::weighted_bm25::weighted_expression(&weighing_terms(conn, &q.terms)?);
    args.push(Value::Text(expression));
    args.push(Value::Text(phrase_weights));
    // The best `limit` are chosen from the full-text index alone, and only they are joined to
    // their commit rows: an issue's words match most commits (74k of the eval workspace's 95k),
    // and looking each one's wide row up to filter it cost a quarter of the query (sympy's
    // issues: 186 -> 137 ms each). The filters become one set of commit ids, built once (the
    // `+` keeps FTS5 from taking the IN as one rowid lookup per id).
    let mut filters = String::new();
    push_commit_filters(&mut filters, &mut args, q);
    let only = if filters.is_empty() {
        String::new()
    } else {
        format!(
            " AND +commits_fts.rowid IN
              (SELECT c.id FROM commits c JOIN repos r ON r.id = c.repo_id WHERE 1{filters})"
        )
    };
    args.push(Value::Integer(limit));
    let [subject, body, paths, patch] = COMMIT_FIELD_WEIGHTS;
    let b = COMMIT_LENGTH_NORMALISATION;
    let sql = format!(
        "SELECT {HIT_COLUMNS}, best.score FROM (
            SELECT commits_fts.rowid AS id,
                   quarry_bm25(commits_fts, {b}, ?2, {subject}, {body}, {paths}, {patch}) AS score
            FROM commits_fts WHERE commits_fts MATCH ?1{only}
            ORDER BY score DESC LIMIT ?{}) best
         JOIN commits c ON c.id = best.id JOIN repos r ON r.id = c.repo_id
         ORDER BY best.score DESC",
        args.len()
    );
    collect_hits(conn, &sql, args)
}

fn collect_hits(
    conn: &Connection,
    sql: &str,
    args: Vec<Value>,
) -> rusqlite::Result<Vec<CommitHit>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        let score: f64 = r.get(8)?;
        hit_from_row(r, score)
    })?;
    rows.collect()
}

/// The query's terms less those in more than half of all commits. BM25's IDF there,
/// ln((N - n + 0.5) / (n + 0.5)), is below zero and FTS5 floors it at 1e-6: such a term adds
/// nothing to any commit's score, but its posting list is among the longest to read. An issue
/// pasting code asks for `def`, `self`, `return` (in 40–70% of sympy's commits): leaving them
/// out took one issue's BM25 over 95k commits from 280 to 211 ms, the same 200 commits in the
/// same order. A query of nothing but such terms keeps them all (they still say which commits
/// hold them). Each distinct term's count is one read of its posting list.
fn weighing_terms<'t>(conn: &Connection, terms: &'t [String]) -> rusqlite::Result<Vec<&'t str>> {
    let commits: i64 = conn
        .prepare_cached("SELECT count(*) FROM commits")?
        .query_row([], |r| r.get(0))?;
    let mut holding =
        conn.prepare_cached("SELECT count(*) FROM commits_fts WHERE commits_fts MATCH ?1")?;
    let mut weightless = HashSet::new();
    for term in terms.iter().collect::<HashSet<_>>() {
        let n: i64 = holding.query_row([format!("\"{}\"", term.replace('"', ""))], |r| r.get(0))?;
        if 2 * n >= commits {
            weightless.insert(term.as_str());
        }
    }
    let kept: Vec<&str> = terms
        .iter()
        .map(String::as_str)
        .filter(|t| !weightless.contains(t))
        .collect();
    Ok(if kept.is_empty() {
        terms.iter().map(String::as_str).collect()
    } else {
        kept
    })
}

fn files_of(conn: &Connection, commit_id: i64) -> rusqlite::Result<Vec<ChangedFile>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, old_path, status, added, removed, merged_in FROM commit_files WHERE commit_id = ?1 ORDER BY rowid",
    )?;
    let rows = stmt.query_map([commit_id], |r| {
        Ok(ChangedFile {
            path: r.get(0)?,
            old_path: r.get(1)?,
            status: r.get(2)?,
            added: r.get(3)?,
            removed: r.get(4)?,
            merged_in: r.get(5)?,
        })
    })?;
    rows.collect()
}

/// Every path the commits changed, by SHA; the SHAs travel as one JSON array (any number of
/// them in one statement, each found through the SHA index).
fn changed_paths(
    conn: &Connection,
    repo: &str,
    shas: &[String],
) -> rusqlite::Result<HashMap<String, Vec<String>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.sha, cf.path
         FROM commits c JOIN repos r ON r.id = c.repo_id
         JOIN commit_files cf ON cf.commit_id = c.id
         WHERE c.sha IN (SELECT value FROM json_each(?2)) AND r.name = ?1
         ORDER BY cf.rowid",
    )?;
    let list = serde_json::to_string(shas).unwrap_or_else(|_| "[]".to_string());
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let rows = stmt.query_map(params![repo, list], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (sha, path) = row?;
        out.entry(sha).or_default().push(path);
    }
    Ok(out)
}

/// The stored patch of each of the commits, by SHA (one statement, as `changed_paths`).
fn patches(
    conn: &Connection,
    repo: &str,
    shas: &[String],
) -> rusqlite::Result<HashMap<String, String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.sha, c.patch FROM commits c JOIN repos r ON r.id = c.repo_id
         WHERE c.sha IN (SELECT value FROM json_each(?2)) AND r.name = ?1",
    )?;
    let list = serde_json::to_string(shas).unwrap_or_else(|_| "[]".to_string());
    let rows = stmt.query_map(params![repo, list], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

fn by_prefix(
    conn: &Connection,
    prefix: &str,
    repos: &[String],
) -> rusqlite::Result<Vec<(String, CommitRecord)>> {
    let prefix = prefix.to_ascii_lowercase();
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, r.name, c.sha, c.parents, c.author, c.email, c.author_time, c.commit_time,
                c.subject, c.body, c.patch, c.patch_truncated
         FROM commits c JOIN repos r ON r.id = c.repo_id
         WHERE c.sha >= ?1 AND c.sha < ?2 ORDER BY r.name LIMIT 20",
    )?;
    // Every SHA with the prefix sorts between the prefix and the prefix with a last char after 'f'.
    let upper = format!("{prefix}g");
    let rows: Vec<(i64, String, CommitRecord)> = stmt
        .query_map(params![prefix, upper], |r| {
            let parents: String = r.get(3)?;
            Ok((
                r.get(0)?,
                r.get(1)?,
                CommitRecord {
                    sha: r.get(2)?,
                    parents: parents.split_whitespace().map(str::to_string).collect(),
                    author: r.get(4)?,
                    email: r.get(5)?,
                    author_time: r.get(6)?,
                    commit_time: r.get(7)?,
                    subject: r.get(8)?,
                    body: r.get(9)?,
                    files: Vec::new(),
                    patch: r.get(10)?,
                    patch_truncated: r.get(11)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for (id, repo, mut record) in rows {
        if !repos.is_empty() && !repos.contains(&repo) {
            continue;
        }
        record.files = files_of(conn, id)?;
        out.push((repo, record));
    }
    Ok(out)
}

/// Commits that changed `path` (or anything under it), following renames back in time.
fn touches(conn: &Connection, path: &str, q: &CommitQuery) -> rusqlite::Result<Vec<CommitHit>> {
    let path = path.trim_end_matches('/');
    let mut names: Vec<String> = vec![path.to_string()];
    let mut seen_commits: HashSet<(String, String)> = HashSet::new();
    let mut hits: Vec<(i64, CommitHit)> = Vec::new();
    let mut i = 0;
    while i < names.len() && names.len() <= 64 {
        let name = names[i].clone();
        i += 1;
        // Paths under `name/` sort between "name/" and "name0" ('0' follows '/'): index range
        // scans, where a GLOB would scan every changed file. CROSS JOIN keeps the path index
        // as the outer loop (otherwise SQLite starts from the repo and walks all its commits).
        let mut args: Vec<Value> = vec![
            Value::Text(name.clone()),
            Value::Text(format!("{name}/")),
            Value::Text(format!("{name}0")),
        ];
        // As `git log -- PATH` reads history: a merge's change that came with the merged
        // branch is that branch's commits' (listed themselves), and a rename away from the
        // path changed it too.
        let mut sql = format!(
            "SELECT {HIT_COLUMNS}, c.author_time, cf.path, cf.old_path, cf.status
             FROM commit_files cf CROSS JOIN commits c ON c.id = cf.commit_id CROSS JOIN repos r ON r.id = c.repo_id
             WHERE (cf.path = ?1 OR (cf.path > ?2 AND cf.path < ?3)
                    OR (cf.old_path = ?1 AND cf.status = 'renamed'))
               AND cf.merged_in = 0"
        );
        push_commit_filters(
            &mut sql,
            &mut args,
            &CommitQuery {
                path: None,
                ..q.clone()
            },
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            Ok((
                hit_from_row(r, 0.0)?,
                r.get::<_, i64>(8)?,
                r.get::<_, String>(9)?,
                r.get::<_, Option<String>>(10)?,
                r.get::<_, String>(11)?,
            ))
        })?;
        for row in rows {
            let (hit, time, file, old, status) = row?;
            // A rename into this exact path: older commits knew the file by its old name.
            if status == "renamed" && file == name {
                if let Some(old) = old {
                    if !names.contains(&old) {
                        names.push(old);
                    }
                }
            }
            if seen_commits.insert((hit.repo.clone(), hit.sha.clone())) {
                hits.push((time, hit));
            }
        }
    }
    hits.sort_by_key(|h| std::cmp::Reverse(h.0));
    Ok(hits
        .into_iter()
        .take(q.limit.max(1))
        .map(|(_, h)| h)
        .collect())
}

impl HistoryStore for SqliteStore {
    fn known_commits(&self, repo: i64) -> Result<HashSet<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT sha FROM commits WHERE repo_id = ?1")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([repo], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    fn put_commits(&mut self, repo: i64, commits: &[CommitRecord]) -> Result<()> {
        put(&mut self.conn, repo, commits).map_err(|e| crate::classify(&self.path, e))
    }

    fn drop_commits(&mut self, repo: i64, shas: &[String]) -> Result<()> {
        drop_commits(&mut self.conn, repo, shas).map_err(|e| crate::classify(&self.path, e))
    }

    fn search_commits(&self, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        search(&self.conn, query).map_err(|e| self.err(e))
    }

    fn commits_by_prefix(
        &self,
        prefix: &str,
        repos: &[String],
    ) -> Result<Vec<(String, CommitRecord)>> {
        by_prefix(&self.conn, prefix, repos).map_err(|e| self.err(e))
    }

    fn touches(&self, path: &str, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        touches(&self.conn, path, query).map_err(|e| self.err(e))
    }

    fn changed_paths(&self, repo: &str, shas: &[String]) -> Result<HashMap<String, Vec<String>>> {
        changed_paths(&self.conn, repo, shas).map_err(|e| self.err(e))
    }

    fn commit_patches(&self, repo: &str, shas: &[String]) -> Result<HashMap<String, String>> {
        patches(&self.conn, repo, shas).map_err(|e| self.err(e))
    }

    fn set_history_embedding(&mut self, repo: i64, on: bool) -> Result<()> {
        history_vectors::set_embedding(&mut self.conn, repo, on)
            .map_err(|e| crate::classify(&self.path, e))
    }

    fn history_stats(&self) -> Result<Vec<HistoryStats>> {
        history_vectors::stats(&self.conn).map_err(|e| self.err(e))
    }

    fn has_commit_vectors(&self, repos: &[String]) -> Result<bool> {
        history_vectors::any(&self.conn, repos).map_err(|e| self.err(e))
    }

    fn pending_commit_embeddings(
        &self,
        limit: usize,
        newest: Option<u64>,
        repos: &[String],
    ) -> Result<Vec<PendingCommit>> {
        history_vectors::pending(&self.conn, limit, newest, repos).map_err(|e| self.err(e))
    }

    fn waiting_commit_embeddings(&self, newest: Option<u64>, repos: &[String]) -> Result<u64> {
        history_vectors::waiting(&self.conn, newest, repos).map_err(|e| self.err(e))
    }

    fn put_commit_vectors(&mut self, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        history_vectors::put(&mut self.conn, vectors).map_err(|e| crate::classify(&self.path, e))
    }

    fn search_commit_vectors(&self, vector: &[f32], query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history_vectors::search(&self.conn, vector, query).map_err(|e| self.err(e))
    }
}
