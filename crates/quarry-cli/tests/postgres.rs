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
