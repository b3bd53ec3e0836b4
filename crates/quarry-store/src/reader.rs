//! How a reader opens the index file, and how an error that says "this file cannot be opened
//! or written here" is told apart from damage.
//!
//! Why its own module: whether a reader may write the file decides how SQLite must open it. A
//! WAL reader writes the shared-memory file (`-shm`) beside the index; where it may not (a
//! read-only folder, a read-only mount, another user's index) it must open the file read-only,
//! and where no `-shm` exists and none can be made, as immutable. Mode bits cannot tell: a
//! file on a read-only mount (EROFS) keeps its `rw-` bits, and another user's `rw-r--r--` file
//! is not ours to write. So the kernel is asked (access(2), which applies the mount, the
//! user, ACLs), and SQLite's own answer is the last word: a read-write open that SQLite cannot
//! use (SQLITE_CANTOPEN, SQLITE_READONLY) is opened again read-only. None of this is damage,
//! and [`cannot_open_here`] lets the checks say so.

use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::path::Path;

/// Whether this process may write `path` (create files in it, for a folder), as the kernel
/// judges it: the mount (EROFS), the user and group, ACLs. Mode bits alone say "writable"
/// for a file on a read-only mount.
pub(crate) fn may_write(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call; access(2)
        // reads it and nothing else.
        unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
    }
}

/// Whether SQLite's error says the file cannot be opened or written here (permissions, a
/// read-only mount, a `-shm` that cannot be created), which is never damage.
pub(crate) fn cannot_open_here(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(code, _)
            if matches!(
                code.code,
                ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied
            )
    )
}

/// "cannot be opened here", with why when the kernel can tell: what a check says of a file it
/// could not open for a reason that is not its content.
pub(crate) fn cannot_open_message(path: &Path, e: &rusqlite::Error) -> String {
    let readable = std::fs::File::open(path).is_ok();
    let why = if !readable {
        "this user may not read it"
    } else if !may_write(path) || !path.parent().is_none_or(may_write) {
        "it is read-only here (a read-only mount or folder, or another user's file)"
    } else {
        "SQLite could not open it"
    };
    format!(
        "the index {} could not be opened ({e}): {why}; that is not damage",
        path.display()
    )
}

/// How long a reader asks again when a file being created does not open yet.
const CREATION_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a check (and any reader) waits for a lock another connection holds.
pub(crate) const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A reader's connection: read-write when this process may write the file and its folder
/// (WAL readers write the shared-memory file), else read-only, and immutable where no
/// shared-memory file exists and none can be made (nobody can be writing where nobody may
/// write). Never creates the file.
pub(crate) fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let wait = BUSY_WAIT;
    let writable_place = may_write(path) && path.parent().is_none_or(may_write);
    if writable_place {
        // A writer creating the file (its WAL and shared memory not there yet) can make
        // the first read fail to open for a moment: asked again for a short while.
        let deadline = std::time::Instant::now() + CREATION_WAIT;
        loop {
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            conn.busy_timeout(wait)?;
            match probe(&conn) {
                // Not writable after all (access(2) and SQLite can disagree: a file system
                // that refuses writes only at open), so open it read-only below.
                Err(e) if cannot_open_here(&e) && std::time::Instant::now() >= deadline => {
                    drop(conn);
                    break;
                }
                Err(e) if cannot_open_here(&e) => {
                    drop(conn);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                _ => return Ok(conn),
            }
        }
    }
    let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, read_only)?;
    conn.busy_timeout(wait)?;
    // A WAL file read without write access needs its shared-memory file; without one (and
    // none can be made), read the file as immutable. Any other answer (busy, locked, not a
    // database) is the connection's to give to its first statement.
    match probe(&conn) {
        // Where this process may write, someone else may be writing: never immutable (a
        // reader racing the first index read a half-made schema as damage).
        Err(e) if cannot_open_here(&e) && !writable_place => {}
        _ => return Ok(conn),
    }
    let uri = format!(
        "file:{}?immutable=1",
        path.to_string_lossy()
            .replace('%', "%25")
            .replace('?', "%3f")
            .replace('#', "%23")
    );
    let conn = Connection::open_with_flags(uri, read_only | OpenFlags::SQLITE_OPEN_URI)?;
    conn.busy_timeout(wait)?;
    Ok(conn)
}

/// The first read of a connection: where SQLite opens the WAL and its shared memory.
fn probe(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA schema_version", [], |r| r.get(0))
}
