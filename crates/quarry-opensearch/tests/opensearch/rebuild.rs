//! `index --rebuild` on OpenSearch (`Store::begin_rebuild`): built beside the old files, readers
//! (another connection, as another process) see the old repo or the new one, never a
//! half-built one (the fault campaign: 58 of 64 answers differed during a rebuild); a rebuild
//! given up or killed before its switch leaves the old repo as it was.

use std::time::Duration;

use quarry_core::store::{IndexBatch, SkipCounts, Store};
use quarry_opensearch::OpenSearchStore;
use quarry_test_opensearch::{request, server, store_url};

use crate::common::{chunk, file, query};

fn batch(prefix: &str, word: &str, n: usize) -> IndexBatch {
    let mut batch = IndexBatch::default();
    for i in 0..n {
        batch.upserts.push(file(
            &format!("{prefix}{i:02}.py"),
            &format!("{word}{i}"),
            vec![chunk(
                1,
                1,
                Some(&format!("{word}_{i}")),
                &format!("def {word}_{i}(): return {word}"),
            )],
        ));
    }
    batch
}

/// How many of `word`'s chunks a reader finds, and the files it counts for repo `r`.
fn seen(reader: &OpenSearchStore, word: &str) -> (usize, u64) {
    let mut q = query(word);
    q.limit = 100;
    q.repos = vec!["r".into()];
    let found = reader.search_lexical(&q).unwrap().len();
    let files = reader
        .stats()
        .unwrap()
        .iter()
        .find(|s| s.repo.name == "r")
        .unwrap()
        .files;
    (found, files)
}

/// Every write made searchable, as a refresh by any process (or the 30 s interval) would.
fn refresh_all(prefix: &str) {
    let (status, body) = request(server(), "POST", &format!("/{prefix}-*/_refresh"), None).unwrap();
    assert!(status < 300, "{status} {body}");
}

fn filter_of(prefix: &str) -> String {
    let (_, body) = request(server(), "GET", &format!("/_alias/{prefix}-chunks"), None).unwrap();
    body
}

#[test]
fn opensearch_a_rebuild_is_built_beside_and_readers_see_the_old_repo_or_the_new() {
    let url = store_url("rebuild");
    let prefix = url.rsplit('/').next().unwrap().to_string();
    let timeout = Duration::from_secs(30);
    let mut writer = OpenSearchStore::connect(&url).unwrap();
    let repo = writer.ensure_repo("r", "/src/r").unwrap().id;
    let other = writer.ensure_repo("o", "/src/o").unwrap().id;
    writer.apply(repo, &batch("old/m", "oldword", 30)).unwrap();
    writer.finish_run(repo, &SkipCounts::new()).unwrap();
    writer.apply(other, &batch("o/m", "oldword", 3)).unwrap();
    writer.finish_run(other, &SkipCounts::new()).unwrap();
    writer.set_embedding_model("m").unwrap();
    let pending = writer.pending_embeddings(100, None, &[]).unwrap();
    let vectors: Vec<(String, Vec<f32>)> = pending
        .iter()
        .map(|p| (p.hash.clone(), vec![0.6, 0.8]))
        .collect();
    writer.put_embeddings(&vectors).unwrap();
    let reader = OpenSearchStore::connect_reading(&url, timeout).unwrap();
    assert_eq!(seen(&reader, "oldword"), (30, 30));
    let near = || {
        reader
            .search_vector(&quarry_core::VectorQuery {
                vectors: vec![vec![0.6, 0.8]],
                limit: 5,
                repos: vec!["r".into()],
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect::<Vec<_>>()
    };
    assert_eq!(near().len(), 5);

    let beside = writer.begin_rebuild(repo).unwrap();
    assert!(writer.file_states(repo).unwrap().is_empty(), "starts over");
    writer.apply(repo, &batch("new/m", "newword", 12)).unwrap();
    assert_eq!(writer.file_states(repo).unwrap().len(), 12);
    refresh_all(&prefix);
    // Half built: readers still see the old repo, whole.
    assert_eq!(seen(&reader, "oldword"), (30, 30), "half built");
    assert!(beside);
    assert_eq!(seen(&reader, "newword"), (0, 30));
    let during = near();
    assert!(
        during.len() == 5 && during.iter().all(|p| p.starts_with("old/")),
        "{during:?}"
    );
    writer.apply(repo, &batch("new/n", "newword", 12)).unwrap();
    writer.finish_run(repo, &SkipCounts::new()).unwrap();
    refresh_all(&prefix);
    assert_eq!(seen(&reader, "oldword"), (30, 30), "finished, not switched");

    writer.commit_rebuild(repo).unwrap();
    assert_eq!(seen(&reader, "newword"), (24, 24));
    assert_eq!(seen(&reader, "oldword"), (0, 24));
    assert_eq!(writer.file_states(repo).unwrap().len(), 24);
    // The other repo is untouched, and the aliases are plain again.
    let mut q = query("oldword");
    q.repos = vec!["o".into()];
    assert_eq!(reader.search_lexical(&q).unwrap().len(), 3);
    assert!(
        !filter_of(&prefix).contains("filter"),
        "{}",
        filter_of(&prefix)
    );
    // The old chunks took their vectors with them.
    assert_eq!(writer.prune_vectors().unwrap(), 30);

    // Given up (Ctrl-C, an error): the new files go, the old stay.
    assert!(writer.begin_rebuild(repo).unwrap());
    writer.apply(repo, &batch("gone/m", "goneword", 5)).unwrap();
    writer.abandon_rebuild(repo).unwrap();
    refresh_all(&prefix);
    assert_eq!(seen(&reader, "newword"), (24, 24));
    assert_eq!(seen(&reader, "goneword"), (0, 24));
    assert_eq!(writer.file_states(repo).unwrap().len(), 24);
    assert!(!filter_of(&prefix).contains("filter"));

    // Killed before its switch (the store dropped without a word, as by kill -9): readers keep
    // the old repo, and the next writer drops what was built.
    assert!(writer.begin_rebuild(repo).unwrap());
    writer.apply(repo, &batch("dead/m", "deadword", 7)).unwrap();
    writer.finish_run(repo, &SkipCounts::new()).unwrap();
    drop(writer);
    refresh_all(&prefix);
    assert_eq!(seen(&reader, "newword"), (24, 24));
    assert_eq!(seen(&reader, "deadword"), (0, 24));
    let next = OpenSearchStore::connect(&url).unwrap();
    assert!(!filter_of(&prefix).contains("filter"));
    assert_eq!(next.file_states(repo).unwrap().len(), 24);
    let (_, body) = request(
        server(),
        "GET",
        &format!("/{prefix}-chunks-v3/_count?q=build:*"),
        None,
    )
    .unwrap();
    assert!(
        body.contains("\"count\":24"),
        "only the live build's chunks: {body}"
    );
}

/// Killed after the switch and before the old documents went: the next writer deletes them
/// and takes the repo's counts again.
#[test]
fn opensearch_a_rebuild_killed_after_its_switch_is_finished_by_the_next_writer() {
    let url = store_url("rebuild_switched");
    let prefix = url.rsplit('/').next().unwrap().to_string();
    let mut writer = OpenSearchStore::connect(&url).unwrap();
    let repo = writer.ensure_repo("r", "/src/r").unwrap().id;
    writer.apply(repo, &batch("old/m", "oldword", 10)).unwrap();
    writer.finish_run(repo, &SkipCounts::new()).unwrap();
    assert!(writer.begin_rebuild(repo).unwrap());
    writer.apply(repo, &batch("new/m", "newword", 4)).unwrap();
    writer.finish_run(repo, &SkipCounts::new()).unwrap();
    refresh_all(&prefix);
    let (_, body) = request(
        server(),
        "GET",
        &format!("/{prefix}-chunks-v3/_search?q=build:*&size=1"),
        None,
    )
    .unwrap();
    let token = body
        .split("\"build\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    drop(writer);
    // The switch as the killed writer made it: the old files hidden, the new shown.
    let filter = serde_json::json!({"bool": {"must_not": [{"bool": {
        "filter": [{"term": {"repo_id": repo}}],
        "must_not": [{"term": {"build": token}}],
    }}]}});
    let actions: Vec<serde_json::Value> = ["files", "chunks", "symbols", "calls"]
        .iter()
        .map(|kind| {
            serde_json::json!({"add": {"index": format!("{prefix}-{kind}-v3"),
                                       "alias": format!("{prefix}-{kind}"), "filter": filter}})
        })
        .collect();
    let (status, body) = request(
        server(),
        "POST",
        "/_aliases",
        Some(&serde_json::json!({ "actions": actions }).to_string()),
    )
    .unwrap();
    assert!(status < 300, "{status} {body}");
    let reader = OpenSearchStore::connect_reading(&url, Duration::from_secs(30)).unwrap();
    assert_eq!(seen(&reader, "newword").0, 4);
    assert_eq!(seen(&reader, "oldword").0, 0);

    let next = OpenSearchStore::connect(&url).unwrap();
    assert!(!filter_of(&prefix).contains("filter"));
    assert_eq!(seen(&next, "newword"), (4, 4));
    assert_eq!(seen(&next, "oldword"), (0, 4));
}

/// A schema move while a rebuild runs (another quarry connecting) keeps the rebuild hidden:
/// the aliases' filter moves with them.
#[test]
fn opensearch_a_schema_move_during_a_rebuild_keeps_it_hidden() {
    let url = store_url("rebuild_move");
    let timeout = Duration::from_secs(30);
    let mut old = OpenSearchStore::connect_at(&url, timeout, 0).unwrap();
    let repo = old.ensure_repo("r", "/src/r").unwrap().id;
    old.apply(repo, &batch("old/m", "oldword", 6)).unwrap();
    old.finish_run(repo, &SkipCounts::new()).unwrap();
    assert!(old.begin_rebuild(repo).unwrap());
    old.apply(repo, &batch("new/m", "newword", 4)).unwrap();
    old.finish_run(repo, &SkipCounts::new()).unwrap();
    let reader = OpenSearchStore::connect_reading(&url, timeout).unwrap();
    assert_eq!(seen(&reader, "oldword"), (6, 6));
    assert_eq!(seen(&reader, "newword"), (0, 6));
}
