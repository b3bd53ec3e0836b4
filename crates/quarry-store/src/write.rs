//! An index batch written into the SQLite file: each file's rows in the plain tables (files,
//! chunks, symbols, calls) and in the full-text tables (chunks, whole files, trigrams), the
//! replaced files' rows removed, inside the caller's transaction.

use quarry_core::store::{IndexBatch, SearchFields};
use quarry_core::tokens;
use rusqlite::{params, Connection, OptionalExtension};

use crate::vectors;

/// A batch in two steps: the plain tables first, the full-text tables last.
///
/// Why: FTS5 writes the terms it holds in memory out to a new segment whenever a statement
/// with a statement journal starts in its transaction (its `xSavepoint`), and every insert
/// into `files` and `chunks` is one (their triggers). Interleaved, each chunk's insert made
/// a segment of the one chunk before it, and FTS5 spent as long merging those segments:
/// on sympy, flushing and merging were about two thirds of the writer thread's time. With
/// the full-text rows last, each table flushes once per batch.
pub(crate) fn write_batch(tx: &Connection, repo: i64, batch: &IndexBatch) -> rusqlite::Result<()> {
    vectors::invalidate_coverage(tx)?;
    let text_rows = write_plain_rows(tx, repo, batch)?;
    write_text_rows(tx, text_rows)
}

/// Files, chunks, symbols and calls of a batch (deleted and replaced files' rows removed);
/// what the full-text tables are to lose and gain, for `write_text_rows`.
fn write_plain_rows<'b>(
    tx: &Connection,
    repo: i64,
    batch: &'b IndexBatch,
) -> rusqlite::Result<TextRows<'b>> {
    let mut find = tx.prepare_cached("SELECT id FROM files WHERE repo_id = ?1 AND path = ?2")?;
    let mut chunks_of = tx.prepare_cached("SELECT id FROM chunks WHERE file_id = ?1")?;
    let mut delete_file = tx.prepare_cached("DELETE FROM files WHERE id = ?1")?;
    let mut insert_file = tx.prepare_cached(
        "INSERT INTO files(repo_id, path, language, hash, size, mtime_ns, stem, trigrams) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut insert_chunk = tx.prepare_cached(
        "INSERT INTO chunks(file_id, start_line, end_line, symbol, kind, parent, signature, text, embed_hash, language, page, cell)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    let mut insert_symbol = tx.prepare_cached(
        "INSERT INTO symbols(file_id, name, kind, parent, start_line, end_line, signature)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut insert_call = tx.prepare_cached(
        "INSERT INTO calls(file_id, caller, callee, line) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut touch = tx.prepare_cached(
        "UPDATE files SET hash = ?3, size = ?4, mtime_ns = ?5 WHERE repo_id = ?1 AND path = ?2",
    )?;
    let mut rows = TextRows::default();
    // A file's old rows go (its chunks by cascade); their full-text rows go later.
    let mut remove = |path: &str, rows: &mut TextRows| -> rusqlite::Result<()> {
        let Some(id) = find
            .query_row(params![repo, path], |r| r.get::<_, i64>(0))
            .optional()?
        else {
            return Ok(());
        };
        for chunk in chunks_of.query_map([id], |r| r.get::<_, i64>(0))? {
            rows.old_chunks.push(chunk?);
        }
        rows.old_files.push(id);
        delete_file.execute([id])?;
        Ok(())
    };
    for path in &batch.deleted {
        remove(path, &mut rows)?;
    }
    for (path, state) in &batch.touched {
        touch.execute(params![
            repo,
            path,
            state.hash,
            state.size as i64,
            state.mtime_ns
        ])?;
    }
    for file in &batch.upserts {
        remove(&file.path, &mut rows)?;
        insert_file.execute(params![
            repo,
            file.path,
            file.language.name(),
            file.state.hash,
            file.state.size as i64,
            file.state.mtime_ns,
            tokens::file_stem_key(&file.path),
            file.grep_text.is_some()
        ])?;
        let file_id = tx.last_insert_rowid();
        if let Some(text) = &file.grep_text {
            let grams = match &file.grep_trigrams {
                Some(grams) => std::borrow::Cow::Borrowed(grams.as_str()),
                None => quarry_core::trigrams::distinct_trigrams(text).into(),
            };
            rows.trigrams.push((file_id, grams));
        }
        let (chunk_fields, file_fields) = file.search_fields();
        for (chunk, fields) in file.content.chunks.iter().zip(chunk_fields) {
            let embed_hash = quarry_core::chunk_embed_hash(&file.path, chunk);
            insert_chunk.execute(params![
                file_id,
                chunk.start_line,
                chunk.end_line,
                chunk.symbol,
                chunk.kind,
                chunk.parent,
                chunk.signature,
                chunk.text,
                embed_hash,
                (chunk.language != file.language).then(|| chunk.language.name()),
                chunk.page,
                chunk.cell
            ])?;
            rows.chunks.push((tx.last_insert_rowid(), fields));
        }
        rows.files.push((file_id, file_fields));
        for s in &file.content.symbols {
            insert_symbol.execute(params![
                file_id,
                s.name,
                s.kind,
                s.parent,
                s.start_line,
                s.end_line,
                s.signature
            ])?;
        }
        for c in &file.content.calls {
            insert_call.execute(params![file_id, c.caller, c.callee, c.line])?;
        }
    }
    Ok(rows)
}

/// The full-text tables' side of a batch: old rows out, new rows in, each in rising
/// rowid order (FTS5 also writes out what it holds when a rowid goes back).
fn write_text_rows(tx: &Connection, mut rows: TextRows) -> rusqlite::Result<()> {
    rows.old_chunks.sort_unstable();
    rows.old_files.sort_unstable();
    for (table, ids) in [
        ("chunks_fts", &rows.old_chunks),
        ("files_fts", &rows.old_files),
        ("file_trigrams", &rows.old_files),
    ] {
        let mut delete = tx.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))?;
        for id in ids {
            delete.execute([id])?;
        }
    }
    let mut insert_trigrams =
        tx.prepare_cached("INSERT INTO file_trigrams(rowid, text) VALUES (?1, ?2)")?;
    for (id, text) in &rows.trigrams {
        insert_trigrams.execute(params![id, text])?;
    }
    for (table, fields) in [("chunks_fts", &rows.chunks), ("files_fts", &rows.files)] {
        let mut insert = tx.prepare_cached(&format!(
            "INSERT INTO {table}(rowid, path, symbols, body) VALUES (?1, ?2, ?3, ?4)"
        ))?;
        for (id, f) in fields {
            insert.execute(params![id, f.path, f.symbols, f.body])?;
        }
    }
    Ok(())
}

/// What a batch's full-text tables lose and gain (`write_batch`).
#[derive(Default)]
struct TextRows<'b> {
    /// Rowids of the chunks and files the batch removed or replaced.
    old_chunks: Vec<i64>,
    old_files: Vec<i64>,
    /// Each new file's distinct trigrams, for the trigram table.
    trigrams: Vec<(i64, std::borrow::Cow<'b, str>)>,
    chunks: Vec<(i64, SearchFields)>,
    files: Vec<(i64, SearchFields)>,
}
