//! File texts kept in memory by a resident process (the servers, the daemon) for its exact
//! searches: a literal the index cannot narrow to a few files (sympy's `def simplify` leaves
//! 347 of 2,064) is then a scan of memory instead of 347 opens and reads — on sympy the
//! larger part of such a search's time in `quarry serve`. A text is kept with the file's state
//! (size, modification time) and handed out only for that state; the states come from the
//! tree memory, which inotify keeps true (memory.rs), so an edited file is read again.
//! Bounded by bytes; the texts used longest ago go first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::Stamp;

/// Files larger than this are read each time (a scan of them outweighs the read).
const MAX_FILE: u64 = 1 << 20;

pub struct TextCache {
    budget: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    texts: HashMap<PathBuf, Kept>,
    bytes: usize,
    clock: u64,
}

struct Kept {
    stamp: Stamp,
    text: Arc<[u8]>,
    used: u64,
}

impl TextCache {
    /// A cache holding at most `budget` bytes of text.
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The text of `path` as it is in the state `stamp`: kept, or read now (and kept when it
    /// is small enough and still that size). `None` when it cannot be read.
    pub fn text(&self, path: &Path, stamp: Stamp) -> Option<Arc<[u8]>> {
        if let Ok(mut inner) = self.inner.lock() {
            inner.clock += 1;
            let now = inner.clock;
            if let Some(kept) = inner.texts.get_mut(path).filter(|k| k.stamp == stamp) {
                kept.used = now;
                return Some(kept.text.clone());
            }
        }
        let text: Arc<[u8]> = std::fs::read(path).ok()?.into();
        // Changed since its state was read: searched as it is now, kept under no state.
        if text.len() as u64 == stamp.0 && stamp.0 <= MAX_FILE {
            self.keep(path, stamp, text.clone());
        }
        Some(text)
    }

    fn keep(&self, path: &Path, stamp: Stamp, text: Arc<[u8]>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let used = inner.clock;
        let size = text.len();
        if let Some(old) = inner
            .texts
            .insert(path.to_path_buf(), Kept { stamp, text, used })
        {
            inner.bytes -= old.text.len();
        }
        inner.bytes += size;
        if inner.bytes > self.budget {
            // Down to seven eighths of the budget, the longest unused first.
            let mut by_use: Vec<(u64, PathBuf)> = inner
                .texts
                .iter()
                .map(|(p, k)| (k.used, p.clone()))
                .collect();
            by_use.sort_unstable_by_key(|(used, _)| *used);
            let target = self.budget / 8 * 7;
            for (_, path) in by_use {
                if inner.bytes <= target {
                    break;
                }
                if let Some(gone) = inner.texts.remove(&path) {
                    inner.bytes -= gone.text.len();
                }
            }
        }
    }

    /// The most bytes it holds.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes of text held now.
    pub fn bytes(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp_of(path: &Path) -> Stamp {
        let m = std::fs::metadata(path).unwrap();
        (m.len(), quarry_core::mtime_ns(&m))
    }

    #[test]
    fn a_text_is_handed_out_only_for_the_state_it_was_read_in() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.py");
        std::fs::write(&a, "x = 1\n").unwrap();
        let cache = TextCache::new(1 << 20);
        let first = stamp_of(&a);
        assert_eq!(&*cache.text(&a, first).unwrap(), b"x = 1\n");
        // Rewritten behind the cache's back: the old state still gets the old text, the new
        // state the new one.
        std::fs::write(&a, "x = 22\n").unwrap();
        let second = stamp_of(&a);
        assert_ne!(first, second);
        assert_eq!(&*cache.text(&a, second).unwrap(), b"x = 22\n");
        assert_eq!(cache.bytes(), 7);
    }

    #[test]
    fn the_budget_holds_the_texts_used_last() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TextCache::new(100);
        let mut paths = Vec::new();
        for i in 0..5 {
            let p = dir.path().join(format!("{i}.txt"));
            std::fs::write(&p, vec![b'a'; 30]).unwrap();
            paths.push(p);
        }
        for p in &paths {
            cache.text(p, stamp_of(p)).unwrap();
        }
        assert!(cache.bytes() <= 100, "{}", cache.bytes());
        // The last read is kept; a missing file is no text.
        let last = paths.last().unwrap();
        assert!(cache.inner.lock().unwrap().texts.contains_key(last));
        assert!(cache.text(&dir.path().join("gone"), (1, 1)).is_none());
    }
}
