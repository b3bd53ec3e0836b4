use super::*;
use quarry_core::content_hash;
use std::fs;

fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn paths(d: &Discovery) -> Vec<&str> {
    d.files.iter().map(|c| c.rel_path.as_str()).collect()
}

#[test]
fn honours_ignore_files_and_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/main.rs", b"fn main() {}\n");
    write(root, "build/out.rs", b"fn gen() {}\n");
    write(root, "vendor/lib.py", b"x = 1\n");
    write(root, "notes/secret.md", b"# s\n");
    write(root, ".hidden/file.rs", b"fn h() {}\n");
    write(root, ".gitignore", b"build/\n");
    write(root, ".ignore", b"vendor/\n");
    write(root, IGNORE_FILE, b"notes/\n");
    let found = discover(root, &DiscoverOptions::default()).unwrap();
    assert_eq!(paths(&found), ["src/main.rs"]);
    assert_eq!(found.files[0].language, Language::Rust);
}

#[test]
fn counts_binary_large_and_max_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", b"print(1)\n");
    write(root, "b.py", b"print(2)\n");
    write(root, "c.py", b"print(3)\n");
    write(root, "logo.png", b"\x89PNG");
    write(root, "big.txt", &vec![b'x'; 2048]);
    let opts = DiscoverOptions {
        max_file_size: 1024,
        max_files: 2,
        ..Default::default()
    };
    let found = discover(root, &opts).unwrap();
    assert_eq!(paths(&found), ["a.py", "b.py"]);
    assert_eq!(found.skipped.get(reason::BINARY), Some(&1));
    assert_eq!(found.skipped.get(reason::TOO_LARGE), Some(&1));
    assert_eq!(found.skipped.get(reason::MAX_FILES), Some(&1));
}

#[cfg(unix)]
#[test]
fn never_follows_symlinks_out_or_into_loops() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.rs", b"fn secret() {}\n");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "lib.rs", b"fn lib() {}\n");
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(root, root.join("loop")).unwrap();
    std::os::unix::fs::symlink(root.join("lib.rs"), root.join("alias.rs")).unwrap();
    let found = discover(root, &DiscoverOptions::default()).unwrap();
    assert_eq!(paths(&found), ["lib.rs"]);
    assert_eq!(found.skipped.get(reason::SYMLINK), Some(&3));
}

#[test]
fn missing_root_is_a_clear_error() {
    let err = discover(
        Path::new("/definitely/not/here"),
        &DiscoverOptions::default(),
    )
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("/definitely/not/here"),
        "{err:#}"
    );
}

#[test]
fn reads_text_skips_binary_and_replaces_invalid_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "ok.rs", b"fn ok() {}\n");
    write(root, "nul.dat2", b"abc\0def");
    write(root, "latin1.py", b"# caf\xe9\nx = 1\n");
    match read_text(&root.join("ok.rs"), 1024) {
        FileText::Text { text, lossy, hash } => {
            assert_eq!(text, "fn ok() {}\n");
            assert!(!lossy);
            assert_eq!(hash, content_hash(b"fn ok() {}\n"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        read_text(&root.join("nul.dat2"), 1024),
        FileText::Skipped(reason::BINARY)
    ));
    match read_text(&root.join("latin1.py"), 1024) {
        FileText::Text { text, lossy, .. } => {
            assert!(lossy);
            assert!(text.contains("x = 1"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        read_text(&root.join("ok.rs"), 4),
        FileText::Skipped(reason::TOO_LARGE)
    ));
    assert!(matches!(
        read_text(&root.join("gone.rs"), 1024),
        FileText::Skipped(reason::UNREADABLE)
    ));
}

#[test]
fn minified_files_and_fifos_are_skipped_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A bundle: one 40 KB line.
    let bundle = format!("var a={};\n", "f(1),".repeat(8000));
    write(root, "app.min.js", bundle.as_bytes());
    // Long but hand-written: 200 lines of ordinary length.
    let code: String = (0..200)
        .map(|i| format!("x{i} = compute({i})  # a comment\n"))
        .collect();
    write(root, "ok.py", code.as_bytes());
    // Hand-written with a few long lines (an inlined table of 40 KB among 12,000 ordinary
    // lines): indexed.
    let mut mostly_code: String = (0..12_000)
        .map(|i| format!("  case {i}: return token_{i};\n"))
        .collect();
    mostly_code.push_str(&format!("const TABLE = [{}];\n", "0x1f, ".repeat(7000)));
    write(root, "syntax.js", mostly_code.as_bytes());
    assert!(matches!(
        read_text(&root.join("syntax.js"), 10 << 20),
        FileText::Text { .. }
    ));
    // Rows of generated data, each over 1,000 bytes: skipped.
    let rows: String = (0..20)
        .map(|i| format!("row{i} = [{}]\n", "1, ".repeat(500)))
        .collect();
    write(root, "data.py", rows.as_bytes());
    assert!(matches!(
        read_text(&root.join("data.py"), 10 << 20),
        FileText::Skipped(reason::MINIFIED)
    ));
    assert!(matches!(
        read_text(&root.join("app.min.js"), 10 << 20),
        FileText::Skipped(reason::MINIFIED)
    ));
    assert!(matches!(
        read_text(&root.join("ok.py"), 10 << 20),
        FileText::Text { .. }
    ));
    #[cfg(unix)]
    {
        let fifo = root.join("pipe.py");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Returns at once: opening the FIFO would wait for a writer forever.
        assert!(matches!(
            read_text(&fifo, 10 << 20),
            FileText::Skipped(reason::NOT_REGULAR)
        ));
        // Discovery passes it by, and counts it.
        let found = discover(root, &DiscoverOptions::default()).unwrap();
        assert_eq!(found.skipped.get(reason::NOT_REGULAR), Some(&1));
        assert!(found.files.iter().all(|f| f.rel_path != "pipe.py"));
    }
}
