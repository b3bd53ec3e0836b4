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
    // By default every commit gets a vector: no bound, nothing left beyond one.
    assert!(sync["embedding"]["newest_per_repo"].is_null(), "{sync}");
    assert_eq!(sync["embedding"]["beyond_bound"], 0, "{sync}");
    assert!(env.json(&["status"])["history_embed_recent"].is_null());

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
    // --explain: the first commit was found by meaning only (no word of the query is in it),
    // at the cosine the semantic answer gave it.
    let explained = env.json(&["log", query, "-k", "3", "--explain"]);
    let why = &explained["commits"][0]["why"];
    assert_eq!(why["semantic_rank"], 1, "{explained}");
    assert_eq!(
        why["cosine"], semantic["commits"][0]["score"],
        "{explained}"
    );
    assert!(why.get("lexical_rank").is_none(), "{explained}");
    // Pre-filter: with --since after it, the best match is gone, and the commits left are
    // about something else (under the floor): no answer, exit 1, not the nearest anyway.
    let later = env.json_nothing(&["log", query, "--mode", "semantic", "--since", "2025-02-01"]);
    assert_eq!(subjects(&later).len(), 0, "{later}");
    let colours = "terminal colour scheme";
    let by_path = env.json(&["log", colours, "--mode", "hybrid", "--path", "ui/**"]);
    assert_eq!(
        subjects(&by_path),
        ["Add dark and light colour themes to the terminal UI"]
    );
    assert_eq!(
        subjects(&env.json_nothing(&["log", colours, "--mode", "hybrid", "--path", "docs/**"]))
            .len(),
        0
    );
    // A query about nothing in the history finds nothing, by meaning or by both.
    for mode in ["semantic", "hybrid"] {
        let nonsense =
            env.json_nothing(&["log", "zebra quantum teleport xylophone", "--mode", mode]);
        assert_eq!(subjects(&nonsense).len(), 0, "{mode}: {nonsense}");
    }

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
    let off = env.json_nothing(&["log", query, "--mode", "semantic"]);
    assert!(off["warnings"][0]
        .as_str()
        .unwrap()
        .contains("--embed-only"));
    // No vector and no word of the query in any commit: lexical, and nothing found.
    assert_eq!(env.json_nothing(&["log", query])["mode"], "lexical");

    // On again: `sync --embed-only` backfills without ingesting.
    env.ok(&["repo", "update", &name, "--embed"]);
    let backfill = env.json(&["sync", "--embed-only"]);
    assert_eq!(backfill["repos"].as_array().unwrap().len(), 0);
    assert_eq!(backfill["embedding"]["embedded"], 3);
}

#[test]
fn a_history_without_vectors_still_ranks_its_exact_matches_first() {
    // One repo with embedded history, one added with embedding off: the exact match lives in
    // the second and has no vector at all.
    let env = Env::new();
    history(&env);
    env.ok(&["repo", "add", env.repo_path()]);
    let other = tempfile::tempdir().unwrap();
    init(other.path());
    for (i, subject) in [
        "Add secret key rotation for signed sessions",
        "Speed up template loading",
        "Document the configuration options",
    ]
    .iter()
    .enumerate()
    {
        common::write_file(
            other.path(),
            &format!("f{i}.py"),
            format!("x = {i}\n").as_bytes(),
        );
        commit(
            other.path(),
            subject,
            "Dana",
            &format!("2025-0{}-01T00:00:00Z", i + 4),
        );
    }
    env.ok(&["repo", "add", other.path().to_str().unwrap(), "--no-embed"]);

    let found = env.json(&["log", "secret key rotation", "-k", "3"]);
    assert_eq!(found["mode"], "hybrid", "{found}");
    assert_eq!(
        subjects(&found)[0],
        "Add secret key rotation for signed sessions",
        "{found}"
    );
    assert_eq!(found["coverage"]["embedded"], 3);
    assert_eq!(found["coverage"]["total"], 6);
    let note = found["warnings"][0].as_str().unwrap();
    assert!(note.contains("3 of 6 commits are embedded"), "{note}");
    assert!(note.contains("--embed"), "{note}");
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

#[test]
fn history_embedding_is_bounded_to_the_newest_commits_until_asked_for_all() {
    let env = Env::new();
    history(&env);
    env.ok(&["config", "set", "history.embed_recent", "2"]);
    let sync = env.json(&["sync", env.repo_path()]);
    assert_eq!(sync["embedding"]["embedded"], 2, "{sync}");
    assert_eq!(sync["embedding"]["newest_per_repo"], 2, "{sync}");
    assert_eq!(sync["embedding"]["beyond_bound"], 1, "{sync}");

    // The oldest commit (throttling) has no vector: by meaning it cannot be found, by its
    // words it still is, and the answer says how to embed it. The embedded two are about
    // something else: by meaning, nothing.
    let semantic = env.json_nothing(&["log", "rate limiting of requests", "--mode", "semantic"]);
    let note = semantic["warnings"][0].as_str().unwrap();
    assert!(note.contains("2 of 3 commits are embedded"), "{note}");
    assert!(note.contains("--embed-all"), "{note}");
    // Said once: the same counts are not repeated on the next call (status keeps them).
    let again = env.json(&["log", "throttle outgoing", "--mode", "hybrid"]);
    assert!(
        again["warnings"].as_array().is_none_or(|w| w.is_empty()),
        "{again}"
    );
    assert_eq!(again["coverage"]["embedded"], 2, "{again}");
    let lexical = env.json(&["log", "throttle outgoing", "-k", "1"]);
    assert!(subjects(&lexical)[0].starts_with("Throttle"), "{lexical}");
    let status = env.ok(&["status"]);
    assert!(
        status.contains("2 of 3 commits (newest 2 per repo"),
        "{status}"
    );
    assert!(status.contains("--embed-all"), "{status}");
    assert_eq!(env.json(&["status"])["history_embed_recent"], 2);

    // A plain backfill has nothing to do; --embed-all embeds the rest.
    let again = env.json(&["sync", "--embed-only"]);
    assert!(again["embedding"].is_null(), "{again}");
    let all = env.json(&["sync", "--embed-only", "--embed-all"]);
    assert_eq!(all["embedding"]["embedded"], 1, "{all}");
    assert_eq!(all["embedding"]["beyond_bound"], 0, "{all}");
    let semantic = env.json(&[
        "log",
        "rate limiting of requests",
        "--mode",
        "semantic",
        "-k",
        "1",
    ]);
    assert!(subjects(&semantic)[0].starts_with("Throttle"), "{semantic}");
}

/// A run embeds the repos it was asked about: chunks and commits another repo was indexed or
/// synced with `--no-embed` wait for that repo's own run.
#[test]
fn a_run_embeds_only_the_repos_it_was_asked_about() {
    let env = Env::new();
    history(&env);
    let other = tempfile::tempdir().unwrap();
    init(other.path());
    for i in 0..3 {
        common::write_file(
            other.path(),
            &format!("lib/module_{i}.py"),
            format!("def handler_{i}(event):\n    return event.payload[{i}]\n").as_bytes(),
        );
        commit(
            other.path(),
            &format!("Handle event kind {i}"),
            "Dana",
            &format!("2025-0{}-01T00:00:00Z", i + 4),
        );
    }
    let other_path = other.path().to_str().unwrap();
    let other_name = other.path().file_name().unwrap().to_str().unwrap();
    env.ok(&["index", other_path, "--no-embed"]);
    env.ok(&["sync", other_path, "--no-embed"]);

    let index = env.json(&["index", env.repo_path()]);
    let coverage = &index["embedding"]["coverage"];
    assert_eq!(coverage["total"], index["repos"][0]["chunks"], "{index}");
    assert_eq!(coverage["embedded"], coverage["total"], "{index}");
    let sync = env.json(&["sync", env.repo_path()]);
    assert_eq!(sync["embedding"]["embedded"], 3, "{sync}");
    let status = env.json(&["status"]);
    let history_of = |name: &str| {
        status["history"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["repo"] == name)
            .unwrap_or_else(|| panic!("{name}: {status}"))
            .clone()
    };
    assert_eq!(history_of(other_name)["embedded"], 0, "{status}");

    // Its own run embeds it, then.
    let index = env.json(&["index", other_path]);
    assert_eq!(index["embedding"]["embedded"], 3, "{index}");
    let sync = env.json(&["sync", other_path]);
    assert_eq!(sync["embedding"]["embedded"], 3, "{sync}");
}
