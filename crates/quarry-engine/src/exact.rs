//! Exact searches through the workspace: `grep` and `sg` read only the files the index's
//! trigram table cannot rule out (quarry-grep's `IndexedFiles`). Without an index they are
//! plain scans — the same answers, more reading.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use quarry_core::Language;
use quarry_grep::{GrepRequest, GrepStats, IndexedFiles, Requirement, SgMatch, SgStats};
use serde::Serialize;

use crate::Workspace;

/// Where an exact search's file filter came from.
#[derive(Debug, Clone, Serialize)]
pub struct FilterReport {
    /// Files the index knows the trigrams of (0: no index, or a pattern with no literal of
    /// three characters, so every file was read).
    pub indexed_files: usize,
    /// The FTS5 trigram query the pattern's literals gave, if any.
    pub trigram_query: Option<String>,
}

impl Workspace {
    /// The filter for `requirement`: the indexed files it rules out.
    pub fn trigram_filter(
        &self,
        requirement: &Requirement,
    ) -> Result<(IndexedFiles, FilterReport)> {
        let query = requirement.fts5_query();
        let files = match &query {
            Some(q) => IndexedFiles::new(self.store().trigram_files(Some(q))?),
            None => IndexedFiles::default(),
        };
        let report = FilterReport {
            indexed_files: files.len(),
            trigram_query: query,
        };
        Ok((files, report))
    }
}

/// The workspace in `dir` when it has an index (exact searches never need one).
fn workspace(dir: &Path) -> Option<Workspace> {
    Workspace::index_file(dir)
        .exists()
        .then(|| Workspace::open_existing(dir).ok())
        .flatten()
}

fn filter(dir: &Path, requirement: &Requirement) -> Result<(IndexedFiles, FilterReport)> {
    match workspace(dir) {
        Some(ws) => ws.trigram_filter(requirement),
        None => Ok((
            IndexedFiles::default(),
            FilterReport {
                indexed_files: 0,
                trigram_query: requirement.fts5_query(),
            },
        )),
    }
}

/// `quarry grep`: writes ripgrep's output for `request` to `out`.
pub fn grep(
    dir: &Path,
    request: &GrepRequest,
    out: &mut dyn Write,
) -> Result<(GrepStats, FilterReport)> {
    let (files, report) = filter(dir, &request.requirement())?;
    let stats = quarry_grep::grep(request, &files, out)?;
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
    let (matches, stats) =
        quarry_grep::structural::search(pattern, language, paths, &files, limit)?;
    Ok((matches, stats, report))
}
