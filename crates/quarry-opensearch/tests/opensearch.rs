//! quarry's OpenSearch store against a real node (OpenSearch 2.19 with k-NN, started by
//! quarry-test-opensearch). Every test is named `opensearch_*`: `cargo test opensearch` runs
//! them. The tests of ranking against the embedded store are in ranking.rs, of history in
//! history.rs, of the schema's versions, crash recovery and a busy cluster in operations.rs.

use quarry_core::store::{IndexBatch, SkipCounts, Store};
use quarry_core::VectorQuery;

mod common;
#[path = "opensearch/history.rs"]
mod history;
#[path = "opensearch/operations.rs"]
mod operations;
#[path = "opensearch/ranking.rs"]
mod ranking;
#[path = "opensearch/rebuild.rs"]
mod rebuild;
use common::{chunk, file, query, store};

#[test]
fn opensearch_chunks_keep_their_page_cell_and_language_and_type_filters_by_them() {
    let mut store = store("documents");
    quarry_core::conformance::chunks_keep_their_place_and_language(&mut store);
}

#[test]
fn opensearch_trigram_lookup_says_which_files_can_contain_the_literals() {
    let mut store = store("trigrams");
    quarry_core::conformance::trigram_lookup_says_which_files_can_contain_the_literals(&mut store);
}

#[test]
fn opensearch_stores_files_and_finds_them_by_words_names_and_calls() {
    let mut store = store("roundtrip");
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    assert_eq!(store.ensure_repo("r", "/src/r").unwrap().id, repo.id);
    assert_eq!(store.ensure_repo("r", "/elsewhere/r").unwrap().name, "r-2");
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "src/parser.py",
        "h1",
        vec![chunk(1, 3, Some("parse_config"), "def parse_config(path):\n    \"\"\"Reads\ta config file.\"\"\"\n    return load(path) \\ 2")],
    ));
    batch.upserts.push(file(
        "src/other.py",
        "h2",
        vec![chunk(1, 2, Some("render"), "def render(page): return page")],
    ));
    store.apply(repo.id, &batch).unwrap();
    store.finish_run(repo.id, &SkipCounts::new()).unwrap();

    let states = store.file_states(repo.id).unwrap();
    assert_eq!(states["src/parser.py"].hash, "h1");
    // camelCase/snake_case split as for the embedded store; stemming finds "reads" from "read".
    let hits = store.search_lexical(&query("parse config")).unwrap();
    assert_eq!(hits[0].path, "src/parser.py");
    assert!(
        hits[0].text.contains("Reads\ta config"),
        "text kept byte for byte: {:?}",
        hits[0].text
    );
    assert_eq!(store.search_lexical(&query("read")).unwrap().len(), 1);
    let files = store.search_files_lexical(&query("render")).unwrap();
    assert_eq!(files[0].path, "src/other.py");
    let defs = store.definitions("render", &[], 10).unwrap();
    assert_eq!(
        (defs[0].path.as_str(), defs[0].start_line),
        ("src/other.py", 1)
    );
    // Several names in one request: each answered as alone, in the order asked.
    let names: Vec<String> = ["missing", "render", "helper", "render"]
        .map(String::from)
        .to_vec();
    let each: Vec<_> = names
        .iter()
        .map(|n| store.definitions(n, &[], 10).unwrap())
        .collect();
    assert_eq!(store.definitions_of_each(&names, &[], 10).unwrap(), each);
    assert!(each[0].is_empty() && !each[1].is_empty());
    assert_eq!(store.callers("helper", &[], 10).unwrap().len(), 2);
    assert_eq!(store.file_chunks("r", "src/parser.py").unwrap().len(), 1);
    assert_eq!(
        store.files_by_stem(&["parser".into()], &[], 10).unwrap(),
        vec![("r".to_string(), "src/parser.py".to_string())]
    );
    let mut filtered = query("def");
    filtered.path_glob = Some("src/o*.py".into());
    let only = store.search_lexical(&filtered).unwrap();
    assert_eq!(
        only.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["src/other.py"]
    );
    let stats = store.stats().unwrap();
    let stats = stats.iter().find(|s| s.repo.name == "r").unwrap();
    assert_eq!((stats.files, stats.chunks, stats.symbols), (2, 2, 2));
    assert_eq!(stats.repo.files, 2, "counted by finish_run");
    assert_eq!(stats.languages["python"], 2);

    // Incremental: a changed file replaces its rows; a deleted one takes them away; a file
    // whose state alone moved keeps its rows with the new state.
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "src/parser.py",
        "h3",
        vec![chunk(1, 1, None, "nothing here")],
    ));
    batch.deleted.push("src/other.py".into());
    store.apply(repo.id, &batch).unwrap();
    assert!(store
        .search_lexical(&query("parse config"))
        .unwrap()
        .is_empty());
    assert!(store.definitions("render", &[], 10).unwrap().is_empty());
    assert!(store.callers("helper", &[], 10).unwrap().len() == 1);
    assert_eq!(store.file_states(repo.id).unwrap().len(), 1);
    let mut touched = IndexBatch::default();
    let mut state = store.file_states(repo.id).unwrap()["src/parser.py"].clone();
    state.mtime_ns = 42;
    touched.touched.push(("src/parser.py".into(), state));
    store.apply(repo.id, &touched).unwrap();
    assert_eq!(
        store.file_states(repo.id).unwrap()["src/parser.py"].mtime_ns,
        42
    );
    assert_eq!(store.search_lexical(&query("nothing")).unwrap().len(), 1);

    // A rebuild starts the repo's files over; the repo stays.
    store.clear_files(repo.id).unwrap();
    assert!(store.file_states(repo.id).unwrap().is_empty());
    assert!(store.search_lexical(&query("nothing")).unwrap().is_empty());
    assert_eq!(store.repos().unwrap().len(), 2);
    store.remove_repo(repo.id).unwrap();
    assert_eq!(store.repos().unwrap().len(), 1);
    // Its name is free again.
    assert_eq!(store.ensure_repo("r", "/third/r").unwrap().name, "r");
}

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

#[test]
fn opensearch_vectors_answer_nearest_first_with_filters_inside_the_search() {
    let mut store = store("vectors");
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let other = store.ensure_repo("o", "/src/o").unwrap();
    let mut batch = IndexBatch::default();
    for (i, name) in ["alpha", "beta", "gamma"].iter().enumerate() {
        batch.upserts.push(file(
            &format!("{name}.py"),
            &format!("h{i}"),
            vec![chunk(1, 1, Some(name), &format!("def {name}(): pass"))],
        ));
    }
    store.apply(repo.id, &batch).unwrap();
    // More chunks in another repo than the kNN search's k (100), all nearer the probe than
    // r's: a filter on r must still find r's three. Filtering the top k afterwards would find
    // none; only a filter inside the search (Lucene's efficient filtering) finds them.
    let mut crowd = IndexBatch::default();
    for i in 0..160 {
        crowd.upserts.push(file(
            &format!("crowd{i}.py"),
            &format!("c{i}"),
            vec![chunk(1, 1, None, &format!("crowd member number {i}"))],
        ));
    }
    store.apply(other.id, &crowd).unwrap();
    assert!(!store.set_embedding_model("model-a").unwrap());
    let pending = store.pending_embeddings(500, None, &[]).unwrap();
    assert_eq!(pending.len(), 163);
    assert_eq!(
        store
            .pending_embeddings(100, None, &["r".to_string()])
            .unwrap()
            .len(),
        3
    );
    // In hash order, and from after a given hash (a backfill's next batch).
    let hashes: Vec<&str> = pending.iter().map(|p| p.hash.as_str()).collect();
    assert!(hashes.windows(2).all(|w| w[0] < w[1]), "{hashes:?}");
    let rest = store.pending_embeddings(500, Some(hashes[0]), &[]).unwrap();
    let rest: Vec<&str> = rest.iter().map(|p| p.hash.as_str()).collect();
    assert_eq!(rest, hashes[1..]);
    let vectors: Vec<(String, Vec<f32>)> = pending
        .iter()
        .map(|p| {
            let mut v = vec![0.1f32; 8];
            match ["alpha", "beta", "gamma"]
                .iter()
                .position(|n| p.text.contains(n))
            {
                Some(axis) => v[axis] = 1.0,
                // The crowd sits right on the probe's axis, nearer than any of r's.
                None => {
                    v[1] = 1.0;
                    v[7] = 0.05;
                }
            }
            (p.hash.clone(), unit(&v))
        })
        .collect();
    store.put_embeddings(&vectors).unwrap();
    assert!(store.pending_embeddings(10, None, &[]).unwrap().is_empty());
    assert_eq!(store.coverage(&[]).unwrap().embedded, 163);
    assert_eq!(store.coverage(&["r".into()]).unwrap().total, 3);

    let mut probe = vec![0.1f32; 8];
    probe[1] = 1.0;
    let search = |q: VectorQuery| store.search_vector(&q).unwrap();
    let in_repo = search(VectorQuery {
        vectors: vec![unit(&probe)],
        limit: 3,
        repos: vec!["r".into()],
        ..Default::default()
    });
    assert_eq!(in_repo.len(), 3);
    assert_eq!(in_repo[0].path, "beta.py");
    assert!(
        (in_repo[0].score - 1.0).abs() < 1e-4,
        "cosine of the same vector: {}",
        in_repo[0].score
    );
    // Unfiltered, the crowd fills the answer: it is nearer than any of r's.
    let unfiltered = search(VectorQuery {
        vectors: vec![unit(&probe)],
        limit: 3,
        ..Default::default()
    });
    assert!(
        unfiltered.iter().all(|h| h.path.starts_with("crowd")),
        "{unfiltered:?}"
    );
    let filtered = search(VectorQuery {
        vectors: vec![unit(&probe)],
        limit: 3,
        path_glob: Some("gamma*".into()),
        ..Default::default()
    });
    assert_eq!(
        filtered.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["gamma.py"]
    );
    let by_language = search(VectorQuery {
        vectors: vec![unit(&probe)],
        limit: 5,
        language: Some(quarry_core::Language::Rust),
        ..Default::default()
    });
    assert!(by_language.is_empty());

    // A new chunk with a known text gets its vector when written.
    let mut again = IndexBatch::default();
    again.upserts.push(file(
        "alpha.py",
        "h9",
        vec![chunk(1, 1, Some("alpha"), "def alpha(): pass")],
    ));
    store.apply(repo.id, &again).unwrap();
    assert!(store.pending_embeddings(10, None, &[]).unwrap().is_empty());
    // A deleted file's vector is pruned; a second prune finds nothing.
    let mut gone = IndexBatch::default();
    gone.deleted.push("gamma.py".into());
    store.apply(repo.id, &gone).unwrap();
    assert_eq!(store.prune_vectors().unwrap(), 1);
    assert_eq!(store.prune_vectors().unwrap(), 0);
    assert_eq!(store.coverage(&["r".into()]).unwrap().embedded, 2);

    // Another dimension is refused with what to do; another model drops the vectors.
    let err = store
        .put_embeddings(&[(vectors[0].0.clone(), unit(&[1.0; 4]))])
        .unwrap_err();
    let message = format!("{err:#}");
    assert!(
        message.contains("8-dimensional") && message.contains("makes 4"),
        "{message}"
    );
    assert!(store.set_embedding_model("model-b").unwrap());
    assert_eq!(store.coverage(&[]).unwrap().embedded, 0);
    store
        .put_embeddings(&[(vectors[0].0.clone(), unit(&[1.0; 4]))])
        .unwrap();
}
