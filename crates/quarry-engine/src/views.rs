//! What the search page reads beside search and history: a file drawn with its grammar's
//! colours, one commit by SHA, and a name's transitive callers — the service's answers for
//! the file view, the commit view and the impact graph.

use crate::answer::{Answer, FileView};
use crate::error::bad;
use crate::graph::Impact;
use crate::history::ShownCommit;
use crate::service::Service;
use anyhow::Result;
use quarry_core::{CodeSpan, Language};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

/// Lines a file view holds at most (a generated file of a million lines is not read whole).
pub const MAX_VIEW_LINES: usize = 20_000;
/// Bytes a file view reads at most.
pub const MAX_VIEW_BYTES: u64 = 4 << 20;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileViewParams {
    /// The file, relative to its repo's root.
    pub path: String,
    /// The repo holding it (its name in `/api/status`); the first repo that has the path
    /// when absent.
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitShowParams {
    /// A SHA or a prefix of at least 4 hex digits.
    pub sha: String,
    /// Only these repos.
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactParams {
    /// The definition's name (`save`, `Store.save`).
    pub name: String,
    /// Only these repos for the first step.
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
    /// Steps of callers to follow (default 3, at most 6).
    pub depth: Option<usize>,
}

impl Service {
    /// A file as the file view draws it: its lines, coloured when quarry has its grammar.
    pub fn file_view(&self, p: FileViewParams) -> Result<Answer<FileView>> {
        let ws = self.workspace()?;
        let named = self.known_repos(&ws, p.repos.unwrap_or_default())?;
        let (repo, real, shown) = self.resolve_file(&ws, p.path.trim_start_matches('/'), &named)?;
        let body = read_view(&repo, &shown, &real)?;
        self.answer(&ws, &[repo], body)
    }

    /// One commit by SHA prefix, with its files and patch.
    pub fn show_commit(&self, p: CommitShowParams) -> Result<Answer<ShownCommit>> {
        let ws = self.workspace()?;
        let repos = p.repos.unwrap_or_default();
        let shown = ws
            .show_commit(&p.sha, &repos)
            .map_err(|e| bad(format!("{e:#}")))?;
        let repo = shown.repo.clone();
        self.answer(&ws, &[repo], shown)
    }

    /// A name's transitive callers, step by step (matched by name, as `quarry impact`).
    pub fn impact(&self, p: ImpactParams) -> Result<Answer<Impact>> {
        if p.name.trim().is_empty() {
            return Err(bad("`name` is empty: give a definition's name"));
        }
        let ws = self.workspace()?;
        let repos = p.repos.unwrap_or_default();
        let depth = p.depth.unwrap_or(3).clamp(1, 6);
        let impact = ws.impact(&p.name, &repos, depth)?;
        self.answer(&ws, &repos, impact)
    }
}

/// Reads at most MAX_VIEW_BYTES and MAX_VIEW_LINES of `real` and colours them.
fn read_view(repo: &str, rel: &str, real: &Path) -> Result<FileView> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(real)?
        .take(MAX_VIEW_BYTES)
        .read_to_end(&mut bytes)?;
    let mut truncated = std::fs::metadata(real)?.len() > MAX_VIEW_BYTES;
    if bytes.contains(&0) {
        return Err(bad(format!("`{rel}` is a binary file")));
    }
    let lossy = std::str::from_utf8(&bytes).is_err();
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some((cut, _)) = text.match_indices('\n').nth(MAX_VIEW_LINES - 1) {
        text.truncate(cut + 1);
        truncated = true;
    }
    let language = Language::detect(Path::new(rel));
    let coloured = quarry_chunk::highlight::highlight(language, &text);
    let highlighted = coloured.is_some();
    let lines = coloured.unwrap_or_else(|| {
        text.lines()
            .map(|l| {
                if l.is_empty() {
                    Vec::new()
                } else {
                    vec![CodeSpan {
                        text: l.to_string(),
                        class: None,
                    }]
                }
            })
            .collect()
    });
    Ok(FileView {
        repo: repo.to_string(),
        path: rel.to_string(),
        language: language.name().to_string(),
        highlighted,
        lines,
        truncated,
        lossy,
    })
}
