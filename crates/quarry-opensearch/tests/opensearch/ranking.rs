//! BM25 on OpenSearch against the embedded store's: the same tokens, k1 and b, field
//! weights and stemmer, and FTS5's formula computed by quarry over the candidates Lucene's
//! BM25 finds (bm25.rs): the same orders and, but for stemmer differences, the same scores.

use std::path::Path;

use quarry_core::store::{IndexBatch, IndexedFile, SkipCounts, Store};
use quarry_core::{FileState, Language, LexicalQuery};

use crate::common::{chunk, file, query, store};

fn paths(s: &dyn Store, q: &LexicalQuery) -> Vec<String> {
    s.search_lexical(q)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect()
}

/// A small fixture where the weights, the lengths and the term counts decide: both stores
/// rank every query's chunks in the same order.
#[test]
fn opensearch_ranks_a_small_fixture_in_the_embedded_stores_order() {
    let texts = [
        ("src/retry.py", Some("retry_request"), "def retry_request(request, attempts):\n    \"\"\"Retry a request with exponential backoff.\"\"\"\n    for attempt in range(attempts):\n        sleep(2 ** attempt)"),
        ("src/backoff.py", Some("backoff"), "def backoff(n):\n    return 2 ** n"),
        ("src/http/client.py", Some("send_request"), "def send_request(url, body):\n    \"\"\"Send one request; no retry here.\"\"\"\n    return post(url, body)"),
        ("docs/retries.md", None, "Retries\n\nEvery failed request is retried three times, waiting longer each time: retry, retry, retry."),
        ("src/queue/jobs.py", Some("requeue_failed"), "def requeue_failed(job):\n    \"\"\"Put a failed upload job back on the queue.\"\"\"\n    queue.put(job)"),
        ("src/config.py", Some("parse_config"), "def parse_config(path):\n    \"\"\"Reads a config file: timeouts, retry counts, the queue's name.\"\"\"\n    return load(path)"),
        ("tests/test_retry.py", Some("test_retry_request"), "def test_retry_request():\n    assert retry_request(fake, 3)"),
    ];
    let mut batch = IndexBatch::default();
    for (i, (path, symbol, text)) in texts.iter().enumerate() {
        let lines = text.lines().count() as u32;
        batch.upserts.push(file(
            path,
            &format!("h{i}"),
            vec![chunk(1, lines, *symbol, text)],
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = quarry_store::SqliteStore::open(&dir.path().join("index.sqlite")).unwrap();
    let mut os = store("small_fixture");
    for s in [&mut sqlite as &mut dyn Store, &mut os as &mut dyn Store] {
        let repo = s.ensure_repo("r", "/src/r").unwrap();
        s.apply(repo.id, &batch).unwrap();
        s.finish_run(repo.id, &SkipCounts::new()).unwrap();
    }
    for q in [
        "retry request",
        "exponential backoff",
        "requeue a failed upload job",
        "parse config file",
        "send request",
        "retry",
        "queue",
    ] {
        let (a, b) = (paths(&sqlite, &query(q)), paths(&os, &query(q)));
        assert!(!a.is_empty(), "{q:?} finds nothing");
        assert_eq!(a, b, "{q:?}: embedded vs OpenSearch");
    }
    // A term named three times weighs three times: it decides the order on both.
    let mut repeated = query("retry queue");
    repeated.terms = ["queue", "queue", "queue", "retry"]
        .map(String::from)
        .to_vec();
    assert_eq!(paths(&sqlite, &repeated), paths(&os, &repeated));
    // The scores themselves, phrases among the terms (a phrase's count comes from the server
    // as its tokens' count times theirs: bm25.rs divides), repeated tokens in one text.
    let scored = |s: &dyn Store, q: &LexicalQuery| -> Vec<(String, f64)> {
        s.search_lexical(q)
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    for terms in [
        vec!["retry request", "retry"],
        vec!["retry", "retry", "queue"],
        vec!["failed upload job", "exponential"],
    ] {
        let mut q = query("x");
        q.terms = terms.iter().map(|t| t.to_string()).collect();
        let (a, b) = (scored(&sqlite, &q), scored(&os, &q));
        assert!(!a.is_empty(), "{terms:?} finds nothing");
        assert_eq!(a.len(), b.len(), "{terms:?}: {a:?} vs {b:?}");
        for ((pa, sa), (pb, sb)) in a.iter().zip(&b) {
            assert_eq!(pa, pb, "{terms:?}: {a:?} vs {b:?}");
            assert!(
                (sa - sb).abs() <= 1e-9 * sa.abs().max(1.0),
                "{terms:?}: {pa} scores {sa} embedded, {sb} on OpenSearch"
            );
        }
    }
    // Weights of the query are the ones used: path alone.
    let mut by_path = query("retry");
    by_path.weights = quarry_core::store::FieldWeights {
        path: 1.0,
        symbol: 0.0,
        body: 0.0,
    };
    assert_eq!(paths(&sqlite, &by_path), paths(&os, &by_path));
    // Files rank as on the embedded store too.
    let files = |s: &dyn Store| -> Vec<String> {
        s.search_files_lexical(&query("retry request backoff"))
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect()
    };
    assert_eq!(files(&sqlite), files(&os));
}

/// quarry's own sources in both stores: the files each ranks in its top 10 for the same
/// queries, measured (docs/OPENSEARCH.md has the numbers).
#[test]
fn opensearch_ranks_mostly_the_same_files_as_the_embedded_store_on_real_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in [
        "quarry-core",
        "quarry-grep",
        "quarry-store",
        "quarry-rank",
        "quarry-chunk",
    ] {
        for entry in std::fs::read_dir(root.join(krate).join("src")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut batch = IndexBatch::default();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = quarry_store::SqliteStore::open(&dir.path().join("index.sqlite")).unwrap();
    let mut os = store("same_files");
    for s in [&mut sqlite as &mut dyn Store, &mut os as &mut dyn Store] {
        let repo = s.ensure_repo("quarry", "/src/quarry").unwrap();
        s.apply(repo.id, &batch).unwrap();
        s.finish_run(repo.id, &SkipCounts::new()).unwrap();
    }
    let queries = [
        "parse the trigram query for a regex",
        "store file states for incremental indexing",
        "reciprocal rank fusion of result lists",
        "split camelCase identifiers into tokens",
        "chunk a file by its definitions",
        "schema migration version",
    ];
    let mut overlap = 0.0;
    let mut same_first = 0;
    let (mut compared, mut alike) = (0, 0);
    for q in queries {
        // The same BM25: a chunk both stores return scores alike.
        let scored = |s: &dyn Store| -> Vec<((String, u32), f64)> {
            s.search_lexical(&LexicalQuery {
                limit: 10,
                ..query(q)
            })
            .unwrap()
            .into_iter()
            .map(|h| ((h.path, h.start_line), h.score))
            .collect()
        };
        let on_os = scored(&os);
        for (key, x) in scored(&sqlite) {
            if let Some((_, y)) = on_os.iter().find(|(k, _)| *k == key) {
                compared += 1;
                alike += usize::from((x - y).abs() <= 1e-6 * x.abs().max(1.0));
            }
        }
        let top = |s: &dyn Store| -> Vec<String> {
            let mut seen = Vec::new();
            for path in paths(
                s,
                &LexicalQuery {
                    limit: 50,
                    ..query(q)
                },
            ) {
                if !seen.contains(&path) && seen.len() < 10 {
                    seen.push(path);
                }
            }
            seen
        };
        let (a, b) = (top(&sqlite), top(&os));
        let shared = a.iter().filter(|p| b.contains(p)).count();
        overlap += shared as f64 / a.len().max(1) as f64;
        same_first += usize::from(a.first() == b.first());
        eprintln!(
            "{q:?}: {shared}/{} shared; embedded {:?}; opensearch {:?}",
            a.len(),
            &a[..3.min(a.len())],
            &b[..3.min(b.len())]
        );
    }
    let overlap = overlap / queries.len() as f64;
    eprintln!(
        "mean overlap@10 of files: {overlap:.2}; same first file {same_first}/6; \
         {alike} of {compared} chunks both return scored alike"
    );
    assert!(overlap >= 0.95, "overlap@10 {overlap:.2}");
    assert_eq!(same_first, queries.len());
    assert!(
        alike * 10 >= compared * 9,
        "{alike} of {compared} scored alike"
    );
}
