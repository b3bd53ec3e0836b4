//! `quarry_trigram`, the trigram table's FTS5 tokenizer, registered on every connection.
//!
//! A document it is given is already its file's distinct trigrams, three characters each
//! (`quarry_core::trigrams::distinct_trigrams`, found on the indexing threads): it hands them to
//! FTS5 as they are. Anything else (a query's quoted trigram) is cut into windows of three
//! characters, folded as the documents were. The table stores only which files hold a trigram
//! (`detail=none`), so this holds what FTS5's own `trigram` tokenizer held over the whole
//! text, at a tenth of the writer's hashing (quarry-core's trigrams.rs says why).
//!
//! Written by hand: FTS5 takes a tokenizer only through its C API (`fts5_api.xCreateTokenizer`),
//! and no crate registers one.

use rusqlite::ffi;
use rusqlite::Connection;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;

use crate::weighted_bm25::{fail, fts5_api};

/// The tokenizer's name, as the table's `tokenize` option gives it.
pub(crate) const NAME: &CStr = c"quarry_trigram";

type TokenCallback =
    unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int;

/// Registers `quarry_trigram` on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is `conn`'s own; FTS5 copies the tokenizer's table of functions when
    // it registers it, and the functions hold no state (no user data, nothing to destroy).
    unsafe {
        let api = fts5_api(conn.handle())?;
        let create = (*api)
            .xCreateTokenizer
            .ok_or_else(|| fail(ffi::SQLITE_MISUSE, "FTS5 cannot create tokenizers"))?;
        let mut tokenizer = ffi::fts5_tokenizer {
            xCreate: Some(create_tokenizer),
            xDelete: Some(delete_tokenizer),
            xTokenize: Some(tokenize),
        };
        let rc = create(api, NAME.as_ptr(), ptr::null_mut(), &mut tokenizer, None);
        if rc != ffi::SQLITE_OK {
            return Err(fail(rc, "cannot register quarry_trigram"));
        }
    }
    Ok(())
}

/// The one tokenizer instance: it has no state, but FTS5 wants a non-null handle.
static INSTANCE: u8 = 0;

unsafe extern "C" fn create_tokenizer(
    _user_data: *mut c_void,
    _args: *mut *const c_char,
    _n_args: c_int,
    out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    *out = (&INSTANCE as *const u8).cast_mut().cast();
    ffi::SQLITE_OK
}

unsafe extern "C" fn delete_tokenizer(_tokenizer: *mut ffi::Fts5Tokenizer) {}

unsafe extern "C" fn tokenize(
    _tokenizer: *mut ffi::Fts5Tokenizer,
    ctx: *mut c_void,
    flags: c_int,
    text: *const c_char,
    n_text: c_int,
    token: Option<TokenCallback>,
) -> c_int {
    let Some(token) = token else {
        return ffi::SQLITE_MISUSE;
    };
    if text.is_null() || n_text <= 0 {
        return ffi::SQLITE_OK;
    }
    // SAFETY: FTS5 passes `n_text` readable bytes at `text` for the length of this call.
    let bytes = std::slice::from_raw_parts(text.cast::<u8>(), n_text as usize);
    let emit = |gram: &str, start: usize, end: usize| {
        // SAFETY: `ctx` and `token` are FTS5's, for this call; the gram outlives the call.
        token(
            ctx,
            0,
            gram.as_ptr().cast(),
            gram.len() as c_int,
            start as c_int,
            end as c_int,
        )
    };
    let rc = if flags & ffi::FTS5_TOKENIZE_DOCUMENT != 0 {
        match std::str::from_utf8(bytes) {
            Ok(grams) => each_stored_gram(grams, emit),
            // Never written by quarry: such a row holds no trigram, and grep reads the file.
            Err(_) => ffi::SQLITE_OK,
        }
    } else {
        each_window(&String::from_utf8_lossy(bytes), emit)
    };
    if rc == ffi::SQLITE_DONE {
        ffi::SQLITE_OK
    } else {
        rc
    }
}

/// Calls `emit` on each three characters of `grams` (a document: distinct trigrams, already
/// folded), with their byte range; stops at the first answer that is not `SQLITE_OK`.
fn each_stored_gram(grams: &str, mut emit: impl FnMut(&str, usize, usize) -> c_int) -> c_int {
    let mut starts = grams.char_indices().map(|(i, _)| i).step_by(3).peekable();
    while let Some(start) = starts.next() {
        let end = starts.peek().copied().unwrap_or(grams.len());
        let rc = emit(&grams[start..end], start, end);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    ffi::SQLITE_OK
}

/// Calls `emit` on each window of three characters of `text`, folded as the documents'
/// trigrams are, with the window's byte range in `text`.
fn each_window(text: &str, mut emit: impl FnMut(&str, usize, usize) -> c_int) -> c_int {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut gram = String::new();
    for (i, window) in chars.windows(3).enumerate() {
        gram.clear();
        gram.extend(window.iter().map(|&(_, c)| quarry_core::trigrams::fold(c)));
        let end = chars.get(i + 3).map_or(text.len(), |&(at, _)| at);
        let rc = emit(&gram, window[0].0, end);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over the same texts, the table answers every trigram query with exactly the files whose
    /// folded text holds that trigram: what FTS5's `trigram` tokenizer answered over the whole
    /// texts, where their folding agrees (ASCII).
    #[test]
    fn the_table_finds_the_files_holding_each_trigram() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE mine USING fts5(text, content = '', contentless_delete = 1,
                 detail = 'none', tokenize = 'quarry_trigram');
             CREATE VIRTUAL TABLE theirs USING fts5(text, content = '', contentless_delete = 1,
                 detail = 'none', tokenize = 'trigram');",
        )
        .unwrap();
        let texts = [
            "def simplify(expr):\n    return Expr(expr)",
            "let x = SPAWN_blocking(|| ());",
            "class Rational: pass  # \"quoted\" text",
            "naïve café — ΣΑΣ, straße",
            "ab",
        ];
        for (id, text) in texts.iter().enumerate() {
            let grams = quarry_core::trigrams::distinct_trigrams(text);
            conn.execute(
                "INSERT INTO mine(rowid, text) VALUES (?1, ?2)",
                (id as i64, grams),
            )
            .unwrap();
            conn.execute(
                "INSERT INTO theirs(rowid, text) VALUES (?1, ?2)",
                (id as i64, *text),
            )
            .unwrap();
        }
        let rows = |table: &str, query: &str| -> Vec<i64> {
            conn.prepare(&format!(
                "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid"
            ))
            .unwrap()
            .query_map([query], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        let mut asked = 0;
        for text in texts {
            for window in quarry_core::trigrams::windows(text) {
                let query = format!("\"{}\"", window.replace('"', "\"\""));
                let holding: Vec<i64> = texts
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| quarry_core::trigrams::windows(t).contains(&window))
                    .map(|(i, _)| i as i64)
                    .collect();
                assert_eq!(rows("mine", &query), holding, "{query}");
                if window.is_ascii() {
                    assert_eq!(rows("theirs", &query), holding, "{query}");
                }
                asked += 1;
            }
        }
        assert!(asked > 100);
        // A literal as grep asks for it: each of its windows, folded by the tokenizer.
        let literal = |s: &str| {
            quarry_core::Requirement::Contains(s.into())
                .fts5_query()
                .unwrap()
        };
        assert_eq!(rows("mine", &literal("SIMPLIFY(")), vec![0]);
        assert_eq!(rows("mine", &literal("\"quoted\"")), vec![2]);
        assert_eq!(rows("mine", &literal("straße")), vec![3]);
        // A deleted row is gone.
        conn.execute("DELETE FROM mine WHERE rowid = 0", [])
            .unwrap();
        assert!(rows("mine", &literal("simplify")).is_empty());
    }
}
