//! `quarry grep` and `quarry sg`: ripgrep's flags and output, ast-grep's patterns; the engine
//! narrows both to the files the index cannot rule out.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use quarry_core::Language;
use quarry_engine::exact;
use quarry_grep::{GrepRequest, OutputKind, Sort, SortBy, TypeRule};

use crate::output::{self, exit_code};
use crate::parse_language;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SortArg {
    Path,
    None,
    Modified,
    Accessed,
    Created,
}

#[derive(Args)]
pub(crate) struct GrepArgs {
    /// The pattern: a regular expression (Rust regex syntax, as ripgrep's), or a literal with
    /// -F. With -e, or with --files, this is the first path instead.
    pattern: Option<String>,
    /// Files and folders to search (`-` is standard input) [default: standard input when it
    /// is a pipe or a file, else the current folder].
    paths: Vec<PathBuf>,
    /// A pattern (repeatable: a line matches if any matches).
    #[arg(short = 'e', long = "regexp", value_name = "PATTERN")]
    regexps: Vec<String>,
    #[arg(short = 'i', long, overrides_with_all = ["smart_case", "case_sensitive"])]
    ignore_case: bool,
    /// Ignore case unless a pattern has an upper-case letter.
    #[arg(short = 'S', long, overrides_with_all = ["ignore_case", "case_sensitive"])]
    smart_case: bool,
    /// Match case (the default; overrides an earlier -i or -S).
    #[arg(short = 's', long, overrides_with_all = ["ignore_case", "smart_case"])]
    case_sensitive: bool,
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
    /// Matches may span lines (`\n` in a pattern matches a line end).
    #[arg(short = 'U', long)]
    multiline: bool,
    /// Patterns are PCRE2 regular expressions (lookaround, backreferences).
    #[arg(short = 'P', long)]
    pcre2: bool,
    /// Search compressed files (gz, bz2, xz, lz4, lzma, br, zst, Z) decompressed, with the
    /// installed gzip, xz, … commands.
    #[arg(short = 'z', long)]
    search_zip: bool,
    /// Include (or with `!`, exclude) files and folders matching the glob (repeatable).
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// As -g, without regard to case (repeatable).
    #[arg(long = "iglob", value_name = "GLOB")]
    iglobs: Vec<String>,
    /// Match every glob without regard to case.
    #[arg(long)]
    glob_case_insensitive: bool,
    /// Only files of this ripgrep type (repeatable; `--type-list` lists them). Files named
    /// on the command line are searched whatever their type.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// No files of this ripgrep type (repeatable).
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    types_not: Vec<String>,
    /// Only files of this language, as quarry detects them (python, rust, markdown, …).
    #[arg(long, value_parser = parse_language)]
    lang: Option<Language>,
    /// List ripgrep's file types and the globs each one covers, then exit.
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
    /// Follow symbolic links while walking.
    #[arg(short = 'L', long)]
    follow: bool,
    /// Show line numbers [default: on a terminal].
    #[arg(short = 'n', long)]
    line_number: bool,
    /// Never show line numbers.
    #[arg(short = 'N', long, conflicts_with = "line_number")]
    no_line_number: bool,
    /// Show the column of the first match on each line.
    #[arg(long)]
    column: bool,
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
    /// Print nothing: the exit status says whether something matched.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print the files that would be searched, and search nothing (no pattern is given).
    #[arg(long)]
    files: bool,
    /// Print each line's file name, even for a single file.
    #[arg(short = 'H', long, overrides_with = "no_filename")]
    with_filename: bool,
    /// Never print file names on lines.
    #[arg(short = 'I', long, overrides_with = "with_filename")]
    no_filename: bool,
    /// End printed paths with a NUL byte (for xargs -0).
    #[arg(short = '0', long)]
    null: bool,
    /// Every match on a line of its own: path:line:column:text.
    #[arg(long)]
    vimgrep: bool,
    /// Do not print leading white space.
    #[arg(long)]
    trim: bool,
    /// The order of files: path (the default: quarry always prints in path order), none
    /// (path order too), modified, accessed or created (oldest first).
    #[arg(long, value_enum, value_name = "SORTBY", overrides_with = "sortr")]
    sort: Option<SortArg>,
    /// As --sort, descending.
    #[arg(long, value_enum, value_name = "SORTBY", overrides_with = "sort")]
    sortr: Option<SortArg>,
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
    /// -t and -T in the order given (the last rule naming a file decides), filled in by
    /// [`GrepArgs::order_types`].
    #[arg(skip)]
    type_rules: Vec<TypeRule>,
}

impl GrepArgs {
    /// Puts -t and -T in the order they were given (clap keeps each flag's values apart).
    pub(crate) fn order_types(&mut self, matches: &clap::ArgMatches) {
        let mut rules: Vec<(usize, TypeRule)> = Vec::new();
        for (id, rule) in [
            ("types", TypeRule::Select as fn(String) -> TypeRule),
            ("types_not", TypeRule::Negate),
        ] {
            if let (Some(at), Some(names)) =
                (matches.indices_of(id), matches.get_many::<String>(id))
            {
                rules.extend(at.zip(names.map(|n| rule(n.clone()))));
            }
        }
        rules.sort_by_key(|(at, _)| *at);
        self.type_rules = rules.into_iter().map(|(_, rule)| rule).collect();
    }
}

/// Says `error` as ripgrep would (its words, quarry's name) and exits with ripgrep's status 2.
fn refuse(error: impl std::fmt::Display) -> ! {
    eprintln!("quarry grep: {error}");
    std::process::exit(exit_code::ERROR);
}

pub(crate) fn grep(dir: &Path, args: GrepArgs) -> Result<()> {
    if args.type_list {
        let mut out = std::io::stdout().lock();
        out.write_all(&quarry_grep::type_list())?;
        out.flush()?;
        return Ok(());
    }
    if let Err(e) = quarry_grep::types::check(&args.type_rules) {
        refuse(e);
    }
    let mut patterns = args.regexps;
    let mut paths = args.paths;
    match args.pattern {
        Some(first) if args.files || !patterns.is_empty() => paths.insert(0, PathBuf::from(first)),
        Some(first) => patterns.push(first),
        None if patterns.is_empty() && !args.files => {
            bail!("no pattern: `quarry grep PATTERN [PATH...]`, or -e PATTERN")
        }
        None => {}
    }
    // As ripgrep decides (grep-cli's is_readable_stdin): with no path given, standard input
    // is searched when it is a pipe, a file or a socket — not a terminal, not /dev/null.
    if paths.is_empty() && !args.files && quarry_grep::stdin_is_readable() {
        paths.push(PathBuf::from("-"));
    }
    let only_stdin = paths.len() == 1 && paths[0].as_os_str() == "-";
    let terminal = std::io::stdout().is_terminal();
    let context = args.context.unwrap_or(0);
    let output = if args.files {
        OutputKind::Files
    } else if args.json {
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
    };
    let column = args.column || args.vimgrep;
    // ripgrep's default: on a terminal (unless only standard input is searched), with
    // --column or --vimgrep, and always in JSON.
    let line_number = if args.line_number || args.no_line_number {
        args.line_number
    } else {
        !args.quiet
            && match output {
                OutputKind::Lines => (terminal && !only_stdin) || column,
                OutputKind::Json => true,
                _ => false,
            }
    };
    let sort = match (args.sort, args.sortr) {
        (Some(by), _) => sort_by(by, false),
        (_, Some(by)) => sort_by(by, true),
        _ => None,
    };
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
        multiline: args.multiline,
        pcre2: args.pcre2,
        search_zip: args.search_zip,
        walk: quarry_grep::WalkRules {
            hidden: args.hidden || args.unrestricted >= 2,
            no_ignore: args.no_ignore || args.unrestricted >= 1,
            binary: args.text || args.unrestricted >= 3,
            follow: args.follow,
        },
        globs: args.globs,
        iglobs: args.iglobs,
        glob_case_insensitive: args.glob_case_insensitive,
        types: args.type_rules,
        language: args.lang,
        line_number,
        column,
        before_context: args.before_context.unwrap_or(context),
        after_context: args.after_context.unwrap_or(context),
        output,
        quiet: args.quiet,
        vimgrep: args.vimgrep,
        with_filename: match (args.with_filename, args.no_filename) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        null: args.null,
        trim: args.trim,
        sort,
        max_count: args.max_count,
        max_files: args.max_files,
        heading: terminal && !args.json && !args.vimgrep,
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
    // same bytes either way. Standard input is this process's to read: never asked there.
    let asked = GrepRequest {
        base: Some(std::env::current_dir()?),
        ..request.clone()
    };
    // It writes into this process's standard output itself (nothing is buffered in `out` yet).
    let answered = match request.reads_stdin() {
        true => None,
        false => {
            use std::os::fd::AsFd;
            quarry_daemon::client::grep(dir, &asked, std::io::stdout().as_fd())?
        }
    };
    let (stats, filter) = match answered {
        Some(answer) => answer,
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
    // printed, and the exit status is 2 — but 0 with -q when something matched.
    for error in &stats.errors {
        eprintln!("quarry grep: {error}");
    }
    let matched = stats.matched_files > 0;
    if matched && (args.quiet || stats.errors.is_empty()) {
        return Ok(());
    }
    if !stats.errors.is_empty() {
        std::process::exit(exit_code::ERROR);
    }
    std::process::exit(exit_code::NOTHING_FOUND);
}

/// The request's order for `--sort`/`--sortr BY` (`none`: path order).
fn sort_by(by: SortArg, reverse: bool) -> Option<Sort> {
    let by = match by {
        SortArg::None => return None,
        SortArg::Path => SortBy::Path,
        SortArg::Modified => SortBy::Modified,
        SortArg::Accessed => SortBy::Accessed,
        SortArg::Created => SortBy::Created,
    };
    Some(Sort { by, reverse })
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
        if stats.answer_bytes_spent {
            eprintln!(
                "quarry sg: the answer holds at most {} MiB of matches; later ones are counted, not shown (narrow the pattern or the paths)",
                quarry_grep::structural::MAX_ANSWER_BYTES >> 20
            );
        }
        if stats.text_budget_spent {
            eprintln!(
                "quarry sg: the matches' text passed {} MiB; later matches show their first lines only (their line ranges are whole)",
                quarry_grep::structural::MAX_ANSWER_TEXT >> 20
            );
        }
    }
    if !found {
        std::process::exit(exit_code::NOTHING_FOUND);
    }
    Ok(())
}
