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
