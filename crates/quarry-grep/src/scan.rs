//! `quarry grep`: ripgrep's matcher, searcher and printers over ripgrep's walk, so the same
//! flags on the same tree give the same lines. What quarry adds is the [`FileFilter`]: files
//! the index proves cannot match are never opened.
//!
//! Files are listed first (targets.rs: the walk in parallel, as ripgrep walks), sorted by path,
//! searched in parallel into one buffer each (file_search.rs, with the matcher matcher.rs
//! builds), and written in path order: the output is deterministic, where ripgrep's parallel
//! order is not. `--files` lists them and searches nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use grep_cli::DecompressionReaderBuilder;
use grep_matcher::Matcher;

use crate::file_search::{FileSearch, Found};
use crate::listing::threads;
use crate::matcher::PatternMatcher;
use crate::memory::{Cold, Stamp, TreeMemory};
use crate::request::{GrepRequest, OutputKind};
use crate::targets::{list_files, Target};

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
    /// Files the walk found (after ignore rules, globs, types and `--lang`).
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
    /// others were searched (ripgrep's way: exit 2 after printing what was found). Also
    /// ripgrep's [`NOTHING_SEARCHED`] when no path was given and no file was found.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Time listing the files, and searching them (milliseconds).
    pub walk_ms: f64,
    pub search_ms: f64,
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
    if request.output == OutputKind::Files {
        return list_only(request, memory, out);
    }
    let matcher = crate::matcher::build(request)?;
    if !request.matches_possible() {
        // ripgrep searches nothing, prints nothing, and finds nothing (`-m 0`).
        return Ok(GrepStats::default());
    }
    let started = std::time::Instant::now();
    memory.catch_up();
    let listed = list_files(request, memory)?;
    let targets = listed.targets;
    let walk_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = std::time::Instant::now();
    let mut stats = GrepStats {
        files: targets.len(),
        walk_ms,
        errors: listed.errors,
        ..Default::default()
    };
    // With -z a compressed file is searched decompressed: its indexed text (if any) is not
    // what is searched, so the index never rules it out.
    let decompress = request.search_zip.then(|| {
        let mut builder = DecompressionReaderBuilder::new();
        builder.async_stderr(true);
        builder
    });
    let filter = ZipAware {
        filter,
        decompress: decompress.as_ref(),
    };
    let search = FileSearch {
        request,
        with_filename: listed.with_filename,
        decompress: decompress.as_ref(),
        searchers: crate::file_search::Searchers::new(request),
    };
    let (results, ruled_out) = match &matcher {
        PatternMatcher::Rust(m) => search_all(&targets, &filter, memory, &search, m)?,
        PatternMatcher::Pcre2(m) => search_all(&targets, &filter, memory, &search, m)?,
    };
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
        if stats.matched_files > 0 && request.output == OutputKind::Lines && !request.quiet {
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
    if request.paths.is_empty() && targets.is_empty() {
        // ripgrep's words, and its exit status 2: with no path given, a walk that found no
        // file at all most likely met a filter the user did not expect.
        stats.errors.push(NOTHING_SEARCHED.to_string());
    }
    if request.output == OutputKind::Json && !request.quiet {
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

/// What ripgrep says when no path was given and its walk found no file to search.
pub const NOTHING_SEARCHED: &str = "No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped.";

/// Every target searched with `matcher` (those the filter allows), each one's output in
/// target order, and how many were ruled out.
fn search_all<M: Matcher + Sync>(
    targets: &[Target],
    filter: &dyn FileFilter,
    memory: &dyn TreeMemory,
    search: &FileSearch,
    matcher: &M,
) -> Result<(Vec<Option<Found>>, usize)> {
    search_targets(targets, filter, memory, |target, _| {
        search.one(matcher, target)
    })
}

/// `--files`: the paths that would be searched, each ended by a line end (a NUL with `-0`);
/// "matched" when there is one. Nothing is read, so the index has nothing to say.
fn list_only(
    request: &GrepRequest,
    memory: &dyn TreeMemory,
    out: &mut dyn Write,
) -> Result<GrepStats> {
    let started = std::time::Instant::now();
    memory.catch_up();
    let listed = list_files(request, memory)?;
    let mut buffer = if request.color {
        termcolor::Buffer::ansi()
    } else {
        termcolor::Buffer::no_color()
    };
    let mut printer = grep_printer::PathPrinterBuilder::new()
        .color_specs(grep_printer::ColorSpecs::default_with_color())
        .terminator(if request.null { b'\x00' } else { b'\n' })
        .build(&mut buffer);
    let shown = if request.quiet {
        0
    } else {
        listed.targets.len()
    };
    for target in &listed.targets[..shown] {
        printer.write(&target.path)?;
    }
    out.write_all(buffer.as_slice())?;
    out.flush()?;
    Ok(GrepStats {
        files: listed.targets.len(),
        matched_files: listed.targets.len(),
        errors: listed.errors,
        walk_ms: started.elapsed().as_secs_f64() * 1000.0,
        ..Default::default()
    })
}

/// The filter, except that with `-z` a file with a decompression command is always read.
struct ZipAware<'a> {
    filter: &'a dyn FileFilter,
    decompress: Option<&'a DecompressionReaderBuilder>,
}

impl FileFilter for ZipAware<'_> {
    fn rules_out(&self, path: &Path, size: u64, mtime_ns: i64) -> bool {
        self.decompress
            .is_none_or(|d| !d.get_matcher().has_command(path))
            && self.filter.rules_out(path, size, mtime_ns)
    }
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
    work: impl Fn(&Target, Option<Stamp>) -> Option<T> + Sync,
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
    let outcomes = on_threads(&to_read, to_read.len() / 8, |i| {
        work(&targets[i], stamps[i])
    });
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
    memory: &dyn TreeMemory,
) -> Result<Vec<LineMatch>> {
    let matcher = crate::matcher::rust(request)?;
    memory.catch_up();
    let targets = list_files(request, memory)?.targets;
    // The sink reads line numbers: the searcher must count them.
    let counting = GrepRequest {
        line_number: true,
        ..request.clone()
    };
    let searchers = crate::file_search::Searchers::new(&counting);
    let mut found = Vec::new();
    // In path order, a batch of files at a time (read on threads, their states from
    // `memory` where it keeps them), until `limit` lines are found.
    for batch in targets.chunks(MATCHING_BATCH) {
        let (results, _) = search_targets(batch, filter, memory, |target, stamp| {
            searchers.with(target.explicit, |searcher| {
                let mut lines = Vec::new();
                let sink = grep_searcher::sinks::Lossy(|line_number, line| {
                    lines.push(LineMatch {
                        path: target.path.clone(),
                        line_number,
                        line: line.trim_end_matches(['\n', '\r']).to_string(),
                    });
                    Ok(lines.len() < limit)
                });
                // A resident process keeps texts by their state: a scan of memory.
                let kept = match (memory.texts(), stamp) {
                    (Some(texts), Some(stamp)) if !target.explicit => {
                        texts.text(&target.open, stamp)
                    }
                    _ => None,
                };
                let _ = match kept {
                    Some(text) => searcher.search_slice(&matcher, &text, sink),
                    None => searcher.search_path(&matcher, &target.open, sink),
                };
                Some(lines)
            })
        })?;
        found.extend(results.into_iter().flatten().flatten());
        if found.len() >= limit {
            found.truncate(limit);
            break;
        }
    }
    Ok(found)
}

/// How many files `matching_lines` reads before it looks whether it has enough.
const MATCHING_BATCH: usize = 256;
