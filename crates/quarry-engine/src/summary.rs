//! File summaries for agents (`quarry summary`, the Claude Code hook): the outline of one file
//! read from disk (parser only: no index, no model, milliseconds), one definition's context
//! (its source, what it calls, who calls it, the types it names) and the file's call graph.
//! Context and call graph use the index when there is one to resolve names across the repo.

use crate::answer::{CallGraph, CallerSite, Edge, SliceAnswer, SliceLine, SymbolContext, Target};
use crate::workspace::Workspace;
use anyhow::Result;
use quarry_core::{CallSite, Language, SymbolRef};
use quarry_sources::FileText;
use std::path::Path;

pub use quarry_outline::{render, Outline, OutlineItem};

/// Files larger than this are not summarised (the chunker's own limit for indexing).
pub const MAX_SUMMARY_BYTES: u64 = 4 << 20;

/// Reads `path` and outlines it; `shown_path` is the name the outline carries. A binary,
/// unreadable or oversized file is an error that says so.
pub fn summarize_file(path: &Path, shown_path: &str) -> Result<Outline> {
    summarize_file_in(None, path, shown_path)
}

/// [`summarize_file`], taking a code file's definitions from the index of `ws` when the file
/// is indexed and unchanged since (its size and modification time as indexed): the same
/// outline without the parse, which is most of an outline's time (a 3,000-line Python file:
/// 19 ms a process, 5 ms from the index).
pub fn summarize_file_in(ws: Option<&Workspace>, path: &Path, shown_path: &str) -> Result<Outline> {
    let language = Language::detect(path);
    if language == Language::Pdf {
        return summarize_pdf(path, shown_path);
    }
    let text = read_source(path)?;
    let indexed = ws
        .filter(|_| language.is_code())
        .and_then(|ws| indexed_symbols(ws, path));
    Ok(match indexed {
        Some(symbols) => {
            quarry_outline::outline_from_symbols(shown_path, language, &text, &symbols)
        }
        None => quarry_outline::outline(shown_path, language, &text),
    })
}

/// The index's definitions of `path` when it is indexed and its size and time are those the
/// index took them at.
fn indexed_symbols(ws: &Workspace, path: &Path) -> Option<Vec<quarry_core::Symbol>> {
    let (repo, rel) = indexed_as(ws, path)?;
    ws.symbols_as_indexed(&repo, &rel, path)
}

/// (repo, repo-relative path) of `path` when it lies in one of the workspace's repos.
fn indexed_as(ws: &Workspace, path: &Path) -> Option<(String, String)> {
    let abs = std::fs::canonicalize(path).ok()?;
    ws.store().repos().ok()?.into_iter().find_map(|r| {
        let rel = abs.strip_prefix(&r.root).ok()?;
        Some((r.name, rel.to_string_lossy().replace('\\', "/")))
    })
}

/// A PDF's outline: its headings with their pages, from the same bounded extraction indexing
/// runs.
fn summarize_pdf(path: &Path, shown_path: &str) -> Result<Outline> {
    let limits = quarry_sources::pdf::PdfLimits::default();
    let max = quarry_sources::DiscoverOptions::default().max_document_size;
    let bytes =
        quarry_sources::read_bytes(path, max).map_err(|reason| unreadable(path, reason, max))?;
    let doc = quarry_sources::pdf::extract_bounded(bytes, &limits)
        .map_err(|reason| anyhow::anyhow!("cannot summarise {}: {reason}", path.display()))?;
    Ok(quarry_outline::outline_pdf(shown_path, &doc))
}

/// A file's text for summarising; binary, unreadable, oversized or not regular files (a
/// FIFO would block) are errors.
pub fn read_source(path: &Path) -> Result<String> {
    let language = Language::detect(path);
    // A notebook's size is mostly its outputs: it gets the indexer's document limit.
    let limit = match language {
        Language::Notebook => quarry_sources::DiscoverOptions::default().max_document_size,
        _ => MAX_SUMMARY_BYTES,
    };
    match quarry_sources::read_text_as(path, limit, language) {
        FileText::Text { text, .. } => Ok(text),
        FileText::Skipped(reason) => Err(unreadable(path, reason, limit)),
    }
}

/// Why `path` cannot be summarised, in words: a missing file is not "unreadable", and only a
/// file over the limit hears about the limit.
fn unreadable(path: &Path, reason: &str, limit: u64) -> anyhow::Error {
    use quarry_sources::reason;
    let why = match reason {
        _ if std::fs::symlink_metadata(path).is_err() => {
            "no such file (give a path relative to the current folder, or to an indexed repo's root)".to_string()
        }
        reason::TOO_LARGE => format!("larger than the limit of {} MiB", limit >> 20),
        reason::BINARY => "a binary file".to_string(),
        reason::MINIFIED => "minified or generated text (lines far longer than written by hand)".to_string(),
        reason::NOT_REGULAR => "not a regular file (a folder, FIFO, socket or device)".to_string(),
        other => format!("{other} (check its permissions)"),
    };
    anyhow::anyhow!("cannot summarise {}: {why}", path.display())
}

const TYPE_KINDS: &[&str] = &[
    "class",
    "struct",
    "enum",
    "interface",
    "trait",
    "type",
    "union",
    "record",
];
/// Definitions fetched per name when resolving.
const MAX_CANDIDATES: usize = 8;

/// A file read and parsed once for context and extract, with what the index knows about it.
struct ParsedFile {
    shown: String,
    text: String,
    outline: Outline,
    calls: Vec<CallSite>,
    /// (repo, repo-relative path) when the file is in an indexed repo.
    indexed_as: Option<(String, String)>,
    language: Language,
}

fn parse_file(ws: Option<&Workspace>, path: &Path, shown: &str) -> Result<ParsedFile> {
    let text = read_source(path)?;
    let language = Language::detect(path);
    // One parse: its symbols make the outline, its call sites the edges.
    let chunked = quarry_chunk::chunk_file(language, &text, &quarry_chunk::ChunkOptions::default());
    let outline = quarry_outline::outline_from_symbols(shown, language, &text, &chunked.symbols);
    let calls = chunked.calls;
    let indexed_as = ws.and_then(|ws| indexed_as(ws, path));
    Ok(ParsedFile {
        shown: shown.to_string(),
        text,
        outline,
        calls,
        indexed_as,
        language,
    })
}

/// A repo path as module segments: `src/app/store.py` → `[src, app, store]`, with
/// `mod.rs`, `__init__.py` and `index.ts` standing for their folder.
fn module_segments(path: &str) -> Vec<&str> {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let mut parts: Vec<&str> = stem.split('/').filter(|p| !p.is_empty()).collect();
    if matches!(parts.last(), Some(&("mod" | "__init__" | "index" | "lib"))) {
        parts.pop();
    }
    parts
}

impl ParsedFile {
    /// Whether one of this file's imports names the module at `path` (by its trailing
    /// segments: `from app.store import X`, `use crate::store::X`, `import "./store"`).
    fn imports_path(&self, path: &str) -> bool {
        let module = module_segments(path);
        self.outline
            .imports
            .iter()
            .flat_map(|b| &b.names)
            .any(|name| {
                let segments: Vec<&str> = name
                    .split(['.', ':', '/', '\\'])
                    .filter(|s| !s.is_empty() && !matches!(*s, "crate" | "self" | "super"))
                    .collect();
                // The import may end with the item itself (`app.store.Store`): try both.
                [segments.len(), segments.len().saturating_sub(1)]
                    .iter()
                    .any(|&n| {
                        n > 0 && module.len() >= n && module[module.len() - n..] == segments[..n]
                    })
            })
    }

    /// The file's repo, as a filter (empty, meaning every repo, when it is in none).
    fn own_repo(&self) -> &[String] {
        match &self.indexed_as {
            Some((repo, _)) => std::slice::from_ref(repo),
            None => &[],
        }
    }

    fn resolve(&self, ws: Option<&Workspace>, name: &str) -> Target {
        if let Some(item) = self.outline.items.iter().find(|i| i.name == name) {
            return Target::File {
                qualified_name: item.qualified_name.clone(),
                start_line: item.start_line,
                end_line: item.end_line,
                signature: item.signature.clone(),
            };
        }
        let Some(ws) = ws else {
            return Target::Unknown;
        };
        // Within the file's own repo and language family: a Rust `clone` is not a Java one.
        let mut found: Vec<SymbolRef> = ws
            .store()
            .definitions(name, self.own_repo(), MAX_CANDIDATES)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| d.language.calls_into(self.language))
            .collect();
        if found.len() > 1 {
            // Import awareness: of several same-named definitions, keep those in modules this
            // file imports (when that leaves any).
            let imported: Vec<&SymbolRef> = found
                .iter()
                .filter(|d| self.imports_path(&d.path))
                .collect();
            if imported.len() == 1 {
                return Target::Index(imported[0].clone());
            }
        }
        match found.len() {
            0 => Target::Unknown,
            1 => Target::Index(found.remove(0)),
            _ => Target::Ambiguous { candidates: found },
        }
    }
}

/// The context of one definition of `path` (`symbol`: qualified or bare name).
pub fn symbol_context(
    ws: Option<&Workspace>,
    path: &Path,
    shown: &str,
    symbol: &str,
) -> Result<SymbolContext> {
    let file = parse_file(ws, path, shown)?;
    let item = file
        .outline
        .items
        .iter()
        .find(|i| i.qualified_name == symbol)
        .or_else(|| {
            file.outline
                .items
                .iter()
                .find(|i| i.name == crate::graph::bare_name(symbol))
        })
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = file
                .outline
                .items
                .iter()
                .map(|i| i.qualified_name.as_str())
                .take(30)
                .collect();
            // The caller named it: their error (HTTP 400), not the index's.
            crate::error::bad(format!(
                "{shown} defines no `{symbol}` (it defines: {})",
                names.join(", ")
            ))
        })?;
    let source: Vec<&str> = file
        .text
        .lines()
        .skip(item.start_line as usize - 1)
        .take((item.end_line - item.start_line + 1) as usize)
        .collect();
    let source = source.join("\n");

    let mut seen = std::collections::HashSet::new();
    let calls: Vec<Edge> = file
        .calls
        .iter()
        .filter(|c| item.start_line <= c.line && c.line <= item.end_line)
        .filter(|c| seen.insert(c.callee.clone()))
        .map(|c| Edge {
            caller: c.caller.clone(),
            callee: c.callee.clone(),
            line: c.line,
            target: file.resolve(ws, &c.callee),
        })
        .collect();

    let mut callers: Vec<CallerSite> = file
        .calls
        .iter()
        .filter(|c| {
            c.callee == item.name && !(item.start_line <= c.line && c.line <= item.end_line)
        })
        .map(|c| CallerSite {
            repo: file.indexed_as.as_ref().map(|(r, _)| r.clone()),
            path: file.shown.clone(),
            caller: c.caller.clone(),
            line: c.line,
            signature: c.caller.as_deref().and_then(|q| {
                file.outline
                    .items
                    .iter()
                    .find(|i| i.qualified_name == q)
                    .and_then(|i| i.signature.clone())
            }),
        })
        .collect();
    if let Some(ws) = ws {
        for call in ws.store().callers(&item.name, file.own_repo(), 200)? {
            if !Language::detect(Path::new(&call.path)).calls_into(file.language) {
                continue;
            }
            let same_file = file
                .indexed_as
                .as_ref()
                .is_some_and(|(r, p)| *r == call.repo && *p == call.path);
            if same_file {
                continue;
            }
            let signature = call.caller.as_deref().and_then(|q| {
                ws.store()
                    .definitions(
                        crate::graph::bare_name(q),
                        std::slice::from_ref(&call.repo),
                        MAX_CANDIDATES,
                    )
                    .ok()?
                    .into_iter()
                    .find(|d| d.path == call.path && d.qualified_name == q)
                    .and_then(|d| d.signature)
            });
            callers.push(CallerSite {
                repo: Some(call.repo),
                path: call.path,
                caller: call.caller,
                line: call.line,
                signature,
            });
        }
    }

    let mut type_names: Vec<String> = Vec::new();
    for word in source.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let camel = word.starts_with(|c: char| c.is_ascii_uppercase())
            && word.chars().any(|c| c.is_ascii_lowercase())
            && word != item.name;
        if camel && !type_names.iter().any(|t| t == word) && type_names.len() < 24 {
            type_names.push(word.to_string());
        }
    }
    let types = type_names
        .iter()
        .map(|name| file.resolve(ws, name))
        .filter(|t| match t {
            Target::File { qualified_name, .. } => file.outline.items.iter().any(|i| {
                &i.qualified_name == qualified_name && TYPE_KINDS.contains(&i.kind.as_str())
            }),
            Target::Index(s) => TYPE_KINDS.contains(&s.kind.as_str()),
            Target::Ambiguous { candidates } => candidates
                .iter()
                .any(|s| TYPE_KINDS.contains(&s.kind.as_str())),
            Target::Unknown => false,
        })
        .collect();

    Ok(SymbolContext {
        path: file.shown.clone(),
        symbol: item,
        source,
        calls,
        callers,
        types,
        by_name: true,
    })
}

/// The call graph of `path`: every call site, resolved to this file, the index, or unknown;
/// and each function's control and data flow. `symbol` keeps one function's (and the calls
/// it makes).
pub fn call_graph(
    ws: Option<&Workspace>,
    path: &Path,
    shown: &str,
    symbol: Option<&str>,
) -> Result<CallGraph> {
    let file = parse_file(ws, path, shown)?;
    let mut cache: std::collections::HashMap<String, Target> = std::collections::HashMap::new();
    let edges = file
        .calls
        .iter()
        .filter(|c| symbol.is_none() || c.caller.as_deref() == symbol)
        .map(|c| Edge {
            caller: c.caller.clone(),
            callee: c.callee.clone(),
            line: c.line,
            target: cache
                .entry(c.callee.clone())
                .or_insert_with(|| file.resolve(ws, &c.callee))
                .clone(),
        })
        .collect();
    let (mut flow, mut flow_note) = match quarry_flow::functions(file.language, &file.text) {
        Ok(flow) => (flow, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    if let Some(symbol) = symbol {
        flow.retain(|f| f.name == symbol);
        if flow.is_empty() && flow_note.is_none() {
            flow_note = Some(format!(
                "no function named `{symbol}` in {shown}: `quarry summary {shown}` lists its definitions"
            ));
        }
    }
    Ok(CallGraph {
        path: file.shown,
        edges,
        by_name: true,
        flow,
        flow_note,
    })
}

/// The slice a search for `text` points at in `path`: the last line that holds it in the
/// first function that uses it (where its value has flowed furthest), backward — for a name,
/// what can change that name there. `None` when no function of the file holds the text, or
/// the language has no flow table.
pub fn slice_for_search(path: &Path, shown: &str, text: &str) -> Option<SliceAnswer> {
    let source = read_source(path).ok()?;
    let language = flow_language(path, &source);
    let name = text.chars().all(|c| c.is_alphanumeric() || c == '_') && !text.is_empty();
    let holds = |line: &str| -> bool {
        if !name {
            return line.contains(text);
        }
        line.match_indices(text).any(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + text.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    let lines: Vec<u32> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| holds(l))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    let functions = quarry_flow::functions(language, &source).ok()?;
    // The innermost function holding the first use (not only its own first line).
    let inside = |l: u32| {
        functions
            .iter()
            .filter(move |f| f.start_line < l && l <= f.end_line)
            .min_by_key(|f| f.end_line - f.start_line)
    };
    let function = lines.iter().find_map(|&l| inside(l))?;
    let line = lines
        .iter()
        .copied()
        .filter(|&l| inside(l).is_some_and(|f| f.start_line == function.start_line))
        .max()?;
    slice_of(&source, language, shown, line, name.then_some(text), false).ok()
}

/// The language a file's flow is read in: by its name, or a script's by its `#!` line.
fn flow_language(path: &Path, text: &str) -> Language {
    match Language::detect(path) {
        Language::Text => quarry_chunk::script_language(text).unwrap_or(Language::Text),
        language => language,
    }
}

/// The slice of `path` at `line` (quarry-flow): backward, what can change `var` (or what the
/// line reads) there; forward, what the line's definitions reach. Lines with their code.
pub fn slice(
    path: &Path,
    shown: &str,
    line: u32,
    var: Option<&str>,
    forward: bool,
) -> Result<SliceAnswer> {
    let text = read_source(path)?;
    slice_of(&text, flow_language(path, &text), shown, line, var, forward)
}

/// The slice of a file's `text` (in `language`), its lines with their code.
fn slice_of(
    text: &str,
    language: Language,
    shown: &str,
    line: u32,
    var: Option<&str>,
    forward: bool,
) -> Result<SliceAnswer> {
    let slice = quarry_flow::slice(language, text, line, var, forward)
        .map_err(|e| crate::error::bad(format!("{shown}:{line}: {e}")))?;
    let lines: Vec<&str> = text.lines().collect();
    let code = slice
        .lines
        .iter()
        .map(|&l| SliceLine {
            line: l,
            text: lines.get(l as usize - 1).unwrap_or(&"").to_string(),
        })
        .collect();
    Ok(SliceAnswer {
        path: shown.to_string(),
        slice,
        code,
    })
}
