//! Exact searches through the workspace: `grep` and `sg` read only the files the index's
//! trigram table cannot rule out (quarry-grep's `IndexedFiles`). Without an index they are
//! plain scans — the same answers, more reading.

use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use anyhow::Result;
use quarry_core::Language;
use quarry_grep::{
    FileFilter, GrepRequest, GrepStats, IndexedFiles, IndexedStates, Requirement, SgMatch, SgStats,
};
use serde::Serialize;

use crate::workspace::Workspace;

/// Where an exact search's file filter came from.
#[derive(Debug, Clone, Default, Serialize)]
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
        let Some(query) = requirement.fts5_query() else {
            return Ok((IndexedFiles::default(), FilterReport::default()));
        };
        let kept_file = Self::listing_cache(&self.dir).join("indexed-files");
        let kept = IndexedStates::load(&kept_file);
        let lookup = self
            .store()
            .trigram_lookup(&query, kept.as_ref().map(|(generation, _)| *generation))?;
        let states = match (lookup.files, kept) {
            (Some(files), _) => {
                let states = IndexedStates::new(files);
                // Not kept: the next run reads the index again, nothing worse.
                let _ = states.save(&kept_file, lookup.generation);
                states
            }
            (None, Some((_, states))) => states,
            (None, None) => IndexedStates::default(),
        };
        let files = IndexedFiles::new(states, lookup.may_match);
        let report = FilterReport {
            indexed_files: files.len(),
            trigram_query: Some(query),
            ..Default::default()
        };
        Ok((files, report))
    }
}

impl Workspace {
    /// Keeps `root`'s file list for `quarry grep`, so that the first search after `quarry
    /// index` need not walk; one that cannot be kept is kept by that search instead. Watch
    /// passes do not call it: they would walk the whole tree again on every change.
    pub fn keep_file_list(&self, root: &Path) {
        let _ = quarry_grep::listing::refresh(root, &Self::listing_cache(&self.dir));
    }
}

/// The workspace in `dir` when it has an index (exact searches never need one).
fn workspace(dir: &Path) -> Option<Workspace> {
    Workspace::index_file(dir)
        .exists()
        .then(|| Workspace::open_existing(dir).ok())
        .flatten()
}

fn filter(dir: &Path, requirement: &Requirement) -> Result<Filter> {
    let started = std::time::Instant::now();
    let (files, mut report) = match workspace(dir) {
        Some(ws) => ws.trigram_filter(requirement)?,
        None => (
            IndexedFiles::default(),
            FilterReport {
                trigram_query: requirement.fts5_query(),
                ..Default::default()
            },
        ),
    };
    report.lookup_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((files, report))
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
    let pending = PendingFilter::start(dir, request.requirement());
    let request = GrepRequest {
        listing_cache: listing_cache(dir),
        ..request.clone()
    };
    let stats = quarry_grep::grep(&request, &pending, out)?;
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
