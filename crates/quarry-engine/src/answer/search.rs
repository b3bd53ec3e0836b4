//! A search's answer: ranked chunks, what was searched, and the reports of the stages that
//! made it (route, rerank, agentic). Plain data, serialised as docs/JSON.md documents it;
//! every stage above builds it, every interface returns it.

use std::collections::HashMap;

use quarry_core::{ChunkHit, CodeSpan, Coverage, Language};
/// The parts of an answer quarry-rank defines: how a score was made, the query plan, the file
/// ranking with each file's evidence.
pub use quarry_rank::{
    ChangedDefinition, FileRole, FileScoreParts, Mention, QueryPlan, RankedFile, ScoreParts,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::reports::{AgenticReport, RerankReport, RouteReport};

/// How results are retrieved.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 over code-aware tokens.
    Lexical,
    /// Nearest neighbours of the query's embedding.
    Semantic,
    /// Both, fused by the query plan (see `fusion`).
    Hybrid,
    /// Hybrid when the workspace has a model and vectors, else lexical; through
    /// `search_routed` (every interface), the router picks an exact engine first when the
    /// query is a name, a path, literal text, a regex or a structural pattern.
    #[default]
    Auto,
}

/// One ranked chunk.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    /// Stable across re-indexing while the chunk is unchanged: `repo:path:start-end`
    /// (`repo:path#page=N:start-end` on a PDF page, `#cell=N` in a notebook cell).
    pub id: String,
    pub repo: String,
    pub path: String,
    /// Lines within the file, or within `page` / `cell` when one is set.
    pub start_line: u32,
    pub end_line: u32,
    /// The PDF page (1-based).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub page: Option<u32>,
    /// The notebook cell (1-based).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cell: Option<u32>,
    pub symbol: Option<String>,
    pub kind: String,
    pub language: Language,
    pub score: f64,
    /// The chunk's lines; `None` past the request's `full_text` results.
    #[serde(default)]
    pub text: Option<String>,
    /// Set when `text` was cut to the answer's byte budget: the chunk's full size in bytes
    /// (the lines are in the file, `start_line`-`end_line`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text_cut_from: Option<usize>,
    /// How a hybrid score was made.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub score_parts: Option<ScoreParts>,
    /// Why an exact route put the result here (a definition's evidence, the matched line,
    /// the path): what its `score` stands for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// The result's lines holding most of the query's words (at most
    /// [`MAX_MATCHED_LINES`], in line order, each cut to [`MAX_MATCHED_LINE_BYTES`]): what a
    /// reader looks at first, kept when `text` is not.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub matched_lines: Vec<MatchedLine>,
    /// Further lines of the result holding a query word, beyond `matched_lines`.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub more_matched: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One line of a result that holds some of the query's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchedLine {
    /// Its line number (in the file, or the page or cell the result is in).
    pub line: u32,
    pub text: String,
    /// `text` in coloured spans, as the file view draws it (read in the context of the whole
    /// result, so a line inside a string or comment is coloured as one); only when asked.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub spans: Vec<CodeSpan>,
}

/// Whether a line's token is the query's term or a form of it, as the stemmed index matched
/// it (`cached` for `cache`, `numbers` for `number`, `caching` for `cached`): the same word, or
/// a shared start of four or more characters that leaves at most three of the longer.
fn same_word(term: &str, token: &str) -> bool {
    if term == token {
        return true;
    }
    let shared = term
        .bytes()
        .zip(token.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    shared >= 4 && shared + 3 >= term.len().max(token.len())
}

/// Lines a result shows as its matches.
pub const MAX_MATCHED_LINES: usize = 3;
/// Bytes of a matched line kept.
pub const MAX_MATCHED_LINE_BYTES: usize = 240;

/// Marks each result's lines that hold the query's words (`matched_lines`, `more_matched`),
/// from its text, before later results give their text up: the lines with the most distinct
/// query terms (code-aware tokens, stop words aside) first, shown in line order. A snippet
/// of a chunk's first lines said nothing of why it matched (a mention on line 40). With
/// `colour`, each line also carries its colour spans, highlighted with the whole result.
pub fn mark_matched_lines(results: &mut [SearchResult], query: &str, colour: bool) {
    let terms = quarry_core::tokens::query_terms(query);
    if terms.is_empty() {
        return;
    }
    let mut look = LineLook::new(&terms);
    for r in results.iter_mut() {
        let Some(text) = r.text.as_deref() else {
            continue;
        };
        let mut holding: Vec<(usize, u32, &str)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if !look.may_match(line) {
                continue;
            }
            let mut found: Vec<&str> = Vec::new();
            quarry_core::tokens::for_each_token(line, |t| {
                if let Some(term) = terms.iter().find(|term| same_word(term, t)) {
                    if !found.contains(&term.as_str()) {
                        found.push(term.as_str());
                    }
                }
            });
            if !found.is_empty() {
                holding.push((found.len(), r.start_line + i as u32, line));
            }
        }
        // Most terms first, then the earlier line.
        holding.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        r.more_matched = holding.len().saturating_sub(MAX_MATCHED_LINES) as u32;
        holding.truncate(MAX_MATCHED_LINES);
        holding.sort_by_key(|h| h.1);
        let coloured = colour
            .then(|| quarry_chunk::highlight::highlight(r.language, text))
            .flatten();
        r.matched_lines = holding
            .into_iter()
            .map(|(_, line, text)| {
                let mut end = text.len().min(MAX_MATCHED_LINE_BYTES);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let spans = coloured
                    .as_ref()
                    .and_then(|lines| lines.get((line - r.start_line) as usize))
                    .map(|spans| spans_cut_at(spans, end))
                    .unwrap_or_default();
                MatchedLine {
                    line,
                    text: text[..end].to_string(),
                    spans,
                }
            })
            .collect();
    }
}

/// A look at a line before it is tokenized. A token `same_word` to a term begins with the
/// term's first max(4, len - 3) bytes (all of a shorter term), and every token of an ASCII line
/// is a run of its squeezed letters: a line whose squeezed letters hold none of these starts
/// matches no term. Most lines of a result match none.
struct LineLook<'t> {
    starts: Vec<memchr::memmem::Finder<'t>>,
    squeezed: Vec<u8>,
}

impl<'t> LineLook<'t> {
    fn new(terms: &'t [String]) -> Self {
        let starts = terms
            .iter()
            .map(|t| {
                let b = t.as_bytes();
                memchr::memmem::Finder::new(&b[..b.len().min(b.len().saturating_sub(3).max(4))])
            })
            .collect();
        Self {
            starts,
            squeezed: Vec::new(),
        }
    }

    /// False only when no token of `line` can be `same_word` to a term.
    fn may_match(&mut self, line: &str) -> bool {
        !quarry_core::tokens::squeeze_ascii(line, &mut self.squeezed)
            || self.starts.iter().any(|s| s.find(&self.squeezed).is_some())
    }
}

/// The first `end` bytes of a line given as `spans` (`end` on a character boundary).
fn spans_cut_at(spans: &[CodeSpan], end: usize) -> Vec<CodeSpan> {
    let mut kept = Vec::new();
    let mut at = 0;
    for span in spans {
        if at >= end {
            break;
        }
        let mut take = span.text.len().min(end - at);
        while !span.text.is_char_boundary(take) {
            take -= 1;
        }
        kept.push(CodeSpan {
            text: span.text[..take].to_string(),
            class: span.class.clone(),
        });
        at += span.text.len();
    }
    kept
}

impl From<ChunkHit> for SearchResult {
    fn from(h: ChunkHit) -> Self {
        SearchResult {
            id: format!(
                "{}:{}{}:{}-{}",
                h.repo,
                h.path,
                location(h.page, h.cell),
                h.start_line,
                h.end_line
            ),
            repo: h.repo,
            path: h.path,
            start_line: h.start_line,
            end_line: h.end_line,
            page: h.page,
            cell: h.cell,
            symbol: h.symbol,
            kind: h.kind,
            language: h.language,
            score: h.score,
            text: Some(h.text),
            text_cut_from: None,
            score_parts: None,
            reason: None,
            matched_lines: Vec::new(),
            more_matched: 0,
        }
    }
}

impl SearchResult {
    /// Where the chunk is, written after its path: `:12-40` (lines), `#page=3` (a PDF page;
    /// its lines mean little to a reader), `#cell=2:1-9` (lines of a notebook cell).
    pub fn position(&self) -> String {
        match self.page {
            Some(_) => location(self.page, None),
            None => format!(
                "{}:{}-{}",
                location(None, self.cell),
                self.start_line,
                self.end_line
            ),
        }
    }
}

/// Where in a file a chunk sits beyond its lines: `#page=N` (a PDF page, as viewers take it
/// after a file name), `#cell=N` (a notebook cell), or nothing.
pub fn location(page: Option<u32>, cell: Option<u32>) -> String {
    match (page, cell) {
        (Some(page), _) => format!("#page={page}"),
        (None, Some(cell)) => format!("#cell={cell}"),
        (None, None) => String::new(),
    }
}

/// What was searched: lets a caller judge how complete and fresh the answer is.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct IndexSummary {
    pub repos: Vec<String>,
    pub files: u64,
    pub chunks: u64,
    /// When the most recently indexed of the searched repos finished (RFC 3339), if any did.
    pub indexed_at: Option<String>,
    /// Files skipped by the last runs, all reasons together.
    pub skipped: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchResponse {
    pub query: String,
    pub mode: Mode,
    pub results: Vec<SearchResult>,
    pub index: IndexSummary,
    /// Embedded vs all chunks of the searched repos (semantic and hybrid modes): a search
    /// during backfill uses what is embedded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub coverage: Option<Coverage>,
    /// The query plan (hybrid mode, or with `explain`): identifiers, file hints, terms; with
    /// `explain` also what a whole issue text's frames, code and module paths name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub plan: Option<QueryPlan>,
    /// The file ranking behind the results, with each file's evidence (with `explain`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub files: Vec<RankedFile>,
    /// What went wrong but did not stop the search (an unreachable embedding endpoint: the
    /// answer is lexical then).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
    /// Whether a language model reordered the results (`--rerank llm`), and how.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rerank: Option<RerankReport>,
    /// The follow-up rounds of an agentic search (`--agentic`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub agentic: Option<AgenticReport>,
    /// What the router took the query for and which engine answered (`auto` mode).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub route: Option<RouteReport>,
}

/// A file ranked by its best chunk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileResult {
    pub repo: String,
    pub path: String,
    pub score: f64,
}

/// Distinct files in the order of their best chunk.
pub fn rank_files(results: &[SearchResult]) -> Vec<FileResult> {
    let mut seen: HashMap<(&str, &str), ()> = HashMap::new();
    let mut files = Vec::new();
    for r in results {
        if seen.insert((&r.repo, &r.path), ()).is_none() {
            files.push(FileResult {
                repo: r.repo.clone(),
                path: r.path.clone(),
                score: r.score,
            });
        }
    }
    files
}

/// Bytes of chunk text one result carries at most, and one answer in all: a chunk is about
/// 4 KB (quarry-chunk's `max_bytes`), but a file of very long lines can make one far bigger,
/// and an agent pays for every byte of an answer.
pub const MAX_RESULT_TEXT_BYTES: usize = 8 * 1024;
pub const MAX_ANSWER_TEXT_BYTES: usize = 64 * 1024;

/// An answer's results as a request asks for them: at most `limit`, only the first
/// `full_text` with their text, and those within the text budget (`fit_to_budget`).
pub fn fit_to_request(results: &mut Vec<SearchResult>, limit: usize, full_text: usize) {
    results.truncate(limit);
    for r in results.iter_mut().skip(full_text) {
        r.text = None;
    }
    fit_to_budget(results);
}

/// Cuts each result's text to `MAX_RESULT_TEXT_BYTES` and the answer's to
/// `MAX_ANSWER_TEXT_BYTES` (later results lose their text first), at a character boundary,
/// recording the full size in `text_cut_from`.
pub fn fit_to_budget(results: &mut [SearchResult]) {
    let mut left = MAX_ANSWER_TEXT_BYTES;
    for r in results.iter_mut() {
        let Some(text) = r.text.as_mut() else {
            continue;
        };
        let allowed = MAX_RESULT_TEXT_BYTES.min(left);
        if text.len() > allowed {
            let mut end = allowed;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            r.text_cut_from = Some(text.len());
            text.truncate(end);
        }
        left -= text.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(text: &str) -> SearchResult {
        SearchResult {
            id: "r:a.py:1-1".into(),
            repo: "r".into(),
            path: "a.py".into(),
            start_line: 1,
            end_line: 1,
            page: None,
            cell: None,
            symbol: None,
            kind: "text".into(),
            language: Language::Python,
            score: 1.0,
            text: Some(text.to_string()),
            text_cut_from: None,
            score_parts: None,
            reason: None,
            matched_lines: Vec::new(),
            more_matched: 0,
        }
    }

    #[test]
    fn a_result_shows_the_lines_holding_the_query_words() {
        let body: String = (1..=40)
            .map(|n| match n {
                7 => "    user = load_user(name)\n".to_string(),
                30 => "    cache.user_name = user.name  # the user name\n".to_string(),
                35 => "    log(user)\n".to_string(),
                36 => "    log(user)\n".to_string(),
                _ => format!("    x{n} = {n}\n"),
            })
            .collect();
        let mut results = vec![result(&body)];
        results[0].start_line = 101;
        mark_matched_lines(&mut results, "where is the user name read", false);
        let lines: Vec<u32> = results[0].matched_lines.iter().map(|m| m.line).collect();
        // Line 30 holds both words; three lines shown in order, one more counted.
        assert_eq!(lines, vec![107, 130, 135]);
        assert_eq!(results[0].more_matched, 1);
        assert!(results[0].matched_lines[1].text.contains("user_name"));
        // A word as the stemmed index matched it.
        let mut results = vec![result("    self._cache_numbers = {}\n    return 1\n")];
        mark_matched_lines(&mut results, "how are numbers cached", false);
        assert_eq!(results[0].matched_lines.len(), 1);
        assert!(same_word("caching", "cached") && !same_word("cat", "cats"));
        // No query word: nothing marked.
        let mut results = vec![result("fn f() {}\n")];
        mark_matched_lines(&mut results, "database migration", false);
        assert!(results[0].matched_lines.is_empty());
    }

    /// The look before tokenizing never passes over a line a term matches.
    #[test]
    fn the_look_before_tokenizing_skips_no_matching_line() {
        let terms: Vec<String> = [
            "user",
            "name",
            "cached",
            "spawnblocking",
            "spawn",
            "db",
            "numbers",
        ]
        .map(String::from)
        .to_vec();
        let lines = [
            "    self._cache_numbers = {}",
            "let h = tokio::task::spawn_blocking(move || db.get());",
            "USER_NAME = 'x'  # the user's names",
            "caching users in the DB",
            "nothing to see here",
            "SpawnBlocking::new()",
            "spawned by numb",
            "naïve user",
            "",
        ];
        let mut look = LineLook::new(&terms);
        let mut skipped = 0;
        for line in lines {
            let mut matches = false;
            quarry_core::tokens::for_each_token(line, |t| {
                matches |= terms.iter().any(|term| same_word(term, t));
            });
            if !look.may_match(line) {
                skipped += 1;
                assert!(!matches, "{line:?} matches a term but was skipped");
            }
        }
        assert_eq!(skipped, 2, "the look skips the lines that match nothing");
    }

    #[test]
    fn answers_are_cut_to_their_byte_budget_at_character_boundaries_and_say_so() {
        // Multi-byte characters, so a cut in the middle of one must step back.
        let long = "é".repeat(MAX_RESULT_TEXT_BYTES); // twice the per-result budget
        let mut results: Vec<SearchResult> = (0..12).map(|_| result(&long)).collect();
        results.insert(0, result("short"));
        fit_to_budget(&mut results);
        assert_eq!(results[0].text.as_deref(), Some("short"));
        assert_eq!(results[0].text_cut_from, None);
        assert_eq!(results[1].text_cut_from, Some(long.len()));
        assert!(results[1].text.as_ref().unwrap().len() <= MAX_RESULT_TEXT_BYTES);
        let total: usize = results.iter().map(|r| r.text.as_ref().unwrap().len()).sum();
        assert!(total <= MAX_ANSWER_TEXT_BYTES, "{total}");
        assert_eq!(results.last().unwrap().text.as_deref(), Some(""));
    }
}
