//! A workspace is one folder holding one index file (`index.sqlite`) with any number of
//! repos in it. Its location: `--index-dir`, else `$QUARRY_HOME`, else the user's data
//! directory (`~/.local/share/quarry` on Linux).

use crate::WriteLock;
use anyhow::{bail, Context, Result};
use quarry_core::{Embedder, Store};
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
}
