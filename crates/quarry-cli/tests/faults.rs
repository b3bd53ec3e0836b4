//! Faults and bad input, as the reliability probes met them: damage inside the index file,
//! readers racing the first index, a read-only index, a damaged git object, kill -9 during
//! indexing, and inputs that could only answer nothing (or hang). Each test fails without the
//! mechanism it names. The long campaign (hundreds of kills, concurrent writers) is
//! bench/faults.sh.

mod common;

use common::git::{commit, init};
use common::{many_files, sample_repo, stderr_of, Env};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn damage_inside_the_index_is_detected_and_rebuild_starts_a_new_file() {
    let env = Env::new();
    many_files(&env, 300);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let file = env.index_dir().join("index.sqlite");
    let len = std::fs::metadata(&file).unwrap().len();
    assert!(len > 256 * 1024, "a file of many pages: {len} bytes");
    // One 4 KB page of garbage: the page holding a chunk's text, so that it is a page in use
    // (a page in the middle of the file may be a free one, which no check reads).
    {
        use std::io::{Seek, SeekFrom, Write};
        let bytes = std::fs::read(&file).unwrap();
        let needle = b"Handle request kind 150.";
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("the chunk's text is in the file");
        let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.seek(SeekFrom::Start(at as u64 & !4095)).unwrap();
        f.write_all(&[0xA5; 4096]).unwrap();
    }

    let check = env.run(&["status", "--check"]);
    assert_eq!(check.status.code(), Some(2), "{}", stderr_of(&check));
    let said = stderr_of(&check);
    assert!(
        said.contains("damaged") && said.contains("--rebuild"),
        "{said}"
    );

    let rebuilt = env.run(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    let said = stderr_of(&rebuilt);
    assert!(rebuilt.status.success(), "{said}");
    assert!(said.contains("moved to"), "{said}");
    let kept: Vec<_> = std::fs::read_dir(env.index_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".damaged-"))
        .collect();
    assert!(!kept.is_empty(), "the damaged file is kept for inspection");

    let status = env.json(&["status", "--check"]);
    assert_eq!(status["check"], "ok");
    assert_eq!(status["repos"][0]["files"], 300);
    let found = env.json(&["search", "handler_17", "-k", "1"]);
    assert_eq!(found["results"][0]["path"], "pkg/module_17.py");
}

#[test]
fn readers_racing_the_first_index_never_see_a_raw_sql_error() {
    for round in 0..4 {
        let env = Env::new();
        many_files(&env, 60);
        let writer = env
            .quarry()
            .args(["index", env.repo_path(), "--no-embed"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let readers: Vec<_> = (0..6)
            .map(|_| {
                env.quarry()
                    .args(["status", "--json"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for reader in readers {
            let out = reader.wait_with_output().unwrap();
            let said = stderr_of(&out);
            assert!(
                out.status.success() || said.contains("being created"),
                "round {round}: a reader failed with: {said}"
            );
            assert!(
                !said.contains("SQL logic error") && !said.contains("already exists"),
                "round {round}: {said}"
            );
        }
        let out = writer.wait_with_output().unwrap();
        assert!(out.status.success(), "round {round}: {}", stderr_of(&out));
        assert_eq!(env.json(&["status"])["repos"][0]["files"], 60);
    }
}

#[test]
fn a_read_only_index_can_be_searched() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let file = env.index_dir().join("index.sqlite");
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let mut perms = std::fs::metadata(&file).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&file, perms).unwrap();
    let found = env.json(&[
        "search",
        "parse_config_file",
        "--mode",
        "lexical",
        "-k",
        "1",
    ]);
    assert_eq!(found["results"][0]["path"], "src/config.rs");
    assert_eq!(env.json(&["status"])["repos"][0]["files"], 5);
}

#[test]
fn a_damaged_git_object_fails_the_sync_unless_asked_to_keep_going() {
    let env = Env::new();
    let dir = env.repo.path();
    init(dir);
    for (i, date) in ["2025-01-01", "2025-02-01", "2025-03-01"]
        .iter()
        .enumerate()
    {
        env.write(&format!("src/f{i}.py"), format!("x = {i}\n"));
        commit(
            dir,
            &format!("Add f{i}"),
            "Ann",
            &format!("{date}T00:00:00Z"),
        );
    }
    // The middle commit's root tree goes missing: its diff (and its child's) cannot be read.
    let tree = Command::new("git")
        .args(["rev-parse", "HEAD~1^{tree}"])
        .current_dir(dir)
        .output()
        .unwrap();
    let tree = String::from_utf8(tree.stdout).unwrap().trim().to_string();
    std::fs::remove_file(dir.join(".git/objects").join(&tree[..2]).join(&tree[2..])).unwrap();

    let out = env.run(&["sync", env.repo_path(), "--no-embed"]);
    let said = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("could not be read") && said.contains("--keep-going"),
        "{said}"
    );
    // Left out, so a later sync tries them again; the readable one is stored.
    let stored = env.json(&["status"])["history"][0]["commits"]
        .as_u64()
        .unwrap();
    assert_eq!(stored, 1, "{said}");

    let kept = env.json(&["sync", env.repo_path(), "--no-embed", "--keep-going"]);
    assert_eq!(kept["repos"][0]["incomplete"], 2, "{kept}");
    assert_eq!(env.json(&["status"])["history"][0]["commits"], 3);
}

/// A blob whose object file is damaged (not missing) is reported like a missing one: the
/// commit that needs it is not stored, exit 2 (it used to be stored with "(blob unavailable,
/// no patch)" and exit 0).
#[test]
fn a_damaged_blob_is_reported_and_its_commit_not_stored() {
    let env = Env::new();
    let dir = env.repo.path();
    init(dir);
    env.write("src/a.py", "x = 1\n");
    commit(dir, "Add a", "Ann", "2025-01-01T00:00:00Z");
    env.write("src/a.py", "x = 2\n");
    commit(dir, "Change a", "Ann", "2025-02-01T00:00:00Z");
    let blob = Command::new("git")
        .args(["rev-parse", "HEAD:src/a.py"])
        .current_dir(dir)
        .output()
        .unwrap();
    let blob = String::from_utf8(blob.stdout).unwrap().trim().to_string();
    let object = dir.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    let mut permissions = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&object, permissions).unwrap();
    let mut bytes = std::fs::read(&object).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..] {
        *b ^= 0x5a;
    }
    std::fs::write(&object, bytes).unwrap();

    let out = env.run(&["sync", env.repo_path(), "--no-embed"]);
    let said = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("could not be read"), "{said}");
    assert_eq!(env.json(&["status"])["history"][0]["commits"], 1, "{said}");
}

#[test]
fn killed_at_random_points_an_index_run_leaves_an_index_that_opens_and_finishes() {
    let env = Env::new();
    many_files(&env, 800);
    let clean = Env::new();
    many_files(&clean, 800);
    let reference = clean.json(&["index", clean.repo_path(), "--no-embed"]);
    let files = reference["repos"][0]["files"].as_u64().unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    eprintln!("kill -9 trial seed: {seed}");
    let mut state = seed | 1;
    for trial in 0..4 {
        // xorshift: the delay before the kill, 5..400 ms.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let delay = Duration::from_millis(5 + state % 395);
        let mut child = env
            .quarry()
            .args(["index", env.repo_path(), "--no-embed"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        if env.index_dir().join("index.sqlite").exists() {
            let status = env.run(&["status", "--check", "--json"]);
            assert!(
                status.status.success(),
                "seed {seed}, trial {trial}, killed after {delay:?}: {}",
                stderr_of(&status)
            );
        }
    }
    let finished = env.json(&["index", env.repo_path(), "--no-embed"]);
    assert_eq!(
        finished["repos"][0]["files"].as_u64(),
        Some(files),
        "seed {seed}"
    );
    // The same answer as a clean run (repo names differ: each is its temp folder's name).
    let top = |e: &Env| -> Vec<String> {
        e.json(&["search", "load_431", "-k", "3"])["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {} {} {}",
                    r["path"], r["start_line"], r["end_line"], r["score"]
                )
            })
            .collect()
    };
    assert_eq!(top(&env), top(&clean), "seed {seed}");
}

#[test]
fn inputs_that_could_only_answer_nothing_say_why() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let zero = env.fails(&["search", "parse_config_file", "-k", "0"]);
    assert!(zero.contains("limit of 0"), "{zero}");
    let empty = env.fails(&["search", "  "]);
    assert!(empty.contains("empty"), "{empty}");
    let glob = env.fails(&["search", "parse_config_file", "--path", "src/[abc"]);
    assert!(glob.contains("not a valid glob"), "{glob}");
    // Brace alternatives hold on every route (SQLite's GLOB has none of its own).
    let braces = env.json(&[
        "search",
        "config upload",
        "--mode",
        "lexical",
        "--path",
        "{src,web}/**",
    ]);
    let mut found = common::result_paths(&braces);
    found.sort();
    found.dedup();
    assert_eq!(found, ["src/config.rs", "web/upload.ts"], "{braces}");
    // Pattern errors quote the pattern as written, not as rewritten for the engines.
    let slash = env.fails(&["grep", "\\", env.repo_path()]);
    assert!(
        slash.contains("incomplete escape") && !slash.contains("unclosed group"),
        "{slash}"
    );
    let sg = env.fails(&["sg", "$A; $B", "--lang", "rust", env.repo_path()]);
    assert!(sg.contains("$A; $B") && !sg.contains('µ'), "{sg}");
    // A glob too long for the store is the caller's error, said plainly.
    let huge = format!("src/{}*", "a".repeat(50_000));
    let long = env.fails(&["search", "config", "--path", &huge]);
    assert!(long.contains("at most 4096"), "{long}");

    let started = Instant::now();
    // An issue with a long log attached: read from a pipe, it is cut to its head (a
    // line end) and searched, and the cut is said.
    let long = format!(
        "parse_config_file fails on an empty file\n{}",
        "DEBUG worker heartbeat ok\n".repeat(5_000)
    );
    let out = env
        .quarry()
        .args(["search", "--stdin", "--mode", "lexical"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(long.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("searched its first 32748")
            && stderr_of(&out).contains("at most 32768"),
        "{}",
        stderr_of(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[cfg(unix)]
#[test]
fn fifos_minified_files_and_odd_names_neither_hang_nor_break_the_output() {
    let env = Env::new();
    sample_repo(&env);
    let fifo = env.repo.path().join("src/pipe.py");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    env.write(
        "web/bundle.min.js",
        format!("var a={};\n", "f(1),".repeat(10_000)),
    );
    env.write(
        "odd\nname.py",
        "def oddly_named_function():\n    return 1\n",
    );

    let started = Instant::now();
    let report = env.json(&["index", env.repo_path(), "--no-embed"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(report["repos"][0]["skipped"]["minified"], 1, "{report}");

    let fifo_path = fifo.to_str().unwrap();
    let summary = env.fails(&["summary", fifo_path]);
    assert!(summary.contains("not a regular file"), "{summary}");

    // One result per line: the newline in the name is printed escaped; JSON keeps it exact.
    let human = env.ok(&["search", "oddly_named_function", "-k", "1"]);
    assert!(human.starts_with("odd\\nname.py:1-2"), "{human}");
    let json = env.json(&["search", "oddly_named_function", "-k", "1"]);
    assert_eq!(json["results"][0]["path"], "odd\nname.py");
}

/// A process holding an SQLite lock on the index (Python's sqlite3, as a shell's `sqlite3` or
/// a backup tool would); it prints "held" once it holds it.
fn hold_index(file: &std::path::Path, sql: &str) -> std::process::Child {
    let script = format!(
        "import sqlite3, sys, time\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\n{}\nprint('held', flush=True)\ntime.sleep(120)\n",
        sql.lines()
            .map(|s| format!("c.execute({s:?})"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .arg(file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "held");
    child
}

fn moved_aside(env: &Env) -> usize {
    std::fs::read_dir(env.index_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.contains(".damaged-") && !name.ends_with("-wal") && !name.ends_with("-shm")
        })
        .count()
}

#[test]
fn a_healthy_index_is_never_called_damaged_nor_moved_aside() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let file = env.index_dir().join("index.sqlite");

    // Another connection writing (a transaction held open): the checks read only.
    let mut holder = hold_index(&file, "BEGIN IMMEDIATE");
    let status = env.json(&["status", "--check", "--deep"]);
    assert_eq!(status["check"], "ok (deep)", "{status}");
    holder.kill().unwrap();
    let _ = holder.wait();

    // Held exclusively (`locking_mode=EXCLUSIVE`): the check cannot read it, says who holds
    // it and that it is not damage; a rebuild leaves it where it is.
    let mut holder = hold_index(&file, "PRAGMA locking_mode=EXCLUSIVE\nBEGIN EXCLUSIVE");
    let check = env.run(&["status", "--check"]);
    let said = stderr_of(&check);
    assert!(!check.status.success());
    assert!(
        said.contains("not damage")
            && said.contains(&format!("pid {}", holder.id()))
            && said.contains("python3")
            && !said.contains("is damaged"),
        "{said}"
    );
    let rebuild = env.run(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    assert!(!rebuild.status.success());
    assert_eq!(moved_aside(&env), 0, "{}", stderr_of(&rebuild));
    holder.kill().unwrap();
    let _ = holder.wait();
    assert_eq!(env.json(&["status", "--check"])["repos"][0]["files"], 5);

    // A read-only index: checked as it is read, nothing written.
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let mut perms = std::fs::metadata(&file).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&file, perms.clone()).unwrap();
    let status = env.json(&["status", "--check", "--deep"]);
    assert_eq!(status["check"], "ok (deep)", "{status}");
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&file, perms).unwrap();

    // A file that was an index and is now empty is damage, not an empty workspace.
    std::fs::write(&file, b"").unwrap();
    let check = env.run(&["status", "--check"]);
    let said = stderr_of(&check);
    assert_eq!(check.status.code(), Some(2), "{said}");
    assert!(
        said.contains("empty (0 bytes)") && said.contains("--rebuild"),
        "{said}"
    );
    let search = env.run(&["search", "parse_config_file"]);
    let said = stderr_of(&search);
    assert_eq!(search.status.code(), Some(2), "{said}");
    assert!(said.contains("empty (0 bytes)"), "{said}");
    env.ok(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    assert_eq!(moved_aside(&env), 1);
    assert_eq!(env.json(&["status", "--check"])["repos"][0]["files"], 5);
}

#[test]
fn a_changed_byte_in_a_stored_text_is_found_named_and_answered_around() {
    let env = Env::new();
    sample_repo(&env);
    env.write(
        "src/marker.py",
        "def distinctive_marker_function():\n    \"\"\"Quokkas collect zeppelins quietly.\"\"\"\n    return 1\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let file = env.index_dir().join("index.sqlite");
    {
        use std::io::{Seek, SeekFrom, Write};
        let bytes = std::fs::read(&file).unwrap();
        let needle = b"Quokkas collect zeppelins";
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("the chunk's text is in the file");
        let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.seek(SeekFrom::Start(at as u64 + 2)).unwrap();
        f.write_all(&[0xFF]).unwrap();
    }
    // The page checks pass; the texts' checksums do not.
    let check = env.run(&["status", "--check", "--deep"]);
    let said = stderr_of(&check);
    assert_eq!(check.status.code(), Some(2), "{said}");
    assert!(
        said.contains("no longer matches its checksum") && said.contains("src/marker.py"),
        "{said}"
    );
    // A search meeting it answers, with the text's bad byte replaced, and names the damage.
    let found = env.json(&["search", "distinctive_marker_function"]);
    assert_eq!(found["results"][0]["path"], "src/marker.py", "{found}");
    let warned = found["warnings"].to_string();
    assert!(
        warned.contains("damaged") && warned.contains("--rebuild"),
        "{found}"
    );
    let rebuilt = env.run(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    assert!(rebuilt.status.success(), "{}", stderr_of(&rebuilt));
    assert_eq!(moved_aside(&env), 1);
    assert_eq!(
        env.json(&["status", "--check", "--deep"])["check"],
        "ok (deep)"
    );
}
