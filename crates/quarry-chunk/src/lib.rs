//! quarry-chunk: cuts a file into chunks and symbols.
//!
//! Chunks are the unit of retrieval: search ranks chunks, and an answer is only as good as the
//! slice of code it shows. Cutting at arbitrary line counts splits a function from its
//! signature and glues unrelated code together, so code is cut along its definitions
//! (functions, methods, classes, impls, …) using a tree-sitter syntax tree: a definition that
//! fits is one chunk, keeping its meaning together; a class too big for one chunk becomes a
//! header chunk plus one chunk per method; a function too big becomes overlapping windows that
//! all carry its name. Code between definitions (imports, statements) becomes `module` chunks.
//!
//! Symbols (every definition with its qualified name, kind, lines and signature) feed
//! navigation: summaries, symbol boosts in ranking, and "who defines X" all read them.
//!
//! Documents are cut by their headings (Markdown, reStructuredText, AsciiDoc, plain text
//! titles; a PDF's pages by the headings its extractor found, [`chunk_pdf`]); notebooks cell by
//! cell; text without headings (and any code whose parse fails) by overlapping line windows.
//! [`chunk_file`] never panics: every input, however broken, yields chunks covering each
//! non-blank line.

mod calls;
mod conditionals;
mod define_comments;
mod dialect;
pub mod highlight;
mod languages;
mod macros;
mod markdown;
mod markup;
mod notebook;
mod pdf;
mod sections;
mod tree;

pub use notebook::{notebook_cells, Cell};
pub use pdf::chunk_pdf;

use quarry_core::{Chunk, FileChunks, Language};

/// Size limits for chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkOptions {
    /// A chunk spans at most this many lines (unless one line alone is bigger).
    pub max_lines: u32,
    /// A chunk holds at most about this many bytes (a single longer line still makes a chunk).
    pub max_bytes: usize,
    /// Lines shared by consecutive windows of an oversized definition or text.
    pub window_overlap: u32,
    /// Neighbouring chunks shorter than this are merged (within the limits above).
    pub min_lines: u32,
}

impl Default for ChunkOptions {
    /// * `max_lines: 80`: most functions fit on one screen; 80 lines keeps a whole typical
    ///   definition together while staying specific enough to rank well.
    /// * `max_bytes: 4000`: about 1,000 tokens, inside small embedding models' context
    ///   (typically 512–8192 tokens) with room to spare; caps chunks of very long lines.
    /// * `window_overlap: 8`: a few lines of shared context so a statement cut at a window
    ///   boundary is whole in one of the two windows.
    /// * `min_lines: 5`: three-line getters alone embed poorly; merging such neighbours gives
    ///   each chunk enough context to be found.
    fn default() -> Self {
        ChunkOptions {
            max_lines: 80,
            max_bytes: 4000,
            window_overlap: 8,
            min_lines: 5,
        }
    }
}

impl ChunkOptions {
    /// Limits made safe to compute with (no zero-sized windows, overlap below the window).
    fn normalized(&self) -> ChunkOptions {
        let max_lines = self.max_lines.max(1);
        ChunkOptions {
            max_lines,
            max_bytes: self.max_bytes.max(1),
            window_overlap: self.window_overlap.min(max_lines - 1),
            min_lines: self.min_lines,
        }
    }
}

/// The tree-sitter grammar quarry parses `language` with, if it has one.
pub use dialect::script_language;

/// The syntax tree of a code file as the chunker parses it (its grammar, masked macros, time
/// budget); `None` without a grammar or when the parse ran out of time.
pub fn syntax_tree(language: Language, text: &str) -> Option<tree_sitter::Tree> {
    tree::syntax_tree(language, text)
}

/// The character `$` stands for in a structural pattern of `language` (see `Spec::expando`);
/// `None` where quarry has no grammar for it.
pub fn metavariable_char(language: Language) -> Option<char> {
    languages::spec(language).map(|spec| spec.expando)
}

pub fn grammar(language: Language) -> Option<tree_sitter::Language> {
    languages::spec(language).map(|spec| (spec.grammar)())
}

/// Cuts `text` (a file in `language`) into chunks and collects its symbols.
///
/// Lines are 1-based and inclusive; a chunk's text is exactly its lines joined with `\n`
/// (carriage returns of CRLF endings dropped). Never panics.
pub fn chunk_file(language: Language, text: &str, opts: &ChunkOptions) -> FileChunks {
    let opts = opts.normalized();
    let lines = Lines::new(text);
    if lines.trim(1, lines.len()).is_none() {
        return FileChunks::default();
    }
    let by_headings = |headings: Vec<sections::Heading>| {
        if headings.is_empty() {
            text_chunks(language, &lines, &opts)
        } else {
            sections::chunk(&lines, &opts, &headings, language)
        }
    };
    match language {
        Language::Markdown => markdown::chunk(&lines, &opts),
        Language::Rst => by_headings(markup::rst_headings(&lines)),
        Language::AsciiDoc => by_headings(markup::asciidoc_headings(&lines)),
        // A script without an extension (`bin/deploy` with `#!/bin/bash`) is its language's.
        Language::Text => match dialect::script_language(text) {
            Some(script) => chunk_file(script, text, &opts),
            None => by_headings(markup::text_headings(&lines)),
        },
        Language::Notebook => notebook::chunk_notebook(text, &opts),
        // A PDF's text comes page by page (`chunk_pdf`); text handed in here has no pages.
        Language::Pdf => text_chunks(Language::Pdf, &lines, &opts),
        code => {
            // The tree walk is defensive, but a bug there must cost one file its structure,
            // not the indexer its thread.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tree::chunk(code, text, &lines, &opts)
            }));
            match result {
                Ok(Some(result)) => FileChunks {
                    chunks: finish(result.pieces, &lines, code, &result.names),
                    symbols: result.symbols,
                    calls: result.calls,
                },
                _ => text_chunks(code, &lines, &opts),
            }
        }
    }
}

/// The definitions (or headings) of `text`, as `chunk_file` finds them, without making its
/// chunks: for code, one parse and one walk for definitions (no call sites).
pub fn file_symbols(language: Language, text: &str) -> Vec<quarry_core::Symbol> {
    if let Some(script) = (language == Language::Text)
        .then(|| dialect::script_language(text))
        .flatten()
    {
        return file_symbols(script, text);
    }
    if !language.is_code() {
        return chunk_file(language, text, &ChunkOptions::default()).symbols;
    }
    let lines = Lines::new(text);
    if lines.trim(1, lines.len()).is_none() {
        return Vec::new();
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tree::symbols(language, text, &lines)
    }))
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// Line windows over the whole file, kind `text`, no symbols.
pub(crate) fn text_chunks(language: Language, lines: &Lines, opts: &ChunkOptions) -> FileChunks {
    let Some((s, e)) = lines.trim(1, lines.len()) else {
        return FileChunks::default();
    };
    let ident = Ident {
        symbol: None,
        kind: "text".to_string(),
        parent: None,
        signature: None,
    };
    let pieces = windows(lines, s, e, opts)
        .into_iter()
        .map(|(start, end)| Piece {
            start,
            end,
            ident: ident.clone(),
        })
        .collect();
    FileChunks {
        chunks: finish(pieces, lines, language, &[]),
        symbols: Vec::new(),
        calls: Vec::new(),
    }
}

/// A file's lines (without `\n`, and without the `\r` of CRLF endings), with byte sizes.
pub(crate) struct Lines<'a> {
    lines: Vec<&'a str>,
    /// `prefix[i]` = total bytes of lines `0..i`.
    prefix: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Lines<'a> {
        let mut lines: Vec<&str> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        if text.ends_with('\n') || text.is_empty() {
            lines.pop();
        }
        let mut prefix = Vec::with_capacity(lines.len() + 1);
        let mut total = 0;
        prefix.push(0);
        for line in &lines {
            total += line.len();
            prefix.push(total);
        }
        Lines { lines, prefix }
    }

    /// Number of lines.
    pub(crate) fn len(&self) -> u32 {
        self.lines.len() as u32
    }

    /// Line `n` (1-based); empty outside the file.
    pub(crate) fn get(&self, n: u32) -> &'a str {
        self.lines
            .get((n as usize).wrapping_sub(1))
            .copied()
            .unwrap_or("")
    }

    pub(crate) fn is_blank(&self, n: u32) -> bool {
        self.get(n).trim().is_empty()
    }

    /// Bytes of lines `s..=e` joined with `\n`.
    pub(crate) fn bytes(&self, s: u32, e: u32) -> usize {
        let (s, e) = (s as usize, (e as usize).min(self.lines.len()));
        if s == 0 || s > e {
            return 0;
        }
        self.prefix[e] - self.prefix[s - 1] + (e - s)
    }

    /// Whether lines `s..=e` fit in one chunk.
    pub(crate) fn fits(&self, s: u32, e: u32, opts: &ChunkOptions) -> bool {
        e + 1 - s <= opts.max_lines && self.bytes(s, e) <= opts.max_bytes
    }

    /// `s..=e` without blank lines at either end; `None` when all blank.
    pub(crate) fn trim(&self, s: u32, e: u32) -> Option<(u32, u32)> {
        let e = e.min(self.len());
        let s = (s.max(1)..=e).find(|&n| !self.is_blank(n))?;
        let e = (s..=e).rev().find(|&n| !self.is_blank(n))?;
        Some((s, e))
    }

    pub(crate) fn text(&self, s: u32, e: u32) -> String {
        let (s, e) = (s.max(1) as usize, (e as usize).min(self.lines.len()));
        if s > e {
            return String::new();
        }
        self.lines[s - 1..e].join("\n")
    }
}

/// Cuts `s` to at most `max` bytes, on a character boundary.
pub(crate) fn cap(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// What a chunk is about: the chunk fields other than its range.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ident {
    pub symbol: Option<String>,
    pub kind: String,
    pub parent: Option<String>,
    pub signature: Option<String>,
}

impl Ident {
    /// Top-level code between definitions.
    pub(crate) fn module() -> Ident {
        Ident {
            symbol: None,
            kind: "module".to_string(),
            parent: None,
            signature: None,
        }
    }
}

/// A chunk before its text and symbols are filled in.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub start: u32,
    pub end: u32,
    pub ident: Ident,
}

/// A piece at one nesting level, with what merging needs to know.
pub(crate) struct Item {
    piece: Piece,
    /// Whole definitions and unsplit gaps merge; windows and pieces of a split nested
    /// definition do not (they belong to another level).
    mergeable: bool,
    /// Every piece merged into this one was shorter than `min_lines`.
    small: bool,
    /// Only closing punctuation (`}`, `});`, `end`): joins the previous piece if it fits, so
    /// a class's closing brace does not become a chunk of its own.
    trivial: bool,
}

impl Item {
    pub(crate) fn new(piece: Piece, mergeable: bool, lines: &Lines, opts: &ChunkOptions) -> Item {
        let small = piece.end + 1 - piece.start < opts.min_lines;
        let trivial = (piece.start..=piece.end).all(|n| {
            // `}  // namespace geo` and `end # class Foo` are still just closers; a comment
            // line is not.
            let line = lines.get(n).trim();
            let code = line.split("//").next().unwrap_or(line);
            let code = code.split(" #").next().unwrap_or(code).trim();
            code == "end"
                || (code.starts_with(['}', ')', ']'])
                    && !code
                        .chars()
                        .any(|c| c.is_alphanumeric() || c == '_' || c == '"' || c == '\''))
        });
        Item {
            piece,
            mergeable,
            small,
            trivial,
        }
    }
}

/// Merges tiny neighbours at one level: consecutive mergeable pieces each shorter than
/// `min_lines` join while the result fits; a trivial piece (closing braces) joins whatever
/// precedes it if the result fits. The merged piece keeps the first piece's identity, or the
/// first definition's when it starts with module-level code.
pub(crate) fn merge(items: Vec<Item>, lines: &Lines, opts: &ChunkOptions) -> Vec<Piece> {
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    for item in items {
        if let Some(last) = out.last_mut() {
            let fits = lines.fits(last.piece.start, item.piece.end, opts);
            let tiny = last.mergeable && item.mergeable && last.small && item.small;
            if fits && (tiny || item.trivial) {
                last.piece.end = item.piece.end;
                // A merged chunk is named after its first definition: `package x` or
                // imports followed by a small function is that function's chunk.
                if last.piece.ident.symbol.is_none() && item.piece.ident.symbol.is_some() {
                    last.piece.ident = item.piece.ident;
                }
                continue;
            }
        }
        out.push(item);
    }
    out.into_iter().map(|item| item.piece).collect()
}

/// Overlapping windows over `s..=e`: at most `max_lines` lines and (unless a single line is
/// bigger) `max_bytes` bytes each, consecutive windows sharing up to `window_overlap` lines
/// (at most half a window, so byte-limited windows still advance). All-blank windows are
/// skipped.
pub(crate) fn windows(lines: &Lines, s: u32, e: u32, opts: &ChunkOptions) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let e = e.min(lines.len());
    let mut cur = s.max(1);
    while cur <= e {
        let mut end = cur;
        while end < e && lines.fits(cur, end + 1, opts) {
            end += 1;
        }
        if lines.trim(cur, end).is_some() {
            out.push((cur, end));
        }
        if end >= e {
            break;
        }
        let overlap = opts.window_overlap.min((end + 1 - cur) / 2);
        cur = (end + 1 - overlap).max(cur + 1);
    }
    out
}

/// Turns pieces into chunks: text from the lines, `symbols` = names (sorted by line) whose
/// line lies inside the chunk.
pub(crate) fn finish(
    pieces: Vec<Piece>,
    lines: &Lines,
    language: Language,
    names: &[(u32, String)],
) -> Vec<Chunk> {
    pieces
        .into_iter()
        .map(|p| {
            let from = names.partition_point(|(line, _)| *line < p.start);
            let mut seen = std::collections::HashSet::new();
            let symbols: Vec<String> = names[from..]
                .iter()
                .take_while(|(line, _)| *line <= p.end)
                .filter(|(_, name)| seen.insert(name.as_str()))
                .map(|(_, name)| name.clone())
                .collect();
            Chunk {
                start_line: p.start,
                end_line: p.end,
                symbol: p.ident.symbol,
                kind: p.ident.kind,
                parent: p.ident.parent,
                signature: p.ident.signature,
                language,
                symbols,
                text: lines.text(p.start, p.end),
                page: None,
                cell: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(max_lines: u32, window_overlap: u32) -> ChunkOptions {
        ChunkOptions {
            max_lines,
            max_bytes: usize::MAX,
            window_overlap,
            min_lines: 0,
        }
    }

    #[test]
    fn lines_drop_cr_and_final_newline() {
        let lines = Lines::new("a\r\nbb\n\nccc");
        assert_eq!(lines.len(), 4);
        assert_eq!(
            (lines.get(1), lines.get(2), lines.get(4), lines.get(9)),
            ("a", "bb", "ccc", "")
        );
        assert_eq!(lines.bytes(1, 2), 4);
        assert_eq!(lines.trim(3, 3), None);
        assert_eq!(lines.text(2, 4), "bb\n\nccc");
        assert_eq!(Lines::new("x\n").len(), 1);
        assert_eq!(Lines::new("").len(), 0);
    }

    #[test]
    fn windows_overlap_and_always_advance() {
        let text = "x\n".repeat(25);
        let lines = Lines::new(&text);
        assert_eq!(
            windows(&lines, 1, 25, &opts(10, 3)),
            [(1, 10), (8, 17), (15, 24), (22, 25)]
        );
        assert_eq!(
            windows(&lines, 1, 25, &opts(10, 0)),
            [(1, 10), (11, 20), (21, 25)]
        );
        assert_eq!(windows(&lines, 5, 5, &opts(10, 3)), [(5, 5)]);
        // Byte limits shrink windows; overlap shrinks with them so windows still advance.
        let bytes = ChunkOptions {
            max_bytes: 3,
            ..opts(10, 8)
        };
        assert_eq!(windows(&lines, 1, 4, &bytes), [(1, 2), (2, 3), (3, 4)]);
        let one = ChunkOptions {
            max_bytes: 1,
            ..opts(10, 8)
        };
        assert_eq!(windows(&lines, 1, 3, &one), [(1, 1), (2, 2), (3, 3)]);
    }

    #[test]
    fn cap_respects_char_boundaries() {
        assert_eq!(cap("héllo", 2), "h");
        assert_eq!(cap("abc", 10), "abc");
    }

    #[test]
    fn a_timed_out_parse_falls_back_to_line_windows() {
        let text = "fn f() {\n    1\n}\n".repeat(50);
        tree::TEST_BUDGET.with(|b| b.set(Some(std::time::Duration::ZERO)));
        let fc = chunk_file(Language::Rust, &text, &ChunkOptions::default());
        tree::TEST_BUDGET.with(|b| b.set(None));
        assert!(fc.symbols.is_empty());
        let ranges: Vec<(u32, u32, &str)> = fc
            .chunks
            .iter()
            .map(|c| (c.start_line, c.end_line, c.kind.as_str()))
            .collect();
        assert_eq!(ranges, [(1, 80, "text"), (73, 150, "text")]);
        assert!(fc.chunks.iter().all(|c| c.language == Language::Rust));
        // And the next parse on this thread works again.
        let fc = chunk_file(Language::Rust, &text, &ChunkOptions::default());
        assert_eq!(fc.symbols.len(), 50);
    }
}
