//! Readers on a workspace kept open between a server's requests. Opening one per request
//! (the index file, its schema check, its config; for PostgreSQL a connection, for
//! OpenSearch a client) was a fixed cost on every answer of `quarry serve`, the MCP server
//! and the daemon. A reader goes back to the pool when its request ends and is handed out
//! again only while the index is the same one: a rebuilt file (another inode), or another
//! store in the config, empties the pool.

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::Mutex;

use anyhow::Result;

use crate::workspace::Workspace;

/// At most this many idle readers are kept (the servers work on two requests per CPU).
const MAX_IDLE: usize = 16;

/// What identifies the index readers were opened on.
#[derive(Debug, Clone, PartialEq, Eq)]
enum IndexKey {
    /// The SQLite file, by device and inode (a rebuild writes a new file).
    File(u64, u64),
    /// A server store, by its URL.
    Url(String),
}

fn index_key(dir: &Path) -> Option<IndexKey> {
    if let Ok(Some(url)) = Workspace::store_url(dir) {
        return Some(IndexKey::Url(url));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(Workspace::index_file(dir)).ok()?;
        Some(IndexKey::File(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[derive(Default)]
pub(crate) struct Pool {
    state: Mutex<(Option<IndexKey>, Vec<Workspace>)>,
}

impl Pool {
    /// A reader on `dir`'s index: an idle one when the index is the one it was opened on,
    /// else a new one.
    pub(crate) fn lease(&self, dir: &Path) -> Result<Lease<'_>> {
        let key = index_key(dir);
        let idle = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.0 != key || key.is_none() {
                state.1.clear();
                state.0 = key.clone();
            }
            state.1.pop()
        };
        let ws = match idle {
            Some(ws) => ws,
            None => Workspace::open_existing(dir)?,
        };
        Ok(Lease {
            ws: Some(ws),
            pool: self,
            key,
        })
    }
}

/// A reader lent by the pool; it goes back when dropped.
pub struct Lease<'p> {
    ws: Option<Workspace>,
    pool: &'p Pool,
    key: Option<IndexKey>,
}

impl Deref for Lease<'_> {
    type Target = Workspace;
    fn deref(&self) -> &Workspace {
        self.ws.as_ref().expect("held until dropped")
    }
}

impl DerefMut for Lease<'_> {
    fn deref_mut(&mut self) -> &mut Workspace {
        self.ws.as_mut().expect("held until dropped")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(ws) = self.ws.take() else { return };
        if self.key.is_none() {
            return;
        }
        let mut state = self.pool.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 == self.key && state.1.len() < MAX_IDLE {
            state.1.push(ws);
        }
    }
}
