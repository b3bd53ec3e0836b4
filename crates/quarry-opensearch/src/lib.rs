//! quarry's store on OpenSearch: the same index as the embedded SQLite store (quarry-store)
//! and PostgreSQL (quarry-postgres), for teams that already run an OpenSearch cluster and
//! want the index sharded, replicated and served by it.
//!
//! Same answers, by the same pipeline: quarry tokenises (its code-aware tokens, stemmed as
//! FTS5 stems them and sent pre-split into fields the server only splits on whitespace), the
//! cluster finds candidates by BM25 with FTS5's k1/b as index similarities and quarry's
//! per-field weights as boosts, and quarry scores them with FTS5's own formula (bm25.rs: the
//! cluster's Lucene BM25 sums per-field scores and ranked only 60% of the embedded store's
//! top-10 files alike; scored by quarry, all of them, with equal scores); kNN runs on
//! `knn_vector` fields (Lucene HNSW, cosine) with the repo, language and path filters inside
//! the search, and quarry's fusion and file ranking run above the `Store` trait, unchanged.
//! Candidates are found with `dfs_query_then_fetch` and every statistic quarry scores with is
//! the whole index's: sharding and replicas do not change an answer.
//!
//! What OpenSearch does not have is a transaction: a batch is many documents in several
//! indexes. A batch is bracketed by a marker naming its files (write.rs): a writer that died
//! mid-batch leaves the marker, and the next writer removes those files whole, so the next
//! run reads them again — the embedded store's "all or nothing" as the next run sees it.
//! Reads between the crash and the next write can see the half-written batch.
//!
//! URLs: `opensearch+http://host:9200/PREFIX` or `opensearch+https://…` (every index is
//! named after PREFIX, default `quarry`; several nodes as `host1:9200,host2:9200`, the next
//! asked when one does not answer), a user and password in the URL or the password in
//! `$QUARRY_OPENSEARCH_PASSWORD`, a CA file for TLS as `?ca=PATH` or
//! `$QUARRY_OPENSEARCH_CA`, and the shape of new indexes as `?shards=N&replicas=N`.

mod bm25;
mod client;
mod disk;
mod history;
mod query;
mod read;
mod rebuild;
mod schema;
mod trigrams;
mod write;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use quarry_core::history::{CommitHit, CommitQuery, CommitRecord, HistoryStats, PendingCommit};
use quarry_core::store::{IndexBatch, RepoInfo, SkipCounts, Store};
use quarry_core::{
    CallRef, ChunkHit, Coverage, FileHit, FileState, LexicalQuery, PendingEmbedding, RepoStats,
    SymbolRef, TrigramLookup, VectorQuery,
};
use serde_json::{json, Value};

use client::Client;
use schema::Layout;

/// The version of the indexes' layout this quarry writes (each index is `PREFIX-KIND-vN`, N
/// the version that last changed that kind: [`index_version`]).
pub const SCHEMA_VERSION: u32 = schema::VERSION;

/// The version in the name of the index of `kind` at schema `version`, for tests that look
/// inside.
#[doc(hidden)]
pub fn index_version(kind: &str, version: u32) -> u32 {
    schema::index_version(kind, version)
}

/// How long the connect and each call may wait when `store.timeout_s` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `url` names an OpenSearch store (`opensearch+http://` or `opensearch+https://`).
pub fn is_opensearch_url(url: &str) -> bool {
    url.starts_with("opensearch+http://") || url.starts_with("opensearch+https://")
}

/// `url` with any password replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// What a store URL says.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    /// `http(s)://host:port` of each node named.
    bases: Vec<String>,
    prefix: String,
    user: Option<String>,
    password: Option<String>,
    ca: Option<std::path::PathBuf>,
    shards: u32,
    replicas: Option<u32>,
}

fn parse_url(url: &str) -> Result<Target> {
    let rest = url
        .strip_prefix("opensearch+")
        .filter(|r| r.starts_with("http://") || r.starts_with("https://"))
        .ok_or_else(|| {
            anyhow!(
                "not an OpenSearch URL (opensearch+http:// or opensearch+https://): {}",
                redact(url)
            )
        })?;
    let (scheme, rest) = rest.split_once("://").unwrap();
    let (rest, params) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (user_info, hosts) = match authority.rsplit_once('@') {
        Some((info, hosts)) => (Some(info), hosts),
        None => (None, authority),
    };
    // Several nodes, comma-separated: the next one answers when one does not.
    let hosts: Vec<&str> = hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    if hosts.is_empty() {
        bail!("the OpenSearch URL names no host: {}", redact(url));
    }
    let (mut user, mut password) = match user_info {
        Some(info) => match info.split_once(':') {
            Some((u, p)) => (Some(percent_decode(u)), Some(percent_decode(p))),
            None => (Some(percent_decode(info)), None),
        },
        None => (None, None),
    };
    if password.is_none() {
        if let Some(p) = std::env::var("QUARRY_OPENSEARCH_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty())
        {
            password = Some(p);
            user.get_or_insert_with(|| "admin".to_string());
        }
    }
    let prefix = match path.trim_matches('/') {
        "" => "quarry".to_string(),
        p => p.to_string(),
    };
    if !prefix
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
        || prefix.starts_with(['-', '_', '.'])
    {
        bail!("the OpenSearch URL's path names the indexes' prefix: lowercase letters, digits, '-', '_' and '.' only, not {prefix:?}");
    }
    let mut target = Target {
        bases: hosts.iter().map(|h| format!("{scheme}://{h}")).collect(),
        prefix,
        user,
        password,
        ca: std::env::var_os("QUARRY_OPENSEARCH_CA")
            .filter(|c| !c.is_empty())
            .map(Into::into),
        shards: 1,
        replicas: None,
    };
    for pair in params.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value);
        let number = || {
            value
                .parse::<u32>()
                .map_err(|_| anyhow!("the OpenSearch URL's {key} is not a number: {value:?}"))
        };
        match key {
            "ca" => target.ca = Some(value.clone().into()),
            "shards" => target.shards = number()?.max(1),
            "replicas" => target.replicas = Some(number()?),
            _ => bail!(
                "the OpenSearch URL has an unknown parameter {key:?} (known: ca, shards, replicas)"
            ),
        }
    }
    Ok(target)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A repo as its meta document holds it.
pub(crate) fn repo_from_source(doc: &Value) -> RepoInfo {
    RepoInfo {
        id: doc["id"].as_i64().unwrap_or(0),
        name: doc["name"].as_str().unwrap_or("").to_string(),
        root: doc["root"].as_str().unwrap_or("").to_string(),
        indexed_at: doc["indexed_at"].as_i64(),
        files: doc["files"].as_u64().unwrap_or(0),
        chunks: doc["chunks"].as_u64().unwrap_or(0),
        skipped: serde_json::from_value(doc["skipped"].clone()).unwrap_or_default(),
    }
}

/// The OpenSearch store.
pub struct OpenSearchStore {
    client: std::sync::Arc<Client>,
    layout: Layout,
    /// Whether this store replaced or deleted chunks since the last prune: only then can a
    /// stored vector have lost its last chunk.
    pruning: bool,
    /// The stems of the tokens met so far (bm25.rs).
    /// Behind a lock (as the two below) so that reads can go from several threads at once
    /// (`Store::concurrent`).
    lexicon: std::sync::Mutex<bm25::Lexicon>,
    /// Whether this process refreshed the file indexes before its first write (write.rs).
    refreshed_once: std::sync::atomic::AtomicBool,
    /// The pending-batch markers this process put (write.rs): never taken for a dead
    /// writer's while their batch is still being written.
    own_markers: std::sync::Mutex<HashSet<String>>,
    /// The schema version the indexes were brought to (the versioned indexes' names).
    version: u32,
    /// The rebuild this store runs, built beside the old files (rebuild.rs).
    rebuilding: std::sync::Mutex<Option<rebuild::Rebuild>>,
}

impl Drop for OpenSearchStore {
    /// The last batch's writes are finished before the store goes. Their error has no one to
    /// go to here: the batch's marker stays, and the next writer takes its files away whole.
    fn drop(&mut self) {
        let _ = self.client.wait_for_writes();
    }
}

impl OpenSearchStore {
    /// Connects to `url` with calls bounded by [`DEFAULT_TIMEOUT`], and brings the indexes
    /// up to date.
    pub fn connect(url: &str) -> Result<OpenSearchStore> {
        Self::connect_with(url, DEFAULT_TIMEOUT)
    }

    /// Connects to `url`, giving the connect and every later call `timeout` to answer
    /// (`store.timeout_s`), and creates or upgrades the indexes. Errors name the URL without
    /// its password and say what to check.
    pub fn connect_with(url: &str, timeout: Duration) -> Result<OpenSearchStore> {
        let store = Self::connect_as(url, timeout, schema::VERSION, true)?;
        rebuild::recover(&store)?;
        write::recover(&store)?;
        Ok(store)
    }

    /// As [`OpenSearchStore::connect_with`] for a process that only reads (a search): what
    /// a writer that died mid-batch left is not taken away here. A batch's marker is also
    /// there while a live writer sends it, and only a writer (which holds the workspace's
    /// write lock) can tell the two apart; a reader that removed the files of a live
    /// writer's batch would leave them half written for good.
    ///
    /// A reader never creates: a prefix that holds no quarry index (a mistyped one) is an
    /// error naming the prefixes that do, not seven new empty indexes and an empty answer.
    pub fn connect_reading(url: &str, timeout: Duration) -> Result<OpenSearchStore> {
        Self::connect_as(url, timeout, schema::VERSION, false)
    }

    /// As [`OpenSearchStore::connect_reading`], with the indexes at schema `version` (tests
    /// of the move from one version to the next); creates them where none are.
    #[doc(hidden)]
    pub fn connect_at(url: &str, timeout: Duration, version: u32) -> Result<OpenSearchStore> {
        Self::connect_as(url, timeout, version, true)
    }

    /// The connect: `create`, whether a prefix without indexes gets them (a writer) or is an
    /// error (a reader).
    fn connect_as(
        url: &str,
        timeout: Duration,
        version: u32,
        create: bool,
    ) -> Result<OpenSearchStore> {
        let shown = redact(url);
        let target = parse_url(url)?;
        let client = Client::new(
            &target.bases,
            target.user.as_deref(),
            target.password.as_deref(),
            target.ca.as_deref(),
            timeout,
            &shown,
        )?;
        // The first call both says whether the cluster answers and reads which index each
        // alias names: one round trip where every index is already at `version`.
        let layout = Layout {
            prefix: target.prefix,
            shards: target.shards,
            replicas: target.replicas,
        };
        let current = schema::current_indexes(&client, &layout).map_err(|e| {
            let detail = format!("{e:#}");
            let detail = detail
                .strip_prefix(&format!("OpenSearch at {shown}: "))
                .unwrap_or(&detail);
            // rustls reading a plain HTTP answer as a TLS record.
            if url.starts_with("opensearch+https://")
                && (detail.contains("InvalidContentType") || detail.contains("corrupt message"))
            {
                return anyhow!(
                    "OpenSearch at {shown} answered with plain HTTP: use {}",
                    shown.replacen("opensearch+https://", "opensearch+http://", 1)
                );
            }
            let hint = if detail.contains("certificate") {
                "the server's certificate is not trusted: for a private CA give its PEM file as ?ca=FILE in store.url or $QUARRY_OPENSEARCH_CA"
            } else {
                "check the host and port of store.url (or --db-url, $QUARRY_DB_URL)"
            };
            let said = format!("cannot connect to OpenSearch at {shown}: {detail}; {hint}");
            if quarry_core::store::is_unavailable(&e) {
                client::unavailable(said)
            } else {
                anyhow!(said)
            }
        })?;
        let current = match current {
            Ok(current) => current,
            Err(refusal) => {
                // "OpenSearch at URL" said once.
                let e = format!("{:#}", client.refused("GET", "/_alias", &refusal));
                let e = e
                    .strip_prefix(&format!("OpenSearch at {shown}: "))
                    .unwrap_or(&e);
                let said = format!("cannot connect to OpenSearch at {shown}: {e}");
                return Err(if refusal.status == 503 {
                    client::unavailable(said)
                } else {
                    anyhow!(said)
                });
            }
        };
        if !create && current.is_empty() {
            return Err(schema::no_index_here(&client, &layout.prefix));
        }
        schema::migrate(&client, &layout, version, &current).map_err(|e| {
            let text = format!("{e:#}");
            if text.contains("index.knn") {
                anyhow!("{text}: the cluster needs the k-NN plugin (opensearch-knn)")
            } else {
                e
            }
        })?;
        let store = OpenSearchStore {
            client: std::sync::Arc::new(client),
            layout,
            pruning: false,
            lexicon: Default::default(),
            refreshed_once: Default::default(),
            own_markers: Default::default(),
            version,
            rebuilding: Default::default(),
        };
        Ok(store)
    }

    /// As `put_commits`, ending as a sync killed after its writes and before they became
    /// searchable: durable, not yet found by a search (tests of a sync killed midway; the
    /// next reader of this store value refreshes what it wrote, so another store value must
    /// read after it).
    #[doc(hidden)]
    pub fn put_commits_unrefreshed(&self, repo: i64, commits: &[CommitRecord]) -> Result<()> {
        history::put_unrefreshed(self, repo, commits)
    }

    /// The alias of the index of `kind` (`chunks`, `files`, …), for tests that look inside.
    #[doc(hidden)]
    pub fn index(&self, kind: &str) -> String {
        self.layout.alias(kind)
    }

    /// The stems known so far. A thread that panicked holding them left them whole (an
    /// insert is the only change), so the lock is taken even then.
    pub(crate) fn lexicon(&self) -> std::sync::MutexGuard<'_, bm25::Lexicon> {
        self.lexicon.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn alias(&self, kind: &str) -> String {
        self.layout.alias(kind)
    }

    /// The versioned index behind the alias of `kind`: what a rebuild's writer reads past
    /// the alias's filter (rebuild.rs).
    pub(crate) fn concrete(&self, kind: &str) -> String {
        self.layout
            .versioned(kind, schema::index_version(kind, self.version))
    }

    /// A document of the meta index, by id.
    pub(crate) fn meta(&self, id: &str) -> Result<Option<Value>> {
        let path = format!("/{}/_doc/{id}", self.alias("meta"));
        match self.client.call("GET", &path, None)? {
            Ok(doc) => Ok(Some(doc["_source"].clone())),
            Err(r) if r.status == 404 => Ok(None),
            Err(r) => Err(self.client.refused("GET", &path, &r)),
        }
    }

    pub(crate) fn put_meta(&self, id: &str, doc: &Value) -> Result<()> {
        self.client.json(
            "PUT",
            &format!("/{}/_doc/{id}?refresh=true", self.alias("meta")),
            Some(doc),
        )?;
        Ok(())
    }

    pub(crate) fn delete_meta(&self, id: &str) -> Result<()> {
        delete_meta(&self.client, &self.alias("meta"), id)
    }

    pub(crate) fn bump(&self, name: &str, n: u64) -> Result<i64> {
        bump(&self.client, &self.alias("meta"), name, n)
    }

    /// The first of `n` new ids.
    pub(crate) fn new_ids(&self, n: usize) -> Result<i64> {
        if n == 0 {
            return Ok(0);
        }
        Ok(self.bump("ids", n as u64)? - n as i64 + 1)
    }

    /// Every repo, by name.
    pub(crate) fn repo_list(&self) -> Result<Vec<RepoInfo>> {
        let answer = self.client.json(
            "POST",
            &format!("/{}/_search", self.alias("meta")),
            Some(&json!({"size": 10000, "query": {"term": {"type": "repo"}},
                         "sort": [{"name": "asc"}]})),
        )?;
        Ok(answer["hits"]["hits"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| repo_from_source(&h["_source"]))
            .collect())
    }

    /// The dimension of the stored vectors, if any are stored.
    pub(crate) fn vector_dims(&self) -> Result<Option<usize>> {
        Ok(self
            .meta("vector_dims")?
            .and_then(|d| d["value"].as_u64())
            .map(|d| d as usize))
    }
}

/// Deletes the document `id` of the meta index `meta` (a no-op when it is gone), visible at once.
pub(crate) fn delete_meta(client: &Client, meta: &str, id: &str) -> Result<()> {
    let path = format!("/{meta}/_doc/{id}?refresh=true");
    match client.call("DELETE", &path, None)? {
        Ok(_) => Ok(()),
        Err(r) if r.status == 404 => Ok(()),
        Err(r) => Err(client.refused("DELETE", &path, &r)),
    }
}

/// Adds `n` to the counter `name` of the meta index `meta` and returns its new value: a range
/// of `n` fresh ids ends there. The server adds (a script under the document's version check,
/// retried on conflict), so several writers never get the same ids. Not refreshed: counters
/// are read by id (`_update`, `GET`), which OpenSearch answers from the latest write.
pub(crate) fn bump(client: &Client, meta: &str, name: &str, n: u64) -> Result<i64> {
    let answer = client.json(
        "POST",
        &format!("/{meta}/_update/counter-{name}?retry_on_conflict=20&_source=true"),
        Some(&json!({
            "script": {"source": "ctx._source.value += params.n", "params": {"n": n}},
            "upsert": {"type": "counter", "value": n},
        })),
    )?;
    answer["get"]["_source"]["value"].as_i64().ok_or_else(|| {
        anyhow!(
            "OpenSearch at {}: the counter {name} answered {answer}",
            client.shown
        )
    })
}

impl Store for OpenSearchStore {
    fn ensure_repo(&mut self, name: &str, root: &str) -> Result<RepoInfo> {
        write::ensure_repo(self, name, root)
    }

    fn repos(&self) -> Result<Vec<RepoInfo>> {
        self.repo_list()
    }

    fn move_repo(&mut self, repo: i64, root: &str) -> Result<()> {
        let mut doc = self
            .meta(&format!("repo-{repo}"))?
            .with_context(|| format!("no repo {repo}"))?;
        doc["root"] = json!(root);
        self.put_meta(&format!("repo-{repo}"), &doc)
    }

    fn remove_repo(&mut self, repo: i64) -> Result<()> {
        write::remove_repo(self, repo)
    }

    fn clear_files(&mut self, repo: i64) -> Result<()> {
        write::clear_files(self, repo)
    }

    /// Built beside: the rebuild's documents are hidden from every reader by the file aliases'
    /// filter until `commit_rebuild` shows them and hides the old ones in one call
    /// (rebuild.rs).
    fn begin_rebuild(&mut self, repo: i64) -> Result<bool> {
        rebuild::begin(self, repo)?;
        Ok(true)
    }

    fn commit_rebuild(&mut self, repo: i64) -> Result<()> {
        rebuild::commit(self, repo)?;
        // The old chunks went: their vectors may have lost their last chunk.
        self.pruning = true;
        Ok(())
    }

    fn abandon_rebuild(&mut self, repo: i64) -> Result<()> {
        rebuild::abandon(self, repo)
    }

    fn file_states(&self, repo: i64) -> Result<HashMap<String, FileState>> {
        read::file_states(self, repo)
    }

    fn apply(&mut self, repo: i64, batch: &IndexBatch) -> Result<()> {
        if !batch.upserts.is_empty() || !batch.deleted.is_empty() {
            self.pruning = true;
        }
        write::apply(self, repo, batch)
    }

    fn finish_run(&mut self, repo: i64, skipped: &SkipCounts) -> Result<()> {
        write::finish_run(self, repo, skipped)
    }

    fn prune_vectors(&mut self) -> Result<u64> {
        if !self.pruning {
            return Ok(0);
        }
        let pruned = write::prune_vectors(self)?;
        self.pruning = false;
        Ok(pruned)
    }

    fn search_lexical(&self, query: &LexicalQuery) -> Result<Vec<ChunkHit>> {
        read::lexical(self, query)
    }

    fn concurrent(&self) -> Option<&(dyn Store + Sync)> {
        Some(self)
    }
    fn search_files_lexical(&self, query: &LexicalQuery) -> Result<Vec<FileHit>> {
        read::files_lexical(self, query)
    }

    fn files_by_stem(
        &self,
        keys: &[String],
        repos: &[String],
        limit: usize,
    ) -> Result<Vec<(String, String)>> {
        read::files_by_stem(self, keys, repos, limit)
    }

    fn file_chunks(&self, repo: &str, path: &str) -> Result<Vec<ChunkHit>> {
        read::file_chunks(self, repo, path)
    }

    fn callers(&self, name: &str, repos: &[String], limit: usize) -> Result<Vec<CallRef>> {
        read::callers(self, name, repos, limit)
    }

    fn calls_from(
        &self,
        repo: &str,
        path: &str,
        caller: &str,
        limit: usize,
    ) -> Result<Vec<CallRef>> {
        read::calls_from(self, repo, path, caller, limit)
    }

    fn find_definitions(&self, query: &quarry_core::DefinitionQuery) -> Result<Vec<SymbolRef>> {
        read::definitions(self, query)
    }

    fn definitions_of_each(
        &self,
        names: &[String],
        repos: &[String],
        limit: usize,
    ) -> Result<Vec<Vec<SymbolRef>>> {
        read::definitions_of_each(self, names, repos, limit)
    }

    fn stats(&self) -> Result<Vec<RepoStats>> {
        read::stats(self)
    }

    fn embedding_model(&self) -> Result<Option<String>> {
        Ok(self
            .meta("embedding_model")?
            .and_then(|d| d["value"].as_str().map(String::from)))
    }

    fn set_embedding_model(&mut self, fingerprint: &str) -> Result<bool> {
        write::set_embedding_model(self, fingerprint)
    }

    fn pending_embeddings(
        &self,
        limit: usize,
        after: Option<&str>,
        repos: &[String],
    ) -> Result<Vec<PendingEmbedding>> {
        read::pending_embeddings(self, limit, after, repos)
    }

    fn put_embeddings(&mut self, vectors: &[(String, Vec<f32>)]) -> Result<()> {
        write::put_embeddings(self, vectors)
    }

    fn coverage(&self, repos: &[String]) -> Result<Coverage> {
        read::coverage(self, repos)
    }

    fn search_vector(&self, query: &VectorQuery) -> Result<Vec<ChunkHit>> {
        read::vector(self, query)
    }

    fn size_bytes(&self) -> u64 {
        let path = format!("/{}/_stats/store", self.layout.aliases(&schema::KINDS));
        self.client
            .json("GET", &path, None)
            .ok()
            .and_then(|s| s["_all"]["total"]["store"]["size_in_bytes"].as_u64())
            .unwrap_or(0)
    }

    fn trigram_lookup(
        &self,
        required: &quarry_core::Requirement,
        known: Option<i64>,
    ) -> Result<TrigramLookup> {
        trigrams::lookup(self, required, known)
    }
}

impl quarry_core::history::HistoryStore for OpenSearchStore {
    fn known_commits(&self, repo: i64) -> Result<HashSet<String>> {
        history::known(self, repo)
    }
    fn put_commits(&mut self, repo: i64, commits: &[CommitRecord]) -> Result<()> {
        history::put(self, repo, commits)
    }
    fn drop_commits(&mut self, repo: i64, shas: &[String]) -> Result<()> {
        history::drop(self, repo, shas)
    }
    fn search_commits(&self, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history::search_commits(self, query)
    }
    fn commits_by_prefix(
        &self,
        prefix: &str,
        repos: &[String],
    ) -> Result<Vec<(String, CommitRecord)>> {
        history::by_prefix(self, prefix, repos)
    }
    fn touches(&self, path: &str, query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history::touches(self, path, query)
    }
    fn changed_paths(&self, repo: &str, shas: &[String]) -> Result<HashMap<String, Vec<String>>> {
        history::changed_paths(self, repo, shas)
    }
    fn commit_patches(&self, repo: &str, shas: &[String]) -> Result<HashMap<String, String>> {
        history::patches(self, repo, shas)
    }
    fn set_history_embedding(&mut self, repo: i64, on: bool) -> Result<()> {
        history::set_embedding(self, repo, on)
    }
    fn history_stats(&self) -> Result<Vec<HistoryStats>> {
        history::stats(self)
    }
    fn has_commit_vectors(&self, repos: &[String]) -> Result<bool> {
        history::any_vectors(self, repos)
    }
    fn pending_commit_embeddings(
        &self,
        limit: usize,
        newest: Option<u64>,
        repos: &[String],
    ) -> Result<Vec<PendingCommit>> {
        history::pending(self, limit, newest, repos)
    }
    fn waiting_commit_embeddings(&self, newest: Option<u64>, repos: &[String]) -> Result<u64> {
        history::waiting(self, newest, repos)
    }
    fn put_commit_vectors(&mut self, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        history::put_vectors(self, vectors)
    }
    fn search_commit_vectors(&self, vector: &[f32], query: &CommitQuery) -> Result<Vec<CommitHit>> {
        history::search_vectors(self, vector, query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_server_the_prefix_the_credentials_and_the_layout() {
        let t = parse_url("opensearch+https://bob:p%40ss@search.local:9200/team-a?ca=/etc/ca.pem&shards=3&replicas=1").unwrap();
        assert_eq!(t.bases, ["https://search.local:9200"]);
        assert_eq!(t.prefix, "team-a");
        assert_eq!(
            (t.user.as_deref(), t.password.as_deref()),
            (Some("bob"), Some("p@ss"))
        );
        assert_eq!(t.ca.as_deref(), Some(std::path::Path::new("/etc/ca.pem")));
        assert_eq!((t.shards, t.replicas), (3, Some(1)));
        let plain = parse_url("opensearch+http://localhost:9200").unwrap();
        assert_eq!(plain.bases, ["http://localhost:9200"]);
        assert_eq!(plain.prefix, "quarry");
        let nodes = parse_url("opensearch+http://u:p@a:9200,b:9201/x").unwrap();
        assert_eq!(nodes.bases, ["http://a:9200", "http://b:9201"]);
        assert_eq!(
            redact("opensearch+http://u:p@a:9200,b:9201/x"),
            "opensearch+http://u:***@a:9200,b:9201/x"
        );
        assert!(parse_url("opensearch+http://h:1/Upper").is_err());
        assert!(parse_url("opensearch+ftp://h:1").is_err());
        assert!(parse_url("opensearch+http://h:1/x?nope=1").is_err());
        assert_eq!(
            redact("opensearch+https://bob:secret@h:9200/x"),
            "opensearch+https://bob:***@h:9200/x"
        );
        assert_eq!(
            redact("opensearch+http://h:9200"),
            "opensearch+http://h:9200"
        );
    }
}
