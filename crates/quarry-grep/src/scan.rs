//! `quarry grep`: ripgrep's matcher, searcher and printers over ripgrep's walk, so the same
//! flags on the same tree give the same lines. What quarry adds is the [`FileFilter`]: files
//! the index proves cannot match are never opened.
//!
//! Files are listed first (the walk in parallel, as ripgrep walks), sorted by path, searched
//! in parallel into one buffer each, and written in path order: the output is deterministic,
//! where ripgrep's parallel order is not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use anyhow::{anyhow, Result};
use grep_printer::{ColorSpecs, JSONBuilder, StandardBuilder, SummaryBuilder, SummaryKind};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use quarry_core::Language;
use termcolor::Buffer;

use crate::listing::threads;
use crate::literals::{requirement, PatternSyntax, Requirement};

/// How matches are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputKind {
    /// Matching lines (ripgrep's default).
    #[default]
    Lines,
    /// Only the paths of files with a match (`-l`).
    FilesWithMatches,
    /// The number of matching lines per file (`-c`).
    Count,
    /// ripgrep's JSON lines (`begin`, `match`, `context`, `end` messages).
    Json,
}

/// One `quarry grep`.
#[derive(Debug, Clone, Default)]
pub struct GrepRequest {
    /// Patterns; a line matches if any matches (`-e` repeated).
    pub patterns: Vec<String>,
    /// Files and folders to search; empty: the current folder, printed without `./`.
    pub paths: Vec<PathBuf>,
    pub fixed_strings: bool,
    pub ignore_case: bool,
    /// Match whole words only (`-w`).
    pub word: bool,
    /// Include or exclude paths (`-g`, `!` excludes), with ripgrep's glob rules.
    pub globs: Vec<String>,
    /// Only files of this language (quarry's detection by name).
    pub language: Option<Language>,
    pub line_number: bool,
    pub before_context: usize,
    pub after_context: usize,
    pub output: OutputKind,
    /// At most this many matching lines per file (`-m`).
    pub max_count: Option<u64>,
    /// At most this many files with matches (`-k`); the rest are not written.
    pub max_files: Option<usize>,
    /// Group matches under the file's name (a terminal's layout).
    pub heading: bool,
    pub color: bool,
    /// Where folders' file lists are kept between runs (the workspace's cache), so that a
    /// search need not walk the tree; none: walk every time.
    pub listing_cache: Option<PathBuf>,
}

/// Decides which files need not be read at all.
pub trait FileFilter: Sync {
    /// True when `path` (as walked, made absolute), now `size` bytes and modified at
    /// `mtime_ns`, certainly holds no match.
    fn rules_out(&self, path: &Path, size: u64, mtime_ns: i64) -> bool;
}

/// Reads every file: a plain scan.
pub struct ScanAll;

impl FileFilter for ScanAll {
    fn rules_out(&self, _: &Path, _: u64, _: i64) -> bool {
        false
    }
}

/// What a grep did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GrepStats {
    /// Files the walk found (after ignore rules, globs and `--lang`).
    pub files: usize,
    /// Files the filter ruled out without reading them.
    pub ruled_out: usize,
    /// Files read and searched.
    pub searched: usize,
    /// Files with at least one match.
    pub matched_files: usize,
    /// Matching lines, in all.
    pub matched_lines: u64,
    /// Files not written because of `max_files`.
    pub files_left_out: usize,
    /// Time listing the files, and searching them (milliseconds).
    pub walk_ms: f64,
    pub search_ms: f64,
}

impl GrepRequest {
    /// What the patterns require of a file's text (for the index's pre-filter).
    pub fn requirement(&self) -> Requirement {
        requirement(
            &self.patterns,
            PatternSyntax {
                fixed_strings: self.fixed_strings,
                case_insensitive: self.ignore_case,
            },
        )
    }

    fn matcher(&self) -> Result<RegexMatcher> {
        if self.patterns.is_empty() {
            return Err(anyhow!("no pattern: give one, or several with -e"));
        }
        RegexMatcherBuilder::new()
            .case_insensitive(self.ignore_case)
            .word(self.word)
            .fixed_strings(self.fixed_strings)
            // As ripgrep builds it: `^`/`$` match at line ends, so the searcher can run the
            // regex over a whole buffer instead of line by line (3× on an anchored pattern).
            .multi_line(true)
            .line_terminator(Some(b'\n'))
            .build_many(&self.patterns)
            .map_err(|e| anyhow!("invalid pattern: {e}"))
    }
}

/// A file to search, with how it is printed.
pub(crate) struct Target {
    pub path: PathBuf,
    /// Named on the command line (binary files are then searched, as ripgrep does).
    pub explicit: bool,
}

/// Runs `request`, writing to `out`; the filter may rule files out unread.
pub fn grep(
    request: &GrepRequest,
    filter: &dyn FileFilter,
    out: &mut dyn Write,
) -> Result<GrepStats> {
    let matcher = request.matcher()?;
    let started = std::time::Instant::now();
    let (targets, with_filename) = list_files(request)?;
    let walk_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = std::time::Instant::now();
    let mut stats = GrepStats {
        files: targets.len(),
        walk_ms,
        ..Default::default()
    };
    let (results, ruled_out) = search_targets(&targets, filter, |target| {
        search_one(request, &matcher, target, with_filename)
    })?;
    stats.ruled_out = ruled_out;
    stats.searched = stats.files - stats.ruled_out;
    for (bytes, lines) in results.into_iter().flatten() {
        if request.max_files.is_some_and(|k| stats.matched_files >= k) {
            stats.files_left_out += 1;
            continue;
        }
        if request.heading && stats.matched_files > 0 && request.output == OutputKind::Lines {
            out.write_all(b"\n")?;
        }
        out.write_all(&bytes)?;
        stats.matched_files += 1;
        stats.matched_lines += lines;
    }
    out.flush()?;
    stats.search_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(stats)
}

/// Runs `work` on every target `filter` does not rule out, on every thread; returns each
/// target's outcome in target order (`None`: ruled out, or nothing) and how many were ruled
/// out.
///
/// Two passes over the targets: first every walked file is stat-ed (which needs no filter, so
/// it runs while the filter may still be coming from the index), then each is checked and
/// searched.
pub(crate) fn search_targets<T: Send>(
    targets: &[Target],
    filter: &dyn FileFilter,
    work: impl Fn(&Target) -> Option<T> + Sync,
) -> Result<(Vec<Option<T>>, usize)> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let workers = threads().min(targets.len().max(1));
    let stat_next = AtomicUsize::new(0);
    let stamps: Vec<OnceLock<Option<(u64, i64)>>> =
        (0..targets.len()).map(|_| OnceLock::new()).collect();
    let stat_done = std::sync::Barrier::new(workers);
    let next = AtomicUsize::new(0);
    let ruled_out = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..targets.len()).map(|_| None).collect());
    let worker = || {
        loop {
            let i = stat_next.fetch_add(1, Ordering::Relaxed);
            let Some(target) = targets.get(i) else { break };
            let stamp = (!target.explicit)
                .then(|| std::fs::metadata(&target.path).ok())
                .flatten()
                .map(|m| (m.len(), quarry_core::mtime_ns(&m)));
            let _ = stamps[i].set(stamp);
        }
        stat_done.wait();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(target) = targets.get(i) else { break };
            if let Some(Some((size, mtime))) = stamps[i].get() {
                if filter.rules_out(&cwd.join(&target.path), *size, *mtime) {
                    ruled_out.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            let outcome = work(target);
            if let Ok(mut slots) = results.lock() {
                slots[i] = outcome;
            }
        }
    };
    // The calling thread is one of the workers: starting a thread costs up to a millisecond
    // on a small virtual machine, a sixth of a selective grep.
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(worker);
        }
        worker();
    });
    let results = results
        .into_inner()
        .map_err(|_| anyhow!("a search thread panicked"))?;
    Ok((results, ruled_out.into_inner()))
}

/// Searches one file into a buffer; `None` when nothing matched (or it could not be read:
/// ripgrep skips such files with a message, quarry's caller counts them as searched).
fn search_one(
    request: &GrepRequest,
    matcher: &RegexMatcher,
    target: &Target,
    with_filename: bool,
) -> Option<(Vec<u8>, u64)> {
    let mut searcher = searcher(request, target.explicit);
    let mut buffer = if request.color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let path = &target.path;
    let lines = match request.output {
        OutputKind::Lines => {
            let mut printer = StandardBuilder::new()
                .color_specs(ColorSpecs::default_with_color())
                .heading(request.heading)
                .path(with_filename)
                .build(&mut buffer);
            let mut sink = printer.sink_with_path(matcher, path);
            searcher.search_path(matcher, path, &mut sink).ok()?;
            sink.match_count()
        }
        OutputKind::FilesWithMatches | OutputKind::Count => {
            let kind = if request.output == OutputKind::Count {
                SummaryKind::Count
            } else {
                SummaryKind::PathWithMatch
            };
            let mut printer = SummaryBuilder::new()
                .kind(kind)
                .color_specs(ColorSpecs::default_with_color())
                .path(with_filename || kind == SummaryKind::PathWithMatch)
                .build(&mut buffer);
            let mut sink = printer.sink_with_path(matcher, path);
            searcher.search_path(matcher, path, &mut sink).ok()?;
            if !sink.has_match() {
                return None;
            }
            // The summary sink does not count lines for `-l`; one match is enough to know.
            1
        }
        OutputKind::Json => {
            let mut printer = JSONBuilder::new().build(&mut buffer);
            let mut sink = printer.sink_with_path(matcher, path);
            searcher.search_path(matcher, path, &mut sink).ok()?;
            sink.match_count()
        }
    };
    (lines > 0).then(|| (buffer.into_inner(), lines))
}

fn searcher(request: &GrepRequest, explicit: bool) -> Searcher {
    let mut builder = SearcherBuilder::new();
    builder
        .line_number(request.line_number || request.output == OutputKind::Json)
        .before_context(request.before_context)
        .after_context(request.after_context)
        // ripgrep: a file found by the walk stops at its first NUL byte (binary, skipped);
        // a file named on the command line is searched, NULs shown as line ends.
        .binary_detection(if explicit {
            BinaryDetection::convert(b'\x00')
        } else {
            BinaryDetection::quit(b'\x00')
        })
        .max_matches(request.max_count);
    builder.build()
}

/// The files to search, sorted by path, and whether lines carry the file's name (they do
/// unless the only thing searched is one file named on the command line, as in ripgrep).
pub(crate) fn list_files(request: &GrepRequest) -> Result<(Vec<Target>, bool)> {
    let implicit_root = request.paths.is_empty();
    let roots: Vec<PathBuf> = if implicit_root {
        vec![PathBuf::from(".")]
    } else {
        request.paths.clone()
    };
    let mut overrides = None;
    if !request.globs.is_empty() {
        let mut builder = OverrideBuilder::new(std::env::current_dir()?);
        for glob in &request.globs {
            builder
                .add(glob)
                .map_err(|e| anyhow!("invalid glob {glob:?}: {e}"))?;
        }
        overrides = Some(builder.build()?);
    }
    // Each path in the order given (as ripgrep takes them): a file as it is, a folder's files
    // sorted by path (ripgrep's `--sort path`).
    let mut targets = Vec::new();
    let mut any_folder = false;
    for root in &roots {
        let meta = std::fs::metadata(root).map_err(|e| anyhow!("{}: {e}", root.display()))?;
        if !meta.is_dir() {
            targets.push(Target {
                path: root.clone(),
                explicit: true,
            });
            continue;
        }
        any_folder = true;
        let found = crate::listing::folder_files(
            root,
            overrides.as_ref(),
            request.listing_cache.as_deref(),
        )?;
        let language = request.language;
        let found = found
            .into_iter()
            .filter(|path| language.is_none_or(|l| Language::detect(path) == l))
            .map(|path| match path.strip_prefix("./") {
                Ok(stripped) if implicit_root => stripped.to_path_buf(),
                _ => path,
            });
        targets.extend(found.map(|path| Target {
            path,
            explicit: false,
        }));
    }
    let with_filename = roots.len() > 1 || any_folder;
    Ok((targets, with_filename))
}

/// One matching line, as the router returns it.
#[derive(Debug, Clone)]
pub struct LineMatch {
    pub path: PathBuf,
    pub line_number: u64,
    pub line: String,
}

/// The matching lines of `request` (at most `limit`, in path order), for callers that rank or
/// show them themselves rather than print ripgrep's format.
pub fn matching_lines(
    request: &GrepRequest,
    filter: &dyn FileFilter,
    limit: usize,
) -> Result<Vec<LineMatch>> {
    let matcher = request.matcher()?;
    let (targets, _) = list_files(request)?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut found = Vec::new();
    for target in &targets {
        if found.len() >= limit {
            break;
        }
        if !target.explicit {
            if let Ok(meta) = std::fs::metadata(&target.path) {
                let mtime = quarry_core::mtime_ns(&meta);
                if filter.rules_out(&cwd.join(&target.path), meta.len(), mtime) {
                    continue;
                }
            }
        }
        // The sink reads line numbers: the searcher must count them.
        let counting = GrepRequest {
            line_number: true,
            ..request.clone()
        };
        let mut searcher = searcher(&counting, target.explicit);
        let _ = searcher.search_path(
            &matcher,
            &target.path,
            grep_searcher::sinks::Lossy(|line_number, line| {
                found.push(LineMatch {
                    path: target.path.clone(),
                    line_number,
                    line: line.trim_end_matches(['\n', '\r']).to_string(),
                });
                Ok(found.len() < limit)
            }),
        );
    }
    Ok(found)
}
