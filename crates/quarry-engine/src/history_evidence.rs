//! Past changes as evidence for which file an issue is about. The bug-localisation literature
//! adds a repository's history to the code's text (BugLocator, Zhou et al. 2012: similar past
//! fixes and the files they changed; Locus, Wen et al. 2016: the change hunks themselves), and
//! gains most at rank 1. quarry has the history synced: the commits whose words are most like
//! the issue's — ranked as `quarry log` ranks them, lexically — vote for the files they
//! changed, each vote weighed by how well the commit matches (its score over the best one's)
//! and by how specific the change was (a commit touching 300 files says little of any one).
//! Files no longer in the index get no vote; without synced history there are none.

use std::collections::HashMap;

use anyhow::Result;
use quarry_core::history::CommitQuery;

use crate::answer::Mode;
use crate::request::SearchRequest;
use crate::workspace::Workspace;

/// The commits asked for: the best-matching past changes.
const VOTING_COMMITS: usize = 30;
/// A commit changing more files than this votes for none (a reformat, a rename sweep).
const MAX_FILES_PER_COMMIT: usize = 50;

/// Each file's share of the votes (the best file 1), with the commits voting for it (SHA
/// prefixes, best first), for the files the searched repos' history names.
pub(crate) type Votes = HashMap<(String, String), (f64, Vec<String>)>;

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
        let found = self.search_commits(&request.query, query, Mode::Lexical, &request.fusion)?;
        let Some(best) = found.commits.first().map(|c| c.score).filter(|s| *s > 0.0) else {
            return Ok(Votes::new());
        };
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
        let mut votes = Votes::new();
        let mut exists: HashMap<(String, String), bool> = HashMap::new();
        for commit in &found.commits {
            let Some(paths) = changed.get(&(commit.repo.clone(), commit.sha.clone())) else {
                continue;
            };
            if paths.is_empty() || paths.len() > MAX_FILES_PER_COMMIT {
                continue;
            }
            let weight = (commit.score / best) / paths.len() as f64;
            for path in paths {
                let key = (commit.repo.clone(), path.clone());
                let present = match exists.get(&key) {
                    Some(&p) => p,
                    None => {
                        let p = !self.store().file_chunks(&commit.repo, path)?.is_empty();
                        exists.insert(key.clone(), p);
                        p
                    }
                };
                if !present {
                    continue;
                }
                let vote = votes.entry(key).or_insert((0.0, Vec::new()));
                vote.0 += weight;
                if vote.1.len() < 3 {
                    vote.1
                        .push(commit.sha[..12.min(commit.sha.len())].to_string());
                }
            }
        }
        let top = votes.values().map(|(v, _)| *v).fold(0.0f64, f64::max);
        if top > 0.0 {
            for (v, _) in votes.values_mut() {
                *v /= top;
            }
        }
        Ok(votes)
    }
}
