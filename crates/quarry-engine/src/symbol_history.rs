//! Symbol-level history: `quarry touches path::Symbol` lists the commits that changed one
//! function, class or method. A commit changed the symbol when the symbol's source differs
//! between the commit's tree and its first parent's (or exists on one side only) — read from
//! git and parsed by the same chunker as the index, so what counts as "the symbol" is what
//! search shows. Only commits that changed the file are examined, newest first, following
//! renames, until enough are found; merges are skipped (their first-parent diff repeats the
//! merged commits, which are examined themselves).

use crate::workspace::Workspace;
use anyhow::Result;
use quarry_core::history::{CommitHit, CommitQuery};
use quarry_core::Language;
use quarry_history::GitRepo;
use std::collections::HashMap;
use std::path::Path;

/// File-changing commits examined at most per query (each costs up to two parses).
const MAX_EXAMINED: usize = 2_000;

/// Splits `path::Symbol` (`src/auth.py::Session.login`, `src/lib.rs::Store::open`); `None`
/// when the argument names no symbol.
pub fn split_symbol_path(arg: &str) -> Option<(&str, String)> {
    let (path, symbol) = arg.split_once("::")?;
    if path.is_empty() || symbol.is_empty() {
        return None;
    }
    Some((path, symbol.replace("::", ".")))
}

/// Reads one symbol's source out of files at given commits. Parses are cached by blob id:
/// a file version shared by many commits (every commit's parent version is usually the
/// previous commit's own) is parsed once.
struct SymbolReader<'a> {
    symbol: &'a str,
    repos: HashMap<String, GitRepo>,
    texts: HashMap<String, Option<String>>,
}

impl SymbolReader<'_> {
    /// The symbol's source in `path` at commit `sha` (`None`: not defined there). `likely` is
    /// the text it probably has (the same symbol in the neighbouring version): when that text
    /// occurs verbatim in the file, it is the answer without a parse — so on a long history
    /// only the versions where the symbol changed are parsed.
    fn text(
        &mut self,
        repo: &str,
        root: &str,
        sha: &str,
        path: &str,
        likely: Option<&str>,
    ) -> Result<Option<String>> {
        if !self.repos.contains_key(repo) {
            self.repos
                .insert(repo.to_string(), GitRepo::open(Path::new(root))?);
        }
        let git = &self.repos[repo];
        let Some(blob) = git.blob_id_at(sha, path)? else {
            return Ok(None);
        };
        if let Some(t) = self.texts.get(&blob) {
            return Ok(t.clone());
        }
        let bytes = git.blob(&blob)?;
        let text = String::from_utf8_lossy(&bytes);
        if let Some(likely) = likely.filter(|l| text.contains(*l)) {
            self.texts.insert(blob, Some(likely.to_string()));
            return Ok(Some(likely.to_string()));
        }
        let language = Language::detect(Path::new(path));
        let chunks = quarry_chunk::chunk_file(language, &text, &Default::default());
        let lines: Vec<&str> = text.lines().collect();
        let bodies: Vec<String> = chunks
            .symbols
            .iter()
            .filter(|s| s.qualified_name() == self.symbol || s.name == self.symbol)
            .map(|s| {
                let start = (s.start_line as usize).saturating_sub(1).min(lines.len());
                let end = (s.end_line as usize).clamp(start, lines.len());
                lines[start..end].join("\n")
            })
            .collect();
        let found = (!bodies.is_empty()).then(|| bodies.join("\n"));
        self.texts.insert(blob, found.clone());
        Ok(found)
    }
}

impl Workspace {
    /// Commits that changed `symbol` in the file `path` (newest first, following renames);
    /// `None` when no stored version of the file defines it.
    pub fn touches_symbol(
        &self,
        path: &str,
        symbol: &str,
        query: &CommitQuery,
    ) -> Result<Option<Vec<CommitHit>>> {
        let path = path.trim_start_matches("./").trim_end_matches('/');
        let roots: HashMap<String, String> = self
            .store()
            .repos()?
            .into_iter()
            .map(|r| (r.name, r.root))
            .collect();
        let file_commits = self.store().touches(
            path,
            &CommitQuery {
                limit: MAX_EXAMINED,
                ..query.clone()
            },
        )?;
        if file_commits.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let mut reader = SymbolReader {
            symbol,
            repos: HashMap::new(),
            texts: HashMap::new(),
        };
        let mut names: Vec<String> = vec![path.to_string()];
        let mut found = Vec::new();
        let mut seen_symbol = false;
        let mut likely: Option<String> = None;
        for hit in file_commits {
            let Some(root) = roots.get(&hit.repo) else {
                continue;
            };
            let mut records = self
                .store()
                .commits_by_prefix(&hit.sha, std::slice::from_ref(&hit.repo))?;
            let Some((_, record)) = records.pop() else {
                continue;
            };
            let Some(file) = record.files.iter().find(|f| names.contains(&f.path)) else {
                continue;
            };
            // A merge's diff against its first parent repeats the merged branch's commits,
            // which are listed themselves (as `git log` shows merges without their diff).
            if record.parents.len() > 1 {
                continue;
            }
            let old_path = file.old_path.clone().unwrap_or_else(|| file.path.clone());
            if !names.contains(&old_path) {
                names.push(old_path.clone());
            }
            let after = match file.status.as_str() {
                "deleted" => None,
                _ => reader.text(&hit.repo, root, &record.sha, &file.path, likely.as_deref())?,
            };
            let before = match (file.status.as_str(), record.parents.first()) {
                ("added", _) | (_, None) => None,
                (_, Some(parent)) => {
                    reader.text(&hit.repo, root, parent, &old_path, after.as_deref())?
                }
            };
            likely = before.clone();
            seen_symbol |= after.is_some() || before.is_some();
            if after != before {
                found.push(hit);
                if found.len() >= query.limit.max(1) {
                    break;
                }
            }
        }
        Ok(seen_symbol.then_some(found))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_a_path_from_its_symbol() {
        assert_eq!(
            split_symbol_path("src/auth.py::Session.login"),
            Some(("src/auth.py", "Session.login".to_string()))
        );
        assert_eq!(
            split_symbol_path("src/lib.rs::Store::open"),
            Some(("src/lib.rs", "Store.open".to_string()))
        );
        assert_eq!(split_symbol_path("src/lib.rs"), None);
        assert_eq!(split_symbol_path("::x"), None);
    }
}
