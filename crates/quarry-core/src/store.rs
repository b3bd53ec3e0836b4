//! The store seam: everything the indexer writes and search reads goes through `Store`, so
//! the embedded SQLite file, a PostgreSQL server and an OpenSearch cluster are
//! interchangeable backends.

use crate::{FileChunks, Language};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Skipped files by reason (`binary`, `too-large`, `symlink`, `unreadable`, `max-files`, …).
pub type SkipCounts = BTreeMap<String, u64>;

/// A store that cannot answer now, as opposed to a fault: its server is not reachable, or an
/// index has no copy of a shard started yet (a node restarting). The message says which and
/// what to do; an error with this in its chain is "try again shortly" (HTTP 503 with
/// `Retry-After`, [`is_unavailable`]).
#[derive(Debug)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// Whether `e` says the store cannot answer now ([`Unavailable`]).
pub fn is_unavailable(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| cause.is::<Unavailable>())
}

/// What the store remembers about a file to decide whether it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// Content hash (hex).
    pub hash: String,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch; a cheap "unchanged" pre-check.
    pub mtime_ns: i64,
}

/// A file ready to be written: its state and its chunks/symbols.
#[derive(Debug, Clone)]
pub struct IndexedFile {
    pub path: String,
    pub language: Language,
    pub state: FileState,
    pub content: FileChunks,
    /// The file's exact text, for the trigram table that narrows `quarry grep` to the files
    /// that can match; `None` when the text read is not the file's bytes (invalid UTF-8 was
    /// replaced), so grep always reads that file itself.
    pub grep_text: Option<String>,
    /// `grep_text`'s distinct trigrams (`trigrams::distinct_trigrams`), found by the indexing
    /// threads for a store that keeps a trigram table; `None` lets the store find them.
    pub grep_trigrams: Option<String>,
}

/// The full-text fields of one row, as quarry's code-aware tokens (`tokens::index_text`).
#[derive(Debug, Clone)]
pub struct SearchFields {
    pub path: String,
    pub symbols: String,
    pub body: String,
}

impl SearchFields {
    /// Tokens in all three fields: the length BM25 weighs.
    pub fn token_count(&self) -> usize {
        [&self.path, &self.symbols, &self.body]
            .iter()
            .map(|f| crate::tokens::token_count(f))
            .sum()
    }
}

impl IndexedFile {
    /// What both stores index for full-text search: each chunk's fields (in chunk order),
    /// then the whole file's (its path, every definition's name, all its chunks' text).
    pub fn search_fields(&self) -> (Vec<SearchFields>, SearchFields) {
        let path = crate::tokens::index_text(&self.path);
        let chunks: Vec<SearchFields> = self
            .content
            .chunks
            .iter()
            .map(|chunk| SearchFields {
                path: path.clone(),
                symbols: crate::tokens::index_text(&chunk.symbols.join(" ")),
                body: crate::tokens::index_text(&chunk.text),
            })
            .collect();
        let names: Vec<&str> = self
            .content
            .symbols
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let body = chunks
            .iter()
            .map(|c| c.body.as_str())
            .filter(|b| !b.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let file = SearchFields {
            path,
            symbols: crate::tokens::index_text(&names.join(" ")),
            body,
        };
        (chunks, file)
    }
}

/// One transaction's worth of changes to a repo.
#[derive(Debug, Default)]
pub struct IndexBatch {
    /// New or changed files: replace everything stored for the path.
    pub upserts: Vec<IndexedFile>,
    /// Files whose content is unchanged but whose size/mtime moved: update the state only.
    pub touched: Vec<(String, FileState)>,
    /// Paths that no longer exist.
    pub deleted: Vec<String>,
}

impl IndexBatch {
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.touched.is_empty() && self.deleted.is_empty()
    }
    pub fn len(&self) -> usize {
        self.upserts.len() + self.touched.len() + self.deleted.len()
    }
}

/// A repository in the workspace.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepoInfo {
    pub id: i64,
    pub name: String,
    pub root: String,
    /// Unix seconds of the last completed index run; `None` while the first run is unfinished.
    pub indexed_at: Option<i64>,
    /// Files and chunks stored, as counted when the last run completed (cheap to read on
    /// every search; `RepoStats` has live counts).
    pub files: u64,
    pub chunks: u64,
    /// Files skipped in the last completed run, by reason.
    pub skipped: SkipCounts,
}

/// Per-repo live counts for `quarry status`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepoStats {
    pub repo: RepoInfo,
    pub files: u64,
    pub chunks: u64,
    pub symbols: u64,
    /// Files per language.
    pub languages: BTreeMap<String, u64>,
}

/// Field weights for BM25: how much a match in each field counts.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FieldWeights {
    pub path: f64,
    pub symbol: f64,
    pub body: f64,
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            path: 3.0,
            symbol: 4.0,
            body: 1.0,
        }
    }
}

/// A lexical (BM25) query over chunks with pre-filters.
#[derive(Debug, Clone, Default)]
pub struct LexicalQuery {
    /// Terms as produced by `tokens::query_terms`; a chunk matches if it has any of them. A
    /// term listed n times counts n times in BM25. A term of several space-separated tokens is
    /// a phrase: those tokens, adjacent and in order.
    pub terms: Vec<String>,
    /// Restrict to these repo names (empty: all).
    pub repos: Vec<String>,
    pub language: Option<Language>,
    /// Code, documents or both, judged by each chunk's language (a file's for file search).
    pub content: crate::ContentType,
    /// A glob over the repo-relative path (`src/**/*.rs`); a pattern without glob characters
    /// matches paths that contain it.
    pub path_glob: Option<String>,
    pub limit: usize,
    pub weights: FieldWeights,
}

/// A nearest-neighbour query over chunk embeddings, with the same pre-filters as BM25.
#[derive(Debug, Clone, Default)]
pub struct VectorQuery {
    /// Unit-length query vectors from the workspace's embedding model; a chunk scores its best
    /// cosine to any of them (a long text is embedded as several passages).
    pub vectors: Vec<Vec<f32>>,
    pub repos: Vec<String>,
    pub language: Option<Language>,
    pub content: crate::ContentType,
    pub path_glob: Option<String>,
    pub limit: usize,
}

/// A distinct embedding text still waiting for its vector.
#[derive(Debug, Clone)]
pub struct PendingEmbedding {
    /// `content_hash` of `text`: the key its vector is stored under.
    pub hash: String,
    pub text: String,
}

/// How much of the searched chunks have vectors.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Coverage {
    pub embedded: u64,
    pub total: u64,
}

/// A chunk found by search, with everything the interfaces print.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkHit {
    pub id: i64,
    pub repo: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub kind: String,
    /// The chunk's own language: a notebook's code cell is in the kernel's language, its
    /// markdown cells in Markdown.
    pub language: Language,
    pub score: f64,
    pub text: String,
    /// The PDF page (1-based): the lines are the page's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// The notebook cell (1-based): the lines are the cell's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
}

/// A file found by whole-file BM25.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileHit {
    pub repo: String,
    pub path: String,
    pub language: Language,
    pub score: f64,
}

/// A call to a name, found in an indexed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    pub repo: String,
    pub path: String,
    /// The qualified name of the definition the call is in (`None`: top-level code).
    pub caller: Option<String>,
    pub callee: String,
    pub line: u32,
}

/// A definition in the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SymbolRef {
    pub repo: String,
    pub path: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
    /// The language of the definition's file.
    pub language: Language,
}

/// Definitions of one bare name, with the same pre-filters as a search: a name lookup honours
/// `--repo`, `--lang`, `--type` and `--path` like every other route.
#[derive(Debug, Clone, Default)]
pub struct DefinitionQuery {
    pub name: String,
    /// Restrict to these repo names (empty: all).
    pub repos: Vec<String>,
    /// The file's language.
    pub language: Option<Language>,
    /// Code or documents, judged by the file's language (a notebook is both).
    pub content: crate::ContentType,
    /// A glob over the repo-relative path; without glob characters, a substring.
    pub path_glob: Option<String>,
    pub limit: usize,
}

/// The persistence interface every backend implements (code index, vectors, and through
/// `HistoryStore`, commits).
pub trait Store: crate::history::HistoryStore {
    /// Finds or creates the repo rooted at `root`, named `name`.
    fn ensure_repo(&mut self, name: &str, root: &str) -> anyhow::Result<RepoInfo>;
    fn repos(&self) -> anyhow::Result<Vec<RepoInfo>>;
    /// Records that a repo now lives at `root` (it was moved on disk); everything stored stays.
    fn move_repo(&mut self, repo: i64, root: &str) -> anyhow::Result<()>;
    /// Removes a repo and everything indexed for it.
    fn remove_repo(&mut self, repo: i64) -> anyhow::Result<()>;
    /// Removes a repo's files and everything read from them (chunks, symbols, calls, their
    /// full-text and trigram rows) and keeps the repo and its git history: what `index
    /// --rebuild` starts over from. History cannot be rebuilt from the tree (a clone may be
    /// shallow now, a branch gone).
    fn clear_files(&mut self, repo: i64) -> anyhow::Result<()>;
    /// Starts `index --rebuild` of a repo's files. Returns true when the store builds the new
    /// files beside the old ones and switches at the end ("build beside and switch"): from here
    /// until [`Store::commit_rebuild`], this store's `apply` and `finish_run` write the repo's
    /// new files and its `file_states` answers from them (empty at first), while every other
    /// reader (another store value, another process) still sees the repo as it was. A store
    /// that returns true guarantees:
    /// - readers see the old files or, once `commit_rebuild` returned, the new ones: never a
    ///   mix of both, never a half-built repo;
    /// - a rebuild that ends without `commit_rebuild` (an error, [`Store::abandon_rebuild`],
    ///   the process killed at any moment, the machine losing power) leaves the old files, and
    ///   the next open answers from them; what was built is dropped (by the next writer at the
    ///   latest), and the rebuild must be run again;
    /// - the repo's history and other repos are untouched, and vectors stay shared by text
    ///   hash: `prune_vectors` after the switch drops those no chunk uses any more.
    ///
    /// The default returns false: it clears the files (`clear_files`) and the run builds in
    /// place, so readers see the repo half-built until the run ends, and an interrupted run
    /// leaves what it stored (the next run finishes it).
    fn begin_rebuild(&mut self, repo: i64) -> anyhow::Result<bool> {
        self.clear_files(repo)?;
        Ok(false)
    }
    /// Makes the files built since `begin_rebuild` returned true the repo's files, at once for
    /// every reader; called after `finish_run`, so the new counts switch with them. The
    /// default does nothing (the rebuild was in place).
    fn commit_rebuild(&mut self, _repo: i64) -> anyhow::Result<()> {
        Ok(())
    }
    /// Gives up a rebuild begun by `begin_rebuild` (Ctrl-C, an error): the old files stay as
    /// they were and the new ones are dropped. The default does nothing (what an in-place
    /// rebuild stored stays, and the next run finishes it).
    fn abandon_rebuild(&mut self, _repo: i64) -> anyhow::Result<()> {
        Ok(())
    }
    /// The stored state of every file of a repo, by repo-relative path.
    fn file_states(&self, repo: i64) -> anyhow::Result<HashMap<String, FileState>>;
    /// Every indexed path of a repo, in no set order. By default `file_states`' keys; a store
    /// that can read the paths alone does (a path search asks for nothing else).
    fn file_paths(&self, repo: i64) -> anyhow::Result<Vec<String>> {
        Ok(self.file_states(repo)?.into_keys().collect())
    }
    /// The indexed paths of a repo that contain `part`, in no set order (a path search). By
    /// default `file_paths` filtered; a store that can filter as it reads does.
    fn file_paths_containing(&self, repo: i64, part: &str) -> anyhow::Result<Vec<String>> {
        let mut paths = self.file_paths(repo)?;
        paths.retain(|p| p.contains(part));
        Ok(paths)
    }
    /// Whether the index holds `path` of `repo` (what a server may serve). By default read
    /// from `file_states`; a store that can ask for one path does.
    fn holds_file(&self, repo: i64, path: &str) -> anyhow::Result<bool> {
        Ok(self.file_states(repo)?.contains_key(path))
    }
    /// Applies one batch atomically: after a crash either all of it or none of it is there.
    fn apply(&mut self, repo: i64, batch: &IndexBatch) -> anyhow::Result<()>;
    /// Marks an index run complete and records what it skipped.
    fn finish_run(&mut self, repo: i64, skipped: &SkipCounts) -> anyhow::Result<()>;
    /// Drops stored vectors that no chunk refers to any more; returns how many.
    fn prune_vectors(&mut self) -> anyhow::Result<u64>;
    fn search_lexical(&self, query: &LexicalQuery) -> anyhow::Result<Vec<ChunkHit>>;
    /// This store, where it can answer reads from several threads at once: a server that
    /// runs searches side by side, each a round trip (OpenSearch). The engine then asks an
    /// issue text's independent reads (chunk candidates, file candidates, the names it
    /// uses) together. A store on one connection answers `None` and is asked in turn.
    fn concurrent(&self) -> Option<&(dyn Store + Sync)> {
        None
    }
    /// Another reader of the same index, for one read beside this store's on a thread of its
    /// own, where the index is large enough that opening one pays: at a million chunks an
    /// issue text's whole-file candidates took a third as long as its chunk candidates, and
    /// on one connection they waited for them. `None` (the default, and a small index): the
    /// reads are asked in turn.
    fn beside(&self) -> Option<Box<dyn Store + Send>> {
        None
    }
    /// BM25 over whole files (path, every definition's name, all of the text), best first.
    fn search_files_lexical(&self, query: &LexicalQuery) -> anyhow::Result<Vec<FileHit>>;
    /// Files (as `(repo, path)`) whose normalised name (`tokens::file_stem_key`) is one of
    /// `keys`, in the given repos.
    fn files_by_stem(
        &self,
        keys: &[String],
        repos: &[String],
        limit: usize,
    ) -> anyhow::Result<Vec<(String, String)>>;
    /// Every chunk of one file, in line order.
    fn file_chunks(&self, repo: &str, path: &str) -> anyhow::Result<Vec<ChunkHit>>;
    /// The first of `file_chunks`. By default read from them; a store that can read one row
    /// does (a path search shows each file by its first chunk).
    fn first_chunk(&self, repo: &str, path: &str) -> anyhow::Result<Option<ChunkHit>> {
        Ok(self.file_chunks(repo, path)?.into_iter().next())
    }
    /// The definitions indexed for one file, in the chunker's order, with the file's state
    /// when they were taken (an outline of an unchanged file needs no parse). `None`: not
    /// indexed, or a backend that does not keep them at hand (the caller parses).
    fn indexed_symbols(
        &self,
        _repo: &str,
        _path: &str,
    ) -> anyhow::Result<Option<(FileState, Vec<crate::Symbol>)>> {
        Ok(None)
    }
    /// Calls of `name` (the called name's last segment), in the given repos (all when empty).
    fn callers(&self, name: &str, repos: &[String], limit: usize) -> anyhow::Result<Vec<CallRef>>;
    /// Calls made inside the definition `caller` (its qualified name) of one file.
    fn calls_from(
        &self,
        repo: &str,
        path: &str,
        caller: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<CallRef>>;
    /// Definitions named `name` (bare name), in the given repos (all when empty).
    fn definitions(
        &self,
        name: &str,
        repos: &[String],
        limit: usize,
    ) -> anyhow::Result<Vec<SymbolRef>> {
        self.find_definitions(&DefinitionQuery {
            name: name.to_string(),
            repos: repos.to_vec(),
            limit,
            ..Default::default()
        })
    }
    /// [`Store::definitions`] of each of `names`, one list per name. A store that pays a round
    /// trip per search asks them at once (an issue text names a dozen or more).
    fn definitions_of_each(
        &self,
        names: &[String],
        repos: &[String],
        limit: usize,
    ) -> anyhow::Result<Vec<Vec<SymbolRef>>> {
        names
            .iter()
            .map(|name| self.definitions(name, repos, limit))
            .collect()
    }
    /// Definitions of `query.name` under the query's filters, by repo, path and line.
    fn find_definitions(&self, query: &DefinitionQuery) -> anyhow::Result<Vec<SymbolRef>>;
    fn stats(&self) -> anyhow::Result<Vec<RepoStats>>;

    /// The fingerprint of the model whose vectors are stored, if any.
    fn embedding_model(&self) -> anyhow::Result<Option<String>>;
    /// Declares the model vectors come from; a different model than the stored one drops
    /// every stored vector (vectors of two models are never mixed). Returns true if it did.
    fn set_embedding_model(&mut self, fingerprint: &str) -> anyhow::Result<bool>;
    /// Up to `limit` distinct chunk texts without a vector, in the order of their hashes, from
    /// after the hash `after` when given. A backfill passes the last hash it took, so each
    /// batch starts where the last one ended instead of passing every embedded text again
    /// (a scan of the whole index per batch: quadratic in its size). A text left behind (a
    /// writer adding one below the mark meanwhile) is pending for the next run.
    /// Only chunks of `repos` (all when empty): a run embeds the repos it was asked to.
    fn pending_embeddings(
        &self,
        limit: usize,
        after: Option<&str>,
        repos: &[String],
    ) -> anyhow::Result<Vec<PendingEmbedding>>;
    /// Stores vectors by embedding-text hash, in one transaction.
    fn put_embeddings(&mut self, vectors: &[(String, Vec<f32>)]) -> anyhow::Result<()>;
    /// Embedded vs all chunks of the given repos (all repos when empty).
    fn coverage(&self, repos: &[String]) -> anyhow::Result<Coverage>;
    /// Chunks nearest to the query vector (cosine), best first; `score` is the cosine.
    fn search_vector(&self, query: &VectorQuery) -> anyhow::Result<Vec<ChunkHit>>;
    /// Bytes the store occupies (for `quarry status`).
    fn size_bytes(&self) -> u64;
    /// Damage met while answering since the last call (a stored text that is no longer what
    /// was written, shown with its bad bytes replaced), as a sentence naming the command that
    /// repairs it; `None` when none was met.
    fn damage_noted(&self) -> Option<String> {
        None
    }
    /// The files whose exact text can satisfy `required` (the others certainly cannot), read
    /// in one transaction with the generation of the indexed files; the files themselves too,
    /// unless `known_generation` is still the generation (the caller kept them).
    fn trigram_lookup(
        &self,
        required: &crate::Requirement,
        known_generation: Option<i64>,
    ) -> anyhow::Result<TrigramLookup>;
    /// The server answering reads, for stores with more than one; `None` for the embedded
    /// store (one file, nothing to choose).
    fn served_by(&self) -> Option<ServedBy> {
        None
    }
}

/// Which database server answers a store's reads: the primary, or a hot standby
/// (`store.read_urls`) and how far it trailed the primary when it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServedBy {
    /// The server's URL, its password shown as `***`.
    pub server: String,
    /// A standby (read replica) rather than the primary.
    pub replica: bool,
    /// Seconds of the primary's work the standby had not replayed when it was chosen (0 when
    /// it had replayed all it received); absent for the primary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag_s: Option<f64>,
    /// The standbys listed that did not answer this, each with why (down, too far behind,
    /// an older schema, failed during a read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// The trigram pre-filter's answer for one pattern.
#[derive(Debug, Clone, Default)]
pub struct TrigramLookup {
    /// Moves with every change to the indexed files.
    pub generation: i64,
    /// Ids of the files whose text may contain a match (the others certainly do not).
    pub may_match: Vec<i64>,
    /// Every file whose exact text is in the trigram table, with the state it was read in;
    /// `None` when the caller's are still current.
    pub files: Option<Vec<TrigramFile>>,
}

/// A file as the trigram pre-filter knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrigramFile {
    pub id: i64,
    /// The repo's root and the file's path in it.
    pub root: String,
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
}
