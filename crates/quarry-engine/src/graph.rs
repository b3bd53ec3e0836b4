//! Who calls what: `quarry callers NAME` and `quarry impact NAME`, from the call sites the
//! chunker records per file.
//!
//! Resolution is by name: a call `x.save()` is a call of every definition named `save`. That
//! over-reports when unrelated types share a method name and misses calls made through
//! aliases, function values or dynamic dispatch by string; results say so (`by_name: true`)
//! rather than pretend to be a compiler's call graph.

use crate::workspace::Workspace;
use anyhow::Result;
use quarry_core::CallRef;
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};

/// Call sites looked up per name and step.
const MAX_CALLS_PER_NAME: usize = 2_000;
/// Entries an impact analysis reports before it stops.
const MAX_IMPACT_ENTRIES: usize = 5_000;

/// The last segment of a qualified or dotted name: what call sites record.
pub fn bare_name(name: &str) -> &str {
    name.rsplit(['.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(name)
}

#[derive(Debug, Clone, Serialize)]
pub struct Callers {
    pub name: String,
    /// Always true: calls are matched by name (see the module docs).
    pub by_name: bool,
    pub calls: Vec<CallRef>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImpactEntry {
    /// 1: calls the symbol directly; 2: calls a direct caller; …
    pub depth: usize,
    pub repo: String,
    pub path: String,
    /// The calling definition (`None`: top-level code, which nothing calls in turn).
    pub caller: Option<String>,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Impact {
    pub name: String,
    pub by_name: bool,
    pub max_depth: usize,
    pub callers: Vec<ImpactEntry>,
    /// `repo:path` of every file with an affected definition, sorted.
    pub files: Vec<String>,
    /// True when the walk stopped at the entry limit.
    pub truncated: bool,
}

impl Workspace {
    /// Every call of `name` in the given repos (all when empty).
    pub fn callers(&self, name: &str, repos: &[String]) -> Result<Callers> {
        let calls = self
            .store()
            .callers(bare_name(name), repos, MAX_CALLS_PER_NAME)?;
        Ok(Callers {
            name: name.to_string(),
            by_name: true,
            calls,
        })
    }

    /// Transitive callers of `name` up to `max_depth` steps, breadth first.
    pub fn impact(&self, name: &str, repos: &[String], max_depth: usize) -> Result<Impact> {
        let mut seen: HashSet<(String, String, Option<String>)> = HashSet::new();
        let mut expanded: HashSet<String> = HashSet::from([bare_name(name).to_string()]);
        let mut frontier = vec![bare_name(name).to_string()];
        let mut callers = Vec::new();
        let mut truncated = false;
        'walk: for depth in 1..=max_depth.max(1) {
            let mut next = Vec::new();
            for callee in &frontier {
                for call in self.store().callers(callee, repos, MAX_CALLS_PER_NAME)? {
                    let key = (call.repo.clone(), call.path.clone(), call.caller.clone());
                    if !seen.insert(key) {
                        continue;
                    }
                    if let Some(caller) = &call.caller {
                        let bare = bare_name(caller).to_string();
                        if expanded.insert(bare.clone()) {
                            next.push(bare);
                        }
                    }
                    callers.push(ImpactEntry {
                        depth,
                        repo: call.repo,
                        path: call.path,
                        caller: call.caller,
                        line: call.line,
                    });
                    if callers.len() >= MAX_IMPACT_ENTRIES {
                        truncated = true;
                        break 'walk;
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        let files: BTreeSet<String> = callers
            .iter()
            .map(|c| format!("{}:{}", c.repo, c.path))
            .collect();
        Ok(Impact {
            name: name.to_string(),
            by_name: true,
            max_depth,
            callers,
            files: files.into_iter().collect(),
            truncated,
        })
    }
}
