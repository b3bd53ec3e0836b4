//! Git history end to end, with real repositories made by the git CLI in temp dirs: sync,
//! log with filters, show by SHA prefix, touches across a rename, re-sync, rewritten history,
//! and the bad inputs (not a repo, an empty repo, a non-UTF-8 author).

mod common;

use common::git::{commit, git, head, session_history, subjects};
use common::Env;
use serde_json::Value;
use std::ffi::OsStr;
use std::process::Command;

fn shas(v: &Value) -> Vec<String> {
    v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sha"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn history_is_synced_searched_shown_and_followed_across_renames() {
    let env = Env::new();
    let dir = env.repo.path();
    session_history(&env);

    // Code indexed, history not synced yet: status and touches say so.
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    assert!(
        env.ok(&["status"])
            .contains("history: not synced (`quarry sync"),
        "{}",
        env.ok(&["status"])
    );
    let unsynced = env.json_nothing(&["touches", "auth"]);
    assert!(unsynced["hint"]
        .as_str()
        .unwrap()
        .contains("not synced yet: `quarry sync`"));

    // Lexical ranking is what this test pins down (tests/history_semantic.rs has the rest).
    let report = env.json(&["sync", env.repo_path(), "--no-embed"]);
    assert_eq!(report["repos"][0]["added"], 4, "{report}");
    assert_eq!(
        env.json(&["sync", env.repo_path(), "--no-embed"])["repos"][0]["added"],
        0,
        "incremental"
    );

    let log = env.json(&["log", "rate limiting"]);
    assert_eq!(
        subjects(&log)[0],
        "Throttle logins with a rate limiter",
        "{log}"
    );
    // Rebuilding the repo's index starts its files over and keeps its history (the tree
    // cannot give it back).
    env.ok(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    assert_eq!(env.json(&["log", "rate limiting"]), log, "history kept");
    assert!(
        !env.ok(&["status"]).contains("history: not synced"),
        "{}",
        env.ok(&["status"])
    );
    assert!(
        env.json(&["search", "--mode", "lexical", "session"])["results"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
    // The commit index stems as the code index does: other forms of the same words match.
    let stemmed = env.json(&["log", "limiters throttled", "--mode", "lexical"]);
    assert_eq!(
        subjects(&stemmed)[0],
        "Throttle logins with a rate limiter",
        "{stemmed}"
    );
    let by_bob = env.json(&["log", "--author", "bob"]);
    assert_eq!(subjects(&by_bob), ["Throttle logins with a rate limiter"]);
    let recent = env.json(&["log", "--since", "2025-02-15"]);
    assert_eq!(
        subjects(&recent),
        ["Allow bursts", "Rename session file"],
        "newest first"
    );
    // `-n` as in `git log -n`.
    let newest = env.json(&["log", "--since", "2025-02-15", "-n", "1"]);
    assert_eq!(subjects(&newest), ["Allow bursts"]);
    let readme = env.json(&["log", "--path", "README.md"]);
    assert_eq!(subjects(&readme), ["Throttle logins with a rate limiter"]);
    // Filters apply before ranking: the one matching commit is outside the window, so
    // nothing answers (exit 1).
    env.json_nothing(&["log", "rate limiting", "--until", "2025-01-31"]);

    let touches = env.json(&["touches", "auth/sessions.go"]);
    assert_eq!(
        subjects(&touches),
        [
            "Allow bursts",
            "Rename session file",
            "Throttle logins with a rate limiter",
            "Add session handling"
        ],
        "follows the rename back"
    );
    assert_eq!(
        env.json(&["touches", "auth"])["commits"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    // A page shorter than the answer says there is more.
    let page = env.json(&["touches", "auth", "-k", "2"]);
    assert_eq!(page["commits"].as_array().unwrap().len(), 2);
    assert_eq!(page["more"], true);
    assert!(page["hint"]
        .as_str()
        .unwrap()
        .contains("more commits changed auth"));
    assert_eq!(env.json(&["touches", "auth", "-k", "4"])["more"], false);

    let sha = head(dir);
    let shown = env.json(&["show", &sha[..8]]);
    assert_eq!(shown["sha"], sha.as_str());
    assert_eq!(shown["subject"], "Allow bursts");
    assert_eq!(shown["files"][0]["path"], "auth/sessions.go");
    assert_eq!(shown["files"][0]["added"], 1);
    assert_eq!(shown["files"][0]["removed"], 1);
    assert!(shown["patch"]
        .as_str()
        .unwrap()
        .contains("+func Limit() { /* rate limiting, burst 10 */ }"));
    let rename = &env.json(&["log", "Rename session file"])["commits"][0];
    let renamed = env.json(&["show", rename["sha"].as_str().unwrap()]);
    assert_eq!(renamed["files"][0]["status"], "renamed", "{renamed}");
    assert_eq!(renamed["files"][0]["old_path"], "auth/session.go");
    assert!(env.fails(&["show", "zzzz"]).contains("not a commit SHA"));
    assert!(env.fails(&["show", "0000000"]).contains("no stored commit"));

    // History rewritten: the last commit is replaced.
    git(
        dir,
        &["reset", "-q", "--hard", "HEAD~1"],
        OsStr::new("x"),
        "2025-05-01T00:00:00Z",
    );
    env.write("auth/sessions.go", "package auth\n\nfunc Open() {}\n");
    commit(
        dir,
        "Remove the limiter\n\nBursts are handled by the proxy now.",
        "Dave",
        "2025-05-01T10:00:00Z",
    );
    let again = env.json(&["sync"]);
    let r = &again["repos"][0];
    assert_eq!(
        (
            r["added"].as_u64(),
            r["dropped"].as_u64(),
            r["total"].as_u64()
        ),
        (Some(1), Some(1), Some(4)),
        "{again}"
    );
    assert!(r["notes"][0].as_str().unwrap().contains("rewritten"));
    assert!(!shas(&env.json(&["log"])).contains(&sha));
    // As `git show` prints it: a blank line between the subject and the body.
    let shown = env.ok(&["show", &head(dir)]);
    assert!(
        shown.contains("    Remove the limiter\n\n    Bursts are handled by the proxy now.\n"),
        "{shown}"
    );
}

#[test]
fn bad_repositories_get_clear_answers() {
    let env = Env::new();
    let plain = env.repo.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let err = env.fails(&["sync", plain.to_str().unwrap()]);
    assert!(err.contains("not a git repository"), "{err}");

    let empty = env.repo.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(
        &empty,
        &["init", "-q"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    let report = env.json(&["sync", empty.to_str().unwrap()]);
    assert_eq!(report["repos"][0]["added"], 0);
    assert!(report["repos"][0]["notes"][0]
        .as_str()
        .unwrap()
        .contains("no commits"));

    // A Latin-1 author name and message (not UTF-8) are stored lossily, never rejected. The
    // commit object is written byte for byte: git itself would re-encode the name.
    let latin = env.repo.path().join("latin");
    std::fs::create_dir_all(&latin).unwrap();
    git(
        &latin,
        &["init", "-q"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    std::fs::write(latin.join("a.txt"), "a\n").unwrap();
    git(
        &latin,
        &["add", "-A"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    let tree = Command::new("git")
        .arg("write-tree")
        .current_dir(&latin)
        .output()
        .unwrap();
    let tree = String::from_utf8(tree.stdout).unwrap().trim().to_string();
    let mut object = format!("tree {tree}\n").into_bytes();
    object.extend_from_slice(b"author Jos\xe9 <jose@example.com> 1735689600 +0000\n");
    object.extend_from_slice(
        b"committer Jos\xe9 <jose@example.com> 1735689600 +0000\n\ncaf\xe9 commit\n",
    );
    let mut child = Command::new("git")
        .args(["hash-object", "-w", "-t", "commit", "--stdin"])
        .current_dir(&latin)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &object).unwrap();
    let sha = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    git(
        &latin,
        &["update-ref", "HEAD", sha.trim()],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    env.ok(&["sync", latin.to_str().unwrap()]);
    let log = env.json(&["log", "--repo", "latin"]);
    assert_eq!(log["commits"][0]["subject"], "caf\u{fffd} commit");
    assert_eq!(log["commits"][0]["author"], "Jos\u{fffd}");
}

#[test]
fn eval_ranks_commits_for_a_commit_query_set() {
    let env = Env::new();
    let repos = env.repo.path().join("repos");
    let dir = repos.join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    git(
        &dir,
        &["init", "-q"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    let mut fixes = Vec::new();
    for (i, (file, message)) in [
        ("upload.py", "Retry failed uploads with exponential backoff"),
        ("auth.py", "Fix session expiry check for long-lived tokens"),
        ("cache.py", "Evict stale cache entries on write"),
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(dir.join(file), format!("# {message}\nvalue = {i}\n")).unwrap();
        commit(
            &dir,
            message,
            "Alice",
            &format!("2025-0{}-01T00:00:00Z", i + 1),
        );
        fixes.push(head(&dir));
    }
    let queries = [
        ("q1", "uploads fail and are never retried", &fixes[0]),
        ("q2", "session tokens expire too early", &fixes[1]),
    ];
    let lines: String = queries
        .iter()
        .map(|(id, q, sha)| {
            serde_json::json!({"id": id, "query": q, "repo": "acme/demo", "commit": "HEAD", "relevant": [sha]})
                .to_string()
                + "\n"
        })
        .collect();
    let file = env.repo.path().join("commits.jsonl");
    std::fs::write(&file, lines).unwrap();
    let work = env.home.path().join("evalwork");
    let report = env.json(&[
        "eval",
        file.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--mode",
        "lexical",
    ]);
    let r = &report["reports"][0];
    assert_eq!(r["queries"], 2);
    assert_eq!(r["metrics"]["hit_at_1"], 1.0, "{report}");
    // Semantic and hybrid embed the histories first (the real model).
    let report = env.json(&[
        "eval",
        file.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--mode",
        "semantic,hybrid",
    ]);
    let modes: Vec<&str> = report["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["semantic", "hybrid"], "{report}");
    for r in report["reports"].as_array().unwrap() {
        assert_eq!(r["queries"], 2);
        assert_eq!(r["metrics"]["hit_at_10"], 1.0, "{report}");
    }
}

#[test]
fn bare_and_shallow_clones_and_detached_heads_sync_what_head_reaches() {
    let env = Env::new();
    let dir = env.repo.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    git(
        &dir,
        &["init", "-q"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    for i in 0..3 {
        std::fs::write(dir.join("f.txt"), format!("{i}\n")).unwrap();
        commit(
            &dir,
            &format!("change {i}"),
            "Alice",
            &format!("2025-0{}-01T00:00:00Z", i + 1),
        );
    }
    let bare = env.repo.path().join("mirror.git");
    git(
        env.repo.path(),
        &[
            "clone",
            "-q",
            "--bare",
            dir.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    let report = env.json(&["sync", bare.to_str().unwrap()]);
    assert_eq!(report["repos"][0]["added"], 3, "{report}");

    git(
        &dir,
        &["checkout", "-q", "--detach", "HEAD~1"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    let report = env.json(&["sync", dir.to_str().unwrap()]);
    assert_eq!(
        report["repos"][0]["added"], 2,
        "detached HEAD reaches two commits: {report}"
    );
    let name = report["repos"][0]["repo"].as_str().unwrap().to_string();
    let log = env.json(&["log", "--repo", &name]);
    assert_eq!(subjects(&log), ["change 1", "change 0"]);

    // A shallow clone: only the commits it has, and a note that says so.
    let shallow = env.repo.path().join("shallow");
    git(
        env.repo.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "2",
            &format!("file://{}", bare.display()),
            shallow.to_str().unwrap(),
        ],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
    let report = env.json(&["sync", shallow.to_str().unwrap(), "--no-embed"]);
    assert_eq!(report["repos"][0]["added"], 2, "{report}");
    assert!(
        report["repos"][0]["notes"]
            .to_string()
            .contains("shallow clone"),
        "{report}"
    );
    let name = report["repos"][0]["repo"].as_str().unwrap().to_string();
    let log = env.json(&["log", "--repo", &name]);
    assert_eq!(subjects(&log), ["change 2", "change 1"]);
}

#[test]
fn sync_inside_a_repo_syncs_that_repo_as_search_searches_it() {
    let env = Env::new();
    let other = tempfile::tempdir().unwrap();
    for dir in [env.repo.path(), other.path()] {
        common::git::init(dir);
        common::write_file(dir, "a.py", b"def a():\n    pass\n");
        commit(dir, "Add a", "Ann", "2025-01-01T00:00:00Z");
        env.ok(&["index", dir.to_str().unwrap(), "--no-embed"]);
    }
    let inside = env
        .quarry()
        .args(["sync", "--no-embed", "--json"])
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(
        inside.status.success(),
        "{}",
        String::from_utf8_lossy(&inside.stderr)
    );
    let report: Value = serde_json::from_slice(&inside.stdout).unwrap();
    let synced: Vec<&str> = report["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repo"].as_str().unwrap())
        .collect();
    assert_eq!(synced.len(), 1, "{report}");
    let everything = env
        .quarry()
        .args(["sync", "--no-embed", "--json", "--all-repos"])
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&everything.stdout).unwrap();
    assert_eq!(report["repos"].as_array().unwrap().len(), 2, "{report}");
}

#[test]
fn touches_reads_history_as_git_log_does_merges_and_renames_away() {
    let env = Env::new();
    let dir = env.repo.path();
    common::git::merge_and_move_history(&env);
    env.ok(&["sync", env.repo_path(), "--no-embed"]);

    // What `git log --format=%s -- app.py` lists: the feature's own commit, not the merge
    // that brought it (the merge has app.py as the feature had it), and the move away.
    let out = Command::new("git")
        .args(["log", "--format=%s", "--", "app.py"])
        .current_dir(dir)
        .output()
        .unwrap();
    let git_says: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let touches = subjects(&env.json(&["touches", "app.py"]));
    assert_eq!(
        touches, git_says,
        "quarry touches app.py vs git log -- app.py"
    );
    assert!(
        touches.contains(&"Move the app aside".to_string()),
        "{touches:?}"
    );
    assert!(
        !touches.contains(&"Merge feature".to_string()),
        "{touches:?}"
    );
    // The merge itself still shows what it changed against its first parent.
    let merge = &env.json(&["log", "Merge feature"])["commits"][0];
    let shown = env.json(&["show", merge["sha"].as_str().unwrap()]);
    assert_eq!(shown["files"][0]["path"], "app.py", "{shown}");
    assert_eq!(shown["files"][0]["merged_in"], true, "{shown}");
}

#[test]
fn patches_carry_gits_hunk_headers_with_their_function_context() {
    let env = Env::new();
    let dir = env.repo.path();
    common::git::init(dir);
    let body: String = (1..=12).map(|i| format!("        step_{i}()\n")).collect();
    let before =
        format!("import os\n\nclass Uploader:\n    def retry(self):\n{body}        return None\n");
    env.write("up.py", &before);
    commit(dir, "Add the uploader", "Ann", "2025-01-01T00:00:00Z");
    env.write(
        "up.py",
        before.replace("return None", "return self.backoff()"),
    );
    commit(
        dir,
        "Back off before retrying",
        "Ann",
        "2025-01-02T00:00:00Z",
    );
    env.ok(&["sync", env.repo_path(), "--no-embed"]);

    let sha = head(dir);
    let shown = env.json(&["show", &sha]);
    let git_show = Command::new("git")
        .args([
            "-c",
            "core.attributesFile=/dev/null",
            "show",
            "--format=",
            &sha,
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    let headers = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("@@"))
            .map(str::to_string)
            .collect()
    };
    let ours = headers(shown["patch"].as_str().unwrap());
    assert_eq!(ours, headers(&String::from_utf8_lossy(&git_show.stdout)));
    // git's default context: the nearest unindented line above the hunk.
    assert!(ours[0].ends_with("@@ class Uploader:"), "{ours:?}");
    // The context is searchable: the commit is found by the class it changed (its changed
    // and context lines do not name it).
    let found = env.json(&["log", "Uploader", "--mode", "lexical"]);
    assert!(
        common::git::subjects(&found).contains(&"Back off before retrying".to_string()),
        "{found}"
    );
}

#[path = "history/issue_texts.rs"]
mod issue_texts;
#[path = "history/votes.rs"]
mod votes;

/// Two repos, one synced: a commit search over both names the unsynced one (it said nothing,
/// and its commits were silently absent); a file both hold by the same path is outlined from
/// the repo asked for (the first repo's was given, and `repo` was refused).
#[test]
fn a_second_repo_is_named_where_its_history_or_its_file_is_meant() {
    let env = Env::new();
    let first = env.repo.path();
    let second = env.home.path().join("second");
    std::fs::create_dir_all(&second).unwrap();
    common::write_file(first, "README.md", b"# First project\n\n## Installing it\n");
    common::write_file(
        &second,
        "README.md",
        b"# Second project\n\n## Tuning caches\n",
    );
    for dir in [first, second.as_path()] {
        common::git::init(dir);
        commit(dir, "Write the readme", "Ann", "2025-01-02T00:00:00Z");
    }
    env.ok(&["index", env.repo_path(), "--no-embed", "--name", "one"]);
    env.ok(&[
        "index",
        second.to_str().unwrap(),
        "--no-embed",
        "--name",
        "two",
    ]);
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let found = env.json(&["log", "readme", "--all-repos"]);
    let warnings = found["warnings"].to_string();
    assert!(warnings.contains("history of two is not synced"), "{found}");
    let server = common::serve(&env, &[]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let summary = |repo: &str| -> Value {
        agent
            .get(format!(
                "{}/api/summary?file=README.md&repo={repo}",
                server.base
            ))
            .call()
            .unwrap()
            .body_mut()
            .read_json()
            .unwrap()
    };
    assert!(
        summary("two").to_string().contains("Tuning caches"),
        "{}",
        summary("two")
    );
    assert!(summary("one").to_string().contains("Installing it"));
    assert!(summary("three")
        .to_string()
        .contains("no indexed repo is named `three`"));
}
