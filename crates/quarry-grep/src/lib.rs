//! Exact searches, beside the ranked ones: `quarry grep` (regex and literal, ripgrep's crates)
//! and `quarry sg` (structural, ast-grep-core). Both walk the tree as ripgrep does and take a
//! [`FileFilter`]; [`IndexedFiles`] is the one quarry passes, built from the index's trigram
//! table, so files that cannot match are never read — and files changed since the last index
//! run are always read.

mod file_search;
pub mod listing;
pub mod literals;
mod matcher;
pub mod memory;
pub mod request;
pub mod scan;
pub mod structural;
mod targets;
pub mod texts;

/// A file's size and modification time, as the index's states hold them.
pub type Stamp = (u64, i64);
pub mod types;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;
use quarry_core::TrigramFile;

pub use listing::{FolderFiles, WalkRules};
pub use literals::Requirement;
pub use memory::{Cold, TreeMemory, TreeSummary, WarmTree};
pub use request::{GrepRequest, OutputKind, Sort, SortBy};
pub use scan::{grep, grep_with_memory, FileFilter, GrepStats, ScanAll, NOTHING_SEARCHED};
pub use structural::{SgMatch, SgStats};
pub use types::{type_list, TypeRule};

/// Whether standard input holds something to search, as ripgrep decides when no path is
/// given (grep-cli's heuristic: a pipe, a file or a socket; not a terminal, not /dev/null).
pub fn stdin_is_readable() -> bool {
    grep_cli::is_readable_stdin()
}

/// Each indexed file's state when its trigrams were taken: its id, size and modification
/// time, by absolute path. Keyed by the path's bytes with a fast hash: grep looks up every
/// file of the tree here, and `Path`'s own hash (component by component, SipHash) was 5% of
/// a selective grep.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IndexedStates {
    files: HashMap<OsString, (i64, u64, i64), foldhash::fast::FixedState>,
}

/// `path` as the key it is stored under: `.` components and doubled separators dropped.
fn state_key(path: &Path) -> Cow<'_, OsStr> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let plain = !bytes.windows(2).any(|w| w == b"//" || w == b"/.") && !bytes.starts_with(b".");
    if plain {
        Cow::Borrowed(path.as_os_str())
    } else {
        Cow::Owned(path.components().collect::<PathBuf>().into_os_string())
    }
}

const STATES_MAGIC: &[u8] = b"quarry-indexed-states 1\n";

impl IndexedStates {
    pub fn new(files: Vec<TrigramFile>) -> Self {
        Self {
            files: files
                .into_iter()
                .map(|f| {
                    let path = Path::new(&f.root).join(&f.path);
                    (state_key(&path).into_owned(), (f.id, f.size, f.mtime_ns))
                })
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The states kept in `file` with the index generation they belong to; `None` when there
    /// are none or they cannot be read (the caller asks the index instead).
    pub fn load(file: &Path) -> Option<(i64, IndexedStates)> {
        let mut bytes = Vec::new();
        std::fs::File::open(file)
            .ok()?
            .read_to_end(&mut bytes)
            .ok()?;
        let mut input = listing::Decoder(bytes.strip_prefix(STATES_MAGIC)?);
        let generation = input.u64()? as i64;
        let count = input.u64()?;
        let mut files = HashMap::with_capacity_and_hasher(
            count.min(1 << 24) as usize,
            foldhash::fast::FixedState::default(),
        );
        for _ in 0..count {
            let path = input.path()?.into_os_string();
            let state = (input.u64()? as i64, input.u64()?, input.u64()? as i64);
            files.insert(path, state);
        }
        Some((generation, IndexedStates { files }))
    }

    /// Keeps the states in `file` for the next run (written aside, then renamed into place).
    pub fn save(&self, file: &Path, generation: i64) -> Result<()> {
        let mut out = STATES_MAGIC.to_vec();
        out.extend((generation as u64).to_le_bytes());
        out.extend((self.files.len() as u64).to_le_bytes());
        for (path, (id, size, mtime)) in &self.files {
            listing::put_bytes(&mut out, listing::path_bytes(Path::new(path)));
            out.extend((*id as u64).to_le_bytes());
            out.extend(size.to_le_bytes());
            out.extend((*mtime as u64).to_le_bytes());
        }
        listing::write_atomically(file, &out)
    }
}

/// The index's knowledge for one pattern: the indexed files' states, and which of them the
/// trigrams allow a match in.
#[derive(Debug, Default)]
pub struct IndexedFiles {
    states: std::sync::Arc<IndexedStates>,
    may_match: HashSet<i64>,
}

impl IndexedFiles {
    pub fn new(states: impl Into<std::sync::Arc<IndexedStates>>, may_match: Vec<i64>) -> Self {
        Self {
            states: states.into(),
            may_match: may_match.into_iter().collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

impl FileFilter for IndexedFiles {
    /// Ruled out only when the file is the one indexed (same size and modification time, and
    /// a known time) and its trigrams exclude a match.
    fn rules_out(&self, path: &Path, size: u64, mtime_ns: i64) -> bool {
        let Some(&(id, indexed_size, indexed_mtime)) =
            self.states.files.get::<OsStr>(&state_key(path))
        else {
            return false;
        };
        indexed_mtime != 0
            && indexed_mtime == mtime_ns
            && indexed_size == size
            && !self.may_match.contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_states_survive_a_round_trip_and_rule_out_only_unchanged_files() {
        let file = |id, path: &str, size, mtime_ns| TrigramFile {
            id,
            root: "/src/r".into(),
            path: path.into(),
            size,
            mtime_ns,
        };
        let states = IndexedStates::new(vec![file(1, "a.py", 10, 100), file(2, "b.py", 20, 0)]);
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("states");
        states.save(&kept, 7).unwrap();
        let (generation, loaded) = IndexedStates::load(&kept).unwrap();
        assert_eq!((generation, &loaded), (7, &states));

        let none_may_match = IndexedFiles::new(loaded, vec![]);
        let a = Path::new("/src/r/a.py");
        assert!(none_may_match.rules_out(a, 10, 100));
        // Changed since indexed, or a time unknown at indexing, or not indexed: read.
        assert!(!none_may_match.rules_out(a, 11, 100));
        assert!(!none_may_match.rules_out(a, 10, 101));
        assert!(!none_may_match.rules_out(Path::new("/src/r/b.py"), 20, 0));
        assert!(!none_may_match.rules_out(Path::new("/src/r/c.py"), 1, 1));
        let a_may_match = IndexedFiles::new(states, vec![1]);
        assert!(!a_may_match.rules_out(a, 10, 100));

        std::fs::write(&kept, b"quarry-indexed-states 1\n\x01").unwrap();
        assert!(IndexedStates::load(&kept).is_none());
    }
}
