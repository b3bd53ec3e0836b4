//! Git history as quarry stores and searches it: one record per commit (metadata, changed
//! files with line counts, a truncated patch), and the `HistoryStore` seam every backend
//! implements next to `Store`.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// A file a commit changed (against its first parent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    pub path: String,
    /// The path before a rename.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub old_path: Option<String>,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub status: String,
    /// Lines added and removed; `None` for binary files.
    pub added: Option<u32>,
    pub removed: Option<u32>,
}

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRecord {
    pub sha: String,
    pub parents: Vec<String>,
    pub author: String,
    pub email: String,
    /// Unix seconds.
    pub author_time: i64,
    pub commit_time: i64,
    pub subject: String,
    pub body: String,
    pub files: Vec<ChangedFile>,
    /// Unified diff against the first parent, cut at the ingest limit.
    pub patch: String,
    pub patch_truncated: bool,
}

/// What `quarry log` asks for. Filters apply before ranking.
#[derive(Debug, Clone, Default)]
pub struct CommitQuery {
    /// BM25 terms (code-aware tokens); empty: newest first.
    pub terms: Vec<String>,
    pub repos: Vec<String>,
    /// Unix seconds, inclusive.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Substring of the author's name or email, case-insensitive.
    pub author: Option<String>,
    /// Glob (or substring) a changed path must match.
    pub path: Option<String>,
    pub limit: usize,
}

/// A commit found by search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitHit {
    pub repo: String,
    pub sha: String,
    pub author: String,
    pub email: String,
    /// RFC 3339, author date.
    pub date: String,
    pub subject: String,
    pub files_changed: u32,
    pub score: f64,
}

/// Commit storage and search, beside the code index.
pub trait HistoryStore {
    /// SHAs already stored for a repo.
    fn known_commits(&self, repo: i64) -> anyhow::Result<HashSet<String>>;
    /// Stores commits in one transaction (all or none).
    fn put_commits(&mut self, repo: i64, commits: &[CommitRecord]) -> anyhow::Result<()>;
    /// Removes commits (history rewritten: no longer reachable).
    fn drop_commits(&mut self, repo: i64, shas: &[String]) -> anyhow::Result<()>;
    fn search_commits(&self, query: &CommitQuery) -> anyhow::Result<Vec<CommitHit>>;
    /// Commits whose SHA starts with `prefix` (the caller decides what several mean).
    fn commits_by_prefix(
        &self,
        prefix: &str,
        repos: &[String],
    ) -> anyhow::Result<Vec<(String, CommitRecord)>>;
    /// Commits that changed `path` (a file, or a folder prefix), newest first.
    fn touches(&self, path: &str, query: &CommitQuery) -> anyhow::Result<Vec<CommitHit>>;
}
