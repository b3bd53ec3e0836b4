//! quarry's store on PostgreSQL with pgvector: the same index as the embedded SQLite store
//! (quarry-store), for teams that outgrow one machine — one database many agents share, an
//! index CI builds once for everyone, a monorepo too big for a laptop.
//!
//! Same pipeline: lexical candidates come from PostgreSQL's full-text search over the
//! code-aware tokens quarry prepares (write.rs), ranked by BM25 as FTS5 computes it
//! (bm25.rs); kNN from an HNSW index over pgvector's cosine distance; quarry's own
//! fusion, boosts and diversification run above the `Store` trait, unchanged. Writes are one
//! transaction per batch (COPY into staging tables), so a crash mid-ingest leaves nothing
//! half-visible and the next run resumes; readers are never blocked (MVCC). Every table is
//! keyed by `repo_id` first, for Citus (schema.rs).

mod background;
mod bm25;
mod connection;
mod copy_rows;
mod filters;
mod history;
mod postings;
mod read;
mod replicas;
mod schema;
mod scores;
mod term_counts;
mod text_vector;
mod trigrams;
mod write;

/// The tables of a repo's indexed files (its history is in others).
const FILE_TABLES: [&str; 6] = [
    "embeddings",
    "calls",
    "symbols",
    "chunks",
    "file_grams",
    "files",
];

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use connection::{PgClient, PgError, PgTransaction, Queries};
use quarry_core::history::{CommitHit, CommitQuery, CommitRecord, HistoryStats, PendingCommit};
use quarry_core::store::{IndexBatch, RepoInfo, SkipCounts, Store};
use quarry_core::{
    CallRef, ChunkHit, Coverage, FileHit, FileState, LexicalQuery, PendingEmbedding, RepoStats,
    SymbolRef, TrigramLookup, VectorQuery,
};

/// The PostgreSQL store. Reads take `&self` in the `Store` trait and a client needs `&mut`:
/// the client sits in a `RefCell` (one store, one connection, one thread at a time).
pub struct PgStore {
    client: RefCell<PgClient>,
    /// The primary's URL: for a fresh connection after a call timed out, and for reads when
    /// the replica fails.
    url: String,
    timeout: Duration,
    /// The URL without its password, for messages.
    shown_url: String,
    /// The standby `client` reads from, while it does (a store opened for reading with
    /// `store.read_urls`).
    replica: RefCell<Option<replicas::Replica>>,
    /// Why each standby listed is not the one answering.
    skipped: RefCell<Vec<String>>,
    /// Whether the server's pgvector has iterative index scans (0.8 and later), once asked.
    iterative_scans: std::cell::OnceCell<bool>,
    /// Repos whose chunks this store replaced or deleted since the last prune: only they can
    /// hold vectors no chunk uses (a whole-database anti-join cost seconds per run at a
    /// million chunks).
    pruning: HashSet<i64>,
    /// The lexemes of the tokens this store has written (text_vector.rs).
    lexicon: RefCell<text_vector::Lexicon>,
    /// The batch being written while the next is prepared (background.rs).
    writer: RefCell<background::BackgroundWriter>,
}

/// `url` with any password replaced by `***`: in the user part of a URL
/// (`postgres://user:secret@host/db`) and as a `password=` parameter or keyword.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_password_parameter(url);
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    format!("{scheme}://{authority}{}", redact_password_parameter(tail))
}

fn redact_password_parameter(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("password=") {
        let value_start = at + "password=".len();
        out.push_str(&rest[..value_start]);
        out.push_str("***");
        let value_end = rest[value_start..]
            .find(['&', ' '])
            .map_or(rest.len(), |i| value_start + i);
        rest = &rest[value_end..];
    }
    out.push_str(rest);
    out
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`) with calls bounded
    /// by [`DEFAULT_TIMEOUT`], and brings the schema up to date.
    pub fn connect(url: &str) -> Result<PgStore> {
        Self::connect_with(url, DEFAULT_TIMEOUT)
    }

    /// Connects to `url`, giving the connect and every later call `timeout` to answer
    /// (`store.timeout_s`), and brings the schema up to date. Errors name the URL without its
    /// password and say what to check.
    pub fn connect_with(url: &str, timeout: Duration) -> Result<PgStore> {
        let shown_url = redact(url);
        let mut client = PgClient::connect(url, timeout).map_err(|e| {
            let message = format!(
                "cannot connect to PostgreSQL at {shown_url}: {}",
                e.detail()
            );
            if e.is_unavailable() {
                // Down, starting or full: it may answer soon (HTTP: 503 with Retry-After).
                anyhow::Error::new(quarry_core::store::Unavailable(format!(
                    "{message}. Check that the server is up, and the host and port of \
                     store.url (or --db-url, $QUARRY_DB_URL)"
                )))
            } else {
                anyhow!(
                    "{message}. Check the host, port, user, password and database of \
                     store.url (or --db-url, $QUARRY_DB_URL)"
                )
            }
        })?;
        schema::migrate(&mut client).with_context(|| format!("PostgreSQL at {shown_url}"))?;
        Ok(Self::on(client, url, timeout, None))
    }

    /// A store on `client`: connected to the primary at `url`, or to `replica`.
    fn on(
        client: PgClient,
        url: &str,
        timeout: Duration,
        replica: Option<replicas::Replica>,
    ) -> PgStore {
        PgStore {
            client: RefCell::new(client),
            url: url.to_string(),
            timeout,
            shown_url: redact(url),
            replica: RefCell::new(replica),
            skipped: RefCell::new(Vec::new()),
            iterative_scans: std::cell::OnceCell::new(),
            pruning: HashSet::new(),
            lexicon: RefCell::default(),
            writer: RefCell::new(background::BackgroundWriter::new(
                url,
                &redact(url),
                timeout,
            )),
        }
    }

    /// How many posting-list entries differ from what the stored text vectors say (entries
    /// missing, left over from removed rows, or with other counts): 0 when the lists that
    /// ranking reads are right. Reads every row; for tests and checks, not for searches.
    pub fn posting_mismatches(&self) -> Result<i64> {
        Ok(self
            .with(|c| c.query_one(postings::MISMATCHES, &[]))?
            .get(0))
    }

    /// A store for reading only (searches): its reads go to the first of `read_urls` that
    /// answers, holds the current schema and trails the primary by at most `max_lag_s`, else
    /// to the primary at `url`. A replica that fails during a read hands it, and every later
    /// one, to the primary. Never for writing: a standby refuses writes.
    pub fn connect_reading(
        url: &str,
        read_urls: &[String],
        max_lag_s: f64,
        timeout: Duration,
    ) -> Result<PgStore> {
        let (chosen, skipped) = replicas::choose(read_urls, max_lag_s, timeout);
        let store = match chosen {
            Some((client, replica)) => Self::on(client, url, timeout, Some(replica)),
            None => Self::connect_with(url, timeout)?,
        };
        *store.skipped.borrow_mut() = skipped;
        Ok(store)
    }

    /// Whether pgvector goes on scanning an HNSW index until enough rows pass a query's
    /// filters (`hnsw.iterative_scan`, pgvector 0.8 and later); asked once per store.
    pub(crate) fn iterative_scans(&self) -> Result<bool> {
        if let Some(known) = self.iterative_scans.get() {
            return Ok(*known);
        }
        let version: Option<String> = self.with(|c| {
            c.query_opt(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
                &[],
            )
            .map(|r| r.map(|r| r.get(0)))
        })?;
        let mut parts = version
            .as_deref()
            .unwrap_or("0")
            .split('.')
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        let known = (major, minor) >= (0, 8);
        let _ = self.iterative_scans.set(known);
        Ok(known)
    }

    fn err(&self, e: PgError) -> anyhow::Error {
        let replica = self.replica.borrow();
        let shown = replica.as_ref().map_or(&self.shown_url, |r| &r.shown_url);
        connection::said_at(shown, &e)
    }

    /// Runs `f` on the connection. On a replica a failure is not the answer: the read runs
    /// again on the primary, which keeps every later read too — a standby that was killed or
    /// restarted, or that cancelled the query to replay the primary's changes, would fail
    /// the next one as well, and the primary holds everything the standby did.
    pub(crate) fn with<T>(
        &self,
        mut f: impl FnMut(&mut PgClient) -> Result<T, PgError>,
    ) -> Result<T> {
        self.settle()?;
        let first = f(&mut *self.live_client()?);
        match first {
            Err(e) if self.replica.borrow().is_some() => {
                self.leave_replica(&e)?;
                f(&mut *self.live_client()?).map_err(|e| self.err(e))
            }
            answer => answer.map_err(|e| self.err(e)),
        }
    }

    /// Connects to the primary in place of the failed replica, saying why in `served_by`.
    fn leave_replica(&self, failure: &PgError) -> Result<()> {
        let client = PgClient::connect(&self.url, self.timeout).map_err(|e| {
            anyhow!(
                "PostgreSQL at {}: {} (and the standby failed: {})",
                self.shown_url,
                e.detail(),
                failure.detail()
            )
        })?;
        *self.client.borrow_mut() = client;
        if let Some(replica) = self.replica.borrow_mut().take() {
            self.skipped.borrow_mut().push(format!(
                "{}: failed during a read ({}); the primary answered it",
                replica.shown_url,
                failure.detail()
            ));
        }
        Ok(())
    }

    /// The connection, replaced by a fresh one when a call on it timed out: a server that
    /// answers again is used again (the daemon, MCP and HTTP servers live long).
    fn live_client(&self) -> Result<std::cell::RefMut<'_, PgClient>> {
        let mut client = self.client.borrow_mut();
        if client.is_abandoned() {
            let url = match &*self.replica.borrow() {
                Some(replica) => replica.url.clone(),
                None => self.url.clone(),
            };
            *client = PgClient::connect(&url, self.timeout).map_err(|e| self.err(e))?;
        }
        Ok(client)
    }

    /// Runs `f` in one transaction, committed when it returns `Ok`; on a replica, a failed
    /// one runs again on the primary (see [`PgStore::with`]).
    fn transaction<T>(&self, mut f: impl FnMut(&mut PgTransaction) -> Result<T>) -> Result<T> {
        self.settle()?;
        let attempt = |f: &mut dyn FnMut(&mut PgTransaction) -> Result<T>| -> Result<T, Failure> {
            let mut client = self.live_client().map_err(Failure::Other)?;
            let mut tx = client.transaction().map_err(Failure::Pg)?;
            let out = f(&mut tx).map_err(|e| match e.downcast::<PgError>() {
                Ok(pg) => Failure::Pg(pg),
                Err(other) => Failure::Other(other),
            })?;
            tx.commit().map_err(Failure::Pg)?;
            Ok(out)
        };
        match attempt(&mut f) {
            Ok(out) => Ok(out),
            Err(Failure::Pg(e)) if self.replica.borrow().is_some() => {
                self.leave_replica(&e)?;
                attempt(&mut f).map_err(|e| self.failure(e))
            }
            Err(e) => Err(self.failure(e)),
        }
    }

    /// Waits for the batch being written in the background: every other call sees it in (or
    /// fails with its error).
    fn settle(&self) -> Result<()> {
        self.writer.borrow_mut().settle()
    }

    fn failure(&self, e: Failure) -> anyhow::Error {
        match e {
            Failure::Pg(pg) => self.err(pg),
            Failure::Other(other) => other,
        }
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.with(|c| {
            c.query_opt("SELECT value FROM quarry_meta WHERE key = $1", &[&key])
                .map(|r| r.map(|r| r.get(0)))
        })
    }
}

/// How a transaction failed: on the server (a replica's failure sends it to the primary), or
/// in quarry's own code.
enum Failure {
    Pg(PgError),
    Other(anyhow::Error),
}

/// How long the connect and each call may wait for the server when `store.timeout_s` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

const REPO_COLUMNS: &str = "id, name, root, indexed_at, file_count, chunk_count, skipped";

fn repo_from_row(r: &tokio_postgres::Row) -> RepoInfo {
    let skipped: String = r.get(6);
    RepoInfo {
        id: r.get(0),
        name: r.get(1),
        root: r.get(2),
        indexed_at: r.get(3),
        files: r.get::<_, i64>(4) as u64,
        chunks: r.get::<_, i64>(5) as u64,
        skipped: serde_json::from_str(&skipped).unwrap_or_default(),
    }
}

/// Vectors as pgvector's text form (`[0.1,0.2]`), sent as text and cast on the server.
pub(crate) fn vector_text(v: &[f32]) -> String {
    let mut out = String::with_capacity(v.len() * 10 + 2);
    out.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&x.to_string());
    }
    out.push(']');
    out
}

impl Store for PgStore {
    fn ensure_repo(&mut self, name: &str, root: &str) -> Result<RepoInfo> {
        self.transaction(|tx| {
            // Serialise repo creation: two processes registering repos never take one name.
            tx.execute("LOCK TABLE repos IN SHARE ROW EXCLUSIVE MODE", &[])?;
            if let Some(row) = tx.query_opt(
                &format!("SELECT {REPO_COLUMNS} FROM repos WHERE root = $1"),
                &[&root],
            )? {
                return Ok(repo_from_row(&row));
            }
            let mut candidate = name.to_string();
            let mut n = 2;
            while tx
                .query_opt("SELECT 1 FROM repos WHERE name = $1", &[&candidate])?
                .is_some()
            {
                candidate = format!("{name}-{n}");
                n += 1;
            }
            let row = tx.query_one(
                &format!(
                    "INSERT INTO repos(id, name, root) VALUES (nextval('quarry_ids'), $1, $2)
                     RETURNING {REPO_COLUMNS}"
                ),
                &[&candidate, &root],
            )?;
            Ok(repo_from_row(&row))
        })
    }

    fn repos(&self) -> Result<Vec<RepoInfo>> {
        self.with(|c| {
            c.query(
                &format!("SELECT {REPO_COLUMNS} FROM repos ORDER BY name"),
                &[],
            )
            .map(|rows| rows.iter().map(repo_from_row).collect())
        })
    }

    fn move_repo(&mut self, repo: i64, root: &str) -> Result<()> {
        self.with(|c| c.execute("UPDATE repos SET root = $2 WHERE id = $1", &[&repo, &root]))?;
        Ok(())
    }

    fn remove_repo(&mut self, repo: i64) -> Result<()> {
        self.transaction(|tx| {
            let history = [
                "fts_totals",
                "fts_postings",
                "commit_vectors",
                "commit_files",
                "commits",
            ];
            for table in FILE_TABLES.iter().chain(&history) {
                tx.execute(&format!("DELETE FROM {table} WHERE repo_id = $1"), &[&repo])?;
            }
            tx.execute("DELETE FROM repos WHERE id = $1", &[&repo])?;
            Ok(())
        })
    }

    fn clear_files(&mut self, repo: i64) -> Result<()> {
        self.transaction(|tx| {
            for table in FILE_TABLES {
                tx.execute(&format!("DELETE FROM {table} WHERE repo_id = $1"), &[&repo])?;
            }
            write::files_moved(tx, repo)?;
            // The files' and chunks' totals go; the commits' stay with them.
            for totals in ["fts_totals", "fts_postings"] {
                tx.execute(
                    &format!("DELETE FROM {totals} WHERE repo_id = $1 AND kind NOT LIKE 'commit%'"),
                    &[&repo],
                )?;
            }
            Ok(())
        })
    }

    fn file_states(&self, repo: i64) -> Result<HashMap<String, FileState>> {
        self.with(|c| {
            c.query(
                "SELECT path, hash, size, mtime_ns FROM files WHERE repo_id = $1",
                &[&repo],
            )
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        (
                            r.get(0),
                            FileState {
                                hash: r.get(1),
                                size: r.get::<_, i64>(2) as u64,
                                mtime_ns: r.get(3),
                            },
                        )
                    })
                    .collect()
            })
        })
    }

    fn apply(&mut self, repo: i64, batch: &IndexBatch) -> Result<()> {
        // Prepared here (two reads on this connection), written in the background while the
        // caller prepares the next batch (background.rs).
        let prepared = {
            let mut client = self.live_client()?;
            write::prepare(&mut *client, repo, batch, &mut self.lexicon.borrow_mut())
                .map_err(|e| connection::at_server(&self.shown_url, e))?
        };
        self.writer.borrow_mut().start(prepared)?;
        if !batch.deleted.is_empty() || !batch.upserts.is_empty() {
            self.pruning.insert(repo);
        }
        Ok(())
    }

    fn finish_run(&mut self, repo: i64, skipped: &SkipCounts) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let skipped = serde_json::to_string(skipped)?;
        self.with(|c| {
            c.execute(
                "UPDATE repos SET indexed_at = $2, skipped = $3,
                   file_count = (SELECT count(*) FROM files WHERE repo_id = $1),
                   chunk_count = (SELECT count(*) FROM chunks WHERE repo_id = $1)
                 WHERE id = $1",
                &[&repo, &now, &skipped],
            )
        })?;
        Ok(())
    }

    fn prune_vectors(&mut self) -> Result<u64> {
        if self.pruning.is_empty() {
            return Ok(0);
        }
        let repos: Vec<i64> = self.pruning.iter().copied().collect();
        let pruned = self.with(|c| {
            c.execute(
                "DELETE FROM embeddings e WHERE e.repo_id = ANY($1) AND NOT EXISTS
                   (SELECT 1 FROM chunks c WHERE c.repo_id = e.repo_id AND c.embed_hash = e.hash)",
                &[&repos],
            )
        })?;
        self.pruning.clear();
        Ok(pruned)
    }

    fn search_lexical(&self, query: &LexicalQuery) -> Result<Vec<ChunkHit>> {
        read::lexical(self, query)
    }

    fn search_files_lexical(&self, query: &LexicalQuery) -> Result<Vec<FileHit>> {
        read::files_lexical(self, query)
    }

    fn files_by_stem(
        &self,
        keys: &[String],
        repos: &[String],
        limit: usize,
    ) -> Result<Vec<(String, String)>> {
        read::files_by_stem(self, keys, repos, limit)
    }

    fn file_chunks(&self, repo: &str, path: &str) -> Result<Vec<ChunkHit>> {
        read::file_chunks(self, repo, path)
    }

    fn callers(&self, name: &str, repos: &[String], limit: usize) -> Result<Vec<CallRef>> {
        read::callers(self, name, repos, limit)
    }

    fn calls_from(
        &self,
        repo: &str,
        path: &str,
        caller: &str,
        limit: usize,
    ) -> Result<Vec<CallRef>> {
        read::calls_from(self, repo, path, caller, limit)
    }

    fn find_definitions(&self, query: &quarry_core::DefinitionQuery) -> Result<Vec<SymbolRef>> {
        read::definitions(self, query)
    }

    fn stats(&self) -> Result<Vec<RepoStats>> {
        read::stats(self)
    }

    fn embedding_model(&self) -> Result<Option<String>> {
        self.meta("embedding_model")
    }

    fn set_embedding_model(&mut self, fingerprint: &str) -> Result<bool> {
        let stored = self.meta("embedding_model")?;
        if stored.as_deref() == Some(fingerprint) {
            return Ok(false);
        }
        self.transaction(|tx| {
            let dropped = tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM embeddings)
                         OR EXISTS (SELECT 1 FROM commit_vectors)",
                    &[],
                )?
                .get::<_, bool>(0);
            // TRUNCATE, not DELETE: deleted rows stay "recently dead" while any transaction on
            // the server is older, and the next model's index build would still read them and
            // fail on their dimension ("expected 4 dimensions, not 8", met with tests running
            // beside each other on one server).
            tx.batch_execute(
                "DROP INDEX IF EXISTS embeddings_hnsw; TRUNCATE embeddings, commit_vectors;
                 DELETE FROM quarry_meta WHERE key = 'vector_dims';",
            )?;
            tx.execute(
                "INSERT INTO quarry_meta(key, value) VALUES ('embedding_model', $1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&fingerprint],
            )?;
            Ok(dropped || stored.is_some())
        })
    }

    fn pending_embeddings(
        &self,
        limit: usize,
        after: Option<&str>,
        repos: &[String],
    ) -> Result<Vec<PendingEmbedding>> {
        read::pending_embeddings(self, limit, after, repos)
    }

    fn put_embeddings(&mut self, vectors: &[(String, Vec<f32>)]) -> Result<()> {
        let Some(dims) = vectors.first().map(|(_, v)| v.len()) else {
            return Ok(());
        };
        if let Some((hash, v)) = vectors.iter().find(|(_, v)| v.len() != dims) {
            bail!(
                "vectors of different lengths in one batch ({dims} and {} for {hash})",
                v.len()
            );
        }
        let stored: Option<usize> = self.meta("vector_dims")?.and_then(|d| d.parse().ok());
        if let Some(stored) = stored.filter(|&s| s != dims) {
            bail!(
                "PostgreSQL at {} holds {stored}-dimensional vectors and the configured model \
                 makes {dims}: vectors of two models are never mixed. Set the model the index was \
                 built with, or re-embed: `quarry index --rebuild`",
                self.shown_url
            );
        }
        let hashes: Vec<&str> = vectors.iter().map(|(h, _)| h.as_str()).collect();
        let texts: Vec<String> = vectors.iter().map(|(_, v)| vector_text(v)).collect();
        self.transaction(|tx| {
            if stored.is_none() {
                tx.execute(
                    "INSERT INTO quarry_meta(key, value) VALUES ('vector_dims', $1)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    &[&dims.to_string()],
                )?;
                tx.batch_execute(&format!(
                    "CREATE INDEX IF NOT EXISTS embeddings_hnsw ON embeddings
                     USING hnsw ((vector::vector({dims})) vector_cosine_ops)"
                ))?;
            }
            tx.execute(
                "INSERT INTO embeddings(repo_id, hash, vector)
                 SELECT DISTINCT c.repo_id, u.hash, u.v::vector
                 FROM unnest($1::text[], $2::text[]) AS u(hash, v)
                 JOIN chunks c ON c.embed_hash = u.hash
                 ON CONFLICT (repo_id, hash) DO NOTHING",
                &[&hashes, &texts],
            )?;
            Ok(())
        })
    }

    fn coverage(&self, repos: &[String]) -> Result<Coverage> {
        read::coverage(self, repos)
    }

    fn search_vector(&self, query: &VectorQuery) -> Result<Vec<ChunkHit>> {
        let dims: Option<usize> = self.meta("vector_dims")?.and_then(|d| d.parse().ok());
        match dims {
            Some(dims) => read::vector(self, query, dims),
            None => Ok(Vec::new()),
        }
    }

    fn size_bytes(&self) -> u64 {
        self.with(|c| c.query_one("SELECT pg_database_size(current_database())", &[]))
            .map(|r| r.get::<_, i64>(0) as u64)
            .unwrap_or(0)
    }

    fn trigram_lookup(
        &self,
        required: &quarry_core::Requirement,
        known: Option<i64>,
    ) -> Result<TrigramLookup> {
        self.with(|c| trigrams::lookup(c, required, known))
    }

    fn served_by(&self) -> Option<quarry_core::ServedBy> {
        let replica = self.replica.borrow();
        Some(quarry_core::ServedBy {
            server: replica
                .as_ref()
                .map_or(&self.shown_url, |r| &r.shown_url)
                .clone(),
            replica: replica.is_some(),
            lag_s: replica.as_ref().map(|r| r.lag_s),
            skipped: self.skipped.borrow().clone(),
        })
    }
}

impl quarry_core::history::HistoryStore for PgStore {
    fn known_commits(&self, repo: i64) -> Result<HashSet<String>> {
        history::known(self, repo)
    }
    fn put_commits(&mut self, repo: i64, commits: &[CommitRecord]) -> Result<()> {
        self.transaction(|tx| history::put(tx, repo, commits, &mut self.lexicon.borrow_mut()))
    }
    fn drop_commits(&mut self, repo: i64, shas: &[String]) -> Result<()> {
        self.transaction(|tx| history::drop(tx, repo, shas))
    }
    fn search_commits(&self, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history::search(self, query)
    }
    fn commits_by_prefix(
        &self,
        prefix: &str,
        repos: &[String],
    ) -> Result<Vec<(String, CommitRecord)>> {
        history::by_prefix(self, prefix, repos)
    }
    fn touches(&self, path: &str, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history::touches(self, path, query)
    }
    fn changed_paths(&self, repo: &str, shas: &[String]) -> Result<HashMap<String, Vec<String>>> {
        history::changed_paths(self, repo, shas)
    }
    fn commit_patches(&self, repo: &str, shas: &[String]) -> Result<HashMap<String, String>> {
        history::patches(self, repo, shas)
    }
    fn set_history_embedding(&mut self, repo: i64, on: bool) -> Result<()> {
        history::set_embedding(self, repo, on)
    }
    fn history_stats(&self) -> Result<Vec<HistoryStats>> {
        history::stats(self)
    }
    fn has_commit_vectors(&self, repos: &[String]) -> Result<bool> {
        history::any_vectors(self, repos)
    }
    fn pending_commit_embeddings(
        &self,
        limit: usize,
        newest: Option<u64>,
        repos: &[String],
    ) -> Result<Vec<PendingCommit>> {
        history::pending(self, limit, newest, repos)
    }
    fn waiting_commit_embeddings(&self, newest: Option<u64>, repos: &[String]) -> Result<u64> {
        history::waiting(self, newest, repos)
    }
    fn put_commit_vectors(&mut self, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        history::put_vectors(self, vectors)
    }
    fn search_commit_vectors(&self, vector: &[f32], query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history::search_vectors(self, vector, query)
    }
}
