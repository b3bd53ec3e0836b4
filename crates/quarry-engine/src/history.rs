//! Git history in the workspace: `sync` ingests the commits of a repo not stored yet (in
//! batches, one transaction each, so an interrupted sync resumes), drops commits no longer
//! reachable (history rewritten), and `log`/`show`/`touches` read them back.

use crate::answer::Touches;
use crate::progress::Progress;
use crate::workspace::Workspace;
use anyhow::{bail, Context, Result};
use quarry_core::history::{CommitHit, CommitQuery, CommitRecord};
use quarry_core::RepoInfo;
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

/// Commits read and stored per transaction.
const SYNC_BATCH: usize = 250;

#[derive(Debug, Clone, Serialize)]
pub struct SyncReport {
    pub repo: String,
    pub head: Option<String>,
    /// Commits stored by this run.
    pub added: usize,
    /// Commits dropped because HEAD no longer reaches them (a force-push, a rebase).
    pub dropped: usize,
    /// Commits stored in all.
    pub total: usize,
    pub elapsed_ms: u64,
    /// Notes for the user (empty repo, shallow clone…).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Commits whose changes could not be read (a damaged or missing git object): stored
    /// without their files when asked to keep going, else left out, so the next sync tries
    /// them again. The first few are named in `notes`.
    #[serde(skip_serializing_if = "is_zero")]
    pub incomplete: usize,
    /// Stopped (Ctrl-C) before every new commit was stored; the next sync stores the rest.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// `quarry show`: one commit, found by a SHA prefix.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ShownCommit {
    pub repo: String,
    #[serde(flatten)]
    pub commit: CommitRecord,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Workspace {
    /// Ingests the history of the repo at `root` (registered under `name`, or its folder name).
    /// A commit whose changes cannot be read is stored without them only with
    /// `keep_incomplete`; it is counted in the report either way.
    pub fn sync_history(
        &mut self,
        root: &Path,
        name: Option<&str>,
        keep_incomplete: bool,
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        let started = Instant::now();
        let root = std::fs::canonicalize(root)
            .with_context(|| format!("cannot open {}", root.display()))?;
        let repo = quarry_history::GitRepo::open(&root)?;
        let default_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repo".into());
        let reachable = repo.reachable()?;
        // A repo moved on disk is recognised by its name or by its history: the newest
        // commits HEAD reaches are already stored for it.
        let recent: Vec<&String> = reachable
            .as_ref()
            .map(|(_, all)| all.iter().take(16).collect())
            .unwrap_or_default();
        let store = self.store();
        let is_same = |r: &RepoInfo| {
            store
                .known_commits(r.id)
                .is_ok_and(|known| recent.iter().any(|s| known.contains(*s)))
        };
        let (info, moved_from) = {
            let name = name.unwrap_or(&default_name).to_string();
            let root = root.to_string_lossy().into_owned();
            let same: Vec<i64> = self
                .store()
                .repos()?
                .iter()
                .filter(|r| r.root != root && !Path::new(&r.root).exists() && is_same(r))
                .map(|r| r.id)
                .collect();
            self.register_repo(&name, &root, &|r| same.contains(&r.id))?
        };
        let mut notes = Vec::new();
        if let Some(old) = moved_from {
            notes.push(format!(
                "the repo moved from {old}: its stored history is kept"
            ));
        }
        if repo.is_shallow() {
            notes.push("shallow clone: only the commits it has are ingested".to_string());
        }
        let Some((head, reachable)) = reachable else {
            notes.push("the repository has no commits yet".to_string());
            return Ok(SyncReport {
                repo: info.name,
                head: None,
                added: 0,
                dropped: 0,
                total: 0,
                elapsed_ms: started.elapsed().as_millis() as u64,
                notes,
                incomplete: 0,
                interrupted: false,
            });
        };
        self.ingest(
            &repo,
            info,
            head,
            reachable,
            keep_incomplete,
            progress,
            notes,
            started,
        )
    }

    /// The history of the stored repo `name` as it stood at commit `tip`, read from the git
    /// folder `git_dir`: commits `tip` does not reach are dropped, the others stored. An
    /// evaluation lays each query's tree out at the query's commit and its history so, so
    /// that no later commit (the fix, above all) is ever evidence (`quarry eval --history`).
    pub fn sync_history_at(
        &mut self,
        git_dir: &Path,
        name: &str,
        tip: &str,
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        let started = Instant::now();
        let repo = quarry_history::GitRepo::open(git_dir)?;
        let info = self
            .store()
            .repos()?
            .into_iter()
            .find(|r| r.name == name)
            .with_context(|| format!("no repo named `{name}` to sync the history of"))?;
        let Some((head, reachable)) = repo.reachable_from(Some(tip))? else {
            bail!("{tip} reaches no commits in {}", git_dir.display());
        };
        self.ingest(
            &repo,
            info,
            head,
            reachable,
            true,
            progress,
            Vec::new(),
            started,
        )
    }

    /// Stores the commits of `reachable` not stored yet and drops the stored ones it lacks.
    #[allow(clippy::too_many_arguments)]
    fn ingest(
        &mut self,
        repo: &quarry_history::GitRepo,
        info: RepoInfo,
        head: String,
        reachable: Vec<String>,
        keep_incomplete: bool,
        progress: &dyn Progress,
        mut notes: Vec<String>,
        started: Instant,
    ) -> Result<SyncReport> {
        let known = self.store().known_commits(info.id)?;
        let reachable_set: HashSet<&String> = reachable.iter().collect();
        let gone: Vec<String> = known
            .iter()
            .filter(|s| !reachable_set.contains(s))
            .cloned()
            .collect();
        if !gone.is_empty() {
            self.store_mut().drop_commits(info.id, &gone)?;
            notes.push(format!(
                "history was rewritten: dropped {} commits HEAD no longer reaches",
                gone.len()
            ));
        }
        let new: Vec<&String> = reachable.iter().filter(|s| !known.contains(*s)).collect();
        progress.begin(&format!("history {}", info.name), new.len() as u64);
        let mut added = 0;
        let mut interrupted = false;
        let mut incomplete = 0;
        let result = (|| -> Result<()> {
            for batch in new.chunks(SYNC_BATCH) {
                if progress.cancelled() {
                    interrupted = true;
                    break;
                }
                let shas: Vec<&str> = batch.iter().map(|s| s.as_str()).collect();
                let mut records = Vec::with_capacity(batch.len());
                for (sha, read) in shas.iter().zip(repo.commits(&shas)?) {
                    match read {
                        Ok((record, unread)) => {
                            if let Some(why) = &unread {
                                incomplete += 1;
                                let first_line = why.lines().next().unwrap_or_default();
                                notes.push(format!(
                                    "commit {sha}: its changes cannot be read ({first_line})"
                                ));
                                if !keep_incomplete {
                                    continue;
                                }
                            }
                            records.push(record)
                        }
                        Err(e) => {
                            incomplete += 1;
                            notes.push(format!("commit {sha}: {e:#}"))
                        }
                    }
                }
                self.store_mut().put_commits(info.id, &records)?;
                added += records.len();
                progress.advance(batch.len() as u64);
            }
            Ok(())
        })();
        progress.end();
        result?;
        notes.truncate(20);
        Ok(SyncReport {
            repo: info.name,
            head: Some(head),
            added,
            dropped: gone.len(),
            total: known.len() - gone.len() + added,
            elapsed_ms: started.elapsed().as_millis() as u64,
            notes,
            incomplete,
            interrupted,
        })
    }

    /// The commit a SHA prefix names — exactly one, or an error saying why not.
    pub fn show_commit(&self, prefix: &str, repos: &[String]) -> Result<ShownCommit> {
        let prefix = prefix.trim();
        if prefix.len() < 4 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("`{prefix}` is not a commit SHA (at least 4 hex digits)");
        }
        let mut found = self.store().commits_by_prefix(prefix, repos)?;
        match found.len() {
            0 => bail!("no stored commit starts with {prefix}: run `quarry sync` if it is new"),
            1 => {
                let (repo, commit) = found.remove(0);
                Ok(ShownCommit { repo, commit })
            }
            n => {
                let shas: Vec<String> = found
                    .iter()
                    .map(|(r, c)| format!("{r}:{}", &c.sha[..12]))
                    .collect();
                bail!(
                    "{prefix} is ambiguous ({n} commits: {}); give more digits",
                    shas.join(", ")
                )
            }
        }
    }

    /// Commits that changed `path` (file or folder), following renames, newest first.
    pub fn touches(&self, path: &str, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        self.store().touches(path.trim_start_matches("./"), query)
    }

    /// The answer every interface gives for "which commits changed this": `PATH` (file or
    /// folder) or `PATH::Symbol`, newest first, up to `query.limit`, saying whether there are
    /// more and, when there is nothing, whether that is because no history is synced.
    pub fn commits_touching(&self, target: &str, query: &CommitQuery) -> Result<Touches> {
        let limit = query.limit.max(1);
        let one_more = CommitQuery {
            limit: limit + 1,
            ..query.clone()
        };
        let mut undefined = None;
        let mut commits = match crate::symbol_history::split_symbol_path(target) {
            Some((path, symbol)) => match self.touches_symbol(path, &symbol, &one_more)? {
                Some(commits) => commits,
                None => {
                    undefined = Some(format!(
                        "no version of {path} defines `{symbol}` (names are as `quarry summary {path}` lists them)"
                    ));
                    Vec::new()
                }
            },
            None => self.touches(target, &one_more)?,
        };
        let more = commits.len() > limit;
        commits.truncate(limit);
        let hint = if undefined.is_some() {
            undefined
        } else if commits.is_empty() {
            Some(match self.unsynced_note(&query.repos)? {
                None => format!("no stored commit changed {target} (check the path: it is relative to the repo's root)"),
                Some(note) => note,
            })
        } else if more {
            Some(format!(
                "more commits changed {target}: ask for more than {limit}"
            ))
        } else {
            None
        };
        Ok(Touches {
            commits,
            more,
            hint,
        })
    }
}

impl Workspace {
    /// What to say when some of `repos` (every repo when empty) have no synced history: their
    /// commits are not in any answer, and an answer from the others alone would not say so.
    pub(crate) fn unsynced_note(&self, repos: &[String]) -> Result<Option<String>> {
        let unsynced: Vec<String> = self
            .store()
            .history_stats()?
            .into_iter()
            .filter(|s| repos.is_empty() || repos.contains(&s.repo))
            .filter(|s| s.commits == 0)
            .map(|s| s.repo)
            .collect();
        Ok((!unsynced.is_empty()).then(|| {
            format!(
                "the history of {} is not synced yet: `quarry sync` (or `quarry repo add PATH`)",
                unsynced.join(", ")
            )
        }))
    }
}

/// Unix seconds of a `YYYY-MM-DD` (start of day, UTC) or RFC 3339 date.
pub fn parse_date(s: &str, end_of_day: bool) -> Result<i64> {
    let t = if s.len() == 10 {
        let time = if end_of_day { "23:59:59" } else { "00:00:00" };
        humantime::parse_rfc3339(&format!("{s}T{time}Z"))
    } else {
        humantime::parse_rfc3339_weak(s)
    }
    .with_context(|| format!("`{s}` is not a date (YYYY-MM-DD or RFC 3339)"))?;
    Ok(t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64))
}
