//! Git history as quarry stores and searches it: one record per commit (metadata, changed
//! files with line counts, a truncated patch), and the `HistoryStore` seam every backend
//! implements next to `Store`.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// A file a commit changed (against its first parent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// A merge commit's change that came with the merged branch (the merge has the file as
    /// another parent has it): `touches` lists that branch's own commits instead, as
    /// `git log -- PATH` does.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub merged_in: bool,
}

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// Say how each commit was ranked (`CommitHit::why`).
    #[serde(default)]
    pub explain: bool,
}

/// A commit found by search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Whether the commit has a vector: a commit without one has no semantic evidence, for
    /// or against (fusion must not rank it below embedded ones for that).
    #[serde(skip)]
    pub embedded: bool,
    /// How the commit was ranked, when asked (`log --explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<CommitWhy>,
}

/// How a commit's score was made: its place in each ranking that found it, and what raised it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommitWhy {
    /// Place among the commits found by words (BM25), from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<f64>,
    /// Place among the commits found by meaning, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    /// The factor an issue text's search gave it for changing code and tests
    /// (`search.commit_fix_prior`); absent when none was applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_prior: Option<f64>,
    /// The factor it got for changing no code the project ships (only tests, docs,
    /// changelogs, …: the best of its files' role priors, `search.prior_docs` and the rest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_prior: Option<f64>,
    /// Runs of four code tokens of an issue text that its changed lines repeat, and the
    /// factor that gave (`search.commit_code_echo`); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_echoes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo_factor: Option<f64>,
    /// The factor it got for being authored before the release the issue text says it runs
    /// (`search.commit_before_release_prior`), and that release's tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_prior: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_release: Option<String>,
}

/// A commit still waiting for its vector, with the text to embed.
#[derive(Debug, Clone)]
pub struct PendingCommit {
    pub id: i64,
    pub text: String,
}

/// Per repo: commits stored and embedded, and whether its history is embedded at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryStats {
    pub repo: String,
    pub commits: u64,
    pub embedded: u64,
    pub embed: bool,
}

/// Unix seconds as an RFC 3339 date in UTC (`2024-05-01T12:00:00Z`), as quarry shows commit
/// and index times.
pub fn format_time(unix: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// How commit search weighs a commit's fields in BM25 — subject, body, changed paths, patch —
/// in both stores. The patch counts a quarter: it is most of a commit's words (context lines,
/// whole files moved), so an issue's many words meet some of them in any large patch, while the
/// message says what the commit is about. On commits_dev (issue texts, five whole histories)
/// lexical hit@10 / MRR went 0.623 / 0.451 with the patch weighing 1, to 0.726 / 0.561 at 0.25
/// (0.679 / 0.527 at 0.5; at 0.1, 0.736 / 0.591 with the normalisation below against 0.774 /
/// 0.607 at 0.25); raising the subject (6, 8) or the paths (4) or lowering the body moved
/// hit@10 by at most one query (docs/EVAL.md, issue [19]).
pub const COMMIT_FIELD_WEIGHTS: [f64; 4] = [4.0, 2.0, 2.0, 0.25];

/// BM25's length normalisation (`b`) for commits, where code search keeps FTS5's 0.75: a large
/// commit (a merge, a move, a reformatting) holds the words of every issue, and its length
/// should cost it more. On commits_dev with the weights above, lexical hit@10 / MRR 0.726 /
/// 0.561 at 0.75, 0.774 / 0.607 at 0.9, 0.764 / 0.631 at 1.0; 0.5 was worse than 0.75.
pub const COMMIT_LENGTH_NORMALISATION: f64 = 0.9;

/// Characters of body and of changed lines that go into a commit's embedding text; the model
/// reads only its first ~128 tokens anyway, so more would cost storage reads, not quality.
const EMBED_BODY_CHARS: usize = 600;
const EMBED_PATCH_CHARS: usize = 1200;

/// The lines a unified diff adds or removes, without their `+`/`-` (file headers `+++`/`---`
/// are not changed lines).
pub fn changed_lines(patch: &str) -> impl Iterator<Item = &str> {
    patch.lines().filter_map(|line| {
        let changed = (line.starts_with('+') && !line.starts_with("+++"))
            || (line.starts_with('-') && !line.starts_with("---"));
        changed.then(|| &line[1..])
    })
}

/// The text a commit is embedded from: subject, body, the files it changed, then a preview of
/// its changed lines (the `+`/`-` lines of the patch, without headers). Subject first: it is
/// the densest summary and the model weights the start most.
pub fn commit_embed_text(subject: &str, body: &str, paths: &[&str], patch: &str) -> String {
    let mut out = String::with_capacity(2 * EMBED_PATCH_CHARS);
    out.push_str(subject.trim());
    let body: String = body.trim().chars().take(EMBED_BODY_CHARS).collect();
    if !body.is_empty() {
        out.push('\n');
        out.push_str(&body);
    }
    if !paths.is_empty() {
        out.push_str("\nfiles: ");
        let shown = paths.len().min(12);
        out.push_str(&paths[..shown].join(", "));
        if paths.len() > shown {
            out.push_str(&format!(" and {} more", paths.len() - shown));
        }
    }
    let mut budget = EMBED_PATCH_CHARS;
    for line in changed_lines(patch) {
        if budget == 0 {
            break;
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let text: String = text.chars().take(budget).collect();
        budget = budget.saturating_sub(text.chars().count() + 1);
        out.push('\n');
        out.push_str(&text);
    }
    out
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
    /// The paths each of these commits of `repo` changed (a merge: with what its merged
    /// branch brought in), by SHA; a SHA the store does not hold is left out.
    fn changed_paths(
        &self,
        repo: &str,
        shas: &[String],
    ) -> anyhow::Result<HashMap<String, Vec<String>>>;

    /// The patch of each of these commits of `repo`, by SHA (as stored: cut at the store's
    /// patch limit); a SHA the store does not hold is left out.
    fn commit_patches(
        &self,
        repo: &str,
        shas: &[String],
    ) -> anyhow::Result<HashMap<String, String>>;

    /// Turns embedding of a repo's history on or off (off drops its commit vectors).
    fn set_history_embedding(&mut self, repo: i64, on: bool) -> anyhow::Result<()>;
    /// Per repo: commits stored, embedded, and whether embedding is on.
    fn history_stats(&self) -> anyhow::Result<Vec<HistoryStats>>;
    /// Whether any commit of the given repos (all when empty) has a vector: a cheap check for
    /// every search, where `history_stats` counts them all.
    fn has_commit_vectors(&self, repos: &[String]) -> anyhow::Result<bool>;
    /// Up to `limit` commits of repos with embedding on that have no vector, newest first,
    /// among the `newest` most recent commits of each repo (all when `None`); only of `repos`
    /// (all when empty).
    fn pending_commit_embeddings(
        &self,
        limit: usize,
        newest: Option<u64>,
        repos: &[String],
    ) -> anyhow::Result<Vec<PendingCommit>>;
    /// How many commits `pending_commit_embeddings` would return without its `limit`.
    fn waiting_commit_embeddings(
        &self,
        newest: Option<u64>,
        repos: &[String],
    ) -> anyhow::Result<u64>;
    /// Stores commit vectors (by commit id) in one transaction.
    fn put_commit_vectors(&mut self, vectors: &[(i64, Vec<f32>)]) -> anyhow::Result<()>;
    /// Commits nearest to `vector` among those passing the query's filters (a pre-filter:
    /// only commits that pass are scored); `score` is the cosine.
    fn search_commit_vectors(
        &self,
        vector: &[f32],
        query: &CommitQuery,
    ) -> anyhow::Result<Vec<CommitHit>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_context_lines_are_not_changed_lines() {
        let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@ def f():\n context(line)\n-old(line)\n+new(line)\n";
        assert_eq!(
            changed_lines(patch).collect::<Vec<_>>(),
            ["old(line)", "new(line)"]
        );
    }

    #[test]
    fn commit_text_has_subject_body_files_and_changed_lines_only() {
        let patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n context\n-old = 1\n+new = 2\n";
        let text = commit_embed_text("Fix it", "Because.", &["x.py"], patch);
        assert_eq!(text, "Fix it\nBecause.\nfiles: x.py\nold = 1\nnew = 2");
        let many: Vec<String> = (0..20).map(|i| format!("f{i}.rs")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let text = commit_embed_text("Subject", "", &many, "");
        assert!(text.ends_with("f11.rs and 8 more"), "{text}");
        let long = format!("+{}\n", "x".repeat(5000));
        assert!(commit_embed_text("s", "", &[], &long).len() < 1300);
    }
}
