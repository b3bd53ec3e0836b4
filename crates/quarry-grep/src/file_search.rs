//! One file searched into a buffer of its own, with ripgrep's searcher and printers set up as
//! ripgrep sets them for the same flags. A file is read from its path, from standard input
//! (`-`), or through the decompression command ripgrep runs for its name (`-z`: `gzip -d -c`
//! for `*.gz`, `xz -d -c` for `*.xz`, … as grep-cli lists them, each only when installed).

use grep_cli::DecompressionReaderBuilder;
use grep_matcher::Matcher;
use grep_printer::{ColorSpecs, JSONBuilder, StandardBuilder, SummaryBuilder, SummaryKind};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkError};
use termcolor::Buffer;

use crate::request::{GrepRequest, OutputKind};
use crate::targets::Target;

/// One file's output and what it counted.
pub(crate) struct Found {
    pub bytes: Vec<u8>,
    pub lines: u64,
    /// For the final `summary` message of `--json`.
    pub stats: Option<grep_printer::Stats>,
}

/// How every file of one grep is searched.
pub(crate) struct FileSearch<'a> {
    pub request: &'a GrepRequest,
    pub with_filename: bool,
    /// With `-z`: the decompression commands found on this machine.
    pub decompress: Option<&'a DecompressionReaderBuilder>,
    pub searchers: Searchers<'a>,
}

/// The searchers of one grep, kept from file to file: building one allocates and zeroes its
/// line buffer (64 KiB), which was a tenth of a selective literal search through a server,
/// where searching the file itself took microseconds. ripgrep keeps one per thread the same
/// way; here at most one per thread at work is ever built.
pub(crate) struct Searchers<'a> {
    request: &'a GrepRequest,
    spare: std::sync::Mutex<Vec<(bool, Searcher)>>,
}

impl<'a> Searchers<'a> {
    pub(crate) fn new(request: &'a GrepRequest) -> Self {
        Searchers {
            request,
            spare: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// `work` with a searcher for a file named on the command line (`explicit`) or found by
    /// the walk, given back for the next file when done.
    pub(crate) fn with<R>(&self, explicit: bool, work: impl FnOnce(&mut Searcher) -> R) -> R {
        let kept = {
            let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
            spare
                .iter()
                .position(|(e, _)| *e == explicit)
                .map(|at| spare.swap_remove(at).1)
        };
        let mut searcher = kept.unwrap_or_else(|| searcher(self.request, explicit));
        let done = work(&mut searcher);
        self.spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((explicit, searcher));
        done
    }
}

impl FileSearch<'_> {
    /// Searches one file into a buffer; `None` when there is nothing to print for it (no
    /// match; or it could not be read: ripgrep skips such files with a message, quarry's
    /// caller counts them as searched).
    pub(crate) fn one<M: Matcher>(&self, matcher: &M, target: &Target) -> Option<Found> {
        self.searchers.with(target.explicit, |searcher| {
            self.one_with(searcher, matcher, target)
        })
    }

    fn one_with<M: Matcher>(
        &self,
        searcher: &mut Searcher,
        matcher: &M,
        target: &Target,
    ) -> Option<Found> {
        let request = self.request;
        let mut buffer = if request.color {
            Buffer::ansi()
        } else {
            Buffer::no_color()
        };
        let path = &target.path;
        let terminator = request.null.then_some(b'\x00');
        let mut stats = None;
        let summary = match (request.quiet, request.output) {
            (true, OutputKind::FilesWithoutMatch) => Some(SummaryKind::QuietWithoutMatch),
            (true, _) => Some(SummaryKind::QuietWithMatch),
            (false, OutputKind::Count) => Some(SummaryKind::Count),
            (false, OutputKind::CountMatches) => Some(SummaryKind::CountMatches),
            (false, OutputKind::FilesWithMatches) => Some(SummaryKind::PathWithMatch),
            (false, OutputKind::FilesWithoutMatch) => Some(SummaryKind::PathWithoutMatch),
            (false, _) => None,
        };
        let lines = match (summary, request.output) {
            (Some(kind), _) => {
                let mut printer = SummaryBuilder::new()
                    .kind(kind)
                    .color_specs(ColorSpecs::default_with_color())
                    .path(self.with_filename)
                    .path_terminator(terminator)
                    .build(&mut buffer);
                let mut sink = printer.sink_with_path(matcher, path);
                self.run(searcher, matcher, target, &mut sink).ok()?;
                // For `--files-without-match`, "has a match" is already "printed": no match.
                if !sink.has_match() {
                    return None;
                }
                // The summary sink does not count lines for `-l`; one match is enough to know.
                1
            }
            (None, OutputKind::Json) => {
                let mut printer = JSONBuilder::new().build(&mut buffer);
                let mut sink = printer.sink_with_path(matcher, path);
                self.run(searcher, matcher, target, &mut sink).ok()?;
                stats = Some(sink.stats().clone());
                sink.match_count()
            }
            (None, _) => {
                let mut printer = StandardBuilder::new()
                    .color_specs(ColorSpecs::default_with_color())
                    .heading(request.heading)
                    .path(self.with_filename)
                    .path_terminator(terminator)
                    .column(request.column)
                    .only_matching(request.only_matching)
                    .per_match(request.vimgrep)
                    .per_match_one_line(true)
                    .replacement(request.replace.as_ref().map(|r| r.as_bytes().to_vec()))
                    .trim_ascii(request.trim)
                    .build(&mut buffer);
                let mut sink = printer.sink_with_path(matcher, path);
                self.run(searcher, matcher, target, &mut sink).ok()?;
                sink.match_count()
            }
        };
        (lines > 0).then(|| Found {
            bytes: buffer.into_inner(),
            lines,
            stats,
        })
    }

    /// Feeds the file's bytes to `sink`: from standard input, a decompression command's
    /// output, or the file.
    fn run<M: Matcher, S: Sink>(
        &self,
        searcher: &mut Searcher,
        matcher: &M,
        target: &Target,
        sink: S,
    ) -> Result<(), S::Error> {
        if target.stdin {
            return searcher.search_reader(matcher, std::io::stdin().lock(), sink);
        }
        if let Some(decompress) = self
            .decompress
            .filter(|d| d.get_matcher().has_command(&target.open))
        {
            let mut reader = decompress
                .build(&target.open)
                .map_err(|e| S::Error::error_io(e.into()))?;
            let searched = searcher.search_reader(matcher, &mut reader, sink);
            let closed = reader.close();
            searched?;
            return closed.map_err(S::Error::error_io);
        }
        searcher.search_path(matcher, &target.open, sink)
    }
}

/// The searcher ripgrep would use for the request, for a file named on the command line
/// (`explicit`) or found by the walk.
fn searcher(request: &GrepRequest, explicit: bool) -> Searcher {
    let mut builder = SearcherBuilder::new();
    builder
        .line_number(request.line_number || request.output == OutputKind::Json)
        .multi_line(request.multiline)
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
