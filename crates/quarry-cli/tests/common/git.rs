//! Real git repositories for tests, made with the git CLI (fixed authors and dates, so
//! filters and ordering are deterministic).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

pub fn git(dir: &Path, args: &[&str], author: &OsStr, date: &str) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "ci")
        .env("GIT_COMMITTER_EMAIL", "ci@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn commit(dir: &Path, message: &str, author: &str, date: &str) {
    git(dir, &["add", "-A"], OsStr::new(author), date);
    git(
        dir,
        &["commit", "-q", "-m", message],
        OsStr::new(author),
        date,
    );
}

pub fn head(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `git init` on branch main.
pub fn init(dir: &Path) {
    git(
        dir,
        &["init", "-q", "-b", "main"],
        OsStr::new("x"),
        "2025-01-01T00:00:00Z",
    );
}

/// The subjects of a `log`/`touches` JSON answer, in order.
pub fn subjects(v: &serde_json::Value) -> Vec<String> {
    v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap().to_string())
        .collect()
}

/// The history several tests search: four commits on auth/session.go by Alice, Bob, Alice and
/// Carol (Jan–Apr 2025), the third renaming it to auth/sessions.go; Bob's adds rate limiting and
/// a README.
pub fn session_history(env: &super::Env) {
    let dir = env.repo.path();
    init(dir);
    env.write("auth/session.go", "package auth\n\nfunc Open() {}\n");
    commit(dir, "Add session handling", "Alice", "2025-01-10T10:00:00Z");
    env.write(
        "auth/session.go",
        "package auth\n\nfunc Open() {}\n\nfunc Limit() { /* rate limiting */ }\n",
    );
    env.write("README.md", "# demo\n");
    commit(
        dir,
        "Throttle logins with a rate limiter\n\nToken bucket per user.",
        "Bob",
        "2025-02-01T10:00:00Z",
    );
    git(
        dir,
        &["mv", "auth/session.go", "auth/sessions.go"],
        OsStr::new("Alice"),
        "2025-03-01T10:00:00Z",
    );
    commit(dir, "Rename session file", "Alice", "2025-03-01T10:00:00Z");
    env.write(
        "auth/sessions.go",
        "package auth\n\nfunc Open() {}\n\nfunc Limit() { /* rate limiting, burst 10 */ }\n",
    );
    commit(dir, "Allow bursts", "Carol", "2025-04-01T10:00:00Z");
}

/// One commit per topic, each adding a file of its own under `folder` (dated 2025-01-02 on), so
/// that the words a test's query uses are rare in the history (a word in half of all commits
/// weighs nothing).
pub fn unrelated_commits(env: &super::Env, folder: &str, topics: &[&str]) {
    for (i, topic) in topics.iter().enumerate() {
        env.write(&format!("{folder}/other{i}.py"), &format!("# {topic}\n"));
        commit(
            env.repo.path(),
            &format!("Add {topic}"),
            "Cy",
            &format!("2025-01-{:02}T10:00:00Z", i + 2),
        );
    }
}

/// A history with a merged branch (its commit changes app.py; main changes other.py; a
/// no-fast-forward merge brings them together), then app.py moved away to old/app.py and a new
/// app.py made.
pub fn merge_and_move_history(env: &super::Env) {
    let dir = env.repo.path();
    let x = OsStr::new("x");
    init(dir);
    env.write("app.py", "def run():\n    pass\n");
    env.write("other.py", "x = 1\n");
    commit(dir, "Add the app", "Ann", "2025-01-01T00:00:00Z");
    git(
        dir,
        &["checkout", "-q", "-b", "feature"],
        x,
        "2025-01-02T00:00:00Z",
    );
    env.write("app.py", "def run():\n    return 1\n");
    commit(dir, "Make run return one", "Bob", "2025-01-02T00:00:00Z");
    git(dir, &["checkout", "-q", "main"], x, "2025-01-03T00:00:00Z");
    env.write("other.py", "x = 2\n");
    commit(dir, "Bump other", "Ann", "2025-01-03T00:00:00Z");
    git(
        dir,
        &["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"],
        x,
        "2025-01-04T00:00:00Z",
    );
    // The file moves away, and a new one takes its name.
    std::fs::create_dir_all(dir.join("old")).unwrap();
    git(
        dir,
        &["mv", "app.py", "old/app.py"],
        x,
        "2025-01-05T00:00:00Z",
    );
    commit(dir, "Move the app aside", "Cid", "2025-01-05T00:00:00Z");
    env.write("app.py", "def start():\n    pass\n");
    commit(dir, "A new app", "Cid", "2025-01-06T00:00:00Z");
}
