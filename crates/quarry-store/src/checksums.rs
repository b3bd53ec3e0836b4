//! A checksum of every row answers are read from — chunks, files, symbols, and the full-text
//! indexes' own tables (their data, term index and document sizes) — in `row_sums` (schema 13),
//! kept by triggers inside the very transaction that writes the row and verified by the deep
//! check. A few bytes changed inside a page's payload pass SQLite's page and integrity checks,
//! and FTS5's own check cannot see a changed document list in a contentless index; they
//! changed answers (a chunk's symbol made invalid UTF-8 failed every search; a damaged FTS
//! block answered another file). Texts read for an answer are read as bytes: one that is not
//! UTF-8 is shown with its bad bytes replaced, and the store notes the damage
//! (`Store::damage_noted`) for the answer to name with the command that repairs it.

use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// The summed tables and the columns summed (rows keyed by rowid). Migration 13's triggers
/// follow this list.
pub(crate) const SUMMED: &[(&str, &[&str])] = &[
    (
        "chunks",
        &[
            "file_id",
            "start_line",
            "end_line",
            "symbol",
            "kind",
            "parent",
            "signature",
            "text",
            "embed_hash",
            "language",
            "page",
            "cell",
        ],
    ),
    (
        "files",
        &[
            "repo_id", "path", "language", "hash", "size", "mtime_ns", "stem", "trigrams",
        ],
    ),
    (
        "symbols",
        &[
            "file_id",
            "name",
            "kind",
            "parent",
            "start_line",
            "end_line",
            "signature",
        ],
    ),
];

/// `quarry_sum(v1, v2, …)`: xxh3-64 of the values with their types, for the triggers and the
/// check (registered on every connection that writes or checks the index).
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "quarry_sum",
        -1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let mut hasher = xxhash_rust::xxh3::Xxh3::new();
            for i in 0..ctx.len() {
                match ctx.get_raw(i) {
                    ValueRef::Null => hasher.update(&[0]),
                    ValueRef::Integer(n) => {
                        hasher.update(&[1]);
                        hasher.update(&n.to_le_bytes());
                    }
                    ValueRef::Real(x) => {
                        hasher.update(&[2]);
                        hasher.update(&x.to_le_bytes());
                    }
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        hasher.update(&[3]);
                        hasher.update(&(t.len() as u64).to_le_bytes());
                        hasher.update(t);
                    }
                }
            }
            Ok(hasher.digest() as i64)
        },
    )
}

/// The first summed table whose rows no longer match their sums (a row changed, or a row or
/// its sum missing), as "where and how"; `None` when all match or the index keeps no sums yet.
pub(crate) fn check_rows(conn: &Connection) -> Option<String> {
    let has_sums = conn
        .query_row(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'row_sums'",
            [],
            |_| Ok(()),
        )
        .is_ok();
    if !has_sums || register(conn).is_err() {
        return None;
    }
    for (table, columns) in SUMMED {
        let exists = conn
            .query_row(
                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [table],
                |_| Ok(()),
            )
            .is_ok();
        if !exists {
            continue;
        }
        // Both in key order, compared as they stream: linear in the table.
        match first_mismatch(conn, table, columns) {
            Ok(None) => {}
            Ok(Some(Mismatch::Changed(key))) => return Some(describe(conn, table, key)),
            Ok(Some(Mismatch::Unsummed(key))) => {
                return Some(format!(
                    "{table} row {key} has no checksum: rows were added"
                ))
            }
            Ok(Some(Mismatch::Lost(key))) => {
                return Some(format!(
                    "{table} row {key} is gone while its checksum stays"
                ))
            }
            Err(e) => return Some(format!("{table}: {e}")),
        }
    }
    None
}

/// The full-text indexes an index run writes, whose own tables (data, term index, document
/// sizes) the recorded digest covers. FTS5 writes them itself, and triggers on them recurse
/// into FTS5's own savepoints, so they are digested whole at the end of a run instead.
const DIGESTED: &[&str] = &["chunks_fts", "files_fts", "file_trigrams"];

/// The digest of the code's full-text indexes, row by row in key order.
fn fts_digest(conn: &Connection) -> rusqlite::Result<String> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for fts in DIGESTED {
        for (table, key, columns) in [
            ("data", "id", "id, block"),
            ("idx", "segid, term", "segid, term, pgno"),
            ("docsize", "id", "id, sz, origin"),
        ] {
            let exists = conn
                .query_row(
                    "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                    [format!("{fts}_{table}")],
                    |_| Ok(()),
                )
                .is_ok();
            if !exists {
                continue;
            }
            let mut stmt = conn.prepare(&format!(
                "SELECT quarry_sum({columns}) FROM {fts}_{table} ORDER BY {key}"
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                hasher.update(&row.get::<_, i64>(0)?.to_le_bytes());
            }
        }
    }
    Ok(format!("{:016x}", hasher.digest()))
}

/// Records the digest of the code's full-text indexes (the end of an index run).
pub(crate) fn record_fts_digest(conn: &Connection) -> rusqlite::Result<()> {
    let digest = fts_digest(conn)?;
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_digest', ?1)",
        [digest],
    )?;
    Ok(())
}

/// Whether the code's full-text indexes are as the last index run left them (unverified,
/// `None`, when no run recorded a digest since the last write).
pub(crate) fn check_fts(conn: &Connection) -> Option<String> {
    let recorded: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'fts_digest'", [], |r| {
            r.get(0)
        })
        .ok()?;
    register(conn).ok()?;
    match fts_digest(conn) {
        Ok(found) if found == recorded => None,
        Ok(_) => Some(
            "the full-text index differs from what the last index run wrote (its data, term index or document sizes changed)".into(),
        ),
        Err(e) => Some(format!("the full-text index: {e}")),
    }
}

enum Mismatch {
    Changed(i64),
    Unsummed(i64),
    Lost(i64),
}

/// The first row of `table` whose sum differs from the one kept, or that has none, or a kept
/// sum whose row is gone.
fn first_mismatch(
    conn: &Connection,
    table: &str,
    columns: &[&str],
) -> rusqlite::Result<Option<Mismatch>> {
    let summed = columns.join(", ");
    let mut rows = conn.prepare(&format!(
        "SELECT rowid, quarry_sum({summed}) FROM {table} ORDER BY rowid"
    ))?;
    let mut sums = conn.prepare("SELECT key, sum FROM row_sums WHERE tbl = ?1 ORDER BY key")?;
    let mut rows = rows.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
    let mut sums = sums.query_map([table], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
    let (mut row, mut sum) = (rows.next().transpose()?, sums.next().transpose()?);
    loop {
        match (row, sum) {
            (None, None) => return Ok(None),
            (Some((key, _)), None) => return Ok(Some(Mismatch::Unsummed(key))),
            (None, Some((key, _))) => return Ok(Some(Mismatch::Lost(key))),
            (Some((rk, rs)), Some((sk, ss))) => {
                if rk < sk {
                    return Ok(Some(Mismatch::Unsummed(rk)));
                }
                if sk < rk {
                    return Ok(Some(Mismatch::Lost(sk)));
                }
                if rs != ss {
                    return Ok(Some(Mismatch::Changed(rk)));
                }
                row = rows.next().transpose()?;
                sum = sums.next().transpose()?;
            }
        }
    }
}

/// A changed row, said as a user can place it (a chunk by its file and lines).
fn describe(conn: &Connection, table: &str, id: i64) -> String {
    if table == "chunks" {
        let place: rusqlite::Result<(String, i64, i64)> = conn.query_row(
                "SELECT CAST(f.path AS BLOB), c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1",
                [id],
                |r| {
                    let path: Vec<u8> = r.get(0)?;
                    Ok((String::from_utf8_lossy(&path).into_owned(), r.get(1)?, r.get(2)?))
                },
            );
        if let Ok((path, start, end)) = place {
            return format!("chunk {id} ({path}:{start}-{end}) no longer matches its checksum");
        }
    }
    format!("row {id} of {table} no longer matches its checksum")
}

/// Where damage was met while answering (a chunk's id and place), until the store is asked
/// (`Store::damage_noted`). One per process: a process answers from one index.
static NOTED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// A stored text as an answer shows it: its bad bytes replaced when it is not UTF-8, and the
/// damage noted (`place` says which chunk).
pub(crate) fn text_of(
    value: rusqlite::types::ValueRef<'_>,
    place: impl FnOnce() -> String,
) -> String {
    let bytes = match value {
        rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => t,
        _ => return String::new(),
    };
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => {
            if let Ok(mut noted) = NOTED.lock() {
                noted.get_or_insert_with(place);
            }
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

/// The damage noted since the last call, if any (and forgets it).
pub(crate) fn take_noted() -> Option<String> {
    NOTED.lock().ok()?.take()
}
