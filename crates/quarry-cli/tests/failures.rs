//! The index file under stress: damaged files, a second writer, and runs killed mid-way.

mod common;

use common::{sample_repo, write_file, Env};
use std::io::Write;
use std::time::Duration;

fn index_file(env: &Env) -> std::path::PathBuf {
    env.index_dir().join("index.sqlite")
}

#[test]
fn garbage_index_says_damaged_and_rebuild_recovers() {
    let env = Env::new();
    sample_repo(&env);
    std::fs::create_dir_all(env.index_dir()).unwrap();
    std::fs::write(index_file(&env), vec![0x42u8; 64 * 1024]).unwrap();
    for args in [
        &["search", "config"][..],
        &["status"][..],
        &["index", env.repo_path()][..],
    ] {
        let err = env.fails(args);
        assert!(
            err.contains("damaged") && err.contains("--rebuild"),
            "{args:?}: {err}"
        );
    }
    env.ok(&["index", "--rebuild", env.repo_path()]);
    let json = env.json(&["search", "parse config file"]);
    assert_eq!(json["results"][0]["path"], "src/config.rs");
}

/// Damage in the header (the offsets 44 and 18, the second making SQLite open the
/// file read-only) is recovered by `--rebuild`, which never needs the old file; a file that
/// is read-only by its permissions is not moved aside but named.
#[test]
fn rebuild_recovers_from_header_damage() {
    use std::io::{Seek, SeekFrom, Write};
    for offset in [44u64, 18] {
        let env = Env::new();
        sample_repo(&env);
        env.ok(&["index", env.repo_path(), "--no-embed"]);
        let file = index_file(&env);
        let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.seek(SeekFrom::Start(offset)).unwrap();
        f.write_all(&[0, 0, 0, 9]).unwrap();
        drop(f);
        let out = env.run(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
        assert!(
            out.status.success(),
            "offset {offset}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = env.json(&["search", "parse config file", "--mode", "lexical"]);
        assert_eq!(
            json["results"][0]["path"], "src/config.rs",
            "offset {offset}"
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let env = Env::new();
        sample_repo(&env);
        env.ok(&["index", env.repo_path(), "--no-embed"]);
        let file = index_file(&env);
        let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.seek(SeekFrom::Start(44)).unwrap();
        f.write_all(&[0, 0, 0, 9]).unwrap();
        drop(f);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = env.fails(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
        assert!(err.contains("read-only"), "{err}");
        assert!(file.exists(), "a read-only index is left where it is");
    }
}

#[test]
fn truncated_index_is_an_error_not_a_panic() {
    let env = Env::new();
    // Enough content that the index spans many pages.
    for i in 0..300 {
        env.write(&format!("pkg/mod_{i}.py"), format!("def function_number_{i}(x):\n    return x * {i}\n\nclass Holder{i}:\n    value = {i}\n"));
    }
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let file = index_file(&env);
    let len = std::fs::metadata(&file).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(len / 3).unwrap();
    drop(f);
    let out = env.run(&["search", "function number holder"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    if !out.status.success() {
        assert!(
            stderr.contains("damaged") || stderr.contains("--rebuild"),
            "{stderr}"
        );
    }
    env.ok(&["index", "--rebuild", env.repo_path(), "--no-embed"]);
    let json = env.json(&["search", "function_number_7"]);
    assert_eq!(json["results"][0]["path"], "pkg/mod_7.py");
}

#[test]
fn second_writer_waits_then_names_the_holder() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path()]);
    let lock_path = env.index_dir().join("index.lock");
    let mut holder = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    holder.lock().unwrap();
    holder.set_len(0).unwrap();
    write!(holder, "pid 4242, `quarry index elsewhere`").unwrap();
    let started = std::time::Instant::now();
    let err = env.fails(&["index", env.repo_path(), "--lock-wait", "0.5"]);
    assert!(started.elapsed() >= Duration::from_millis(500));
    // The file names a quarry writer long gone; the lock is this test's, which is no quarry
    // process: the holder named is the one holding it now.
    assert!(
        err.contains(&format!("pid {},", std::process::id()))
            && err.contains("not a quarry process")
            && !err.contains("4242"),
        "{err}"
    );
    holder.unlock().unwrap();
    // Another program holding it (util-linux's flock; `-o`: only flock holds it, not the
    // command it runs) is named by its command line.
    let mut child = std::process::Command::new("flock")
        .arg("-o")
        .arg(&lock_path)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let err = env.fails(&["index", env.repo_path(), "--lock-wait", "0.2"]);
    assert!(
        err.contains("flock") && err.contains("not a quarry process"),
        "{err}"
    );
    child.kill().unwrap();
    let _ = child.wait();
    holder.lock().unwrap();
    // Readers are not blocked by a writer.
    let json = env.json(&["search", "parse config"]);
    assert_eq!(json["results"][0]["path"], "src/config.rs");
    holder.unlock().unwrap();
    env.ok(&["index", env.repo_path(), "--lock-wait", "0.5"]);
}

#[test]
fn killed_index_runs_leave_an_index_that_opens_and_finishes() {
    let env = Env::new();
    let files = 2500;
    for i in 0..files {
        let body: String = (0..20)
            .map(|j| format!("    total_{j} = value_{i} + {j}\n"))
            .collect();
        write_file(
            env.repo.path(),
            &format!("pkg{}/module_{i}.py", i % 25),
            format!("def compute_{i}(value_{i}):\n{body}    return total_0\n").as_bytes(),
        );
    }
    for delay_ms in [50u64, 200, 600] {
        let mut child = env
            .quarry()
            .args(["index", env.repo_path()])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // The index opens and answers (possibly with partial results).
        let out = env.run(&["search", "compute", "--json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("damaged"),
            "{stderr}"
        );
    }
    let done = env.json(&["index", env.repo_path(), "--no-embed"]);
    assert_eq!(done["repos"][0]["files"], files);
    let again = env.json(&["index", env.repo_path(), "--no-embed"]);
    let r = &again["repos"][0];
    assert_eq!(
        (r["added"].as_u64(), r["changed"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    let json = env.json(&["search", "compute_1234"]);
    assert_eq!(json["results"][0]["path"], "pkg9/module_1234.py");
}

/// Damage inside pages (a stored vector, a full-text segment) passes SQLite's quick check and
/// changes answers; `status --check --deep` finds it. Damaged with Python's sqlite3, as bytes
/// flipped on disk would leave it.
#[test]
fn a_deep_check_finds_damage_the_quick_check_cannot() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path()]);
    let file = index_file(&env);
    assert!(env
        .ok(&["status", "--check", "--deep"])
        .contains("check: ok"));
    let damage = |sql: &str| {
        let done = std::process::Command::new("python3")
            .args(["-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()"])
            .arg(&file)
            .arg(sql)
            .status()
            .unwrap();
        assert!(done.success(), "{sql}");
    };
    // A vector with one value changed to 1.0: no longer of unit length.
    damage(
        "UPDATE embeddings SET vector = CAST(X'0000803F' || substr(vector, 5) AS BLOB) \
         WHERE id = (SELECT min(id) FROM embeddings);",
    );
    assert!(
        env.ok(&["status", "--check"]).contains("check: ok"),
        "the quick check passes"
    );
    let deep = env.fails(&["status", "--check", "--deep"]);
    assert!(
        deep.contains("damaged") && deep.contains("embeddings"),
        "{deep}"
    );

    // A rebuild recovers (the damaged file is moved aside: its vectors are not reused).
    env.ok(&["index", "--rebuild", env.repo_path()]);
    assert!(env
        .ok(&["status", "--check", "--deep"])
        .contains("check: ok"));

    // A full-text segment with bytes changed.
    damage(
        "UPDATE chunks_fts_data SET block = CAST(substr(block, 1, 12) || randomblob(8) || substr(block, 21) AS BLOB) \
         WHERE id = (SELECT max(id) FROM chunks_fts_data) AND length(block) > 24;",
    );
    let deep = env.fails(&["status", "--check", "--deep"]);
    assert!(
        deep.contains("damaged") && deep.contains("chunks_fts"),
        "{deep}"
    );
    // And a rebuild recovers.
    env.ok(&["index", "--rebuild", env.repo_path()]);
    assert!(env
        .ok(&["status", "--check", "--deep"])
        .contains("check: ok"));
}
