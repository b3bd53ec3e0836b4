//! The index distributed over a three-node cluster (quarry-test-opensearch's `cluster`): three
//! shards with a replica each. A storm of searches runs while one node is killed (SIGKILL, no
//! goodbye) and brought back: every answer is complete and the same as before the kill, and
//! the node rejoins the cluster. In a file of its own, so its test process starts only the
//! cluster's nodes.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quarry_core::store::{IndexBatch, IndexedFile, SkipCounts, Store};
use quarry_core::{FileState, Language, LexicalQuery, Requirement, VectorQuery};
use quarry_opensearch::OpenSearchStore;

/// quarry's own sources, chunked: enough rows to spread over three shards.
fn sources() -> IndexBatch {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut batch = IndexBatch::default();
    for krate in ["quarry-core"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(krate).join("src"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            batch.upserts.push(IndexedFile {
                content: quarry_chunk::chunk_file(Language::Rust, &text, &Default::default()),
                path: path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                language: Language::Rust,
                state: FileState {
                    hash: quarry_core::content_hash(text.as_bytes()),
                    size: text.len() as u64,
                    mtime_ns: 1,
                },
                grep_text: Some(text),
                grep_trigrams: None,
            });
        }
    }
    batch
}

/// A unit vector made from a text hash: the same text, the same vector.
fn vector_of(hash: &str) -> Vec<f32> {
    let v: Vec<f32> = hash
        .bytes()
        .take(8)
        .map(|b| f32::from(b % 16) + 1.0)
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

/// Every kind of read a search makes, as text to compare.
fn answers(store: &OpenSearchStore) -> anyhow::Result<Vec<String>> {
    let query = |text: &str, limit: usize| LexicalQuery {
        terms: quarry_core::tokens::query_terms(text),
        limit,
        ..Default::default()
    };
    let mut out = Vec::new();
    for q in [
        "store the chunks of a file",
        "split camelCase identifiers into tokens",
    ] {
        let hits = store.search_lexical(&query(q, 20))?;
        anyhow::ensure!(!hits.is_empty(), "{q:?} found nothing");
        out.push(format!(
            "{:?}",
            hits.iter()
                .map(|h| (&h.path, h.start_line, h.score))
                .collect::<Vec<_>>()
        ));
        let files = store.search_files_lexical(&query(q, 10))?;
        out.push(format!(
            "{:?}",
            files.iter().map(|f| (&f.path, f.score)).collect::<Vec<_>>()
        ));
    }
    for probe in ["0123abcd", "fedc9876"] {
        for path_glob in [None, Some("*store*".to_string())] {
            let hits = store.search_vector(&VectorQuery {
                vectors: vec![vector_of(probe)],
                limit: 10,
                path_glob: path_glob.clone(),
                ..Default::default()
            })?;
            anyhow::ensure!(hits.len() == 10, "{} neighbours of {probe}", hits.len());
            out.push(format!(
                "{:?}",
                hits.iter()
                    .map(|h| (&h.path, h.start_line, h.score))
                    .collect::<Vec<_>>()
            ));
        }
    }
    out.push(format!("{:?}", store.definitions("query_terms", &[], 10)?));
    let mut may = store
        .trigram_lookup(&Requirement::Contains("query_terms".into()), None)?
        .may_match;
    may.sort();
    out.push(format!("{may:?}"));
    Ok(out)
}

#[test]
fn opensearch_three_nodes_answer_every_search_whole_while_one_is_killed_and_rejoins() {
    let started = Instant::now();
    let cluster = quarry_test_opensearch::cluster(3);
    eprintln!("cluster green after {:?}", started.elapsed());
    let hosts: Vec<String> = cluster
        .nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.http_port))
        .collect();
    let prefix = quarry_test_opensearch::index_prefix("distributed");
    let url = format!(
        "opensearch+http://{}/{prefix}?shards=3&replicas=1",
        hosts.join(",")
    );
    let mut store = OpenSearchStore::connect(&url).unwrap();
    let repo = store.ensure_repo("quarry", "/src/quarry").unwrap();
    store.apply(repo.id, &sources()).unwrap();
    store.finish_run(repo.id, &SkipCounts::new()).unwrap();
    store.set_embedding_model("hash-vectors").unwrap();
    let mut after: Option<String> = None;
    loop {
        let pending = store
            .pending_embeddings(500, after.as_deref(), &[])
            .unwrap();
        let Some(last) = pending.last() else { break };
        after = Some(last.hash.clone());
        let vectors: Vec<(String, Vec<f32>)> = pending
            .iter()
            .map(|p| (p.hash.clone(), vector_of(&p.hash)))
            .collect();
        store.put_embeddings(&vectors).unwrap();
    }
    cluster.wait_for_green(Duration::from_secs(60)).unwrap();
    let (status, shards) = quarry_test_opensearch::request(
        &cluster.nodes[0],
        "GET",
        &format!("/_cat/shards/{prefix}-chunks?h=prirep,node"),
        None,
    )
    .unwrap();
    assert_eq!(status, 200);
    let nodes_holding: std::collections::HashSet<&str> = shards
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(
        shards.lines().count(),
        6,
        "3 primaries and 3 replicas: {shards}"
    );
    assert_eq!(nodes_holding.len(), 3, "spread over every node: {shards}");
    let expected = answers(&store).unwrap();
    eprintln!("indexed and embedded after {:?}", started.elapsed());

    // The storm: readers of their own, each asking everything again and again.
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let wrong: Arc<Mutex<Vec<String>>> = Arc::default();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (url, stop, rounds, wrong, expected) = (
                url.clone(),
                stop.clone(),
                rounds.clone(),
                wrong.clone(),
                expected.clone(),
            );
            std::thread::spawn(move || {
                let store = OpenSearchStore::connect(&url).unwrap();
                while !stop.load(Ordering::SeqCst) {
                    match answers(&store) {
                        Ok(got) if got == expected => {}
                        Ok(got) => wrong.lock().unwrap().push(format!(
                            "a different answer: {:?}",
                            got.iter().zip(&expected).find(|(a, b)| a != b)
                        )),
                        Err(e) => wrong.lock().unwrap().push(format!("{e:#}")),
                    }
                    rounds.fetch_add(1, Ordering::SeqCst);
                    // Room for the restarting node's JVM on a small machine.
                    std::thread::sleep(Duration::from_millis(25));
                }
            })
        })
        .collect();
    let wait_rounds = |n: usize| {
        let target = rounds.load(Ordering::SeqCst) + n;
        let deadline = Instant::now() + Duration::from_secs(60);
        while rounds.load(Ordering::SeqCst) < target && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            rounds.load(Ordering::SeqCst) >= target,
            "the readers stalled"
        );
    };
    wait_rounds(4);
    // The first node the URL names, holding a primary and a replica, dies at once.
    let killed = &cluster.nodes[0];
    killed.kill();
    let before = rounds.load(Ordering::SeqCst);
    wait_rounds(6);
    let while_down = rounds.load(Ordering::SeqCst) - before;
    eprintln!("node killed, storm went on, after {:?}", started.elapsed());
    killed.restart();
    eprintln!("node answering again after {:?}", started.elapsed());
    cluster
        .wait_for_green(Duration::from_secs(120))
        .unwrap_or_else(|e| {
            panic!("{e}\n{}", killed.log());
        });
    eprintln!("green again after {:?}", started.elapsed());
    wait_rounds(4);
    stop.store(true, Ordering::SeqCst);
    for reader in readers {
        reader.join().unwrap();
    }
    let wrong = wrong.lock().unwrap();
    assert!(
        wrong.is_empty(),
        "{} of {} rounds answered wrongly; first: {}",
        wrong.len(),
        rounds.load(Ordering::SeqCst),
        wrong[0]
    );
    eprintln!(
        "{} rounds of {} reads each, {while_down} with a node down: all answers whole and equal",
        rounds.load(Ordering::SeqCst),
        expected.len()
    );
    // The node is back in the cluster, and answers itself.
    let (_, nodes) =
        quarry_test_opensearch::request(killed, "GET", "/_cat/nodes?h=name", None).unwrap();
    assert_eq!(nodes.lines().count(), 3, "{nodes}");
    let alone = format!("opensearch+http://127.0.0.1:{}/{prefix}", killed.http_port);
    assert_eq!(
        answers(&OpenSearchStore::connect(&alone).unwrap()).unwrap(),
        expected
    );
}
