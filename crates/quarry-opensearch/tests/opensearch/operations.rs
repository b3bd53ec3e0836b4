//! Running the store: a schema version moved into a new index behind its alias (searches
//! answering whole all along), a batch cut
//! off by a dead writer, a cluster too busy to take writes (429), a wrong address.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use quarry_core::store::{IndexBatch, Store};
use quarry_core::VectorQuery;
use quarry_opensearch::{index_version, OpenSearchStore, SCHEMA_VERSION};
use quarry_test_opensearch::{request, server, store_url};

use crate::common::{chunk, file, query};

fn get(path: &str) -> String {
    let (status, body) = request(server(), "GET", path, None).unwrap();
    assert!(status < 300, "GET {path}: {status} {body}");
    body
}

/// A store at schema version 0 holding one file, `a.py`, with `alpha` in it.
fn schema_v0_store(url: &str) -> (OpenSearchStore, quarry_core::store::RepoInfo) {
    let mut old = OpenSearchStore::connect_at(url, Duration::from_secs(30), 0).unwrap();
    let repo = old.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "a.py",
        "h1",
        vec![chunk(1, 1, Some("alpha"), "def alpha(): pass")],
    ));
    old.apply(repo.id, &batch).unwrap();
    (old, repo)
}

#[test]
fn opensearch_a_new_schema_version_is_copied_into_a_new_index_and_the_alias_moves() {
    let url = store_url("schema");
    let prefix = url.rsplit('/').next().unwrap().to_string();
    let timeout = Duration::from_secs(30);
    let (mut old, repo) = schema_v0_store(&url);
    old.set_embedding_model("m").unwrap();
    let pending = old.pending_embeddings(10, None, &[]).unwrap();
    old.put_embeddings(&[(pending[0].hash.clone(), vec![0.6, 0.8])])
        .unwrap();
    assert!(get(&format!("/_alias/{prefix}-chunks")).contains(&format!("{prefix}-chunks-v0")));
    // Calls as schema v2 and older kept them: one document per call.
    for (id, caller, line) in [(901, "alpha", 3), (900, "alpha", 2), (902, "", 1)] {
        let caller = if caller.is_empty() {
            "null".to_string()
        } else {
            format!("\"{caller}\"")
        };
        let (status, body) = request(
            server(),
            "PUT",
            &format!("/{prefix}-calls/_doc/{id}?refresh=true"),
            Some(&format!(
                r#"{{"id": {id}, "repo_id": {}, "repo": "r", "path": "a.py", "callee": "beta", "caller": {caller}, "line": {line}}}"#,
                repo.id
            )),
        )
        .unwrap();
        assert!(status < 300, "{status} {body}");
    }

    // The current version: every index copied, the aliases moved, the old indexes gone.
    let store = OpenSearchStore::connect(&url).unwrap();
    let aliases = get(&format!("/_alias/{prefix}-*"));
    for kind in ["chunks", "commits"] {
        let version = index_version(kind, SCHEMA_VERSION);
        assert!(
            aliases.contains(&format!("{prefix}-{kind}-v{version}")),
            "{aliases}"
        );
    }
    assert!(!aliases.contains("-v0"), "{aliases}");
    assert_eq!(
        store.search_lexical(&query("alpha")).unwrap()[0].path,
        "a.py"
    );
    assert_eq!(store.file_states(repo.id).unwrap().len(), 1);
    // The calls came along, each answered as before, in line order.
    let lines = |calls: Vec<quarry_core::CallRef>| -> Vec<(Option<String>, u32)> {
        calls.into_iter().map(|c| (c.caller, c.line)).collect()
    };
    assert_eq!(
        lines(store.callers("beta", &[], 10).unwrap()),
        vec![
            (None, 1),
            (Some("alpha".into()), 2),
            (Some("alpha".into()), 3)
        ]
    );
    assert_eq!(lines(store.callers("beta", &[], 2).unwrap()).len(), 2);
    assert_eq!(
        lines(store.calls_from("r", "a.py", "alpha", 10).unwrap()),
        vec![(Some("alpha".into()), 2), (Some("alpha".into()), 3)]
    );
    // The vector field came along with its vectors.
    let near = store
        .search_vector(&VectorQuery {
            vectors: vec![vec![0.6, 0.8]],
            limit: 1,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(near.len(), 1);
    assert_eq!(store.embedding_model().unwrap().as_deref(), Some("m"));

    // An index of a newer quarry is not touched: the older one says to upgrade.
    drop(OpenSearchStore::connect_at(&url, timeout, SCHEMA_VERSION + 1).unwrap());
    let err = OpenSearchStore::connect(&url)
        .err()
        .expect("a newer schema");
    assert!(format!("{err:#}").contains("newer quarry"), "{err:#}");
}

/// A move cut off after the new index was created and before its alias moved (a process
/// killed mid-copy) is finished by the next connect, not taken as another's work done.
#[test]
fn opensearch_a_schema_move_cut_off_midway_is_finished_by_the_next_connect() {
    let url = store_url("schema_cut");
    let prefix = url.rsplit('/').next().unwrap().to_string();
    schema_v0_store(&url);
    let (status, body) = request(
        server(),
        "PUT",
        &format!(
            "/{prefix}-symbols-v{}",
            index_version("symbols", SCHEMA_VERSION)
        ),
        Some("{}"),
    )
    .unwrap();
    assert!(status < 300, "{status} {body}");
    let store = OpenSearchStore::connect(&url).unwrap();
    let after = get(&format!("/_alias/{prefix}-symbols"));
    assert!(
        after.contains(&format!("-v{}", index_version("symbols", SCHEMA_VERSION))),
        "{after}"
    );
    assert!(!after.contains("-v0"), "{after}");
    assert_eq!(
        store.search_lexical(&query("alpha")).unwrap()[0].path,
        "a.py"
    );
}

/// Schema v3 gave each commit document a fresh numeric id, and a sync killed before its
/// writes were searchable wrote them again under new ones. The move to v4 (the id is the
/// repo and SHA) leaves one document per commit, and copies only the commits index.
#[test]
fn opensearch_the_move_to_commit_ids_by_sha_merges_the_copies_an_older_index_holds() {
    use quarry_core::history::HistoryStore;
    let url = store_url("schema_commits");
    let prefix = url.rsplit('/').next().unwrap().to_string();
    let timeout = Duration::from_secs(30);
    let mut old = OpenSearchStore::connect_at(&url, timeout, 3).unwrap();
    let repo = old.ensure_repo("r", "/src/r").unwrap();
    let sha = "ab".repeat(20);
    // Two copies of one commit and one of another, as v3 wrote them (ids from the counter).
    for (id, sha, subject) in [
        (900, sha.as_str(), "Fix the parser"),
        (901, sha.as_str(), "Fix the parser"),
        (902, "cd", "Other"),
    ] {
        let (status, body) = request(
            server(),
            "PUT",
            &format!("/{prefix}-commits/_doc/{id}?refresh=true"),
            Some(
                &serde_json::json!({
                    "id": id, "repo_id": repo.id, "repo": "r", "sha": sha, "subject": subject,
                    "author_time": 1_700_000_000, "files": [], "embedded": false,
                    "t_subject": "fix parser", "n_tokens": 2,
                })
                .to_string(),
            ),
        )
        .unwrap();
        assert!(status < 300, "{status} {body}");
    }
    assert_eq!(old.history_stats().unwrap()[0].commits, 3);
    drop(old);

    let store = OpenSearchStore::connect(&url).unwrap();
    let aliases = get(&format!("/_alias/{prefix}-*"));
    assert!(
        aliases.contains(&format!("{prefix}-commits-v4")),
        "{aliases}"
    );
    // The other indexes did not change in v4: not copied.
    assert!(
        aliases.contains(&format!("{prefix}-chunks-v3")),
        "{aliases}"
    );
    assert_eq!(store.history_stats().unwrap()[0].commits, 2);
    assert_eq!(store.commits_by_prefix("abab", &[]).unwrap().len(), 1);
    assert_eq!(store.known_commits(repo.id).unwrap().len(), 2);
}

/// While a new schema version is built and the aliases move, a reader searching all along
/// gets every answer whole: the new index is filled before the alias points at it.
#[test]
fn opensearch_searches_never_see_a_half_built_index_while_the_schema_moves() {
    let url = store_url("schema_storm");
    let timeout = Duration::from_secs(30);
    let mut old = OpenSearchStore::connect_at(&url, timeout, 0).unwrap();
    let repo = old.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    for i in 0..400 {
        batch.upserts.push(file(
            &format!("m{i:03}.py"),
            &format!("h{i}"),
            vec![chunk(
                1,
                1,
                Some(&format!("handler_{i}")),
                "def handler(): return widget",
            )],
        ));
    }
    old.apply(repo.id, &batch).unwrap();
    // A run ends here: what it wrote is visible to every reader.
    old.finish_run(repo.id, &Default::default()).unwrap();
    let mut wide = query("widget");
    wide.limit = 1000;
    let before = old.search_lexical(&wide).unwrap().len();
    assert_eq!(before, 400);

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (url, done, wide) = (url.clone(), done.clone(), wide.clone());
        let reader = OpenSearchStore::connect_at(&url, timeout, 0).unwrap();
        std::thread::spawn(move || {
            let mut rounds = 0;
            loop {
                let finished = done.load(Ordering::SeqCst);
                let found = reader.search_lexical(&wide).unwrap().len();
                let files = reader.stats().unwrap()[0].files;
                assert_eq!((found, files), (400, 400), "round {rounds}");
                rounds += 1;
                if finished {
                    return rounds;
                }
            }
        })
    };
    // Connecting with the current version copies every index and moves the aliases.
    let new = OpenSearchStore::connect(&url).unwrap();
    done.store(true, Ordering::SeqCst);
    let rounds = reader.join().unwrap();
    assert!(rounds >= 2, "the reader searched during the move: {rounds}");
    assert!(get(&format!(
        "/_alias/{}-chunks",
        url.rsplit('/').next().unwrap()
    ))
    .contains(&format!("-v{}", index_version("chunks", SCHEMA_VERSION))));
    assert_eq!(new.search_lexical(&wide).unwrap().len(), 400);
}

#[test]
fn opensearch_a_batch_cut_off_by_a_dead_writer_is_taken_away_whole_by_the_next() {
    let url = store_url("cutoff");
    let mut store = OpenSearchStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "kept.py",
        "h1",
        vec![chunk(1, 1, Some("kept"), "def kept(): pass")],
    ));
    batch.upserts.push(file(
        "cut.py",
        "h2",
        vec![chunk(1, 1, Some("cut"), "def cut(): pass")],
    ));
    store.apply(repo.id, &batch).unwrap();
    // This writer's batch is written whole once the store goes (its writes run behind `apply`).
    let meta = store.index("meta");
    drop(store);
    // A writer that died after writing part of a batch leaves its marker (the first thing a
    // batch writes) naming the batch's files.
    let marker = serde_json::json!({"type": "pending", "repo": repo.id, "paths": ["cut.py"]});
    let (status, body) = request(
        server(),
        "PUT",
        &format!("/{meta}/_doc/pending-{}?refresh=true", repo.id),
        Some(&marker.to_string()),
    )
    .unwrap();
    assert!(status < 300, "{body}");
    // A reader cannot tell that marker from a live writer's: it leaves the batch alone.
    let reader = OpenSearchStore::connect_reading(&url, Duration::from_secs(30)).unwrap();
    assert!(reader.search_lexical(&query("kept")).is_ok());
    assert!(get(&format!("/{meta}/_search?q=type:pending")).contains("cut.py"));
    drop(reader);
    // The next writer removes that file whole, state too: the next run reads it again.
    let store = OpenSearchStore::connect(&url).unwrap();
    let states = store.file_states(repo.id).unwrap();
    assert_eq!(states.keys().collect::<Vec<_>>(), ["kept.py"]);
    assert!(store.search_lexical(&query("cut")).unwrap().is_empty());
    assert!(store.definitions("cut", &[], 10).unwrap().is_empty());
    assert_eq!(store.search_lexical(&query("kept")).unwrap().len(), 1);
    assert!(!get(&format!("/{}/_search?q=type:pending", store.index("meta"))).contains("cut.py"));
}

/// An HTTP relay in front of the node that turns away the first `_bulk` whole (429) and
/// answers the second with every item turned away (429), as a cluster whose write queue is
/// full does; everything else passes through.
struct BusyRelay {
    port: u16,
    turned_away: Arc<AtomicUsize>,
    /// The most actions one `_bulk` request passed on carried, and how many were passed on.
    largest_bulk: Arc<AtomicUsize>,
    bulks: Arc<AtomicUsize>,
}

impl BusyRelay {
    fn start(target: u16) -> BusyRelay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let turned_away = Arc::new(AtomicUsize::new(0));
        let largest_bulk = Arc::new(AtomicUsize::new(0));
        let bulks = Arc::new(AtomicUsize::new(0));
        let counts = [turned_away.clone(), largest_bulk.clone(), bulks.clone()];
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let counts = counts.clone();
                std::thread::spawn(move || relay(client, target, &counts));
            }
        });
        BusyRelay {
            port,
            turned_away,
            largest_bulk,
            bulks,
        }
    }
}

/// The number of actions in a `_bulk` request's body (an action line, then its source unless
/// it is a delete).
fn bulk_actions(body: &str) -> usize {
    let mut count = 0;
    let mut lines = body.lines().filter(|l| !l.trim().is_empty());
    while let Some(action) = lines.next() {
        let action: serde_json::Value = serde_json::from_str(action).unwrap();
        if action.get("delete").is_none() {
            lines.next();
        }
        count += 1;
    }
    count
}

fn relay(
    client: TcpStream,
    target: u16,
    [turned_away, largest_bulk, bulks]: &[Arc<AtomicUsize>; 3],
) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut client = client;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut length = 0;
        let mut content_type = "application/json".to_string();
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or(("", ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "content-type" => content_type = value.trim().to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let body = String::from_utf8(body).unwrap();
        let (status, answer) = if path.starts_with("/_bulk")
            && turned_away.load(Ordering::SeqCst) == 0
        {
            turned_away.fetch_add(1, Ordering::SeqCst);
            (429, r#"{"error":{"type":"es_rejected_execution_exception","reason":"rejected execution: queue full"},"status":429}"#.to_string())
        } else if path.starts_with("/_bulk") && turned_away.load(Ordering::SeqCst) == 1 {
            turned_away.fetch_add(1, Ordering::SeqCst);
            let mut items = Vec::new();
            let mut lines = body.lines();
            while let Some(action) = lines.next() {
                let action: serde_json::Value = serde_json::from_str(action).unwrap();
                let kind = action.as_object().unwrap().keys().next().unwrap().clone();
                if kind != "delete" {
                    lines.next();
                }
                items.push(serde_json::json!({kind: {"status": 429, "error": {"type": "es_rejected_execution_exception", "reason": "queue full"}}}));
            }
            (
                200,
                serde_json::json!({"took": 1, "errors": true, "items": items}).to_string(),
            )
        } else {
            if path.starts_with("/_bulk") {
                largest_bulk.fetch_max(bulk_actions(&body), Ordering::SeqCst);
                bulks.fetch_add(1, Ordering::SeqCst);
            }
            forward(target, &method, &path, &body, &content_type)
        };
        let reply = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if client.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn forward(port: u16, method: &str, path: &str, body: &str, content_type: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let request = ureq::http::Request::builder()
        .method(method)
        .uri(format!("http://127.0.0.1:{port}{path}"))
        .header("Content-Type", content_type)
        .body(body.to_string())
        .unwrap();
    let mut response = agent.run(request).unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

#[test]
fn opensearch_writes_turned_away_as_too_many_are_sent_again() {
    let node = server();
    let relay = BusyRelay::start(node.http_port);
    let url = store_url("busy").replace(
        &format!(":{}/", node.http_port),
        &format!(":{}/", relay.port),
    );
    let mut store = OpenSearchStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    for i in 0..30 {
        batch.upserts.push(file(
            &format!("m{i}.py"),
            "h",
            vec![chunk(
                1,
                1,
                Some(&format!("handler_{i}")),
                "def handler(): pass",
            )],
        ));
    }
    store.apply(repo.id, &batch).unwrap();
    // A read waits for the batch's writes, which run behind `apply`.
    assert_eq!(store.file_states(repo.id).unwrap().len(), 30);
    assert_eq!(
        relay.turned_away.load(Ordering::SeqCst),
        2,
        "both refusals were met"
    );
    assert_eq!(store.definitions("handler_7", &[], 10).unwrap().len(), 1);
    assert_eq!(store.stats().unwrap()[0].chunks, 30);

    // A batch of more actions than one request may carry goes as several bounded requests.
    let before = relay.bulks.load(Ordering::SeqCst);
    let mut big = IndexBatch::default();
    for i in 0..1300 {
        big.upserts.push(file(
            &format!("many/f{i}.py"),
            "h",
            vec![chunk(1, 1, Some(&format!("many_{i}")), "def many(): pass")],
        ));
    }
    store.apply(repo.id, &big).unwrap();
    assert_eq!(store.file_states(repo.id).unwrap().len(), 1330);
    let largest = relay.largest_bulk.load(Ordering::SeqCst);
    assert!(
        largest > 2500 && largest <= 5000,
        "at most 5,000 actions a request: {largest}"
    );
    assert!(relay.bulks.load(Ordering::SeqCst) - before >= 2);
    assert_eq!(store.definitions("many_1299", &[], 10).unwrap().len(), 1);
}

/// Sets `index.blocks.read_only_allow_delete` on the indexes `pattern` names: what OpenSearch
/// does to every index on a node past its flood-stage watermark (the shared test node runs
/// with the disk thresholds off, so the test sets the block itself; the answers are the same).
fn flood_stage(pattern: &str, on: bool) {
    let (status, body) = request(
        server(),
        "PUT",
        &format!("/{pattern}/_settings"),
        Some(&format!(
            r#"{{"index.blocks.read_only_allow_delete": {}}}"#,
            if on { "true" } else { "null" }
        )),
    )
    .unwrap();
    assert!(status < 300, "{status} {body}");
}

/// A node past its flood-stage watermark: writes answer 429 `cluster_block_exception`. The
/// error says the disk and what to do, at once — not after half a minute of sending the
/// writes again as if the cluster were busy, ending as "stayed too busy".
#[test]
fn opensearch_a_node_past_its_flood_stage_watermark_is_named_with_what_to_do() {
    use quarry_core::history::HistoryStore;
    let url = store_url("disk_full");
    let prefix = url.rsplit('/').next().unwrap().to_string();
    let mut store = OpenSearchStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "a.py",
        "h1",
        vec![chunk(1, 1, Some("alpha"), "def alpha(): pass")],
    ));
    let says_disk = |message: &str, index: &str| {
        assert!(message.contains("flood-stage watermark"), "{message}");
        assert!(
            message.contains(&format!("{index} is read-only")),
            "{message}"
        );
        assert!(message.contains("free space"), "{message}");
        assert!(
            message.contains(&format!(
                r#"PUT {index}/_settings {{"index.blocks.read_only_allow_delete": null}}"#
            )),
            "{message}"
        );
    };

    // Every index blocked: the batch's first write (its marker) is refused.
    flood_stage(&format!("{prefix}-*"), true);
    let started = std::time::Instant::now();
    let err = store.apply(repo.id, &batch).err().expect("refused");
    says_disk(&format!("{err:#}"), &format!("{prefix}-meta-v3"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "said at once, not sent again for {:?}",
        started.elapsed()
    );

    // Only the chunks: the `_bulk` items are refused one by one, named when the run ends.
    flood_stage(&format!("{prefix}-*"), false);
    flood_stage(&format!("{prefix}-chunks-v3"), true);
    store.apply(repo.id, &batch).unwrap();
    let err = store
        .finish_run(repo.id, &Default::default())
        .err()
        .expect("refused");
    let message = format!("{err:#}");
    assert!(!message.contains("too busy"), "{message}");
    says_disk(&message, &format!("{prefix}-chunks-v3"));

    // Commits likewise.
    flood_stage(&format!("{prefix}-commits-v4"), true);
    let commit = quarry_core::history::CommitRecord {
        sha: "ab".repeat(20),
        parents: vec![],
        author: "A".into(),
        email: "a@example.com".into(),
        author_time: 1_700_000_000,
        commit_time: 1_700_000_000,
        subject: "Fix the parser".into(),
        body: String::new(),
        files: vec![],
        patch: String::new(),
        patch_truncated: false,
    };
    let err = store
        .put_commits(repo.id, &[commit])
        .err()
        .expect("refused");
    says_disk(&format!("{err:#}"), &format!("{prefix}-commits-v4"));
    flood_stage(&format!("{prefix}-*"), false);
}

#[test]
fn opensearch_a_wrong_address_or_prefix_is_a_clear_error_without_the_password() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let err = OpenSearchStore::connect_with(
        &format!("opensearch+http://admin:hunter2@127.0.0.1:{port}/x"),
        Duration::from_secs(2),
    )
    .err()
    .expect("nothing listens");
    let message = format!("{err:#}");
    assert!(
        message.contains("cannot connect to OpenSearch at opensearch+http://admin:***@127.0.0.1"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    let bad = format!(
        "opensearch+http://127.0.0.1:{}/Has Spaces",
        server().http_port
    );
    assert!(format!("{:#}", OpenSearchStore::connect(&bad).err().unwrap()).contains("prefix"));
}

/// Takes the started primary of `index` off its node, as a node restart does: it comes back
/// from its copy on disk by itself in a moment.
fn primary_restarted(index: &str) {
    let shards: serde_json::Value = serde_json::from_str(&get(&format!(
        "/_cat/shards/{index}?format=json&h=node,prirep"
    )))
    .unwrap();
    let node = shards
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["prirep"] == "p")
        .and_then(|s| s["node"].as_str())
        .expect("a started primary")
        .to_string();
    let cancel = serde_json::json!({"commands": [{"cancel": {
        "index": index, "shard": 0, "node": node, "allow_primary": true,
    }}]});
    let (status, answer) = request(
        server(),
        "POST",
        "/_cluster/reroute",
        Some(&cancel.to_string()),
    )
    .unwrap();
    assert!(status < 300, "{status} {answer}");
}

/// Puts in place of `index` (behind `alias`) one whose shard no node may take: it stays red
/// (no copy of its shard started), as an index that does not recover.
fn never_recovering(index: &str, alias: &str) {
    let (status, answer) = request(server(), "DELETE", &format!("/{index}"), None).unwrap();
    assert!(status < 300, "{status} {answer}");
    let body = serde_json::json!({
        "settings": {"index.routing.allocation.enable": "none"},
        "aliases": {alias: {}},
    });
    let (status, answer) = request(
        server(),
        "PUT",
        &format!("/{index}?wait_for_active_shards=0"),
        Some(&body.to_string()),
    )
    .unwrap();
    assert!(status < 300, "{status} {answer}");
}

/// An index recovering (no copy of a shard started, as right after a node restart) is waited
/// for a few seconds; one that does not come back is named, as an error that says the store
/// cannot answer now (HTTP: 503), not a raw "all shards failed".
#[test]
fn opensearch_a_search_waits_for_a_recovering_index_and_names_it_when_it_stays_down() {
    let url = store_url("recovering");
    let mut store = OpenSearchStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "a.py",
        "h1",
        vec![chunk(1, 1, Some("alpha"), "def alpha(): pass")],
    ));
    store.apply(repo.id, &batch).unwrap();
    store
        .finish_run(repo.id, &quarry_core::store::SkipCounts::new())
        .unwrap();
    drop(store);
    let prefix = url.rsplit_once('/').unwrap().1;
    let chunks = format!(
        "{prefix}-chunks-v{}",
        index_version("chunks", SCHEMA_VERSION)
    );
    let reader = OpenSearchStore::connect_reading(&url, Duration::from_secs(3)).unwrap();

    // Back within the wait: the search answers.
    primary_restarted(&chunks);
    let hits = reader.search_lexical(&query("alpha")).unwrap();
    assert_eq!(hits[0].path, "a.py");

    never_recovering(&chunks, &format!("{prefix}-chunks"));
    let started = std::time::Instant::now();
    let err = reader
        .search_lexical(&query("alpha"))
        .expect_err("no copy of the chunks' shard");
    let message = format!("{err:#}");
    assert!(
        message.contains(&format!("the index {chunks} is recovering"))
            && !message.contains("all shards failed"),
        "{message}"
    );
    assert!(quarry_core::store::is_unavailable(&err), "{message}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A reader given a prefix that holds no quarry index (a typo) creates nothing: it says so and
/// names the prefixes that hold one, the nearest first. A writer still creates them.
#[test]
fn opensearch_a_reader_of_a_mistyped_prefix_creates_nothing_and_names_the_prefixes_there() {
    let real = store_url("prefixtypo");
    drop(OpenSearchStore::connect(&real).unwrap());
    let real_prefix = real.rsplit_once('/').unwrap().1.to_string();
    // One letter off the real one.
    let typo_prefix = format!("{}x", &real_prefix[..real_prefix.len() - 1]);
    let typo = format!("{}/{typo_prefix}", real.rsplit_once('/').unwrap().0);
    let timeout = Duration::from_secs(30);
    let message = format!(
        "{:#}",
        OpenSearchStore::connect_reading(&typo, timeout)
            .err()
            .expect("no index under a mistyped prefix")
    );
    assert!(
        message.contains(&format!(
            "holds no quarry index with the prefix \"{typo_prefix}\""
        )) && message.contains(&format!("prefixes holding one: {real_prefix}")),
        "{message}"
    );
    assert_eq!(
        get(&format!("/_cat/indices/{typo_prefix}*?format=json")).trim(),
        "[]",
        "a reader created indexes"
    );
    drop(OpenSearchStore::connect_with(&typo, timeout).unwrap());
    drop(OpenSearchStore::connect_reading(&typo, timeout).unwrap());
}

/// The two mistakes of a first connect read as one sentence each, naming the server once:
/// `https` to a node that speaks plain HTTP, and a wrong password (401).
#[test]
fn opensearch_https_to_a_plain_node_and_a_wrong_password_are_said_once_and_plainly() {
    let port = server().http_port;
    let prefix = quarry_test_opensearch::index_prefix("plain");
    let url = format!("opensearch+https://127.0.0.1:{port}/{prefix}");
    let message = format!(
        "{:#}",
        OpenSearchStore::connect_with(&url, Duration::from_secs(5))
            .err()
            .expect("TLS to a plain node")
    );
    assert_eq!(
        message,
        format!("OpenSearch at {url} answered with plain HTTP: use opensearch+http://127.0.0.1:{port}/{prefix}")
    );
    let front = quarry_test_opensearch::tls_front("quarry", "s@cret");
    let wrong = format!(
        "opensearch+https://quarry:nope@127.0.0.1:{}/{prefix}?ca={}",
        front.port,
        front.ca.display()
    );
    let message = format!(
        "{:#}",
        OpenSearchStore::connect(&wrong).err().expect("refused")
    );
    assert_eq!(message.matches("OpenSearch at").count(), 1, "{message}");
    assert!(
        message.contains("401") && message.contains("password") && !message.contains("nope"),
        "{message}"
    );
}

/// A secured cluster as quarry's client meets it: HTTPS with a certificate of a private CA and
/// basic auth in front of the node (quarry_test_opensearch::tls_front). The CA file makes TLS
/// work, the password in the URL is sent, and the errors without them say what is wrong
/// without showing it.
#[test]
fn opensearch_https_with_a_private_ca_and_basic_auth() {
    let front = quarry_test_opensearch::tls_front("quarry", "s@cret");
    let port = front.port;
    let prefix = quarry_test_opensearch::index_prefix("tls");
    let ca = &front.ca;
    let url = format!(
        "opensearch+https://quarry:s%40cret@127.0.0.1:{port}/{prefix}?ca={}",
        ca.display()
    );

    let mut store = OpenSearchStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "a.py",
        "h1",
        vec![chunk(1, 1, Some("alpha"), "def alpha(): pass")],
    ));
    store.apply(repo.id, &batch).unwrap();
    assert_eq!(
        store.search_lexical(&query("alpha")).unwrap()[0].path,
        "a.py"
    );

    let wrong = format!(
        "opensearch+https://quarry:nope@127.0.0.1:{port}/{prefix}?ca={}",
        ca.display()
    );
    let message = format!(
        "{:#}",
        OpenSearchStore::connect(&wrong).err().expect("refused")
    );
    assert!(
        message.contains("401") && message.contains("password"),
        "{message}"
    );
    assert!(
        message.contains("quarry:***@") && !message.contains("nope"),
        "{message}"
    );
    // Without the CA file the certificate is not trusted.
    let untrusted = format!("opensearch+https://quarry:s%40cret@127.0.0.1:{port}/{prefix}");
    let message = format!(
        "{:#}",
        OpenSearchStore::connect(&untrusted)
            .err()
            .expect("untrusted")
    );
    assert!(
        message.contains("cannot connect") && message.contains("?ca=FILE"),
        "{message}"
    );
    assert!(!message.contains("s@cret"), "{message}");
}
