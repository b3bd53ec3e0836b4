//! The symbol route's answer: every definition of the name the query gives, under the
//! request's filters, ordered by what the code says about each (quarry-rank's names.rs), one
//! result per definition (the chunk holding its first line). The store gives the definitions;
//! this module gathers the one fact the symbols table does not hold: which package entry
//! files (`__init__.py`, `lib.rs`/`mod.rs`, `index.ts`) re-export each of them.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use quarry_core::{
    tokens, ChunkHit, ContentType, DefinitionQuery, Language, LexicalQuery, SymbolRef,
};
use quarry_rank::names::{self, DefinitionFacts, NameQuery};

use crate::search::{SearchRequest, SearchResult};
use crate::Workspace;

/// Definitions of one name read per lookup (sympy has ~60 `solve`s; `__init__` has thousands,
/// none of which a name lookup is after).
const MAX_DEFINITIONS: usize = 500;
/// Entry files read per lookup, nearest packages first.
const MAX_ENTRY_FILES: usize = 64;
/// `__init__.py` files that mention the name, read to find names bound by an assignment.
const MAX_ASSIGNMENT_ENTRIES: usize = 32;

impl Workspace {
    /// The definitions of the name `request.query` gives, best first, each as the chunk that
    /// holds its first line; `None` when the query is not a name.
    pub(crate) fn definition_results(
        &self,
        request: &SearchRequest,
    ) -> Result<Option<Vec<SearchResult>>> {
        let Some(query) = NameQuery::parse(&request.query) else {
            return Ok(None);
        };
        let defs = self.store().find_definitions(&DefinitionQuery {
            name: query.name.clone(),
            repos: request.repos.clone(),
            language: request.language,
            content: request.content,
            path_glob: request.path.clone(),
            limit: MAX_DEFINITIONS,
        })?;
        let mut defs = defs;
        let mentioning = self.python_entries_mentioning(&query.name, request)?;
        let mut exporters = self.exporters(&defs, &query.name, &mentioning)?;
        for (def, entry) in self.python_assigned(&query.name, request, &defs, &mentioning)? {
            defs.push(def);
            exporters.push(Some(entry));
        }
        let facts: Vec<DefinitionFacts> = defs
            .iter()
            .zip(&exporters)
            .map(|(d, exported_by)| DefinitionFacts {
                path: &d.path,
                kind: &d.kind,
                qualified_name: &d.qualified_name,
                signature: d.signature.as_deref(),
                language: d.language,
                start_line: d.start_line,
                exported_by: exported_by.as_deref(),
            })
            .collect();
        let ranked = names::rank_definitions(
            &query,
            &facts,
            &request.fusion.files.names,
            request.content == ContentType::Docs,
        );
        let mut chunks: HashMap<(&str, &str), Vec<ChunkHit>> = HashMap::new();
        let mut seen = HashSet::new();
        let mut results = Vec::new();
        for r in ranked {
            if results.len() >= request.limit {
                break;
            }
            let d = &defs[r.index];
            let file = match chunks.entry((d.repo.as_str(), d.path.as_str())) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(self.store().file_chunks(&d.repo, &d.path)?)
                }
            };
            // The innermost chunk holding the definition's first line: a method split out of
            // its class is its own chunk; overlapping pieces of one definition are one result.
            let Some(chunk) = file
                .iter()
                .filter(|c| {
                    c.page.is_none() && c.start_line <= d.start_line && d.start_line <= c.end_line
                })
                .max_by_key(|c| (c.start_line, std::cmp::Reverse(c.end_line)))
            else {
                continue;
            };
            if !seen.insert(chunk.id) {
                continue;
            }
            let mut result = SearchResult::from(chunk.clone());
            result.score = r.score;
            result.symbol = Some(d.qualified_name.clone());
            result.reason = Some(format!("definition: {}", r.reason));
            results.push(result);
        }
        Ok(Some(results))
    }

    /// For each definition, the entry file above it that re-exports it, if any. A top-level
    /// definition in an entry file itself is the package's own.
    fn exporters(
        &self,
        defs: &[SymbolRef],
        name: &str,
        mentioning: &[(String, String)],
    ) -> Result<Vec<Option<String>>> {
        let mut read: HashMap<(String, String), Option<names::EntryFile>> = HashMap::new();
        let mut out = Vec::with_capacity(defs.len());
        for d in defs {
            let file = d.path.rsplit('/').next().unwrap_or(&d.path);
            let mut entries = names::entry_files(&d.path, d.language);
            if d.language == Language::Python {
                let elsewhere = mentioning.iter().filter(|(repo, _)| repo == &d.repo);
                entries.extend(elsewhere.map(|(_, path)| path.clone()));
            }
            let own_entry = d.qualified_name == d.name
                && ["__init__.py", "lib.rs", "mod.rs", "index.ts", "index.js"].contains(&file);
            if own_entry {
                out.push(Some(d.path.clone()));
                continue;
            }
            let mut found = None;
            for entry in entries {
                let key = (d.repo.clone(), entry);
                if !read.contains_key(&key) {
                    if read.len() >= MAX_ENTRY_FILES {
                        break;
                    }
                    let text = self.file_text(&key.0, &key.1)?;
                    let entry = (!text.is_empty())
                        .then(|| names::EntryFile::parse(&key.1, &text, d.language));
                    read.insert(key.clone(), entry);
                }
                if let Some(Some(entry)) = read.get(&key) {
                    if entry.reexports(name, &d.path) {
                        found = Some(key.1);
                        break;
                    }
                }
            }
            out.push(found);
        }
        Ok(out)
    }

    /// Python names a package exports that are bound by a module-level assignment, not a
    /// `def` or `class` (flask's `session = LocalProxy(…)`, sympy's `Eq = Equality`): found
    /// through the `__init__.py` files that import the name, in the module they import it
    /// from, each with the entry file that exports it.
    fn python_assigned(
        &self,
        name: &str,
        request: &SearchRequest,
        known: &[SymbolRef],
        entries: &[(String, String)],
    ) -> Result<Vec<(SymbolRef, String)>> {
        if request.language.is_some_and(|l| l != Language::Python)
            || request.content == ContentType::Docs
        {
            return Ok(Vec::new());
        }
        let path_filter = match &request.path {
            Some(p) => Some(globset::Glob::new(p)?.compile_matcher()),
            None => None,
        };
        let mut found: Vec<(SymbolRef, String)> = Vec::new();
        for (repo, entry) in entries.iter().take(MAX_ASSIGNMENT_ENTRIES) {
            let text = self.file_text(repo, entry)?;
            // The entry file itself (`Matrix = MutableDenseMatrix` in an `__init__.py`), then
            // the modules it imports the name from.
            let mut paths = vec![entry.clone()];
            for module in names::python_import_sources(&text, name) {
                for base in names::python_module_paths(entry, &module) {
                    paths.push(format!("{base}.py"));
                    paths.push(format!("{base}/__init__.py"));
                }
            }
            for path in paths {
                let defined = known
                    .iter()
                    .chain(found.iter().map(|(d, _)| d))
                    .any(|d| &d.repo == repo && d.path == path);
                if defined || path_filter.as_ref().is_some_and(|m| !m.is_match(&path)) {
                    continue;
                }
                let chunks = self.store().file_chunks(repo, &path)?;
                let line = chunks.iter().find_map(|c| {
                    names::python_assignment_line(&c.text, name).map(|l| c.start_line + l - 1)
                });
                if let Some(line) = line {
                    let text = chunks
                        .iter()
                        .find(|c| c.start_line <= line && line <= c.end_line)
                        .and_then(|c| c.text.lines().nth((line - c.start_line) as usize))
                        .map(|l| l.trim().to_string());
                    found.push((
                        SymbolRef {
                            repo: repo.clone(),
                            path,
                            name: name.to_string(),
                            qualified_name: name.to_string(),
                            kind: "variable".into(),
                            start_line: line,
                            end_line: line,
                            signature: text,
                            language: Language::Python,
                        },
                        entry.clone(),
                    ));
                    break;
                }
            }
        }
        Ok(found)
    }

    /// The `__init__.py` files whose words include `name` (a package that may export it from
    /// anywhere in the repo: pytest's `pytest/__init__.py` exports `_pytest`'s names).
    fn python_entries_mentioning(
        &self,
        name: &str,
        request: &SearchRequest,
    ) -> Result<Vec<(String, String)>> {
        if request.language.is_some_and(|l| l != Language::Python) {
            return Ok(Vec::new());
        }
        let hits = self.store().search_lexical(&LexicalQuery {
            terms: tokens::query_terms(name),
            repos: request.repos.clone(),
            language: Some(Language::Python),
            path_glob: Some("__init__.py".into()),
            limit: MAX_ENTRY_FILES,
            ..Default::default()
        })?;
        let mut entries: Vec<(String, String)> = Vec::new();
        for hit in hits {
            let key = (hit.repo, hit.path);
            if !entries.contains(&key) {
                entries.push(key);
            }
        }
        Ok(entries)
    }

    /// A file's text as its chunks hold it.
    fn file_text(&self, repo: &str, path: &str) -> Result<String> {
        Ok(self
            .store()
            .file_chunks(repo, path)?
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"))
    }
}
