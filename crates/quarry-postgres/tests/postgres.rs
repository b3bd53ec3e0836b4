//! quarry's PostgreSQL store against a real server (PostgreSQL 18 with pgvector, started by
//! quarry-test-postgres). Every test is named `postgres_*`: `cargo test postgres` runs them.

use std::collections::HashSet;
use std::path::Path;

use quarry_core::store::{IndexBatch, IndexedFile, SkipCounts, Store};
use quarry_core::{FileState, Language, LexicalQuery, VectorQuery};
use quarry_postgres::PgStore;

mod common;
#[path = "postgres/connecting.rs"]
mod connecting;
#[path = "postgres/text_vectors.rs"]
mod text_vectors;
use common::{chunk, file, query, store};

#[test]
fn postgres_stores_files_and_finds_them_by_words_names_and_calls() {
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
    assert_eq!(
        (stats[0].files, stats[0].chunks, stats[0].symbols),
        (2, 2, 2)
    );

    // A changed file replaces its rows; a deleted one takes them away.
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
    assert_eq!(store.file_states(repo.id).unwrap().len(), 1);
    store.remove_repo(repo.id).unwrap();
    assert_eq!(store.repos().unwrap().len(), 1);
}

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

#[test]
fn postgres_vectors_answer_nearest_first_and_refuse_another_dimension() {
    let mut store = store("vectors");
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    for (i, name) in ["alpha", "beta", "gamma"].iter().enumerate() {
        batch.upserts.push(file(
            &format!("{name}.py"),
            &format!("h{i}"),
            vec![chunk(1, 1, Some(name), &format!("def {name}(): pass"))],
        ));
    }
    store.apply(repo.id, &batch).unwrap();
    assert!(!store.set_embedding_model("model-a").unwrap());
    let pending = store.pending_embeddings(10, None, &[]).unwrap();
    assert_eq!(
        store
            .pending_embeddings(10, None, &["r".to_string()])
            .unwrap()
            .len(),
        pending.len()
    );
    assert!(store
        .pending_embeddings(10, None, &["other".to_string()])
        .unwrap()
        .is_empty());
    assert_eq!(pending.len(), 3);
    // In hash order, and from after a given hash (a backfill's next batch).
    let hashes: Vec<&str> = pending.iter().map(|p| p.hash.as_str()).collect();
    assert!(hashes.windows(2).all(|w| w[0] < w[1]), "{hashes:?}");
    let rest = store.pending_embeddings(10, Some(hashes[0]), &[]).unwrap();
    let rest: Vec<&str> = rest.iter().map(|p| p.hash.as_str()).collect();
    assert_eq!(rest, hashes[1..]);
    let vectors: Vec<(String, Vec<f32>)> = pending
        .iter()
        .map(|p| {
            let axis = ["alpha", "beta", "gamma"]
                .iter()
                .position(|n| p.text.contains(n))
                .unwrap();
            let mut v = vec![0.1f32; 8];
            v[axis] = 1.0;
            (p.hash.clone(), unit(&v))
        })
        .collect();
    store.put_embeddings(&vectors).unwrap();
    assert!(store.pending_embeddings(10, None, &[]).unwrap().is_empty());
    assert_eq!(store.coverage(&[]).unwrap().embedded, 3);

    let mut probe = vec![0.1f32; 8];
    probe[1] = 1.0;
    let hits = store
        .search_vector(&VectorQuery {
            vectors: vec![unit(&probe)],
            limit: 3,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits[0].path, "beta.py");
    assert!(
        (hits[0].score - 1.0).abs() < 1e-4,
        "cosine of the same vector: {}",
        hits[0].score
    );
    // A repo filter is answered through the index, scanned on until enough rows pass it.
    let in_repo = store
        .search_vector(&VectorQuery {
            vectors: vec![unit(&probe)],
            limit: 3,
            repos: vec!["r".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(in_repo.len(), 3);
    assert_eq!(in_repo[0].path, "beta.py");
    // A filter is answered exactly, not from the index's cut.
    let filtered = store
        .search_vector(&VectorQuery {
            vectors: vec![unit(&probe)],
            limit: 3,
            path_glob: Some("gamma*".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        filtered.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["gamma.py"]
    );

    // A deleted file's vector is pruned (only the repos this store changed are checked); a
    // second prune finds nothing.
    let mut gone = IndexBatch::default();
    gone.deleted.push("gamma.py".into());
    store.apply(repo.id, &gone).unwrap();
    assert_eq!(store.prune_vectors().unwrap(), 1);
    assert_eq!(store.prune_vectors().unwrap(), 0);
    assert_eq!(store.coverage(&[]).unwrap().embedded, 2);

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

#[test]
fn postgres_a_batch_cut_off_by_the_server_leaves_nothing_and_the_next_run_resumes() {
    let url = quarry_test_postgres::database("cutoff");
    let mut store = PgStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut first = IndexBatch::default();
    first.upserts.push(file(
        "a.py",
        "h1",
        vec![chunk(1, 1, Some("alpha"), "def alpha(): pass")],
    ));
    store.apply(repo.id, &first).unwrap();
    // A read waits for the batch written in the background: the first batch is in.
    assert_eq!(store.file_states(repo.id).unwrap().len(), 1);
    // The server ends the connections (a restart, a failover) between two batches.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap();
    let mut second = IndexBatch::default();
    second.upserts.push(file(
        "b.py",
        "h2",
        vec![chunk(1, 1, Some("beta"), "def beta(): pass")],
    ));
    let err = store.apply(repo.id, &second).unwrap_err();
    assert!(format!("{err:#}").contains("PostgreSQL at"), "{err:#}");
    // Nothing of the cut batch is visible; the first is whole; a new run stores the rest.
    let mut again = PgStore::connect(&url).unwrap();
    let states = again.file_states(repo.id).unwrap();
    assert_eq!(states.keys().collect::<Vec<_>>(), ["a.py"]);
    again.apply(repo.id, &second).unwrap();
    assert_eq!(again.file_states(repo.id).unwrap().len(), 2);
}

/// The server ends the connection while a batch is being copied in (pg_stat_progress_copy
/// shows it): the store's next call fails with it (the batch is written in the background,
/// background.rs), nothing of that batch is visible, the BM25 totals still match the rows,
/// search answers, and the next run stores the batch.
#[test]
fn postgres_a_connection_killed_during_copy_leaves_nothing_half_written() {
    let url = quarry_test_postgres::database("copy_kill");
    let mut store = PgStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut first = IndexBatch::default();
    first.upserts.push(file(
        "kept.py",
        "h0",
        vec![chunk(1, 1, Some("kept"), "def kept(): pass")],
    ));
    store.apply(repo.id, &first).unwrap();
    let big = |attempt: usize| {
        let mut batch = IndexBatch::default();
        for f in 0..4000 {
            batch.upserts.push(file(
                &format!("big{attempt}_{f}.py"),
                "h",
                (0..4)
                    .map(|c| {
                        chunk(
                            c * 10 + 1,
                            c * 10 + 9,
                            Some(&format!("handler_{attempt}_{f}_{c}")),
                            &"def handler(request): return render(request, template) ".repeat(8),
                        )
                    })
                    .collect(),
            ));
        }
        batch
    };
    let mut cut = false;
    for attempt in 0..5 {
        let batch = big(attempt);
        let watcher = {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                let started = std::time::Instant::now();
                while started.elapsed() < std::time::Duration::from_secs(30) {
                    let killed: Option<bool> = admin
                        .query_opt(
                            "SELECT pg_terminate_backend(p.pid) FROM pg_stat_progress_copy p
                             JOIN pg_stat_activity a ON a.pid = p.pid
                             WHERE a.datname = current_database() AND a.query LIKE 'COPY %'
                             LIMIT 1",
                            &[],
                        )
                        .unwrap()
                        .map(|r| r.get(0));
                    if killed == Some(true) {
                        return true;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                false
            })
        };
        let applied = store
            .apply(repo.id, &batch)
            .and_then(|()| store.file_states(repo.id).map(drop));
        let killed = watcher.join().unwrap();
        if killed && applied.is_err() {
            cut = true;
            let message = format!("{:#}", applied.unwrap_err());
            assert!(message.contains("PostgreSQL at"), "{message}");
            store = PgStore::connect(&url).unwrap();
            let states = store.file_states(repo.id).unwrap();
            assert!(
                !states
                    .keys()
                    .any(|p| p.starts_with(&format!("big{attempt}_"))),
                "part of the cut batch is visible"
            );
            // The BM25 totals moved with the rows, not with the cut batch.
            let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            let row = admin
                .query_one(
                    "SELECT (SELECT count(*) FROM chunks), (SELECT coalesce(sum(docs), 0)::bigint
                     FROM fts_totals WHERE kind = 'chunks')",
                    &[],
                )
                .unwrap();
            assert_eq!(row.get::<_, i64>(0), row.get::<_, i64>(1));
            assert_eq!(
                store.search_lexical(&query("kept")).unwrap()[0].path,
                "kept.py"
            );
            // The next run stores the batch whole.
            store.apply(repo.id, &batch).unwrap();
            let states = store.file_states(repo.id).unwrap();
            assert_eq!(
                states
                    .keys()
                    .filter(|p| p.starts_with(&format!("big{attempt}_")))
                    .count(),
                4000
            );
            break;
        }
    }
    assert!(cut, "no attempt was caught during its COPY");
}

#[test]
fn postgres_several_writers_on_different_repos_do_not_meet() {
    let url = quarry_test_postgres::database("writers");
    drop(PgStore::connect(&url).unwrap());
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut store = PgStore::connect(&url).unwrap();
                let repo = store
                    .ensure_repo(&format!("repo{w}"), &format!("/src/{w}"))
                    .unwrap();
                for b in 0..5 {
                    let mut batch = IndexBatch::default();
                    for f in 0..20 {
                        batch.upserts.push(file(
                            &format!("m{b}_{f}.py"),
                            "h",
                            vec![chunk(
                                1,
                                1,
                                Some(&format!("fn_{w}_{b}_{f}")),
                                "def f(): pass",
                            )],
                        ));
                    }
                    store.apply(repo.id, &batch).unwrap();
                }
                store.finish_run(repo.id, &SkipCounts::new()).unwrap();
                repo.id
            })
        })
        .collect();
    let ids: HashSet<i64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    let store = PgStore::connect(&url).unwrap();
    for stats in store.stats().unwrap() {
        assert_eq!(
            (stats.files, stats.chunks, stats.symbols),
            (100, 100, 100),
            "{}",
            stats.repo.name
        );
    }
}

/// The same fixture in both stores: the files each ranks in its top 10 for the same queries.
#[test]
fn postgres_ranks_the_same_files_as_the_embedded_store() {
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
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        batch.upserts.push(IndexedFile {
            content: quarry_chunk::chunk_file(Language::Rust, &text, &Default::default()),
            path: relative,
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
    let mut pg = store("same_files");
    for s in [&mut sqlite as &mut dyn Store, &mut pg as &mut dyn Store] {
        let repo = s.ensure_repo("quarry", "/src/quarry").unwrap();
        s.apply(repo.id, &batch).unwrap();
        s.finish_run(repo.id, &SkipCounts::new()).unwrap();
    }
    assert_eq!(pg.posting_mismatches().unwrap(), 0);
    let queries = [
        "parse the trigram query for a regex",
        "store file states for incremental indexing",
        "reciprocal rank fusion of result lists",
        "split camelCase identifiers into tokens",
        "chunk a file by its definitions",
        "schema migration version",
    ];
    let mut overlap = 0.0;
    let mut worst: f64 = 0.0;
    for q in queries {
        let top = |s: &dyn Store| -> Vec<String> {
            let mut seen = Vec::new();
            for hit in s
                .search_lexical(&LexicalQuery {
                    limit: 50,
                    ..query(q)
                })
                .unwrap()
            {
                if !seen.contains(&hit.path) && seen.len() < 10 {
                    seen.push(hit.path);
                }
            }
            seen
        };
        // The same BM25: a chunk both stores return scores alike (stemmers differ a little:
        // FTS5 has Porter's, PostgreSQL snowball's English).
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
        let pg_scores = scored(&pg);
        for (key, score) in scored(&sqlite) {
            if let Some((_, other)) = pg_scores.iter().find(|(k, _)| *k == key) {
                let difference = (score - other).abs() / score.abs().max(1e-9);
                worst = worst.max(difference);
            }
        }
        let (a, b) = (top(&sqlite), top(&pg));
        let shared = a.iter().filter(|p| b.contains(p)).count();
        overlap += shared as f64 / a.len().max(1) as f64;
        eprintln!(
            "{q:?}: {shared}/{} shared; embedded {:?}; postgres {:?}",
            a.len(),
            &a[..3.min(a.len())],
            &b[..3.min(b.len())]
        );
    }
    // A term asked for three times (an issue's title) weighs three times on both stores.
    let repeated = |s: &dyn Store| -> Vec<((String, u32), f64)> {
        s.search_lexical(&LexicalQuery {
            terms: ["trigram", "trigram", "trigram", "regex", "literal"]
                .map(String::from)
                .to_vec(),
            limit: 5,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| ((h.path, h.start_line), h.score))
        .collect()
    };
    let (on_sqlite, on_pg) = (repeated(&sqlite), repeated(&pg));
    assert_eq!(on_sqlite.len(), on_pg.len());
    for ((a, x), (b, y)) in on_sqlite.iter().zip(&on_pg) {
        assert_eq!(a, b, "{on_sqlite:?} vs {on_pg:?}");
        assert!(
            (x - y).abs() <= 0.02 * x.abs(),
            "{on_sqlite:?} vs {on_pg:?}"
        );
    }
    // More queries, compared with the embedded store below, after files are replaced.
    let mut asked: Vec<LexicalQuery> = queries
        .iter()
        .map(|q| LexicalQuery {
            limit: 10,
            ..query(q)
        })
        .collect();
    asked.push(LexicalQuery {
        path_glob: Some("*quarry-store*".into()),
        limit: 5,
        ..query("query the index for a path")
    });
    asked.push(LexicalQuery {
        terms: ["trigram", "trigram", "trigram", "regex", "literal"]
            .map(String::from)
            .to_vec(),
        limit: 5,
        ..Default::default()
    });
    // Phrases (an identifier's parts): their rows found from the lists, checked and weighed on
    // the server.
    asked.push(LexicalQuery {
        terms: ["pub fn", "trigram", "let mut", "regex", "literal"]
            .map(String::from)
            .to_vec(),
        limit: 5,
        ..Default::default()
    });
    asked.push(LexicalQuery {
        terms: ["apply_batch", "file_states", "transaction"]
            .map(String::from)
            .to_vec(),
        path_glob: Some("*quarry-store*".into()),
        limit: 3,
        ..Default::default()
    });
    // A filter that turns the best rows away: more are tried until the top is full.
    asked.push(LexicalQuery {
        terms: vec!["store".into(), "file".into()],
        path_glob: Some("*quarry-chunk*".into()),
        limit: 5,
        ..Default::default()
    });
    let overlap = overlap / queries.len() as f64;
    eprintln!("mean overlap@10 of files: {overlap:.2}; largest score difference {worst:.4}");
    assert!(
        worst < 0.02,
        "the stores score one chunk differently: relative difference {worst:.4}"
    );
    assert!(
        overlap >= 0.9,
        "the two stores rank different files: overlap@10 {overlap:.2}"
    );
    // Files replaced and deleted take their words off the document counts: after a second
    // run the IDF, and so every score, is still the embedded store's.
    let mut second = IndexBatch::default();
    second.deleted = batch.upserts[..8].iter().map(|f| f.path.clone()).collect();
    second.upserts = batch.upserts[8..12].to_vec();
    for s in [&mut sqlite as &mut dyn Store, &mut pg as &mut dyn Store] {
        let repo = s.ensure_repo("quarry", "/src/quarry").unwrap();
        s.apply(repo.id, &second).unwrap();
        s.finish_run(repo.id, &SkipCounts::new()).unwrap();
    }
    // The posting lists ranking reads hold exactly what the rows' text vectors say: the
    // replaced and deleted rows' entries gone, the new rows' there, counts alike.
    assert_eq!(pg.posting_mismatches().unwrap(), 0);
    for q in &asked {
        let on = |s: &dyn Store| -> Vec<((String, u32), f64)> {
            s.search_lexical(q)
                .unwrap()
                .into_iter()
                .map(|h| ((h.path, h.start_line), h.score))
                .collect()
        };
        let (a, b) = (on(&sqlite), on(&pg));
        assert!(!b.is_empty(), "{:?} finds nothing", q.terms);
        for (key, x) in &a {
            if let Some((_, y)) = b.iter().find(|(k, _)| k == key) {
                assert!(
                    (x - y).abs() <= 0.02 * x.abs(),
                    "{:?}: {a:?} vs {b:?}",
                    q.terms
                );
            }
        }
        assert!(
            b.iter().all(|(k, _)| !second.deleted.contains(&k.0)),
            "a deleted file is still found: {b:?}"
        );
    }
}

#[test]
fn postgres_chunks_keep_their_page_cell_and_language_and_type_filters_by_them() {
    let mut store = store("documents");
    quarry_core::conformance::chunks_keep_their_place_and_language(&mut store);
}

#[test]
fn postgres_trigram_lookup_says_which_files_can_contain_the_literals() {
    let mut store = store("trigrams");
    quarry_core::conformance::trigram_lookup_says_which_files_can_contain_the_literals(&mut store);
}

/// A TCP relay in front of `port` that can stop passing bytes while keeping every connection
/// open: what a frozen (SIGSTOPped) server looks like from the client, whose kernel still
/// acknowledges.
struct FreezingRelay {
    port: u16,
    frozen: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl FreezingRelay {
    fn start(target: u16) -> FreezingRelay {
        use std::io::{Read, Write};
        use std::net::{TcpListener, TcpStream};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = Arc::new(AtomicBool::new(false));
        let flag = frozen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(("127.0.0.1", target)).unwrap();
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let flag = flag.clone();
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 8192];
                        while let Ok(n) = from.read(&mut buf) {
                            while flag.load(Ordering::SeqCst) {
                                std::thread::sleep(std::time::Duration::from_millis(20));
                            }
                            if n == 0 || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                    });
                }
            }
        });
        FreezingRelay { port, frozen }
    }

    fn freeze(&self) {
        self.frozen.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn thaw(&self) {
        self.frozen
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn postgres_a_server_that_stops_answering_is_an_error_within_the_timeout() {
    use std::time::{Duration, Instant};
    let server = quarry_test_postgres::server();
    let url = quarry_test_postgres::database("frozen");
    let relay = FreezingRelay::start(server.port);
    let relayed = url.replace(&format!(":{}/", server.port), &format!(":{}/", relay.port));
    assert_ne!(relayed, url, "the test URL names the server's port: {url}");
    let limit = Duration::from_millis(700);
    let mut store = PgStore::connect_with(&relayed, limit).unwrap();
    store.ensure_repo("r", "/src/r").unwrap();
    assert_eq!(store.repos().unwrap().len(), 1);

    relay.freeze();
    let started = Instant::now();
    let message = format!("{:#}", store.repos().err().expect("no answer"));
    let waited = started.elapsed();
    assert!(
        message.contains("no answer within 0.7 s") && message.contains("store.timeout_s"),
        "{message}"
    );
    assert!(waited >= limit && waited < limit * 4, "{waited:?}");
    // The connection is given up; the next call opens a fresh one, which waits no longer.
    let started = Instant::now();
    let message = format!(
        "{:#}",
        store.search_lexical(&query("alpha")).err().expect("frozen")
    );
    assert!(message.contains("no answer within 0.7 s"), "{message}");
    assert!(started.elapsed() < limit * 4, "{:?}", started.elapsed());

    // A frozen server met at connect time: accepted by its kernel, never answered.
    let started = Instant::now();
    let message = format!(
        "{:#}",
        PgStore::connect_with(&relayed, limit)
            .err()
            .expect("no answer")
    );
    assert!(
        message.contains("cannot connect") && message.contains("no answer within"),
        "{message}"
    );
    assert!(started.elapsed() < limit * 4, "{:?}", started.elapsed());

    // When the server answers again, the same store answers again.
    relay.thaw();
    assert_eq!(store.repos().unwrap().len(), 1);
}
