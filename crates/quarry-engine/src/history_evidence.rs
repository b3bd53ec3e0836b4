//! Past changes as evidence for which file an issue is about. The bug-localisation literature
//! adds a repository's history to the code's text (BugLocator, Zhou et al. 2012: similar past
//! fixes and the files they changed; Locus, Wen et al. 2016: the change hunks themselves), and
//! gains most at rank 1. quarry has the history synced: the commits whose words are most like
//! the issue's — ranked as `quarry log` ranks them, lexically — vote for the files they
//! changed, each vote weighed by how well the commit matches (its score over the best one's),
//! by how specific the change was (a commit touching 300 files says little of any one) and,
//! when asked, by its age. Within the best-voted files, the lines those commits added that
//! still stand today name the definitions they changed (the hunks, as Locus reads them).
//! Files no longer in the index get no vote; without synced history there are none.
//!
//! The votes cost about what the code search costs (the commit search over every commit: on
//! sympy's 62k, ~85 ms of a 160 ms issue search), and need nothing from it: they are asked on
//! a connection of their own beside it (`PendingVotes`), so an issue text waits for the slower
//! of the two, not for both.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use quarry_core::history::CommitQuery;
use quarry_core::ChunkHit;
use quarry_rank::ChangedDefinition;

use crate::answer::Mode;
use crate::request::SearchRequest;
use crate::workspace::Workspace;

/// The commits asked for: the best-matching past changes.
const VOTING_COMMITS: usize = 30;
/// A commit changing more files than this votes for none (a reformat, a rename sweep).
const MAX_FILES_PER_COMMIT: usize = 50;
/// Files whose changed definitions are looked for (the best-voted; each costs a file read).
const FILES_WITH_DEFINITIONS: usize = 10;
/// An added line shorter than this (trimmed) says nothing of where it is (`return`, `}`).
const MIN_LINE_CHARS: usize = 12;

/// One file's votes.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileVotes {
    /// Its votes over the best file's (the best file 1).
    pub share: f64,
    /// The commits voting for it (SHA prefixes, best first, at most 3).
    pub commits: Vec<String>,
    /// The definitions the voting commits' added lines stand in today.
    pub definitions: Vec<ChangedDefinition>,
}

pub(crate) type Votes = HashMap<(String, String), FileVotes>;

/// A voting commit's weight for one repo-relative file.
struct Vote {
    sha: String,
    weight: f64,
}

/// Votes being gathered beside the code search, or to be gathered in turn.
pub(crate) enum PendingVotes {
    /// History is off for this search (not an issue text, or weight 0).
    Off,
    /// On a second connection, in a thread of its own: `None` when that connection could not
    /// be opened (the votes are then asked on the search's own).
    Beside(std::thread::JoinHandle<Option<Result<Votes>>>),
}

impl PendingVotes {
    /// Starts the votes for `request` when it asks for them (`history_on`).
    pub(crate) fn start(ws: &Workspace, request: &SearchRequest, history_on: bool) -> Self {
        if !history_on {
            return Self::Off;
        }
        let dir = ws.dir.clone();
        let request = request.clone();
        // Detached, not scoped: a search that fails first leaves it to finish on its own
        // (a read, nothing to undo).
        Self::Beside(std::thread::spawn(move || {
            let ws = Workspace::open_existing(&dir).ok()?;
            Some(ws.history_votes(&request))
        }))
    }

    /// The votes (empty when off).
    pub(crate) fn finish(self, ws: &Workspace, request: &SearchRequest) -> Result<Votes> {
        match self {
            Self::Off => Ok(Votes::new()),
            Self::Beside(thread) => match thread.join() {
                Ok(Some(votes)) => votes,
                Ok(None) => ws.history_votes(request),
                Err(_) => anyhow::bail!("gathering the history's votes panicked"),
            },
        }
    }
}

impl Workspace {
    /// The votes of past changes for the files of `request`'s repos (empty without history).
    pub(crate) fn history_votes(&self, request: &SearchRequest) -> Result<Votes> {
        let synced = self.store().history_stats()?.into_iter().any(|s| {
            s.commits > 0 && (request.repos.is_empty() || request.repos.contains(&s.repo))
        });
        if !synced {
            return Ok(Votes::new());
        }
        let query = CommitQuery {
            repos: request.repos.clone(),
            limit: VOTING_COMMITS,
            ..Default::default()
        };
        // Ranked as `log` ranks an issue text (its file-role and fix-shaped priors, its code
        // echoes): commit BM25 alone over the first 16 words was tried and lost
        // (swebench_dev MRR 0.679 -> 0.656..0.671 against 0.682..0.701 with this ranking,
        // docs/EVAL.md), for 60 ms less on sympy.
        let found = self.search_commits(&request.query, query, Mode::Lexical, &request.fusion)?;
        let Some(best) = found.commits.first().map(|c| c.score).filter(|s| *s > 0.0) else {
            return Ok(Votes::new());
        };
        let half_life = request.fusion.files.history_half_life_days;
        let time_of = |date: &str| {
            humantime::parse_rfc3339(date)
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0.0, |d| d.as_secs_f64())
        };
        let newest = found
            .commits
            .iter()
            .map(|c| time_of(&c.date))
            .fold(0.0f64, f64::max);
        let mut by_repo: HashMap<&str, Vec<String>> = HashMap::new();
        for c in &found.commits {
            by_repo.entry(&c.repo).or_default().push(c.sha.clone());
        }
        let mut changed: HashMap<(String, String), Vec<String>> = HashMap::new();
        for (repo, shas) in &by_repo {
            for (sha, paths) in self.store().changed_paths(repo, shas)? {
                changed.insert((repo.to_string(), sha), paths);
            }
        }
        // Which paths are indexed today: one read of each repo's file list.
        let repo_ids: HashMap<String, i64> = self
            .store()
            .repos()?
            .into_iter()
            .map(|r| (r.name, r.id))
            .collect();
        let mut indexed: HashMap<&str, HashSet<String>> = HashMap::new();
        for repo in by_repo.keys() {
            if let Some(id) = repo_ids.get(*repo) {
                indexed.insert(repo, self.store().file_states(*id)?.into_keys().collect());
            }
        }
        let mut votes: HashMap<(String, String), (f64, Vec<Vote>)> = HashMap::new();
        for commit in &found.commits {
            let Some(paths) = changed.get(&(commit.repo.clone(), commit.sha.clone())) else {
                continue;
            };
            if paths.is_empty() || paths.len() > MAX_FILES_PER_COMMIT {
                continue;
            }
            let mut matched = commit.score / best;
            if half_life > 0.0 {
                let age_days = (newest - time_of(&commit.date)).max(0.0) / 86_400.0;
                matched *= 0.5f64.powf(age_days / half_life);
            }
            let files = indexed.get(commit.repo.as_str());
            for path in paths {
                if !files.is_some_and(|f| f.contains(path)) {
                    continue;
                }
                let vote = votes
                    .entry((commit.repo.clone(), path.clone()))
                    .or_insert((0.0, Vec::new()));
                vote.0 += matched / paths.len() as f64;
                vote.1.push(Vote {
                    sha: commit.sha.clone(),
                    weight: matched,
                });
            }
        }
        let top = votes.values().map(|(v, _)| *v).fold(0.0f64, f64::max);
        if top <= 0.0 {
            return Ok(Votes::new());
        }
        let mut ranked: Vec<_> = votes.into_iter().collect();
        ranked.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
        let mut out = Votes::new();
        for (i, ((repo, path), (total, voters))) in ranked.into_iter().enumerate() {
            let definitions = if i < FILES_WITH_DEFINITIONS {
                self.changed_definitions(&repo, &path, &voters)?
            } else {
                Vec::new()
            };
            let commits = voters
                .iter()
                .take(3)
                .map(|v| v.sha[..12.min(v.sha.len())].to_string())
                .collect();
            out.insert(
                (repo, path),
                FileVotes {
                    share: total / top,
                    commits,
                    definitions,
                },
            );
        }
        // Definitions' shares on one scale across files: the best definition 1.
        let best_def = out
            .values()
            .flat_map(|f| f.definitions.iter().map(|d| d.share))
            .fold(0.0f64, f64::max);
        if best_def > 0.0 {
            for d in out.values_mut().flat_map(|f| f.definitions.iter_mut()) {
                d.share /= best_def;
            }
        }
        Ok(out)
    }

    /// The definitions of `path` (today's chunks) that the voters' added lines stand in, each
    /// with the summed weight of the commits whose lines it holds (not yet normalised).
    fn changed_definitions(
        &self,
        repo: &str,
        path: &str,
        voters: &[Vote],
    ) -> Result<Vec<ChangedDefinition>> {
        let shas: Vec<String> = voters.iter().map(|v| v.sha.clone()).collect();
        let patches = self.store().commit_patches(repo, &shas)?;
        if patches.is_empty() {
            return Ok(Vec::new());
        }
        let chunks = self.store().file_chunks(repo, path)?;
        let lines = LineIndex::new(&chunks);
        let mut weight = vec![0.0f64; chunks.len()];
        for vote in voters {
            let Some(patch) = patches.get(&vote.sha) else {
                continue;
            };
            let mut hit: HashSet<usize> = HashSet::new();
            for added in added_lines(patch, path) {
                hit.extend(lines.chunks_holding(added));
            }
            for c in hit {
                weight[c] += vote.weight;
            }
        }
        Ok(chunks
            .into_iter()
            .zip(weight)
            .filter(|(_, w)| *w > 0.0)
            .map(|(c, w)| ChangedDefinition {
                start_line: c.start_line,
                end_line: c.end_line,
                symbol: c.symbol,
                share: w,
            })
            .collect())
    }
}

/// The trimmed lines a patch adds to `path` (long enough to place), in patch order. The patch
/// is the stored unified diff of a whole commit, `+++ b/PATH` opening each file's hunks.
fn added_lines<'p>(patch: &'p str, path: &str) -> impl Iterator<Item = &'p str> + 'p {
    let header = format!("+++ b/{path}");
    let mut inside = false;
    patch.lines().filter_map(move |line| {
        if line.starts_with("+++ ") {
            inside = line == header;
            return None;
        }
        if line.starts_with("--- ") || line.starts_with("diff ") {
            inside = false;
            return None;
        }
        let added = line.strip_prefix('+').filter(|_| inside)?.trim();
        (added.chars().count() >= MIN_LINE_CHARS).then_some(added)
    })
}

/// Each trimmed line of a file's chunks, to the chunks holding it; a line nested chunks share
/// goes to the innermost (the method, not its class).
struct LineIndex<'c> {
    holders: HashMap<&'c str, Vec<usize>>,
}

impl<'c> LineIndex<'c> {
    fn new(chunks: &'c [ChunkHit]) -> Self {
        let mut innermost: HashMap<u32, (usize, &'c str)> = HashMap::new();
        for (i, c) in chunks.iter().enumerate() {
            for (n, text) in c.text.lines().enumerate() {
                let line = c.start_line + n as u32;
                let span = c.end_line - c.start_line;
                match innermost.get(&line) {
                    Some((j, _)) if chunks[*j].end_line - chunks[*j].start_line <= span => {}
                    _ => {
                        innermost.insert(line, (i, text.trim()));
                    }
                }
            }
        }
        let mut holders: HashMap<&'c str, Vec<usize>> = HashMap::new();
        for (i, text) in innermost.into_values() {
            let list = holders.entry(text).or_default();
            if !list.contains(&i) {
                list.push(i);
            }
        }
        Self { holders }
    }

    /// The chunks holding `line` (trimmed), at most a few: a line repeated all over the file
    /// places nothing.
    fn chunks_holding(&self, line: &str) -> Vec<usize> {
        match self.holders.get(line) {
            Some(list) if list.len() <= 2 => list.clone(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_are_read_from_the_named_file_only() {
        let patch = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,3 @@\n def f():\n+    return compute_total(x)\n-    return 0\n--- a/src/b.py\n+++ b/src/b.py\n@@ -1 +1,2 @@\n+    value = other_function(y)\n+x\n";
        let a: Vec<&str> = added_lines(patch, "src/a.py").collect();
        assert_eq!(a, vec!["return compute_total(x)"]);
        let b: Vec<&str> = added_lines(patch, "src/b.py").collect();
        assert_eq!(
            b,
            vec!["value = other_function(y)"],
            "short lines place nothing"
        );
    }
}
