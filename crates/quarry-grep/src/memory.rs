//! What a search remembers of the tree between searches. A short-lived process remembers
//! nothing ([`Cold`]): it takes each folder's file list from the kept listing (one `stat` per
//! folder to trust it) and `stat`s every listed file for the index's "is this the file I
//! indexed" check — on sympy about 2 ms of a 4 ms selective grep. A resident process (the
//! workspace daemon) keeps both in memory ([`WarmTree`]) and learns what changed from the
//! kernel (inotify) instead of asking every file again.
//!
//! Why it is exact, not merely likely: every search first reads all the events queued so far
//! (inotify queues an event when the change is made, so a change made before the search
//! began is always seen), and an event drops what it touches — a file's remembered state on
//! any change to it, every remembered list on anything created, removed or renamed in a
//! walked folder, or on a change to an ignore file. A list is remembered only when the
//! folders' times, checked after their watches were added, still match the walk (a change
//! between the walk and the watch is caught there). A queue overflow, or a watch the kernel
//! refuses (too many folders), forgets everything and the search runs cold.
//!
//! A list holds what the kept listing holds (listing.rs): the files walked, and the hidden
//! files the walk skipped only for being hidden, which a typed search may take.
//!
//! What inotify does not see, and the cold path would: a file changed through a hard link
//! outside the walked folders, or through a writable `mmap` with no `write`. Both are rare in
//! source trees; `quarry daemon stop` returns to the cold path.
//!
//! Written here rather than with `notify` (which quarry's watch mode uses): `notify` reads
//! events on its own thread, so a search could not know that every change made before it has
//! been seen; the `inotify` crate lets the search read the queue itself.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Result;

use crate::listing::{self, FolderFiles};
use crate::state_key;

pub use crate::Stamp;

/// What a search may take from memory instead of the file system.
pub trait TreeMemory: Sync {
    /// The files of the folder `root` (absolute paths under it, sorted), as
    /// `listing::folder_files` gives them for the default walk.
    fn files(&self, root: &Path, cache: Option<&Path>) -> Result<FolderFiles>;
    /// Whether [`TreeMemory::files`] answers without walking even with no cache folder (then
    /// a typed search filters its lists rather than walking with the types).
    fn keeps_lists(&self) -> bool {
        false
    }
    /// The remembered states of listed files (each `None` unless still true).
    fn stamps(&self, paths: &[&Path]) -> Vec<Option<Stamp>>;
    /// Remembers the states just read of listed files.
    fn keep(&self, read: &[(&Path, Stamp)]);
    /// Learns what changed since the last search; called first by every search.
    fn catch_up(&self) {}
    /// The file texts it keeps, if it keeps any (texts.rs).
    fn texts(&self) -> Option<&crate::texts::TextCache> {
        None
    }
}

/// Remembers nothing: a short-lived process's searches.
pub struct Cold;

impl TreeMemory for Cold {
    fn files(&self, root: &Path, cache: Option<&Path>) -> Result<FolderFiles> {
        listing::folder_files(root, None, None, cache, listing::WalkRules::default())
    }

    fn stamps(&self, paths: &[&Path]) -> Vec<Option<Stamp>> {
        vec![None; paths.len()]
    }

    fn keep(&self, _read: &[(&Path, Stamp)]) {}
}

/// File lists and file states kept true by inotify, for a resident process.
pub struct WarmTree {
    inner: Mutex<Inner>,
    texts: crate::texts::TextCache,
}

/// The bytes of file text a warm tree keeps (`QUARRY_TEXT_CACHE_MB` sets it; 0 keeps none).
fn text_budget() -> usize {
    std::env::var("QUARRY_TEXT_CACHE_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(256)
        << 20
}

struct Inner {
    inotify: inotify::Inotify,
    /// Each watch's folder.
    folders: HashMap<inotify::WatchDescriptor, PathBuf>,
    /// The watched folders that were walked (the others are watched for the files a walk
    /// depends on: ignore files and `.git` above a root, the user's configuration); only
    /// their files' states are remembered.
    walked: HashSet<PathBuf>,
    /// Files outside the walked folders that decide a walk (see `WalkedTree::depends_on`),
    /// and folders on the way to one that does not exist yet.
    depends_on: HashSet<PathBuf>,
    lists: HashMap<PathBuf, FolderFiles>,
    /// By the path's bytes with `.` components dropped (`state_key`, as the index's states):
    /// events and walks may spell a path differently, and hashing `Path` by component costs
    /// more than the rest of a warm search.
    stamps: HashMap<OsString, Stamp, foldhash::fast::FixedState>,
}

/// The most folders one process watches (the kernel's per-user limit is often 8,192 or more;
/// the daemon leaves room for the user's editors).
const MAX_WATCHES: usize = 50_000;

fn mask() -> inotify::WatchMask {
    use inotify::WatchMask as M;
    M::CREATE
        | M::DELETE
        | M::MOVED_FROM
        | M::MOVED_TO
        | M::MODIFY
        | M::ATTRIB
        | M::CLOSE_WRITE
        | M::DELETE_SELF
        | M::MOVE_SELF
}

impl WarmTree {
    /// `None` when the kernel offers no inotify instance (the caller searches cold).
    pub fn new() -> Option<Self> {
        let inotify = inotify::Inotify::init().ok()?;
        Some(Self {
            inner: Mutex::new(Inner {
                inotify,
                folders: HashMap::new(),
                walked: HashSet::new(),
                depends_on: HashSet::new(),
                lists: HashMap::new(),
                stamps: HashMap::default(),
            }),
            texts: crate::texts::TextCache::new(text_budget()),
        })
    }

    /// What it holds, after reading the events queued so far.
    pub fn summary(&self) -> TreeSummary {
        let Ok(mut inner) = self.inner.lock() else {
            return TreeSummary::default();
        };
        inner.catch_up();
        TreeSummary {
            folders: inner.folders.len(),
            lists: inner.lists.len(),
            files: inner.stamps.len(),
        }
    }
}

/// What a [`WarmTree`] holds now.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TreeSummary {
    /// Folders watched (walked ones and those holding files a walk depends on).
    pub folders: usize,
    /// Folders whose file lists are held.
    pub lists: usize,
    /// Files whose state is held.
    pub files: usize,
}

impl Inner {
    /// Reads every queued event and drops what they touch; called before each search.
    fn catch_up(&mut self) {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let events = match self.inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.forget_all();
                    return;
                }
            };
            let mut forget_lists = false;
            let mut forget_all = false;
            for event in events {
                use inotify::EventMask as E;
                if event.mask.contains(E::Q_OVERFLOW) {
                    forget_all = true;
                    continue;
                }
                let Some(folder) = self.folders.get(&event.wd).cloned() else {
                    continue;
                };
                let walked = self.walked.contains(&folder);
                let name = event.name.map(Path::new);
                let tree_changed = event.mask.intersects(
                    E::CREATE
                        | E::DELETE
                        | E::MOVED_FROM
                        | E::MOVED_TO
                        | E::DELETE_SELF
                        | E::MOVE_SELF
                        | E::IGNORED,
                );
                let path = name.map(|name| folder.join(name));
                let decides_walk = path.as_ref().is_some_and(|p| self.depends_on.contains(p));
                if (walked && tree_changed) || decides_walk || name.is_none() {
                    forget_lists = true;
                }
                if let Some(path) = path {
                    self.stamps.remove(&*state_key(&path));
                    if event.mask.contains(E::ISDIR) {
                        // A folder renamed or removed: everything under it.
                        self.stamps.retain(|p, _| !Path::new(p).starts_with(&path));
                    }
                }
                if event.mask.contains(E::IGNORED) {
                    if let Some(folder) = self.folders.remove(&event.wd) {
                        self.walked.remove(&folder);
                        self.stamps
                            .retain(|p, _| !Path::new(p).starts_with(&folder));
                    }
                }
            }
            if forget_all {
                self.forget_all();
            } else if forget_lists {
                self.lists.clear();
            }
        }
    }

    fn forget_all(&mut self) {
        self.lists.clear();
        self.stamps.clear();
    }

    /// Watches `folder`; false when the kernel refuses (or the limit is reached).
    fn watch(&mut self, folder: &Path, walked: bool) -> bool {
        if self.folders.len() >= MAX_WATCHES {
            return false;
        }
        match self.inotify.watches().add(folder, mask()) {
            Ok(wd) => {
                self.folders
                    .entry(wd)
                    .or_insert_with(|| folder.to_path_buf());
                if walked {
                    self.walked.insert(folder.to_path_buf());
                }
                true
            }
            // A folder that is gone: the check after watching sees it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Err(_) => false,
        }
    }

    /// Watches the folder holding `file`, or, when that folder does not exist, the nearest
    /// one that does, for the creation of the folder on the way.
    fn watch_for(&mut self, file: &Path) -> bool {
        let mut dependency = file.to_path_buf();
        while let Some(parent) = dependency.parent().map(Path::to_path_buf) {
            self.depends_on.insert(dependency.clone());
            if parent.is_dir() {
                return self.watch(&parent, false);
            }
            dependency = parent;
        }
        true
    }
}

impl TreeMemory for WarmTree {
    fn texts(&self) -> Option<&crate::texts::TextCache> {
        Some(&self.texts).filter(|t| t.budget() > 0)
    }

    fn catch_up(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.catch_up();
        }
    }

    fn keeps_lists(&self) -> bool {
        true
    }

    fn files(&self, root: &Path, cache: Option<&Path>) -> Result<FolderFiles> {
        let Ok(mut inner) = self.inner.lock() else {
            return listing::folder_files(root, None, None, cache, listing::WalkRules::default());
        };
        inner.catch_up();
        if let Some(files) = inner.lists.get(root) {
            return Ok(files.clone());
        }
        let walk = listing::walk_with_dependencies(root)?;
        let mut watched = walk.folders.iter().all(|folder| inner.watch(folder, true));
        for file in &walk.depends_on {
            watched &= inner.watch_for(file);
        }
        if !watched {
            // Nothing of this tree is remembered: its searches run cold.
            inner.forget_all();
            return Ok(walk.files);
        }
        if walk.still_true() {
            inner.lists.insert(root.to_path_buf(), walk.files.clone());
        }
        Ok(walk.files)
    }

    fn stamps(&self, paths: &[&Path]) -> Vec<Option<Stamp>> {
        let Ok(inner) = self.inner.lock() else {
            return vec![None; paths.len()];
        };
        paths
            .iter()
            .map(|p| inner.stamps.get(&*state_key(p)).copied())
            .collect()
    }

    fn keep(&self, read: &[(&Path, Stamp)]) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        for (path, stamp) in read {
            let key = state_key(path);
            if Path::new(&key)
                .parent()
                .is_some_and(|p| inner.walked.contains(p))
            {
                inner.stamps.insert(key.into_owned(), *stamp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Sets every folder's and file's time under `root` ten seconds back, so a walk may be
    /// remembered (a change within two seconds of a walk is not trusted).
    fn age(root: &Path) {
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        for entry in ignore::WalkBuilder::new(root)
            .hidden(false)
            .ignore(false)
            .git_ignore(false)
            .build()
        {
            let entry = entry.unwrap();
            let file = fs::File::open(entry.path()).unwrap();
            file.set_modified(past).unwrap();
        }
    }

    fn walked(root: &Path) -> FolderFiles {
        let cache = tempfile::tempdir().unwrap();
        listing::folder_files(
            root,
            None,
            None,
            Some(cache.path()),
            listing::WalkRules::default(),
        )
        .unwrap()
    }

    fn stamp_of(path: &Path) -> Stamp {
        let meta = fs::metadata(path).unwrap();
        (meta.len(), quarry_core::mtime_ns(&meta))
    }

    #[test]
    fn a_warm_tree_answers_as_a_walk_and_sees_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("src/a.py"), "a = 1\n").unwrap();
        fs::write(root.join("src/deep/b.py"), "b = 1\n").unwrap();
        fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        fs::write(root.join("run.log"), "log\n").unwrap();
        fs::create_dir(root.join(".git")).unwrap();
        age(&root);
        let tree = WarmTree::new().unwrap();
        let a = root.join("src/a.py");

        assert_eq!(tree.files(&root, None).unwrap(), walked(&root));
        assert!(!walked(&root).files.contains(&root.join("run.log")));
        assert_eq!(tree.summary().lists, 1, "an old tree is remembered");
        tree.keep(&[(&a, stamp_of(&a))]);
        assert_eq!(tree.stamps(&[&a]), [Some(stamp_of(&a))]);
        // Spelled with `.`: the same file.
        assert_eq!(
            tree.stamps(&[&root.join("./src/a.py")]),
            [Some(stamp_of(&a))]
        );
        // The same root spelled with `.` (paths compare by component: the same list).
        let dotted = root.join(".");
        assert_eq!(tree.files(&dotted, None).unwrap(), walked(&dotted));

        // A file written: its state is forgotten, the list kept.
        fs::write(&a, "a = 22\n").unwrap();
        tree.catch_up();
        assert_eq!(tree.stamps(&[&a]), [None]);
        assert_eq!(tree.summary().lists, 1);

        // A file created deep down: the next answer has it.
        fs::write(root.join("src/deep/c.py"), "c = 1\n").unwrap();
        assert_eq!(tree.files(&root, None).unwrap(), walked(&root));
        assert!(tree
            .files(&root, None)
            .unwrap()
            .files
            .contains(&root.join("src/deep/c.py")));

        // An ignore file changed in place: the log file is listed again.
        age(&root);
        assert_eq!(tree.files(&root, None).unwrap(), walked(&root));
        fs::write(root.join(".gitignore"), "*.tmp\n").unwrap();
        assert_eq!(tree.files(&root, None).unwrap(), walked(&root));
        assert!(tree
            .files(&root, None)
            .unwrap()
            .files
            .contains(&root.join("run.log")));

        // A folder renamed: nothing under its old name is listed or remembered.
        let b = root.join("src/deep/b.py");
        age(&root);
        assert_eq!(tree.files(&root, None).unwrap(), walked(&root));
        tree.keep(&[(&b, stamp_of(&b))]);
        fs::rename(root.join("src/deep"), root.join("src/moved")).unwrap();
        let now = tree.files(&root, None).unwrap();
        assert_eq!(now, walked(&root));
        let now = now.files;
        assert!(now.contains(&root.join("src/moved/b.py")) && !now.contains(&b));
        assert_eq!(tree.stamps(&[&b]), [None]);

        // A file outside the walked folders is never remembered.
        let outside = dir.path().join("outside.py");
        fs::write(&outside, "x\n").unwrap();
        tree.keep(&[(&outside, stamp_of(&outside))]);
        assert_eq!(tree.stamps(&[&outside]), [None]);
    }
}
