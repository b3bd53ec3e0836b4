//! `quarry sg`: structural search with ast-grep's matcher (`def $F($$$ARGS):`,
//! `$X.unwrap()`, `console.log($$$)`) over the grammars quarry's chunker already carries.
//!
//! ast-grep-language would bring its own copy of some 25 grammars; quarry's chunker has the
//! ones it indexes, so this module only teaches ast-grep-core to use them ([`SgLanguage`]).
//! Files are listed by the same walk as `quarry grep`, and the index rules out the files that
//! lack the pattern's literal words.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use ast_grep_core::matcher::PatternBuilder;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage};
use ast_grep_core::{Pattern, PatternError};
use quarry_core::Language;
use serde::Serialize;

use crate::literals::Requirement;
use crate::request::GrepRequest;
use crate::scan::FileFilter;

/// One of quarry's languages, as ast-grep-core sees it.
#[derive(Clone)]
pub struct SgLanguage {
    language: Language,
    grammar: TSLanguage,
}

impl SgLanguage {
    pub fn new(language: Language) -> Result<Self> {
        let grammar = quarry_chunk::grammar(language).ok_or_else(|| {
            anyhow!(
                "no grammar for {}: structural search works on {}",
                language.name(),
                Language::ALL
                    .iter()
                    .filter(|l| quarry_chunk::grammar(**l).is_some())
                    .map(|l| l.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        Ok(Self { language, grammar })
    }
}

impl ast_grep_core::Language for SgLanguage {
    fn kind_to_id(&self, kind: &str) -> u16 {
        self.grammar.id_for_node_kind(kind, true)
    }
    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.grammar.field_id_for_name(field).map(|f| f.get())
    }
    /// Where `$` cannot start an identifier, metavariables are rewritten to a character that
    /// can (ast-grep-language's choices, per language).
    fn expando_char(&self) -> char {
        quarry_chunk::metavariable_char(self.language).unwrap_or('$')
    }

    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        let expando = self.expando_char();
        if expando == '$' {
            return Cow::Borrowed(query);
        }
        Cow::Owned(replace_sigils(expando, query))
    }
    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, self.clone()))
    }
}

impl LanguageExt for SgLanguage {
    fn get_ts_language(&self) -> TSLanguage {
        self.grammar.clone()
    }
}

/// `$A`, `$$A`, `$$$A` and `$$$` with `expando` for `$` (ast-grep-language's rule: a `$`
/// before a capital or `_`, or three in a row, is a metavariable's).
fn replace_sigils(expando: char, query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    let mut dollars = 0;
    for c in query.chars() {
        if c == '$' {
            dollars += 1;
            continue;
        }
        let sigil = if c.is_ascii_uppercase() || c == '_' || dollars == 3 {
            expando
        } else {
            '$'
        };
        out.extend(std::iter::repeat_n(sigil, dollars));
        dollars = 0;
        out.push(c);
    }
    let sigil = if dollars == 3 { expando } else { '$' };
    out.extend(std::iter::repeat_n(sigil, dollars));
    out
}

/// A Python block header alone (`def $F($$$ARGS):`, `class $C:`, `with $X as $Y:`) is not
/// a statement tree-sitter can parse, so it would match nothing; it is completed with an
/// anonymous body (`$$$`), and matches the whole block — what a reader of the pattern means.
fn complete_block_header(pattern: &str, language: Language) -> String {
    let trimmed = pattern.trim_end();
    if language == Language::Python && trimmed.ends_with(':') && !trimmed.contains('\n') {
        format!("{trimmed} $$$")
    } else {
        pattern.to_string()
    }
}

/// One structural match.
#[derive(Debug, Clone, Serialize)]
pub struct SgMatch {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    /// The matched code.
    pub text: String,
    /// Each named metavariable's text (`$$$ARGS`: the source from its first to last node).
    pub captures: BTreeMap<String, String>,
    /// The text or a capture was longer than [`MAX_MATCH_TEXT`] bytes and was cut there (the
    /// lines say where the whole match is).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Bytes of a match's text (and of each capture) returned. A pattern such as `{ $$$A }`
/// matches every nested block of a file, each containing the next: without a cut, 100,000
/// nested braces made matches of 10 GB.
pub const MAX_MATCH_TEXT: usize = 64 << 10;

/// Bytes of match text (texts and captures together) one answer carries: past them, each
/// match keeps a head of [`HEAD_TEXT`] bytes. The answer's memory is then bounded by bytes, not
/// by the count a client asks for (`sg -k 10000` of `{ $$$A }` over 100,000 nested braces had
/// taken 1.3 GB, 64 KB a match).
pub const MAX_ANSWER_TEXT: usize = 4 << 20;

/// What a match's text (or capture) keeps once the answer's budget is spent: its first line
/// or so, enough to say which match it is (its lines say where the whole one is).
pub const HEAD_TEXT: usize = 240;

/// Bytes all of an answer's matches hold together (their texts, captures, paths and the
/// structures around them). The text budget bounds the texts but not their number: `$A`
/// matches every node, and `sg '$A' -k 1000` over sympy built up to 1,000 matches in each of
/// its 1,500 files before the limit was applied (1.2 GB; `-k 100000` 4.9 GB, and an HTTP
/// server answering four such requests aborted). Past this, matches are counted, not built.
pub const MAX_ANSWER_BYTES: usize = 48 << 20;

/// What an answer has left to spend, shared by the threads that build its matches: bytes of
/// text (past them, heads only) and bytes held in all (past them, matches are only counted).
struct TextBudget {
    text: std::sync::atomic::AtomicUsize,
    held: std::sync::atomic::AtomicUsize,
    /// Some match was counted and not built because `held` was spent.
    held_spent: std::sync::atomic::AtomicBool,
}

impl TextBudget {
    fn new(held: usize) -> Self {
        TextBudget {
            text: std::sync::atomic::AtomicUsize::new(MAX_ANSWER_TEXT),
            held: std::sync::atomic::AtomicUsize::new(held),
            held_spent: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Takes `bytes` from what the answer may hold; false (and nothing taken) when they are
    /// not there.
    fn hold(&self, bytes: usize) -> bool {
        use std::sync::atomic::Ordering;
        let taken = self
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .is_ok();
        if !taken {
            self.held_spent.store(true, Ordering::Relaxed);
        }
        taken
    }

    /// Whether matches were left unbuilt because the answer held all it may.
    fn held_spent(&self) -> bool {
        self.held_spent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `text` cut to what the budget grants (at most [`MAX_MATCH_TEXT`], at least a head of
    /// [`HEAD_TEXT`]) at a character boundary; whether it was cut.
    fn cut(&self, text: &str) -> (String, bool) {
        use std::sync::atomic::Ordering;
        let wanted = text.len().min(MAX_MATCH_TEXT);
        let before = self
            .text
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(wanted))
            })
            .unwrap_or(0);
        let keep = wanted.min(before).max(HEAD_TEXT.min(text.len()));
        if keep >= text.len() {
            return (text.to_string(), false);
        }
        let mut end = keep;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (text[..end].to_string(), true)
    }

    fn spent(&self) -> bool {
        self.text.load(std::sync::atomic::Ordering::Relaxed) == 0
    }
}

/// What an `sg` search did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SgStats {
    pub files: usize,
    pub ruled_out: usize,
    pub searched: usize,
    pub matches: usize,
    /// Matches not returned because of the limit.
    pub left_out: usize,
    /// The answer's text budget ([`MAX_ANSWER_TEXT`]) was spent: later matches carry only
    /// the head of their text (`truncated`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub text_budget_spent: bool,
    /// The answer held all the bytes it may ([`MAX_ANSWER_BYTES`]): later matches were
    /// counted (`matches`, `left_out`) but not returned, whatever the limit.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub answer_bytes_spent: bool,
    /// What is wrong with a pattern that compiled but may not mean what it says (it does not
    /// parse as whole code of its language), as ast-grep warns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The words a structural pattern's matches must contain: its identifiers and keywords of
/// three or more characters, metavariables aside (leaf nodes match by their exact text).
pub fn requirement(pattern: &str) -> Requirement {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut metavariable = false;
    for c in pattern.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !metavariable && word.chars().count() >= 3 {
            words.push(Requirement::Contains(std::mem::take(&mut word)));
        }
        word.clear();
        metavariable = c == '$';
    }
    match words.len() {
        0 => Requirement::Anything,
        1 => words.pop().unwrap_or(Requirement::Anything),
        _ => Requirement::All(words),
    }
}

/// Whether `pattern` parses as whole code of `language` (its grammar compiles it, with no
/// ERROR node): the languages a pattern may be meant in, when none is named.
pub fn parses_as(pattern: &str, language: Language) -> bool {
    let Ok(lang) = SgLanguage::new(language) else {
        return false;
    };
    let pattern = complete_block_header(pattern, language);
    Pattern::try_new(&pattern, lang).is_ok_and(|p| !p.has_error())
}

/// Searches `paths` (the current folder when empty) for `pattern` in `language`'s files; at
/// most `limit` matches are returned, in path then position order.
pub fn search(
    pattern: &str,
    language: Language,
    paths: &[PathBuf],
    filter: &dyn FileFilter,
    limit: usize,
    listing_cache: Option<&Path>,
) -> Result<(Vec<SgMatch>, SgStats)> {
    search_holding(
        pattern,
        language,
        paths,
        filter,
        limit,
        listing_cache,
        MAX_ANSWER_BYTES,
    )
}

/// [`search`] with the answer's bytes bounded by `held` instead of [`MAX_ANSWER_BYTES`]: a
/// caller that keeps a few hundred matches of the answer (the search route, whose answers are
/// cut to 64 KB) holds far less while it searches.
pub fn search_holding(
    pattern: &str,
    language: Language,
    paths: &[PathBuf],
    filter: &dyn FileFilter,
    limit: usize,
    listing_cache: Option<&Path>,
    held: usize,
) -> Result<(Vec<SgMatch>, SgStats)> {
    if pattern.trim().is_empty() {
        bail!("empty pattern: give code with metavariables, e.g. 'def $F($$$ARGS):'");
    }
    let lang = SgLanguage::new(language)?;
    let pattern = &complete_block_header(pattern, language);
    let compiled = Pattern::try_new(pattern, lang.clone()).map_err(|e| {
        // ast-grep reports the pattern as it parsed it, metavariables rewritten (`µA`): say
        // it as the user wrote it.
        let expando = ast_grep_core::Language::expando_char(&lang);
        let said = e.to_string().replace(expando, "$");
        anyhow!("invalid {} pattern {pattern:?}: {said}", language.name())
    })?;
    let request = GrepRequest {
        patterns: vec![String::new()],
        paths: paths.to_vec(),
        language: Some(language),
        listing_cache: listing_cache.map(Path::to_path_buf),
        ..Default::default()
    };
    let listed = crate::targets::list_files(&request, &crate::Cold)?;
    if let Some(error) = listed.errors.first() {
        anyhow::bail!("{error}");
    }
    let targets = listed.targets;
    let budget = TextBudget::new(held);
    let (found, ruled_out) =
        crate::scan::search_targets(&targets, filter, &crate::Cold, |target, _| {
            let (matches, count) = match_file(&target.path, &compiled, &lang, limit, &budget);
            (count > 0).then_some((matches, count))
        })?;
    let mut stats = SgStats {
        files: targets.len(),
        ruled_out,
        warning: compiled.has_error().then(|| {
            format!(
                "the pattern {pattern:?} does not parse as {} code (it has an ERROR node), so it may match nothing or not what you mean; give a whole expression or statement, with metavariables for the parts that vary (e.g. `$X.unwrap()`)",
                language.name()
            )
        }),
        ..Default::default()
    };
    stats.searched = stats.files - stats.ruled_out;
    let mut matches = Vec::new();
    for (found, count) in found.into_iter().flatten() {
        stats.matches += count;
        matches.extend(found);
    }
    stats.left_out = stats.matches.saturating_sub(limit);
    matches.truncate(limit);
    stats.text_budget_spent = budget.spent();
    // Said only where it cut the answer (files past the limit may have spent the bytes).
    stats.answer_bytes_spent = budget.held_spent() && matches.len() < limit.min(stats.matches);
    stats.left_out = stats.matches.saturating_sub(matches.len());
    Ok((matches, stats))
}

/// A file's first `limit` matches and how many it has in all; a file that cannot be read as
/// text has none (binary files are skipped, as `quarry grep` skips them). Matches past the
/// limit are counted, never built.
fn match_file(
    path: &Path,
    pattern: &Pattern,
    lang: &SgLanguage,
    limit: usize,
    budget: &TextBudget,
) -> (Vec<SgMatch>, usize) {
    let Ok(bytes) = std::fs::read(path) else {
        return (Vec::new(), 0);
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return (Vec::new(), 0);
    }
    let Ok(source) = String::from_utf8(bytes) else {
        return (Vec::new(), 0);
    };
    let root = lang.ast_grep(&source);
    let top = root.root();
    let mut all = top.find_all(pattern);
    let mut built = Vec::new();
    for m in all.by_ref().take(limit) {
        let found = {
            let env = m.get_env();
            let mut captures = BTreeMap::new();
            let mut truncated = false;
            for var in env.get_matched_variables() {
                let name = match var {
                    ast_grep_core::meta_var::MetaVariable::Capture(name, _) => name,
                    ast_grep_core::meta_var::MetaVariable::MultiCapture(name) => name,
                    _ => continue,
                };
                // Borrowed from the source: only what the budget keeps is copied.
                let range = match env.get_match(&name) {
                    Some(node) => Some(node.range()),
                    None => {
                        let nodes = env.get_multiple_matches(&name);
                        match (nodes.first(), nodes.last()) {
                            (Some(first), Some(last)) => {
                                Some(first.range().start..last.range().end)
                            }
                            _ => None,
                        }
                    }
                };
                let text = range.and_then(|r| source.get(r)).unwrap_or_default();
                let (text, cut) = budget.cut(text);
                truncated |= cut;
                captures.insert(name, text);
            }
            let (text, cut) = budget.cut(&m.text());
            SgMatch {
                path: path.display().to_string(),
                start_line: m.start_pos().line() + 1,
                end_line: m.end_pos().line() + 1,
                text,
                captures,
                truncated: truncated || cut,
            }
        };
        if !budget.hold(held_bytes(&found)) {
            // The answer holds all it may: this match and the rest are counted.
            let count = built.len() + 1 + all.count();
            return (built, count);
        }
        built.push(found);
    }
    let count = built.len() + all.count();
    (built, count)
}

/// What one match holds in memory: its strings and the structures around them (a B-tree
/// entry per capture is counted as its key, its value and 64 bytes).
fn held_bytes(m: &SgMatch) -> usize {
    std::mem::size_of::<SgMatch>()
        + m.path.len()
        + m.text.len()
        + m.captures
            .iter()
            .map(|(name, text)| name.len() + text.len() + 64)
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pattern that matches every block of 40,000 nested ones, each holding the next: the
    /// limit builds 3 matches and counts the rest, and no match carries more than
    /// `MAX_MATCH_TEXT` bytes (before, each held its whole nest: 851 MB for half this nesting).
    #[test]
    fn nested_matches_are_counted_past_the_limit_and_their_text_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let braces = "{".repeat(40_000) + &"}".repeat(40_000);
        let lines: Vec<&str> = braces
            .as_bytes()
            .chunks(60)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let deep = dir.path().join("deep.rs");
        std::fs::write(&deep, format!("fn f() {{\n{}\n}}\n", lines.join("\n"))).unwrap();
        let (matches, stats) = search(
            "{ $$$A }",
            Language::Rust,
            &[deep],
            &crate::ScanAll,
            3,
            None,
        )
        .unwrap();
        assert_eq!(matches.len(), 3);
        assert!(stats.matches > 40_000, "{stats:?}");
        assert_eq!(stats.left_out, stats.matches - 3);
        assert!(matches.iter().all(|m| m.text.len() <= MAX_MATCH_TEXT
            && m.captures.values().all(|c| c.len() <= MAX_MATCH_TEXT)));
        // The outermost block is cut, and says so; a small match is whole.
        assert!(matches[0].truncated);
        // However many matches are asked for, the answer's text is bounded by bytes: the
        // budget, then a head per match.
        let (many, stats) = search(
            "{ $$$A }",
            Language::Rust,
            &[dir.path().join("deep.rs")],
            &crate::ScanAll,
            10_000,
            None,
        )
        .unwrap();
        assert_eq!(many.len(), 10_000);
        assert!(stats.text_budget_spent);
        let bytes: usize = many
            .iter()
            .map(|m| m.text.len() + m.captures.values().map(String::len).sum::<usize>())
            .sum();
        assert!(
            bytes <= MAX_ANSWER_TEXT + 10_000 * 2 * HEAD_TEXT,
            "{bytes} bytes of text"
        );
        let small = dir.path().join("small.rs");
        std::fs::write(&small, "fn g() { let x = 1; }\n").unwrap();
        let (matches, _) = search(
            "{ $$$A }",
            Language::Rust,
            &[small],
            &crate::ScanAll,
            10,
            None,
        )
        .unwrap();
        assert_eq!(matches[0].text, "{ let x = 1; }");
        assert!(!matches[0].truncated);
    }

    /// `$A` matches every node of every file: whatever the limit, the matches built across
    /// all files hold at most the answer's bytes, and the rest are counted (before, each
    /// file built up to the limit: 1.2 GB for `-k 1000` over sympy).
    #[test]
    fn an_answer_holds_at_most_its_bytes_whatever_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        for file in 0..40 {
            let body: String = (0..50)
                .map(|n| format!("def f{n}(a, b):\n    return a + b * {n}\n"))
                .collect();
            std::fs::write(dir.path().join(format!("m{file:02}.py")), body).unwrap();
        }
        let search = |limit, held| {
            search_holding(
                "$A",
                Language::Python,
                &[dir.path().to_path_buf()],
                &crate::ScanAll,
                limit,
                None,
                held,
            )
            .unwrap()
        };
        let (all, whole) = search(1_000_000, usize::MAX);
        assert!(!whole.answer_bytes_spent);
        assert_eq!(all.len(), whole.matches);
        let held = 200 << 10;
        let (some, stats) = search(1_000_000, held);
        assert!(stats.answer_bytes_spent, "{stats:?}");
        assert_eq!(stats.matches, whole.matches, "every match is still counted");
        assert_eq!(stats.left_out, stats.matches - some.len());
        assert!(!some.is_empty() && some.len() < all.len());
        let bytes: usize = some.iter().map(held_bytes).sum();
        assert!(bytes <= held, "{bytes} bytes held");
    }
}
