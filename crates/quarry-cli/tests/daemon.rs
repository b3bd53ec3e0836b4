//! The workspace daemon (quarry-daemon) with the real model: it answers every search exactly as
//! the process would on its own, belongs to its user alone, and recovers from being killed,
//! replaced by another build, and started by many clients at once.

mod common;

use common::{sample_repo, Env};
use serde_json::Value;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn with_daemon(env: &Env, policy: &str, args: &[&str]) -> Command {
    let mut cmd = env.quarry();
    cmd.env("QUARRY_DAEMON", policy).args(args);
    cmd
}

fn stdout_json(out: &Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// An indexed sample repo with vectors.
fn indexed(env: &Env) {
    sample_repo(env);
    let report = env.json(&["index", env.repo_path()]);
    assert!(
        report["embedding"].is_object(),
        "the model must be installed (scripts/install-model.sh): {report}"
    );
}

fn daemon_status(env: &Env) -> Option<Value> {
    let out = with_daemon(env, "auto", &["daemon", "status", "--json"])
        .output()
        .unwrap();
    out.status.success().then(|| stdout_json(&out, "status"))
}

/// Waits until `check` holds, up to 60 s (a debug build loading the model beside the other
/// daemon test on two cores can take many seconds).
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Processes running `daemon run` for this workspace.
fn daemons_of(env: &Env) -> usize {
    let dir = env.index_dir().display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&dir) && c.contains("daemon run"))
        .count()
}

#[test]
fn the_daemon_answers_every_search_as_the_process_would() {
    let env = Env::new();
    sample_repo(&env);
    common::git::init(env.repo.path());
    common::git::commit(
        env.repo.path(),
        "Read settings from a TOML file",
        "ada",
        "2025-01-02T10:00:00Z",
    );
    env.write(
        "web/upload.ts",
        "export class UploadQueue {\n  retryLater(job: Job): void {}\n}\n",
    );
    common::git::commit(
        env.repo.path(),
        "Retry failed uploads later",
        "bob",
        "2025-02-03T10:00:00Z",
    );
    let report = env.json(&["repo", "add", env.repo_path()]);
    assert!(
        report["embedding"].is_object(),
        "commits embedded: {report}"
    );
    let issue = env.home.path().join("issue.md");
    std::fs::write(
        &issue,
        "Uploads are never retried\n\nWhen an upload fails the job is dropped instead of being \
         queued again with a backoff.\n\n```\nqueue.requeueWithBackoff(job)\n```\n",
    )
    .unwrap();
    let issue = issue.display().to_string();
    env.ok(&["daemon", "start"]);
    let searches: Vec<Vec<&str>> = vec![
        vec!["how are settings read from a file"],
        vec!["--mode", "semantic", "settings file"],
        vec!["--mode", "hybrid", "retry with backoff"],
        vec!["--explain", "where do failed uploads go"],
        vec!["--query-file", &issue],
        vec!["--agentic", "offline", "upload queue backoff"],
        // These never embed their query: the daemon answers them too (its index open, its
        // caches warm), with the same answer.
        vec!["parse_config_file"],
        vec!["src/config.rs"],
        vec!["--mode", "lexical", "retry"],
        vec!["$X.unwrap()"],
        vec!["\"read_to_string\""],
    ];
    let logs: Vec<Vec<&str>> = vec![
        vec!["log", "--json", "uploads that failed"],
        vec![
            "log",
            "--json",
            "--mode",
            "semantic",
            "configuration parsing",
        ],
    ];
    let searches = searches.iter().map(|q| {
        let mut args = vec!["search", "--json"];
        args.extend(q);
        args
    });
    let requests = || {
        daemon_status(&env).expect("the daemon runs")["requests"]
            .as_u64()
            .unwrap()
    };
    for args in searches.chain(logs) {
        let query = &args;
        let alone = with_daemon(&env, "off", &args).output().unwrap();
        let before = requests();
        let warm = with_daemon(&env, "require", &args).output().unwrap();
        // The search and the status asked after it: the daemon answered it.
        assert_eq!(requests(), before + 2, "{query:?} went to the daemon");
        assert_eq!(alone.status.code(), warm.status.code(), "{query:?}");
        assert_eq!(
            stdout_json(&alone, "in-process"),
            stdout_json(&warm, "daemon"),
            "{query:?}"
        );
    }
    // Past commits like an issue vote for files, asked beside the search on a connection of
    // their own (in the daemon too): the same answer, the votes in it. Commits about other
    // things first, so that the issue's words are rare in the history, as in any real one.
    common::git::unrelated_commits(
        &env,
        "misc",
        &["logging setup", "a health endpoint", "colour themes"],
    );
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    env.ok(&["config", "set", "search.history_weight", "1"]);
    let args = ["search", "--json", "--explain", "--query-file", &issue];
    let alone = stdout_json(
        &with_daemon(&env, "off", &args).output().unwrap(),
        "in-process",
    );
    let warm = stdout_json(
        &with_daemon(&env, "require", &args).output().unwrap(),
        "daemon",
    );
    assert_eq!(alone, warm, "history votes");
    let voted = alone["files"].as_array().unwrap().iter().any(|f| {
        f["path"] == "web/upload.ts"
            && f["mentions"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["kind"] == "changed"))
    });
    assert!(voted, "the commit that retried uploads votes: {alone}");
    env.ok(&["config", "set", "search.history_weight", "0"]);

    // `quarry grep` rides the same daemon, run from inside the repo: the same bytes.
    let greps: Vec<Vec<&str>> = vec![
        vec!["grep", "-n", "def "],
        vec!["grep", "-F", "read_to_string", "src"],
        vec!["grep", "-c", "-i", "upload"],
        vec!["grep", "-l", "-g", "*.ts", "Job"],
        vec!["grep", "--json", "-C", "1", "parse_config"],
        vec!["grep", "-w", "nothing_matches_this_word"],
    ];
    for args in &greps {
        let run = |policy: &str| {
            with_daemon(&env, policy, args)
                .current_dir(env.repo.path())
                .output()
                .unwrap()
        };
        // ripgrep's JSON says how long each file took: that alone may differ.
        let timeless = |out: &Output| -> Vec<String> {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|line| match serde_json::from_str::<Value>(line) {
                    Ok(mut message) if message["data"]["stats"].is_object() => {
                        message["data"]["stats"]["elapsed"] = Value::Null;
                        if message["type"] == "summary" {
                            message["data"]["elapsed_total"] = Value::Null;
                        }
                        message.to_string()
                    }
                    _ => line.to_string(),
                })
                .collect()
        };
        let (alone, warm) = (run("off"), run("require"));
        assert_eq!(alone.status.code(), warm.status.code(), "{args:?}");
        assert_eq!(timeless(&alone), timeless(&warm), "{args:?}");
    }
    // The daemon keeps the tree's file list and file states between greps: edits, new files
    // and removals are seen at once. The tree is aged first (a list taken within two seconds
    // of a change is not kept), so the daemon's list is the remembered one.
    let past = std::time::SystemTime::now() - Duration::from_secs(30);
    for entry in walkdir(env.repo.path()) {
        std::fs::File::open(&entry)
            .and_then(|f| f.set_modified(past))
            .unwrap();
    }
    let grep = |policy: &str| {
        let out = with_daemon(&env, policy, &["grep", "-n", "warm_tree_literal"])
            .current_dir(env.repo.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(grep("require"), grep("off"));
    assert_eq!(grep("require").0, Some(1), "nothing matches yet");
    let edited = walkdir(env.repo.path())
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "py"))
        .expect("a Python file in the sample repo");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("\nwarm_tree_literal = 1\n");
    std::fs::write(&edited, text).unwrap();
    let added = env.repo.path().join("added/deeper");
    std::fs::create_dir_all(&added).unwrap();
    std::fs::write(added.join("new.py"), "warm_tree_literal = 2\n").unwrap();
    let (code, found) = grep("require");
    assert_eq!((code, found.clone()), grep("off"));
    assert_eq!(found.lines().count(), 2, "{found}");
    std::fs::remove_dir_all(env.repo.path().join("added")).unwrap();
    assert_eq!(grep("require"), grep("off"));
    assert_eq!(grep("require").1.lines().count(), 1);

    let status = daemon_status(&env).expect("the daemon runs");
    assert!(
        status["tree"]["folders"].as_u64().unwrap() > 0,
        "greps kept the tree: {status}"
    );
    // Every search that embeds its query went through the daemon (`require` fails otherwise).
    assert!(status["requests"].as_u64().unwrap() >= 14, "{status}");
    assert!(
        status["model"].as_str().unwrap().contains("MiniLM"),
        "{status}"
    );

    // The hook's question path too.
    let event = serde_json::json!({
        "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Grep",
        "tool_input": {"pattern": "where are failed uploads retried"},
        "cwd": env.repo_path(),
    })
    .to_string();
    let hook = |policy: &str| {
        let mut command = with_daemon(&env, policy, &["hook", "claude"]);
        command.env(
            "QUARRY_HOOK_STATE",
            env.home.path().join(format!("hook-{policy}")),
        );
        common::output_with_stdin(&mut command, event.as_bytes()).stdout
    };
    let (alone, warm) = (hook("off"), hook("require"));
    assert!(String::from_utf8_lossy(&warm).contains("permissionDecision"));
    assert_eq!(
        String::from_utf8_lossy(&alone),
        String::from_utf8_lossy(&warm)
    );
    env.ok(&["daemon", "stop"]);
    eventually("the daemon stops", || daemon_status(&env).is_none());
}

#[test]
fn the_daemon_is_the_users_alone_and_recovers_from_kills_builds_and_crowds() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    indexed(&env);
    let search = ["search", "--json", "how are settings read from a file"];
    let expected = stdout_json(
        &with_daemon(&env, "off", &search).output().unwrap(),
        "alone",
    );

    // Twenty first calls at once: every one answers, and one daemon is left.
    let crowd: Vec<_> = (0..20)
        .map(|_| with_daemon(&env, "auto", &search).spawn_output())
        .collect();
    for child in crowd {
        let out = child.join().unwrap();
        assert_eq!(stdout_json(&out, "crowd"), expected);
    }
    eventually("one daemon answers", || daemon_status(&env).is_some());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(daemons_of(&env), 1);

    let folder = env.index_dir().join("daemon");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&folder), 0o700);
    assert_eq!(mode(&folder.join("sock")), 0o600);

    // Killed with -9: the socket is stale; the next call answers in-process and starts anew.
    let first = daemon_status(&env).unwrap()["pid"].as_u64().unwrap();
    Command::new("kill")
        .args(["-9", &first.to_string()])
        .status()
        .unwrap();
    eventually("the killed daemon is gone", || daemons_of(&env) == 0);
    // Its command line goes with its memory, before the kernel closes its files: wait until
    // its lock is released too, or the next call rightly sees a daemon still holding it.
    eventually("the killed daemon's lock is released", || {
        let lock = std::fs::File::open(folder.join("lock")).unwrap();
        let free = lock.try_lock().is_ok();
        free
    });
    assert!(folder.join("sock").exists(), "a stale socket is left");
    let out = with_daemon(&env, "auto", &search).output().unwrap();
    assert_eq!(stdout_json(&out, "after kill"), expected);
    let started = Instant::now();
    while !daemon_status(&env).is_some_and(|s| s["pid"].as_u64() != Some(first)) {
        // What the daemon said when it could not start is kept beside its socket.
        let log = std::fs::read_to_string(env.index_dir().join("daemon/log"));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no new daemon answers; its log: {log:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // A client of another build is refused; the daemon stays, since its own binary is the
    // same (any request may say another build: stepping down for it ended answers in flight).
    let other_build = || {
        use std::io::{BufRead, BufReader, Write};
        let mut stream = std::os::unix::net::UnixStream::connect(folder.join("sock")).unwrap();
        stream
            .write_all(
                b"{\"protocol\":1,\"build\":\"an-older-quarry\",\"call\":{\"call\":\"status\"}}\n",
            )
            .unwrap();
        let mut answer = String::new();
        BufReader::new(&stream).read_line(&mut answer).unwrap();
        assert!(answer.contains("refused"), "{answer}");
    };
    other_build();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(daemons_of(&env), 1, "a forged build stopped the daemon");
    assert!(daemon_status(&env).is_some());
    // Its binary replaced on disk (an upgrade): then it steps down for the new build.
    env.ok(&["daemon", "stop"]);
    eventually("stopped", || daemons_of(&env) == 0);
    let copy = env.home.path().join("bin/quarry");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_quarry"), &copy).unwrap();
    let from_copy = |args: &[&str]| {
        Command::new(&copy)
            .arg("--index-dir")
            .arg(env.index_dir())
            .args(args)
            .output()
            .unwrap()
    };
    assert!(from_copy(&["daemon", "start"]).status.success());
    eventually("the copy's daemon answers", || {
        from_copy(&["daemon", "status"]).status.success()
    });
    other_build();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(daemons_of(&env), 1, "its binary is unchanged");
    let upgraded = env.home.path().join("bin/quarry.new");
    std::fs::copy(env!("CARGO_BIN_EXE_quarry"), &upgraded).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&upgraded)
        .unwrap()
        .set_modified(std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1))
        .unwrap();
    std::fs::rename(&upgraded, &copy).unwrap();
    other_build();
    eventually("the replaced daemon steps down", || daemons_of(&env) == 0);

    // Another user cannot reach it at all (the folder is 0700), when the suite can test that.
    let root = unsafe { libc::geteuid() } == 0;
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if root && setpriv {
        env.ok(&["daemon", "start"]);
        let probe = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "python3",
                "-c",
            ])
            .arg(format!(
                "import socket; s=socket.socket(socket.AF_UNIX); s.connect({:?})",
                folder.join("sock").display().to_string()
            ))
            .output()
            .unwrap();
        assert!(!probe.status.success(), "another user connected");
        assert!(
            String::from_utf8_lossy(&probe.stderr).contains("Permission denied"),
            "{}",
            String::from_utf8_lossy(&probe.stderr)
        );
    }

    // Idle: it exits on its own.
    env.ok(&["daemon", "stop"]);
    eventually("stopped", || daemons_of(&env) == 0);
    // `daemon start` returns once the daemon answers, so the idle clock runs from a known point
    // (polling for it from outside could miss a daemon that is up for one second only).
    env.ok(&["config", "set", "daemon.idle_s", "2"]);
    env.ok(&["daemon", "start"]);
    let started = Instant::now();
    assert_eq!(daemons_of(&env), 1);
    eventually("the idle daemon exits", || daemons_of(&env) == 0);
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "it exited before it was idle for daemon.idle_s"
    );
    assert!(
        !folder.join("sock").exists(),
        "an idle daemon removes its socket"
    );

    // `daemon.auto = false`: nothing starts on its own.
    env.ok(&["config", "set", "daemon.auto", "false"]);
    let out = with_daemon(&env, "auto", &search).output().unwrap();
    assert_eq!(stdout_json(&out, "no auto"), expected);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(daemons_of(&env), 0);
}

/// `Command::output` on a thread of its own.
/// A daemon stopped with SIGSTOP (or hung) holds the workspace and says nothing: searches and
/// greps answer in-process after a moment and say why, `daemon status` names it at once, and a
/// grep given up on is never written later by the daemon once it is resumed.
#[test]
fn a_stopped_daemon_is_passed_over_at_once_and_named() {
    let env = Env::new();
    indexed(&env);
    let search = ["search", "--json", "how are settings read from a file"];
    let expected = stdout_json(
        &with_daemon(&env, "off", &search).output().unwrap(),
        "alone",
    );
    env.ok(&["daemon", "start"]);
    let pid = daemon_status(&env).unwrap()["pid"].as_u64().unwrap();
    let signal = |which: &str| {
        Command::new("kill")
            .args([which, &pid.to_string()])
            .status()
            .unwrap()
    };
    signal("-STOP");
    let started = Instant::now();
    let out = with_daemon(&env, "auto", &search).output().unwrap();
    let waited = started.elapsed();
    assert_eq!(stdout_json(&out, "stopped daemon"), expected);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("daemon (pid {pid}) did not answer")) && said.contains("-CONT"),
        "{said}"
    );
    // The deadline is the request's acceptance, not its work: a debug build answering on its
    // own takes the rest.
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    let started = Instant::now();
    let status = with_daemon(&env, "auto", &["daemon", "status"])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!status.status.success());
    assert!(
        String::from_utf8_lossy(&status.stderr).contains("stopped or hung"),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    // A grep into a file while the daemon is stopped: answered here, once.
    let file = env.home.path().join("grep.out");
    let out = with_daemon(&env, "auto", &["grep", "-n", "def "])
        .current_dir(env.repo.path())
        .stdout(std::fs::File::create(&file).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    let alone = with_daemon(&env, "off", &["grep", "-n", "def "])
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    signal("-CONT");
    // Resumed, it finds the requests it was sent and the clients gone: it writes nothing.
    eventually("the resumed daemon answers", || {
        daemon_status(&env).is_some()
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(std::fs::read(&file).unwrap(), alone.stdout);
    env.ok(&["daemon", "stop"]);
}

/// A daemon killed in the middle of writing a grep's output: the client says the output is
/// incomplete and fails; it never greps again after it (which printed part of the answer and
/// then the whole answer, exit 0).
#[test]
fn a_grep_whose_daemon_dies_mid_output_is_never_answered_twice() {
    use std::io::Read;
    let env = Env::new();
    // Far more output than a pipe holds (64 KiB): the daemon blocks writing it.
    for file in 0..200 {
        let body: String = (0..60)
            .map(|n| format!("def handler_{file}_{n}(request):\n    return request\n"))
            .collect();
        env.write(&format!("pkg/m{file:03}.py"), body);
    }
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let grep = ["grep", "-n", "def "];
    let alone = with_daemon(&env, "off", &grep)
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(alone.stdout.len() > 500_000);
    env.ok(&["daemon", "start"]);
    let pid = daemon_status(&env).unwrap()["pid"].as_u64().unwrap();
    // The daemon answers greps (so the next one goes to it).
    let warm = with_daemon(&env, "require", &grep)
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert_eq!(warm.stdout, alone.stdout);
    let mut child = with_daemon(&env, "auto", &grep)
        .current_dir(env.repo.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Nothing reads the pipe yet: the daemon fills it and waits to write more.
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let mut got = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut got).unwrap();
    let mut said = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "a cut answer must not exit 0: {said}");
    assert!(said.contains("incomplete"), "{said}");
    assert!(
        got.len() < alone.stdout.len() && alone.stdout.starts_with(&got),
        "the output is not a prefix of the answer ({} of {} bytes): written twice?",
        got.len(),
        alone.stdout.len()
    );
}

trait SpawnOutput {
    fn spawn_output(self) -> std::thread::JoinHandle<Output>;
}

impl SpawnOutput for Command {
    fn spawn_output(mut self) -> std::thread::JoinHandle<Output> {
        std::thread::spawn(move || self.output().unwrap())
    }
}

/// Every folder and file under `root` (`.git` left out).
fn walkdir(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![root.to_path_buf()];
    let mut at = 0;
    while at < found.len() {
        let here = found[at].clone();
        at += 1;
        if here.is_dir() {
            for entry in std::fs::read_dir(&here).unwrap() {
                let path = entry.unwrap().path();
                if path.file_name().is_some_and(|n| n != ".git") {
                    found.push(path);
                }
            }
        }
    }
    found
}
