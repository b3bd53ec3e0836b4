//! A workspace is one folder holding one index file (`index.sqlite`) with any number of
//! repos in it. Its location: `--index-dir`, else `$QUARRY_HOME`, else the user's data
//! directory (`~/.local/share/quarry` on Linux).
//!
//! Everything about the workspace apart from searching lives in this folder: where it is and
//! which store holds the index (here), who may write it (`lock.rs`), its settings
//! (`config.rs`, `keys.rs`), and what happens to a damaged index (`check`, `diagnose`, and the
//! move aside of `open_for_writing` on rebuild). The stages above open a workspace and read
//! its store; nothing here knows how they search.

pub mod config;
mod keys;
pub mod lock;

use anyhow::{bail, Result};
use lock::WriteLock;
use quarry_core::{Embedder, RepoInfo, Store};
use quarry_store::{Access, Checked, SqliteStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub struct Workspace {
    /// The workspace folder: the index file and `config.toml` live here.
    pub(crate) dir: PathBuf,
    store: Box<dyn Store + Send>,
    /// The model semantic search and backfill use; `None` means lexical only.
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    /// A write lock handed over by `lock_per_batch`: embedding lets it go while the model
    /// computes and takes it for each batch it stores (lock.rs).
    batch_lock: Option<WriteLock>,
    /// Set by `open_for_writing(rebuild)` when the old index was damaged: where it was moved.
    pub moved_aside: Option<PathBuf>,
    /// What a resident process keeps for exact searches (file lists and states kept true by
    /// inotify, the indexed files' states): lent by a `Service`, else none.
    pub(crate) exact_memory: Option<Arc<dyn ExactCaches>>,
}

/// What a resident process keeps between exact searches (`exact::ExactMemory`), as a search
/// reads it.
pub(crate) trait ExactCaches: Send + Sync {
    /// The indexed files `requirement` leaves, from the states kept of them.
    fn files(
        &self,
        dir: &Path,
        requirement: &quarry_grep::Requirement,
    ) -> Result<quarry_grep::IndexedFiles>;
    /// The tree's file lists, states and texts.
    fn tree(&self) -> &dyn quarry_grep::TreeMemory;
}

/// How long a reader waits for a writer that is creating or upgrading the schema.
const SCHEMA_WAIT: Duration = Duration::from_secs(5);

impl Workspace {
    /// The workspace folder when none is given: `$QUARRY_HOME`, else the data directory.
    pub fn default_dir() -> PathBuf {
        if let Some(home) = std::env::var_os("QUARRY_HOME").filter(|h| !h.is_empty()) {
            return PathBuf::from(home);
        }
        dirs::data_dir()
            .unwrap_or_else(|| PathBuf::from("."))
            .join("quarry")
    }

    /// The workspace folder (the index, `config.toml`, caches).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn index_file(dir: &Path) -> PathBuf {
        dir.join("index.sqlite")
    }

    /// Where exact searches keep folders' file lists between runs (quarry-grep's `listing`).
    pub fn listing_cache(dir: &Path) -> PathBuf {
        dir.join("cache").join("listing")
    }

    /// SQLite's quick check of the workspace's index (reading only): sound, damaged (what is
    /// wrong), or busy (locked by another connection: not damage).
    pub fn check(dir: &Path) -> Checked {
        quarry_store::check_file(&Self::index_file(dir))
    }

    /// [`Workspace::check`] and what a page check cannot see: full integrity, the full-text
    /// indexes' own checks, every stored vector and text (`status --check --deep`).
    pub fn check_deep(dir: &Path) -> Checked {
        quarry_store::check_file_deep(&Self::index_file(dir))
    }

    /// `err`, met while using the index in `dir`, turned into "the index is damaged, here is
    /// what works" when a quick check of the file says so.
    pub fn diagnose(dir: &Path, err: anyhow::Error) -> anyhow::Error {
        quarry_store::diagnose(&Self::index_file(dir), err)
    }

    /// The server the workspace's index lives in (a PostgreSQL database or an OpenSearch
    /// cluster), if not the embedded file:
    /// `$QUARRY_DB_URL` (which `--db-url` sets), else the workspace's `store.url`.
    pub fn store_url(dir: &Path) -> Result<Option<String>> {
        if let Some(url) = std::env::var("QUARRY_DB_URL")
            .ok()
            .filter(|u| !u.is_empty())
        {
            return Ok(Some(url));
        }
        let config = config::Config::load(dir)?;
        if !config.is_set("store.url") {
            return Ok(None);
        }
        config.get("store.url").map(Some)
    }

    /// The standbys searches may read from: `$QUARRY_DB_READ_URLS` (which `--db-read-url`
    /// sets), else the workspace's `store.read_urls`.
    fn store_read_urls(config: &config::Config) -> Result<Vec<String>> {
        let listed = match std::env::var("QUARRY_DB_READ_URLS") {
            Ok(urls) if !urls.trim().is_empty() => urls,
            _ if config.is_set("store.read_urls") => config.get("store.read_urls")?,
            _ => return Ok(Vec::new()),
        };
        Ok(listed
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(String::from)
            .collect())
    }

    fn with_store(dir: &Path, access: Access) -> Result<Workspace> {
        let url = Self::store_url(dir)?;
        if let Some(url) = &url {
            config::check_store_url(url)?;
        }
        let store: Box<dyn Store + Send> = match url {
            // An OpenSearch cluster: its replicas serve reads by themselves.
            Some(url) if quarry_opensearch::is_opensearch_url(&url) => {
                let config = config::Config::load(dir)?;
                if !Self::store_read_urls(&config)?.is_empty() {
                    bail!(
                        "store.read_urls (--db-read-url) names PostgreSQL standbys; an OpenSearch cluster serves reads from its own replicas: unset it for {}",
                        quarry_opensearch::redact(&url)
                    );
                }
                let timeout = config.seconds("store.timeout_s");
                // Only a writer finishes what a dead writer left (a reader cannot tell a
                // dead writer's batch from a live one's).
                Box::new(match access {
                    Access::Read => {
                        quarry_opensearch::OpenSearchStore::connect_reading(&url, timeout)?
                    }
                    Access::Write => {
                        quarry_opensearch::OpenSearchStore::connect_with(&url, timeout)?
                    }
                })
            }
            Some(url) => {
                let config = config::Config::load(dir)?;
                let timeout = config.seconds("store.timeout_s");
                let read_urls = Self::store_read_urls(&config)?;
                // Index runs write, and read what they wrote: only searches go to standbys.
                if access == Access::Read && !read_urls.is_empty() {
                    Box::new(quarry_postgres::PgStore::connect_reading(
                        &url,
                        &read_urls,
                        config.number("store.max_lag_s"),
                        timeout,
                    )?)
                } else {
                    Box::new(quarry_postgres::PgStore::connect_with(&url, timeout)?)
                }
            }
            None => Box::new(SqliteStore::open_with(&Self::index_file(dir), access)?),
        };
        Ok(Workspace {
            dir: dir.to_path_buf(),
            store,
            embedder: None,
            batch_lock: None,
            moved_aside: None,
            exact_memory: None,
        })
    }

    /// Opens an existing workspace for reading; a missing one is an error saying what to do.
    /// Readers never create or migrate the schema: one that meets a schema being created or
    /// upgraded waits for its writer (up to a few seconds), and upgrades an older one itself
    /// under the write lock when no writer is at work.
    pub fn open_existing(dir: &Path) -> Result<Workspace> {
        if !Self::index_file(dir).exists() && Self::store_url(dir)?.is_none() {
            bail!(
                "no index in {} yet: run `quarry index PATH` first",
                dir.display()
            );
        }
        let started = std::time::Instant::now();
        loop {
            let err = match Self::with_store(dir, Access::Read) {
                Ok(ws) => return Ok(ws),
                Err(e) if quarry_store::is_schema_pending(&e) => e,
                Err(e) => return Err(e),
            };
            match WriteLock::acquire(dir, Duration::ZERO) {
                Ok(lock) => {
                    drop(Self::with_store(dir, Access::Write)?);
                    drop(lock);
                }
                Err(busy) if lock::is_lock_busy(&busy) => {
                    if started.elapsed() > SCHEMA_WAIT {
                        return Err(err.context(format!("{busy:#}")));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                // No lock to be had (a read-only folder): nobody can upgrade it here.
                Err(e) => return Err(err.context(format!("{e:#}"))),
            }
        }
    }

    /// Opens the workspace for writing: takes the write lock (waiting up to `wait`), then
    /// creates or upgrades the index. On `rebuild`, an index that a check proves damaged is
    /// moved aside (kept for inspection, named in `moved_aside`) and a new one is started; a
    /// busy one (another connection holds it locked) or one that only fails to open is never
    /// moved: the error says why.
    pub fn open_for_writing(
        dir: &Path,
        wait: Duration,
        rebuild: bool,
    ) -> Result<(Workspace, WriteLock)> {
        let lock = WriteLock::acquire(dir, wait)?;
        let file = Self::index_file(dir);
        let mut moved_aside = None;
        let ws = match Self::with_store(dir, Access::Write) {
            // A rebuild never needs a damaged file: when the file does not open for writing
            // and a check proves it damaged (header, pages, a schema not the one written), it
            // goes aside; a read-only or busy one stays, and the error says so.
            Err(e) if rebuild && file.exists() && !lock::is_lock_busy(&e) => {
                if std::fs::metadata(&file).is_ok_and(|m| m.permissions().readonly()) {
                    bail!(
                        "the index {} is read-only: make it writable (chmod u+w) or use another --index-dir",
                        file.display()
                    );
                }
                match quarry_store::check_file(&file) {
                    Checked::Damaged(_) => {}
                    Checked::Busy(why) => bail!("{why}"),
                    Checked::Sound => return Err(e),
                }
                moved_aside = Some(quarry_store::move_aside(&file)?);
                Self::with_store(dir, Access::Write)?
            }
            // The deep check: damage inside pages (a vector, an FTS segment, a text) would
            // survive a rebuild that keeps the file (vectors are reused by their text's hash).
            // Only where the index is this file: a PostgreSQL or OpenSearch workspace has none.
            Ok(ws) if rebuild && ws.store().served_by().is_none() && file.exists() => {
                match quarry_store::check_file_deep(&file) {
                    Checked::Damaged(_) => {
                        drop(ws);
                        moved_aside = Some(quarry_store::move_aside(&file)?);
                        Self::with_store(dir, Access::Write)?
                    }
                    Checked::Busy(why) => bail!("{why}"),
                    Checked::Sound => ws,
                }
            }
            other => other?,
        };
        Ok((Workspace { moved_aside, ..ws }, lock))
    }

    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    pub fn store_mut(&mut self) -> &mut (dyn Store + Send) {
        self.store.as_mut()
    }

    /// Hands the run's write lock to the workspace for the embedding that follows: from here
    /// on the lock is held only while a batch is stored, so other writers can interleave.
    pub fn lock_per_batch(&mut self, lock: WriteLock) {
        self.batch_lock = Some(lock);
    }

    /// The store and the lock handed over by `lock_per_batch`, borrowed together.
    pub(crate) fn store_and_lock(&mut self) -> (&mut (dyn Store + Send), Option<&mut WriteLock>) {
        (self.store.as_mut(), self.batch_lock.as_mut())
    }

    /// The repo rooted at `root`, registered under `name` if it is new. A repo whose folder no
    /// longer exists and that `is_same` recognises (by default: the same name) is the same
    /// repo moved on disk: its root is updated and everything stored for it is kept. Returns
    /// the old root when that happened.
    pub fn register_repo(
        &mut self,
        name: &str,
        root: &str,
        is_same: &dyn Fn(&RepoInfo) -> bool,
    ) -> Result<(RepoInfo, Option<String>)> {
        let repos = self.store().repos()?;
        if let Some(repo) = repos.iter().find(|r| r.root == root) {
            return Ok((repo.clone(), None));
        }
        let moved = repos
            .iter()
            .filter(|r| !Path::new(&r.root).exists())
            .find(|r| r.name == name || is_same(r));
        if let Some(repo) = moved {
            self.store_mut().move_repo(repo.id, root)?;
            let moved = RepoInfo {
                root: root.to_string(),
                ..repo.clone()
            };
            return Ok((moved, Some(repo.root.clone())));
        }
        Ok((self.store_mut().ensure_repo(name, root)?, None))
    }

    /// The indexed repo whose folder contains `path` (the innermost one when repos nest), and
    /// `path` relative to its root. Searches that start from a working directory are scoped
    /// by this, so an agent in one project never gets paths of another.
    pub fn repo_containing(&self, path: &Path) -> Result<Option<(RepoInfo, PathBuf)>> {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let repos = self.store().repos()?;
        Ok(repos
            .into_iter()
            .filter_map(|repo| {
                let root = Path::new(&repo.root);
                let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
                let relative = path.strip_prefix(&root).ok()?.to_path_buf();
                Some((root.components().count(), repo, relative))
            })
            .max_by_key(|(depth, _, _)| *depth)
            .map(|(_, repo, relative)| (repo, relative)))
    }

    /// The definitions the index holds for `repo`'s `rel` when the file at `full` is as it was
    /// indexed (its size and modification time, the indexer's own pre-check): the file's
    /// definitions without parsing it. `None` when it is not indexed, changed since, or the
    /// store does not keep them at hand.
    pub(crate) fn symbols_as_indexed(
        &self,
        repo: &str,
        rel: &str,
        full: &Path,
    ) -> Option<Vec<quarry_core::Symbol>> {
        let (state, symbols) = self.store().indexed_symbols(repo, rel).ok()??;
        let meta = std::fs::metadata(full).ok()?;
        (state.size == meta.len() && state.mtime_ns == quarry_core::mtime_ns(&meta))
            .then_some(symbols)
    }
}
