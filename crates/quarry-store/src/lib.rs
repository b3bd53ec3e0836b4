//! The embedded backend: one SQLite file per workspace.
//!
//! Why SQLite: nothing to start, one file to copy or delete, WAL lets searches run while an
//! index run writes, and FTS5 gives BM25 with per-column weights. Chunk text lives in
//! `chunks`; the full-text table is contentless and holds the code-aware tokens
//! (`quarry_core::tokens`) of each chunk's path, symbols and body as three weighted columns.
//!
//! Every index batch is one transaction, so a run killed at any moment leaves a consistent
//! file: the next run sees which files are stored with which hash and finishes the job.

mod graph;
mod history;
mod history_vectors;
mod schema;
mod search;
mod vectors;

use anyhow::{Context, Result};
use quarry_core::store::{IndexBatch, SkipCounts};
use quarry_core::{tokens, FileState, RepoInfo, RepoStats, Store};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
            "the index file {} is damaged ({}); run `quarry index --rebuild PATH` to build it again",
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

/// SQLite errors that mean the file itself is bad, turned into `CorruptIndex`; others pass.
fn classify(path: &Path, err: rusqlite::Error) -> anyhow::Error {
    if let rusqlite::Error::SqliteFailure(code, _) = &err {
        if matches!(
            code.code,
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase
        ) {
            return CorruptIndex {
                path: path.to_path_buf(),
                detail: err.to_string(),
            }
            .into();
        }
    }
    anyhow::Error::new(err)
}

/// The SQLite store of one workspace.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if needed) the index at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create index folder {}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open index {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let store = SqliteStore {
            conn,
            path: path.to_path_buf(),
        };
        store.configure().map_err(|e| classify(path, e))?;
        schema::migrate(&store.conn).map_err(|e| match e.downcast::<rusqlite::Error>() {
            Ok(sql) => classify(path, sql),
            Err(other) => other,
        })?;
        Ok(store)
    }

    fn configure(&self) -> rusqlite::Result<()> {
        // Reading the header first surfaces "not a database" before any pragma writes.
        self.conn
            .query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))?;
        self.conn.pragma_update(None, "journal_mode", "WAL")?;
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        self.conn.pragma_update(None, "cache_size", -32_000)?;
        // Read pages straight from the OS page cache instead of copying them into SQLite's:
        // the kNN scan reads every stored vector, and copying was a third of its time.
        self.conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> anyhow::Error {
        classify(&self.path, e)
    }

    /// Deletes the files of the index at `path` (database, WAL and shared-memory files).
    pub fn destroy(path: &Path) -> Result<()> {
        for suffix in ["", "-wal", "-shm"] {
            let p = PathBuf::from(format!("{}{suffix}", path.display()));
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("cannot remove {}", p.display())),
            }
        }
        Ok(())
    }

    fn delete_file_rows(tx: &rusqlite::Transaction, file_id: i64) -> rusqlite::Result<()> {
        tx.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?1)",
            [file_id],
        )?;
        tx.execute("DELETE FROM files_fts WHERE rowid = ?1", [file_id])?;
        tx.execute("DELETE FROM files WHERE id = ?1", [file_id])?;
        Ok(())
    }

    fn apply_batch(&mut self, repo: i64, batch: &IndexBatch) -> rusqlite::Result<()> {
        let tx = self.conn.transaction()?;
        vectors::invalidate_coverage(&tx)?;
        {
            let mut find =
                tx.prepare_cached("SELECT id FROM files WHERE repo_id = ?1 AND path = ?2")?;
            let mut insert_file = tx.prepare_cached(
                "INSERT INTO files(repo_id, path, language, hash, size, mtime_ns, stem) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut insert_chunk = tx.prepare_cached(
                "INSERT INTO chunks(file_id, start_line, end_line, symbol, kind, parent, signature, text, embed_hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            let mut insert_fts = tx.prepare_cached(
                "INSERT INTO chunks_fts(rowid, path, symbols, body) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut insert_file_fts = tx.prepare_cached(
                "INSERT INTO files_fts(rowid, path, symbols, body) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut insert_symbol = tx.prepare_cached(
                "INSERT INTO symbols(file_id, name, kind, parent, start_line, end_line, signature)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut insert_call = tx.prepare_cached(
                "INSERT INTO calls(file_id, caller, callee, line) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut touch =
                tx.prepare_cached("UPDATE files SET hash = ?3, size = ?4, mtime_ns = ?5 WHERE repo_id = ?1 AND path = ?2")?;

            for path in &batch.deleted {
                if let Some(id) = find
                    .query_row(params![repo, path], |r| r.get::<_, i64>(0))
                    .optional()?
                {
                    Self::delete_file_rows(&tx, id)?;
                }
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
                if let Some(id) = find
                    .query_row(params![repo, file.path], |r| r.get::<_, i64>(0))
                    .optional()?
                {
                    Self::delete_file_rows(&tx, id)?;
                }
                insert_file.execute(params![
                    repo,
                    file.path,
                    file.language.name(),
                    file.state.hash,
                    file.state.size as i64,
                    file.state.mtime_ns,
                    tokens::file_stem_key(&file.path)
                ])?;
                let file_id = tx.last_insert_rowid();
                let path_tokens = tokens::index_text(&file.path);
                let mut file_body = String::new();
                for chunk in &file.content.chunks {
                    let embed_hash = quarry_core::content_hash(
                        quarry_core::embed_text(&quarry_core::EmbedSource {
                            path: &file.path,
                            kind: &chunk.kind,
                            symbol: chunk.symbol.as_deref(),
                            signature: chunk.signature.as_deref(),
                            text: &chunk.text,
                        })
                        .as_bytes(),
                    );
                    insert_chunk.execute(params![
                        file_id,
                        chunk.start_line,
                        chunk.end_line,
                        chunk.symbol,
                        chunk.kind,
                        chunk.parent,
                        chunk.signature,
                        chunk.text,
                        embed_hash
                    ])?;
                    let chunk_id = tx.last_insert_rowid();
                    let symbol_tokens = tokens::index_text(&chunk.symbols.join(" "));
                    let body_tokens = tokens::index_text(&chunk.text);
                    insert_fts.execute(params![
                        chunk_id,
                        path_tokens,
                        symbol_tokens,
                        body_tokens
                    ])?;
                    if !file_body.is_empty() {
                        file_body.push(' ');
                    }
                    file_body.push_str(&body_tokens);
                }
                let file_symbols: Vec<&str> = file
                    .content
                    .symbols
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect();
                insert_file_fts.execute(params![
                    file_id,
                    path_tokens,
                    tokens::index_text(&file_symbols.join(" ")),
                    file_body
                ])?;
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
        }
        tx.commit()
    }
}

/// Columns `repo_from_row` reads, in order.
pub(crate) const REPO_COLUMNS: &str =
    "id, name, root, indexed_at, file_count, chunk_count, skipped";

pub(crate) fn repo_from_row(r: &rusqlite::Row) -> rusqlite::Result<RepoInfo> {
    Ok(RepoInfo {
        id: r.get(0)?,
        name: r.get(1)?,
        root: r.get(2)?,
        indexed_at: r.get(3)?,
        files: r.get::<_, i64>(4)? as u64,
        chunks: r.get::<_, i64>(5)? as u64,
        skipped: serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or_default(),
    })
}

impl Store for SqliteStore {
    fn ensure_repo(&mut self, name: &str, root: &str) -> Result<RepoInfo> {
        let existing = self
            .conn
            .query_row(
                &format!("SELECT {REPO_COLUMNS} FROM repos WHERE root = ?1"),
                [root],
                repo_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if let Some(repo) = existing {
            return Ok(repo);
        }
        // Two repos with the same folder name get `name-2`, `name-3`, …
        let mut candidate = name.to_string();
        let mut n = 2;
        while self
            .conn
            .query_row("SELECT 1 FROM repos WHERE name = ?1", [&candidate], |_| {
                Ok(())
            })
            .optional()
            .map_err(|e| self.err(e))?
            .is_some()
        {
            candidate = format!("{name}-{n}");
            n += 1;
        }
        self.conn
            .execute(
                "INSERT INTO repos(name, root) VALUES (?1, ?2)",
                params![candidate, root],
            )
            .map_err(|e| self.err(e))?;
        Ok(RepoInfo {
            id: self.conn.last_insert_rowid(),
            name: candidate,
            root: root.to_string(),
            indexed_at: None,
            files: 0,
            chunks: 0,
            skipped: SkipCounts::new(),
        })
    }

    fn repos(&self) -> Result<Vec<RepoInfo>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {REPO_COLUMNS} FROM repos ORDER BY name"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], repo_from_row).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    fn move_repo(&mut self, repo: i64, root: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE repos SET root = ?2 WHERE id = ?1",
                params![repo, root],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn remove_repo(&mut self, repo: i64) -> Result<()> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| classify(&self.path, e))?;
        tx.execute(
            "DELETE FROM chunks_fts WHERE rowid IN
               (SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.repo_id = ?1)",
            [repo],
        )
        .and_then(|_| {
            tx.execute(
                "DELETE FROM files_fts WHERE rowid IN (SELECT id FROM files WHERE repo_id = ?1)",
                [repo],
            )
        })
        .and_then(|_| {
            tx.execute(
                "DELETE FROM commits_fts WHERE rowid IN (SELECT id FROM commits WHERE repo_id = ?1)",
                [repo],
            )
        })
        .and_then(|_| tx.execute("DELETE FROM repos WHERE id = ?1", [repo]))
        .and_then(|_| vectors::refresh_coverage(&tx))
        .and_then(|_| tx.commit())
        .map_err(|e| classify(&self.path, e))
    }

    fn file_states(&self, repo: i64) -> Result<HashMap<String, FileState>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, hash, size, mtime_ns FROM files WHERE repo_id = ?1")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([repo], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    FileState {
                        hash: r.get(1)?,
                        size: r.get::<_, i64>(2)? as u64,
                        mtime_ns: r.get(3)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<HashMap<_, _>>>()
            .map_err(|e| self.err(e))
    }

    fn apply(&mut self, repo: i64, batch: &IndexBatch) -> Result<()> {
        self.apply_batch(repo, batch)
            .map_err(|e| classify(&self.path, e))
    }

    fn finish_run(&mut self, repo: i64, skipped: &SkipCounts) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        self.conn
            .execute(
                "UPDATE repos SET indexed_at = ?2, skipped = ?3,
                   file_count = (SELECT count(*) FROM files WHERE repo_id = ?1),
                   chunk_count = (SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.repo_id = ?1)
                 WHERE id = ?1",
                params![repo, now, serde_json::to_string(skipped)?],
            )
            .map_err(|e| self.err(e))?;
        vectors::refresh_coverage(&self.conn).map_err(|e| self.err(e))?;
        // Fold the WAL back so the file on disk is the whole index (cheap after a run).
        let _ = self
            .conn
            .execute_batch("PRAGMA wal_checkpoint(PASSIVE); PRAGMA optimize;");
        Ok(())
    }

    fn callers(
        &self,
        name: &str,
        repos: &[String],
        limit: usize,
    ) -> Result<Vec<quarry_core::CallRef>> {
        graph::callers(&self.conn, name, repos, limit).map_err(|e| self.err(e))
    }

    fn calls_from(
        &self,
        repo: &str,
        path: &str,
        caller: &str,
        limit: usize,
    ) -> Result<Vec<quarry_core::CallRef>> {
        graph::calls_from(&self.conn, repo, path, caller, limit).map_err(|e| self.err(e))
    }

    fn definitions(
        &self,
        name: &str,
        repos: &[String],
        limit: usize,
    ) -> Result<Vec<quarry_core::SymbolRef>> {
        graph::definitions(&self.conn, name, repos, limit).map_err(|e| self.err(e))
    }

    fn prune_vectors(&mut self) -> Result<u64> {
        let pruned = vectors::prune(&self.conn).map_err(|e| self.err(e))?;
        Ok(pruned as u64)
    }

    fn search_lexical(
        &self,
        query: &quarry_core::LexicalQuery,
    ) -> Result<Vec<quarry_core::ChunkHit>> {
        search::lexical(&self.conn, query).map_err(|e| self.err(e))
    }

    fn search_files_lexical(
        &self,
        query: &quarry_core::LexicalQuery,
    ) -> Result<Vec<quarry_core::FileHit>> {
        search::files_lexical(&self.conn, query).map_err(|e| self.err(e))
    }

    fn files_by_stem(
        &self,
        keys: &[String],
        repos: &[String],
        limit: usize,
    ) -> Result<Vec<(String, String)>> {
        search::files_by_stem(&self.conn, keys, repos, limit).map_err(|e| self.err(e))
    }

    fn file_chunks(&self, repo: &str, path: &str) -> Result<Vec<quarry_core::ChunkHit>> {
        search::file_chunks(&self.conn, repo, path).map_err(|e| self.err(e))
    }

    fn stats(&self) -> Result<Vec<RepoStats>> {
        search::stats(&self.conn).map_err(|e| self.err(e))
    }

    fn embedding_model(&self) -> Result<Option<String>> {
        vectors::model(&self.conn).map_err(|e| self.err(e))
    }

    fn set_embedding_model(&mut self, fingerprint: &str) -> Result<bool> {
        vectors::set_model(&mut self.conn, fingerprint).map_err(|e| classify(&self.path, e))
    }

    fn pending_embeddings(&self, limit: usize) -> Result<Vec<quarry_core::PendingEmbedding>> {
        vectors::pending(&self.conn, limit).map_err(|e| self.err(e))
    }

    fn put_embeddings(&mut self, vectors: &[(String, Vec<f32>)]) -> Result<()> {
        vectors::put(&mut self.conn, vectors).map_err(|e| classify(&self.path, e))
    }

    fn coverage(&self, repos: &[String]) -> Result<quarry_core::Coverage> {
        vectors::coverage(&self.conn, repos).map_err(|e| self.err(e))
    }

    fn search_vector(
        &self,
        query: &quarry_core::VectorQuery,
    ) -> Result<Vec<quarry_core::ChunkHit>> {
        vectors::search(&self.conn, query).map_err(|e| self.err(e))
    }

    fn size_bytes(&self) -> u64 {
        ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", self.path.display())).ok())
            .map(|m| m.len())
            .sum()
    }
}

#[cfg(test)]
mod tests;
