use super::*;
use quarry_core::history::{CommitQuery, HistoryStore};
use quarry_core::store::IndexedFile;
use quarry_core::tokens;
use quarry_core::{Chunk, FileChunks, Language, LexicalQuery, Symbol};

pub(crate) fn chunk(start: u32, end: u32, symbol: Option<&str>, text: &str) -> Chunk {
    Chunk {
        start_line: start,
        end_line: end,
        symbol: symbol.map(str::to_string),
        kind: if symbol.is_some() {
            "function"
        } else {
            "module"
        }
        .to_string(),
        parent: None,
        signature: None,
        language: Language::Python,
        symbols: symbol.map(|s| vec![s.to_string()]).unwrap_or_default(),
        text: text.to_string(),
        page: None,
        cell: None,
    }
}

pub(crate) fn file(path: &str, hash: &str, chunks: Vec<Chunk>) -> IndexedFile {
    let symbols = chunks
        .iter()
        .filter_map(|c| {
            c.symbol.as_ref().map(|s| Symbol {
                name: s.clone(),
                kind: c.kind.clone(),
                parent: None,
                start_line: c.start_line,
                end_line: c.end_line,
                signature: None,
            })
        })
        .collect();
    let grep_text = chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    IndexedFile {
        path: path.to_string(),
        language: Language::detect(std::path::Path::new(path)),
        state: FileState {
            hash: hash.to_string(),
            size: 10,
            mtime_ns: 1,
        },
        content: FileChunks {
            chunks,
            symbols,
            calls: Vec::new(),
        },
        grep_text: Some(grep_text),
        grep_trigrams: None,
    }
}

pub(crate) fn query(text: &str) -> LexicalQuery {
    LexicalQuery {
        terms: tokens::query_terms(text),
        limit: 10,
        ..Default::default()
    }
}

fn fixture() -> (tempfile::TempDir, SqliteStore, i64) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("index.sqlite")).unwrap();
    let repo = store.ensure_repo("demo", "/src/demo").unwrap().id;
    let batch = IndexBatch {
        upserts: vec![
            file(
                "app/users.py",
                "h1",
                vec![chunk(
                    1,
                    3,
                    Some("getUserName"),
                    "def getUserName(user):\n    return user.name\n",
                )],
            ),
            file(
                "app/config.py",
                "h2",
                vec![chunk(
                    1,
                    4,
                    Some("parse_config_file"),
                    "def parse_config_file(path):\n    return toml.load(path)\n",
                )],
            ),
            file(
                "README.md",
                "h3",
                vec![chunk(1, 2, None, "Demo project for parsing configs")],
            ),
        ],
        ..Default::default()
    };
    store.apply(repo, &batch).unwrap();
    (dir, store, repo)
}

#[test]
fn code_aware_tokens_match_across_conventions() {
    let (_dir, store, _) = fixture();
    for q in [
        "get user name",
        "get_user_name",
        "getUserName",
        "GetUserName",
    ] {
        let hits = store.search_lexical(&query(q)).unwrap();
        assert_eq!(hits[0].path, "app/users.py", "query {q:?}: {hits:?}");
        assert_eq!(hits[0].symbol.as_deref(), Some("getUserName"));
        assert!(hits[0].score > 0.0);
    }
    let hits = store.search_lexical(&query("parse config file")).unwrap();
    assert_eq!(hits[0].path, "app/config.py");
}

#[test]
fn whole_files_rank_by_all_their_chunks_and_leave_with_them() {
    let (_dir, mut store, repo) = fixture();
    let two = file(
        "app/session.py",
        "h4",
        vec![
            chunk(
                1,
                3,
                Some("open_session"),
                "def open_session(cookie):\n    return cookie\n",
            ),
            chunk(
                4,
                6,
                Some("close_session"),
                "def close_session(redirect):\n    redirect()\n",
            ),
        ],
    );
    store
        .apply(
            repo,
            &IndexBatch {
                upserts: vec![two],
                ..Default::default()
            },
        )
        .unwrap();
    // No one chunk has both words; the file has.
    let files = store
        .search_files_lexical(&query("cookie redirect"))
        .unwrap();
    assert_eq!(files[0].path, "app/session.py");
    assert!(files[0].score > 0.0);
    let chunks = store.file_chunks("demo", "app/session.py").unwrap();
    assert_eq!(
        chunks
            .iter()
            .map(|c| c.symbol.as_deref().unwrap())
            .collect::<Vec<_>>(),
        ["open_session", "close_session"]
    );
    assert_eq!(
        store
            .files_by_stem(&["session".into(), "nothing".into()], &[], 10)
            .unwrap(),
        [("demo".to_string(), "app/session.py".to_string())]
    );
    assert!(store
        .files_by_stem(&["session".into()], &["other".into()], 10)
        .unwrap()
        .is_empty());
    store
        .apply(
            repo,
            &IndexBatch {
                deleted: vec!["app/session.py".into()],
                ..Default::default()
            },
        )
        .unwrap();
    assert!(store
        .search_files_lexical(&query("cookie redirect"))
        .unwrap()
        .is_empty());
    assert!(store
        .file_chunks("demo", "app/session.py")
        .unwrap()
        .is_empty());
    store.remove_repo(repo).unwrap();
    assert!(store
        .search_files_lexical(&query("parse config"))
        .unwrap()
        .is_empty());
}

#[test]
fn filters_by_language_path_and_repo() {
    let (_dir, mut store, _) = fixture();
    let other = store.ensure_repo("demo", "/src/elsewhere/demo").unwrap();
    assert_eq!(other.name, "demo-2", "same folder name gets a suffix");
    let mut q = query("parse config");
    q.language = Some(Language::Markdown);
    let hits = store.search_lexical(&q).unwrap();
    assert_eq!(
        hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["README.md"]
    );
    let mut q = query("parse config");
    q.path_glob = Some("app/*.py".into());
    assert!(store
        .search_lexical(&q)
        .unwrap()
        .iter()
        .all(|h| h.path.starts_with("app/")));
    let mut q = query("parse config");
    q.repos = vec!["demo-2".into()];
    assert!(store.search_lexical(&q).unwrap().is_empty());
}

#[test]
fn replacing_and_deleting_files_leaves_no_stale_rows() {
    let (_dir, mut store, repo) = fixture();
    let batch = IndexBatch {
        upserts: vec![file(
            "app/users.py",
            "h9",
            vec![chunk(
                1,
                2,
                Some("rename_account"),
                "def rename_account(): pass",
            )],
        )],
        deleted: vec!["app/config.py".into()],
        ..Default::default()
    };
    store.apply(repo, &batch).unwrap();
    // The path still matches `user`, but the old chunk and its symbol are gone.
    let hits = store.search_lexical(&query("getUserName")).unwrap();
    assert!(
        hits.iter()
            .all(|h| h.symbol.as_deref() == Some("rename_account")),
        "{hits:?}"
    );
    let hits = store.search_lexical(&query("parse_config_file")).unwrap();
    assert!(hits.iter().all(|h| h.path == "README.md"), "{hits:?}");
    assert_eq!(
        store
            .search_lexical(&query("rename account"))
            .unwrap()
            .len(),
        1
    );
    let states = store.file_states(repo).unwrap();
    assert_eq!(states.len(), 2);
    assert_eq!(states["app/users.py"].hash, "h9");
    let stats = store.stats().unwrap();
    assert_eq!(
        (stats[0].files, stats[0].chunks, stats[0].symbols),
        (2, 2, 1)
    );
    assert_eq!(stats[0].repo.indexed_at, None, "no run has completed yet");
    let skipped = SkipCounts::from([("binary".to_string(), 3)]);
    store.finish_run(repo, &skipped).unwrap();
    let info = &store.repos().unwrap()[0];
    assert_eq!((info.files, info.chunks), (2, 2));
    assert_eq!(info.skipped, skipped);
    assert!(info.indexed_at.is_some());
}

#[test]
fn remove_repo_drops_its_index() {
    let (_dir, mut store, repo) = fixture();
    store.remove_repo(repo).unwrap();
    assert!(store.repos().unwrap().is_empty());
    assert!(store
        .search_lexical(&query("parse config"))
        .unwrap()
        .is_empty());
}

#[test]
fn garbage_file_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let err = SqliteStore::open(&path)
        .err()
        .expect("garbage must not open");
    assert!(is_corrupt(&err), "{err:#}");
    assert!(format!("{err:#}").contains("--rebuild"));
    SqliteStore::destroy(&path).unwrap();
    assert!(SqliteStore::open(&path).is_ok());
}

#[test]
fn a_schema_changed_behind_quarrys_back_is_damage_found_on_open() {
    let (dir, store, _) = fixture();
    let path = dir.path().join("index.sqlite");
    drop(store);
    // A change SQLite itself accepts: the page-level check passes, the table is read with a
    // column default the writer never gave it.
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "PRAGMA writable_schema = ON;
         UPDATE sqlite_schema SET sql = replace(sql, 'trigrams INTEGER NOT NULL DEFAULT 0',
                                                'trigrams INTEGER NOT NULL DEFAULT 1')
         WHERE name = 'files';",
    )
    .unwrap();
    drop(conn);
    assert_eq!(
        Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0))
            .unwrap(),
        "ok"
    );
    for access in [Access::Read, Access::Write] {
        let err = SqliteStore::open_with(&path, access)
            .err()
            .expect("damaged");
        assert!(is_corrupt(&err), "{err:#}");
        assert!(format!("{err:#}").contains("schema differs"), "{err:#}");
    }
    assert!(
        matches!(check_file(&path), crate::Checked::Damaged(p) if p.contains("schema differs"))
    );
}

#[test]
fn an_index_from_before_schema_digests_gets_one_from_its_next_writer() {
    let (dir, store, _) = fixture();
    let path = dir.path().join("index.sqlite");
    drop(store);
    let digest = |conn: &Connection| {
        conn.query_row(
            "SELECT value FROM meta WHERE key = 'schema_digest'",
            [],
            |r| r.get::<_, String>(0),
        )
        .ok()
    };
    let written = digest(&Connection::open(&path).unwrap()).expect("recorded when written");
    Connection::open(&path)
        .unwrap()
        .execute("DELETE FROM meta WHERE key = 'schema_digest'", [])
        .unwrap();
    let reader = SqliteStore::open_with(&path, Access::Read).unwrap();
    assert!(!reader.search_lexical(&query("config")).unwrap().is_empty());
    drop(reader);
    assert_eq!(digest(&Connection::open(&path).unwrap()), None);
    drop(SqliteStore::open(&path).unwrap());
    assert_eq!(digest(&Connection::open(&path).unwrap()), Some(written));
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 999)
        .unwrap();
    let err = SqliteStore::open(&path).err().unwrap();
    assert!(format!("{err:#}").contains("newer"), "{err:#}");
}

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

#[test]
fn vectors_are_stored_once_per_text_and_searched_with_filters() {
    let (_dir, mut store, repo) = fixture();
    assert_eq!(store.embedding_model().unwrap(), None);
    assert!(
        !store.set_embedding_model("model-a").unwrap(),
        "first model drops nothing"
    );
    let pending = store.pending_embeddings(100, None, &[]).unwrap();
    assert_eq!(pending.len(), 3);
    // In hash order, and from after a given hash: a backfill's batches follow one another.
    let hashes: Vec<&str> = pending.iter().map(|p| p.hash.as_str()).collect();
    assert!(hashes.windows(2).all(|w| w[0] < w[1]), "{hashes:?}");
    let rest = store.pending_embeddings(100, Some(hashes[0]), &[]).unwrap();
    assert_eq!(
        rest.iter().map(|p| p.hash.as_str()).collect::<Vec<_>>(),
        hashes[1..]
    );
    assert!(store
        .pending_embeddings(100, Some(hashes[2]), &[])
        .unwrap()
        .is_empty());
    // Only the chunks of the repos asked for (an index run embeds its own repos).
    assert_eq!(
        store
            .pending_embeddings(100, None, &["demo".to_string()])
            .unwrap()
            .len(),
        3
    );
    assert!(store
        .pending_embeddings(100, None, &["other".to_string()])
        .unwrap()
        .is_empty());
    assert_eq!(
        store.coverage(&[]).unwrap(),
        quarry_core::Coverage {
            embedded: 0,
            total: 3
        }
    );
    let users = pending
        .iter()
        .find(|p| p.text.starts_with("app/users.py"))
        .unwrap();
    assert!(
        users.text.contains("function getUserName"),
        "{}",
        users.text
    );

    // Vectors: users → x axis, config → y axis, readme → between.
    let vectors: Vec<(String, Vec<f32>)> = pending
        .iter()
        .map(|p| {
            let v = if p.text.starts_with("app/users.py") {
                unit(&[1.0, 0.0, 0.0])
            } else if p.text.starts_with("app/config.py") {
                unit(&[0.0, 1.0, 0.0])
            } else {
                unit(&[0.5, 0.5, 0.1])
            };
            (p.hash.clone(), v)
        })
        .collect();
    store.put_embeddings(&vectors).unwrap();
    assert!(store.pending_embeddings(100, None, &[]).unwrap().is_empty());
    assert_eq!(store.coverage(&[]).unwrap().embedded, 3);

    let q = quarry_core::VectorQuery {
        vectors: vec![unit(&[0.9, 0.1, 0.0])],
        limit: 2,
        ..Default::default()
    };
    let hits = store.search_vector(&q).unwrap();
    assert_eq!(
        hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["app/users.py", "README.md"]
    );
    assert!(hits[0].score > hits[1].score && hits[0].score <= 1.0001);
    // Several query vectors: a chunk scores its best cosine to any of them.
    let multi = quarry_core::VectorQuery {
        vectors: vec![unit(&[0.9, 0.1, 0.0]), unit(&[0.0, 1.0, 0.0])],
        limit: 3,
        ..Default::default()
    };
    let hits = store.search_vector(&multi).unwrap();
    assert_eq!(hits[0].path, "app/config.py", "exactly the second vector");
    assert!((hits[0].score - 1.0).abs() < 1e-4);
    assert_eq!(hits[1].path, "app/users.py");
    let q = quarry_core::VectorQuery {
        language: Some(Language::Markdown),
        ..q
    };
    assert_eq!(store.search_vector(&q).unwrap()[0].path, "README.md");

    // Re-indexing a file with the same text keeps its vector; new text is pending again.
    let same = IndexBatch {
        upserts: vec![file(
            "app/users.py",
            "h1b",
            vec![chunk(
                1,
                3,
                Some("getUserName"),
                "def getUserName(user):\n    return user.name\n",
            )],
        )],
        ..Default::default()
    };
    store.apply(repo, &same).unwrap();
    store.finish_run(repo, &SkipCounts::new()).unwrap();
    assert!(store.pending_embeddings(100, None, &[]).unwrap().is_empty());
    let changed = IndexBatch {
        upserts: vec![file(
            "app/users.py",
            "h1c",
            vec![chunk(
                1,
                3,
                Some("getUserName"),
                "def getUserName(u):\n    return u.full_name\n",
            )],
        )],
        ..Default::default()
    };
    store.apply(repo, &changed).unwrap();
    assert_eq!(store.pending_embeddings(100, None, &[]).unwrap().len(), 1);
    // Coverage is cached by writers and dropped by index batches: it is never stale.
    let c = store.coverage(&[]).unwrap();
    assert_eq!((c.embedded, c.total), (2, 3));
    store.finish_run(repo, &SkipCounts::new()).unwrap();
    assert_eq!(store.coverage(&["demo".to_string()]).unwrap(), c);
    let none = store.coverage(&["nope".to_string()]).unwrap();
    assert_eq!(
        (none.embedded, none.total),
        (0, 0),
        "unknown repos count nothing"
    );
    // The old text's vector is unused now; pruning drops exactly it.
    assert_eq!(store.prune_vectors().unwrap(), 1);
    assert_eq!(store.prune_vectors().unwrap(), 0);

    // A different model drops every vector.
    assert!(store.set_embedding_model("model-b").unwrap());
    assert_eq!(store.coverage(&[]).unwrap().embedded, 0);
}

/// The coverage cache that each stored batch updates (by the batch's chunks, not a recount)
/// agrees with a live count, repo by repo, when repos share a text and a batch repeats one.
#[test]
fn stored_batches_keep_the_coverage_cache_equal_to_a_count() {
    let (_dir, mut store, _) = fixture();
    let other = store.ensure_repo("other", "/src/other").unwrap().id;
    let shared = file(
        "app/users.py",
        "h1",
        vec![chunk(
            1,
            3,
            Some("getUserName"),
            "def getUserName(user):\n    return user.name\n",
        )],
    );
    let own = file("lib/own.py", "h9", vec![chunk(1, 1, None, "x = 1\n")]);
    let batch = IndexBatch {
        upserts: vec![shared, own],
        ..Default::default()
    };
    store.apply(other, &batch).unwrap();
    store.finish_run(other, &SkipCounts::new()).unwrap();
    store.set_embedding_model("model-a").unwrap();
    let pending = store.pending_embeddings(100, None, &[]).unwrap();
    assert_eq!(pending.len(), 4, "the shared text is embedded once");
    let vector = |p: &quarry_core::PendingEmbedding| (p.hash.clone(), unit(&[1.0, 0.0, 0.0]));
    let users = pending
        .iter()
        .position(|p| p.text.starts_with("app/users.py"))
        .unwrap();
    let first = vec![vector(&pending[users])];
    let rest: Vec<_> = pending.iter().map(vector).collect(); // repeats the shared one
    let live = |store: &SqliteStore, repo: &str| {
        vectors::count_coverage(&store.conn, &[repo.to_string()]).unwrap()
    };
    for (batch, embedded) in [(first, [1, 1]), (rest, [3, 2])] {
        store.put_embeddings(&batch).unwrap();
        for (repo, n) in ["demo", "other"].into_iter().zip(embedded) {
            let cached = store.coverage(&[repo.to_string()]).unwrap();
            assert_eq!(cached, live(&store, repo), "{repo}");
            assert_eq!(cached.embedded, n, "{repo}");
        }
    }
}

#[test]
fn trigram_lookup_says_which_files_can_contain_the_literals() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("index.sqlite")).unwrap();
    quarry_core::conformance::trigram_lookup_says_which_files_can_contain_the_literals(&mut store);
    // A new index (a rebuild) never starts where an old one was.
    let eva = quarry_core::Requirement::Contains("eva".into());
    let old = store.trigram_lookup(&eva, None).unwrap().generation;
    let other = SqliteStore::open(&dir.path().join("other.sqlite")).unwrap();
    let fresh = other.trigram_lookup(&eva, None).unwrap().generation;
    assert!((fresh - old).abs() > 1_000_000);
}

#[test]
fn chunks_keep_their_page_cell_and_language_and_type_filters_by_them() {
    let (_dir, mut store, _) = fixture();
    quarry_core::conformance::chunks_keep_their_place_and_language(&mut store);
}

/// Vectors kept in memory (the daemon's setting) give the scan's answers, scores to the bit,
/// and follow the index as vectors are added.
#[test]
fn resident_vectors_answer_as_the_scan_and_follow_new_vectors() {
    let (_dir, mut store, _repo) = fixture();
    store.set_embedding_model("model-a").unwrap();
    let pending = store.pending_embeddings(100, None, &[]).unwrap();
    let (first, rest) = pending.split_at(1);
    let vector = |i: usize| unit(&[1.0, i as f32 * 0.3, 0.2]);
    store
        .put_embeddings(&[(first[0].hash.clone(), vector(0))])
        .unwrap();
    let q = quarry_core::VectorQuery {
        vectors: vec![unit(&[0.5, 0.5, 0.1])],
        limit: 5,
        ..Default::default()
    };
    let answers = |store: &SqliteStore| -> Vec<(String, u64)> {
        store
            .search_vector(&q)
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.score.to_bits()))
            .collect()
    };
    let scanned = answers(&store);
    crate::keep_vectors_in_memory(true);
    let resident = answers(&store);
    assert_eq!(scanned, resident);
    assert_eq!(resident.len(), 1);
    let more: Vec<(String, Vec<f32>)> = rest
        .iter()
        .enumerate()
        .map(|(i, p)| (p.hash.clone(), vector(i + 1)))
        .collect();
    store.put_embeddings(&more).unwrap();
    let resident = answers(&store);
    crate::keep_vectors_in_memory(false);
    assert_eq!(resident, answers(&store));
    assert_eq!(resident.len(), 1 + rest.len());
}

fn commit(sha: &str, time: i64, subject: &str, patch: &str) -> quarry_core::history::CommitRecord {
    quarry_core::history::CommitRecord {
        sha: sha.into(),
        parents: Vec::new(),
        author: "Ada".into(),
        email: "ada@example.com".into(),
        author_time: time,
        commit_time: time,
        subject: subject.into(),
        body: String::new(),
        files: Vec::new(),
        patch: patch.into(),
        patch_truncated: false,
    }
}

/// Words in more than half of the commits carry no BM25 weight (FTS5 floors their IDF) and
/// are not read: the answer is the weighing words' ranking (a commit holding only weightless
/// words has no evidence and is not listed), and a query of weightless words alone still
/// finds the commits that hold them.
#[test]
fn commit_search_ranks_by_the_words_that_weigh() {
    let (_dir, mut store, repo) = fixture();
    let commits = [
        commit(
            "a1",
            1,
            "Fix the parser on empty input",
            "def parse(self):\n    return None\n",
        ),
        commit(
            "b2",
            2,
            "Printer prints floats",
            "def show(self):\n    return 1.0\n",
        ),
        commit(
            "c3",
            3,
            "Parser keeps comments and the printer keeps spacing",
            "def keep(self):\n    return []\n",
        ),
        commit("d4", 4, "Document the release", "notes\n"),
        commit(
            "e5",
            5,
            "Speed up the cache",
            "def get(self):\n    return self.hit\n",
        ),
        commit("f6", 6, "Bump the version", "version = 2\n"),
    ];
    store.put_commits(repo, &commits).unwrap();
    let ask = |terms: &[&str]| -> Vec<String> {
        store
            .search_commits(&CommitQuery {
                terms: terms.iter().map(|t| t.to_string()).collect(),
                limit: 10,
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .map(|h| h.sha)
            .collect()
    };
    // `self` and `return` are in four of six commits.
    assert_eq!(ask(&["parser"]), ["a1", "c3"]);
    assert_eq!(ask(&["self", "return", "parser"]), ["a1", "c3"]);
    let mut weightless = ask(&["self", "return"]);
    weightless.sort();
    assert_eq!(weightless, ["a1", "b2", "c3", "e5"]);
}

/// A long-lived process scores commit vectors kept in memory: the same answers as the scan,
/// under repo and date filters, and vectors stored since are seen.
#[test]
fn commit_vectors_kept_in_memory_answer_as_the_scan() {
    let (_dir, mut store, repo) = fixture();
    let other = store.ensure_repo("other", "/src/other").unwrap().id;
    let made: Vec<_> = (0..6)
        .map(|i| commit(&format!("c{i}"), i, &format!("change {i}"), "x = 1\n"))
        .collect();
    store.put_commits(repo, &made[..4]).unwrap();
    store.put_commits(other, &made[4..]).unwrap();
    store.set_history_embedding(repo, true).unwrap();
    store.set_history_embedding(other, true).unwrap();
    let pending = store.pending_commit_embeddings(10, None, &[]).unwrap();
    assert_eq!(pending.len(), 6);
    // Asked for one repo, only its commits wait (a sync embeds the repos it syncs).
    let others = ["other".to_string()];
    assert_eq!(store.waiting_commit_embeddings(None, &others).unwrap(), 2);
    assert_eq!(
        store
            .pending_commit_embeddings(10, None, &others)
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        store
            .waiting_commit_embeddings(None, &["no-such".to_string()])
            .unwrap(),
        0
    );
    let vector = |i: usize| unit(&[1.0, i as f32 * 0.4, 0.3]);
    let (first, rest) = pending.split_at(3);
    let vectors =
        |p: &[quarry_core::history::PendingCommit], from: usize| -> Vec<(i64, Vec<f32>)> {
            p.iter()
                .enumerate()
                .map(|(i, c)| (c.id, vector(from + i)))
                .collect()
        };
    store.put_commit_vectors(&vectors(first, 0)).unwrap();
    let queries = [
        CommitQuery {
            limit: 10,
            ..Default::default()
        },
        CommitQuery {
            limit: 2,
            repos: vec!["demo".into()],
            ..Default::default()
        },
        CommitQuery {
            limit: 10,
            since: Some(2),
            until: Some(4),
            ..Default::default()
        },
    ];
    let answers = |store: &SqliteStore| -> Vec<Vec<(String, u64)>> {
        queries
            .iter()
            .map(|q| {
                store
                    .search_commit_vectors(&unit(&[0.6, 0.5, 0.2]), q)
                    .unwrap()
                    .into_iter()
                    .map(|h| (h.sha, h.score.to_bits()))
                    .collect()
            })
            .collect()
    };
    let scanned = answers(&store);
    crate::keep_vectors_in_memory(true);
    let resident = answers(&store);
    assert_eq!(scanned, resident);
    assert_eq!(resident[0].len(), 3);
    store.put_commit_vectors(&vectors(rest, 3)).unwrap();
    let resident = answers(&store);
    crate::keep_vectors_in_memory(false);
    assert_eq!(resident, answers(&store));
    assert_eq!(resident[0].len(), 6);
    assert!(resident[1]
        .iter()
        .all(|(sha, _)| ["c0", "c1", "c2", "c3"].contains(&sha.as_str())));
    assert!(resident[2]
        .iter()
        .all(|(sha, _)| ["c2", "c3", "c4"].contains(&sha.as_str())));
}

#[test]
fn a_first_writer_stopped_before_its_schema_left_no_damage() {
    let dir = tempfile::tempdir().unwrap();
    // What a first writer killed right after SQLite created the file leaves: an empty file,
    // still marked as being created.
    let left = dir.path().join("left.sqlite");
    std::fs::write(&left, b"").unwrap();
    std::fs::write(crate::damage::creation_mark(&left), b"").unwrap();
    assert!(!crate::damage::check_file(&left).is_damaged());
    let waiting = SqliteStore::open_with(&left, Access::Read).err().unwrap();
    assert!(
        waiting.downcast_ref::<SchemaPending>().is_some(),
        "{waiting:#}"
    );
    let store = SqliteStore::open(&left).unwrap();
    assert!(store.repos().unwrap().is_empty());
    assert!(!crate::damage::creation_mark(&left).exists());
    drop(store);
    SqliteStore::open_with(&left, Access::Read).unwrap();
    // A writer that creates the file marks it until the schema is in.
    let fresh = dir.path().join("fresh.sqlite");
    SqliteStore::open(&fresh).unwrap();
    assert!(!crate::damage::creation_mark(&fresh).exists());
    // An empty file not so marked held an index and lost it.
    let lost = dir.path().join("lost.sqlite");
    std::fs::write(&lost, b"").unwrap();
    let err = SqliteStore::open(&lost).err().unwrap();
    assert!(format!("{err:#}").contains("empty (0 bytes)"), "{err:#}");
    assert!(crate::damage::check_file(&lost).is_damaged());
}

#[test]
fn a_reader_beside_answers_as_the_store_and_only_at_scale_outside_a_transaction() {
    let (_dir, mut store, repo) = fixture();
    // A small index reads in turn: opening a connection would cost more than it saves.
    assert!(store.beside().is_none());
    let other = store.reader_beside(0).expect("a reader beside");
    for q in ["parse config file", "getUserName", "demo project"] {
        let (here, there) = (
            store.search_lexical(&query(q)).unwrap(),
            other.search_lexical(&query(q)).unwrap(),
        );
        assert!(!here.is_empty(), "{q}");
        assert_eq!(format!("{here:?}"), format!("{there:?}"), "{q}");
    }
    // Inside a rebuild's transaction, none: it would not see what the writer has written.
    store.begin_rebuild(repo).unwrap();
    assert!(store.reader_beside(0).is_none());
}
