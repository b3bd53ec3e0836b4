//! What the query names, resolved against the index: the files its stack frames, paths, links
//! and module paths point at, and the files that define the names it uses. The weighing of
//! that evidence is quarry-rank's (`files.rs`); this module only looks things up.
//!
//! Paths in issues are rarely repo-relative: a frame says
//! `/usr/lib/python3/dist-packages/astropy/io/ascii/core.py`, the index has
//! `astropy/io/ascii/core.py`. So a path is matched by its longest suffix (at a `/` boundary)
//! that some indexed path ends with; a suffix that fits more than `MAX_PATH_MATCHES` files
//! (`__init__.py`, `utils.py`) names none of them.

use anyhow::Result;
use quarry_core::{tokens, Store};
use quarry_rank::plan::QueryPlan;
use quarry_rank::{FileRankConfig, Mention};
use std::collections::HashMap;

/// A path or suffix matching more files than this names none of them.
const MAX_PATH_MATCHES: usize = 3;
/// Names looked up in the symbol table per query (an issue's code can use hundreds).
const MAX_NAMES: usize = 80;

pub(crate) type FileKey = (String, String);

/// Mentions per file.
pub(crate) type Mentions = HashMap<FileKey, Vec<Mention>>;

/// Resolves a path as written (absolute, relative to some other root, or a bare file name) to
/// indexed files: the longest suffix that matches at most `MAX_PATH_MATCHES` files. A path of
/// several components must keep at least two (`core.py` alone is too common to trust when the
/// writer gave a folder); a bare file name is taken as it is.
pub(crate) fn resolve_path(
    store: &dyn Store,
    written: &str,
    repos: &[String],
) -> Result<Vec<FileKey>> {
    let parts: Vec<&str> = written
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "~")
        .collect();
    let Some(last) = parts.last() else {
        return Ok(Vec::new());
    };
    let same_name = store.files_by_stem(&[tokens::file_stem_key(last)], repos, 10_000)?;
    let min_kept = if parts.len() >= 2 { 2 } else { 1 };
    for start in 0..=parts.len().saturating_sub(min_kept) {
        let suffix = parts[start..].join("/");
        let found: Vec<FileKey> = same_name
            .iter()
            .filter(|(_, p)| *p == suffix || p.ends_with(&format!("/{suffix}")))
            .cloned()
            .collect();
        if !found.is_empty() {
            return Ok(if found.len() <= MAX_PATH_MATCHES {
                found
            } else {
                Vec::new()
            });
        }
    }
    Ok(Vec::new())
}

/// Resolves a module path fragment (`astropy/io/fits/fitsrec`) to the file it names: the file
/// whose path without its extension ends with it, or the package's index file
/// (`__init__.py`, `index.js`, `mod.rs`) in a folder that does.
fn resolve_module(store: &dyn Store, fragment: &str, repos: &[String]) -> Result<Vec<FileKey>> {
    let Some(last) = fragment.rsplit('/').next() else {
        return Ok(Vec::new());
    };
    let keys = [
        tokens::name_key(last),
        "init".to_string(),
        "index".to_string(),
        "mod".to_string(),
    ];
    let at_boundary = |s: &str| s == fragment || s.ends_with(&format!("/{fragment}"));
    let mut out: Vec<FileKey> = store
        .files_by_stem(&keys, repos, 10_000)?
        .into_iter()
        .filter(|(_, path)| {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            let stem = name.split_once('.').map_or(name, |(s, _)| s);
            let own = if dir.is_empty() {
                stem.to_string()
            } else {
                format!("{dir}/{stem}")
            };
            at_boundary(&own) || (matches!(stem, "__init__" | "index" | "mod") && at_boundary(dir))
        })
        .collect();
    out.dedup();
    Ok(if out.len() <= MAX_PATH_MATCHES {
        out
    } else {
        Vec::new()
    })
}

fn add(mentions: &mut Mentions, files: Vec<FileKey>, mention: Mention) {
    for key in files {
        let list = mentions.entry(key).or_default();
        if !list.contains(&mention) {
            list.push(mention.clone());
        }
    }
}

/// The last segment of a dotted or `::` name.
fn bare(name: &str) -> &str {
    name.rsplit(['.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(name)
}

/// Looks up everything the plan names.
pub(crate) fn gather(
    store: &dyn Store,
    plan: &QueryPlan,
    repos: &[String],
    cfg: &FileRankConfig,
) -> Result<Mentions> {
    let mut mentions = Mentions::new();
    let mut names: Vec<(String, bool)> = plan
        .identifiers
        .iter()
        .map(|i| (i.clone(), false))
        .collect();

    if let Some(issue) = &plan.issue {
        // Frames: the innermost one that lands in the repo is where the failure surfaced.
        let mut resolved: Vec<(Vec<FileKey>, Option<u32>)> = Vec::new();
        for frame in &issue.frames {
            let files = resolve_path(store, &frame.path, repos)?;
            if !files.is_empty() {
                if let Some(f) = &frame.function {
                    names.push((f.clone(), false));
                }
                resolved.push((files, frame.line));
            }
        }
        let last = resolved.len().saturating_sub(1);
        for (i, (files, line)) in resolved.into_iter().enumerate() {
            add(
                &mut mentions,
                files,
                Mention::Frame {
                    innermost: i == last,
                    line,
                },
            );
        }
        for module in &issue.modules {
            let files = resolve_module(store, module, repos)?;
            add(&mut mentions, files, Mention::Module);
        }
        for name in &issue.code_names {
            names.push((name.clone(), true));
        }
    }
    for hint in &plan.file_hints {
        let files = resolve_path(store, hint, repos)?;
        add(&mut mentions, files, Mention::Path);
    }

    // Definitions: each distinct bare name once; a name the text uses outranks the same name
    // seen only in code.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut lookups: Vec<(String, String, bool)> = Vec::new();
    for (name, code_only) in names {
        let b = bare(&name).to_string();
        if b.chars().count() < 3
            || !b
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            continue;
        }
        match seen.get(&b) {
            Some(&i) => lookups[i].2 &= code_only,
            None => {
                seen.insert(b.clone(), lookups.len());
                lookups.push((name, b, code_only));
            }
        }
    }
    let lookups: Vec<(String, String, bool)> = lookups.into_iter().take(MAX_NAMES).collect();
    // Names the text uses that resolve to few definitions: where the call graph starts.
    let mut graph_names: Vec<(String, Vec<quarry_core::SymbolRef>)> = Vec::new();

    // Files named after a name the query uses (`refine` → refine.py, `SkyCoordinate` →
    // sky_coordinate.py): one index probe for all names.
    let keys: Vec<String> = lookups
        .iter()
        .map(|(_, b, _)| tokens::name_key(b))
        .collect();
    let mut by_key: HashMap<String, Vec<FileKey>> = HashMap::new();
    for (repo, path) in store.files_by_stem(&keys, repos, 10_000)? {
        by_key
            .entry(tokens::file_stem_key(&path))
            .or_default()
            .push((repo, path));
    }
    for ((_, b, code_only), key) in lookups.iter().zip(&keys) {
        if let Some(files) = by_key.get(key).filter(|f| f.len() <= MAX_PATH_MATCHES) {
            let n = files.len();
            add(
                &mut mentions,
                files.clone(),
                Mention::NamedFile {
                    name: b.clone(),
                    files: n,
                    code_only: *code_only,
                },
            );
        }
    }

    let limit = cfg.max_definitions.max(1) * 4 + 1;
    let names: Vec<String> = lookups.iter().map(|(_, b, _)| b.clone()).collect();
    let found = store.definitions_of_each(&names, repos, limit)?;
    for ((name, b, code_only), defs) in lookups.into_iter().zip(found) {
        if defs.is_empty() || defs.len() >= limit {
            continue; // unknown, or defined all over the repo
        }
        // `Session.request` names one definition; if some definition's qualified name ends
        // with it, only those count.
        let qualified: Vec<_> = if name.contains(['.', ':']) {
            let dotted = name.replace("::", ".");
            defs.iter()
                .filter(|d| {
                    d.qualified_name == dotted || d.qualified_name.ends_with(&format!(".{dotted}"))
                })
                .collect()
        } else {
            Vec::new()
        };
        let chosen: Vec<_> = if qualified.is_empty() {
            defs.iter().collect()
        } else {
            qualified
        };
        let mut files: Vec<FileKey> = chosen
            .iter()
            .map(|d| (d.repo.clone(), d.path.clone()))
            .collect();
        files.sort();
        files.dedup();
        let n = files.len();
        if n > cfg.max_definitions {
            continue;
        }
        if !code_only && n <= MAX_PATH_MATCHES {
            graph_names.push((b.clone(), chosen.iter().map(|d| (*d).clone()).collect()));
        }
        add(
            &mut mentions,
            files,
            Mention::Defines {
                name: b,
                files: n,
                code_only,
            },
        );
    }
    if cfg.callee_weight > 0.0 || cfg.caller_weight > 0.0 {
        call_graph(store, &graph_names, repos, cfg, &mut mentions)?;
    }
    Ok(mentions)
}

/// Calls within this many files are evidence; a name called (or defined) all over is none.
const MAX_GRAPH_FILES: usize = 5;
/// Calls read per definition.
const MAX_CALLS: usize = 200;

/// The call graph one step around the definitions the query names specifically (in at most
/// `MAX_PATH_MATCHES` files): the files defining what they call, and the files calling them.
/// Fixes often land one call away from the API an issue names.
fn call_graph(
    store: &dyn Store,
    named: &[(String, Vec<quarry_core::SymbolRef>)],
    repos: &[String],
    cfg: &FileRankConfig,
    mentions: &mut Mentions,
) -> Result<()> {
    let mut callee_defs: HashMap<String, Vec<FileKey>> = HashMap::new();
    for (name, defs) in named.iter().take(MAX_NAMES / 4) {
        if cfg.callee_weight > 0.0 {
            let mut callees: Vec<String> = Vec::new();
            for d in defs {
                for call in store.calls_from(&d.repo, &d.path, &d.qualified_name, MAX_CALLS)? {
                    let callee = bare(&call.callee).to_string();
                    if callee != *name && callee.chars().count() >= 3 && !callees.contains(&callee)
                    {
                        callees.push(callee);
                    }
                }
            }
            for callee in callees {
                if !callee_defs.contains_key(&callee) {
                    let mut files: Vec<FileKey> = store
                        .definitions(&callee, repos, MAX_GRAPH_FILES * 4 + 1)?
                        .into_iter()
                        .map(|d| (d.repo, d.path))
                        .collect();
                    files.sort();
                    files.dedup();
                    callee_defs.insert(callee.clone(), files);
                }
                let files = &callee_defs[&callee];
                if !files.is_empty() && files.len() <= MAX_GRAPH_FILES {
                    let n = files.len();
                    add(
                        mentions,
                        files.clone(),
                        Mention::Callee {
                            name: callee,
                            via: name.clone(),
                            files: n,
                        },
                    );
                }
            }
        }
        if cfg.caller_weight > 0.0 {
            let mut files: Vec<FileKey> = store
                .callers(name, repos, MAX_CALLS)?
                .into_iter()
                .map(|c| (c.repo, c.path))
                .collect();
            files.sort();
            files.dedup();
            let n = files.len();
            if n > 0 && n <= MAX_GRAPH_FILES {
                add(
                    mentions,
                    files,
                    Mention::Caller {
                        name: name.clone(),
                        files: n,
                    },
                );
            }
        }
    }
    Ok(())
}
