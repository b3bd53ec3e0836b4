//! The search page (`quarry serve`, `/`) in a real browser: Debian's chromium driven by
//! playwright-core from npm (scripts/install-test-clients.sh installs both), headless, every
//! request leaving the server blocked. tests/browser/page.mjs types a name, a question and a
//! history search, opens a file view, a commit, a timeline and an impact graph, checks them
//! with axe-core, and keeps a screenshot of each view under target/page-screenshots/.

mod common;

use common::git::{commit, init};
use common::{sample_repo, Env};
use std::path::{Path, PathBuf};
use std::process::Command;

fn screenshots() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("page-screenshots")
}

#[test]
fn the_search_page_works_in_a_real_browser() {
    let env = Env::new();
    sample_repo(&env);
    env.write(
        "app/views.py",
        "from app.users import UserStore\n\n\ndef show_user(store, user_id):\n    name = store.getUserName(user_id)\n    return f\"<h1>{name}</h1>\"\n",
    );
    let dir = env.repo.path();
    init(dir);
    commit(dir, "Add the user store", "Alice", "2025-01-02T00:00:00Z");
    env.write(
        "app/users.py",
        "class UserStore:\n    \"\"\"Keeps users.\"\"\"\n\n    def getUserName(self, user_id):\n        return self.users[user_id].name.title()\n\n    def delete_user(self, user_id):\n        del self.users[user_id]\n",
    );
    commit(
        dir,
        "Show user names in title case",
        "Bob",
        "2025-02-03T00:00:00Z",
    );
    env.ok(&["index", env.repo_path(), "--no-embed", "--name", "shop"]);
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let server = common::serve(&env, &[]);
    let base = server.base.clone();

    // The page and its assets carry a policy that allows nothing foreign.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let page = agent.get(format!("{base}/")).call().unwrap();
    let policy = page
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert!(
        policy.contains("default-src 'none'") && policy.contains("script-src 'self'"),
        "{policy}"
    );

    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/page.mjs");
    let shots = screenshots();
    let out = Command::new("node")
        .arg(&script)
        .arg(&base)
        .arg(&shots)
        .env("QUARRY_TEST_CLIENTS", &clients)
        .output()
        .expect("node runs (scripts/install-test-clients.sh installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let seen: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(seen["checks"].as_array().unwrap().len() >= 15, "{seen}");
    assert_eq!(seen["foreign_requests"], serde_json::json!([]), "{seen}");
    for view in [
        "search",
        "file",
        "commit",
        "timeline",
        "impact",
        "phone-dark",
    ] {
        let png = shots.join(format!("{view}.png"));
        let len = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(len > 1000, "{} was not kept", png.display());
    }
}
