//! Exact searches, beside the ranked ones: `quarry grep` (regex and literal, ripgrep's crates)
//! and `quarry sg` (structural, ast-grep-core). Both walk the tree as ripgrep does and take a
//! [`FileFilter`]; [`IndexedFiles`] is the one quarry passes, built from the index's trigram
//! table, so files that cannot match are never read — and files changed since the last index
//! run are always read.

pub mod literals;
pub mod scan;
pub mod structural;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use literals::Requirement;
pub use scan::{grep, FileFilter, GrepRequest, GrepStats, OutputKind, ScanAll};
pub use structural::{SgMatch, SgStats};

/// The index's knowledge for one pattern: each indexed file's state when its trigrams were
/// taken, and whether those trigrams allow a match.
#[derive(Debug, Default)]
pub struct IndexedFiles {
    files: HashMap<PathBuf, (u64, i64, bool)>,
}

impl IndexedFiles {
    /// From the store's answer for the pattern's requirement.
    pub fn new(files: Vec<quarry_core::TrigramFile>) -> Self {
        Self {
            files: files
                .into_iter()
                .map(|f| {
                    (
                        Path::new(&f.root).join(&f.path),
                        (f.size, f.mtime_ns, f.may_match),
                    )
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
}

impl FileFilter for IndexedFiles {
    /// Ruled out only when the file is the one indexed (same size and modification time, and
    /// a known time) and its trigrams exclude a match.
    fn rules_out(&self, path: &Path, meta: &std::fs::Metadata) -> bool {
        let Some(&(size, mtime_ns, may_match)) = self.files.get(path) else {
            return false;
        };
        let now = quarry_core::mtime_ns(meta);
        !may_match && mtime_ns != 0 && now == mtime_ns && meta.len() == size
    }
}
