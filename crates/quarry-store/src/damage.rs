//! Finding damage in an index file and moving a damaged one aside: the quick check (pages),
//! the deep one (integrity, full-text indexes, vectors), and turning an error met while
//! using the index into "the index is damaged" when a check says so; and how a reader opens
//! the file (read-only, or as immutable where nobody may write its WAL), which the checks share.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::Connection;

/// `PRAGMA quick_check` of the index at `path`, then its schema against the digest recorded
/// when it was written: `None` when it is sound, else what is wrong (the first problems
/// SQLite lists). Reads the whole file: run it on error paths and on
/// request (`status --check`, `index --rebuild`), not on every open.
pub fn check_file(path: &Path) -> Option<String> {
    // Opened as a reader opens it: a WAL file that nobody may write (no shared-memory file,
    // a read-only folder) is read as immutable, not reported as damaged.
    let conn = match open_reader(path) {
        Ok(c) => c,
        Err(e) => return Some(e.to_string()),
    };
    let rows = conn.prepare("PRAGMA quick_check(5)").and_then(|mut stmt| {
        stmt.query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<String>>>()
    });
    match rows {
        Ok(rows) if rows == ["ok"] => {
            crate::schema::problem(&conn).unwrap_or_else(|e| Some(e.to_string()))
        }
        Ok(rows) => Some(rows.join("; ")),
        Err(e) => Some(e.to_string()),
    }
}

/// [`check_file`], then what a page-level check cannot see: SQLite's full integrity check
/// (indexes against their tables), each full-text index's own integrity check, and every
/// stored vector (its length a whole number of floats, all of one dimension, every value
/// finite, unit length as the embedder stores them). Small damage inside a page's payload —
/// a few bytes of an FTS segment or of a vector — passes the quick check and changes
/// answers; this finds it. Reads everything: seconds on a large index.
pub fn check_file_deep(path: &Path) -> Option<String> {
    if let Some(problem) = check_file(path) {
        return Some(problem);
    }
    let conn = match open_reader(path) {
        Ok(c) => c,
        Err(e) => return Some(e.to_string()),
    };
    let integrity: rusqlite::Result<Vec<String>> = conn
        .prepare("PRAGMA integrity_check(5)")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect());
    match integrity {
        Ok(rows) if rows == ["ok"] => {}
        Ok(rows) => return Some(rows.join("; ")),
        Err(e) => return Some(e.to_string()),
    }
    for table in ["chunks_fts", "files_fts", "commits_fts", "file_trigrams"] {
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
        // Read-only: FTS5 checks its index without writing (the INSERT is its command form,
        // run in a transaction that is rolled back).
        let checked = conn
            .execute_batch("BEGIN")
            .and_then(|()| {
                conn.execute(
                    &format!("INSERT INTO {table}({table}) VALUES('integrity-check')"),
                    [],
                )
            })
            .map(|_| ());
        let _ = conn.execute_batch("ROLLBACK");
        if let Err(e) = checked {
            return Some(format!("the full-text index {table}: {e}"));
        }
    }
    for table in ["embeddings", "commit_vectors"] {
        if let Some(problem) = check_vectors(&conn, table) {
            return Some(problem);
        }
    }
    None
}

/// Every vector of `table` (a `vector` blob column) well formed and of unit length.
fn check_vectors(conn: &Connection, table: &str) -> Option<String> {
    let mut stmt = conn
        .prepare(&format!("SELECT rowid, vector FROM {table}"))
        .ok()?;
    let mut rows = stmt.query([]).ok()?;
    let mut dims = None;
    while let Ok(Some(row)) = rows.next() {
        let id: i64 = row.get(0).ok()?;
        let bytes: Vec<u8> = match row.get(1) {
            Ok(b) => b,
            Err(e) => return Some(format!("{table} row {id}: {e}")),
        };
        if bytes.len() % 4 != 0 || bytes.is_empty() {
            return Some(format!(
                "{table} row {id}: {} bytes is not a vector",
                bytes.len()
            ));
        }
        let n = bytes.len() / 4;
        if *dims.get_or_insert(n) != n {
            return Some(format!(
                "{table} row {id}: {n} dimensions among vectors of {}",
                dims.unwrap_or(n)
            ));
        }
        let mut norm = 0f64;
        for b in bytes.chunks_exact(4) {
            let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if !x.is_finite() {
                return Some(format!("{table} row {id}: a value that is not a number"));
            }
            norm += f64::from(x) * f64::from(x);
        }
        // Unit length, as every embedder stores them (a zero vector aside).
        if norm > 0.0 && (norm.sqrt() - 1.0).abs() > 1e-3 {
            return Some(format!(
                "{table} row {id}: length {:.4}, not 1",
                norm.sqrt()
            ));
        }
    }
    None
}

/// An error met while using the index at `path`, with damage named when it is the cause: a
/// SQL error that is not already "damaged" triggers a quick check of the file, and a file
/// that fails it turns the error into [`CorruptIndex`] (whose message says what works).
pub fn diagnose(path: &Path, err: anyhow::Error) -> anyhow::Error {
    let from_sqlite = err.chain().any(|e| e.is::<rusqlite::Error>());
    if is_corrupt(&err) || !from_sqlite || !path.is_file() {
        return err;
    }
    match check_file(path) {
        Some(problem) => anyhow::Error::new(CorruptIndex {
            path: path.to_path_buf(),
            detail: format!("{problem}; met as: {err:#}"),
        }),
        None => err,
    }
}

/// Moves the index at `path` (and its WAL and shared-memory files) aside to
/// `PATH.damaged-<unix seconds>`, kept for inspection; returns the new name of the main file.
pub fn move_aside(path: &Path) -> Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let target = PathBuf::from(format!("{}.damaged-{stamp}", path.display()));
    for suffix in ["", "-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", path.display()));
        let to = PathBuf::from(format!("{}{suffix}", target.display()));
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot move the damaged index {} aside", from.display())
                })
            }
        }
    }
    Ok(target)
}

/// The index file is damaged or not an index at all.
#[derive(Debug)]
pub struct CorruptIndex {
    pub path: PathBuf,
    pub detail: String,
}

impl std::fmt::Display for CorruptIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the index file {} is damaged ({}); `quarry index --rebuild PATH` moves it aside and builds a new one",
            self.path.display(),
            self.detail
        )
    }
}

impl std::error::Error for CorruptIndex {}

/// True when `err` (at any depth) says the index file is damaged.
pub fn is_corrupt(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<CorruptIndex>())
}

/// A reader's connection: read-write when the file and its folder may be written (WAL
/// readers write the shared-memory index), else read-only; never creates the file.
pub(crate) fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    use rusqlite::OpenFlags;
    let writable = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.permissions().readonly());
    let dir_writable = path.parent().is_none_or(writable);
    if writable(path) && dir_writable {
        return Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        );
    }
    let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, read_only)?;
    // A WAL file read without write access needs its shared-memory file; without one,
    // read the file as immutable (no writer can be at work where nobody may write).
    if conn
        .query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))
        .is_ok()
    {
        return Ok(conn);
    }
    let uri = format!(
        "file:{}?immutable=1",
        path.to_string_lossy()
            .replace('%', "%25")
            .replace('?', "%3f")
            .replace('#', "%23")
    );
    Connection::open_with_flags(uri, read_only | OpenFlags::SQLITE_OPEN_URI)
}
