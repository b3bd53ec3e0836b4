//! quarry-history: a repository's commits as `quarry_core::history::CommitRecord`s. The
//! engine asks which commits HEAD reaches, compares with what is stored, and reads only the
//! new ones, in batches (`GitRepo::commits`), so a sync is incremental and resumable.

mod git;

use anyhow::{bail, Context, Result};
use quarry_core::history::{ChangedFile, CommitRecord};
use std::path::Path;

/// Patch text kept per commit: enough to read a change, bounded for the index's size.
pub const PATCH_BYTES: usize = 64 * 1024;

pub struct GitRepo {
    history: git::History,
}

impl GitRepo {
    /// Opens a working tree's root, its `.git`, or a bare repository.
    pub fn open(path: &Path) -> Result<GitRepo> {
        match git::History::open(path) {
            Ok(history) => Ok(GitRepo { history }),
            Err(e) => bail!(
                "{} is not a git repository (or cannot be read): {e}",
                path.display()
            ),
        }
    }

    /// A shallow clone: history stops at its grafts.
    pub fn is_shallow(&self) -> bool {
        self.history.repo().is_shallow().unwrap_or(false)
    }

    /// HEAD's commit and every commit it reaches, newest first; `None` for a repository with
    /// no commits yet.
    pub fn reachable(&self) -> Result<Option<(String, Vec<String>)>> {
        self.reachable_from(None)
    }

    /// As [`GitRepo::reachable`], from the commit `tip` names (a full SHA) instead of HEAD:
    /// the history as it stood at that commit (an evaluation's view of the past, which must
    /// never hold a later commit).
    pub fn reachable_from(&self, tip: Option<&str>) -> Result<Option<(String, Vec<String>)>> {
        let head = match tip {
            Some(sha) => gix::ObjectId::from_hex(sha.as_bytes())
                .with_context(|| format!("`{sha}` is not a full commit SHA"))?,
            None => match self.history.head_commit_id() {
                Ok(id) => id,
                Err(git::IngestError::EmptyRepository) => return Ok(None),
                Err(e) => bail!("{e}"),
            },
        };
        let repo = self.history.repo();
        let walk = repo
            .rev_walk([head])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
            ))
            .all()?;
        let mut shas = Vec::new();
        for info in walk {
            shas.push(info?.id.to_string());
        }
        Ok(Some((head.to_string(), shas)))
    }

    /// Every tag that points (through tag objects) at a commit: its short name and the
    /// commit's author time. Read when asked, not stored: a few milliseconds for a project's
    /// hundred releases.
    pub fn tags(&self) -> Result<Vec<(String, i64)>> {
        let repo = self.history.repo();
        let mut out = Vec::new();
        for reference in repo.references()?.tags()? {
            let Ok(mut reference) = reference else {
                continue;
            };
            let name = reference.name().shorten().to_string();
            let Ok(id) = reference.peel_to_id() else {
                continue;
            };
            let Ok(commit) = repo.find_commit(id) else {
                continue; // a tag of a tree or a blob
            };
            let Ok(time) = commit.author().and_then(|a| a.time()) else {
                continue;
            };
            out.push((name, time.seconds));
        }
        Ok(out)
    }

    /// The blob id of `path` in the tree of commit `sha`; `None` when the commit has no such
    /// file (or it is not a file). Cheap: the blob itself is not read.
    pub fn blob_id_at(&self, sha: &str, path: &str) -> Result<Option<String>> {
        let repo = self.history.repo();
        let id = gix::ObjectId::from_hex(sha.as_bytes())?;
        let tree = repo.find_commit(id)?.tree()?;
        let Some(entry) = tree.lookup_entry_by_path(path)? else {
            return Ok(None);
        };
        Ok(entry
            .mode()
            .is_blob()
            .then(|| entry.object_id().to_string()))
    }

    /// A blob's content, by id (from `blob_id_at`).
    pub fn blob(&self, id: &str) -> Result<Vec<u8>> {
        let id = gix::ObjectId::from_hex(id.as_bytes())?;
        Ok(self.history.repo().find_object(id)?.detach().data)
    }

    /// Reads the given commits (metadata, changed files, patch), one result per SHA. A commit
    /// whose changes cannot be read (a damaged or missing tree object) comes with why, and
    /// no files.
    pub fn commits(&self, shas: &[&str]) -> Result<Vec<Result<(CommitRecord, Option<String>)>>> {
        let repo = self.history.repo();
        let options = git::Options {
            patch: true,
            patch_cap: PATCH_BYTES,
            renames: true,
        };
        let mut differ = git::Differ::new(repo, &options).map_err(|e| anyhow::anyhow!("{e}"))?;
        let shallow = self.is_shallow();
        Ok(shas
            .iter()
            .map(|sha| -> Result<(CommitRecord, Option<String>)> {
                let id = gix::ObjectId::from_hex(sha.as_bytes())?;
                let commit = repo.find_commit(id)?;
                let mut record =
                    git::commit_metadata(&commit).map_err(|e| anyhow::anyhow!("{e}"))?;
                differ.diff_first_parent(&commit, &mut record);
                let mut incomplete = record.diff_error.take();
                // A shallow clone's boundary commits lack their parents by design: not damage.
                if incomplete.is_some() && shallow {
                    let parent_missing = commit
                        .parent_ids()
                        .next()
                        .is_some_and(|p| repo.find_commit(p).is_err());
                    if parent_missing {
                        incomplete = None;
                    }
                }
                Ok((convert(record), incomplete))
            })
            .collect())
    }
}

fn convert(r: git::CommitRecord) -> CommitRecord {
    CommitRecord {
        sha: r.sha,
        parents: r.parents,
        author: r.author_name,
        email: r.author_email,
        author_time: r.author_time,
        commit_time: r.committer_time,
        subject: r.subject,
        body: r.body,
        files: r
            .files
            .into_iter()
            .map(|f| {
                let (status, old_path) = match f.status {
                    git::FileStatus::Added => ("added", None),
                    git::FileStatus::Modified => ("modified", None),
                    git::FileStatus::Deleted => ("deleted", None),
                    git::FileStatus::Renamed { old_path } => ("renamed", Some(old_path)),
                    git::FileStatus::Copied { old_path } => ("copied", Some(old_path)),
                };
                ChangedFile {
                    path: f.path,
                    old_path,
                    status: status.to_string(),
                    added: f.lines_added,
                    removed: f.lines_removed,
                    merged_in: f.merged_in,
                }
            })
            .collect(),
        patch: r.patch,
        patch_truncated: r.patch_truncated,
    }
}
