//! How current the index is, per repo: when it was last indexed and how many files changed
//! on disk since (new, changed or deleted, judged by size and modification time like the
//! indexer's own pre-check). Every answer of the servers carries it, so an agent knows when
//! a result may be stale and a sync is due.

use crate::answer::Freshness;
use crate::workspace::Workspace;
use anyhow::Result;
use std::collections::HashSet;
use std::path::Path;

impl Workspace {
    /// Freshness of every repo (or only `repos`).
    pub fn freshness(&self, repos: &[String]) -> Result<Vec<Freshness>> {
        let history = self.store().history_stats()?;
        let mut out = Vec::new();
        for repo in self.store().repos()? {
            if !repos.is_empty() && !repos.contains(&repo.name) {
                continue;
            }
            let stored = self.store().file_states(repo.id)?;
            // A repo with history only (never indexed) has no files to compare.
            let changed = repo.indexed_at.and_then(|indexed_at| {
                // A file the index does not hold was either skipped by the last run (binary,
                // minified, unreadable: not stored, and no change) or made since it. The run's
                // time is in whole seconds: a file made within the second after it ends is
                // counted by the next run, not here.
                let run_ended_ns = indexed_at.saturating_mul(1_000_000_000);
                quarry_sources::discover(Path::new(&repo.root), &Default::default())
                    .ok()
                    .map(|found| {
                        let mut seen = HashSet::new();
                        let mut changed = 0u64;
                        for c in &found.files {
                            seen.insert(c.rel_path.as_str());
                            match stored.get(&c.rel_path) {
                                Some(s) if s.size == c.size && s.mtime_ns == c.mtime_ns => {}
                                None if c.mtime_ns < run_ended_ns + 1_000_000_000 => {}
                                _ => changed += 1,
                            }
                        }
                        changed
                            + stored.keys().filter(|p| !seen.contains(p.as_str())).count() as u64
                    })
            });
            out.push(Freshness {
                indexed_at: repo.indexed_at.map(quarry_core::history::format_time),
                files_changed_since: changed,
                commits: history
                    .iter()
                    .find(|h| h.repo == repo.name)
                    .map_or(0, |h| h.commits),
                repo: repo.name,
            });
        }
        Ok(out)
    }
}
