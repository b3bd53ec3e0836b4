//! The embedded backend: one SQLite file per workspace.
//!
//! Why SQLite: nothing to start, one file to copy or delete, WAL lets searches run while an
//! index run writes, and FTS5 gives BM25 with per-column weights. Chunk text lives in
//! `chunks`; the full-text table is contentless and holds the code-aware tokens
//! (`quarry_core::tokens`) of each chunk's path, symbols and body as three weighted columns.
//!
//! Every index batch is one transaction, so a run killed at any moment leaves a consistent
//! file: the next run sees which files are stored with which hash and finishes the job.

mod best_rows;
mod checksums;
mod commit_rows;
mod damage;
mod graph;
mod history;
mod history_vectors;
mod holders;
mod reader;
mod rebuild;
mod schema;
mod search;
mod trigram_tokenizer;
mod vectors;
mod weighted_bm25;
mod write;

pub use damage::{
    check_file, check_file_deep, diagnose, is_corrupt, move_aside, Checked, CorruptIndex,
};
pub use holders::lock_holders;

use anyhow::{Context, Result};
use quarry_core::store::{IndexBatch, SkipCounts};
use quarry_core::{FileState, RepoInfo, RepoStats, Store};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A reader met an index whose schema is missing or older than this build's: only a writer
/// (under the write lock) creates or upgrades it, so the reader waits for one or becomes one.
#[derive(Debug)]
pub struct SchemaPending {
    pub path: PathBuf,
    pub found: i64,
}

impl std::fmt::Display for SchemaPending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.found == 0 {
            "being created"
        } else {
            "being upgraded"
        };
        write!(
            f,
            "the index {} is {what} by a quarry writer; try again in a moment",
            self.path.display()
        )
    }
}

impl std::error::Error for SchemaPending {}

/// True when `err` (at any depth) is a reader meeting a schema that a writer must finish.
pub fn is_schema_pending(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<SchemaPending>())
}

/// How a store is opened: a writer (holding the workspace's write lock) creates the file and
/// brings its schema up to date; a reader does neither, so readers never race a writer's
/// migration, and falls back to read-only access when it may not write the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Write,
    Read,
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

/// Deletes the full-text and trigram rows of a repo's files (contentless FTS5 tables have no
/// foreign keys to cascade from): what both `clear_files` and `remove_repo` must do first.
fn delete_file_text_rows(tx: &Connection, repo: i64) -> rusqlite::Result<usize> {
    tx.execute(
        "DELETE FROM chunks_fts WHERE rowid IN
           (SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.repo_id = ?1)",
        [repo],
    )?;
    tx.execute(
        "DELETE FROM files_fts WHERE rowid IN (SELECT id FROM files WHERE repo_id = ?1)",
        [repo],
    )?;
    tx.execute(
        "DELETE FROM file_trigrams WHERE rowid IN (SELECT id FROM files WHERE repo_id = ?1)",
        [repo],
    )
}

/// Removes a repo's files and everything read from them, inside the caller's transaction.
fn clear_file_rows(tx: &Connection, repo: i64) -> rusqlite::Result<()> {
    delete_file_text_rows(tx, repo)?;
    tx.execute("DELETE FROM files WHERE repo_id = ?1", [repo])?;
    tx.execute(
        "UPDATE repos SET file_count = 0, chunk_count = 0 WHERE id = ?1",
        [repo],
    )?;
    vectors::refresh_coverage(tx)
}

/// Keeps the chunk vectors (vectors.rs) and the commit vectors (history_vectors.rs) of the
/// index decoded in memory between searches, for a long-lived process (the workspace daemon);
/// off drops them. Each search checks its matrix is still the index's and reloads it if not.
pub fn keep_vectors_in_memory(on: bool) {
    vectors::keep_in_memory(on);
    if !on {
        history_vectors::forget_resident();
    }
}

/// The SQLite store of one workspace.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    /// The repo whose rebuild is under way: the connection holds one write transaction from
    /// `begin_rebuild` to `commit_rebuild` (rebuild.rs says why), and each batch is a
    /// savepoint inside it.
    rebuilding: Option<i64>,
}

impl SqliteStore {
    /// Opens (creating if needed) the index at `path` as its writer and brings its schema up
    /// to date. The caller holds the workspace's write lock.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        Self::open_with(path, Access::Write)
    }

    /// Opens the index at `path`. A writer creates it and migrates it (one immediate
    /// transaction); a reader needs the file to exist with the current schema (else
    /// [`SchemaPending`]) and opens it read-only when it may not write it.
    pub fn open_with(path: &Path, access: Access) -> Result<SqliteStore> {
        // An index file is empty only while its first writer creates it (the schema is its
        // first transaction; the writer marks the file until then, `damage::creation_mark`):
        // a reader waits for that writer (`SchemaPending`); a writer — who holds the write
        // lock, so no other is at work — finds one that lost its content, no empty workspace
        // to build on. An empty file still marked was left by a first writer stopped before
        // its schema: it never held anything, and is built on.
        if damage::lost_content(path) {
            return Err(match access {
                Access::Read => SchemaPending {
                    path: path.to_path_buf(),
                    found: 0,
                }
                .into(),
                Access::Write => CorruptIndex {
                    path: path.to_path_buf(),
                    detail: "the file is empty (0 bytes): it held an index and lost it".into(),
                }
                .into(),
            });
        }
        let mark = damage::creation_mark(path);
        let conn = match access {
            Access::Write => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("cannot create index folder {}", dir.display()))?;
                }
                if !path.exists() {
                    std::fs::write(&mark, b"")
                        .with_context(|| format!("cannot create {}", mark.display()))?;
                }
                Connection::open(path)
            }
            Access::Read => reader::open_reader(path),
        }
        .map_err(|e| classify(path, e))
        .with_context(|| format!("cannot open index {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let store = SqliteStore {
            conn,
            path: path.to_path_buf(),
            rebuilding: None,
        };
        store.configure(access).map_err(|e| classify(path, e))?;
        if let Some(detail) = schema::problem(&store.conn).map_err(|e| classify(path, e))? {
            return Err(CorruptIndex {
                path: path.to_path_buf(),
                detail,
            }
            .into());
        }
        let sql_error = |e: anyhow::Error| match e.downcast::<rusqlite::Error>() {
            Ok(sql) => classify(path, sql),
            Err(other) => other,
        };
        match access {
            Access::Write => {
                schema::migrate(&store.conn).map_err(sql_error)?;
                match std::fs::remove_file(&mark) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| format!("cannot remove {}", mark.display()))
                    }
                    _ => {}
                }
            }
            Access::Read => {
                let found = schema::check_version(&store.conn).map_err(sql_error)?;
                if found < schema::SCHEMA_VERSION {
                    return Err(SchemaPending {
                        path: path.to_path_buf(),
                        found,
                    }
                    .into());
                }
            }
        }
        Ok(store)
    }

    /// Another reader of this index when it holds at least `chunks` chunks (by the largest
    /// id), and never inside a transaction of this connection's (a rebuild, a batch): another
    /// connection would not see what it has written.
    fn reader_beside(&self, chunks: i64) -> Option<SqliteStore> {
        if self.rebuilding.is_some() || !self.conn.is_autocommit() {
            return None;
        }
        let largest: Option<i64> = self
            .conn
            .query_row("SELECT max(id) FROM chunks", [], |r| r.get(0))
            .ok()?;
        if largest.unwrap_or(0) < chunks {
            return None;
        }
        SqliteStore::open_with(&self.path, Access::Read).ok()
    }

    fn configure(&self, access: Access) -> rusqlite::Result<()> {
        // Reading the header first surfaces "not a database" before any pragma writes.
        self.conn
            .query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))?;
        if access == Access::Write {
            self.conn.pragma_update(None, "journal_mode", "WAL")?;
            self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        self.conn.pragma_update(None, "cache_size", -32_000)?;
        // Read pages straight from the OS page cache instead of copying them into SQLite's:
        // the kNN scan reads every stored vector, and copying was a third of its time.
        self.conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
        // Plans made once per statement: without this, SQLite re-prepares a cached statement
        // whenever a parameter it looked at while planning is bound to a new value (a `LIMIT ?`,
        // a bound `GLOB` pattern, a column with STAT4 samples). Re-preparing was a tenth of a
        // symbol lookup's time on a server; the plans it could improve on are none of ours.
        self.conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        checksums::register(&self.conn)?;
        trigram_tokenizer::register(&self.conn)?;
        weighted_bm25::register(&self.conn)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Folds the WAL back so the file on disk is the whole index (cheap after a run), and lets
    /// SQLite refresh its statistics. Best effort: a reader in the way leaves it for later.
    fn fold_wal(&self) {
        let _ = self
            .conn
            .execute_batch("PRAGMA wal_checkpoint(PASSIVE); PRAGMA optimize;");
    }

    fn err(&self, e: rusqlite::Error) -> anyhow::Error {
        classify(&self.path, e)
    }

    /// Deletes the files of the index at `path` (database, WAL and shared-memory files).
    pub fn destroy(path: &Path) -> Result<()> {
        for suffix in ["", "-wal", "-shm", "-creating"] {
            let p = PathBuf::from(format!("{}{suffix}", path.display()));
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("cannot remove {}", p.display())),
            }
        }
        Ok(())
    }

    /// One batch, atomically: its own transaction, or a savepoint inside a rebuild's.
    fn apply_batch(&mut self, repo: i64, batch: &IndexBatch) -> rusqlite::Result<()> {
        if self.rebuilding.is_some() {
            let savepoint = self.conn.savepoint()?;
            write::write_batch(&savepoint, repo, batch)?;
            savepoint.commit()
        } else {
            let tx = self.conn.transaction()?;
            write::write_batch(&tx, repo, batch)?;
            tx.commit()
        }
    }
}

/// Columns `repo_from_row` reads, in order.
pub(crate) const REPO_COLUMNS: &str =
    "id, name, root, indexed_at, file_count, chunk_count, skipped";

/// Repo names as the JSON list statements read with `json_each` (`[]`: every repo).
pub(crate) fn repo_list(repos: &[String]) -> String {
    serde_json::to_string(repos).unwrap_or_else(|_| "[]".into())
}

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

    fn clear_files(&mut self, repo: i64) -> Result<()> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| classify(&self.path, e))?;
        clear_file_rows(&tx, repo)
            .and_then(|_| tx.commit())
            .map_err(|e| classify(&self.path, e))
    }

    fn begin_rebuild(&mut self, repo: i64) -> Result<bool> {
        rebuild::begin(self, repo)?;
        Ok(true)
    }

    fn commit_rebuild(&mut self, repo: i64) -> Result<()> {
        rebuild::commit(self, repo)
    }

    fn abandon_rebuild(&mut self, repo: i64) -> Result<()> {
        rebuild::abandon(self, repo)
    }

    fn remove_repo(&mut self, repo: i64) -> Result<()> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| classify(&self.path, e))?;
        delete_file_text_rows(&tx, repo)
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

    fn holds_file(&self, repo: i64, path: &str) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM files WHERE repo_id = ?1 AND path = ?2")
            .and_then(|mut stmt| stmt.exists(rusqlite::params![repo, path]))
            .map_err(|e| self.err(e))
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

    fn file_paths(&self, repo: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM files WHERE repo_id = ?1")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([repo], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
            .map_err(|e| self.err(e))
    }

    fn file_paths_containing(&self, repo: i64, part: &str) -> Result<Vec<String>> {
        // `instr` finds the part as `str::contains` does, before any path is copied out.
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM files WHERE repo_id = ?1 AND instr(path, ?2) > 0")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![repo, part], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
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
        // One b-tree segment per FTS table answers a grep's trigram query in one probe per
        // trigram instead of one per segment left by the run's batches.
        let _ = self
            .conn
            .execute_batch("INSERT INTO file_trigrams(file_trigrams) VALUES ('optimize');");
        // What the code's full-text indexes now hold, for the deep check (checksums.rs).
        checksums::record_fts_digest(&self.conn).map_err(|e| self.err(e))?;
        // Inside a rebuild nothing is committed yet: the WAL is folded back after the switch.
        if self.rebuilding.is_none() {
            self.fold_wal();
        }
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

    fn find_definitions(
        &self,
        query: &quarry_core::DefinitionQuery,
    ) -> Result<Vec<quarry_core::SymbolRef>> {
        graph::definitions(&self.conn, query).map_err(|e| self.err(e))
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

    fn beside(&self) -> Option<Box<dyn Store + Send>> {
        // Only where a search reads enough rows to pay for opening a connection (a
        // millisecond or two).
        let other = self.reader_beside(search::SPLIT_FROM)?;
        Some(Box::new(other))
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
        search::file_chunks(&self.conn, repo, path, false).map_err(|e| self.err(e))
    }

    fn first_chunk(&self, repo: &str, path: &str) -> Result<Option<quarry_core::ChunkHit>> {
        let first = search::file_chunks(&self.conn, repo, path, true).map_err(|e| self.err(e))?;
        Ok(first.into_iter().next())
    }

    fn indexed_symbols(
        &self,
        repo: &str,
        path: &str,
    ) -> Result<Option<(quarry_core::FileState, Vec<quarry_core::Symbol>)>> {
        search::indexed_symbols(&self.conn, repo, path).map_err(|e| self.err(e))
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

    fn pending_embeddings(
        &self,
        limit: usize,
        after: Option<&str>,
        repos: &[String],
    ) -> Result<Vec<quarry_core::PendingEmbedding>> {
        vectors::pending(&self.conn, limit, after, repos).map_err(|e| self.err(e))
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

    fn damage_noted(&self) -> Option<String> {
        checksums::take_noted().map(|place| {
            format!(
                "the index file {} is damaged: {place}; its answers show the text with the bad bytes replaced. `quarry status --check --deep` finds all such damage, `quarry index --rebuild PATH` repairs it",
                self.path.display()
            )
        })
    }

    fn size_bytes(&self) -> u64 {
        ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", self.path.display())).ok())
            .map(|m| m.len())
            .sum()
    }

    fn trigram_lookup(
        &self,
        required: &quarry_core::Requirement,
        known_generation: Option<i64>,
    ) -> Result<quarry_core::TrigramLookup> {
        search::trigram_lookup(
            &self.conn,
            required.fts5_query().as_deref(),
            known_generation,
        )
        .map_err(|e| self.err(e))
    }
}

#[cfg(all(test, unix))]
mod read_only_tests;
#[cfg(test)]
mod rebuild_tests;
#[cfg(test)]
mod tests;
