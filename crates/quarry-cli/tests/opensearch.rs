//! The quarry command on the OpenSearch store (`--db-url opensearch+http://…`), against a
//! real node (quarry-test-opensearch), beside the embedded store on the same repository: the
//! same commands give the same answers. Named `opensearch_*` so that `cargo test opensearch`
//! runs them.

mod common;

use common::{result_paths, sample_repo, Env};

fn on_opensearch(env: &Env, url: &str, args: &[&str]) -> std::process::Output {
    env.quarry()
        .env("QUARRY_DB_URL", url)
        .args(args)
        .output()
        .unwrap()
}

fn ok_on_opensearch(env: &Env, url: &str, args: &[&str]) -> String {
    let out = on_opensearch(env, url, args);
    assert!(
        out.status.success(),
        "quarry {args:?} on OpenSearch failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// (path, line, score) of each result.
fn results(json: &str) -> Vec<(String, u64, f64)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["start_line"].as_u64().unwrap_or(0),
                r["score"].as_f64().unwrap_or(0.0),
            )
        })
        .collect()
}

#[test]
fn opensearch_index_names_questions_grep_and_status_answer_as_the_embedded_store_does() {
    let embedded = Env::new();
    sample_repo(&embedded);
    embedded.ok(&["index", embedded.repo_path(), "--no-embed"]);

    let url = quarry_test_opensearch::store_url("cli");
    let os = Env::new();
    sample_repo(&os);
    let said = ok_on_opensearch(
        &os,
        &url,
        &["index", os.repo_path(), "--no-embed", "--json"],
    );
    let report: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(report["repos"][0]["files"], 5, "{said}");
    // Nothing was written beside the workspace's settings: the index is on the cluster.
    assert!(!os.index_dir().join("index.sqlite").exists());

    // Questions, names and paths: the same results in the same order with the same scores.
    for (query, mode) in [
        ("parse config file", "lexical"),
        ("retry uploads with exponential backoff", "lexical"),
        ("getUserName", "auto"),
        ("UploadQueue", "auto"),
        ("requeue a failed upload job", "auto"),
        ("delete a user", "auto"),
    ] {
        let args = ["search", query, "--mode", mode, "-k", "5", "--json"];
        let (a, b) = (
            results(&embedded.ok(&args)),
            results(&ok_on_opensearch(&os, &url, &args)),
        );
        assert!(
            !a.is_empty(),
            "{query:?} finds nothing on the embedded store"
        );
        assert_eq!(a.len(), b.len(), "{query:?} ({mode}): {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (&x.0, x.1),
                (&y.0, y.1),
                "{query:?} ({mode}): {a:?} vs {b:?}"
            );
            assert!(
                (x.2 - y.2).abs() <= 1e-6 * x.2.abs().max(1.0),
                "{query:?}: {a:?} vs {b:?}"
            );
        }
    }
    // The flag works as the variable does; status counts what the cluster holds.
    let status = os.ok(&["--db-url", &url, "status", "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["repos"][0]["files"], 5, "{status}");
    assert_eq!(
        status["repos"][0]["chunks"],
        embedded.json(&["status"])["repos"][0]["chunks"]
    );
    // Re-running changes nothing; a changed file is read again, a deleted one goes.
    let again: serde_json::Value = serde_json::from_str(&ok_on_opensearch(
        &os,
        &url,
        &["index", os.repo_path(), "--no-embed", "--json"],
    ))
    .unwrap();
    assert_eq!(again["repos"][0]["unchanged"], 5, "{again}");
    os.write("notes.txt", "notes about exponential backoff now\n");
    std::fs::remove_file(os.repo.path().join("docs/guide.md")).unwrap();
    ok_on_opensearch(&os, &url, &["index", os.repo_path(), "--no-embed"]);
    let found = result_paths(
        &serde_json::from_str(&ok_on_opensearch(
            &os,
            &url,
            &[
                "search",
                "exponential backoff",
                "--mode",
                "lexical",
                "--json",
            ],
        ))
        .unwrap(),
    );
    assert!(found.contains(&"notes.txt".to_string()), "{found:?}");
    assert!(!found.contains(&"docs/guide.md".to_string()), "{found:?}");
    // --rebuild starts the repo over on the cluster: every file read again, none left twice.
    let rebuilt: serde_json::Value = serde_json::from_str(&ok_on_opensearch(
        &os,
        &url,
        &["index", "--rebuild", os.repo_path(), "--no-embed", "--json"],
    ))
    .unwrap();
    assert_eq!(rebuilt["repos"][0]["files"], 4, "{rebuilt}");
    assert_eq!(rebuilt["repos"][0]["added"], 4, "{rebuilt}");
    let status = os.ok(&["--db-url", &url, "status", "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["repos"][0]["files"], 4, "{status}");

    // grep on OpenSearch reads only the files whose trigrams can match, and prints what grep
    // over the embedded store prints.
    let grep = |env: &Env, url: Option<&str>, pattern: &str| {
        let mut command = env.quarry();
        if let Some(url) = url {
            command.env("QUARRY_DB_URL", url);
        }
        let out = command
            .current_dir(env.repo.path())
            .args(["grep", "--stats", "-n", pattern])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (on_os, stats) = grep(&os, Some(&url), "user_id");
    assert!(on_os.contains("user_id"), "{on_os}");
    assert_eq!(on_os, grep(&embedded, None, "user_id").0);
    assert!(
        stats.contains("ruled out") && !stats.contains(" 0 ruled out"),
        "{stats}"
    );
}

#[test]
fn opensearch_a_wrong_url_is_a_clear_error_without_the_password() {
    let env = Env::new();
    sample_repo(&env);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("opensearch+http://admin:hunter2@127.0.0.1:{port}/quarry");
    let out = on_opensearch(&env, &url, &["index", env.repo_path()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("cannot connect to OpenSearch at opensearch+http://admin:***@127.0.0.1"),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");
    // The setting takes the URL; its confirmation shows it without the password.
    let set = env.run(&["config", "set", "store.url", &url]);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&set.stdout),
        String::from_utf8_lossy(&set.stderr)
    );
    assert!(set.status.success(), "{shown}");
    assert!(
        shown.contains("admin:***@") && !shown.contains("hunter2"),
        "{shown}"
    );
}

/// A URL whose scheme quarry does not know (`opensearch+` left out or mistyped) says which
/// schemes it knows, rather than being read as a PostgreSQL string ("invalid connection
/// string: unexpected EOF").
#[test]
fn opensearch_a_url_without_a_known_scheme_names_the_schemes_quarry_knows() {
    let env = Env::new();
    let port = quarry_test_opensearch::server().http_port;
    for (url, hint) in [
        (
            format!("http://admin:hunter2@127.0.0.1:{port}/quarry"),
            format!("opensearch+http://admin:***@127.0.0.1:{port}/quarry"),
        ),
        (
            format!("opensearh+http://127.0.0.1:{port}/quarry"),
            format!("opensearch+http://127.0.0.1:{port}/quarry"),
        ),
    ] {
        let out = on_opensearch(&env, &url, &["search", "parse"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{said}");
        assert!(
            said.contains("which quarry does not know")
                && said.contains("opensearch+https://")
                && said.contains("postgres://")
                && said.contains(&hint),
            "{url}: {said}"
        );
        assert!(
            !said.contains("invalid connection string") && !said.contains("hunter2"),
            "{said}"
        );
    }
}

/// `quarry serve` on a store whose cluster goes down: 503 with `Retry-After` (the client
/// should try again), not 500, and the error names the cluster.
#[test]
fn opensearch_serve_answers_503_with_retry_after_while_the_cluster_is_down() {
    let env = Env::new();
    sample_repo(&env);
    let relay = common::relay::Relay::to(quarry_test_opensearch::server().http_port);
    let prefix = quarry_test_opensearch::index_prefix("serve_down");
    let url = format!("opensearch+http://127.0.0.1:{}/{prefix}", relay.port);
    ok_on_opensearch(&env, &url, &["index", env.repo_path(), "--no-embed"]);
    let server = common::serve(&env, &["--db-url", &url]);
    let ask = |path: &str| common::get_with_retry_after(&server, path);
    let (status, _, body) = ask("/api/status");
    assert_eq!(status, 200, "{body}");
    relay.cut();
    for path in [
        "/api/status",
        "/api/search/code?query=parse",
        "/api/search/commits?query=parse",
    ] {
        let (status, retry, body) = ask(path);
        assert_eq!(status, 503, "{path}: {body}");
        assert_eq!(retry.as_deref(), Some("1"), "{path}");
        assert!(body.contains(&format!("OpenSearch at {url}")), "{body}");
    }
}

/// Git history on OpenSearch: one repository synced into both stores; every history command
/// answers the same, with the same BM25 scores; a workspace indexed with --db-url remembers it.
#[test]
fn opensearch_history_answers_as_the_embedded_store_does() {
    use common::git::{head, session_history};
    let embedded = Env::new();
    session_history(&embedded);
    let url = quarry_test_opensearch::store_url("cli_history");
    let os = Env::new();
    let repo = embedded.repo_path();
    let out = os.run(&["--db-url", &url, "sync", repo, "--no-embed"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("store.url"));
    embedded.ok(&["sync", repo, "--no-embed"]);
    // Remembered: no flag from here on.
    assert_eq!(
        os.json(&["sync", repo, "--no-embed"])["repos"][0]["added"],
        0
    );

    let commits = |v: &serde_json::Value| -> Vec<(String, f64)> {
        v["commits"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|c| {
                (
                    c["sha"].as_str().unwrap().to_string(),
                    c["score"].as_f64().unwrap_or(0.0),
                )
            })
            .collect()
    };
    for args in [
        &["log", "rate limiting", "--mode", "lexical"][..],
        &["log", "limiters throttled", "--mode", "lexical"],
        &["log", "--author", "bob"],
        &["log", "--since", "2025-02-15"],
        &["log", "--path", "README.md"],
        &["touches", "auth/sessions.go"],
        &["touches", "auth"],
    ] {
        let (a, b) = (commits(&embedded.json(args)), commits(&os.json(args)));
        assert!(
            !a.is_empty(),
            "{args:?} found nothing on the embedded store"
        );
        assert_eq!(a.len(), b.len(), "{args:?}: {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.0, y.0, "{args:?}: {a:?} vs {b:?}");
            assert!(
                (x.1 - y.1).abs() <= 1e-6 * x.1.abs().max(1.0),
                "{args:?}: {a:?} vs {b:?}"
            );
        }
    }
    let sha = head(embedded.repo.path());
    assert_eq!(
        os.json(&["show", &sha[..8]]),
        embedded.json(&["show", &sha[..8]])
    );

    // By meaning too: both embed the history with the same model, and `log` in every mode
    // ranks the same commits (kNN scores are the cosine through Lucene's float: 1e-4).
    embedded.ok(&["sync", "--embed-only"]);
    os.ok(&["sync", "--embed-only"]);
    for mode in ["semantic", "hybrid", "auto"] {
        let args = ["log", "rate limiting of requests", "--mode", mode];
        let (a, b) = (commits(&embedded.json(&args)), commits(&os.json(&args)));
        assert!(!a.is_empty(), "{mode} found nothing on the embedded store");
        assert_eq!(a.len(), b.len(), "{mode}: {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.0, y.0, "{mode}: {a:?} vs {b:?}");
            assert!((x.1 - y.1).abs() <= 1e-4, "{mode}: {a:?} vs {b:?}");
        }
    }
}

/// Embedded chunks on OpenSearch: semantic and hybrid searches find what the embedded store
/// finds (kNN through knn_vector, the cosine given back as the embedded store gives it).
#[test]
fn opensearch_semantic_and_hybrid_search_answer_as_the_embedded_store_does() {
    let embedded = Env::new();
    sample_repo(&embedded);
    embedded.ok(&["index", embedded.repo_path()]);
    let url = quarry_test_opensearch::store_url("cli_semantic");
    let os = Env::new();
    sample_repo(&os);
    ok_on_opensearch(&os, &url, &["index", os.repo_path()]);
    let status: serde_json::Value =
        serde_json::from_str(&ok_on_opensearch(&os, &url, &["status", "--json"])).unwrap();
    assert_eq!(
        status["embedding"]["embedded"], status["embedding"]["total"],
        "{status}"
    );
    assert_ne!(status["embedding"]["embedded"], 0, "{status}");
    for (query, mode) in [
        ("retry with exponential backoff", "hybrid"),
        ("remove someone from the store", "semantic"),
        ("read the settings", "hybrid"),
    ] {
        let args = [
            "search", query, "--mode", mode, "-k", "3", "--json", "--path", "*",
        ];
        let (a, b) = (
            results(&embedded.ok(&args)),
            results(&ok_on_opensearch(&os, &url, &args)),
        );
        assert!(!a.is_empty(), "{query:?} finds nothing");
        let paths =
            |r: &[(String, u64, f64)]| r.iter().map(|x| (x.0.clone(), x.1)).collect::<Vec<_>>();
        assert_eq!(paths(&a), paths(&b), "{query:?} ({mode})");
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x.2 - y.2).abs() <= 1e-3 * x.2.abs().max(1e-3),
                "{query:?}: {a:?} vs {b:?}"
            );
        }
    }
}

/// A secured cluster (HTTPS with a private CA, basic auth: quarry_test_opensearch::tls_front):
/// the password from $QUARRY_OPENSEARCH_PASSWORD and the CA file from $QUARRY_OPENSEARCH_CA
/// reach it; without the password the error says what to set and shows no secret.
#[test]
fn opensearch_https_takes_the_password_and_ca_file_from_the_environment() {
    let front = quarry_test_opensearch::tls_front("quarry", "s3cret-pw");
    let url = format!(
        "opensearch+https://quarry@127.0.0.1:{}/{}",
        front.port,
        quarry_test_opensearch::index_prefix("cli_tls")
    );
    let os = Env::new();
    sample_repo(&os);
    let run = |args: &[&str], password: Option<&str>| {
        let mut command = os.quarry();
        command
            .env("QUARRY_DB_URL", &url)
            .env("QUARRY_OPENSEARCH_CA", &front.ca)
            .env_remove("QUARRY_OPENSEARCH_PASSWORD");
        if let Some(password) = password {
            command.env("QUARRY_OPENSEARCH_PASSWORD", password);
        }
        command.args(args).output().unwrap()
    };
    let out = run(&["index", os.repo_path(), "--no-embed"], Some("s3cret-pw"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(
        &[
            "search",
            "exponential backoff",
            "--mode",
            "lexical",
            "--json",
        ],
        Some("s3cret-pw"),
    );
    assert!(out.status.success());
    let found = result_paths(&serde_json::from_slice(&out.stdout).unwrap());
    assert!(!found.is_empty(), "{found:?}");

    for password in [None, Some("bad-pw-9")] {
        let out = run(&["status"], password);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{said}");
        assert!(
            said.contains("401") && said.contains("QUARRY_OPENSEARCH_PASSWORD"),
            "{said}"
        );
        assert!(
            !said.contains("s3cret") && !said.contains("bad-pw-9"),
            "{said}"
        );
    }
}
