//! Writing a batch: one transaction, rows streamed in with COPY straight into their tables,
//! each with its full-text vector built by quarry from its code-aware tokens (the tokens the
//! embedded store gives FTS5; text_vector.rs builds the vector the server would), then the
//! rows' entries added to the posting lists (postings.rs). A batch is all there or not at
//! all; readers see the previous state until it commits.

use anyhow::Result;
use quarry_core::store::IndexBatch;
use quarry_core::tokens;

use crate::connection::{PgTransaction, Queries};
use crate::copy_rows::{copy, row};
use crate::postings;
use crate::term_counts;
use crate::text_vector::{Lexicon, NewEntries, TextVector};

/// A batch made ready to write: everything quarry computes from it (the rows as COPY data,
/// their text vectors and posting-list entries), so that its transaction only streams.
pub(crate) struct Prepared {
    repo: i64,
    /// Paths whose rows go: deleted files and the files written anew.
    replaced: Vec<String>,
    /// Files unchanged but touched: path, hash, size, mtime.
    touched: (Vec<String>, Vec<String>, Vec<i64>, Vec<i64>),
    files: Vec<u8>,
    chunks: Vec<u8>,
    symbols: Vec<u8>,
    calls: Vec<u8>,
    file_grams: Vec<u8>,
    file_entries: postings::Staged,
    chunk_entries: postings::Staged,
}

/// Prepares `batch` for `repo`: learns its tokens' lexemes and takes its row ids from the
/// server on `c` (neither changes what anyone reads), builds everything else here.
pub(crate) fn prepare(
    c: &mut impl Queries,
    repo: i64,
    batch: &IndexBatch,
    lexicon: &mut Lexicon,
) -> Result<Prepared> {
    let replaced: Vec<String> = batch
        .deleted
        .iter()
        .cloned()
        .chain(batch.upserts.iter().map(|f| f.path.clone()))
        .collect();
    let touched = (
        batch.touched.iter().map(|(p, _)| p.clone()).collect(),
        batch.touched.iter().map(|(_, s)| s.hash.clone()).collect(),
        batch.touched.iter().map(|(_, s)| s.size as i64).collect(),
        batch.touched.iter().map(|(_, s)| s.mtime_ns).collect(),
    );
    let needed = batch
        .upserts
        .iter()
        .map(|f| 1 + f.content.chunks.len())
        .sum::<usize>() as i64;
    let ids: Vec<i64> = if needed == 0 {
        Vec::new()
    } else {
        c.query(
            "SELECT nextval('quarry_ids') FROM generate_series(1, $1::bigint)",
            &[&needed],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect()
    };
    let mut ids = ids.into_iter();
    let fields: Vec<_> = batch.upserts.iter().map(|f| f.search_fields()).collect();
    lexicon.learn(
        c,
        fields.iter().flat_map(|(chunks, file)| {
            chunks
                .iter()
                .chain(std::iter::once(file))
                .flat_map(|f| [f.path.as_str(), f.symbols.as_str(), f.body.as_str()])
        }),
    )?;
    let (mut files, mut chunks, mut symbols, mut calls, mut file_grams) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut chunk_entries, mut file_entries) = (NewEntries::default(), NewEntries::default());
    let (mut vector, mut literal) = (TextVector::default(), String::new());
    let repo_text = repo.to_string();
    for (file, (chunk_fields, file_fields)) in batch.upserts.iter().zip(&fields) {
        let file_id = ids.next().unwrap_or_default();
        let file_id_text = file_id.to_string();
        for (chunk, fields) in file.content.chunks.iter().zip(chunk_fields) {
            let id = ids.next().unwrap_or_default();
            lexicon.vector(&[&fields.path, &fields.symbols, &fields.body], &mut vector);
            let n_tokens = fields.token_count();
            chunk_entries.add(id, n_tokens, &vector);
            let embed_hash = quarry_core::chunk_embed_hash(&file.path, chunk);
            row(
                &mut chunks,
                &[
                    Some(&repo_text),
                    Some(&id.to_string()),
                    Some(&file_id_text),
                    Some(&chunk.start_line.to_string()),
                    Some(&chunk.end_line.to_string()),
                    chunk.symbol.as_deref(),
                    Some(&chunk.kind),
                    chunk.parent.as_deref(),
                    chunk.signature.as_deref(),
                    Some(&chunk.text),
                    Some(&embed_hash),
                    Some(&n_tokens.to_string()),
                    Some(vector.literal(lexicon, &mut literal)),
                    (chunk.language != file.language).then(|| chunk.language.name()),
                    chunk.page.map(|p| p.to_string()).as_deref(),
                    chunk.cell.map(|c| c.to_string()).as_deref(),
                ],
            );
        }
        lexicon.vector(
            &[&file_fields.path, &file_fields.symbols, &file_fields.body],
            &mut vector,
        );
        let n_tokens = file_fields.token_count();
        file_entries.add(file_id, n_tokens, &vector);
        row(
            &mut files,
            &[
                Some(&repo_text),
                Some(&file_id_text),
                Some(&file.path),
                Some(file.language.name()),
                Some(&file.state.hash),
                Some(&file.state.size.to_string()),
                Some(&file.state.mtime_ns.to_string()),
                Some(&tokens::file_stem_key(&file.path)),
                Some(&n_tokens.to_string()),
                Some(vector.literal(lexicon, &mut literal)),
            ],
        );
        if let Some(text) = file.grep_text.as_deref() {
            let grams = crate::copy_rows::array_literal(&crate::trigrams::grams(text));
            row(
                &mut file_grams,
                &[Some(&repo_text), Some(&file_id_text), Some(&grams)],
            );
        }
        for s in &file.content.symbols {
            row(
                &mut symbols,
                &[
                    Some(&repo_text),
                    Some(&file_id_text),
                    Some(&s.name),
                    Some(&s.kind),
                    s.parent.as_deref(),
                    Some(&s.start_line.to_string()),
                    Some(&s.end_line.to_string()),
                    s.signature.as_deref(),
                ],
            );
        }
        for c in &file.content.calls {
            row(
                &mut calls,
                &[
                    Some(&repo_text),
                    Some(&file_id_text),
                    c.caller.as_deref(),
                    Some(&c.callee),
                    Some(&c.line.to_string()),
                ],
            );
        }
    }
    let mut blocks =
        postings::block_numbers(c, file_entries.lexemes() + chunk_entries.lexemes())?.into_iter();
    Ok(Prepared {
        repo,
        replaced,
        touched,
        files,
        chunks,
        symbols,
        calls,
        file_grams,
        file_entries: postings::staged(file_entries, lexicon, &mut blocks),
        chunk_entries: postings::staged(chunk_entries, lexicon, &mut blocks),
    })
}

/// Writes a prepared batch in `tx` (the caller commits): the replaced files' rows out, the
/// new rows in, the posting lists and totals moved.
pub(crate) fn write(tx: &mut PgTransaction, batch: Prepared) -> Result<()> {
    let repo = batch.repo;
    more_memory(tx)?;
    let (paths, hashes, sizes, times) = &batch.touched;
    if !(batch.replaced.is_empty() && paths.is_empty()) {
        files_moved(tx, repo)?;
    }
    // The replaced files' ids first, by the (repo_id, path) key; then every table by
    // (repo_id, file_id). A join written as one DELETE … USING let the planner scan all of
    // `calls` at a million chunks (20 s per batch, found by bench/pg_scale.py).
    let replaced_ids: Vec<i64> = if batch.replaced.is_empty() {
        Vec::new()
    } else {
        tx.query(
            "SELECT id FROM files WHERE repo_id = $1 AND path = ANY($2)",
            &[&repo, &batch.replaced],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect()
    };
    if !replaced_ids.is_empty() {
        // The replaced rows leave BM25's statistics as they go.
        for (table, key) in [("chunks", "file_id"), ("files", "id")] {
            term_counts::removed(
                tx,
                table,
                &format!("DELETE FROM {table} WHERE repo_id = $1 AND {key} = ANY($2)"),
                &[&repo, &replaced_ids],
            )?;
        }
        for (table, key) in [
            ("symbols", "file_id"),
            ("calls", "file_id"),
            ("file_grams", "file_id"),
        ] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE repo_id = $1 AND {key} = ANY($2)"),
                &[&repo, &replaced_ids],
            )?;
        }
    }
    if !paths.is_empty() {
        tx.execute(
            "UPDATE files f SET hash = u.hash, size = u.size, mtime_ns = u.mtime_ns
             FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS u(path, hash, size, mtime_ns)
             WHERE f.repo_id = $1 AND f.path = u.path",
            &[&repo, paths, hashes, sizes, times],
        )?;
    }
    copy(
        tx,
        "COPY files(repo_id, id, path, language, hash, size, mtime_ns, stem, n_tokens, tsv)
         FROM STDIN",
        batch.files,
    )?;
    copy(
        tx,
        "COPY chunks(repo_id, id, file_id, start_line, end_line, symbol, kind, parent, signature,
                     text, embed_hash, n_tokens, tsv, language, page, cell) FROM STDIN",
        batch.chunks,
    )?;
    copy(
        tx,
        "COPY symbols(repo_id, file_id, name, kind, parent, start_line, end_line, signature) FROM STDIN",
        batch.symbols,
    )?;
    copy(
        tx,
        "COPY calls(repo_id, file_id, caller, callee, line) FROM STDIN",
        batch.calls,
    )?;
    copy(
        tx,
        "COPY file_grams(repo_id, file_id, grams) FROM STDIN",
        batch.file_grams,
    )?;
    postings::write(tx, repo, "files", batch.file_entries)?;
    postings::write(tx, repo, "chunks", batch.chunk_entries)?;
    Ok(())
}

/// Gives a writing transaction 64 MB per sort or hash (its own setting, no one else's): the
/// GIN indexes (text vectors, trigrams) fold their pending entries into the index in memory of
/// that size, and 4 MB (PostgreSQL's default) split it into many passes. Measured on one
/// sympy copy (bench/pg_scale.py's corpus, 2 cores): 2,603 → 2,815 chunks/s.
pub(crate) fn more_memory(tx: &mut PgTransaction) -> Result<()> {
    tx.batch_execute("SET LOCAL work_mem = '64MB'")?;
    Ok(())
}

/// Moves `repo`'s files generation: a caller that kept the list of files grep's pre-filter
/// knows reads it again (trigrams.rs).
pub fn files_moved(tx: &mut PgTransaction, repo: i64) -> Result<()> {
    tx.execute(
        "UPDATE repos SET files_generation = files_generation + 1 WHERE id = $1",
        &[&repo],
    )?;
    Ok(())
}
