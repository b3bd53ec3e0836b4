//! Writing the index: repos, batches of files (their chunks, definitions, calls and
//! trigrams), vectors. Every document carries its repo's id and name and its file's path, so
//! a file's rows are replaced or removed by one delete-by-query per index, and every search
//! filters without a join.
//!
//! A batch has no transaction to hide in. Before writing, the batch's paths go into a marker
//! document (`pending-REPO`); after the last write is acknowledged (durable), the marker goes;
//! the batch becomes visible at the next read of this process or the next writer's start. A writer that finds a marker (the last one died mid-batch) removes those
//! files' rows and their states first, so the next index run reads them again: what a crash
//! leaves is files that are wholly there or wholly absent once a writer has passed.

use std::collections::{HashMap, HashSet};

use anyhow::{bail, Result};
use quarry_core::store::{IndexBatch, RepoInfo, SkipCounts};
use serde_json::{json, Value};

use crate::schema::{self, vector_name};
use crate::trigrams;
use crate::{repo_from_source, OpenSearchStore};

use crate::rebuild::FILE_KINDS;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

pub(crate) fn ensure_repo(store: &OpenSearchStore, name: &str, root: &str) -> Result<RepoInfo> {
    let found = store.client.json(
        "POST",
        &format!("/{}/_search", store.alias("meta")),
        Some(&json!({"size": 1, "query": {"bool": {"filter": [
            {"term": {"type": "repo"}}, {"term": {"root": root}}]}}})),
    )?;
    if let Some(hit) = found["hits"]["hits"].get(0) {
        return Ok(repo_from_source(&hit["_source"]));
    }
    // A name is claimed by creating its document: two writers never take one name.
    let mut candidate = name.to_string();
    let mut n = 2;
    loop {
        let path = format!(
            "/{}/_create/name-{}?refresh=true",
            store.alias("meta"),
            urlencode(&candidate)
        );
        match store
            .client
            .call("PUT", &path, Some(&json!({"type": "name"})))?
        {
            Ok(_) => break,
            Err(r) if r.status == 409 => {
                candidate = format!("{name}-{n}");
                n += 1;
            }
            Err(r) => return Err(store.client.refused("PUT", &path, &r)),
        }
    }
    let id = store.new_ids(1)?;
    let doc = json!({
        "type": "repo", "id": id, "name": candidate, "root": root, "indexed_at": null,
        "files": 0, "chunks": 0, "skipped": {}, "embed_history": true,
    });
    store.put_meta(&format!("repo-{id}"), &doc)?;
    Ok(repo_from_source(&doc))
}

/// A document id or name as a URL path segment.
pub(crate) fn urlencode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn repo_doc(store: &OpenSearchStore, repo: i64) -> Result<Value> {
    match store.meta(&format!("repo-{repo}"))? {
        Some(doc) => Ok(doc),
        None => bail!(
            "OpenSearch at {}: no repo with id {repo}",
            store.client.shown
        ),
    }
}

pub(crate) fn remove_repo(store: &OpenSearchStore, repo: i64) -> Result<()> {
    let doc = repo_doc(store, repo)?;
    let mut kinds = FILE_KINDS.to_vec();
    kinds.push("commits");
    store.client.delete_where(
        &store.layout.aliases(&kinds),
        json!({"term": {"repo_id": repo}}),
    )?;
    store.delete_meta(&format!("repo-{repo}"))?;
    if let Some(name) = doc["name"].as_str() {
        store.delete_meta(&format!("name-{}", urlencode(name)))?;
    }
    store.bump("generation", 1)?;
    Ok(())
}

pub(crate) fn clear_files(store: &OpenSearchStore, repo: i64) -> Result<()> {
    store.client.delete_where(
        &store.layout.aliases(&FILE_KINDS),
        json!({"term": {"repo_id": repo}}),
    )?;
    store.bump("generation", 1)?;
    Ok(())
}

/// Removes the rows of `paths` of `repo` from every file index. A count first: a delete (and
/// the refresh of four indexes it brings) only where one of them has a row, not for the new
/// files of a first run. The count sees what the delete would: this process's own batches
/// are refreshed before any read (client.rs), another's by the first `apply`.
/// In a rebuild (`build`: its token), only the rebuild's rows, never the old ones readers see.
fn remove_paths(
    store: &OpenSearchStore,
    repo: i64,
    paths: &[&str],
    build: Option<&str>,
) -> Result<()> {
    let indexes = match build {
        Some(_) => crate::rebuild::file_indexes(store),
        None => store.layout.aliases(&FILE_KINDS),
    };
    for part in paths.chunks(1000) {
        let mut query =
            json!({"bool": {"filter": [{"term": {"repo_id": repo}}, {"terms": {"path": part}}]}});
        if let Some(token) = build {
            query["bool"]["filter"]
                .as_array_mut()
                .unwrap()
                .push(json!({"term": {"build": token}}));
        }
        // A run writes each path once: the batches this process sent since its last read
        // hold none of these paths, so they need not be made visible for this count.
        if store
            .client
            .count_before_own_writes(&indexes, query.clone())?
            > 0
        {
            store.client.delete_where(&indexes, query)?;
        }
    }
    Ok(())
}

/// Finishes what a writer that died mid-batch left: its files go whole (their states too,
/// so the next run reads them again).
pub(crate) fn recover(store: &OpenSearchStore) -> Result<()> {
    let found = store.client.json(
        "POST",
        &format!("/{}/_search", store.alias("meta")),
        Some(&json!({"size": 100, "query": {"term": {"type": "pending"}}})),
    )?;
    for hit in found["hits"]["hits"].as_array().into_iter().flatten() {
        // This process's own batch, still being written (`apply`).
        if store
            .own_markers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(hit["_id"].as_str().unwrap_or(""))
        {
            continue;
        }
        let doc = &hit["_source"];
        let repo = doc["repo"].as_i64().unwrap_or(0);
        // A dead rebuild's batch: the whole rebuild goes (rebuild.rs), the old files stay.
        if doc["build"].is_string() {
            store.delete_meta(hit["_id"].as_str().unwrap_or(""))?;
            continue;
        }
        let paths: Vec<&str> = doc["paths"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        // What the dead writer sent may not have been refreshed yet: made visible first, so
        // remove_paths's count sees it.
        store.client.refresh(&store.layout.aliases(&FILE_KINDS))?;
        remove_paths(store, repo, &paths, None)?;
        store.bump("generation", 1)?;
        store.delete_meta(hit["_id"].as_str().unwrap_or(""))?;
    }
    Ok(())
}

pub(crate) fn apply(store: &OpenSearchStore, repo: i64, batch: &IndexBatch) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    // A writer that ended without a read after its last batch (killed after a marker went)
    // left rows not yet visible: this process's first batch makes them so, once.
    if !store
        .refreshed_once
        .swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        store.client.refresh(&store.layout.aliases(&FILE_KINDS))?;
    }
    recover(store)?;
    let repo_name = repo_doc(store, repo)?["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let replaced: Vec<&str> = batch
        .upserts
        .iter()
        .map(|f| f.path.as_str())
        .chain(batch.deleted.iter().map(String::as_str))
        .collect();
    let mut marked: Vec<&str> = replaced.clone();
    marked.extend(batch.touched.iter().map(|(p, _)| p.as_str()));
    // One marker per batch: the previous batch may still be being written (below).
    let marker = {
        let mut own = store.own_markers.lock().unwrap_or_else(|e| e.into_inner());
        let marker = format!("pending-{repo}-{}-{}", std::process::id(), own.len());
        own.insert(marker.clone());
        marker
    };
    // A rebuild's documents carry its token (rebuild.rs): hidden from readers until it switches.
    let build = crate::rebuild::token(store, repo);
    store.put_meta(
        &marker,
        &json!({"type": "pending", "repo": repo, "paths": marked, "build": build}),
    )?;

    remove_paths(store, repo, &replaced, build.as_deref())?;
    let mut actions: Vec<(Value, Option<Value>)> = Vec::new();
    let chunk_count: usize = batch.upserts.iter().map(|f| f.content.chunks.len()).sum();
    let symbol_count: usize = batch.upserts.iter().map(|f| f.content.symbols.len()).sum();
    let call_groups: Vec<Vec<CalleeCalls>> = batch
        .upserts
        .iter()
        .map(|f| group_calls(&f.content.calls))
        .collect();
    let call_count: usize = call_groups.iter().map(Vec::len).sum();
    let mut next = store.new_ids(batch.upserts.len() + chunk_count + symbol_count + call_count)?;
    let mut id = || {
        next += 1;
        next - 1
    };
    // Chunks whose text already has a vector get it now (vectors are kept by text hash).
    let dims = store.vector_dims()?;
    let hashes: Vec<Vec<String>> = batch
        .upserts
        .iter()
        .map(|f| {
            f.content
                .chunks
                .iter()
                .map(|c| quarry_core::chunk_embed_hash(&f.path, c))
                .collect()
        })
        .collect();
    let known = match dims {
        Some(_) => stored_vectors(store, hashes.iter().flatten())?,
        None => HashMap::new(),
    };
    let (files, chunks, symbols, calls) = (
        store.alias("files"),
        store.alias("chunks"),
        store.alias("symbols"),
        store.alias("calls"),
    );
    // Every field's tokens, stemmed as FTS5 stems them (bm25.rs).
    let fields: Vec<_> = batch.upserts.iter().map(|f| f.search_fields()).collect();
    let mut lexicon = store.lexicon();
    lexicon.learn(
        store,
        fields.iter().flat_map(|(chunks, file)| {
            chunks
                .iter()
                .chain(std::iter::once(file))
                .flat_map(|f| [f.path.as_str(), f.symbols.as_str(), f.body.as_str()])
        }),
    )?;
    for (((file, hashes), (chunk_fields, file_fields)), call_groups) in batch
        .upserts
        .iter()
        .zip(&hashes)
        .zip(&fields)
        .zip(&call_groups)
    {
        let file_id = id();
        let mut base = json!({"repo_id": repo, "repo": repo_name, "path": file.path});
        if let Some(token) = &build {
            base["build"] = json!(token);
        }
        let with = |extra: Value| {
            let mut doc = base.clone();
            doc.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            doc
        };
        let grams = file.grep_text.as_deref().map(trigrams::grams);
        actions.push((
            json!({"index": {"_index": files, "_id": file_id.to_string()}}),
            Some(with(json!({
                "id": file_id, "language": file.language.name(),
                "stem": quarry_core::tokens::file_stem_key(&file.path),
                "hash": file.state.hash, "size": file.state.size, "mtime_ns": file.state.mtime_ns,
                "has_text": grams.is_some(), "grams": grams.unwrap_or_default(),
                "t_path": lexicon.stem(&file_fields.path),
                "t_symbols": lexicon.stem(&file_fields.symbols),
                "t_body": lexicon.stem(&file_fields.body), "n_tokens": file_fields.token_count(),
            }))),
        ));
        for ((chunk, fields), hash) in file.content.chunks.iter().zip(chunk_fields).zip(hashes) {
            let chunk_id = id();
            let mut doc = with(json!({
                "id": chunk_id, "file_id": file_id, "start_line": chunk.start_line,
                "end_line": chunk.end_line, "symbol": chunk.symbol, "kind": chunk.kind,
                "signature": chunk.signature, "text": chunk.text,
                "language": chunk.language.name(), "file_language": file.language.name(),
                "page": chunk.page, "cell": chunk.cell, "embed_hash": hash,
                "embedded": false,
                "t_path": lexicon.stem(&fields.path), "t_symbols": lexicon.stem(&fields.symbols),
                "t_body": lexicon.stem(&fields.body), "n_tokens": fields.token_count(),
            }));
            if let (Some(dims), Some(vector)) = (dims, known.get(hash)) {
                doc[vector_name(dims)] = vector.clone();
                doc["embedded"] = json!(true);
            }
            actions.push((
                json!({"index": {"_index": chunks, "_id": chunk_id.to_string()}}),
                Some(doc),
            ));
        }
        for symbol in &file.content.symbols {
            let symbol_id = id();
            actions.push((
                json!({"index": {"_index": symbols, "_id": symbol_id.to_string()}}),
                Some(with(json!({
                    "id": symbol_id, "file_language": file.language.name(),
                    "name": symbol.name, "parent": symbol.parent, "kind": symbol.kind,
                    "start_line": symbol.start_line, "end_line": symbol.end_line,
                    "signature": symbol.signature,
                }))),
            ));
        }
        for group in call_groups {
            let call_id = id();
            actions.push((
                json!({"index": {"_index": calls, "_id": call_id.to_string()}}),
                Some(with(json!({
                    "id": call_id, "callee": group.callee, "callers": group.callers,
                    "calls": group.calls,
                }))),
            ));
        }
    }
    drop(lexicon);
    if !batch.touched.is_empty() {
        let paths: Vec<&str> = batch.touched.iter().map(|(p, _)| p.as_str()).collect();
        let mut ids: HashMap<String, i64> = HashMap::new();
        let mut query =
            json!({"bool": {"filter": [{"term": {"repo_id": repo}}, {"terms": {"path": paths}}]}});
        let mut index = files.clone();
        if let Some(token) = &build {
            query["bool"]["filter"]
                .as_array_mut()
                .unwrap()
                .push(json!({"term": {"build": token}}));
            index = store.concrete("files");
        }
        store.client.scan(&index, query, &["id", "path"], |doc| {
            ids.insert(
                doc["path"].as_str().unwrap_or("").to_string(),
                doc["id"].as_i64().unwrap_or(0),
            );
            Ok(())
        })?;
        for (path, state) in &batch.touched {
            if let Some(id) = ids.get(path) {
                actions.push((
                    json!({"update": {"_index": files, "_id": id.to_string()}}),
                    Some(json!({"doc": {
                        "hash": state.hash, "size": state.size, "mtime_ns": state.mtime_ns,
                    }})),
                ));
            }
        }
    }
    // Written in the background while the caller reads and prepares the next batch (the
    // cluster and quarry then work at once; one batch in flight at most, and a read of these
    // indexes waits for it, client.rs); the marker goes once every write is acknowledged.
    // Not refreshed here: a refresh of four indexes per batch was a tenth of the ingest time.
    // The writes are durable once `_bulk` answers (the translog); the next read of this
    // process refreshes first (client.rs), and the next writer's first batch refreshes
    // (`recover`), so counts and deletes see every batch that lost its marker.
    let meta = store.alias("meta");
    let written = FILE_KINDS.iter().map(|k| store.alias(k)).collect();
    store.client.write_behind(written, move |client| {
        client.bulk(&actions, false)?;
        crate::bump(client, &meta, "generation", 1)?;
        crate::delete_meta(client, &meta, &marker)
    })
}

/// The calls of one file to one name: one document of the calls index. A document per call
/// was ten times the chunks (sympy: 382k calls in 36k chunks) and most of the server's work
/// at ingest; grouped by callee they are 56k documents, answered the same (read.rs).
struct CalleeCalls<'a> {
    callee: &'a str,
    /// The distinct callers (a top-level call has none), what `calls_from` filters on.
    callers: Vec<&'a str>,
    /// `[line, caller, n]` of each call in the file's order, `n` its place in the file: the
    /// order of the rows the embedded store keeps.
    calls: Vec<Value>,
}

fn group_calls(calls: &[quarry_core::CallSite]) -> Vec<CalleeCalls<'_>> {
    let mut by_callee: std::collections::BTreeMap<&str, CalleeCalls> = Default::default();
    for (n, call) in calls.iter().enumerate() {
        let group = by_callee
            .entry(call.callee.as_str())
            .or_insert_with(|| CalleeCalls {
                callee: &call.callee,
                callers: Vec::new(),
                calls: Vec::new(),
            });
        group.callers.extend(call.caller.as_deref());
        group.calls.push(json!([call.line, call.caller, n]));
    }
    by_callee
        .into_values()
        .map(|mut group| {
            group.callers.sort_unstable();
            group.callers.dedup();
            group
        })
        .collect()
}

/// The stored vectors of these text hashes, by hash.
fn stored_vectors<'a>(
    store: &OpenSearchStore,
    hashes: impl Iterator<Item = &'a String>,
) -> Result<HashMap<String, Value>> {
    let unique: HashSet<&String> = hashes.collect();
    let unique: Vec<&String> = unique.into_iter().collect();
    let mut out = HashMap::new();
    for part in unique.chunks(500) {
        let answer = store.client.json(
            "POST",
            &format!("/{}/_mget", store.alias("vectors")),
            Some(&json!({ "ids": part })),
        )?;
        for doc in answer["docs"].as_array().into_iter().flatten() {
            if doc["found"] == json!(true) {
                out.insert(
                    doc["_id"].as_str().unwrap_or("").to_string(),
                    doc["_source"]["v"].clone(),
                );
            }
        }
    }
    Ok(out)
}

pub(crate) fn finish_run(store: &OpenSearchStore, repo: i64, skipped: &SkipCounts) -> Result<()> {
    // The run's writes become visible to every reader now, not at the next read of this
    // process (the definitions and calls indexes are not read here).
    let kinds: Vec<String> = FILE_KINDS.iter().map(|k| store.alias(k)).collect();
    store
        .client
        .refresh_written(&kinds.iter().map(String::as_str).collect::<Vec<_>>())?;
    let mut doc = repo_doc(store, repo)?;
    doc["indexed_at"] = json!(now());
    doc["skipped"] = serde_json::to_value(skipped)?;
    // A rebuild's counts are its own, written when it switches (rebuild.rs).
    if let Some(token) = crate::rebuild::token(store, repo) {
        crate::rebuild::settle(store)?;
        let of_build = crate::rebuild::of_build(repo, &token);
        doc["files"] = json!(store
            .client
            .count(&store.concrete("files"), of_build.clone())?);
        doc["chunks"] = json!(store.client.count(&store.concrete("chunks"), of_build)?);
        crate::rebuild::keep_finished(store, repo, doc);
        return Ok(());
    }
    let of_repo = json!({"term": {"repo_id": repo}});
    doc["files"] = json!(store.client.count(&store.alias("files"), of_repo.clone())?);
    doc["chunks"] = json!(store.client.count(&store.alias("chunks"), of_repo)?);
    store.put_meta(&format!("repo-{repo}"), &doc)
}

pub(crate) fn set_embedding_model(store: &OpenSearchStore, fingerprint: &str) -> Result<bool> {
    let stored = store.meta("embedding_model")?;
    let stored = stored.as_ref().and_then(|d| d["value"].as_str());
    if stored == Some(fingerprint) {
        return Ok(false);
    }
    let dropped = drop_vectors(store)?;
    store.put_meta(
        "embedding_model",
        &json!({"type": "setting", "value": fingerprint}),
    )?;
    Ok(dropped || stored.is_some())
}

/// Drops every chunk and commit vector (another model's); returns whether there were any.
fn drop_vectors(store: &OpenSearchStore) -> Result<bool> {
    let Some(dims) = store.vector_dims()? else {
        return Ok(false);
    };
    let field = vector_name(dims);
    for kind in ["chunks", "commits"] {
        store.client.json(
            "POST",
            &format!("/{}/_update_by_query?refresh=true&conflicts=proceed", store.alias(kind)),
            Some(&json!({
                "query": {"term": {"embedded": true}},
                "script": {"source": "ctx._source.remove(params.field); ctx._source.embedded = false",
                           "params": {"field": field}},
            })),
        )?;
    }
    store
        .client
        .delete_where(&store.alias("vectors"), json!({"match_all": {}}))?;
    store.delete_meta("vector_dims")?;
    Ok(true)
}

pub(crate) fn put_embeddings(
    store: &OpenSearchStore,
    vectors: &[(String, Vec<f32>)],
) -> Result<()> {
    let Some(dims) = vectors.first().map(|(_, v)| v.len()) else {
        return Ok(());
    };
    if let Some((hash, v)) = vectors.iter().find(|(_, v)| v.len() != dims) {
        bail!(
            "vectors of different lengths in one batch ({dims} and {} for {hash})",
            v.len()
        );
    }
    let stored = ensure_dims(store, dims)?;
    if stored != dims {
        bail!(
            "OpenSearch at {} holds {stored}-dimensional vectors and the configured model makes {dims}: vectors of two models are never mixed. Set the model the index was built with, or re-embed: `quarry index --rebuild`",
            store.client.shown
        );
    }
    let vectors_index = store.alias("vectors");
    let actions: Vec<(Value, Option<Value>)> = vectors
        .iter()
        .map(|(hash, v)| {
            (
                json!({"index": {"_index": vectors_index, "_id": hash}}),
                Some(json!({"id": hash, "v": v})),
            )
        })
        .collect();
    store.client.bulk(&actions, false)?;
    // Every chunk with one of these texts gets its vector, in place.
    for part in vectors.chunks(200) {
        let hashes: Vec<&str> = part.iter().map(|(h, _)| h.as_str()).collect();
        let by_hash: serde_json::Map<String, Value> =
            part.iter().map(|(h, v)| (h.clone(), json!(v))).collect();
        let answer = store.client.json(
            "POST",
            &format!("/{}/_update_by_query?refresh=true&conflicts=proceed", store.alias("chunks")),
            Some(&json!({
                "query": {"terms": {"embed_hash": hashes}},
                "script": {
                    "source": "ctx._source[params.field] = params.v[ctx._source.embed_hash]; ctx._source.embedded = true",
                    "params": {"field": vector_name(dims), "v": by_hash},
                },
            })),
        )?;
        if let Some(failure) = answer["failures"].as_array().and_then(|f| f.first()) {
            bail!(
                "OpenSearch at {}: storing vectors failed: {failure}",
                store.client.shown
            );
        }
    }
    store.client.refresh(&vectors_index)
}

/// The dimension vectors are stored at: the stored one, else `dims` (recorded, and the
/// vector fields of that length added to the chunk and commit indexes).
pub(crate) fn ensure_dims(store: &OpenSearchStore, dims: usize) -> Result<usize> {
    if let Some(stored) = store.vector_dims()? {
        return Ok(stored);
    }
    for kind in ["chunks", "commits"] {
        schema::add_vector_field(&store.client, &store.layout, kind, dims)?;
    }
    store.put_meta("vector_dims", &json!({"type": "setting", "value": dims}))?;
    Ok(dims)
}

/// Deletes stored vectors whose text no chunk has any more; returns how many.
pub(crate) fn prune_vectors(store: &OpenSearchStore) -> Result<u64> {
    let mut stored: Vec<String> = Vec::new();
    store.client.scan(
        &store.alias("vectors"),
        json!({"match_all": {}}),
        &["id"],
        |doc| {
            stored.push(doc["id"].as_str().unwrap_or("").to_string());
            Ok(())
        },
    )?;
    let mut unused: Vec<String> = Vec::new();
    for part in stored.chunks(1000) {
        let answer = store.client.json(
            "POST",
            &format!("/{}/_search", store.alias("chunks")),
            Some(&json!({
                "size": 0,
                "query": {"terms": {"embed_hash": part}},
                "aggs": {"used": {"terms": {"field": "embed_hash", "size": part.len()}}},
            })),
        )?;
        let used: HashSet<&str> = answer["aggregations"]["used"]["buckets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["key"].as_str())
            .collect();
        unused.extend(part.iter().filter(|h| !used.contains(h.as_str())).cloned());
    }
    let index = store.alias("vectors");
    let actions: Vec<(Value, Option<Value>)> = unused
        .iter()
        .map(|h| (json!({"delete": {"_index": index, "_id": h}}), None))
        .collect();
    store.client.bulk(&actions, true)?;
    Ok(unused.len() as u64)
}
