//! A workspace is one folder holding one index file (`index.sqlite`) with any number of
//! repos in it. Its location: `--index-dir`, else `$QUARRY_HOME`, else the user's data
//! directory (`~/.local/share/quarry` on Linux).

use crate::WriteLock;
use anyhow::{bail, Context, Result};
use quarry_core::{Embedder, RepoInfo, Store};
use quarry_store::SqliteStore;
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
}

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

    pub fn index_file(dir: &Path) -> PathBuf {
        dir.join("index.sqlite")
    }

    /// Opens the workspace in `dir`, creating it if needed (for writers).
    pub fn open(dir: &Path) -> Result<Workspace> {
        let store = SqliteStore::open(&Self::index_file(dir))?;
        Ok(Workspace {
            dir: dir.to_path_buf(),
            store: Box::new(store),
            embedder: None,
            batch_lock: None,
        })
    }

    /// Opens an existing workspace (for readers); a missing one is an error saying what to do.
    pub fn open_existing(dir: &Path) -> Result<Workspace> {
        if !Self::index_file(dir).exists() {
            bail!(
                "no index in {} yet: run `quarry index PATH` first",
                dir.display()
            );
        }
        Self::open(dir)
    }

    /// Opens the workspace for writing: takes the write lock (waiting up to `wait`), and on
    /// `rebuild` replaces an index file that is damaged.
    pub fn open_for_writing(
        dir: &Path,
        wait: Duration,
        rebuild: bool,
    ) -> Result<(Workspace, WriteLock)> {
        let lock = WriteLock::acquire(dir, wait)?;
        let ws = match Self::open(dir) {
            Err(e) if rebuild && quarry_store::is_corrupt(&e) => {
                let file = Self::index_file(dir);
                SqliteStore::destroy(&file).context("cannot remove the damaged index")?;
                Self::open(dir)?
            }
            other => other?,
        };
        Ok((ws, lock))
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
}
