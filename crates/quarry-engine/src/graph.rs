//! Who calls what: `quarry callers NAME` and `quarry impact NAME`, from the call sites the
//! chunker records per file.
//!
//! Resolution is by name: a call `x.save()` is a call of every definition named `save`. That
//! over-reports when unrelated types share a method name and misses calls made through
//! aliases, function values or dynamic dispatch by string; results say so (`by_name: true`)
//! rather than pretend to be a compiler's call graph.

use crate::workspace::Workspace;
use anyhow::Result;
use quarry_core::{CallRef, Language};
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

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

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ImpactEntry {
    /// 1: calls the symbol directly; 2: calls a direct caller; …
    pub depth: usize,
    /// The name it calls: the symbol (depth 1) or a caller one step nearer it.
    pub calls: String,
    pub repo: String,
    pub path: String,
    /// The calling definition (`None`: top-level code, which nothing calls in turn).
    pub caller: Option<String>,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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

    /// Transitive callers of `name` up to `max_depth` steps, breadth first. The first step
    /// finds the name's calls in `repos` (all when empty); each later step looks a caller up
    /// only in the repo and language family it was found in: fd's `run` leads to fd's Rust
    /// callers of `run`, never to a Java `run` of another repo in the workspace.
    pub fn impact(&self, name: &str, repos: &[String], max_depth: usize) -> Result<Impact> {
        let mut seen: HashSet<(String, String, Option<String>)> = HashSet::new();
        // What was looked up: (bare name, repo, language family); `None` for the first step.
        let mut expanded: HashSet<(String, Option<(String, Language)>)> = HashSet::new();
        let mut frontier = vec![(bare_name(name).to_string(), None::<(String, Language)>)];
        expanded.insert(frontier[0].clone());
        let mut callers = Vec::new();
        let mut truncated = false;
        'walk: for depth in 1..=max_depth.max(1) {
            let mut next = Vec::new();
            for (callee, scope) in &frontier {
                let in_repos = match scope {
                    Some((repo, _)) => std::slice::from_ref(repo),
                    None => repos,
                };
                for call in self.store().callers(callee, in_repos, MAX_CALLS_PER_NAME)? {
                    let language = Language::detect(Path::new(&call.path));
                    if scope
                        .as_ref()
                        .is_some_and(|(_, wanted)| !language.calls_into(*wanted))
                    {
                        continue;
                    }
                    let key = (call.repo.clone(), call.path.clone(), call.caller.clone());
                    if !seen.insert(key) {
                        continue;
                    }
                    if let Some(caller) = &call.caller {
                        let step = (
                            bare_name(caller).to_string(),
                            Some((call.repo.clone(), language)),
                        );
                        if expanded.insert(step.clone()) {
                            next.push(step);
                        }
                    }
                    callers.push(ImpactEntry {
                        depth,
                        calls: callee.clone(),
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
