//! The embedded store under the faults of issue 63: a healthy index on a read-only mount
//! (check, deep check, search and log answer; the deep check ends and leaves nothing), and
//! `index --rebuild` as searches and kill -9 meet it (the old index or the new one, never a
//! half-built one). faults.rs has the older faults; bench/faults.sh runs the long campaign.

mod common;

use common::git::{commit, init};
use common::{many_files, stderr_of, Env};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace folder on a tmpfs, which `make_read_only` remounts read-only (EROFS), when the
/// test runs as root and may mount; else a plain folder that `make_read_only` makes read-only
/// with chmod (EACCES: the same paths in SQLite). As root without the right to mount, chmod
/// binds nothing: `None`, said on stderr.
struct ReadOnlyLater {
    dir: std::path::PathBuf,
    mounted: bool,
}

impl ReadOnlyLater {
    fn at(dir: &std::path::Path) -> Option<ReadOnlyLater> {
        std::fs::create_dir_all(dir).unwrap();
        let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
        let mounted = root
            && Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=512m", "tmpfs"])
                .arg(dir)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if root && !mounted {
            eprintln!(
                "not run: root may write a chmod-ed folder, and mounting a tmpfs was refused"
            );
            return None;
        }
        if !mounted {
            eprintln!(
                "mount needs root: the folder is made read-only with chmod (EACCES, not EROFS)"
            );
        }
        Some(ReadOnlyLater {
            dir: dir.to_path_buf(),
            mounted,
        })
    }

    fn make_read_only(&self) {
        if self.mounted {
            let done = Command::new("mount")
                .args(["-o", "remount,ro"])
                .arg(&self.dir)
                .status()
                .unwrap();
            assert!(done.success());
        } else {
            Command::new("chmod")
                .args(["-R", "a-w"])
                .arg(&self.dir)
                .status()
                .unwrap();
        }
    }
}

impl Drop for ReadOnlyLater {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        } else {
            let _ = Command::new("chmod")
                .args(["-R", "u+w"])
                .arg(&self.dir)
                .status();
        }
    }
}

/// `quarry ARGS` in `env`, killed (and failed) past `limit`.
fn run_within(env: &Env, args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = env
        .quarry()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("quarry {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A healthy index on a read-only mount (issue 63): check, deep check, search and log answered
/// ("damaged (unable to open database file)" before), and the deep check of an index of more
/// pages than one step of its old backup ends (it restarted forever beside the empty -wal and
/// the -shm quarry leaves) and leaves no scratch folder.
#[test]
fn a_healthy_index_on_a_read_only_mount_answers_and_its_deep_check_ends() {
    let env = Env::new();
    init(env.repo.path());
    let body = "    total = total + value * factor  # accumulate the weighted sum\n".repeat(40);
    for i in 0..400 {
        env.write(
            &format!("pkg/m{i}.py"),
            format!("def handler_{i}(value, factor):\n{body}    return total\n"),
        );
    }
    commit(
        env.repo.path(),
        "Add the handlers",
        "Ann",
        "2025-01-01T00:00:00Z",
    );
    let Some(mount) = ReadOnlyLater::at(&env.index_dir()) else {
        return;
    };
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let search = ["search", "handler_17", "--mode", "lexical", "-k", "1"];
    let want = env.json(&search)["results"][0]["path"].clone();
    assert_eq!(want, "pkg/m17.py");
    let before = scratch_folders();
    mount.make_read_only();

    let check = env.json(&["status", "--check"]);
    assert_eq!(check["check"], "ok", "{check}");
    let deep = run_within(
        &env,
        &["status", "--check", "--deep", "--json"],
        Duration::from_secs(120),
    );
    assert!(deep.status.success(), "{}", stderr_of(&deep));
    let deep: serde_json::Value = serde_json::from_slice(&deep.stdout).unwrap();
    assert_eq!(deep["check"], "ok (deep)", "{deep}");
    assert_eq!(env.json(&search)["results"][0]["path"], want);
    let log = env.json(&["log", "handlers"]);
    assert_eq!(log["commits"][0]["subject"], "Add the handlers", "{log}");

    let left: Vec<String> = scratch_folders()
        .into_iter()
        .filter(|n| !before.contains(n))
        .chain(
            std::fs::read_dir(env.index_dir())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".check-")),
        )
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

/// The deep check's scratch folders in the temporary folder.
fn scratch_folders() -> Vec<String> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("quarry-check-"))
        .collect()
}

/// Each query's first result (path and lines) and how many it found, or how the search
/// failed. (Results tied in score come in the order files were stored, which differs between
/// two index runs of the same tree; the first hits here are not tied.)
fn answers_of(env: &Env, queries: &[&str]) -> Vec<String> {
    queries
        .iter()
        .map(|q| {
            let out = env.run(&["search", q, "--mode", "lexical", "-k", "3", "--json"]);
            let Ok(json) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
                return format!("{q}: exit {:?}: {}", out.status.code(), stderr_of(&out));
            };
            let results = json["results"].as_array().cloned().unwrap_or_default();
            let first = results
                .first()
                .map(|r| format!("{} {}-{}", r["path"], r["start_line"], r["end_line"]));
            format!("{q}: {} results, first {first:?}", results.len())
        })
        .collect()
}

const REBUILD_QUERIES: [&str; 4] = ["handler_17", "load_431", "request kind 650", "Store799"];

/// Searches during `index --rebuild` (issue 63: 17 of 140 saw no result or another first hit):
/// each sees the old index or the new one, which answer alike.
#[test]
fn searches_during_a_rebuild_see_the_old_index_or_the_new_one() {
    let env = Env::new();
    many_files(&env, 800);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let want = answers_of(&env, &REBUILD_QUERIES);
    let mut rebuild = env
        .quarry()
        .args(["index", "--rebuild", env.repo_path(), "--no-embed"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut asked, mut differ) = (0, Vec::new());
    while rebuild.try_wait().unwrap().is_none() {
        let got = answers_of(&env, &REBUILD_QUERIES);
        asked += got.len();
        differ.extend(got.into_iter().filter(|a| !want.contains(a)));
    }
    let out = rebuild.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        differ.is_empty(),
        "{} of {asked} answers during the rebuild differ: {differ:?}",
        differ.len()
    );
    assert_eq!(answers_of(&env, &REBUILD_QUERIES), want);
}

/// kill -9 of `index --rebuild` at random moments: the index opens, checks sound and answers as
/// before the rebuild (its old files, whole); a rebuild run to its end answers the same.
#[test]
fn killed_during_a_rebuild_the_old_index_answers() {
    let env = Env::new();
    many_files(&env, 800);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let want = answers_of(&env, &REBUILD_QUERIES);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let mut state = seed | 1;
    for trial in 0..3 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let delay = Duration::from_millis(100 + state % 1200);
        let mut child = env
            .quarry()
            .args(["index", "--rebuild", env.repo_path(), "--no-embed"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        let status = env.run(&["status", "--check", "--json"]);
        assert!(
            status.status.success(),
            "seed {seed}, trial {trial}, killed after {delay:?}: {}",
            stderr_of(&status)
        );
        assert_eq!(
            answers_of(&env, &REBUILD_QUERIES),
            want,
            "seed {seed}, trial {trial}, killed after {delay:?}"
        );
    }
    env.ok(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    assert_eq!(answers_of(&env, &REBUILD_QUERIES), want);
}
