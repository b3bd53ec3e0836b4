//! `index --rebuild` built beside the old files and switched to at once (`Store::begin_rebuild`).
//! Every repo shares the four file indexes, so a rebuild cannot be a new index to move an
//! alias to; it is a set of documents the aliases do not show yet. Each document of a rebuild
//! carries the rebuild's token (`build`, a keyword), and the four file aliases carry a filter
//! (OpenSearch's filtered aliases, changed for all four in one atomic `_aliases` call):
//!
//! - while a rebuild runs, the filter hides its token: every reader (another process, this
//!   one's searches) sees the repo as it was, whatever has been written;
//! - the switch is one `_aliases` call that stops hiding the token and starts hiding the
//!   repo's documents of any other build (the old ones): readers see the new repo whole, at
//!   once; the old documents are then deleted and the filter goes.
//!
//! The filter is the state: a rebuild killed at any moment leaves it, and the next writer
//! (`recover`, at its connect) finishes the work. A token still hidden belongs to a dead
//! rebuild (only the writer holding the workspace's lock rebuilds, as only it writes
//! batches): its documents are deleted and the old repo stays, as if it never ran; a repo
//! already switched has its old documents deleted and its counts taken again. The writer
//! itself reads and writes the rebuild's documents through the versioned indexes behind the
//! aliases, which no filter hides.
//!
//! Outside a rebuild the aliases have no filter. While one runs, a kNN search applies the
//! filter after Lucene's walk, so hidden chunks with the same vectors take some of its `k`
//! (four times the limit, at least 100) places.

use anyhow::Result;
use serde_json::{json, Value};

use crate::OpenSearchStore;

/// The indexes holding a repo's files and what was read from them (a rebuild switches the
/// four together).
pub(crate) const FILE_KINDS: [&str; 4] = ["files", "chunks", "symbols", "calls"];

/// The rebuild this store is running (`begin_rebuild` to `commit_rebuild`).
pub(crate) struct Rebuild {
    pub repo: i64,
    pub token: String,
    /// The repo's document as `finish_run` made it (counts, time, skips), written at the
    /// switch so that the counts change with the files.
    pub finished: Option<Value>,
}

/// What the file aliases hide: rebuilds under way, and repos switched to a rebuild whose
/// old documents are not deleted yet.
#[derive(Debug, Default, PartialEq)]
struct Hidden {
    building: Vec<String>,
    /// (repo, the token of its live build): that repo's documents of any other build.
    retired: Vec<(i64, String)>,
}

impl Hidden {
    fn filter(&self) -> Option<Value> {
        let mut not = Vec::new();
        if !self.building.is_empty() {
            not.push(json!({"terms": {"build": self.building}}));
        }
        for (repo, token) in &self.retired {
            not.push(json!({"bool": {
                "filter": [{"term": {"repo_id": repo}}],
                "must_not": [{"term": {"build": token}}],
            }}));
        }
        (!not.is_empty()).then(|| json!({"bool": {"must_not": not}}))
    }

    fn parse(filter: &Value) -> Hidden {
        let mut out = Hidden::default();
        for clause in filter["bool"]["must_not"].as_array().into_iter().flatten() {
            if let Some(tokens) = clause["terms"]["build"].as_array() {
                out.building
                    .extend(tokens.iter().filter_map(|t| t.as_str().map(String::from)));
            }
            let repo = clause["bool"]["filter"][0]["term"]["repo_id"].as_i64();
            let token = clause["bool"]["must_not"][0]["term"]["build"].as_str();
            if let (Some(repo), Some(token)) = (repo, token) {
                out.retired.push((repo, token.to_string()));
            }
        }
        out
    }
}

/// The versioned indexes behind the four file aliases, comma-separated: what the writer
/// reads and deletes a rebuild's documents in, past the filter.
pub(crate) fn file_indexes(store: &OpenSearchStore) -> String {
    FILE_KINDS
        .iter()
        .map(|k| store.concrete(k))
        .collect::<Vec<_>>()
        .join(",")
}

/// The filter the file aliases carry now (all four carry the same one).
fn read(store: &OpenSearchStore) -> Result<Hidden> {
    let path = format!("/_alias/{}", store.alias("files"));
    let answer = store.client.json("GET", &path, None)?;
    let filter = answer
        .as_object()
        .into_iter()
        .flatten()
        .find_map(|(_, body)| body["aliases"][store.alias("files")]["filter"].as_object())
        .map(|f| Value::Object(f.clone()))
        .unwrap_or(Value::Null);
    Ok(Hidden::parse(&filter))
}

/// Sets the four aliases' filter in one call: readers see all four change at once.
fn write(store: &OpenSearchStore, hidden: &Hidden) -> Result<()> {
    let filter = hidden.filter();
    let actions: Vec<Value> = FILE_KINDS
        .iter()
        .map(|kind| {
            let mut add = json!({"index": store.concrete(kind), "alias": store.alias(kind)});
            if let Some(filter) = &filter {
                add["filter"] = filter.clone();
            }
            json!({ "add": add })
        })
        .collect();
    store
        .client
        .json("POST", "/_aliases", Some(&json!({ "actions": actions })))?;
    Ok(())
}

/// The token of the rebuild of `repo` this store runs, if any.
pub(crate) fn token(store: &OpenSearchStore, repo: i64) -> Option<String> {
    store
        .rebuilding
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .filter(|r| r.repo == repo)
        .map(|r| r.token.clone())
}

/// Starts a rebuild of `repo`: a new token, hidden from every reader from here on.
pub(crate) fn begin(store: &OpenSearchStore, repo: i64) -> Result<()> {
    // The field the filter reads (indexes made before it was mapped get it now).
    store.client.json(
        "PUT",
        &format!("/{}/_mapping", store.layout.aliases(&FILE_KINDS)),
        Some(&json!({"properties": {"build": {"type": "keyword"}}})),
    )?;
    let token = format!("b{}", store.new_ids(1)?);
    let mut hidden = read(store)?;
    hidden.building.push(token.clone());
    write(store, &hidden)?;
    *store.rebuilding.lock().unwrap_or_else(|e| e.into_inner()) = Some(Rebuild {
        repo,
        token,
        finished: None,
    });
    Ok(())
}

/// The query for `repo`'s documents of the rebuild `token`.
pub(crate) fn of_build(repo: i64, token: &str) -> Value {
    json!({"bool": {"filter": [{"term": {"repo_id": repo}}, {"term": {"build": token}}]}})
}

/// Every write of the rebuild made visible to the writer's reads of the versioned indexes.
pub(crate) fn settle(store: &OpenSearchStore) -> Result<()> {
    store.client.wait_for_writes()?;
    store.client.refresh(&file_indexes(store))
}

/// Keeps the repo's document `finish_run` made, to write it at the switch.
pub(crate) fn keep_finished(store: &OpenSearchStore, repo: i64, doc: Value) {
    if let Some(r) = store
        .rebuilding
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .filter(|r| r.repo == repo)
    {
        r.finished = Some(doc);
    }
}

fn take(store: &OpenSearchStore, repo: i64) -> Option<Rebuild> {
    let mut slot = store.rebuilding.lock().unwrap_or_else(|e| e.into_inner());
    if slot.as_ref().is_some_and(|r| r.repo == repo) {
        slot.take()
    } else {
        None
    }
}

/// The switch: readers see the rebuild of `repo` whole from this call's `_aliases` on; then
/// the old documents go.
pub(crate) fn commit(store: &OpenSearchStore, repo: i64) -> Result<()> {
    let Some(rebuild) = take(store, repo) else {
        return Ok(());
    };
    settle(store)?;
    let mut hidden = read(store)?;
    hidden.building.retain(|t| *t != rebuild.token);
    hidden.retired.push((repo, rebuild.token.clone()));
    write(store, &hidden)?;
    if let Some(doc) = &rebuild.finished {
        store.put_meta(&format!("repo-{repo}"), doc)?;
    }
    retire(store, repo, &rebuild.token)?;
    store.bump("generation", 1)?;
    Ok(())
}

/// Deletes `repo`'s documents of any build but `token` (the files before a switch) and stops
/// hiding them.
fn retire(store: &OpenSearchStore, repo: i64, token: &str) -> Result<()> {
    // A delete-by-query finds what a refresh made searchable: a writer killed after the
    // switch may have left old writes unrefreshed.
    store.client.refresh(&file_indexes(store))?;
    store.client.delete_where(
        &file_indexes(store),
        json!({"bool": {
            "filter": [{"term": {"repo_id": repo}}],
            "must_not": [{"term": {"build": token}}],
        }}),
    )?;
    let mut hidden = read(store)?;
    hidden.retired.retain(|(r, t)| !(*r == repo && t == token));
    write(store, &hidden)
}

/// Gives up the rebuild of `repo`: its documents go, the old repo stays as it was.
pub(crate) fn abandon(store: &OpenSearchStore, repo: i64) -> Result<()> {
    let Some(rebuild) = take(store, repo) else {
        return Ok(());
    };
    // What is still being written is deleted below whatever became of it.
    let _ = store.client.wait_for_writes();
    drop_build(store, &rebuild.token)
}

fn drop_build(store: &OpenSearchStore, token: &str) -> Result<()> {
    // What the rebuild wrote and nobody refreshed yet must be found by the delete.
    store.client.refresh(&file_indexes(store))?;
    store
        .client
        .delete_where(&file_indexes(store), json!({"term": {"build": token}}))?;
    let mut hidden = read(store)?;
    hidden.building.retain(|t| t != token);
    write(store, &hidden)
}

/// Finishes what a rebuild killed midway left (a writer's connect): a rebuild that did not
/// switch is dropped, one that switched has its old documents deleted and its counts taken.
pub(crate) fn recover(store: &OpenSearchStore) -> Result<()> {
    let hidden = read(store)?;
    if hidden == Hidden::default() {
        return Ok(());
    }
    let own = store
        .rebuilding
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|r| r.token.clone());
    for token in &hidden.building {
        if Some(token) != own.as_ref() {
            drop_build(store, token)?;
        }
    }
    for (repo, token) in &hidden.retired {
        retire(store, *repo, token)?;
        if let Some(mut doc) = store.meta(&format!("repo-{repo}"))? {
            let of_repo = json!({"term": {"repo_id": repo}});
            doc["files"] = json!(store.client.count(&store.alias("files"), of_repo.clone())?);
            doc["chunks"] = json!(store.client.count(&store.alias("chunks"), of_repo)?);
            store.put_meta(&format!("repo-{repo}"), &doc)?;
        }
        store.bump("generation", 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_is_read_back_as_it_was_written() {
        let hidden = Hidden {
            building: vec!["b7".into(), "b9".into()],
            retired: vec![(3, "b5".into())],
        };
        assert_eq!(Hidden::parse(&hidden.filter().unwrap()), hidden);
        assert_eq!(Hidden::default().filter(), None);
        assert_eq!(Hidden::parse(&Value::Null), Hidden::default());
    }
}
