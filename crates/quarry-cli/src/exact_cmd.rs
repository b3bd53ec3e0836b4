//! `quarry grep` and `quarry sg`: ripgrep's flags and output, ast-grep's patterns; the engine
//! narrows both to the files the index cannot rule out.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use quarry_core::Language;
use quarry_engine::exact;
use quarry_grep::{GrepRequest, OutputKind};

use crate::output::{self, exit_code};
use crate::parse_language;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Args)]
pub(crate) struct GrepArgs {
    /// The pattern: a regular expression (Rust regex syntax, as ripgrep's), or a literal with
    /// -F. With -e, this is the first path instead.
    pattern: Option<String>,
    /// Files and folders to search [default: the current folder].
    paths: Vec<PathBuf>,
    /// A pattern (repeatable: a line matches if any matches).
    #[arg(short = 'e', long = "regexp", value_name = "PATTERN")]
    regexps: Vec<String>,
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Ignore case unless a pattern has an upper-case letter.
    #[arg(short = 'S', long)]
    smart_case: bool,
    /// Match whole words only.
    #[arg(short = 'w', long = "word-regexp")]
    word: bool,
    /// Match whole lines only.
    #[arg(short = 'x', long = "line-regexp")]
    line_regexp: bool,
    /// Print the lines that do not match.
    #[arg(short = 'v', long)]
    invert_match: bool,
    /// Print only the matched parts of lines, each on its own line.
    #[arg(short = 'o', long)]
    only_matching: bool,
    /// Print each match replaced by this text (`$1`, `$name` for capture groups).
    #[arg(short = 'r', long, value_name = "REPLACEMENT")]
    replace: Option<String>,
    /// Patterns are literal strings, not regular expressions.
    #[arg(short = 'F', long)]
    fixed_strings: bool,
    /// Include (or with `!`, exclude) files and folders matching the glob (repeatable).
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// Only files of this language (`--type-list` lists them; ripgrep's short names such as
    /// py, rs, js work too).
    #[arg(long, short = 't', alias = "type", value_parser = parse_language)]
    lang: Option<Language>,
    /// List the languages and the file names each one covers, then exit.
    #[arg(long)]
    type_list: bool,
    /// Search hidden files and folders too.
    #[arg(long)]
    hidden: bool,
    /// Do not read ignore files (.gitignore, .ignore, .rgignore, git's excludes).
    #[arg(long)]
    no_ignore: bool,
    /// Less filtering: -u = --no-ignore, -uu = also --hidden, -uuu = also --text.
    #[arg(short = 'u', long = "unrestricted", action = clap::ArgAction::Count)]
    unrestricted: u8,
    /// Search binary files as text.
    #[arg(short = 'a', long)]
    text: bool,
    /// Show line numbers [default: on a terminal].
    #[arg(short = 'n', long)]
    line_number: bool,
    /// Never show line numbers.
    #[arg(short = 'N', long, conflicts_with = "line_number")]
    no_line_number: bool,
    /// Lines of context before and after each match.
    #[arg(short = 'C', long, value_name = "N")]
    context: Option<usize>,
    #[arg(short = 'A', long, value_name = "N")]
    after_context: Option<usize>,
    #[arg(short = 'B', long, value_name = "N")]
    before_context: Option<usize>,
    /// Print only the paths of files with a match.
    #[arg(short = 'l', long)]
    files_with_matches: bool,
    /// Print the paths of files without a match.
    #[arg(long, conflicts_with = "files_with_matches")]
    files_without_match: bool,
    /// Print the number of matching lines per file.
    #[arg(short = 'c', long, conflicts_with_all = ["files_with_matches", "files_without_match"])]
    count: bool,
    /// Print the number of matches per file (several on one line count apart).
    #[arg(long, conflicts_with_all = ["files_with_matches", "files_without_match", "count"])]
    count_matches: bool,
    /// At most this many matching lines per file.
    #[arg(short = 'm', long, value_name = "N")]
    max_count: Option<u64>,
    /// At most this many files with matches (in path order); the rest are counted on stderr.
    #[arg(short = 'k', long = "max-files", value_name = "N")]
    max_files: Option<usize>,
    /// ripgrep's JSON lines (begin/match/context/end per file).
    #[arg(long)]
    json: bool,
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorArg,
    /// Say on stderr how many files the index ruled out and how many were read.
    #[arg(long)]
    stats: bool,
}

pub(crate) fn grep(dir: &Path, args: GrepArgs) -> Result<()> {
    if args.type_list {
        let mut out = std::io::stdout().lock();
        for language in Language::ALL {
            writeln!(
                out,
                "{}: {}",
                language.name(),
                language.file_names().join(", ")
            )?;
        }
        return Ok(());
    }
    let mut patterns = args.regexps;
    let mut paths = args.paths;
    match args.pattern {
        Some(first) if patterns.is_empty() => patterns.push(first),
        Some(first) => paths.insert(0, PathBuf::from(first)),
        None if patterns.is_empty() => {
            bail!("no pattern: `quarry grep PATTERN [PATH...]`, or -e PATTERN")
        }
        None => {}
    }
    let terminal = std::io::stdout().is_terminal();
    let context = args.context.unwrap_or(0);
    let request = GrepRequest {
        patterns,
        paths,
        fixed_strings: args.fixed_strings,
        ignore_case: args.ignore_case,
        smart_case: args.smart_case,
        word: args.word,
        line_regexp: args.line_regexp,
        invert_match: args.invert_match,
        only_matching: args.only_matching,
        replace: args.replace,
        walk: quarry_grep::WalkRules {
            hidden: args.hidden || args.unrestricted >= 2,
            no_ignore: args.no_ignore || args.unrestricted >= 1,
            binary: args.text || args.unrestricted >= 3,
        },
        globs: args.globs,
        language: args.lang,
        line_number: !args.no_line_number && (args.line_number || terminal),
        before_context: args.before_context.unwrap_or(context),
        after_context: args.after_context.unwrap_or(context),
        output: if args.json {
            OutputKind::Json
        } else if args.files_with_matches {
            OutputKind::FilesWithMatches
        } else if args.files_without_match {
            OutputKind::FilesWithoutMatch
        } else if args.count {
            OutputKind::Count
        } else if args.count_matches {
            OutputKind::CountMatches
        } else {
            OutputKind::Lines
        },
        max_count: args.max_count,
        max_files: args.max_files,
        heading: terminal && !args.json,
        color: !args.json
            && match args.color {
                ColorArg::Always => true,
                ColorArg::Never => false,
                ColorArg::Auto => terminal && std::env::var_os("NO_COLOR").is_none(),
            },
        // The engine keeps file lists in the workspace, when there is one.
        listing_cache: None,
        base: None,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // The workspace daemon, when one runs, searches with its file lists and index warm; the
    // same bytes either way.
    let asked = GrepRequest {
        base: Some(std::env::current_dir()?),
        ..request.clone()
    };
    let (stats, filter) = match quarry_daemon::client::grep(dir, &asked)? {
        Some((output, stats, filter)) => {
            out.write_all(&output)?;
            (stats, filter)
        }
        None => exact::grep(dir, &request, &mut out)?,
    };
    out.flush()?;
    if args.stats {
        eprintln!(
            "quarry grep: {} files; {} ruled out by the index ({} indexed files known), {} read; {} with matches, {} matching lines; index {:.1} ms, walk {:.1} ms, search {:.1} ms",
            stats.files,
            stats.ruled_out,
            filter.indexed_files,
            stats.searched,
            stats.matched_files,
            stats.matched_lines,
            filter.lookup_ms,
            stats.walk_ms,
            stats.search_ms
        );
    }
    if stats.files_left_out > 0 {
        eprintln!(
            "quarry grep: {} more files with matches not shown (-k {})",
            stats.files_left_out,
            request.max_files.unwrap_or_default()
        );
    }
    // As ripgrep: the paths that could not be searched are named, the others' matches are
    // printed, and the exit status is 2.
    for error in &stats.errors {
        eprintln!("quarry grep: {error}");
    }
    if !stats.errors.is_empty() {
        std::process::exit(exit_code::ERROR);
    }
    if stats.matched_files == 0 {
        std::process::exit(exit_code::NOTHING_FOUND);
    }
    Ok(())
}

#[derive(Args)]
pub(crate) struct SgArgs {
    /// The pattern: code of the language, with metavariables ($NAME one node, $$$ARGS any
    /// number, $_ one node not captured), e.g. 'def $F($$$ARGS):' or '$X.unwrap()'.
    pattern: String,
    /// Files and folders to search [default: the current folder].
    paths: Vec<PathBuf>,
    /// The pattern's language; only its files are searched.
    #[arg(long, value_parser = parse_language)]
    lang: Language,
    /// At most this many matches.
    #[arg(short = 'k', long, default_value_t = 200)]
    limit: usize,
    #[arg(long)]
    json: bool,
}

/// Lines of each match printed in human output (`--json` has all of them).
const SHOWN_LINES: usize = 6;
/// Characters of each captured metavariable printed in human output.
const CAPTURE_CHARS: usize = 100;

pub(crate) fn sg(dir: &Path, args: SgArgs) -> Result<()> {
    let (matches, stats, filter) =
        exact::sg(dir, &args.pattern, args.lang, &args.paths, args.limit)?;
    let found = !matches.is_empty();
    if let Some(warning) = &stats.warning {
        eprintln!("quarry sg: warning: {warning}");
    }
    if args.json {
        output::print_json(&crate::answers::StructuralMatches {
            matches,
            stats,
            filter,
        })?;
    } else {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        for m in &matches {
            writeln!(out, "{}:{}-{}", m.path, m.start_line, m.end_line)?;
            // The head of a long match (a whole function) says which one it is.
            let lines: Vec<&str> = m.text.lines().collect();
            for (i, line) in lines.iter().take(SHOWN_LINES).enumerate() {
                writeln!(out, "{:>6}  {line}", m.start_line + i)?;
            }
            if lines.len() > SHOWN_LINES {
                writeln!(out, "        … {} more lines", lines.len() - SHOWN_LINES)?;
            }
            for (name, text) in &m.captures {
                let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                let cut: String = text.chars().take(CAPTURE_CHARS).collect();
                let more = if cut.len() < text.len() { " …" } else { "" };
                writeln!(out, "        ${name} = {cut}{more}")?;
            }
        }
        out.flush()?;
        if stats.left_out > 0 {
            eprintln!(
                "quarry sg: {} more matches not shown (-k {})",
                stats.left_out, args.limit
            );
        }
    }
    if !found {
        std::process::exit(exit_code::NOTHING_FOUND);
    }
    Ok(())
}
