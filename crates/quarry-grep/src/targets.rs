//! What a grep searches: the paths given in their order (standard input for `-`), each
//! folder's files as ripgrep's walk gives them, sorted by path, after globs, file types and
//! `--lang`; then in the order `--sort`/`--sortr` asks for.
//!
//! The default walk's list may come from a kept listing or a resident process's memory
//! ([`TreeMemory`]); file types are then a filter on that list (with the hidden files the list
//! keeps apart, which a selected type lets through as ripgrep's walk does). Globs, and walk
//! rules other than the default, change the walk itself: it is made afresh, with the globs
//! and types given to it, as ripgrep's is.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use ignore::overrides::{Override, OverrideBuilder};
use quarry_core::Language;

use crate::listing::{self, FolderFiles, WalkRules};
use crate::memory::TreeMemory;
use crate::request::{GrepRequest, OutputKind, Sort, SortBy};
use crate::types;

/// A file to search, with how it is printed.
pub(crate) struct Target {
    /// The path as printed: as given, or found under a folder given (`<stdin>` for `-`).
    pub path: PathBuf,
    /// The path to open: `path` under the request's base folder (`path` itself without one).
    pub open: PathBuf,
    /// Named on the command line (binary files are then searched, as ripgrep does).
    pub explicit: bool,
    /// Standard input.
    pub stdin: bool,
}

/// What to search.
pub(crate) struct Listed {
    /// The files, each folder's sorted by path (or all of them as `--sort` says).
    pub targets: Vec<Target>,
    /// Whether lines carry the file's name (they do unless the only thing searched is one
    /// file named on the command line, as in ripgrep).
    pub with_filename: bool,
    /// Paths given that cannot be searched, with why.
    pub errors: Vec<String>,
}

/// The files to search; a path given that does not exist is an error in the list, not the
/// end of the search (ripgrep searches the others).
pub(crate) fn list_files(request: &GrepRequest, memory: &dyn TreeMemory) -> Result<Listed> {
    let implicit_root = request.paths.is_empty();
    let roots: Vec<PathBuf> = if implicit_root {
        vec![PathBuf::from(".")]
    } else {
        request.paths.clone()
    };
    // Paths are opened under the request's base folder (another process's working directory)
    // and printed as given. Joined paths lose their `.` components (`/repo/.` is `/repo`):
    // globs match a path relative to the base by stripping it as a prefix, and `/repo/./src/a`
    // less `/repo` is `./src/a`, which `src/**` does not match.
    let base = request.base.as_deref();
    let open_of = |path: &Path| match base {
        Some(base) => base.join(path).components().collect::<PathBuf>(),
        None => path.to_path_buf(),
    };
    let overrides = overrides(request)?;
    let types = types::matcher(&request.types)?;
    // A walk kept in a list (a cache folder, or a process's memory) answers the default walk;
    // anything else is walked afresh with everything applied. Types are a filter on a kept
    // list, but with no list kept a walk with them costs no more than one without.
    let fresh = overrides.is_some()
        || request.walk != WalkRules::default()
        || (types.is_some() && request.listing_cache.is_none() && !memory.keeps_lists());
    // Each path in the order given (as ripgrep takes them): a file as it is, a folder's files
    // sorted by path (ripgrep's `--sort path`).
    let mut targets = Vec::new();
    let mut errors = Vec::new();
    let mut any_folder = false;
    let is_stdin = |root: &Path| root.as_os_str() == "-" && request.output != OutputKind::Files;
    for root in &roots {
        if is_stdin(root) {
            targets.push(Target {
                path: PathBuf::from("<stdin>"),
                open: root.clone(),
                explicit: true,
                stdin: true,
            });
            continue;
        }
        let open_root = open_of(root);
        let meta = match std::fs::metadata(&open_root) {
            Ok(meta) => meta,
            Err(e) => {
                errors.push(format!("{}: {e}", root.display()));
                continue;
            }
        };
        if !meta.is_dir() {
            targets.push(Target {
                path: root.clone(),
                open: open_root,
                explicit: true,
                stdin: false,
            });
            continue;
        }
        any_folder = true;
        let found = if fresh {
            listing::folder_files(
                &open_root,
                overrides.as_ref(),
                types.as_ref(),
                None,
                request.walk,
            )?
            .files
        } else {
            let found = memory.files(&open_root, request.listing_cache.as_deref())?;
            match &types {
                Some(types) => typed(found, types, &request.types, &open_root, request)?,
                None => found.files,
            }
        };
        let language = request.language;
        let found = found
            .into_iter()
            .filter(|path| language.is_none_or(|l| Language::detect(path) == l))
            .map(|open| {
                let shown = match open.strip_prefix(&open_root) {
                    Ok(relative) => root.join(relative),
                    Err(_) => open.clone(),
                };
                let shown = match shown.strip_prefix("./") {
                    Ok(stripped) if implicit_root => stripped.to_path_buf(),
                    _ => shown,
                };
                (shown, open)
            });
        targets.extend(found.map(|(path, open)| Target {
            path,
            open,
            explicit: false,
            stdin: false,
        }));
    }
    if let Some(sort) = request.sort {
        sort_targets(&mut targets, sort);
    }
    Ok(Listed {
        with_filename: request
            .with_filename
            .unwrap_or(request.vimgrep || roots.len() > 1 || any_folder),
        targets,
        errors,
    })
}

/// The globs as one matcher (none without globs), as ripgrep builds it: `-g` globs, then
/// `--iglob` ones without regard to case.
fn overrides(request: &GrepRequest) -> Result<Option<Override>> {
    if request.globs.is_empty() && request.iglobs.is_empty() {
        return Ok(None);
    }
    let mut builder = OverrideBuilder::new(match request.base.as_deref() {
        Some(base) => base.to_path_buf(),
        None => std::env::current_dir()?,
    });
    builder.case_insensitive(request.glob_case_insensitive)?;
    for glob in &request.globs {
        builder
            .add(glob)
            .map_err(|e| anyhow!("invalid glob {glob:?}: {e}"))?;
    }
    builder.case_insensitive(true)?;
    for glob in &request.iglobs {
        builder
            .add(glob)
            .map_err(|e| anyhow!("invalid glob {glob:?}: {e}"))?;
    }
    Ok(Some(builder.build()?))
}

/// A kept list's files of the types asked for: a listed file unless a type rules it out, a
/// hidden one only when a selected type names it (ripgrep's walk: a type's whitelist comes
/// before the hidden-file rule). A list that did not keep its hidden files is walked again
/// with the types.
fn typed(
    found: FolderFiles,
    types: &ignore::types::Types,
    rules: &[types::TypeRule],
    root: &Path,
    request: &GrepRequest,
) -> Result<Vec<PathBuf>> {
    let hidden = match found.hidden {
        Some(hidden) => hidden,
        None if types::selects(rules) => {
            let walked = listing::folder_files(root, None, Some(types), None, request.walk)?;
            return Ok(walked.files);
        }
        None => Vec::new(),
    };
    let mut files: Vec<PathBuf> = found
        .files
        .into_iter()
        .filter(|f| !types.matched(f, false).is_ignore())
        .collect();
    let before = files.len();
    files.extend(
        hidden
            .into_iter()
            .filter(|f| types.matched(f, false).is_whitelist()),
    );
    if files.len() > before {
        files.sort();
    }
    Ok(files)
}

/// Orders `targets` as `--sort`/`--sortr` say. Ascending by path is the order they are in;
/// otherwise all of them are sorted together, as ripgrep does, by a time read now (a file
/// whose time cannot be read comes last), ties keeping path order.
fn sort_targets(targets: &mut [Target], sort: Sort) {
    use std::cmp::Ordering;
    match sort.by {
        SortBy::Path if !sort.reverse => {}
        SortBy::Path => targets.sort_by(|a, b| b.path.cmp(&a.path)),
        by => {
            let time = |t: &Target| {
                let meta = std::fs::metadata(&t.open).ok()?;
                match by {
                    SortBy::Modified => meta.modified(),
                    SortBy::Accessed => meta.accessed(),
                    _ => meta.created(),
                }
                .ok()
            };
            let mut keyed: Vec<_> = targets.iter().map(time).enumerate().collect();
            keyed.sort_by(|(_, a), (_, b)| {
                let order = match (a, b) {
                    (Some(a), Some(b)) => a.cmp(b),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                };
                if sort.reverse {
                    order.reverse()
                } else {
                    order
                }
            });
            let order: Vec<usize> = keyed.into_iter().map(|(i, _)| i).collect();
            apply_order(targets, &order);
        }
    }
}

/// Puts `items[order[0]]` first, `items[order[1]]` second, and so on.
fn apply_order<T>(items: &mut [T], order: &[usize]) {
    let mut place: Vec<usize> = vec![0; order.len()];
    for (to, &from) in order.iter().enumerate() {
        place[from] = to;
    }
    for i in 0..items.len() {
        while place[i] != i {
            let j = place[i];
            items.swap(i, j);
            place.swap(i, j);
        }
    }
}
