//! Exact searches through the workspace: `grep` and `sg` read only the files the index's
//! trigram table cannot rule out (quarry-grep's `IndexedFiles`). Without an index they are
//! plain scans — the same answers, more reading.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use anyhow::Result;
use quarry_core::Language;
use quarry_grep::{FileFilter, IndexedFiles, IndexedStates, Requirement, SgMatch, SgStats};
use serde::{Deserialize, Serialize};

pub use quarry_grep::{Cold, GrepRequest, GrepStats, TreeMemory, TreeSummary, WarmTree};

use crate::workspace::Workspace;

/// Where an exact search's file filter came from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FilterReport {
    /// Files the index knows the trigrams of (0: no index, or a pattern with no literal of
    /// three characters, so every file was read).
    pub indexed_files: usize,
    /// The FTS5 trigram query the pattern's literals gave, if any.
    pub trigram_query: Option<String>,
    /// Time opening the index and asking it (milliseconds).
    pub lookup_ms: f64,
    /// Why the index was not used, when it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Workspace {
    /// The filter for `requirement`: the indexed files it rules out. The indexed files'
    /// states are kept in the workspace's cache and read from the index again only when its
    /// files have changed since (on sympy, 1 ms of a 5 ms grep).
    pub fn trigram_filter(
        &self,
        requirement: &Requirement,
    ) -> Result<(IndexedFiles, FilterReport)> {
        if requirement.fts5_query().is_none() {
            return Ok((IndexedFiles::default(), FilterReport::default()));
        }
        let kept_file = Self::listing_cache(&self.dir).join("indexed-files");
        let kept = IndexedStates::load(&kept_file).map(|(g, states)| (g, Arc::new(states)));
        let (files, report, read) = self.trigram_filter_given(requirement, kept)?;
        if let Some((generation, states)) = read {
            // Not kept: the next run reads the index again, nothing worse.
            let _ = states.save(&kept_file, generation);
        }
        Ok((files, report))
    }

    /// The filter for the trigram `query`, given the indexed files' states some earlier
    /// search kept (with the index generation they belong to); also the states read from the
    /// index when those were missing or stale, for the caller to keep.
    fn trigram_filter_given(
        &self,
        requirement: &Requirement,
        kept: Option<KeptStates>,
    ) -> Result<(IndexedFiles, FilterReport, Option<KeptStates>)> {
        let lookup = self.store().trigram_lookup(
            requirement,
            kept.as_ref().map(|(generation, _)| *generation),
        )?;
        let (states, read) = match (lookup.files, kept) {
            (Some(files), _) => {
                let states = Arc::new(IndexedStates::new(files));
                (states.clone(), Some((lookup.generation, states)))
            }
            (None, Some((_, states))) => (states, None),
            (None, None) => (Arc::default(), None),
        };
        let files = IndexedFiles::new(states, lookup.may_match);
        let report = FilterReport {
            indexed_files: files.len(),
            trigram_query: requirement.fts5_query(),
            ..Default::default()
        };
        Ok((files, report, read))
    }
}

/// Indexed files' states with the index generation they belong to.
type KeptStates = (i64, Arc<IndexedStates>);

impl Workspace {
    /// Keeps `root`'s file list for `quarry grep`, so that the first search after `quarry
    /// index` need not walk; one that cannot be kept is kept by that search instead. Watch
    /// passes do not call it: they would walk the whole tree again on every change.
    pub fn keep_file_list(&self, root: &Path) {
        let _ = quarry_grep::listing::refresh(root, &Self::listing_cache(&self.dir));
    }
}

/// The workspace in `dir` when it has an index, in its file or on PostgreSQL (exact searches
/// never need one).
fn workspace(dir: &Path) -> Option<Workspace> {
    (Workspace::index_file(dir).exists() || on_postgres(dir))
        .then(|| Workspace::open_existing(dir).ok())
        .flatten()
}

fn on_postgres(dir: &Path) -> bool {
    Workspace::store_url(dir).is_ok_and(|url| url.is_some())
}

fn filter(dir: &Path, requirement: &Requirement) -> Result<Filter> {
    let started = std::time::Instant::now();
    let (files, mut report) = match workspace(dir) {
        Some(ws) => ws.trigram_filter(requirement)?,
        None => without_index(requirement.fts5_query()),
    };
    report.lookup_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((files, report))
}

/// No index to ask: every file is read; the report still names the query it would have run.
fn without_index(query: Option<String>) -> Filter {
    let report = FilterReport {
        trigram_query: query,
        ..Default::default()
    };
    (IndexedFiles::default(), report)
}

/// Where folders' file lists are kept: in the workspace, when there is one (a search without
/// an index leaves nothing behind).
fn listing_cache(dir: &Path) -> Option<std::path::PathBuf> {
    Workspace::index_file(dir)
        .exists()
        .then(|| Workspace::listing_cache(dir))
}

/// The index's filter, asked on its own thread while the files are listed and stat-ed
/// (neither needs the other); the first file checked waits for the answer.
struct PendingFilter {
    pending: Mutex<Option<JoinHandle<Result<Filter>>>>,
    ready: OnceLock<Result<Filter, String>>,
}

type Filter = (IndexedFiles, FilterReport);

impl PendingFilter {
    fn start(dir: &Path, requirement: Requirement) -> Self {
        let dir = dir.to_path_buf();
        Self {
            pending: Mutex::new(Some(std::thread::spawn(move || filter(&dir, &requirement)))),
            ready: OnceLock::new(),
        }
    }

    fn ready(filter: Result<Filter>) -> Self {
        Self {
            pending: Mutex::new(None),
            ready: OnceLock::from(filter.map_err(|e| format!("{e:#}"))),
        }
    }

    fn get(&self) -> &Result<Filter, String> {
        self.ready.get_or_init(|| {
            let handle = self.pending.lock().ok().and_then(|mut h| h.take());
            match handle.map(JoinHandle::join) {
                Some(Ok(Ok(found))) => Ok(found),
                Some(Ok(Err(e))) => Err(format!("{e:#}")),
                _ => Err("the index lookup stopped".into()),
            }
        })
    }
}

impl FileFilter for PendingFilter {
    fn rules_out(&self, path: &Path, size: u64, mtime_ns: i64) -> bool {
        match self.get() {
            Ok((files, _)) => files.rules_out(path, size, mtime_ns),
            Err(_) => false,
        }
    }
}

/// `quarry grep`: writes ripgrep's output for `request` to `out`.
pub fn grep(
    dir: &Path,
    request: &GrepRequest,
    out: &mut dyn Write,
) -> Result<(GrepStats, FilterReport)> {
    // The index is asked on its own thread while the files are listed and stat-ed.
    let pending = PendingFilter::start(dir, request.requirement());
    run_grep(dir, request, &pending, &Cold, out)
}

/// What a resident process (the workspace daemon) keeps between exact searches: the tree's
/// file lists and file states (kept true by inotify), the open index, and the indexed files'
/// states. On sympy a selective grep then reads 19 files and asks nothing else of the disk
/// but the index's trigram table.
pub struct ExactMemory {
    tree: Option<WarmTree>,
    index: Mutex<Option<OpenIndex>>,
}

/// The index kept open, which file it is (a rebuild puts a new one in its place), and the
/// indexed files' states last read from it.
struct OpenIndex {
    ws: Workspace,
    file: (u64, u64),
    states: Option<KeptStates>,
}

impl Default for ExactMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl ExactMemory {
    pub fn new() -> Self {
        Self {
            tree: WarmTree::new(),
            index: Mutex::new(None),
        }
    }

    /// What the tree memory holds (none: the kernel gave no inotify instance).
    pub fn tree_summary(&self) -> Option<TreeSummary> {
        self.tree.as_ref().map(WarmTree::summary)
    }

    pub(crate) fn filter(&self, dir: &Path, requirement: &Requirement) -> Result<Filter> {
        let started = std::time::Instant::now();
        let Some(query) = requirement.fts5_query() else {
            return Ok((IndexedFiles::default(), FilterReport::default()));
        };
        let Some(file) = file_identity(&Workspace::index_file(dir)) else {
            // An index on PostgreSQL is asked each time (the server keeps it warm).
            return match on_postgres(dir) {
                true => filter(dir, requirement),
                false => Ok(without_index(Some(query))),
            };
        };
        let mut open = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if open.as_ref().is_none_or(|o| o.file != file) {
            *open = Workspace::open_existing(dir).ok().map(|ws| OpenIndex {
                ws,
                file,
                states: None,
            });
        }
        let Some(index) = open.as_mut() else {
            return Ok(without_index(Some(query)));
        };
        let (files, mut report, read) = index
            .ws
            .trigram_filter_given(requirement, index.states.clone())?;
        if read.is_some() {
            index.states = read;
        }
        report.lookup_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok((files, report))
    }
}

impl crate::workspace::ExactCaches for ExactMemory {
    fn files(&self, dir: &Path, requirement: &Requirement) -> Result<IndexedFiles> {
        Ok(self.filter(dir, requirement)?.0)
    }

    fn tree(&self) -> &dyn TreeMemory {
        match &self.tree {
            Some(tree) => tree,
            None => &Cold,
        }
    }
}

/// The device and inode of `file`, if it exists.
#[cfg(unix)]
fn file_identity(file: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(file).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_identity(file: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(file).ok().map(|m| (m.len(), 0))
}

/// [`grep`] by a resident process, with what `memory` keeps.
pub fn grep_kept(
    dir: &Path,
    request: &GrepRequest,
    memory: &ExactMemory,
    out: &mut dyn Write,
) -> Result<(GrepStats, FilterReport)> {
    let pending = PendingFilter::ready(memory.filter(dir, &request.requirement()));
    let tree: &dyn TreeMemory = match &memory.tree {
        Some(tree) => tree,
        None => &Cold,
    };
    run_grep(dir, request, &pending, tree, out)
}

fn run_grep(
    dir: &Path,
    request: &GrepRequest,
    pending: &PendingFilter,
    tree: &dyn TreeMemory,
    out: &mut dyn Write,
) -> Result<(GrepStats, FilterReport)> {
    let request = GrepRequest {
        listing_cache: listing_cache(dir),
        ..request.clone()
    };
    let stats = quarry_grep::grep_with_memory(&request, pending, tree, out)?;
    let report = match pending.get() {
        Ok((_, report)) => report.clone(),
        // An index that cannot be read costs the filter, never the answer: every file was read.
        Err(e) => FilterReport {
            note: Some(format!("index not used: {e}")),
            ..Default::default()
        },
    };
    Ok((stats, report))
}

/// `quarry sg`: structural matches of `pattern` in `language`'s files under `paths`.
pub fn sg(
    dir: &Path,
    pattern: &str,
    language: Language,
    paths: &[std::path::PathBuf],
    limit: usize,
) -> Result<(Vec<SgMatch>, SgStats, FilterReport)> {
    let (files, report) = filter(dir, &quarry_grep::structural::requirement(pattern))?;
    let cache = listing_cache(dir);
    let (matches, stats) =
        quarry_grep::structural::search(pattern, language, paths, &files, limit, cache.as_deref())?;
    Ok((matches, stats, report))
}
