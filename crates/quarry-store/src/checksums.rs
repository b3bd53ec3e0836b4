//! A checksum of every chunk's stored text (`chunks.text_sum`, schema 13: xxh3-64 of the
//! text's bytes), which the deep check verifies. A few bytes changed inside a page's payload
//! pass SQLite's page and integrity checks; in a chunk's text they change what a search shows
//! and can make the text invalid UTF-8 (a search then failed with "invalid utf-8 sequence").
//! Texts read for an answer are read as bytes: one that is not UTF-8 is shown with its bad
//! bytes replaced, and the store notes the damage (`Store::damage_noted`) for the answer to
//! name with the command that repairs it.

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

/// The checksum stored beside a text (signed, as SQLite stores integers).
pub(crate) fn text_sum(text: &[u8]) -> i64 {
    xxhash_rust::xxh3::xxh3_64(text) as i64
}

/// `quarry_text_sum(text)` for the migration that fills the column of existing rows.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "quarry_text_sum",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let value = ctx.get_raw(0);
            let bytes = match value {
                rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => t,
                _ => &[][..],
            };
            Ok(text_sum(bytes))
        },
    )
}

/// The first chunk whose text no longer matches its checksum, as "where and how", or `None`.
pub(crate) fn check_texts(conn: &Connection) -> Option<String> {
    let mut stmt = conn
        .prepare(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.text, c.text_sum
             FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.text_sum IS NOT NULL",
        )
        .ok()?;
    let mut rows = stmt.query([]).ok()?;
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => return None,
            Err(e) => return Some(format!("chunk texts: {e}")),
        };
        let text = row.get_ref(4).ok()?;
        let bytes = match text {
            rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => t,
            _ => &[][..],
        };
        let sum: i64 = row.get(5).ok()?;
        if text_sum(bytes) != sum {
            let id: i64 = row.get(0).ok()?;
            let path: String = row.get(1).unwrap_or_default();
            let (start, end): (i64, i64) = (row.get(2).ok()?, row.get(3).ok()?);
            return Some(format!(
                "the stored text of chunk {id} ({path}:{start}-{end}) no longer matches its checksum"
            ));
        }
    }
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
