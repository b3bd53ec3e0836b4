//! The service under the MCP server and the HTTP API: typed requests (their JSON schemas
//! describe MCP tools and the OpenAPI document), answered as JSON with the index's
//! freshness attached. It opens the workspace per request (a few milliseconds; readers never
//! block each other in WAL mode) and keeps the query embedder loaded across requests.

use crate::answer::{
    Answer, CommitSearch, EmbeddingJob, EmbeddingStatus, FileList, FileSummary, Freshness,
    IndexedFileEntry, Mode, RepoFiles, SearchResponse, Status, SyncAnswer, Touches,
};
use crate::embedding::{EmbedPurpose, EmbedderNote};
use crate::error::bad;
use crate::pool::{Lease, Pool};
use crate::request::{AgenticMode, Engine, SearchCall, SearchRequest};
use crate::summary;
use crate::workspace::Workspace;
use anyhow::{bail, Result};
use quarry_core::history::CommitQuery;
use quarry_core::{Embedder, Language};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::error::{is_bad_request, BadRequest};
pub use crate::request::MAX_QUERY_CHARS;
/// Results returned at most per request.
pub const MAX_LIMIT: usize = 200;
/// How long a freshness count is reused (it walks the repo's files).
const FRESHNESS_TTL: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeSearchParams {
    /// What to look for: words, identifiers, a question, an error message, or a whole issue
    /// text with its stack trace (up to 32,768 characters; POST it as JSON when it is long).
    pub query: String,
    /// lexical (BM25), semantic (embeddings), hybrid (both), or auto (hybrid when the index has vectors).
    pub mode: Option<Mode>,
    /// Only these repos (names from `status`).
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
    /// Only this language (rust, python, go, javascript, typescript, java, c, cpp, csharp, ruby, php, kotlin, swift, shell, lua, scala, dart, markdown, rst, asciidoc, text, pdf, notebook…).
    pub language: Option<String>,
    /// `code` (source files, notebooks' code cells), `docs` (Markdown, reStructuredText,
    /// AsciiDoc, text, PDF pages, notebooks' markdown cells) or `all` [default].
    #[serde(rename = "type")]
    pub content_type: Option<quarry_core::ContentType>,
    /// Only paths matching this glob (`src/**/*.rs`) or containing this text.
    pub path: Option<String>,
    /// How many chunks to return (default 16, at most 200); `k` as on the command line.
    #[serde(alias = "k")]
    pub limit: Option<usize>,
    /// Also return the query plan (what an issue's frames, code and names point at) and the
    /// file ranking with each file's evidence.
    pub explain: Option<bool>,
    /// Second stage: true has the workspace's language model (llm.command or llm.endpoint)
    /// reorder the top results, false keeps the first stage's order [default: the
    /// search.rerank setting]. A failing model leaves the first-stage order with a note.
    pub rerank: Option<bool>,
    /// Follow-up searches fused into the answer, until one finds no new file (at most 3
    /// rounds): `offline` from the names the top results define, `llm` proposed by the
    /// workspace's language model, `auto` the model when one is configured. Off when absent.
    pub agentic: Option<AgenticMode>,
    /// The engine that answers, instead of the router's choice: `grep` (regex lines, ripgrep's
    /// syntax), `literal` (lines containing the text), `structural` (ast-grep pattern such as
    /// `$X.unwrap()`; `language` picks the grammar), `symbol` (definitions first), `path`,
    /// `location` (the definition enclosing `file:line`), or `ranked`. Without it, `auto` mode routes by what the query is.
    pub engine: Option<Engine>,
    /// Give each matched line its colours as the file view draws them (`spans`), for a page
    /// that shows snippets; off by default, since an agent reads the plain `text`.
    pub colour: Option<bool>,
    /// With the `symbol` engine (or a name the router sends there): false answers the name's
    /// definitions alone, as go-to-definition does; by default its definitions come first,
    /// then the other places that mention it.
    pub mentions: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitSearchParams {
    /// What the change was about; empty lists the newest commits.
    pub query: Option<String>,
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
    /// Only commits authored on or after this date (YYYY-MM-DD or RFC 3339).
    pub since: Option<String>,
    /// Only commits authored on or before this date.
    pub until: Option<String>,
    /// Only commits whose author name or email contains this.
    pub author: Option<String>,
    /// Only commits that changed a path matching this glob (or containing this text).
    pub path: Option<String>,
    /// lexical, semantic, hybrid or auto (hybrid when the history is embedded).
    pub mode: Option<Mode>,
    /// How many commits (default 20, at most 200).
    pub limit: Option<usize>,
    /// Say how each commit was ranked (`why`: its place by words and by meaning, and the
    /// factors an issue text's search gave a commit that changed code and tests, or whose
    /// changed lines repeat the code).
    pub explain: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TouchesParams {
    /// A file or folder relative to its repo's root; `FILE::Symbol` (`src/auth.py::Session.login`) for one definition.
    pub path: String,
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
    /// Only commits authored on or after this date (YYYY-MM-DD or RFC 3339).
    pub since: Option<String>,
    /// How many commits (default 20, at most 200).
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum SummaryMode {
    /// Every definition with lines, signature and first doc line (far fewer tokens than the file).
    #[default]
    Structure,
    /// One symbol's source, what it calls and who calls it (needs `symbol`).
    Context,
    /// The file's call graph, and each function's control flow (basic blocks, labelled edges,
    /// complexity) and def-use pairs; `symbol` keeps one function.
    Extract,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummaryParams {
    /// The file: relative to an indexed repo's root, or absolute inside one.
    pub file: String,
    pub mode: Option<SummaryMode>,
    /// The definition for `context` mode (`Class.method` or a bare name); in `extract` mode,
    /// the one function whose flow to give.
    pub symbol: Option<String>,
    /// The repo holding the file (its name in `status`); the first repo that has the path
    /// when absent (two repos may both hold `README.md`).
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
}

/// A slice of a function: the lines that can change a variable at a line (backward), or
/// that the line's definitions reach (`forward`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SliceParams {
    /// The file: relative to an indexed repo's root, or absolute inside one.
    pub file: String,
    /// The line (1-based) in a function.
    pub line: u32,
    /// The variable at that line [default: every variable the line reads, or, forward,
    /// defines].
    pub var: Option<String>,
    /// What the line's definitions reach, instead of what can change the line [default:
    /// false].
    pub forward: Option<bool>,
    /// The repo holding the file (its name in `status`).
    #[serde(alias = "repo")]
    pub repos: Option<Vec<String>>,
}

fn date(s: Option<&str>, end_of_day: bool) -> Result<Option<i64>> {
    s.map(|s| crate::history::parse_date(s, end_of_day).map_err(|e| bad(format!("{e:#}"))))
        .transpose()
}

/// The number of results asked for: 0 is a mistake to say, not one result; more than
/// [`MAX_LIMIT`] is cut to it.
fn limit(asked: Option<usize>, default: usize) -> Result<usize> {
    match asked {
        Some(0) => Err(bad(format!(
            "limit must be at least 1 (and at most {MAX_LIMIT})"
        ))),
        asked => Ok(asked.unwrap_or(default).min(MAX_LIMIT)),
    }
}

fn check_query(q: &str) -> Result<()> {
    if q.chars().count() > MAX_QUERY_CHARS {
        return Err(bad(format!(
            "the query is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    Ok(())
}

struct EmbedderSlot {
    /// The stored model the slot was filled for (a re-index with another model refills it).
    stored: Option<Option<String>>,
    embedder: Option<Arc<dyn Embedder>>,
    note: Option<EmbedderNote>,
}

pub struct Service {
    dir: PathBuf,
    embedder: Mutex<EmbedderSlot>,
    freshness: Mutex<HashMap<String, (Instant, Freshness)>>,
    /// Set while a sync's embedding runs in the background (one at a time: a running one
    /// also embeds what later syncs add, since it loops until nothing is pending).
    embedding_job: Arc<std::sync::atomic::AtomicBool>,
    readers: Pool,
    /// What exact searches keep between requests (a resident process's: exact.rs).
    exact: Arc<crate::exact::ExactMemory>,
}

/// Clears the background-embedding flag when the job ends, however it ends.
struct JobDone(Arc<std::sync::atomic::AtomicBool>);

impl Drop for JobDone {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Service {
    pub fn new(dir: &Path) -> Service {
        Service {
            dir: dir.to_path_buf(),
            embedder: Mutex::new(EmbedderSlot {
                stored: None,
                embedder: None,
                note: None,
            }),
            freshness: Mutex::new(HashMap::new()),
            embedding_job: Arc::default(),
            readers: Pool::default(),
            exact: Arc::new(crate::exact::ExactMemory::new()),
        }
    }

    /// What exact searches and greps keep between this process's requests.
    pub fn exact_memory(&self) -> &crate::exact::ExactMemory {
        &self.exact
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A reader on the workspace, with the query embedder attached when the index has vectors
    /// (kept open for the next request when this one is done: pool.rs).
    pub fn workspace(&self) -> Result<Lease<'_>> {
        let mut ws = self.readers.lease(&self.dir)?;
        let stored = ws.store().embedding_model()?;
        let mut slot = self.embedder.lock().unwrap_or_else(|e| e.into_inner());
        if slot.stored.as_ref() != Some(&stored) {
            slot.note = ws.attach_embedder(EmbedPurpose::Searching)?;
            slot.embedder = ws.embedder.clone();
            slot.stored = Some(stored);
        }
        ws.set_embedder(slot.embedder.clone());
        ws.exact_memory = Some(self.exact.clone());
        Ok(ws)
    }

    fn fresh(&self, ws: &Workspace, repos: &[String]) -> Result<Vec<Freshness>> {
        let mut cache = self.freshness.lock().unwrap_or_else(|e| e.into_inner());
        let names: Vec<String> = ws.store().repos()?.into_iter().map(|r| r.name).collect();
        let wanted: Vec<&String> = names
            .iter()
            .filter(|n| repos.is_empty() || repos.contains(n))
            .collect();
        let stale: Vec<String> = wanted
            .iter()
            .filter(|n| {
                cache
                    .get(**n)
                    .is_none_or(|(t, _)| t.elapsed() > FRESHNESS_TTL)
            })
            .map(|n| n.to_string())
            .collect();
        if !stale.is_empty() {
            for f in ws.freshness(&stale)? {
                cache.insert(f.repo.clone(), (Instant::now(), f));
            }
        }
        Ok(wanted
            .iter()
            .filter_map(|n| cache.get(*n).map(|(_, f)| f.clone()))
            .collect())
    }

    /// Marks cached freshness stale (after a sync or re-index).
    pub fn invalidate_freshness(&self) {
        self.freshness
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// `body` with the freshness of the repos it covers.
    pub(crate) fn answer<T>(&self, ws: &Workspace, repos: &[String], body: T) -> Result<Answer<T>> {
        Ok(Answer {
            body,
            freshness: self.fresh(ws, repos)?,
            served_by: ws.store().served_by(),
        })
    }

    pub fn search_code(&self, p: CodeSearchParams) -> Result<Answer<SearchResponse>> {
        check_query(&p.query)?;
        let ws = self.workspace()?;
        let mut request = SearchRequest::new(p.query);
        request.mode = p.mode.unwrap_or_default();
        request.repos = p.repos.unwrap_or_default();
        request.language = match p.language.as_deref() {
            None => None,
            Some(name) => Some(
                Language::from_name(name)
                    .ok_or_else(|| bad(format!("unknown language `{name}`")))?,
            ),
        };
        request.content = p.content_type.unwrap_or_default();
        request.path = p.path;
        request.limit = limit(p.limit, crate::request::DEFAULT_LIMIT)?;
        request.explain = p.explain.unwrap_or(false);
        request.engine = p.engine;
        request.colour_lines = p.colour.unwrap_or(false);
        request.mentions = p.mentions.unwrap_or(true);
        let config = ws.config()?;
        request.fusion = config.fusion();
        if request.mode != Mode::Lexical && ws.embedder.is_none() {
            let note = self
                .embedder
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .note
                .clone();
            match (request.mode, note) {
                (Mode::Auto, _) => {}
                (_, Some(note)) => bail!("{}", note.message),
                _ => bail!("semantic search needs the embedding model"),
            }
        }
        let how = match p.agentic {
            Some(mode) => SearchCall::Agentic { mode },
            None => SearchCall::Routed { rerank: p.rerank },
        };
        let response = ws.search_as(&request, &how, &config)?;
        self.answer(&ws, &request.repos, response)
    }

    pub fn search_commits(&self, p: CommitSearchParams) -> Result<Answer<CommitSearch>> {
        let text = p.query.unwrap_or_default();
        check_query(&text)?;
        let ws = self.workspace()?;
        let repos = p.repos.unwrap_or_default();
        let query = CommitQuery {
            terms: Vec::new(),
            repos: repos.clone(),
            since: date(p.since.as_deref(), false)?,
            until: date(p.until.as_deref(), true)?,
            author: p.author,
            path: p.path,
            limit: limit(p.limit, 20)?,
            explain: p.explain.unwrap_or(false),
        };
        let fusion = ws.config()?.fusion();
        let found = ws.search_commits(&text, query, p.mode.unwrap_or_default(), &fusion)?;
        self.answer(&ws, &repos, found)
    }

    pub fn touches(&self, p: TouchesParams) -> Result<Answer<Touches>> {
        let ws = self.workspace()?;
        let repos = p.repos.unwrap_or_default();
        let query = CommitQuery {
            repos: repos.clone(),
            since: date(p.since.as_deref(), false)?,
            limit: limit(p.limit, 20)?,
            ..Default::default()
        };
        let touches = ws.commits_touching(&p.path, &query)?;
        self.answer(&ws, &repos, touches)
    }

    pub fn summary(&self, p: SummaryParams) -> Result<Answer<FileSummary>> {
        let ws = self.workspace()?;
        let named = self.known_repos(&ws, p.repos.unwrap_or_default())?;
        let (repo, file, shown) = self.resolve_file(&ws, &p.file, &named)?;
        let body = match (p.mode.unwrap_or_default(), &p.symbol) {
            (SummaryMode::Structure, _) => {
                FileSummary::Structure(summary::summarize_file_in(Some(&ws), &file, &shown)?)
            }
            (SummaryMode::Context, None) => return Err(bad("context mode needs `symbol`")),
            (SummaryMode::Context, Some(symbol)) => {
                FileSummary::Context(summary::symbol_context(Some(&ws), &file, &shown, symbol)?)
            }
            (SummaryMode::Extract, symbol) => FileSummary::Extract(summary::call_graph(
                Some(&ws),
                &file,
                &shown,
                symbol.as_deref(),
            )?),
        };
        self.answer(&ws, &[repo], body)
    }

    /// The slice at `line` of an indexed file (quarry-flow through `summary::slice`).
    pub fn slice(&self, p: SliceParams) -> Result<Answer<crate::answer::SliceAnswer>> {
        let ws = self.workspace()?;
        let named = self.known_repos(&ws, p.repos.unwrap_or_default())?;
        let (repo, file, shown) = self.resolve_file(&ws, &p.file, &named)?;
        let body = summary::slice(
            &file,
            &shown,
            p.line,
            p.var.as_deref(),
            p.forward.unwrap_or(false),
        )?;
        self.answer(&ws, &[repo], body)
    }

    pub fn status(&self) -> Result<Answer<Status>> {
        let ws = self.workspace()?;
        let note = self
            .embedder
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note
            .clone();
        let coverage = ws.store().coverage(&[])?;
        let body = Status {
            repos: ws.store().stats()?,
            history: ws.store().history_stats()?,
            embedding: EmbeddingStatus {
                model: ws.store().embedding_model()?,
                embedded: coverage.embedded,
                total: coverage.total,
                note: note.map(|n| n.message),
            },
            store_bytes: ws.store().size_bytes(),
        };
        self.answer(&ws, &[], body)
    }

    /// `named`, every one of them an indexed repo's name (a mistyped name is an error, not
    /// every repo).
    pub(crate) fn known_repos(&self, ws: &Workspace, named: Vec<String>) -> Result<Vec<String>> {
        let known = ws.store().repos()?;
        if let Some(unknown) = named.iter().find(|n| !known.iter().any(|r| &r.name == *n)) {
            return Err(bad(format!("no indexed repo is named `{unknown}`")));
        }
        Ok(named)
    }

    /// A file named relative to a repo's root (or absolute inside one) of `repos` (every repo
    /// when empty): the repo, the real path, and the path as shown. Paths that leave every
    /// repo root (`..`, a link out) are refused; a root reached through a link still serves;
    /// a file the index does not hold is refused.
    pub fn resolve_file(
        &self,
        ws: &Workspace,
        file: &str,
        repos: &[String],
    ) -> Result<(String, PathBuf, String)> {
        let asked = Path::new(file);
        // A file on disk that the index does not hold (`.env`, `.git/config`, an ignored
        // file) is never served: what the index holds is what its rules let in.
        let mut unindexed = None;
        for repo in ws.store().repos()? {
            if !repos.is_empty() && !repos.contains(&repo.name) {
                continue;
            }
            let root = Path::new(&repo.root);
            let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            let candidate = if asked.is_absolute() {
                asked.to_path_buf()
            } else {
                root.join(asked)
            };
            let Ok(real) = candidate.canonicalize() else {
                continue;
            };
            if let Ok(rel) = real.strip_prefix(&root) {
                if real.is_file() {
                    let shown = rel.to_string_lossy().replace('\\', "/");
                    if ws.store().holds_file(repo.id, &shown)? {
                        return Ok((repo.name, real, shown));
                    }
                    unindexed.get_or_insert(shown);
                }
            }
        }
        if let Some(shown) = unindexed {
            return Err(bad(format!(
                "`{shown}` is not in the index: only indexed files are served (hidden, ignored, skipped and `.git/` files never are; a new file is once `quarry index` has read it)"
            )));
        }
        Err(bad(format!(
            "`{file}` is not a file inside an indexed repo (paths are relative to a repo's root)"
        )))
    }

    /// The indexed files of a repo (all repos when `None`): path, language, size, hash.
    pub fn list_files(&self, repo: Option<&str>) -> Result<Answer<FileList>> {
        let ws = self.workspace()?;
        let repos = self.pick_repos(&ws, repo)?;
        let mut out = Vec::new();
        for r in &repos {
            let mut files: Vec<_> = ws.store().file_states(r.id)?.into_iter().collect();
            files.sort_by(|a, b| a.0.cmp(&b.0));
            let files = files
                .into_iter()
                .map(|(path, state)| IndexedFileEntry {
                    language: Language::detect(Path::new(&path)).name().to_string(),
                    path,
                    size: state.size,
                    hash: state.hash,
                })
                .collect();
            out.push(RepoFiles {
                repo: r.name.clone(),
                root: r.root.clone(),
                files,
            });
        }
        let names: Vec<String> = repos.into_iter().map(|r| r.name).collect();
        self.answer(&ws, &names, FileList { repos: out })
    }

    /// Re-indexes the changed files of a repo (all indexed repos when `None`) and embeds
    /// their new chunks; returns what changed. Waits up to 10 s for another writer.
    /// Re-indexes the named repo (or all): answers at once with `LockBusy` (HTTP 409) while
    /// another process writes the index, and holds the lock only per batch while embedding.
    pub fn sync_files(&self, repo: Option<&str>) -> Result<Answer<SyncAnswer>> {
        let (mut ws, lock) = Workspace::open_for_writing(&self.dir, Duration::ZERO, false)?;
        let names: Vec<String> = self
            .pick_repos(&ws, repo)?
            .into_iter()
            .map(|r| r.name)
            .collect();
        let reports = ws.reindex_repos(&names)?;
        self.invalidate_freshness();
        // The answer comes when the lexical part is done; vectors for what changed are made
        // in the background, the write lock held only while a batch is stored.
        let coverage = ws.store().coverage(&names)?;
        let pending = coverage.total - coverage.embedded;
        let state = if pending == 0 {
            "done"
        } else if self
            .embedding_job
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            "running"
        } else {
            "started"
        };
        let body = SyncAnswer {
            repos: reports,
            embedding: EmbeddingJob {
                state: state.to_string(),
                pending,
            },
        };
        let answer = self.answer(&ws, &names, body)?;
        if state == "started" {
            let done = JobDone(self.embedding_job.clone());
            std::thread::spawn(move || {
                let _done = done;
                ws.lock_per_batch(lock);
                match ws.embed_changes(&names) {
                    Ok((_, Some(note))) => eprintln!("quarry: {}", note.message),
                    Ok(_) => {}
                    Err(e) => eprintln!("quarry: background embedding failed: {e:#}"),
                }
            });
        }
        Ok(answer)
    }

    /// Repos with indexed code: the one named, or all of them.
    fn pick_repos(&self, ws: &Workspace, name: Option<&str>) -> Result<Vec<quarry_core::RepoInfo>> {
        let code: Vec<_> = ws
            .store()
            .repos()?
            .into_iter()
            .filter(|r| r.indexed_at.is_some())
            .collect();
        match name {
            None => Ok(code),
            Some(name) => match code.into_iter().find(|r| r.name == name) {
                Some(r) => Ok(vec![r]),
                None => Err(bad(format!(
                    "no indexed repo named `{name}` (see /api/status)"
                ))),
            },
        }
    }
}
