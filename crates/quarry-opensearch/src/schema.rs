//! The indexes of one store (all named after the URL's prefix) and how they change: each is a
//! versioned index (`PREFIX-chunks-v1`) behind an alias (`PREFIX-chunks`) that every read and
//! write names. A mapping cannot change in place, so a new schema version is a new index: the
//! documents are copied into it (`_reindex`), the alias moves to it in one atomic `_aliases`
//! call, and the old index is deleted; readers never see an index half-built.
//!
//! Full-text fields hold quarry's code-aware tokens (`quarry_core::tokens`), already split,
//! lowercased and stemmed as the embedded store's FTS5 stems them (Porter, diacritics folded:
//! the `quarry_stem` analyzer, which quarry asks, bm25.rs): their analyzer only splits on
//! whitespace. Lucene ranks them by BM25 with FTS5's k1 = 1.2 and b = 0.75 (commits: b = 0.9,
//! `COMMIT_LENGTH_NORMALISATION`) as index similarity settings, which finds the candidates
//! quarry scores as FTS5 does; a `tf` subfield of each answers how often a term occurs in a
//! document. Each document keeps its token count (`n_tokens`) for that.
//! Vectors are `knn_vector` fields (Lucene's HNSW, cosine), one per dimension (`vec_384`),
//! added when the first vector of that length is stored. Every other field rides in `_source`
//! (`dynamic: false`): stored, not indexed.

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::client::Client;

/// The schema version: bump it with any change to a mapping, to the analysis settings or to
/// how documents are laid out, and list in [`CHANGED`] the kinds of index it changed.
/// v2: every full-text field has a `tf` subfield (its counts, see below).
/// v3: a calls document holds a file's calls of one name (write.rs's `CalleeCalls`).
/// v4: a commit document's `_id` is its repo's id and SHA (history.rs's `commit_doc_id`), so
/// a commit written twice (a sync killed before its writes became searchable, run again) is
/// one document; the copy merges the copies an older index holds.
pub(crate) const VERSION: u32 = 4;

/// The versions after 3 and the kinds of index each changed. An index keeps the version of
/// its last change (`index_version`): a move copies only the indexes that changed, not a
/// million chunks for a change to commits. Versions up to 3 changed and named every index.
const CHANGED: [(u32, &[&str]); 1] = [(4, &["commits"])];

/// The version in the name of the index of `kind` at schema `version` (`PREFIX-KIND-vN`).
/// A version past [`VERSION`] is a newer quarry's, whose changes this one cannot know: taken
/// as changing every index (tests of an index written by a newer quarry).
pub(crate) fn index_version(kind: &str, version: u32) -> u32 {
    if version <= 3 || version > VERSION {
        return version;
    }
    CHANGED
        .iter()
        .filter(|(v, kinds)| *v <= version && kinds.contains(&kind))
        .map(|(v, _)| *v)
        .max()
        .unwrap_or(3)
}

/// The indexes of a store, by kind.
pub(crate) const KINDS: [&str; 7] = [
    "meta", "files", "chunks", "symbols", "calls", "vectors", "commits",
];

/// Where the indexes live and how they are laid out.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub prefix: String,
    /// Primary shards of each index (the chunk and commit indexes; the small ones keep one).
    pub shards: u32,
    /// Replica copies; `None`: as many as the cluster can place, up to one (`0-1`).
    pub replicas: Option<u32>,
}

impl Layout {
    /// The alias every read and write names.
    pub fn alias(&self, kind: &str) -> String {
        format!("{}-{kind}", self.prefix)
    }

    pub(crate) fn versioned(&self, kind: &str, version: u32) -> String {
        format!("{}-{kind}-v{version}", self.prefix)
    }

    /// Several aliases, comma-separated (for calls over more than one index).
    pub fn aliases(&self, kinds: &[&str]) -> String {
        kinds
            .iter()
            .map(|k| self.alias(k))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A full-text field ranked by `similarity`, with a subfield `tf` of the same tokens whose
/// "score" is how often a term (or a phrase) occurs in the document — the `quarry_tf`
/// similarity. Asked as named queries (`include_named_queries_score`), it gives quarry each
/// candidate's count of each term in each field (bm25.rs) without sending the tokens back.
fn text(similarity: &str) -> Value {
    json!({
        "type": "text", "analyzer": "whitespace", "similarity": similarity,
        "fields": {"tf": {
            "type": "text", "analyzer": "whitespace", "similarity": "quarry_tf", "norms": false,
        }},
    })
}

fn keyword() -> Value {
    json!({"type": "keyword"})
}

fn long() -> Value {
    json!({"type": "long"})
}

/// The indexed fields of each kind of document. `build` (the file kinds): the token of the
/// rebuild that wrote a document (rebuild.rs), mapped in place where an index lacks it.
fn properties(kind: &str) -> Value {
    let bm25 = || text("quarry_bm25");
    let commit = || text("quarry_commit_bm25");
    match kind {
        "meta" => json!({
            "type": keyword(), "id": long(), "name": keyword(), "root": keyword(),
        }),
        "files" => json!({
            "id": long(), "repo_id": long(), "build": keyword(), "repo": keyword(), "path": keyword(),
            "language": keyword(), "stem": keyword(), "has_text": {"type": "boolean"},
            // A file's distinct trigrams, case folded: grep's pre-filter.
            "grams": {"type": "keyword", "doc_values": false},
            "t_path": bm25(), "t_symbols": bm25(), "t_body": bm25(),
            "n_tokens": {"type": "integer"},
        }),
        "chunks" => json!({
            "id": long(), "repo_id": long(), "build": keyword(), "repo": keyword(), "path": keyword(),
            "file_id": long(), "language": keyword(), "file_language": keyword(),
            "embed_hash": keyword(), "embedded": {"type": "boolean"},
            "start_line": {"type": "integer"}, "page": {"type": "integer"},
            "cell": {"type": "integer"},
            "t_path": bm25(), "t_symbols": bm25(), "t_body": bm25(),
            "n_tokens": {"type": "integer"},
        }),
        "symbols" => json!({
            "id": long(), "repo_id": long(), "build": keyword(), "repo": keyword(), "path": keyword(),
            "file_language": keyword(), "name": keyword(), "start_line": {"type": "integer"},
        }),
        // A file's calls of one name; each call's line and caller ride in `_source`.
        "calls" => json!({
            "id": long(), "repo_id": long(), "build": keyword(), "repo": keyword(), "path": keyword(),
            "callee": keyword(), "callers": keyword(),
        }),
        "vectors" => json!({ "id": keyword() }),
        "commits" => json!({
            "id": long(), "repo_id": long(), "repo": keyword(), "sha": keyword(),
            "author_time": long(), "author_lc": keyword(), "email_lc": keyword(),
            // Every path a commit changed or renamed from (the path filter), the ones `touches`
            // follows (not brought in by a merge), and the old names of renamed files.
            "paths": keyword(), "touch_paths": keyword(), "renamed_from": keyword(),
            "embedded": {"type": "boolean"},
            "t_subject": commit(), "t_body": commit(), "t_paths": commit(), "t_patch": commit(),
            "n_tokens": {"type": "integer"},
        }),
        _ => unreachable!("no index kind {kind}"),
    }
}

/// The body that creates the index of `kind`: settings, mapping, and its alias.
fn definition(layout: &Layout, kind: &str, vectors: &Value) -> Value {
    let big = matches!(kind, "chunks" | "commits" | "files");
    let mut index = json!({
        "number_of_shards": if big { layout.shards } else { 1 },
        "similarity": {
            "quarry_bm25": {"type": "BM25", "k1": 1.2, "b": 0.75},
            "quarry_commit_bm25": {
                "type": "BM25", "k1": 1.2,
                "b": quarry_core::history::COMMIT_LENGTH_NORMALISATION,
            },
            // A term's count in the document. Lucene's phrase scorer sums one score per term
            // of the phrase, so a phrase of n tokens scores n × its count (bm25.rs divides).
            "quarry_tf": {"type": "scripted", "script": {"source": "return doc.freq;"}},
        },
        // What quarry asks the stems of its tokens from (bm25.rs's Lexicon); the fields hold
        // the stems and only split on whitespace.
        "analysis": {"analyzer": {"quarry_stem": {
            "type": "custom", "tokenizer": "whitespace",
            "filter": ["asciifolding", "porter_stem"],
        }}},
        // Writes become visible when quarry refreshes after a batch, not every second.
        "refresh_interval": "30s",
        "max_result_window": 10000,
    });
    match layout.replicas {
        Some(n) => index["number_of_replicas"] = json!(n),
        None => index["auto_expand_replicas"] = json!("0-1"),
    }
    if matches!(kind, "chunks" | "commits") {
        index["knn"] = json!(true);
    }
    let mut properties = properties(kind);
    if let (Some(fields), Some(out)) = (vectors.as_object(), properties.as_object_mut()) {
        for (name, mapping) in fields {
            out.insert(name.clone(), mapping.clone());
        }
    }
    json!({
        "settings": {"index": index},
        "mappings": {"dynamic": false, "properties": properties},
        "aliases": {layout.alias(kind): {}},
    })
}

/// The mapping of a vector field of `dims` dimensions.
pub(crate) fn vector_field(dims: usize) -> Value {
    json!({
        "type": "knn_vector", "dimension": dims,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
                   "parameters": {"m": 16, "ef_construction": 128}},
    })
}

/// The `knn_vector` fields an index holds (kept when it is copied into a new version).
fn vector_fields(client: &Client, index: &str) -> Result<Value> {
    let mapping = client.json("GET", &format!("/{index}/_mapping"), None)?;
    let mut out = serde_json::Map::new();
    if let Some(indexes) = mapping.as_object() {
        for body in indexes.values() {
            if let Some(props) = body["mappings"]["properties"].as_object() {
                for (name, field) in props {
                    if field["type"] == "knn_vector" {
                        out.insert(name.clone(), field.clone());
                    }
                }
            }
        }
    }
    Ok(Value::Object(out))
}

/// The indexes behind each alias of `layout`, in one call (`GET /_alias/A,B,…`): an alias
/// no index holds yet is missing from the answer (which is then a 404 listing the others).
/// A refusal (not reachable, not authorised) is handed back as the caller's first contact
/// with the cluster.
pub(crate) fn current_indexes(
    client: &Client,
    layout: &Layout,
) -> Result<Result<std::collections::HashMap<String, Vec<String>>, crate::client::Refusal>> {
    let path = format!("/_alias/{}", layout.aliases(&KINDS));
    let answer = match client.call("GET", &path, None)? {
        Ok(v) => v,
        // Some alias missing: the body still lists the indexes of the others.
        Err(r)
            if r.status == 404
                && r.body.get("status").is_some()
                && !r.body["error"].is_object() =>
        {
            r.body
        }
        Err(r) => return Ok(Err(r)),
    };
    let mut out: std::collections::HashMap<String, Vec<String>> = Default::default();
    for (index, alias) in alias_pairs(&answer) {
        out.entry(alias.clone()).or_default().push(index.clone());
    }
    for indexes in out.values_mut() {
        indexes.sort();
    }
    Ok(Ok(out))
}

/// The error of a reader whose prefix holds no quarry index (a mistyped prefix): it names
/// the prefixes that hold one (from every alias of the cluster, `GET /_alias`: quarry's are
/// `PREFIX-KIND` naming `PREFIX-KIND-vN`), the nearest first.
pub(crate) fn no_index_here(client: &Client, prefix: &str) -> anyhow::Error {
    let mut found: Vec<String> = match client.call("GET", "/_alias", None) {
        Ok(Ok(answer)) => prefixes(&answer).into_iter().collect(),
        _ => Vec::new(),
    };
    found.sort_by_key(|p| (edit_distance(p, prefix), p.clone()));
    const SHOWN: usize = 10;
    let listed = match found.len() {
        0 => "no prefix holds one on this cluster".to_string(),
        n => format!(
            "prefixes holding one: {}{}",
            found[..n.min(SHOWN)].join(", "),
            if n > SHOWN {
                format!(" and {} more", n - SHOWN)
            } else {
                String::new()
            }
        ),
    };
    anyhow::anyhow!(
        "OpenSearch at {} holds no quarry index with the prefix {prefix:?} (the URL's path; {listed}): check the prefix, or run `quarry index PATH` to create its indexes",
        client.shown
    )
}

/// The prefixes of quarry indexes in a `GET /_alias` answer.
fn prefixes(answer: &Value) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (index, alias) in alias_pairs(answer) {
        let is_quarry = index
            .strip_prefix(alias.as_str())
            .and_then(|rest| rest.strip_prefix("-v"))
            .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
        if let Some(prefix) = KINDS
            .iter()
            .find_map(|kind| alias.strip_suffix(&format!("-{kind}")))
            .filter(|p| is_quarry && !p.is_empty())
        {
            out.insert(prefix.to_string());
        }
    }
    out
}

/// Each (index, alias) of a `GET /_alias` answer.
fn alias_pairs(answer: &Value) -> impl Iterator<Item = (&String, &String)> {
    answer
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(index, body)| {
            body["aliases"]
                .as_object()
                .into_iter()
                .flatten()
                .map(move |(alias, _)| (index, alias))
        })
}

/// Levenshtein's distance between two names (the nearest prefix is listed first).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Brings every index of `layout` to `version`: creates what is missing, copies an index of
/// an older version into a new one and moves the alias to it. Safe to run from several
/// processes at once: a creation another won is taken as done. `current`: the indexes behind
/// each alias ([`current_indexes`]); nothing else is asked when every alias already names its
/// index of `version`.
pub(crate) fn migrate(
    client: &Client,
    layout: &Layout,
    version: u32,
    current: &std::collections::HashMap<String, Vec<String>>,
) -> Result<()> {
    for kind in KINDS {
        let alias = layout.alias(kind);
        let wanted = index_version(kind, version);
        let target = layout.versioned(kind, wanted);
        let current: Vec<String> = current.get(&alias).cloned().unwrap_or_default();
        if current.contains(&target) {
            continue;
        }
        if let Some(newer) = current.iter().find(|c| version_of(c) > Some(wanted)) {
            bail!(
                "OpenSearch at {}: the index {newer} was written by a newer quarry (v{}; this one knows v{wanted} of it): upgrade quarry",
                client.shown,
                version_of(newer).unwrap_or(0)
            );
        }
        let vectors = match current.first() {
            Some(old) => vector_fields(client, old)?,
            None => json!({}),
        };
        let mut body = definition(layout, kind, &vectors);
        if !current.is_empty() {
            // The alias moves only once the copy is whole.
            body.as_object_mut().unwrap().remove("aliases");
        }
        match client.call("PUT", &format!("/{target}"), Some(&body))? {
            Ok(_) => {}
            // Created by another process (copying now), or by one that died before moving
            // the alias (the alias still names the old index): with no old index to copy,
            // theirs is done; otherwise this one copies too — a copy writes each document
            // under its own id, so two copies, or a second one after a dead one, agree.
            Err(r) if reason_type(&r.body) == "resource_already_exists_exception" => {
                if current.is_empty() {
                    continue;
                }
            }
            Err(r) => return Err(client.refused("PUT", &format!("/{target}"), &r)),
        }
        if let Some(old) = current.first() {
            let script = match kind {
                "calls" => Some(CALL_PER_DOCUMENT),
                "commits" => Some(COMMIT_BY_SHA),
                _ => None,
            };
            copy(client, old, &target, script)?;
            // A filter on the alias (a rebuild under way hides its documents, rebuild.rs)
            // moves with it.
            let mut add = json!({"index": target, "alias": alias});
            let path = format!("/{old}/_alias/{alias}");
            if let Ok(Ok(answer)) = client.call("GET", &path, None) {
                let filter = &answer[old.as_str()]["aliases"][alias.as_str()]["filter"];
                if filter.is_object() {
                    add["filter"] = filter.clone();
                }
            }
            let mut actions = vec![json!({ "add": add })];
            for old in &current {
                actions.push(json!({"remove_index": {"index": old}}));
            }
            if let Err(r) =
                client.call("POST", "/_aliases", Some(&json!({ "actions": actions })))?
            {
                // Another process moved it first (and removed the old index).
                let now = current_indexes(client, layout)?
                    .map_err(|r| client.refused("GET", "/_alias", &r))?;
                if !now.get(&alias).is_some_and(|names| names.contains(&target)) {
                    return Err(client.refused("POST", "/_aliases", &r));
                }
            }
        }
    }
    Ok(())
}

/// A calls document of schema v2 or older (one call: `caller`, `line`) as one of v3 (the
/// calls of one name in a file: `callers`, `calls`); a v3 document is left as it is. A copy
/// cannot merge documents, so a copied file may hold several documents of one name until it
/// is indexed again; read.rs merges them.
const CALL_PER_DOCUMENT: &str = "def s = ctx._source; if (!s.containsKey('calls')) { \
    def caller = s.remove('caller'); def line = s.remove('line'); \
    s.callers = caller == null ? [] : [caller]; s.calls = [[line, caller, s.id]]; }";

/// A commit document of schema v3 or older (`_id`: a number given when it was written) under
/// the id of v4, its repo's id and SHA (history.rs's `commit_doc_id`): the copies of one
/// commit that an older index holds (a sync killed before its writes were searchable wrote
/// them again) become one document. Idempotent, as a copy run twice needs.
const COMMIT_BY_SHA: &str = "ctx._id = ctx._source.repo_id + '-' + ctx._source.sha;";

/// Copies every document of `from` into `to` as a server task, waited for in bounded polls:
/// a copy of a large index outlasts one request's timeout, and a request sent again after
/// a timeout would start a second copy. `script` (painless) rewrites each document on the way.
fn copy(client: &Client, from: &str, to: &str, script: Option<&str>) -> Result<()> {
    // Writes acknowledged but not yet refreshed (a writer that died before its run's end)
    // are copied too: the copy reads through a searcher.
    client.refresh(from)?;
    let started = client.json(
        "POST",
        "/_reindex?refresh=true&wait_for_completion=false",
        Some(&{
            let mut body = json!({"source": {"index": from}, "dest": {"index": to}});
            if let Some(script) = script {
                body["script"] = json!({"source": script, "lang": "painless"});
            }
            body
        }),
    )?;
    let Some(task) = started["task"].as_str() else {
        bail!(
            "OpenSearch at {}: copying {from} into {to} answered {started}",
            client.shown
        );
    };
    loop {
        let path = format!("/_tasks/{task}?wait_for_completion=true&timeout=5s");
        match client.call("GET", &path, None)? {
            Ok(answer) if answer["completed"] == true => {
                let failures = &answer["response"]["failures"];
                if answer["error"].is_object() || failures.as_array().is_some_and(|f| !f.is_empty())
                {
                    bail!(
                        "OpenSearch at {}: copying {from} into {to} failed: {}",
                        client.shown,
                        if answer["error"].is_object() {
                            &answer["error"]
                        } else {
                            &failures[0]
                        }
                    );
                }
                return Ok(());
            }
            Ok(_) => {}
            // Still running when the poll's wait ran out.
            Err(r) if r.status == 408 || reason_type(&r.body) == "timeout_exception" => {}
            Err(r) => return Err(client.refused("GET", &path, &r)),
        }
    }
}

fn reason_type(body: &Value) -> &str {
    body["error"]["type"].as_str().unwrap_or("")
}

/// The schema version in a versioned index's name (`…-v3` → 3).
fn version_of(index: &str) -> Option<u32> {
    index.rsplit_once("-v").and_then(|(_, v)| v.parse().ok())
}

/// Adds a vector field of `dims` dimensions to the index of `kind` (a no-op when it is there).
pub(crate) fn add_vector_field(
    client: &Client,
    layout: &Layout,
    kind: &str,
    dims: usize,
) -> Result<()> {
    client.json(
        "PUT",
        &format!("/{}/_mapping", layout.alias(kind)),
        Some(&json!({"properties": {vector_name(dims): vector_field(dims)}})),
    )?;
    Ok(())
}

/// The field vectors of `dims` dimensions are kept in.
pub(crate) fn vector_name(dims: usize) -> String {
    format!("vec_{dims}")
}
