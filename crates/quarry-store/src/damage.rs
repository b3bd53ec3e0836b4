//! Finding damage in an index file and moving a damaged one aside: the quick check (pages),
//! the deep one (integrity, full-text indexes, vectors), and turning an error met while
//! using the index into "the index is damaged" when a check says so. The checks open the file
//! as a reader does (reader.rs: read-only, or immutable, where nobody may write its WAL).

use std::path::{Path, PathBuf};

use crate::reader::{cannot_open_here, cannot_open_message, open_reader, BUSY_WAIT};
use anyhow::{Context, Result};
use rusqlite::Connection;

/// What a check of an index file found. Only `Damaged` is damage: a file another connection
/// holds locked past the wait (`sqlite3` in a shell, a backup tool, a writer in exclusive mode)
/// or one this process may not open (no permission to read it) is `Busy`, and nothing is ever
/// moved aside for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    Sound,
    /// What is wrong, as the check found it.
    Damaged(String),
    /// Why the check could not read the file: who holds it, when that can be told, or why it
    /// cannot be opened here.
    Busy(String),
}

impl Checked {
    pub fn is_damaged(&self) -> bool {
        matches!(self, Checked::Damaged(_))
    }

    /// An error met by a check: busy or locked is `Busy` (naming the holders), so is a file
    /// that cannot be opened here (SQLITE_CANTOPEN, SQLITE_READONLY: permissions, a read-only
    /// mount); the rest `Damaged`.
    pub(crate) fn from_error(path: &Path, e: &rusqlite::Error) -> Checked {
        if is_busy(e) {
            Checked::Busy(busy_message(path))
        } else if cannot_open_here(e) {
            Checked::Busy(cannot_open_message(path, e))
        } else {
            Checked::Damaged(e.to_string())
        }
    }
}

/// Whether SQLite says the file is busy or locked (another connection's lock), not bad.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(code, _)
            if matches!(code.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// "locked by another connection", with the processes holding locks on the file now.
pub(crate) fn busy_message(path: &Path) -> String {
    let holders = crate::holders::lock_holders(path);
    let named = if holders.is_empty() {
        String::from("another connection")
    } else {
        holders
            .iter()
            .map(|(pid, command)| format!("pid {pid} `{command}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "the index {} is locked by {named} past {} s; that is not damage: let it finish or close it, then try again",
        path.display(),
        BUSY_WAIT.as_secs()
    )
}

/// A file that was an index and is now empty: not an empty workspace (an empty workspace has
/// no file, or a file holding the schema).
fn emptied(path: &Path) -> Option<String> {
    lost_content(path)
        .then(|| "the file is empty (0 bytes): it held an index and lost it".to_string())
}

/// Whether the index file at `path` is empty though it held an index. A first writer marks
/// the file it creates (`creation_mark`) until its schema is in: one stopped before that (killed
/// right after SQLite created the file) leaves an empty file that never held anything, which
/// the next writer builds on and a reader waits for, as for a file being created.
pub(crate) fn lost_content(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0)
        && !creation_mark(path).exists()
}

/// The file a first writer keeps beside the index it creates until the schema is in it.
pub(crate) fn creation_mark(path: &Path) -> std::path::PathBuf {
    let mut mark = path.as_os_str().to_owned();
    mark.push("-creating");
    mark.into()
}

/// `PRAGMA quick_check` of the index at `path`, then its schema against the digest recorded
/// when it was written. Reads the whole file, and writes nothing: run it on error paths and
/// on request (`status --check`, `index --rebuild`), not on every open.
pub fn check_file(path: &Path) -> Checked {
    if let Some(problem) = emptied(path) {
        return Checked::Damaged(problem);
    }
    // Opened as a reader opens it: a WAL file that nobody may write (no shared-memory file,
    // a read-only folder) is read as immutable, not reported as damaged.
    let conn = match open_reader(path) {
        Ok(c) => c,
        Err(e) => return Checked::from_error(path, &e),
    };
    // The trigram table's tokenizer, for the checks that open it. A file it cannot be
    // registered on (not a database) is named by the checks below.
    let _ = crate::trigram_tokenizer::register(&conn);
    let rows = conn.prepare("PRAGMA quick_check(5)").and_then(|mut stmt| {
        stmt.query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<String>>>()
    });
    match rows {
        Ok(rows) if rows == ["ok"] => match crate::schema::problem(&conn) {
            Ok(None) => Checked::Sound,
            Ok(Some(problem)) => Checked::Damaged(problem),
            Err(e) => Checked::from_error(path, &e),
        },
        Ok(rows) => Checked::Damaged(rows.join("; ")),
        Err(e) => Checked::from_error(path, &e),
    }
}

/// [`check_file`], then what a page-level check cannot see: SQLite's full integrity check
/// (indexes against their tables), each full-text index's own integrity check, every stored
/// vector (its length a whole number of floats, all of one dimension, every value finite, unit
/// length as the embedder stores them) and every stored text against its checksum. Small
/// damage inside a page's payload — a few bytes of an FTS segment, of a vector or of a chunk's
/// text — passes the quick check and changes answers; this finds it. Reads everything
/// (seconds on a large index) and writes nothing to the index: the full-text checks, which
/// SQLite runs as writes, run on a private copy.
pub fn check_file_deep(path: &Path) -> Checked {
    let quick = check_file(path);
    if quick != Checked::Sound {
        return quick;
    }
    let conn = match open_reader(path) {
        Ok(c) => c,
        Err(e) => return Checked::from_error(path, &e),
    };
    let _ = crate::trigram_tokenizer::register(&conn);
    let integrity: rusqlite::Result<Vec<String>> = conn
        .prepare("PRAGMA integrity_check(5)")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect());
    match integrity {
        Ok(rows) if rows == ["ok"] => {}
        Ok(rows) => return Checked::Damaged(rows.join("; ")),
        Err(e) => return Checked::from_error(path, &e),
    }
    for table in ["embeddings", "commit_vectors"] {
        if let Some(problem) = check_vectors(&conn, table) {
            return Checked::Damaged(problem);
        }
    }
    if let Some(problem) = crate::checksums::check_rows(&conn) {
        return Checked::Damaged(problem);
    }
    if let Some(problem) = crate::checksums::check_fts(&conn) {
        return Checked::Damaged(problem);
    }
    check_full_text_on_a_copy(path, &conn)
}

/// Each full-text index's own integrity check, on a consistent copy of the file (SQLite's
/// backup, in one step: one read transaction): FTS5 runs its check as an INSERT, which would
/// need the write lock (and fail on a read-only index, or wait on a locked one) if run on the
/// index itself.
fn check_full_text_on_a_copy(path: &Path, conn: &Connection) -> Checked {
    let tables: Vec<&str> = ["chunks_fts", "files_fts", "commits_fts", "file_trigrams"]
        .into_iter()
        .filter(|table| {
            conn.query_row(
                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [table],
                |_| Ok(()),
            )
            .is_ok()
        })
        .collect();
    if tables.is_empty() {
        return Checked::Sound;
    }
    // The copy is SQLite's temporary database (an empty file name): a file in the temporary
    // folder that SQLite unlinks as soon as it is opened, its pages held in memory up to the
    // cache size and spilled to that file beyond, so nothing is left behind whatever ends
    // the check (an error, Ctrl-C, kill -9), and memory stays bounded on a large index. (A
    // folder beside the index was left behind when the check was stopped, and cannot be made
    // in a read-only folder anyway.)
    let copied = Connection::open("").and_then(|mut copy| {
        crate::trigram_tokenizer::register(&copy)?;
        copy_in_one_step(conn, &mut copy)?;
        Ok(copy)
    });
    let copy = match copied {
        Ok(copy) => copy,
        Err(e) if is_busy(&e) => return Checked::Busy(busy_message(path)),
        // No room for the copy, or no temporary folder: the index was not read wrong.
        Err(e) => {
            return Checked::Busy(format!(
                "the full-text indexes of {} could not be checked: copying the index failed ({e}); that is not damage",
                path.display()
            ))
        }
    };
    for table in tables {
        let checked = copy.execute(
            &format!("INSERT INTO {table}({table}) VALUES('integrity-check')"),
            [],
        );
        if let Err(e) = checked {
            return Checked::Damaged(format!("the full-text index {table}: {e}"));
        }
    }
    Checked::Sound
}

/// Copies the index `from` reads into `to`, every page in one backup step: one read
/// transaction, so one consistent snapshot in bounded time. A backup in several steps starts
/// over whenever the source may have changed between them, and a reader that may not write a
/// WAL index's shared memory (a read-only folder or mount holding a `-wal` and `-shm` left by
/// a writer) cannot trust it, so to the backup every step's read transaction is a change: it
/// restarted after every step, forever (measured: 1,024 pages a step on a 4,262-page index,
/// 3,238 pages left after each of thousands of steps).
fn copy_in_one_step(from: &Connection, to: &mut Connection) -> rusqlite::Result<()> {
    use rusqlite::backup::{Backup, StepResult};
    let backup = Backup::new(from, to)?;
    match backup.step(-1)? {
        StepResult::Done => Ok(()),
        // A step of every page ends done, or fails; anything else is a lock in the way.
        _ => Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("the backup of the index did not finish in one step".into()),
        )),
    }
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
    let sqlite = err
        .chain()
        .find_map(|e| e.downcast_ref::<rusqlite::Error>());
    let Some(sqlite) = sqlite else {
        return err;
    };
    if is_busy(sqlite) {
        // Not damage: say who holds it.
        return err.context(busy_message(path));
    }
    if cannot_open_here(sqlite) {
        // Not damage either: permissions, a read-only mount.
        let said = cannot_open_message(path, sqlite);
        return err.context(said);
    }
    if is_corrupt(&err) || !path.is_file() {
        return err;
    }
    match check_file(path) {
        Checked::Damaged(problem) => anyhow::Error::new(CorruptIndex {
            path: path.to_path_buf(),
            detail: format!("{problem}; met as: {err:#}"),
        }),
        Checked::Sound | Checked::Busy(_) => err,
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
