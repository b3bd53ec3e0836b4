//! Git history on OpenSearch: one document per commit (its metadata, changed files, patch,
//! the four BM25 fields as code-aware tokens, and its vector once embedded), the embedded
//! store's history.rs and history_vectors.rs in OpenSearch's terms. Commits are ranked by
//! BM25 over subject, body, changed paths and patch with the embedded store's weights
//! (`COMMIT_FIELD_WEIGHTS`) and its length normalisation as the fields' similarity; every
//! filter (repo, dates, author, path) is a filter clause of the same search, and commit kNN
//! runs with them inside the search.

use std::collections::{HashMap, HashSet};

use anyhow::{bail, Result};
use quarry_core::history::{
    commit_embed_text, ChangedFile, CommitHit, CommitQuery, CommitRecord, HistoryStats,
    PendingCommit, COMMIT_FIELD_WEIGHTS, COMMIT_LENGTH_NORMALISATION,
};
use quarry_core::tokens;
use serde_json::{json, Value};

use crate::bm25;
use crate::query::{regexp, Filters};
use crate::schema::vector_name;
use crate::OpenSearchStore;

/// Characters of a stored patch an embedding text is built from (the text keeps ~1 KB).
const PATCH_PREVIEW_CHARS: usize = 8 * 1024;

const HIT_SOURCE: [&str; 9] = [
    "repo",
    "sha",
    "author",
    "email",
    "author_time",
    "subject",
    "files_changed",
    "embedded",
    "id",
];

fn hit(doc: &Value, score: f64) -> CommitHit {
    CommitHit {
        repo: doc["repo"].as_str().unwrap_or("").to_string(),
        sha: doc["sha"].as_str().unwrap_or("").to_string(),
        author: doc["author"].as_str().unwrap_or("").to_string(),
        email: doc["email"].as_str().unwrap_or("").to_string(),
        date: quarry_core::history::format_time(doc["author_time"].as_i64().unwrap_or(0)),
        subject: doc["subject"].as_str().unwrap_or("").to_string(),
        files_changed: doc["files_changed"].as_u64().unwrap_or(0) as u32,
        score,
        embedded: doc["embedded"] == json!(true),
        why: None,
    }
}

/// `text` as a wildcard pattern matching itself anywhere.
fn contains_pattern(text: &str) -> String {
    let mut out = String::from("*");
    for c in text.chars() {
        if "*?\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('*');
    out
}

/// The filters of `q`; `with_path` adds the changed-path one.
fn filters(q: &CommitQuery, with_path: bool) -> Filters {
    let mut f = Filters::default().repos(&q.repos);
    if q.since.is_some() || q.until.is_some() {
        f = f.push(json!({"range": {"author_time": {"gte": q.since, "lte": q.until}}}));
    }
    if let Some(author) = &q.author {
        let pattern = contains_pattern(&author.to_lowercase());
        f = f.push(json!({"bool": {"should": [
            {"wildcard": {"author_lc": pattern}}, {"wildcard": {"email_lc": pattern}},
        ], "minimum_should_match": 1}}));
    }
    if let (Some(path), true) = (&q.path, with_path) {
        f = f.push(regexp("paths", path));
    }
    f
}

fn search(store: &OpenSearchStore, body: &Value, dfs: bool) -> Result<Value> {
    let search_type = if dfs {
        "?search_type=dfs_query_then_fetch"
    } else {
        ""
    };
    store.client.json(
        "POST",
        &format!("/{}/_search{search_type}", store.alias("commits")),
        Some(body),
    )
}

fn hits(answer: &Value) -> impl Iterator<Item = (&Value, f64)> {
    answer["hits"]["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| (&h["_source"], h["_score"].as_f64().unwrap_or(0.0)))
}

pub(crate) fn known(store: &OpenSearchStore, repo: i64) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    store.client.scan(
        &store.alias("commits"),
        json!({"term": {"repo_id": repo}}),
        &["sha"],
        |doc| {
            out.insert(doc["sha"].as_str().unwrap_or("").to_string());
            Ok(())
        },
    )?;
    Ok(out)
}

/// The `_id` of a commit's document: its repo's id and SHA, so that writing a commit again is
/// the same document (schema v4). A sync killed after its writes and before they became
/// searchable (a refresh) left documents that the search below does not see; the next sync
/// writes those commits again, and a `create` under the same id leaves the first copy (with
/// its numeric id and any vector) as it was, where a fresh id made a second document.
pub(crate) fn commit_doc_id(repo: i64, sha: &str) -> String {
    format!("{repo}-{sha}")
}

/// Stores the commits of `repo` not stored yet (the first copy of a SHA stays).
pub(crate) fn put(store: &OpenSearchStore, repo: i64, commits: &[CommitRecord]) -> Result<()> {
    write(store, repo, commits)?;
    store.client.refresh(&store.alias("commits"))
}

/// As [`put`] without the refresh that ends it: what a sync killed between the two leaves.
pub(crate) fn put_unrefreshed(
    store: &OpenSearchStore,
    repo: i64,
    commits: &[CommitRecord],
) -> Result<()> {
    write(store, repo, commits)
}

/// Writes the commits of `repo` that a search does not find stored (most of those stored: the
/// search is what spares the tokens' stems and the writes; the ids make it exact).
fn write(store: &OpenSearchStore, repo: i64, commits: &[CommitRecord]) -> Result<()> {
    if commits.is_empty() {
        return Ok(());
    }
    let repo_doc = store
        .meta(&format!("repo-{repo}"))?
        .ok_or_else(|| anyhow::anyhow!("no repo with id {repo}"))?;
    let mut seen: HashSet<String> = HashSet::new();
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    for part in shas.chunks(1000) {
        let answer = search(
            store,
            &json!({"size": part.len(), "_source": ["sha"], "query": {"bool": {"filter": [
                {"term": {"repo_id": repo}}, {"terms": {"sha": part}}]}}}),
            false,
        )?;
        seen.extend(hits(&answer).map(|(d, _)| d["sha"].as_str().unwrap_or("").to_string()));
    }
    let commits: Vec<&CommitRecord> = commits
        .iter()
        .filter(|c| seen.insert(c.sha.clone()))
        .collect();
    let fields: Vec<[String; 4]> = commits
        .iter()
        .map(|c| {
            let mut paths = String::new();
            for f in &c.files {
                paths.push_str(&f.path);
                paths.push(' ');
                if let Some(old) = &f.old_path {
                    paths.push_str(old);
                    paths.push(' ');
                }
            }
            [
                tokens::index_text(&c.subject),
                tokens::index_text(&c.body),
                tokens::index_text(&paths),
                tokens::index_text(&c.patch),
            ]
        })
        .collect();
    let mut lexicon = store.lexicon();
    lexicon.learn(store, fields.iter().flatten().map(String::as_str))?;
    let first = store.new_ids(commits.len())?;
    let index = store.alias("commits");
    let mut actions = Vec::new();
    for (n, (c, fields)) in commits.iter().zip(&fields).enumerate() {
        let id = first + n as i64;
        let mut paths = Vec::new();
        let mut touch_paths = Vec::new();
        let mut renamed_from = Vec::new();
        for f in &c.files {
            paths.push(f.path.as_str());
            if let Some(old) = &f.old_path {
                paths.push(old.as_str());
                if f.status == "renamed" && !f.merged_in {
                    renamed_from.push(old.as_str());
                }
            }
            if !f.merged_in {
                touch_paths.push(f.path.as_str());
            }
        }
        actions.push((
            json!({"create": {"_index": index, "_id": commit_doc_id(repo, &c.sha)}}),
            Some(json!({
                "id": id, "repo_id": repo, "repo": repo_doc["name"], "sha": c.sha,
                "parents": c.parents, "author": c.author, "email": c.email,
                "author_lc": c.author.to_lowercase(), "email_lc": c.email.to_lowercase(),
                "author_time": c.author_time, "commit_time": c.commit_time,
                "subject": c.subject, "body": c.body, "patch": c.patch,
                "patch_truncated": c.patch_truncated, "files": c.files,
                "files_changed": c.files.len(), "paths": paths, "touch_paths": touch_paths,
                "renamed_from": renamed_from, "embedded": false,
                "t_subject": lexicon.stem(&fields[0]), "t_body": lexicon.stem(&fields[1]),
                "t_paths": lexicon.stem(&fields[2]), "t_patch": lexicon.stem(&fields[3]),
                "n_tokens": fields.iter().map(|f| tokens::token_count(f)).sum::<usize>(),
            })),
        ));
    }
    std::mem::drop(lexicon);
    // A commit already stored under its id (409) keeps its document: the first copy stays.
    store.client.bulk(&actions, false)
}

pub(crate) fn drop(store: &OpenSearchStore, repo: i64, shas: &[String]) -> Result<()> {
    for part in shas.chunks(1000) {
        store.client.delete_where(
            &store.alias("commits"),
            json!({"bool": {"filter": [{"term": {"repo_id": repo}}, {"terms": {"sha": part}}]}}),
        )?;
    }
    Ok(())
}

pub(crate) fn search_commits(store: &OpenSearchStore, q: &CommitQuery) -> Result<Vec<CommitHit>> {
    let f = filters(q, true);
    let limit = q.limit.max(1);
    if q.terms.is_empty() {
        let answer = search(
            store,
            &json!({"size": limit, "query": f.query(), "_source": HIT_SOURCE,
                    "sort": [{"author_time": "desc"}, {"id": "desc"}]}),
            false,
        )?;
        return Ok(hits(&answer).map(|(doc, _)| hit(doc, 0.0)).collect());
    }
    let fields = [
        ("t_subject", COMMIT_FIELD_WEIGHTS[0]),
        ("t_body", COMMIT_FIELD_WEIGHTS[1]),
        ("t_paths", COMMIT_FIELD_WEIGHTS[2]),
        ("t_patch", COMMIT_FIELD_WEIGHTS[3]),
    ];
    let mut ranked = bm25::ranked(
        store,
        &bm25::Ranking {
            kind: "commits",
            terms: &q.terms,
            fields: &fields,
            b: COMMIT_LENGTH_NORMALISATION,
            filters: f.clauses(),
            limit,
            source: &HIT_SOURCE,
            only_weighing_terms: true,
            from_doc_values: false,
        },
    )?;
    // Ties: the newer commit first, as the embedded store breaks them.
    ranked.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(
                b.0["author_time"]
                    .as_i64()
                    .cmp(&a.0["author_time"].as_i64()),
            )
            .then(b.0["id"].as_i64().cmp(&a.0["id"].as_i64()))
    });
    Ok(ranked.iter().map(|(doc, score)| hit(doc, *score)).collect())
}

fn files_of(doc: &Value) -> Vec<ChangedFile> {
    serde_json::from_value(doc["files"].clone()).unwrap_or_default()
}

pub(crate) fn by_prefix(
    store: &OpenSearchStore,
    prefix: &str,
    repos: &[String],
) -> Result<Vec<(String, CommitRecord)>> {
    let f = Filters::default()
        .repos(repos)
        .push(json!({"prefix": {"sha": prefix.to_ascii_lowercase()}}));
    let answer = search(
        store,
        &json!({"size": 20, "query": f.query(), "sort": [{"repo": "asc"}, {"id": "asc"}]}),
        false,
    )?;
    Ok(hits(&answer)
        .map(|(d, _)| {
            let text = |k: &str| d[k].as_str().unwrap_or("").to_string();
            (
                text("repo"),
                CommitRecord {
                    sha: text("sha"),
                    parents: serde_json::from_value(d["parents"].clone()).unwrap_or_default(),
                    author: text("author"),
                    email: text("email"),
                    author_time: d["author_time"].as_i64().unwrap_or(0),
                    commit_time: d["commit_time"].as_i64().unwrap_or(0),
                    subject: text("subject"),
                    body: text("body"),
                    files: files_of(d),
                    patch: text("patch"),
                    patch_truncated: d["patch_truncated"] == json!(true),
                },
            )
        })
        .collect())
}

/// Commits that changed `path` (or anything under it), following renames back in time.
pub(crate) fn touches(
    store: &OpenSearchStore,
    path: &str,
    q: &CommitQuery,
) -> Result<Vec<CommitHit>> {
    let path = path.trim_end_matches('/');
    let mut names: Vec<String> = vec![path.to_string()];
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut found: Vec<(i64, i64, CommitHit)> = Vec::new();
    let mut i = 0;
    while i < names.len() && names.len() <= 64 {
        let name = names[i].clone();
        i += 1;
        let f = filters(q, false).push(json!({"bool": {"should": [
            {"term": {"touch_paths": name}},
            {"prefix": {"touch_paths": format!("{name}/")}},
            {"term": {"renamed_from": name}},
        ], "minimum_should_match": 1}}));
        let mut source: Vec<&str> = HIT_SOURCE.to_vec();
        source.push("files");
        store
            .client
            .scan(&store.alias("commits"), f.query(), &source, |doc| {
                for file in files_of(doc) {
                    // A rename into this exact path: older commits knew the file by its old name.
                    if file.status == "renamed" && file.path == name && !file.merged_in {
                        if let Some(old) = file.old_path {
                            if !names.contains(&old) {
                                names.push(old);
                            }
                        }
                    }
                }
                let hit = hit(doc, 0.0);
                if seen.insert((hit.repo.clone(), hit.sha.clone())) {
                    let time = doc["author_time"].as_i64().unwrap_or(0);
                    found.push((time, doc["id"].as_i64().unwrap_or(0), hit));
                }
                Ok(())
            })?;
    }
    found.sort_by_key(|h| std::cmp::Reverse((h.0, h.1)));
    Ok(found
        .into_iter()
        .take(q.limit.max(1))
        .map(|(_, _, h)| h)
        .collect())
}

/// The documents of these SHAs of `repo`.
fn commits_of(
    store: &OpenSearchStore,
    repo: &str,
    shas: &[String],
    source: &[&str],
) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for part in shas.chunks(1000) {
        let answer = search(
            store,
            &json!({"size": part.len(), "_source": source, "query": {"bool": {"filter": [
                {"term": {"repo": repo}}, {"terms": {"sha": part}}]}}}),
            false,
        )?;
        out.extend(hits(&answer).map(|(d, _)| d.clone()));
    }
    Ok(out)
}

pub(crate) fn changed_paths(
    store: &OpenSearchStore,
    repo: &str,
    shas: &[String],
) -> Result<HashMap<String, Vec<String>>> {
    Ok(commits_of(store, repo, shas, &["sha", "files"])?
        .iter()
        .map(|d| {
            let paths = files_of(d).into_iter().map(|f| f.path).collect();
            (d["sha"].as_str().unwrap_or("").to_string(), paths)
        })
        .collect())
}

pub(crate) fn patches(
    store: &OpenSearchStore,
    repo: &str,
    shas: &[String],
) -> Result<HashMap<String, String>> {
    Ok(commits_of(store, repo, shas, &["sha", "patch"])?
        .iter()
        .map(|d| {
            (
                d["sha"].as_str().unwrap_or("").to_string(),
                d["patch"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect())
}

fn drop_repo_vectors(store: &OpenSearchStore, repo: i64) -> Result<()> {
    let Some(dims) = store.vector_dims()? else {
        return Ok(());
    };
    store.client.json(
        "POST",
        &format!("/{}/_update_by_query?refresh=true&conflicts=proceed", store.alias("commits")),
        Some(&json!({
            "query": {"bool": {"filter": [{"term": {"repo_id": repo}}, {"term": {"embedded": true}}]}},
            "script": {"source": "ctx._source.remove(params.field); ctx._source.embedded = false",
                       "params": {"field": vector_name(dims)}},
        })),
    )?;
    Ok(())
}

pub(crate) fn set_embedding(store: &OpenSearchStore, repo: i64, on: bool) -> Result<()> {
    let id = format!("repo-{repo}");
    let Some(mut doc) = store.meta(&id)? else {
        bail!("no repo with id {repo}");
    };
    doc["embed_history"] = json!(on);
    store.put_meta(&id, &doc)?;
    if !on {
        drop_repo_vectors(store, repo)?;
    }
    Ok(())
}

/// Every repo's document (name, id, whether its history is embedded), by name.
fn repo_docs(store: &OpenSearchStore) -> Result<Vec<Value>> {
    let answer = store.client.json(
        "POST",
        &format!("/{}/_search", store.alias("meta")),
        Some(
            &json!({"size": 10000, "query": {"term": {"type": "repo"}}, "sort": [{"name": "asc"}]}),
        ),
    )?;
    Ok(hits(&answer).map(|(d, _)| d.clone()).collect())
}

pub(crate) fn stats(store: &OpenSearchStore) -> Result<Vec<HistoryStats>> {
    let index = store.alias("commits");
    let mut out = Vec::new();
    for doc in repo_docs(store)? {
        let repo = doc["id"].as_i64().unwrap_or(0);
        let of = json!({"term": {"repo_id": repo}});
        let embedded = json!({"bool": {"filter": [of.clone(), {"term": {"embedded": true}}]}});
        out.push(HistoryStats {
            repo: doc["name"].as_str().unwrap_or("").to_string(),
            commits: store.client.count(&index, of)?,
            embedded: store.client.count(&index, embedded)?,
            embed: doc["embed_history"] != json!(false),
        });
    }
    Ok(out)
}

pub(crate) fn any_vectors(store: &OpenSearchStore, repos: &[String]) -> Result<bool> {
    let f = Filters::default()
        .repos(repos)
        .push(json!({"term": {"embedded": true}}));
    Ok(store.client.count(&store.alias("commits"), f.query())? > 0)
}

/// Per repo with history embedding on (of `repos`, all when empty): the query for its
/// commits without a vector among its `newest` most recent (by author time, then id).
fn waiting_queries(
    store: &OpenSearchStore,
    newest: Option<u64>,
    repos: &[String],
) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for doc in repo_docs(store)? {
        let name = doc["name"].as_str().unwrap_or("");
        if doc["embed_history"] == json!(false)
            || (!repos.is_empty() && !repos.iter().any(|r| r == name))
        {
            continue;
        }
        let repo = doc["id"].as_i64().unwrap_or(0);
        let mut clauses = vec![
            json!({"term": {"repo_id": repo}}),
            json!({"term": {"embedded": false}}),
        ];
        if let Some(n) = newest {
            match nth_newest(store, repo, n)? {
                Some((time, id)) => clauses.push(json!({"bool": {"should": [
                    {"range": {"author_time": {"gt": time}}},
                    {"bool": {"filter": [{"term": {"author_time": time}}, {"range": {"id": {"gte": id}}}]}},
                ], "minimum_should_match": 1}})),
                None if n == 0 => continue,
                None => {}
            }
        }
        out.push(json!({"bool": {"filter": clauses}}));
    }
    Ok(out)
}

/// The author time and id of a repo's `n`-th newest commit; `None` when it has fewer.
fn nth_newest(store: &OpenSearchStore, repo: i64, n: u64) -> Result<Option<(i64, i64)>> {
    if n == 0 {
        return Ok(None);
    }
    let mut left = n;
    let mut after: Option<Value> = None;
    loop {
        let page = left.min(10000);
        let mut body = json!({"size": page, "_source": false, "track_total_hits": false,
            "query": {"term": {"repo_id": repo}},
            "sort": [{"author_time": "desc"}, {"id": "desc"}]});
        if let Some(after) = &after {
            body["search_after"] = after.clone();
        }
        let answer = search(store, &body, false)?;
        let hits = answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if (hits.len() as u64) < page {
            return Ok(None);
        }
        left -= page;
        let last = &hits[hits.len() - 1]["sort"];
        if left == 0 {
            return Ok(Some((
                last[0].as_i64().unwrap_or(0),
                last[1].as_i64().unwrap_or(0),
            )));
        }
        after = Some(last.clone());
    }
}

pub(crate) fn waiting(
    store: &OpenSearchStore,
    newest: Option<u64>,
    repos: &[String],
) -> Result<u64> {
    let mut total = 0;
    for query in waiting_queries(store, newest, repos)? {
        total += store.client.count(&store.alias("commits"), query)?;
    }
    Ok(total)
}

pub(crate) fn pending(
    store: &OpenSearchStore,
    limit: usize,
    newest: Option<u64>,
    repos: &[String],
) -> Result<Vec<PendingCommit>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut found: Vec<(i64, i64, PendingCommit)> = Vec::new();
    for query in waiting_queries(store, newest, repos)? {
        let answer = search(
            store,
            &json!({"size": limit, "query": query,
                    "_source": ["id", "author_time", "subject", "body", "patch", "files"],
                    "sort": [{"author_time": "desc"}, {"id": "desc"}]}),
            false,
        )?;
        for (d, _) in hits(&answer) {
            let files = files_of(d);
            let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
            let patch: String = d["patch"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(PATCH_PREVIEW_CHARS)
                .collect();
            let id = d["id"].as_i64().unwrap_or(0);
            found.push((
                d["author_time"].as_i64().unwrap_or(0),
                id,
                PendingCommit {
                    id,
                    text: commit_embed_text(
                        d["subject"].as_str().unwrap_or(""),
                        d["body"].as_str().unwrap_or(""),
                        &paths,
                        &patch,
                    ),
                },
            ));
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse((f.0, f.1)));
    Ok(found.into_iter().take(limit).map(|f| f.2).collect())
}

/// Stores commit vectors by commit id (the numeric `id` a pending commit was given); a commit
/// dropped meanwhile is skipped.
pub(crate) fn put_vectors(store: &OpenSearchStore, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
    let Some(dims) = vectors.first().map(|(_, v)| v.len()) else {
        return Ok(());
    };
    let stored = crate::write::ensure_dims(store, dims)?;
    if let Some((id, v)) = vectors.iter().find(|(_, v)| v.len() != stored) {
        bail!(
            "OpenSearch at {} holds {stored}-dimensional vectors and commit {id} got {}: vectors of two models are never mixed",
            store.client.shown,
            v.len()
        );
    }
    let index = store.alias("commits");
    let field = vector_name(stored);
    // The documents' ids (repo and SHA) by the numeric ids the embedder was given.
    let mut doc_ids: HashMap<i64, String> = HashMap::new();
    let ids: Vec<i64> = vectors.iter().map(|(id, _)| *id).collect();
    for part in ids.chunks(1000) {
        let answer = search(
            store,
            &json!({"size": part.len(), "_source": ["id"], "query": {"terms": {"id": part}}}),
            false,
        )?;
        for h in answer["hits"]["hits"].as_array().into_iter().flatten() {
            if let (Some(id), Some(doc)) = (h["_source"]["id"].as_i64(), h["_id"].as_str()) {
                doc_ids.insert(id, doc.to_string());
            }
        }
    }
    let actions: Vec<(Value, Option<Value>)> = vectors
        .iter()
        .filter_map(|(id, v)| {
            Some((
                json!({"update": {"_index": index, "_id": doc_ids.get(id)?}}),
                Some(json!({"doc": {field.clone(): v, "embedded": true}})),
            ))
        })
        .collect();
    store.client.bulk(&actions, false)?;
    store.client.refresh(&index)
}

/// The commits nearest to `vector` among those passing the filters: the filters are inside
/// the kNN search, so every commit that passes can be found.
pub(crate) fn search_vectors(
    store: &OpenSearchStore,
    vector: &[f32],
    q: &CommitQuery,
) -> Result<Vec<CommitHit>> {
    if vector.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    match store.vector_dims()? {
        Some(dims) if dims == vector.len() => {
            let f = filters(q, true);
            let mut knn = json!({"vector": vector, "k": crate::read::candidates(q.limit)});
            if !f.0.is_empty() {
                knn["filter"] = f.query();
            }
            let answer = search(
                store,
                &json!({"size": crate::read::candidates(q.limit), "_source": HIT_SOURCE,
                        "query": {"knn": {vector_name(dims): knn}}}),
                false,
            )?;
            let mut out: Vec<CommitHit> =
                hits(&answer).map(|(d, s)| hit(d, 2.0 * s - 1.0)).collect();
            out.sort_by(|a, b| b.score.total_cmp(&a.score));
            out.truncate(q.limit);
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}
