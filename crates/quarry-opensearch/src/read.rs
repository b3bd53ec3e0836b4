//! Read queries, the OpenSearch forms of the embedded store's: BM25 candidates with the
//! field weights (dfs_query_then_fetch: whole-index term statistics, so shards do not change
//! scores), filtered kNN, and the lookups behind symbols, callers, status and embedding.

use std::collections::HashMap;

use anyhow::Result;
use quarry_core::{
    CallRef, ChunkHit, Coverage, FileHit, FileState, Language, LexicalQuery, PendingEmbedding,
    RepoStats, SymbolRef, VectorQuery,
};
use serde_json::{json, Value};

use crate::bm25;
use crate::query::{code_fields, Filters};
use crate::schema::vector_name;
use crate::OpenSearchStore;

/// The `_source` fields a chunk hit reads.
const CHUNK_SOURCE: [&str; 12] = [
    "id",
    "repo",
    "path",
    "start_line",
    "end_line",
    "symbol",
    "kind",
    "language",
    "text",
    "page",
    "cell",
    "file_language",
];

fn language(value: &Value) -> Language {
    value
        .as_str()
        .and_then(Language::from_name)
        .unwrap_or(Language::Text)
}

fn string(value: &Value) -> String {
    value.as_str().unwrap_or("").to_string()
}

fn chunk_hit(doc: &Value, score: f64) -> ChunkHit {
    ChunkHit {
        id: doc["id"].as_i64().unwrap_or(0),
        repo: string(&doc["repo"]),
        path: string(&doc["path"]),
        start_line: doc["start_line"].as_u64().unwrap_or(0) as u32,
        end_line: doc["end_line"].as_u64().unwrap_or(0) as u32,
        symbol: doc["symbol"].as_str().map(String::from),
        kind: string(&doc["kind"]),
        language: language(&doc["language"]),
        score,
        text: string(&doc["text"]),
        page: doc["page"].as_u64().map(|p| p as u32),
        cell: doc["cell"].as_u64().map(|c| c as u32),
    }
}

/// The hits of a search answer, each with its `_source` and score.
fn hits(answer: &Value) -> impl Iterator<Item = (&Value, f64)> {
    answer["hits"]["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| (&h["_source"], h["_score"].as_f64().unwrap_or(0.0)))
}

fn search(store: &OpenSearchStore, kind: &str, body: &Value, dfs: bool) -> Result<Value> {
    let search_type = if dfs {
        "?search_type=dfs_query_then_fetch"
    } else {
        ""
    };
    store.client.json(
        "POST",
        &format!("/{}/_search{search_type}", store.alias(kind)),
        Some(body),
    )
}

pub(crate) fn file_states(
    store: &OpenSearchStore,
    repo: i64,
) -> Result<HashMap<String, FileState>> {
    let mut out = HashMap::new();
    // A rebuild's writer reads its own files, past the alias that hides them (rebuild.rs).
    let (index, query) = match crate::rebuild::token(store, repo) {
        Some(token) => {
            crate::rebuild::settle(store)?;
            (
                store.concrete("files"),
                crate::rebuild::of_build(repo, &token),
            )
        }
        None => (store.alias("files"), json!({"term": {"repo_id": repo}})),
    };
    store.client.scan(
        &index,
        query,
        &["path", "hash", "size", "mtime_ns"],
        |doc| {
            out.insert(
                string(&doc["path"]),
                FileState {
                    hash: string(&doc["hash"]),
                    size: doc["size"].as_u64().unwrap_or(0),
                    mtime_ns: doc["mtime_ns"].as_i64().unwrap_or(0),
                },
            );
            Ok(())
        },
    )?;
    Ok(out)
}

pub(crate) fn lexical(store: &OpenSearchStore, q: &LexicalQuery) -> Result<Vec<ChunkHit>> {
    if q.terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let filters = Filters::default()
        .repos(&q.repos)
        .path(q.path_glob.as_deref())
        .chunk_scope(q.language, q.content);
    let ranked = bm25::ranked(
        store,
        &bm25::Ranking {
            kind: "chunks",
            terms: &q.terms,
            fields: &code_fields(&q.weights),
            b: bm25::FTS5_B,
            filters: filters.clauses(),
            limit: q.limit,
            source: &CHUNK_SOURCE,
            only_weighing_terms: false,
            from_doc_values: false,
        },
    )?;
    Ok(ranked
        .iter()
        .map(|(doc, score)| chunk_hit(doc, *score))
        .collect())
}

pub(crate) fn files_lexical(store: &OpenSearchStore, q: &LexicalQuery) -> Result<Vec<FileHit>> {
    if q.terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let filters = Filters::default()
        .repos(&q.repos)
        .path(q.path_glob.as_deref())
        .file_scope("language", q.language, q.content);
    let ranked = bm25::ranked(
        store,
        &bm25::Ranking {
            kind: "files",
            terms: &q.terms,
            fields: &code_fields(&q.weights),
            b: bm25::FTS5_B,
            filters: filters.clauses(),
            limit: q.limit,
            source: &["repo", "path", "language"],
            only_weighing_terms: false,
            from_doc_values: true,
        },
    )?;
    Ok(ranked
        .iter()
        .map(|(doc, score)| FileHit {
            repo: string(&doc["repo"]),
            path: string(&doc["path"]),
            language: language(&doc["language"]),
            score: *score,
        })
        .collect())
}

/// How many neighbours a kNN search asks the graph for to answer `limit`: Lucene walks the
/// HNSW graph with a queue of `k`, so a `k` of 3 over eight chunks missed the nearest one now
/// and then (the graph is built with random levels); as PostgreSQL's `hnsw.ef_search`, four
/// times the limit and at least 100. A filter that leaves fewer documents than `k` is searched
/// exactly.
pub(crate) fn candidates(limit: usize) -> usize {
    (limit * 4).clamp(100, 10_000)
}

/// kNN: one search per query vector, each chunk scored by its best cosine. The filters are
/// inside the kNN search (Lucene's efficient filtering): the graph is searched only among the
/// chunks that pass, exactly when few do, so a narrow filter never loses its answers to the
/// graph's cut.
pub(crate) fn vector(store: &OpenSearchStore, q: &VectorQuery) -> Result<Vec<ChunkHit>> {
    if q.vectors.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let Some(dims) = store.vector_dims()? else {
        return Ok(Vec::new());
    };
    let filters = Filters::default()
        .repos(&q.repos)
        .path(q.path_glob.as_deref())
        .chunk_scope(q.language, q.content);
    let mut best: HashMap<i64, ChunkHit> = HashMap::new();
    for v in &q.vectors {
        if v.len() != dims {
            continue;
        }
        let mut knn = json!({"vector": v, "k": candidates(q.limit)});
        if !filters.0.is_empty() {
            knn["filter"] = filters.query();
        }
        let answer = search(
            store,
            "chunks",
            &json!({
                "size": candidates(q.limit), "_source": CHUNK_SOURCE,
                "query": {"knn": {vector_name(dims): knn}},
            }),
            false,
        )?;
        for (doc, score) in hits(&answer) {
            // Lucene's cosine space scores (1 + cos) / 2.
            let cosine = 2.0 * score - 1.0;
            let chunk = chunk_hit(doc, cosine);
            match best.get(&chunk.id) {
                Some(known) if known.score >= cosine => {}
                _ => {
                    best.insert(chunk.id, chunk);
                }
            }
        }
    }
    let mut out: Vec<ChunkHit> = best.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    out.truncate(q.limit);
    Ok(out)
}

pub(crate) fn files_by_stem(
    store: &OpenSearchStore,
    keys: &[String],
    repos: &[String],
    limit: usize,
) -> Result<Vec<(String, String)>> {
    if keys.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let filters = Filters::default()
        .repos(repos)
        .push(json!({"terms": {"stem": keys}}));
    let answer = search(
        store,
        "files",
        &json!({"size": limit.min(10000), "query": filters.query(), "_source": ["repo", "path"],
                "sort": [{"repo": "asc"}, {"path": "asc"}]}),
        false,
    )?;
    Ok(hits(&answer)
        .map(|(doc, _)| (string(&doc["repo"]), string(&doc["path"])))
        .collect())
}

pub(crate) fn file_chunks(
    store: &OpenSearchStore,
    repo: &str,
    path: &str,
) -> Result<Vec<ChunkHit>> {
    let mut out = Vec::new();
    store.client.scan(
        &store.alias("chunks"),
        json!({"bool": {"filter": [{"term": {"repo": repo}}, {"term": {"path": path}}]}}),
        &CHUNK_SOURCE,
        |doc| {
            out.push(chunk_hit(doc, 0.0));
            Ok(())
        },
    )?;
    // Page, cell, line, id; a chunk without a page or cell after those with one.
    let key = |n: Option<u32>| n.map_or(u64::MAX, u64::from);
    out.sort_by_key(|c| (key(c.page), key(c.cell), c.start_line, c.id));
    Ok(out)
}

/// The calls a calls document holds (a file's calls of one name), each with its place in
/// the file: `(line, n)` orders a file's calls as the embedded store's rows.
fn file_calls(doc: &Value) -> impl Iterator<Item = ((u32, i64), CallRef)> + '_ {
    doc["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(move |call| {
            let line = call[0].as_u64().unwrap_or(0) as u32;
            let call_ref = CallRef {
                repo: string(&doc["repo"]),
                path: string(&doc["path"]),
                caller: call[1].as_str().map(String::from),
                callee: string(&doc["callee"]),
                line,
            };
            ((line, call[2].as_i64().unwrap_or(0)), call_ref)
        })
}

/// Calls in the embedded store's order (repo, path, line, then the file's order).
fn sort_calls(calls: &mut [((u32, i64), CallRef)]) {
    calls.sort_by(|(a, x), (b, y)| (&x.repo, &x.path, a).cmp(&(&y.repo, &y.path, b)));
}

/// Where `name` is called: the first `limit` calls in (repo, path, line) order. Documents come
/// in (repo, path) order, a page at a time, until `limit` calls of files read whole are in
/// hand (a file may hold several documents of one name when an older schema's were copied,
/// schema.rs).
pub(crate) fn callers(
    store: &OpenSearchStore,
    name: &str,
    repos: &[String],
    limit: usize,
) -> Result<Vec<CallRef>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let filters = Filters::default()
        .repos(repos)
        .push(json!({"term": {"callee": name}}));
    let page = (limit + 1).min(10_000);
    let mut found: Vec<((u32, i64), CallRef)> = Vec::new();
    let mut after: Option<Value> = None;
    loop {
        let mut body = json!({
            "size": page, "query": filters.query(), "track_total_hits": false,
            "_source": ["repo", "path", "callee", "calls"],
            "sort": [{"repo": "asc"}, {"path": "asc"}, {"id": "asc"}],
        });
        if let Some(after) = after {
            body["search_after"] = after;
        }
        let answer = search(store, "calls", &body, false)?;
        let hits = answer["hits"]["hits"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for hit in hits {
            found.extend(file_calls(&hit["_source"]));
        }
        let Some(last) = hits.last().filter(|_| hits.len() == page) else {
            break;
        };
        // The last file may go on in the next page; the files before it are whole.
        let (repo, path) = (
            string(&last["_source"]["repo"]),
            string(&last["_source"]["path"]),
        );
        if found
            .iter()
            .filter(|(_, c)| c.repo != repo || c.path != path)
            .count()
            >= limit
        {
            break;
        }
        after = Some(last["sort"].clone());
    }
    sort_calls(&mut found);
    Ok(found.into_iter().take(limit).map(|(_, c)| c).collect())
}

/// The calls `caller` makes in one file, in line order.
pub(crate) fn calls_from(
    store: &OpenSearchStore,
    repo: &str,
    path: &str,
    caller: &str,
    limit: usize,
) -> Result<Vec<CallRef>> {
    let filters = Filters::default()
        .push(json!({"term": {"repo": repo}}))
        .push(json!({"term": {"path": path}}))
        .push(json!({"term": {"callers": caller}}));
    let mut found: Vec<((u32, i64), CallRef)> = Vec::new();
    store.client.scan(
        &store.alias("calls"),
        filters.query(),
        &["repo", "path", "callee", "calls"],
        |doc| {
            found.extend(file_calls(doc).filter(|(_, c)| c.caller.as_deref() == Some(caller)));
            Ok(())
        },
    )?;
    sort_calls(&mut found);
    Ok(found.into_iter().take(limit).map(|(_, c)| c).collect())
}

fn definitions_search(q: &quarry_core::DefinitionQuery) -> Value {
    let filters = Filters::default()
        .repos(&q.repos)
        .path(q.path_glob.as_deref())
        .file_scope("file_language", q.language, q.content)
        .push(json!({"term": {"name": q.name}}));
    json!({"size": q.limit.min(10000), "query": filters.query(),
           "sort": [{"repo": "asc"}, {"path": "asc"}, {"start_line": "asc"}, {"id": "asc"}]})
}

fn symbol_refs(answer: &Value) -> Vec<SymbolRef> {
    hits(answer)
        .map(|(doc, _)| {
            let name = string(&doc["name"]);
            SymbolRef {
                repo: string(&doc["repo"]),
                path: string(&doc["path"]),
                qualified_name: match doc["parent"].as_str() {
                    Some(parent) => format!("{parent}.{name}"),
                    None => name.clone(),
                },
                name,
                kind: string(&doc["kind"]),
                start_line: doc["start_line"].as_u64().unwrap_or(0) as u32,
                end_line: doc["end_line"].as_u64().unwrap_or(0) as u32,
                signature: doc["signature"].as_str().map(String::from),
                language: language(&doc["file_language"]),
            }
        })
        .collect()
}

pub(crate) fn definitions(
    store: &OpenSearchStore,
    q: &quarry_core::DefinitionQuery,
) -> Result<Vec<SymbolRef>> {
    if q.limit == 0 {
        return Ok(Vec::new());
    }
    Ok(symbol_refs(&search(
        store,
        "symbols",
        &definitions_search(q),
        false,
    )?))
}

/// The definitions of each name, asked in one `_msearch` (an issue text's dozen lookups were
/// a dozen round trips, 25-40 ms at a million chunks); a name whose answer lacks a shard is
/// asked again alone (`search` asks until every shard answers).
pub(crate) fn definitions_of_each(
    store: &OpenSearchStore,
    names: &[String],
    repos: &[String],
    limit: usize,
) -> Result<Vec<Vec<SymbolRef>>> {
    let queries: Vec<quarry_core::DefinitionQuery> = names
        .iter()
        .map(|name| quarry_core::DefinitionQuery {
            name: name.clone(),
            repos: repos.to_vec(),
            limit,
            ..Default::default()
        })
        .collect();
    if limit == 0 || queries.len() < 2 {
        return queries.iter().map(|q| definitions(store, q)).collect();
    }
    let bodies: Vec<Value> = queries.iter().map(definitions_search).collect();
    let answers = store.client.msearch(&store.alias("symbols"), &bodies)?;
    queries
        .iter()
        .zip(answers)
        .map(|(q, answer)| {
            if answer["_shards"]["failed"].as_u64().unwrap_or(0) > 0 {
                definitions(store, q)
            } else {
                Ok(symbol_refs(&answer))
            }
        })
        .collect()
}

pub(crate) fn stats(store: &OpenSearchStore) -> Result<Vec<RepoStats>> {
    let mut out = Vec::new();
    for repo in store.repo_list()? {
        let of_repo = json!({"term": {"repo_id": repo.id}});
        let count = |kind: &str| store.client.count(&store.alias(kind), of_repo.clone());
        let (files, chunks, symbols) = (count("files")?, count("chunks")?, count("symbols")?);
        let answer = search(
            store,
            "files",
            &json!({"size": 0, "query": of_repo,
                    "aggs": {"languages": {"terms": {"field": "language", "size": 100}}}}),
            false,
        )?;
        let languages = answer["aggregations"]["languages"]["buckets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| (string(&b["key"]), b["doc_count"].as_u64().unwrap_or(0)))
            .collect();
        out.push(RepoStats {
            repo,
            files,
            chunks,
            symbols,
            languages,
        });
    }
    Ok(out)
}

/// Distinct texts without a vector in hash order after `after`: a composite aggregation over
/// the chunks' text hashes pages them in that order, one chunk read per text for its fields.
pub(crate) fn pending_embeddings(
    store: &OpenSearchStore,
    limit: usize,
    after: Option<&str>,
    repos: &[String],
) -> Result<Vec<PendingEmbedding>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let filters = Filters::default()
        .repos(repos)
        .push(json!({"term": {"embedded": false}}));
    let mut composite = json!({
        "size": limit,
        "sources": [{"hash": {"terms": {"field": "embed_hash"}}}],
    });
    if let Some(after) = after {
        composite["after"] = json!({ "hash": after });
    }
    let answer = search(
        store,
        "chunks",
        &json!({"size": 0, "query": filters.query(), "aggs": {"texts": {
            "composite": composite,
            "aggs": {"one": {"top_hits": {"size": 1, "sort": [{"id": "asc"}],
                "_source": ["path", "kind", "symbol", "signature", "text"]}}},
        }}}),
        false,
    )?;
    Ok(answer["aggregations"]["texts"]["buckets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|bucket| {
            let doc = &bucket["one"]["hits"]["hits"][0]["_source"];
            PendingEmbedding {
                hash: string(&bucket["key"]["hash"]),
                text: quarry_core::embed_text(&quarry_core::EmbedSource {
                    path: doc["path"].as_str().unwrap_or(""),
                    kind: doc["kind"].as_str().unwrap_or(""),
                    symbol: doc["symbol"].as_str(),
                    signature: doc["signature"].as_str(),
                    text: doc["text"].as_str().unwrap_or(""),
                }),
            }
        })
        .collect())
}

pub(crate) fn coverage(store: &OpenSearchStore, repos: &[String]) -> Result<Coverage> {
    let all = Filters::default().repos(repos);
    let embedded = Filters::default()
        .repos(repos)
        .push(json!({"term": {"embedded": true}}));
    let index = store.alias("chunks");
    Ok(Coverage {
        embedded: store.client.count(&index, embedded.query())?,
        total: store.client.count(&index, all.query())?,
    })
}
