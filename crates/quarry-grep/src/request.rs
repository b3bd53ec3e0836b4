//! What one `quarry grep` asks: ripgrep's flags as plain data. The request travels whole to
//! the workspace daemon (serde), so every field a flag sets lives here, and fields added later
//! default to ripgrep's default when an older client leaves them out.

use std::path::PathBuf;

use quarry_core::Language;

use crate::listing::WalkRules;
use crate::literals::{requirement, PatternSyntax, Requirement};
use crate::types::TypeRule;

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
    /// The files that would be searched, nothing searched (`--files`).
    Files,
}

/// The order files are printed in (`--sort`, `--sortr`). Without one, and with `--sort path`,
/// folders' files come in path order (quarry's order is always deterministic, where
/// ripgrep's unsorted parallel order is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sort {
    pub by: SortBy,
    /// Descending (`--sortr`).
    pub reverse: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SortBy {
    Path,
    Modified,
    Accessed,
    Created,
}

/// One `quarry grep`.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct GrepRequest {
    /// Patterns; a line matches if any matches (`-e` repeated).
    pub patterns: Vec<String>,
    /// Files and folders to search; `-` is standard input; empty: the current folder, printed
    /// without `./`.
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
    /// Matches may span lines (`-U`).
    #[serde(default)]
    pub multiline: bool,
    /// Patterns are PCRE2 regexes (`-P`).
    #[serde(default)]
    pub pcre2: bool,
    /// Compressed files (`.gz`, `.xz`, `.bz2`, …) are searched decompressed, by the external
    /// commands ripgrep runs (`-z`).
    #[serde(default)]
    pub search_zip: bool,
    /// What the walk skips and reads (`--hidden`, `-u`, `--no-ignore`, `-L`).
    #[serde(default)]
    pub walk: WalkRules,
    /// Include or exclude paths (`-g`, `!` excludes), with ripgrep's glob rules.
    pub globs: Vec<String>,
    /// Globs matched without regard to case (`--iglob`).
    #[serde(default)]
    pub iglobs: Vec<String>,
    /// Every glob matched without regard to case (`--glob-case-insensitive`).
    #[serde(default)]
    pub glob_case_insensitive: bool,
    /// ripgrep's file types (`-t`, `-T`), in command-line order.
    #[serde(default)]
    pub types: Vec<TypeRule>,
    /// Only files of this language (quarry's detection by name, `--lang`).
    pub language: Option<Language>,
    pub line_number: bool,
    /// Print the column of the first match (`--column`).
    #[serde(default)]
    pub column: bool,
    pub before_context: usize,
    pub after_context: usize,
    pub output: OutputKind,
    /// Print nothing; the exit status says whether something matched (`-q`).
    #[serde(default)]
    pub quiet: bool,
    /// Every match on a line of its own, with its file, line and column (`--vimgrep`).
    #[serde(default)]
    pub vimgrep: bool,
    /// Print the file's name with each line (`-H`: yes, `-I`: no); none: when more than one
    /// file may be searched, as ripgrep decides.
    #[serde(default)]
    pub with_filename: Option<bool>,
    /// End printed paths with a NUL byte instead of `:` or a line end (`-0`).
    #[serde(default)]
    pub null: bool,
    /// Leading ASCII white space is not printed (`--trim`).
    #[serde(default)]
    pub trim: bool,
    /// The order of files (`--sort`, `--sortr`); none: path order.
    #[serde(default)]
    pub sort: Option<Sort>,
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

impl GrepRequest {
    /// What the patterns require of a file's text (for the index's pre-filter).
    pub fn requirement(&self) -> Requirement {
        // Inverted, or listing the files without a match: a file with none of the pattern's
        // text is an answer too, so the index can rule nothing out. A PCRE2 pattern is not
        // regex-syntax's language (lookarounds, `\Q…\E`, backreferences): read as a literal
        // only with -F.
        if self.invert_match
            || self.output == OutputKind::FilesWithoutMatch
            || self.output == OutputKind::Files
            || (self.pcre2 && !self.fixed_strings)
        {
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

    /// Whether standard input is among the things searched (the daemon cannot read it).
    pub fn reads_stdin(&self) -> bool {
        self.output != OutputKind::Files && self.paths.iter().any(|p| p.as_os_str() == "-")
    }

    /// Whether a match is possible at all (ripgrep searches nothing when not: `-m 0`).
    pub(crate) fn matches_possible(&self) -> bool {
        self.max_count != Some(0)
    }
}
