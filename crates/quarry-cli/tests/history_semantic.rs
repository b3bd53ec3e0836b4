//! Commit search by meaning with the real local model: `sync` embeds commits, `log --mode
//! semantic|hybrid` ranks them with the filters applied first, `repo update --embed/--no-embed`
//! and `sync --embed-only` switch and backfill, and an unreachable embedder never fails a sync.

mod common;

use common::git::{commit, init, subjects};
use common::Env;

fn history(env: &Env) {
    let dir = env.repo.path();
    init(dir);
    env.write(
        "client/throttle.py",
        "class Throttle:\n    def wait(self):\n        self.bucket.take(1)\n",
    );
    commit(
        dir,
        "Throttle outgoing API calls so one client cannot flood the server",
        "Alice",
        "2025-01-10T00:00:00Z",
    );
    env.write(
        "ui/colours.py",
        "THEMES = {'dark': '#000', 'light': '#fff'}\n",
    );
    commit(
        dir,
        "Add dark and light colour themes to the terminal UI",
        "Bob",
        "2025-02-10T00:00:00Z",
    );
    env.write("docs/README.md", "# Install\n\npip install it\n");
    commit(
        dir,
        "Fix a typo in the installation guide",
        "Carol",
        "2025-03-10T00:00:00Z",
    );
}

#[test]
fn commits_are_found_by_meaning_with_filters_applied_first() {
    let env = Env::new();
    history(&env);
    let sync = env.json(&["sync", env.repo_path()]);
    assert_eq!(
        sync["embedding"]["embedded"].as_u64(),
        Some(3),
        "the model must be installed: {sync}"
    );

    // No word of the query is in the throttling commit.
    let query = "rate limiting of requests";
    let semantic = env.json(&["log", query, "--mode", "semantic", "-k", "1"]);
    assert_eq!(semantic["mode"], "semantic");
    assert_eq!(
        subjects(&semantic),
        ["Throttle outgoing API calls so one client cannot flood the server"]
    );
    let hybrid = env.json(&["log", query, "-k", "3"]);
    assert_eq!(
        hybrid["mode"], "hybrid",
        "auto is hybrid once commits have vectors"
    );
    assert_eq!(
        subjects(&hybrid)[0],
        "Throttle outgoing API calls so one client cannot flood the server"
    );
    // Pre-filter: with --since after it, the best match is gone and the rest still rank.
    let later = env.json(&["log", query, "--mode", "semantic", "--since", "2025-02-01"]);
    let later = subjects(&later);
    assert_eq!(later.len(), 2, "{later:?}");
    assert!(!later.iter().any(|s| s.starts_with("Throttle")));
    let by_path = env.json(&["log", query, "--mode", "hybrid", "--path", "ui/**"]);
    assert_eq!(
        subjects(&by_path),
        ["Add dark and light colour themes to the terminal UI"]
    );

    let status = env.ok(&["status"]);
    assert!(
        status.contains("history: 3 commits · embed on (3 of 3 embedded)"),
        "{status}"
    );
    assert!(status.contains("3 of 3 commits"), "{status}");

    // Off: vectors dropped, status drops the column, semantic search warns.
    let name = env.json(&["repo", "list"])["repos"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    env.ok(&["repo", "update", &name, "--no-embed"]);
    let status = env.json(&["status"]);
    assert_eq!(status["history"][0]["embedded"], 0);
    assert_eq!(status["history"][0]["embed"], false);
    assert!(!env.ok(&["status"]).contains("embed on"));
    let off = env.json(&["log", query, "--mode", "semantic"]);
    assert!(off["warnings"][0]
        .as_str()
        .unwrap()
        .contains("--embed-only"));
    assert_eq!(env.json(&["log", query])["mode"], "lexical");

    // On again: `sync --embed-only` backfills without ingesting.
    env.ok(&["repo", "update", &name, "--embed"]);
    let backfill = env.json(&["sync", "--embed-only"]);
    assert_eq!(backfill["repos"].as_array().unwrap().len(), 0);
    assert_eq!(backfill["embedding"]["embedded"], 3);
}

#[test]
fn an_unreachable_embedder_does_not_fail_a_sync() {
    let env = Env::new();
    history(&env);
    // A closed port: nothing listens on the discard port of loopback here.
    env.ok(&["config", "set", "embed.endpoint", "http://127.0.0.1:9/v1"]);
    env.ok(&["config", "set", "embed.model", "any"]);
    env.ok(&["config", "set", "embed.timeout_s", "2"]);
    let out = env.run(&["sync", env.repo_path()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("--embed-only"), "{stderr}");
    let log = env.json(&["log", "colour themes"]);
    assert_eq!(log["mode"], "lexical");
    assert_eq!(
        subjects(&log)[0],
        "Add dark and light colour themes to the terminal UI"
    );
    let status = env.json(&["status"]);
    assert_eq!(status["history"][0]["commits"], 3);
    assert_eq!(status["history"][0]["embedded"], 0);
}
