//! What a caller asks: the search request every interface builds, the engine it may name
//! instead of the router's choice, and the checks that refuse a request before any work. Plain
//! data above the answer types; every stage below the interfaces reads it.

use anyhow::Result;
use quarry_core::store::FieldWeights;
use quarry_core::{ContentType, Language};
use quarry_rank::fusion::FusionConfig;
use quarry_rank::route::Route;
use serde::{Deserialize, Serialize};

use crate::answer::Mode;
use crate::error::bad;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchRequest {
    pub query: String,
    pub mode: Mode,
    /// The engine that answers, chosen by the caller instead of the router (`--engine`).
    pub engine: Option<Engine>,
    /// Only these repos (by name); empty for all.
    pub repos: Vec<String>,
    pub language: Option<Language>,
    /// Code, documents or both.
    pub content: ContentType,
    /// Path glob or substring.
    pub path: Option<String>,
    /// Chunks to return.
    pub limit: usize,
    /// Results that carry their text; later ones carry path, lines and symbol only, so an
    /// agent reading a long result list does not pay for text it will not read.
    pub full_text: usize,
    pub weights: FieldWeights,
    pub fusion: FusionConfig,
    /// Also return the file ranking (`files`) and every result's score parts.
    pub explain: bool,
    /// Give each matched line its colour spans (a page's snippets).
    #[serde(default)]
    pub colour_lines: bool,
    /// A name's lookup (the `symbol` route) answers its definitions, then the other places
    /// that mention it; false answers the definitions alone (go to definition: no ranked
    /// search for the mentions, a fraction of the time and the tokens).
    #[serde(default = "mentions_by_default")]
    pub mentions: bool,
}

fn mentions_by_default() -> bool {
    true
}

/// Results returned when the caller does not say, and how many of them carry their text.
pub const DEFAULT_LIMIT: usize = 16;
/// Longest query accepted (characters), for every interface: an issue's title, text and
/// stack trace fit; longer is attached logs, a mistake or an abuse, never a search (and the
/// planner's work grows with it).
pub const MAX_QUERY_CHARS: usize = 32_768;
pub const DEFAULT_FULL_TEXT: usize = 8;

/// An issue read whole (`--stdin`, `--query-file`) that is longer than [`MAX_QUERY_CHARS`],
/// cut to its head at a line end: the title, text and first stack trace come first, attached
/// logs last. `None` when it fits.
pub fn head_of_long_query(text: &str) -> Option<String> {
    if text.chars().count() <= MAX_QUERY_CHARS {
        return None;
    }
    let end = text
        .char_indices()
        .nth(MAX_QUERY_CHARS)
        .map_or(text.len(), |(at, _)| at);
    let head = &text[..end];
    // A whole last line when there is one; a single huge line is cut where it must be.
    let cut = head.rfind('\n').filter(|&at| at > 0).unwrap_or(end);
    Some(text[..cut].to_string())
}

impl SearchRequest {
    pub fn new(query: impl Into<String>) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            mode: Mode::Auto,
            repos: Vec::new(),
            language: None,
            content: ContentType::All,
            path: None,
            limit: DEFAULT_LIMIT,
            full_text: DEFAULT_FULL_TEXT,
            weights: FieldWeights::default(),
            fusion: FusionConfig::default(),
            explain: false,
            engine: None,
            colour_lines: false,
            mentions: true,
        }
    }
}

/// Refuses, saying why, a request that could only answer nothing or that would cost far more
/// than any search should: an empty or overlong query, a limit of 0, a path glob that does
/// not parse (SQLite's GLOB would silently match nothing).
pub(crate) fn check_request(request: &SearchRequest) -> Result<()> {
    if request.query.trim().is_empty() {
        return Err(bad(
            "the query is empty: give words, an identifier or an issue text",
        ));
    }
    let chars = request.query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(bad(format!(
            "the query is {chars} characters; quarry reads at most {MAX_QUERY_CHARS} — pass the issue's title, text and stack trace without attached logs"
        )));
    }
    if request.limit == 0 {
        return Err(bad(
            "a limit of 0 asks for no results: ask for 1 or more (-k, `limit`)",
        ));
    }
    if let Some(path) = request.path.as_deref() {
        if path.len() > quarry_core::glob::MAX_GLOB_BYTES {
            return Err(bad(format!(
                "the path filter is {} bytes long: at most {} (name a folder, or fewer alternatives)",
                path.len(),
                quarry_core::glob::MAX_GLOB_BYTES
            )));
        }
        if quarry_core::glob::brace_alternatives(path).is_none() {
            return Err(bad(format!(
                "the path filter `{path}` stands for more than {} paths: use fewer {{…}} alternatives",
                quarry_core::glob::MAX_ALTERNATIVES
            )));
        }
        if path.contains(['*', '?', '[']) {
            globset::Glob::new(path)
                .map_err(|e| bad(format!("the path filter `{path}` is not a valid glob: {e}")))?;
        }
    }
    Ok(())
}

/// An engine a caller can ask for by name, instead of letting the router choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// A name's definitions first, then ranked search.
    Symbol,
    /// Files whose path contains the query.
    Path,
    /// The definition enclosing `path:line` (or `path:line:column`).
    Location,
    /// Lines matching the query as a regular expression (ripgrep's syntax).
    Grep,
    /// Lines containing the query as written.
    Literal,
    /// ast-grep matches of the query as a structural pattern (`$X.unwrap()`; `language` picks
    /// the grammar, else it is guessed from the pattern).
    Structural,
    /// Ranked search only (lexical and semantic, fused).
    Ranked,
}

impl Engine {
    pub(crate) fn route(self) -> Route {
        match self {
            Engine::Symbol => Route::Symbol,
            Engine::Path => Route::Path,
            Engine::Location => Route::Location,
            Engine::Grep => Route::GrepRegex,
            Engine::Literal => Route::GrepLiteral,
            Engine::Structural => Route::Structural,
            Engine::Ranked => Route::Ranked,
        }
    }
}

/// Which of the engine's searches answers a request: the one every interface names, run by
/// `Workspace::search_as` in-process and in the workspace daemon alike.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SearchCall {
    /// `Workspace::search`: ranked search alone (the hook's question path).
    Ranked,
    /// `Workspace::search_with_settings`: the router, then the second stage the settings (or
    /// `rerank`) ask for — `quarry search`, the servers.
    Routed { rerank: Option<bool> },
    /// `Workspace::search_agentic` with the follow-up model `mode` picks.
    Agentic { mode: AgenticMode },
}

/// Where an agentic search's follow-ups come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgenticMode {
    /// The language model when llm.command or llm.endpoint is configured, else offline.
    Auto,
    /// The workspace's language model proposes them.
    Llm,
    /// The names the top results define (no model).
    Offline,
}
