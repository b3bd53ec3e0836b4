//! Commit vectors: one per commit, from the same model as the chunk vectors (a model change
//! drops both). Search is the same exact scan as for chunks, but over only the commits that
//! pass the query's filters — the filters run first, in SQL, so a narrow `--since` or
//! `--path` makes the scan smaller instead of emptying the top k. A long-lived process (the
//! workspace daemon, `keep_vectors_in_memory`) keeps them decoded in memory with each
//! commit's repo and time, and filters and scores that matrix instead.

use crate::commit_rows::{hit_columns, hit_from_row, push_commit_filters};
use crate::vectors::{decode_into, dot, dot_decoded, encode};
use quarry_core::history::{
    commit_embed_text, CommitHit, CommitQuery, HistoryStats, PendingCommit,
};
use rusqlite::{params, types::Value, Connection, OptionalExtension};
use std::sync::{Arc, Mutex};

/// Bytes of a stored patch read to build an embedding text (the text keeps ~1 KB of it).
const PATCH_PREVIEW_BYTES: i64 = 8 * 1024;

pub(crate) fn set_embedding(conn: &mut Connection, repo: i64, on: bool) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute(
        "UPDATE repos SET embed_history = ?2 WHERE id = ?1",
        params![repo, on],
    )?;
    if !on {
        tx.execute(
            "DELETE FROM commit_vectors WHERE commit_id IN (SELECT id FROM commits WHERE repo_id = ?1)",
            [repo],
        )?;
    }
    tx.commit()
}

pub(crate) fn stats(conn: &Connection) -> rusqlite::Result<Vec<HistoryStats>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.name, r.embed_history,
                (SELECT count(*) FROM commits c WHERE c.repo_id = r.id),
                (SELECT count(*) FROM commits c JOIN commit_vectors v ON v.commit_id = c.id WHERE c.repo_id = r.id)
         FROM repos r ORDER BY r.name",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(HistoryStats {
            repo: r.get(0)?,
            embed: r.get(1)?,
            commits: r.get::<_, i64>(2)? as u64,
            embedded: r.get::<_, i64>(3)? as u64,
        })
    })?;
    rows.collect()
}

pub(crate) fn any(conn: &Connection, repos: &[String]) -> rusqlite::Result<bool> {
    let mut args: Vec<Value> = Vec::new();
    let mut sql = String::from(
        "SELECT EXISTS(SELECT 1 FROM commit_vectors v
         JOIN commits c ON c.id = v.commit_id JOIN repos r ON r.id = c.repo_id WHERE 1",
    );
    crate::search::push_filters(&mut sql, &mut args, repos, None);
    sql.push(')');
    conn.query_row(&sql, rusqlite::params_from_iter(args), |r| r.get(0))
}

/// The commits of repos with embedding on that are within the embedding bound: the newest
/// `?1` of each repo, by author time; of the repos named in the JSON list `?2` (all when
/// `[]`).
const BOUNDED_COMMITS: &str = "
    bounded AS (
        SELECT c.id FROM (
            SELECT c.id, row_number() OVER (
                PARTITION BY c.repo_id ORDER BY c.author_time DESC, c.id DESC) AS n
            FROM commits c JOIN repos r ON r.id = c.repo_id
            WHERE r.embed_history = 1
              AND (?2 = '[]' OR r.name IN (SELECT value FROM json_each(?2)))) c
        WHERE c.n <= ?1)";

fn bound(newest: Option<u64>) -> i64 {
    newest.map_or(i64::MAX, |n| n.min(i64::MAX as u64) as i64)
}

/// Commits within the bound that still have no vector.
pub(crate) fn waiting(
    conn: &Connection,
    newest: Option<u64>,
    repos: &[String],
) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached(&format!(
        "WITH {BOUNDED_COMMITS}
         SELECT count(*) FROM bounded b
         WHERE NOT EXISTS (SELECT 1 FROM commit_vectors v WHERE v.commit_id = b.id)"
    ))?;
    stmt.query_row(params![bound(newest), crate::repo_list(repos)], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
}

pub(crate) fn pending(
    conn: &Connection,
    limit: usize,
    newest: Option<u64>,
    repos: &[String],
) -> rusqlite::Result<Vec<PendingCommit>> {
    let mut stmt = conn.prepare_cached(&format!(
        "WITH {BOUNDED_COMMITS}
         SELECT c.id, c.subject, c.body, substr(c.patch, 1, ?4),
                (SELECT group_concat(path, char(10)) FROM commit_files cf WHERE cf.commit_id = c.id)
         FROM bounded b JOIN commits c ON c.id = b.id
         WHERE NOT EXISTS (SELECT 1 FROM commit_vectors v WHERE v.commit_id = c.id)
         ORDER BY c.author_time DESC
         LIMIT ?3"
    ))?;
    let rows = stmt.query_map(
        params![
            bound(newest),
            crate::repo_list(repos),
            limit as i64,
            PATCH_PREVIEW_BYTES
        ],
        |r| {
            let (subject, body, patch, paths): (String, String, String, Option<String>) =
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
            let paths = paths.unwrap_or_default();
            let paths: Vec<&str> = paths.lines().collect();
            Ok(PendingCommit {
                id: r.get(0)?,
                text: commit_embed_text(&subject, &body, &paths, &patch),
            })
        },
    )?;
    rows.collect()
}

pub(crate) fn put(conn: &mut Connection, vectors: &[(i64, Vec<f32>)]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        // A commit dropped (history rewritten) while its vector was being made is skipped.
        let mut insert = tx.prepare_cached(
            "INSERT OR REPLACE INTO commit_vectors(commit_id, vector)
             SELECT id, ?2 FROM commits WHERE id = ?1",
        )?;
        for (id, vector) in vectors {
            insert.execute(params![id, encode(vector)])?;
        }
    }
    tx.commit()
}

/// The commit vectors of one index file, decoded, with what the repo and date filters need.
struct ResidentCommits {
    /// The index file's path, device and inode: a rebuilt index is another file.
    file: (String, u64, u64),
    /// The embedding model, how many commits have a vector and the newest of them. Vectors
    /// are only added (for commits without one), dropped with their commit, or all replaced
    /// when the model changes, so any change moves one of these.
    state: (Option<String>, i64, Option<i64>),
    dims: usize,
    ids: Vec<i64>,
    repos: Vec<i64>,
    times: Vec<i64>,
    data: Vec<f32>,
}

static RESIDENT: Mutex<Option<Arc<ResidentCommits>>> = Mutex::new(None);

/// Drops the resident matrix (`keep_vectors_in_memory(false)`).
pub(crate) fn forget_resident() {
    *RESIDENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The resident matrix of `conn`'s index, loaded or refreshed as needed; `None` when vectors
/// are not kept in memory (or too many to keep).
fn resident(conn: &Connection, dims: usize) -> rusqlite::Result<Option<Arc<ResidentCommits>>> {
    if !crate::vectors::KEEP_RESIDENT.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(None);
    }
    let Some(file) = crate::vectors::file_identity(conn) else {
        return Ok(None);
    };
    let (count, newest): (i64, Option<i64>) = conn
        .prepare_cached("SELECT count(*), max(commit_id) FROM commit_vectors")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let state = (crate::vectors::model(conn)?, count, newest);
    let mut slot = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = slot.as_ref() {
        if m.file == file && m.state == state && m.dims == dims {
            return Ok(Some(m.clone()));
        }
    }
    *slot = None;
    if count as usize * dims > crate::vectors::MAX_RESIDENT_FLOATS {
        return Ok(None);
    }
    let mut m = ResidentCommits {
        file,
        state,
        dims,
        ids: Vec::new(),
        repos: Vec::new(),
        times: Vec::new(),
        data: Vec::with_capacity(count as usize * dims),
    };
    let mut stmt = conn.prepare_cached(
        "SELECT v.commit_id, c.repo_id, c.author_time, v.vector
         FROM commit_vectors v JOIN commits c ON c.id = v.commit_id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let blob = row.get_ref(3)?.as_blob()?;
        if blob.len() == dims * 4 {
            m.ids.push(row.get(0)?);
            m.repos.push(row.get(1)?);
            m.times.push(row.get(2)?);
            decode_into(blob, &mut m.data);
        }
    }
    let m = Arc::new(m);
    *slot = Some(m.clone());
    Ok(Some(m))
}

/// Scores the resident matrix's commits that pass `q`'s repo and date filters; `None` when
/// the query has filters it does not hold (author, path): those are scanned in SQL.
fn score_resident(
    conn: &Connection,
    m: &ResidentCommits,
    vector: &[f32],
    q: &CommitQuery,
) -> rusqlite::Result<Option<Vec<(f32, i64)>>> {
    if q.author.is_some() || q.path.is_some() {
        return Ok(None);
    }
    let repos: Option<std::collections::HashSet<i64>> = if q.repos.is_empty() {
        None
    } else {
        let mut find = conn.prepare_cached("SELECT id FROM repos WHERE name = ?1")?;
        let mut ids = std::collections::HashSet::new();
        for name in &q.repos {
            if let Some(id) = find.query_row([name], |r| r.get(0)).optional()? {
                ids.insert(id);
            }
        }
        Some(ids)
    };
    let passes = |i: usize| {
        repos.as_ref().is_none_or(|r| r.contains(&m.repos[i]))
            && q.since.is_none_or(|s| m.times[i] >= s)
            && q.until.is_none_or(|u| m.times[i] <= u)
    };
    Ok(Some(
        m.data
            .chunks_exact(m.dims)
            .enumerate()
            .filter(|(i, _)| passes(*i))
            .map(|(i, stored)| (dot_decoded(stored, vector), m.ids[i]))
            .collect(),
    ))
}

pub(crate) fn search(
    conn: &Connection,
    vector: &[f32],
    q: &CommitQuery,
) -> rusqlite::Result<Vec<CommitHit>> {
    if vector.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let from_memory = match resident(conn, vector.len())? {
        Some(m) => score_resident(conn, &m, vector, q)?,
        None => None,
    };
    let mut scored = match from_memory {
        Some(scored) => scored,
        None => scan(conn, vector, q)?,
    };
    let keep = q.limit.min(scored.len());
    if keep == 0 {
        return Ok(Vec::new());
    }
    // Best first, ties by id: the matrix and the scan list commits in different orders.
    let order = |a: &(f32, i64), b: &(f32, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    scored.select_nth_unstable_by(keep - 1, order);
    scored.truncate(keep);
    scored.sort_unstable_by(order);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM commits c JOIN repos r ON r.id = c.repo_id WHERE c.id = ?1",
        hit_columns()
    ))?;
    scored
        .into_iter()
        .map(|(score, id)| stmt.query_row([id], |r| hit_from_row(r, score as f64)))
        .collect()
}

/// Reads and scores the vectors of the commits that pass `q`'s filters, in SQL.
fn scan(conn: &Connection, vector: &[f32], q: &CommitQuery) -> rusqlite::Result<Vec<(f32, i64)>> {
    let mut args: Vec<Value> = Vec::new();
    let mut sql = String::from(
        "SELECT c.id, v.vector FROM commit_vectors v
         JOIN commits c ON c.id = v.commit_id JOIN repos r ON r.id = c.repo_id WHERE 1",
    );
    push_commit_filters(&mut sql, &mut args, q);
    let mut scored: Vec<(f32, i64)> = Vec::new();
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
    while let Some(row) = rows.next()? {
        let blob = row.get_ref(1)?.as_blob()?;
        if blob.len() == vector.len() * 4 {
            scored.push((dot(blob, vector), row.get(0)?));
        }
    }
    Ok(scored)
}
