//! A healthy index this process may not write: on a read-only mount (EROFS), in a read-only
//! folder, with a `-wal` and `-shm` left by a writer. It must open read-only and answer, its
//! checks must call it sound (never damaged), and the deep check must end and leave nothing
//! behind (issue 63: "damaged (unable to open database file)", and a deep check that ran
//! forever, leaving its scratch folder).
//!
//! A read-only mount needs root: as root the tests mount a tmpfs and remount it read-only;
//! otherwise they make the folder and files read-only with chmod (EACCES, not EROFS: the same
//! paths in SQLite). Root without the right to mount cannot be refused a chmod-ed folder, so
//! those tests say so on stderr and pass without running.

use super::*;
use crate::tests::{chunk, file, query};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A folder this process may not write, holding copies of an index's files.
struct ReadOnlyDir {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl ReadOnlyDir {
    /// Copies `names` that exist in `from` into a new folder and makes it read-only: a tmpfs
    /// remounted read-only as root, else chmod a-w. `None` (said on stderr) where neither
    /// binds this process.
    fn with_copies(from: &Path, names: &[&str]) -> Option<ReadOnlyDir> {
        let dir = tempfile::tempdir().unwrap();
        let root = unsafe { libc::geteuid() } == 0;
        let run = |args: &[&str]| {
            Command::new(args[0])
                .args(&args[1..])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let at = dir.path().to_str().unwrap().to_string();
        let mounted = root && run(&["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", &at]);
        for name in names {
            let source = from.join(name);
            if source.exists() {
                std::fs::copy(&source, dir.path().join(name)).unwrap();
            }
        }
        if mounted {
            if !run(&["mount", "-o", "remount,ro", &at]) {
                run(&["umount", "-l", &at]);
                eprintln!("not run: the tmpfs could not be remounted read-only");
                return None;
            }
            return Some(ReadOnlyDir { dir, mounted });
        }
        if root {
            eprintln!(
                "not run: root may write a chmod-ed folder, and mounting a read-only tmpfs was refused"
            );
            return None;
        }
        eprintln!("mount needs root: the folder is made read-only with chmod (EACCES, not EROFS)");
        use std::os::unix::fs::PermissionsExt;
        for name in names {
            let p = dir.path().join(name);
            if p.exists() {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
            }
        }
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        Some(ReadOnlyDir { dir, mounted })
    }

    fn index(&self) -> std::path::PathBuf {
        self.dir.path().join("index.sqlite")
    }
}

impl Drop for ReadOnlyDir {
    fn drop(&mut self) {
        let at = self.dir.path().to_str().unwrap().to_string();
        if self.mounted {
            let _ = Command::new("umount").args(["-l", &at]).status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755));
        }
    }
}

const INDEX_FILES: [&str; 3] = ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"];

/// How a writer left the index: what a `-wal` and `-shm` beside it hold.
#[derive(Clone, Copy, Debug)]
enum Left {
    /// Every commit still in the WAL (no checkpoint): a writer killed mid-run.
    CommitsInTheWal,
    /// An empty `-wal` and a `-shm` saying so: a connection that opened the index after the
    /// last writer folded it back and was never closed (what `quarry index` leaves behind).
    AnEmptyWal,
}

/// An index of `n` files of about 2 KB each, and copies of its files taken while a connection
/// still has it open, left as `left` says.
fn index_left_open(n: usize, left: Left) -> tempfile::TempDir {
    let live = tempfile::tempdir().unwrap();
    let path = live.path().join("index.sqlite");
    let mut store = SqliteStore::open(&path).unwrap();
    store
        .conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    let repo = store.ensure_repo("demo", "/src/demo").unwrap().id;
    let body = "    total = total + value * factor  # accumulate the weighted sum\n".repeat(30);
    for start in (0..n).step_by(256) {
        let upserts = (start..n.min(start + 256))
            .map(|i| {
                let text = format!("def handler_{i}(value, factor):\n{body}    return total\n");
                file(
                    &format!("pkg/m{i}.py"),
                    &format!("h{i}"),
                    vec![chunk(1, 32, Some(&format!("handler_{i}")), &text)],
                )
            })
            .collect();
        let batch = IndexBatch {
            upserts,
            ..Default::default()
        };
        store.apply(repo, &batch).unwrap();
    }
    store.finish_run(repo, &Default::default()).unwrap();
    // Kept open until the files are copied.
    let (mut writer, mut reader) = (None, None);
    match left {
        Left::CommitsInTheWal => writer = Some(store),
        Left::AnEmptyWal => {
            // Closed: folded back, its -wal and -shm deleted; then opened again and read.
            drop(store);
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0))
                .unwrap();
            let wal = live.path().join("index.sqlite-wal");
            assert_eq!(std::fs::metadata(wal).unwrap().len(), 0);
            reader = Some(conn);
        }
    }
    let stale = tempfile::tempdir().unwrap();
    for name in INDEX_FILES {
        std::fs::copy(live.path().join(name), stale.path().join(name)).unwrap();
    }
    drop((writer, reader));
    stale
}

fn answers(store: &SqliteStore, name: &str) -> Vec<String> {
    store
        .search_lexical(&query(name))
        .unwrap()
        .into_iter()
        .map(|hit| hit.path)
        .collect()
}

#[test]
fn a_healthy_index_on_a_read_only_mount_opens_read_only_and_answers() {
    // Closed by its writer (no -wal, no -shm), and left with a stale -wal and -shm.
    let closed = tempfile::tempdir().unwrap();
    {
        let mut store = SqliteStore::open(&closed.path().join("index.sqlite")).unwrap();
        let repo = store.ensure_repo("demo", "/src/demo").unwrap().id;
        let batch = IndexBatch {
            upserts: vec![file(
                "app/config.py",
                "h1",
                vec![chunk(
                    1,
                    2,
                    Some("parse_config_file"),
                    "def parse_config_file(path):\n    return toml.load(path)\n",
                )],
            )],
            ..Default::default()
        };
        store.apply(repo, &batch).unwrap();
        store.finish_run(repo, &Default::default()).unwrap();
    }
    let killed = index_left_open(20, Left::CommitsInTheWal);
    let reopened = index_left_open(20, Left::AnEmptyWal);
    for (from, name, want) in [
        (closed.path(), "parse_config_file", "app/config.py"),
        (killed.path(), "handler_7", "pkg/m7.py"),
        (reopened.path(), "handler_7", "pkg/m7.py"),
    ] {
        let Some(ro) = ReadOnlyDir::with_copies(from, &INDEX_FILES) else {
            return;
        };
        let store = SqliteStore::open_with(&ro.index(), Access::Read)
            .unwrap_or_else(|e| panic!("a read-only index must open: {e:#}"));
        assert_eq!(
            answers(&store, name).first().map(String::as_str),
            Some(want)
        );
        drop(store);
        assert_eq!(check_file(&ro.index()), Checked::Sound);
        assert_eq!(check_file_deep(&ro.index()), Checked::Sound);
        // An error met on it is not turned into damage either.
        let met = anyhow::Error::new(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            None,
        ));
        assert!(!is_corrupt(&diagnose(&ro.index(), met)));
    }
}

#[test]
fn a_file_that_cannot_be_opened_here_is_not_called_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    for code in [
        rusqlite::ffi::SQLITE_CANTOPEN,
        rusqlite::ffi::SQLITE_READONLY,
        rusqlite::ffi::SQLITE_PERM,
    ] {
        let e = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        let checked = Checked::from_error(&path, &e);
        assert!(
            matches!(&checked, Checked::Busy(why) if why.contains("not damage")),
            "{checked:?}"
        );
    }
}

#[test]
fn a_deep_check_of_a_read_only_folder_with_a_stale_wal_ends_and_leaves_nothing() {
    // More pages than one backup step of the old check copied (1,024): it restarted after
    // every step, forever, where the WAL was empty.
    for left in [Left::AnEmptyWal, Left::CommitsInTheWal] {
        deep_check_ends_and_leaves_nothing(left);
    }
}

fn deep_check_ends_and_leaves_nothing(left: Left) {
    let stale = index_left_open(1500, left);
    let Some(ro) = ReadOnlyDir::with_copies(stale.path(), &INDEX_FILES) else {
        return;
    };
    let pages: i64 = {
        let store = SqliteStore::open_with(&ro.index(), Access::Read).unwrap();
        store
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap()
    };
    assert!(pages > 1024, "{pages} pages");
    let scratch = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(".check-") || n.starts_with("quarry-check-"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let temp_before = scratch(&std::env::temp_dir());
    let (sender, receiver) = std::sync::mpsc::channel();
    let index = ro.index();
    std::thread::spawn(move || {
        let _ = sender.send(check_file_deep(&index));
    });
    let checked = receiver
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("{left:?}: the deep check of a read-only folder must end"));
    assert_eq!(checked, Checked::Sound, "{left:?}");
    assert!(scratch(ro.dir.path()).is_empty());
    let left: Vec<String> = scratch(&std::env::temp_dir())
        .into_iter()
        .filter(|n| !temp_before.contains(n))
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}
