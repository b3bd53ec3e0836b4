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

use anyhow::{anyhow, Result};
use grep_printer::{ColorSpecs, JSONBuilder, StandardBuilder, SummaryBuilder, SummaryKind};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use quarry_core::Language;
use termcolor::Buffer;

use crate::listing::{threads, WalkRules};
use crate::literals::{requirement, PatternSyntax, Requirement};
use crate::memory::{Cold, Stamp, TreeMemory};

/// How matches are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum OutputKind {
    /// Matching lines (ripgrep's default).
    #[default]
    Lines,
    /// Only the paths of files with a match (`-l`).
    FilesWithMatches,
    /// The number of matching lines per file (`-c`).
    Count,
    /// The number of matches per file (`--count-matches`).
    CountMatches,
    /// Only the paths of files without a match (`--files-without-match`).
    FilesWithoutMatch,
    /// ripgrep's JSON lines (`begin`, `match`, `context`, `end` messages).
    Json,
}

/// One `quarry grep`.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct GrepRequest {
    /// Patterns; a line matches if any matches (`-e` repeated).
    pub patterns: Vec<String>,
    /// Files and folders to search; empty: the current folder, printed without `./`.
    pub paths: Vec<PathBuf>,
    pub fixed_strings: bool,
    pub ignore_case: bool,
    /// Match whole words only (`-w`).
    pub word: bool,
    /// Match whole lines only (`-x`).
    #[serde(default)]
    pub line_regexp: bool,
    /// Case-insensitive unless a pattern has an upper-case letter (`-S`).
    #[serde(default)]
    pub smart_case: bool,
    /// Lines that do not match (`-v`).
    #[serde(default)]
    pub invert_match: bool,
    /// Print only the matched parts of lines (`-o`).
    #[serde(default)]
    pub only_matching: bool,
    /// Print each match replaced by this (`-r`; `$1`, `$name` name capture groups).
    #[serde(default)]
    pub replace: Option<String>,
    /// What the walk skips and reads (`--hidden`, `-u`, `--no-ignore`).
    #[serde(default)]
    pub walk: WalkRules,
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
    /// The folder `paths` (and globs) are relative to, and printed paths are relative to: the
    /// caller's working directory when another process (the workspace daemon) searches for
    /// it; none: this process's.
    #[serde(default)]
    pub base: Option<PathBuf>,
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
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
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
    /// Paths given that could not be searched (missing, unreadable), each with why; the
    /// others were searched (ripgrep's way: exit 2 after printing what was found).
    #[serde(default)]
    pub errors: Vec<String>,
    /// Time listing the files, and searching them (milliseconds).
    pub walk_ms: f64,
    pub search_ms: f64,
}

impl GrepRequest {
    /// What the patterns require of a file's text (for the index's pre-filter).
    pub fn requirement(&self) -> Requirement {
        // Inverted, or listing the files without a match: a file with none of the pattern's
        // text is an answer too, so the index can rule nothing out.
        if self.invert_match || self.output == OutputKind::FilesWithoutMatch {
            return Requirement::Anything;
        }
        let smart_insensitive = self.smart_case
            && !self
                .patterns
                .iter()
                .any(|p| p.chars().any(char::is_uppercase));
        requirement(
            &self.patterns,
            PatternSyntax {
                fixed_strings: self.fixed_strings,
                case_insensitive: self.ignore_case || smart_insensitive,
            },
        )
    }

    fn matcher(&self) -> Result<RegexMatcher> {
        if self.patterns.is_empty() {
            return Err(anyhow!("no pattern: give one, or several with -e"));
        }
        // Each pattern checked as written: the builder joins them as `(?:a)|(?:b)`, and its
        // errors quote that rewriting (`grep '\'` said "unclosed group").
        if !self.fixed_strings {
            for pattern in &self.patterns {
                if let Err(e) = regex_syntax::ParserBuilder::new()
                    .multi_line(true)
                    .build()
                    .parse(pattern)
                {
                    return Err(anyhow!("invalid pattern {pattern:?}:\n{e}"));
                }
            }
        }
        RegexMatcherBuilder::new()
            .case_insensitive(self.ignore_case)
            .case_smart(self.smart_case && !self.ignore_case)
            .word(self.word)
            .whole_line(self.line_regexp)
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
    /// The path as printed: as given, or found under a folder given.
    pub path: PathBuf,
    /// The path to open: `path` under the request's base folder (`path` itself without one).
    pub open: PathBuf,
    /// Named on the command line (binary files are then searched, as ripgrep does).
    pub explicit: bool,
}

/// Runs `request`, writing to `out`; the filter may rule files out unread.
pub fn grep(
    request: &GrepRequest,
    filter: &dyn FileFilter,
    out: &mut dyn Write,
) -> Result<GrepStats> {
    grep_with_memory(request, filter, &Cold, out)
}

/// [`grep`], taking file lists and file states from `memory` where it holds them (a resident
/// process's [`crate::WarmTree`]).
pub fn grep_with_memory(
    request: &GrepRequest,
    filter: &dyn FileFilter,
    memory: &dyn TreeMemory,
    out: &mut dyn Write,
) -> Result<GrepStats> {
    let matcher = request.matcher()?;
    let started = std::time::Instant::now();
    memory.catch_up();
    let listed = list_files(request, memory)?;
    let (targets, with_filename) = (listed.targets, listed.with_filename);
    let walk_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = std::time::Instant::now();
    let mut stats = GrepStats {
        files: targets.len(),
        walk_ms,
        errors: listed.errors,
        ..Default::default()
    };
    let (results, ruled_out) = search_targets(&targets, filter, memory, |target| {
        search_one(request, &matcher, target, with_filename)
    })?;
    stats.ruled_out = ruled_out;
    stats.searched = stats.files - stats.ruled_out;
    // Context groups are separated by `--`, across files too (ripgrep prints every file with
    // one printer; here each file has its own).
    let separated = request.output == OutputKind::Lines
        && !request.heading
        && (request.before_context > 0 || request.after_context > 0);
    let mut json_stats = grep_printer::Stats::new();
    for found in results.into_iter().flatten() {
        if request.max_files.is_some_and(|k| stats.matched_files >= k) {
            stats.files_left_out += 1;
            continue;
        }
        if stats.matched_files > 0 && request.output == OutputKind::Lines {
            if request.heading {
                out.write_all(b"\n")?;
            } else if separated {
                out.write_all(b"--\n")?;
            }
        }
        out.write_all(&found.bytes)?;
        if let Some(file_stats) = &found.stats {
            json_stats += file_stats;
        }
        stats.matched_files += 1;
        stats.matched_lines += found.lines;
    }
    stats.search_ms = started.elapsed().as_secs_f64() * 1000.0;
    if request.output == OutputKind::Json {
        // ripgrep's last message: the totals. Every file listed counts as a search, as
        // ripgrep 15 counts them (13 counted only files with a match) — those the index ruled
        // out too, whose search it answered; the printer's per-file stats only exist for
        // files with a match.
        json_stats.add_searches((stats.files as u64).saturating_sub(json_stats.searches()));
        let elapsed = started.elapsed() + std::time::Duration::from_secs_f64(walk_ms / 1000.0);
        let summary = serde_json::json!({
            "data": {
                "elapsed_total": {
                    "human": format!("{:.6}s", elapsed.as_secs_f64()),
                    "nanos": elapsed.subsec_nanos(),
                    "secs": elapsed.as_secs(),
                },
                "stats": json_stats,
            },
            "type": "summary",
        });
        serde_json::to_writer(&mut *out, &summary)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(stats)
}

/// Runs `work` on every target `filter` does not rule out; returns each target's outcome in
/// target order (`None`: ruled out, or nothing) and how many were ruled out.
///
/// Three steps: each walked file's state is taken from `memory` or read (in parallel; this
/// needs no filter, so it runs while the filter may still be coming from the index), the
/// filter rules files out, and the rest are searched — on every thread when there are enough
/// of them to pay for starting one.
pub(crate) fn search_targets<T: Send>(
    targets: &[Target],
    filter: &dyn FileFilter,
    memory: &dyn TreeMemory,
    work: impl Fn(&Target) -> Option<T> + Sync,
) -> Result<(Vec<Option<T>>, usize)> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let walked: Vec<usize> = (0..targets.len())
        .filter(|&i| !targets[i].explicit)
        .collect();
    let remembered = memory.stamps(
        &walked
            .iter()
            .map(|&i| targets[i].open.as_path())
            .collect::<Vec<_>>(),
    );
    let mut stamps: Vec<Option<Stamp>> = vec![None; targets.len()];
    let mut unknown = Vec::new();
    for (&i, stamp) in walked.iter().zip(remembered) {
        match stamp {
            Some(stamp) => stamps[i] = Some(stamp),
            None => unknown.push(i),
        }
    }
    let read = on_threads(&unknown, unknown.len() / 64, |i| {
        std::fs::metadata(&targets[i].open)
            .ok()
            .map(|m| (m.len(), quarry_core::mtime_ns(&m)))
    });
    let mut learned = Vec::new();
    for (&i, stamp) in unknown.iter().zip(read) {
        if let Some(stamp) = stamp {
            learned.push((targets[i].open.as_path(), stamp));
        }
        stamps[i] = stamp;
    }
    memory.keep(&learned);
    let mut ruled_out = 0;
    let mut to_read = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        if let Some((size, mtime)) = stamps[i] {
            let path = if target.open.is_absolute() {
                std::borrow::Cow::Borrowed(target.open.as_path())
            } else {
                std::borrow::Cow::Owned(cwd.join(&target.open))
            };
            if filter.rules_out(&path, size, mtime) {
                ruled_out += 1;
                continue;
            }
        }
        to_read.push(i);
    }
    // Starting a thread costs up to a millisecond on a small virtual machine: a few files are
    // read on the calling thread.
    let outcomes = on_threads(&to_read, to_read.len() / 8, |i| work(&targets[i]));
    let mut results: Vec<Option<T>> = (0..targets.len()).map(|_| None).collect();
    for (&i, outcome) in to_read.iter().zip(outcomes) {
        results[i] = outcome;
    }
    Ok((results, ruled_out))
}

/// `work` on each of `items`, in order, on up to `spread` threads (the calling thread one of
/// them; never more than the CPUs).
fn on_threads<T: Send>(items: &[usize], spread: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let workers = threads().min(spread).max(1);
    if workers == 1 {
        return items.iter().map(|&i| work(i)).collect();
    }
    let next = AtomicUsize::new(0);
    // Each thread keeps what it did, by position; joined in order after.
    let worker = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(&i) = items.get(at) else { break };
            done.push((at, work(i)));
        }
        done
    };
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(worker)).collect();
        let mut done = worker();
        for other in others {
            match other.join() {
                Ok(theirs) => done.extend(theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(at, _)| *at);
    done.into_iter().map(|(_, outcome)| outcome).collect()
}

/// Searches one file into a buffer; `None` when nothing matched (or it could not be read:
/// ripgrep skips such files with a message, quarry's caller counts them as searched).
fn search_one(
    request: &GrepRequest,
    matcher: &RegexMatcher,
    target: &Target,
    with_filename: bool,
) -> Option<Found> {
    let mut searcher = searcher(request, target.explicit);
    let mut buffer = if request.color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let (path, open) = (&target.path, &target.open);
    let mut stats = None;
    let lines = match request.output {
        OutputKind::Lines => {
            let mut printer = StandardBuilder::new()
                .color_specs(ColorSpecs::default_with_color())
                .heading(request.heading)
                .path(with_filename)
                .only_matching(request.only_matching)
                .replacement(request.replace.as_ref().map(|r| r.as_bytes().to_vec()))
                .build(&mut buffer);
            let mut sink = printer.sink_with_path(matcher, path);
            searcher.search_path(matcher, open, &mut sink).ok()?;
            sink.match_count()
        }
        OutputKind::FilesWithMatches
        | OutputKind::FilesWithoutMatch
        | OutputKind::Count
        | OutputKind::CountMatches => {
            let kind = match request.output {
                OutputKind::Count => SummaryKind::Count,
                OutputKind::CountMatches => SummaryKind::CountMatches,
                OutputKind::FilesWithoutMatch => SummaryKind::PathWithoutMatch,
                _ => SummaryKind::PathWithMatch,
            };
            let mut printer = SummaryBuilder::new()
                .kind(kind)
                .color_specs(ColorSpecs::default_with_color())
                .path(
                    with_filename
                        || matches!(
                            kind,
                            SummaryKind::PathWithMatch | SummaryKind::PathWithoutMatch
                        ),
                )
                .build(&mut buffer);
            let mut sink = printer.sink_with_path(matcher, path);
            searcher.search_path(matcher, open, &mut sink).ok()?;
            // For `--files-without-match`, "has a match" is already "printed": no match.
            if !sink.has_match() {
                return None;
            }
            // The summary sink does not count lines for `-l`; one match is enough to know.
            1
        }
        OutputKind::Json => {
            let mut printer = JSONBuilder::new().build(&mut buffer);
            let mut sink = printer.sink_with_path(matcher, path);
            searcher.search_path(matcher, open, &mut sink).ok()?;
            stats = Some(sink.stats().clone());
            sink.match_count()
        }
    };
    (lines > 0).then(|| Found {
        bytes: buffer.into_inner(),
        lines,
        stats,
    })
}

/// One file's output and what it counted.
struct Found {
    bytes: Vec<u8>,
    lines: u64,
    /// For the final `summary` message of `--json`.
    stats: Option<grep_printer::Stats>,
}

fn searcher(request: &GrepRequest, explicit: bool) -> Searcher {
    let mut builder = SearcherBuilder::new();
    builder
        .line_number(request.line_number || request.output == OutputKind::Json)
        .before_context(request.before_context)
        .after_context(request.after_context)
        // ripgrep: a file found by the walk stops at its first NUL byte (binary, skipped);
        // a file named on the command line is searched, NULs shown as line ends.
        .binary_detection(if request.walk.binary {
            BinaryDetection::none()
        } else if explicit {
            BinaryDetection::convert(b'\x00')
        } else {
            BinaryDetection::quit(b'\x00')
        })
        .invert_match(request.invert_match)
        .max_matches(request.max_count);
    builder.build()
}

/// What to search.
pub(crate) struct Listed {
    /// The files, each folder's sorted by path.
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
    let mut overrides = None;
    if !request.globs.is_empty() {
        let mut builder = OverrideBuilder::new(match base {
            Some(base) => base.to_path_buf(),
            None => std::env::current_dir()?,
        });
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
    let mut errors = Vec::new();
    let mut any_folder = false;
    for root in &roots {
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
            });
            continue;
        }
        any_folder = true;
        // Globs prune the walk, other walk rules change it: no list kept for the default walk
        // (in memory or in the cache) can answer.
        let found = if overrides.is_some() || request.walk != WalkRules::default() {
            crate::listing::folder_files(&open_root, overrides.as_ref(), None, request.walk)?
        } else {
            memory.files(&open_root, request.listing_cache.as_deref())?
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
        }));
    }
    Ok(Listed {
        targets,
        with_filename: roots.len() > 1 || any_folder,
        errors,
    })
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
    let targets = list_files(request, &Cold)?.targets;
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut found = Vec::new();
    for target in &targets {
        if found.len() >= limit {
            break;
        }
        if !target.explicit {
            if let Ok(meta) = std::fs::metadata(&target.open) {
                let mtime = quarry_core::mtime_ns(&meta);
                if filter.rules_out(&cwd.join(&target.open), meta.len(), mtime) {
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
            &target.open,
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
