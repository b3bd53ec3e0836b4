//! Watch mode: file-system events (notify) trigger an incremental index pass of the repo
//! they fall in, after a short quiet period so a save, a branch switch touching hundreds of
//! files or a formatter run is one pass, not hundreds. A pass is the ordinary `index_repo`
//! (size/mtime pre-check, then content hash), so renames, deletes, `.gitignore` edits and
//! branch switches need no special handling: the pass sees the tree as it now is. The write
//! lock is taken per pass, so searches and other commands run while watching.

use crate::answer::IndexReport;
use crate::index::IndexOptions;
use crate::progress::NoProgress;
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use notify::{RecursiveMode, Watcher};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Quiet time after the last event before a pass starts.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// A pass starts at most this long after the first event, even if events keep coming.
pub const MAX_DELAY: Duration = Duration::from_millis(1000);

#[derive(Debug, Clone, Serialize)]
pub struct WatchPass {
    pub repo: String,
    /// Events that triggered the pass.
    pub events: usize,
    pub index: IndexReport,
    /// Chunk texts embedded by the pass.
    pub embedded: u64,
    pub elapsed_ms: u64,
}

/// Editor and tool droppings whose events alone never start a pass (vim swap and backup
/// files, emacs lock files, `~` backups); the pass itself indexes only what discovery accepts.
fn is_noise(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".tmp")
        || name.starts_with(".#")
        || name == "4913"
        || path.components().any(|c| c.as_os_str() == ".git")
}

/// Watches `roots` (repo folders already indexed in the workspace at `dir`) until `stop`
/// returns true or the watcher fails; calls `on_pass` after every pass.
pub fn watch(
    dir: &Path,
    roots: &[PathBuf],
    lock_wait: Duration,
    stop: &dyn Fn() -> bool,
    on_pass: &mut dyn FnMut(&WatchPass),
) -> Result<()> {
    let roots: Vec<PathBuf> = roots
        .iter()
        .map(|r| {
            r.canonicalize()
                .with_context(|| format!("cannot watch {}", r.display()))
        })
        .collect::<Result<_>>()?;
    // The workspace's own files (index, WAL, caches, the daemon's socket) may lie inside a
    // watched repo: the pass's writes there must not start the next pass.
    let own = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .context("cannot start the file watcher")?;
    for root in &roots {
        watcher
            .watch(root, RecursiveMode::Recursive)
            .with_context(|| format!("cannot watch {}", root.display()))?;
    }
    // Catch up first: files may have changed while nothing was watching.
    for root in &roots {
        pass(dir, root, 0, lock_wait, on_pass)?;
    }
    while !stop() {
        let first = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(event) => event,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let started = Instant::now();
        let mut touched: BTreeSet<usize> = BTreeSet::new();
        let mut events = 0usize;
        let mut note = |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            // Reads (the index pass's own among them) change nothing.
            if matches!(event.kind, notify::EventKind::Access(_)) {
                return;
            }
            for path in &event.paths {
                if is_noise(path) || path.starts_with(&own) {
                    continue;
                }
                if let Some(i) = roots.iter().position(|r| path.starts_with(r)) {
                    touched.insert(i);
                    events += 1;
                }
            }
        };
        note(first);
        while started.elapsed() < MAX_DELAY {
            match rx.recv_timeout(DEBOUNCE) {
                Ok(event) => note(event),
                Err(_) => break,
            }
        }
        for i in touched {
            pass(dir, &roots[i], events, lock_wait, on_pass)?;
        }
    }
    Ok(())
}

fn pass(
    dir: &Path,
    root: &Path,
    events: usize,
    lock_wait: Duration,
    on_pass: &mut dyn FnMut(&WatchPass),
) -> Result<()> {
    let started = Instant::now();
    let (mut ws, lock) = Workspace::open_for_writing(dir, lock_wait, false)?;
    let name = ws
        .store()
        .repos()?
        .into_iter()
        .find(|r| Path::new(&r.root) == root)
        .map(|r| r.name);
    let opts = IndexOptions {
        name,
        ..Default::default()
    };
    let index = ws.index_repo(root, &opts, &NoProgress)?;
    let mut embedded = 0;
    ws.lock_per_batch(lock);
    if index.added + index.changed > 0 {
        if let (Some(report), _) = ws.embed_changes(std::slice::from_ref(&index.repo))? {
            embedded = report.embedded;
        }
    }
    on_pass(&WatchPass {
        repo: index.repo.clone(),
        events,
        index,
        embedded,
        elapsed_ms: started.elapsed().as_millis() as u64,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_droppings_and_git_internals_are_noise() {
        for noisy in [
            "/r/src/.main.rs.swp",
            "/r/src/main.rs~",
            "/r/src/.#main.rs",
            "/r/src/4913",
            "/r/.git/index.lock",
        ] {
            assert!(is_noise(Path::new(noisy)), "{noisy}");
        }
        for real in ["/r/src/main.rs", "/r/.gitignore", "/r/docs/git.md"] {
            assert!(!is_noise(Path::new(real)), "{real}");
        }
    }
}
