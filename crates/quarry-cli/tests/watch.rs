//! `quarry watch` as a real process on a real folder: new, edited, renamed and deleted files,
//! a burst of hundreds of files (one pass, not hundreds), and a `.gitignore` edit all reach
//! the index while searches keep answering; `search --sync` catches up without a watcher.

mod common;

use common::{sample_repo, Env};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Watcher {
    child: Child,
    passes: mpsc::Receiver<Value>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(env: &Env) -> Watcher {
    let mut child = env
        .quarry()
        .args(["watch", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, passes) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    let watcher = Watcher { child, passes };
    // The catch-up pass comes first.
    let first = watcher
        .passes
        .recv_timeout(Duration::from_secs(30))
        .unwrap();
    assert_eq!(first["events"], 0);
    watcher
}

/// The paths a lexical search finds; none (exit 1, as grep) is an empty list.
fn paths(env: &Env, query: &str) -> Vec<String> {
    let out = env.run(&["search", query, "--mode", "lexical", "--json"]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    common::result_paths(&json)
}

/// Waits until `check` holds (the watcher re-indexes in the background).
fn eventually(what: &str, check: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        if check() {
            return started.elapsed();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what}: not seen within 20 s");
}

#[test]
fn watch_keeps_the_index_current_as_files_change() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path()]);
    env.ok(&["config", "set", "embed.provider", "none"]);
    let watcher = start(&env);

    env.write(
        "app/billing.py",
        "def charge_customer_card(amount):\n    return amount\n",
    );
    eventually("a new file", || {
        paths(&env, "charge_customer_card") == ["app/billing.py"]
    });

    env.write(
        "app/billing.py",
        "def issue_voucher(amount):\n    return -amount\n",
    );
    eventually("an edit", || {
        paths(&env, "issue_voucher") == ["app/billing.py"]
            && paths(&env, "charge_customer_card").is_empty()
    });

    let root = env.repo.path();
    std::fs::rename(root.join("app/billing.py"), root.join("app/payments.py")).unwrap();
    eventually("a rename", || {
        paths(&env, "issue_voucher") == ["app/payments.py"]
    });

    std::fs::remove_file(root.join("app/payments.py")).unwrap();
    eventually("a delete", || paths(&env, "issue_voucher").is_empty());

    // A burst (a branch switch, a code generator): a few passes, not one per file.
    while watcher.passes.try_recv().is_ok() {}
    for i in 0..300 {
        env.write(
            &format!("generated/module_{i}.py"),
            format!("def generated_function_{i}():\n    return {i}\n"),
        );
    }
    eventually("a burst of 300 files", || {
        let found = |q: &str| paths(&env, q).first().cloned().unwrap_or_default();
        found("generated_function_299") == "generated/module_299.py"
            && found("generated_function_0") == "generated/module_0.py"
    });
    std::thread::sleep(Duration::from_millis(500));
    let passes: Vec<Value> = watcher.passes.try_iter().collect();
    assert!(
        !passes.is_empty() && passes.len() <= 5,
        "300 files took {} passes",
        passes.len()
    );

    // Ignoring a folder removes it from the index.
    env.write(".gitignore", "generated/\n");
    eventually("a .gitignore edit", || {
        !paths(&env, "generated_function_7")
            .iter()
            .any(|p| p.starts_with("generated/"))
    });
    // Editor droppings alone start no pass, and searches kept answering throughout.
    std::thread::sleep(Duration::from_millis(500));
    while watcher.passes.try_recv().is_ok() {}
    env.write("app/.users.py.swp", "swap");
    env.write("app/users.py~", "backup");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(watcher.passes.try_iter().count(), 0);
    assert!(paths(&env, "getUserName").contains(&"app/users.py".to_string()));
}

#[test]
fn search_sync_catches_up_without_a_watcher() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env.write("app/late.py", "def arrived_after_indexing():\n    pass\n");
    assert!(paths(&env, "arrived_after_indexing").is_empty());
    let json = env.json(&[
        "search",
        "arrived_after_indexing",
        "--sync",
        "--mode",
        "lexical",
    ]);
    assert_eq!(json["results"][0]["path"], "app/late.py", "{json}");
}

/// A workspace folder inside the watched repo: the passes' own writes there (index, WAL,
/// caches) start no further pass (before, 152 passes in 20 s on flask).
#[test]
fn a_workspace_inside_the_repo_does_not_wake_its_own_watcher() {
    let env = Env::new();
    sample_repo(&env);
    let inside = env.repo.path().join(".quarry-ws");
    let quarry = || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"));
        cmd.arg("--index-dir")
            .arg(&inside)
            .env("QUARRY_DAEMON", "off")
            .current_dir(env.repo.path());
        cmd
    };
    let indexed = quarry()
        .args(["index", env.repo_path(), "--no-embed"])
        .output()
        .unwrap();
    assert!(indexed.status.success());
    let mut child = quarry()
        .args(["watch", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, passes) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    let catch_up = passes.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(catch_up["events"], 0);
    env.write("src/new_module.py", "def brand_new():\n    return 1\n");
    passes
        .recv_timeout(Duration::from_secs(30))
        .expect("the edit starts a pass");
    // Its writes to the index inside the repo start nothing more.
    let more: Vec<Value> = passes.try_iter().collect();
    std::thread::sleep(Duration::from_secs(2));
    let more: Vec<Value> = more.into_iter().chain(passes.try_iter()).collect();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        more.is_empty(),
        "passes woken by the index's own writes: {more:?}"
    );
}
