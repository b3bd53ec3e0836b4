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
use quarry_rank::exports::{self, EntryFile};
use quarry_rank::names::{self, DefinitionFacts, NameQuery};

use crate::answer::SearchResult;
use crate::filter::PathFilter;
use crate::request::SearchRequest;
use crate::workspace::Workspace;

/// Definitions of one name read per lookup (sympy has ~60 `solve`s; `__init__` has thousands,
/// none of which a name lookup is after).
const MAX_DEFINITIONS: usize = 500;
/// Entry files read per lookup.
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
        let mut defs = self.store().find_definitions(&DefinitionQuery {
            name: query.name.clone(),
            repos: request.repos.clone(),
            language: request.language,
            content: request.content,
            path_glob: request.path.clone(),
            limit: MAX_DEFINITIONS,
        })?;
        let mentioning = self.python_entries_mentioning(&query.name, request)?;
        let mut entries = EntryFiles {
            ws: self,
            read: HashMap::new(),
        };
        // Assigned names first: their entry files are the ones the export check asks again.
        let assigned = python_assigned(&mut entries, &query.name, request, &defs, &mentioning)?;
        let mut exporters = exporters(&mut entries, &defs, &query.name, &mentioning)?;
        for (def, entry) in assigned {
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
            // A method split out of its class is its own chunk; overlapping pieces of one
            // definition are one result.
            let Some(chunk) = innermost_chunk(file, d.start_line) else {
                continue;
            };
            let chunk = own_lines(chunk, d);
            if !seen.insert((chunk.id, chunk.start_line)) {
                continue;
            }
            let mut result = SearchResult::from(chunk);
            result.score = r.score;
            result.symbol = Some(d.qualified_name.clone());
            result.reason = Some(format!("definition: {}", r.reason));
            results.push(result);
        }
        Ok(Some(results))
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
        // A repo without an `__init__.py` (most that are not Python) asks no search: the
        // paths are one scan of the files table, the search a ranked read of every chunk
        // naming the word (on tokio a seventh of a definition lookup).
        let mut any_entry = false;
        for repo in self.searched_repos(request)? {
            if !self
                .store()
                .file_paths_containing(repo.id, "__init__.py")?
                .is_empty()
            {
                any_entry = true;
                break;
            }
        }
        if !any_entry {
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

/// The chunk as the definition's own result: the chunk itself when it holds only the
/// definition (and the comments and attributes right above it), else the definition's lines cut
/// out of it with those comments — a method inside an `impl` or class chunk too small to split
/// answers with the method's lines, not the whole block's, and two same-named definitions in
/// one chunk (Ruby's `def self.settings` and `def settings`) each with its own.
fn own_lines(chunk: &ChunkHit, d: &SymbolRef) -> ChunkHit {
    let lines: Vec<&str> = chunk.text.split('\n').collect();
    let line = |n: u32| lines.get((n - chunk.start_line) as usize).copied();
    let end = d.end_line.min(chunk.end_line);
    let mut start = d.start_line.max(chunk.start_line);
    while start > chunk.start_line && line(start - 1).is_some_and(is_comment_or_attribute) {
        start -= 1;
    }
    let whole = start == chunk.start_line && end == chunk.end_line;
    if whole || chunk.page.is_some() || chunk.cell.is_some() || start > end {
        return chunk.clone();
    }
    let text: Vec<&str> = lines
        .iter()
        .skip((start - chunk.start_line) as usize)
        .take((end - start + 1) as usize)
        .copied()
        .collect();
    ChunkHit {
        start_line: start,
        end_line: end,
        text: text.join("\n"),
        symbol: Some(d.qualified_name.clone()),
        kind: d.kind.clone(),
        ..chunk.clone()
    }
}

/// A line that belongs to the definition below it: a comment, an attribute or decorator.
fn is_comment_or_attribute(line: &str) -> bool {
    let t = line.trim_start();
    ["//", "#", "/*", "*", "--", "@", "\"\"\"", "'''"]
        .iter()
        .any(|mark| t.starts_with(mark))
}

/// The innermost chunk holding `line` (not a PDF page's: its lines are the page's).
pub(crate) fn innermost_chunk(chunks: &[ChunkHit], line: u32) -> Option<&ChunkHit> {
    chunks
        .iter()
        .filter(|c| c.page.is_none() && c.start_line <= line && line <= c.end_line)
        .max_by_key(|c| (c.start_line, std::cmp::Reverse(c.end_line)))
}

/// Entry files read for one lookup, each at most once (the export check and the search for
/// assigned names ask the same files), at most `MAX_ENTRY_FILES` of them.
struct EntryFiles<'w> {
    ws: &'w Workspace,
    read: HashMap<(String, String), Option<EntryFile>>,
}

impl EntryFiles<'_> {
    /// The entry file, parsed; `None` when it is not indexed or the budget is spent.
    fn get(&mut self, repo: &str, path: &str, language: Language) -> Result<Option<&EntryFile>> {
        let key = (repo.to_string(), path.to_string());
        if !self.read.contains_key(&key) {
            if self.read.len() >= MAX_ENTRY_FILES {
                return Ok(None);
            }
            let text = self.ws.file_text(repo, path)?;
            let parsed = (!text.is_empty()).then(|| EntryFile::parse(path, &text, language));
            self.read.insert(key.clone(), parsed);
        }
        Ok(self.read[&key].as_ref())
    }
}

/// For each definition, the entry file that re-exports it, if any: the packages above it, and
/// for Python every `__init__.py` that names it. A top-level definition in an entry file
/// itself is the package's own.
fn exporters(
    entries: &mut EntryFiles,
    defs: &[SymbolRef],
    name: &str,
    mentioning: &[(String, String)],
) -> Result<Vec<Option<String>>> {
    let mut out = Vec::with_capacity(defs.len());
    for d in defs {
        if d.qualified_name == d.name && exports::is_entry_file(&d.path, d.language) {
            out.push(Some(d.path.clone()));
            continue;
        }
        let mut candidates = exports::entry_files(&d.path, d.language);
        if d.language == Language::Python {
            let elsewhere = mentioning.iter().filter(|(repo, _)| repo == &d.repo);
            candidates.extend(elsewhere.map(|(_, path)| path.clone()));
        }
        let mut found = None;
        for entry in candidates {
            if let Some(file) = entries.get(&d.repo, &entry, d.language)? {
                if file.reexports(name, &d.path) {
                    found = Some(entry);
                    break;
                }
            }
        }
        out.push(found);
    }
    Ok(out)
}

/// Python names a package exports that are bound by a module-level assignment, not a `def` or
/// `class` (flask's `session = LocalProxy(…)`, sympy's `Eq = Equality`): found through the
/// `__init__.py` files that name it, in the entry file itself or the module it imports the
/// name from, each with the entry file that exports it.
fn python_assigned(
    entries: &mut EntryFiles,
    name: &str,
    request: &SearchRequest,
    known: &[SymbolRef],
    mentioning: &[(String, String)],
) -> Result<Vec<(SymbolRef, String)>> {
    if request.language.is_some_and(|l| l != Language::Python)
        || request.content == ContentType::Docs
    {
        return Ok(Vec::new());
    }
    let filter = PathFilter::new(request)?;
    let mut found: Vec<(SymbolRef, String)> = Vec::new();
    for (repo, entry) in mentioning.iter().take(MAX_ASSIGNMENT_ENTRIES) {
        let Some(file) = entries.get(repo, entry, Language::Python)? else {
            continue;
        };
        let mut paths = vec![entry.clone()];
        for base in file.import_sources(name) {
            paths.push(format!("{base}.py"));
            paths.push(format!("{base}/__init__.py"));
        }
        for path in paths {
            let defined = known
                .iter()
                .chain(found.iter().map(|(d, _)| d))
                .any(|d| &d.repo == repo && d.path == path);
            if defined || !filter.admits(&path) {
                continue;
            }
            let chunks = entries.ws.store().file_chunks(repo, &path)?;
            let assignment = chunks.iter().find_map(|c| {
                let at = exports::python_assignment_line(&c.text, name)?;
                let text = c.text.lines().nth(at as usize - 1)?.trim().to_string();
                Some((c.start_line + at - 1, text))
            });
            if let Some((line, text)) = assignment {
                let def = SymbolRef {
                    repo: repo.clone(),
                    path,
                    name: name.to_string(),
                    qualified_name: name.to_string(),
                    kind: "variable".into(),
                    start_line: line,
                    end_line: line,
                    signature: Some(text),
                    language: Language::Python,
                };
                found.push((def, entry.clone()));
                break;
            }
        }
    }
    Ok(found)
}
