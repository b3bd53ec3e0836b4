//! The quarry command on the PostgreSQL store (`--db-url`), against a real server
//! (quarry-test-postgres), beside the embedded store on the same repository: the same
//! commands give the same answers. Named `postgres_*` so that `cargo test postgres` runs them.

mod common;

use common::{result_paths, sample_repo, Env};

fn on_postgres(env: &Env, url: &str, args: &[&str]) -> std::process::Output {
    env.quarry()
        .env("QUARRY_DB_URL", url)
        .args(args)
        .output()
        .unwrap()
}

fn ok_on_postgres(env: &Env, url: &str, args: &[&str]) -> String {
    let out = on_postgres(env, url, args);
    assert!(
        out.status.success(),
        "quarry {args:?} on PostgreSQL failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn postgres_index_search_and_status_answer_as_the_embedded_store_does() {
    let embedded = Env::new();
    sample_repo(&embedded);
    embedded.ok(&["index", embedded.repo_path()]);

    let url = quarry_test_postgres::database("cli");
    let pg = Env::new();
    sample_repo(&pg);
    let said = ok_on_postgres(&pg, &url, &["index", pg.repo_path(), "--json"]);
    let report: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(report["repos"][0]["files"], 5, "{said}");
    // Nothing was written beside the workspace's settings: the index is on the server.
    assert!(!pg.index_dir().join("index.sqlite").exists());

    for (query, mode) in [
        ("parse config file", "lexical"),
        ("getUserName", "lexical"),
        ("retry with exponential backoff", "hybrid"),
        ("requeue a failed upload job", "auto"),
    ] {
        let args = ["search", query, "--mode", mode, "-k", "3", "--json"];
        let on_sqlite = result_paths(&serde_json::from_str(&embedded.ok(&args)).unwrap());
        let on_pg = result_paths(&serde_json::from_str(&ok_on_postgres(&pg, &url, &args)).unwrap());
        assert_eq!(on_sqlite.first(), on_pg.first(), "{query:?} ({mode})");
    }
    // The flag works as the variable does; status counts what the server holds.
    let status = pg.ok(&["--db-url", &url, "status", "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["repos"][0]["files"], 5, "{status}");
    // Re-running changes nothing; a changed file is re-read.
    let again: serde_json::Value = serde_json::from_str(&ok_on_postgres(
        &pg,
        &url,
        &["index", pg.repo_path(), "--json"],
    ))
    .unwrap();
    assert_eq!(again["repos"][0]["unchanged"], 5, "{again}");

    // grep on PostgreSQL reads only the files whose text can match (pg_trgm), and prints what
    // grep over the embedded store prints.
    let grep = |env: &Env, url: Option<&str>| {
        let mut command = env.quarry();
        if let Some(url) = url {
            command.env("QUARRY_DB_URL", url);
        }
        let out = command
            .current_dir(env.repo.path())
            .args(["grep", "--stats", "-n", "backoff"])
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
    let (on_pg, stats) = grep(&pg, Some(&url));
    assert!(on_pg.contains("backoff"), "{on_pg}");
    assert_eq!(on_pg, grep(&embedded, None).0);
    assert!(!stats.contains(" 0 ruled out"), "{stats}");
    assert!(stats.contains("ruled out"), "{stats}");
}

#[test]
fn postgres_a_wrong_url_is_a_clear_error_without_the_password() {
    let env = Env::new();
    sample_repo(&env);
    let server = quarry_test_postgres::server();
    let url = format!(
        "postgres://quarry:hunter2@127.0.0.1:{}/no_such_db",
        server.port
    );
    let out = on_postgres(&env, &url, &["index", env.repo_path()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("cannot connect to PostgreSQL at postgres://quarry:***@127.0.0.1"),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");
}

/// Git history on PostgreSQL: one repository synced into the embedded store and into
/// PostgreSQL; every history command answers the same, with the same BM25 scores.
#[test]
fn postgres_history_answers_as_the_embedded_store_does() {
    use common::git::{git, head, session_history};
    let embedded = Env::new();
    let dir = embedded.repo.path();
    session_history(&embedded);

    let url = quarry_test_postgres::database("cli_history");
    let pg = Env::new();
    let on_pg = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--db-url", url.as_str()];
        all.extend_from_slice(args);
        pg.json(&all)
    };
    let repo = embedded.repo_path();
    for (name, report) in [
        ("embedded", embedded.json(&["sync", repo])),
        ("postgres", on_pg(&["sync", repo])),
    ] {
        assert_eq!(report["repos"][0]["added"], 4, "{name}: {report}");
    }
    assert_eq!(
        on_pg(&["sync", repo])["repos"][0]["added"],
        0,
        "incremental"
    );

    let commits = |v: &serde_json::Value| -> Vec<(String, String, f64)> {
        v["commits"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|c| {
                (
                    c["sha"].as_str().unwrap().to_string(),
                    c["subject"].as_str().unwrap().to_string(),
                    c["score"].as_f64().unwrap_or(0.0),
                )
            })
            .collect()
    };
    for args in [
        &["log", "rate limiting", "--mode", "lexical"][..],
        &["log", "limiters throttled", "--mode", "lexical"],
        &["log", "rate limiting"],
        &[
            "log",
            "make logins slower for abusers",
            "--mode",
            "semantic",
        ],
        &["log", "--author", "bob"],
        &["log", "--since", "2025-02-15"],
        &["log", "--path", "README.md"],
        &[
            "log",
            "session",
            "--path",
            "auth/*",
            "--until",
            "2025-03-15",
        ],
        &["touches", "auth/sessions.go"],
        &["touches", "auth"],
    ] {
        let (a, b) = (commits(&embedded.json(args)), commits(&on_pg(args)));
        assert!(
            !a.is_empty(),
            "{args:?} found nothing on the embedded store"
        );
        assert_eq!(a.len(), b.len(), "{args:?}: {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.0, &x.1), (&y.0, &y.1), "{args:?}: {a:?} vs {b:?}");
            assert!(
                (x.2 - y.2).abs() <= 1e-3 * x.2.abs().max(1e-9),
                "{args:?}: scores {a:?} vs {b:?}"
            );
        }
    }
    let sha = head(dir);
    let shown = on_pg(&["show", &sha[..8]]);
    assert_eq!(shown, embedded.json(&["show", &sha[..8]]));
    assert!(shown.to_string().contains("burst 10"), "{shown}");

    // History rewritten: the amended commit replaces the old one on both.
    git(
        dir,
        &["commit", "-q", "--amend", "-m", "Allow bursts of ten"],
        std::ffi::OsStr::new("Carol"),
        "2025-04-01T10:00:00Z",
    );
    embedded.json(&["sync", repo]);
    on_pg(&["sync", repo]);
    let newest = |v: serde_json::Value| commits(&v)[0].1.clone();
    assert_eq!(newest(on_pg(&["log"])), "Allow bursts of ten");
    assert_eq!(
        commits(&on_pg(&["log", "--author", "carol"])).len(),
        1,
        "the old commit is gone"
    );
    // A rebuild of the repo's files keeps its history on both stores.
    let before = commits(&on_pg(&["log", "rate limiting", "--mode", "lexical"]));
    on_pg(&["index", "--rebuild", repo, "--no-embed"]);
    embedded.json(&["index", "--rebuild", repo, "--no-embed"]);
    assert_eq!(
        commits(&on_pg(&["log", "rate limiting", "--mode", "lexical"])),
        before
    );
    // The amended commit's words left the posting lists, the new one's are there.
    let lists = quarry_postgres::PgStore::connect(&url).unwrap();
    assert_eq!(lists.posting_mismatches().unwrap(), 0);
    let status = on_pg(&["status"]);
    assert_eq!(
        status.to_string().contains("\"commits\":4"),
        embedded
            .json(&["status"])
            .to_string()
            .contains("\"commits\":4"),
        "{status}"
    );
    // An issue text raises the commit that changed code and its tests, on both stores alike.
    embedded.write(
        "auth/sessions.go",
        "package auth\n\nfunc Open() {}\n\nfunc Limit() { /* rate limiting, burst 10, per user */ }\n",
    );
    embedded.write(
        "auth/sessions_test.go",
        "package auth\n\nfunc TestLimit() {}\n",
    );
    common::git::commit(
        dir,
        "Count the rate limit per user",
        "Dan",
        "2025-05-01T10:00:00Z",
    );
    embedded.json(&["sync", repo]);
    on_pg(&["sync", repo]);
    let issue = "The rate limiter counts logins of all users together\n\n\
        One user's bursts throttle every other user's logins.\n\
        The rate limit should be counted per user.\n";
    let (a, b) = (
        commits(&embedded.json(&["log", "--mode", "lexical", issue])),
        commits(&on_pg(&["log", "--mode", "lexical", issue])),
    );
    assert_eq!(a[0].1, "Count the rate limit per user", "{a:?}");
    assert_eq!(
        a.iter().map(|c| &c.0).collect::<Vec<_>>(),
        b.iter().map(|c| &c.0).collect::<Vec<_>>()
    );
    for (x, y) in a.iter().zip(&b) {
        assert!((x.2 - y.2).abs() <= 1e-3 * x.2.abs(), "{a:?} vs {b:?}");
    }
}

#[test]
fn postgres_a_workspace_indexed_with_db_url_remembers_it() {
    let url = quarry_test_postgres::database("remember");
    let env = Env::new();
    sample_repo(&env);
    let out = env.run(&["--db-url", &url, "index", env.repo_path()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("store.url"), "{said}");
    // The next command, without the flag, finds the index on the server.
    let status = env.json(&["status"]);
    assert_eq!(status["repos"][0]["files"], 5, "{status}");
    assert!(!env.index_dir().join("index.sqlite").exists());
    // Said once: a second run with the flag does not repeat it.
    let again = env.run(&["--db-url", &url, "index", env.repo_path()]);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("keeps its index"));
}

#[test]
fn postgres_touches_reads_merges_and_renames_away_as_the_embedded_store_does() {
    let embedded = Env::new();
    common::git::merge_and_move_history(&embedded);
    let repo = embedded.repo_path();
    embedded.ok(&["sync", repo, "--no-embed"]);
    let url = quarry_test_postgres::database("cli_touches");
    let pg = Env::new();
    pg.ok(&["--db-url", &url, "sync", repo, "--no-embed"]);
    let on_sqlite = common::git::subjects(&embedded.json(&["touches", "app.py"]));
    let on_pg = common::git::subjects(&pg.json(&["--db-url", &url, "touches", "app.py"]));
    assert_eq!(on_sqlite, on_pg);
    assert!(
        on_pg.contains(&"Move the app aside".to_string()),
        "{on_pg:?}"
    );
    assert!(!on_pg.contains(&"Merge feature".to_string()), "{on_pg:?}");
}

/// `--db-read-url` and `store.read_urls`: searches read from a streaming standby, `status`
/// says which server answered; with the standby killed the primary answers, and says why.
#[test]
fn postgres_searches_read_from_a_standby_the_flag_or_the_setting_names() {
    let url = quarry_test_postgres::database("cli_replica");
    let env = Env::new();
    sample_repo(&env);
    ok_on_postgres(&env, &url, &["index", env.repo_path()]);
    let standby = quarry_test_postgres::standby();
    let replica = standby.url(url.rsplit('/').next().unwrap());
    let search = [
        "search",
        "parse config file",
        "--mode",
        "lexical",
        "-k",
        "3",
        "--json",
    ];
    let on_primary =
        result_paths(&serde_json::from_str(&ok_on_postgres(&env, &url, &search)).unwrap());

    let status: serde_json::Value = serde_json::from_str(&ok_on_postgres(
        &env,
        &url,
        &["--db-read-url", &replica, "status", "--json"],
    ))
    .unwrap();
    assert_eq!(status["served_by"]["replica"], true, "{status}");
    assert_eq!(status["served_by"]["server"], replica.as_str(), "{status}");
    let read_url_flag = ["--db-read-url", replica.as_str()];
    let on_standby = result_paths(
        &serde_json::from_str(&ok_on_postgres(
            &env,
            &url,
            &[&read_url_flag[..], &search[..]].concat(),
        ))
        .unwrap(),
    );
    assert_eq!(on_standby, on_primary);

    env.ok(&["config", "set", "store.read_urls", &replica]);
    let text = ok_on_postgres(&env, &url, &["status"]);
    assert!(
        text.contains(&format!("reads: {replica} (standby")),
        "{text}"
    );

    standby.kill();
    let status: serde_json::Value =
        serde_json::from_str(&ok_on_postgres(&env, &url, &["status", "--json"])).unwrap();
    assert_eq!(status["served_by"]["replica"], false, "{status}");
    assert!(
        status["served_by"]["skipped"][0]
            .as_str()
            .is_some_and(|s| s.starts_with(&replica)),
        "{status}"
    );
    let after = result_paths(&serde_json::from_str(&ok_on_postgres(&env, &url, &search)).unwrap());
    assert_eq!(after, on_primary);
}

/// `quarry serve` on a PostgreSQL store whose server goes down: 503 with `Retry-After` (the
/// client should try again), not 500, the error naming the server; once the server is back,
/// the same `serve` answers again on a fresh connection.
#[test]
fn postgres_serve_answers_503_with_retry_after_while_the_server_is_down() {
    let env = Env::new();
    sample_repo(&env);
    let server = quarry_test_postgres::server();
    let relay = common::relay::Relay::to(server.port);
    let url = quarry_test_postgres::database("serve_down")
        .replace(&format!(":{}/", server.port), &format!(":{}/", relay.port));
    ok_on_postgres(&env, &url, &["index", env.repo_path(), "--no-embed"]);
    let serving = common::serve(&env, &["--db-url", &url]);
    let ask = |path: &str| common::get_with_retry_after(&serving, path);
    let paths = [
        "/api/status",
        "/api/search/code?query=parse",
        "/api/search/commits?query=parse",
    ];
    for path in paths {
        let (status, _, body) = ask(path);
        assert_eq!(status, 200, "{path}: {body}");
    }
    relay.cut();
    for path in paths {
        let (status, retry, body) = ask(path);
        assert_eq!(status, 503, "{path}: {body}");
        assert_eq!(retry.as_deref(), Some("1"), "{path}");
        assert!(body.contains("PostgreSQL at postgres://"), "{body}");
    }
    relay.restore();
    for path in paths {
        let (status, _, body) = ask(path);
        assert_eq!(status, 200, "{path} once the server is back: {body}");
    }
}
