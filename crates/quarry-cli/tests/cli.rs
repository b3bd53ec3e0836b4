//! End-to-end tests of the `quarry` binary: index, search, status, incremental updates and
//! the ways input and index files go wrong.

mod common;

use common::{sample_repo, Env};

#[test]
fn index_then_search_finds_definitions_by_split_identifiers() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path()]);

    let out = env.ok(&["search", "parse config file"]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("src/config.rs:3-7"), "{out}");
    assert!(first.contains("parse_config_file"), "{out}");
    assert!(!out.contains('\x1b'), "piped output must be plain");

    let json = env.json(&["search", "get user name", "-k", "3", "--mode", "lexical"]);
    assert_eq!(json["query"], "get user name");
    assert_eq!(json["mode"], "lexical");
    let top = &json["results"][0];
    assert_eq!(top["path"], "app/users.py");
    // A small class is one chunk, named after the class.
    assert_eq!(top["symbol"], "UserStore");
    assert_eq!(top["language"], "python");
    for key in [
        "id",
        "repo",
        "path",
        "start_line",
        "end_line",
        "symbol",
        "kind",
        "language",
        "score",
        "text",
    ] {
        assert!(top.get(key).is_some(), "result lacks {key}: {top}");
    }
    assert!(top["text"].as_str().unwrap().contains("def getUserName"));
    let index = &json["index"];
    assert_eq!(index["files"], 5);
    assert!(index["chunks"].as_u64().unwrap() >= 5);
    assert!(index["indexed_at"].as_str().unwrap().ends_with('Z'));
    assert!(json["results"].as_array().unwrap().len() <= 3);
}

#[test]
fn filters_by_language_path_and_repo() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--name", "demo"]);
    let json = env.json(&["search", "retry backoff upload", "--lang", "markdown"]);
    let results = json["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(results.iter().all(|r| r["language"] == "markdown"));
    assert_eq!(results[0]["symbol"], "Retry policy");

    let json = env.json(&["search", "upload", "--path", "web/*.ts"]);
    assert!(json["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["path"] == "web/upload.ts"));

    let err = env.fails(&["search", "upload", "--repo", "nope"]);
    assert!(
        err.contains("no repo named `nope`") && err.contains("demo"),
        "{err}"
    );
    let err = env.fails(&["search", "upload", "--lang", "cobol"]);
    assert!(err.contains("unknown language"), "{err}");
}

#[test]
fn reindex_reads_only_changes_and_rebuild_starts_over() {
    let env = Env::new();
    sample_repo(&env);
    let first = env.json(&["index", env.repo_path()]);
    assert_eq!(first["repos"][0]["added"], 5);

    let again = env.json(&["index", env.repo_path()]);
    let r = &again["repos"][0];
    assert_eq!(
        (
            r["added"].as_u64(),
            r["changed"].as_u64(),
            r["removed"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(r["unchanged"], 5);

    env.write(
        "app/users.py",
        "def rename_account(account):\n    return account\n",
    );
    std::fs::remove_file(env.repo.path().join("notes.txt")).unwrap();
    env.write(
        "lib/new_module.go",
        "package lib\n\nfunc ComputeChecksum(data []byte) uint32 {\n\treturn 0\n}\n",
    );
    let update = env.json(&["index", env.repo_path()]);
    let r = &update["repos"][0];
    assert_eq!(
        (
            r["added"].as_u64(),
            r["changed"].as_u64(),
            r["removed"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(r["unchanged"], 3);
    let changes: Vec<(String, String)> = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        changes.contains(&("notes.txt".into(), "removed".into())),
        "{changes:?}"
    );
    assert!(
        changes.contains(&("app/users.py".into(), "changed".into())),
        "{changes:?}"
    );
    assert!(
        changes.contains(&("lib/new_module.go".into(), "added".into())),
        "{changes:?}"
    );

    // The only definition is gone, and nothing else holds the whole name: no results, exit 1.
    env.json_nothing(&["search", "getUserName"]);
    let json = env.json(&["search", "compute checksum"]);
    assert_eq!(json["results"][0]["symbol"], "ComputeChecksum");

    // Content unchanged but mtime moved: re-hashed, reported unchanged, nothing re-chunked.
    env.write(
        "src/config.rs",
        std::fs::read(env.repo.path().join("src/config.rs")).unwrap(),
    );
    let touched = env.json(&["index", env.repo_path()]);
    assert_eq!(touched["repos"][0]["changed"], 0);

    // A limit on files skips new ones and never takes indexed ones out: with five indexed,
    // `--max-files 2` keeps all five, updates a changed one and skips the new one.
    env.write("src/later.rs", "pub fn added_later() {}\n");
    env.write(
        "app/users.py",
        "def rename_account(account, name):\n    return name\n",
    );
    let limited = env.json(&["index", "--max-files", "2", env.repo_path()]);
    let r = &limited["repos"][0];
    assert_eq!(
        (
            r["added"].as_u64(),
            r["changed"].as_u64(),
            r["removed"].as_u64()
        ),
        (Some(0), Some(1), Some(0)),
        "{limited}"
    );
    assert_eq!(
        (r["files"].as_u64(), r["skipped"]["max-files"].as_u64()),
        (Some(5), Some(1)),
        "{limited}"
    );
    std::fs::remove_file(env.repo.path().join("src/later.rs")).unwrap();

    let rebuilt = env.json(&["index", "--rebuild", env.repo_path()]);
    assert_eq!(rebuilt["repos"][0]["added"], 5);
    assert_eq!(rebuilt["repos"][0]["files"], 5);
}

#[test]
fn status_reports_repos_languages_and_skips() {
    let env = Env::new();
    sample_repo(&env);
    env.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0");
    env.write("data/blob.bin2", b"abc\0def");
    env.write("big.txt", vec![b'x'; 4096]);
    env.ok(&["index", env.repo_path(), "--max-file-size", "2K"]);
    let json = env.json(&["status"]);
    let repo = &json["repos"][0];
    assert_eq!(repo["files"], 5);
    assert_eq!(repo["repo"]["skipped"]["binary"], 2);
    assert_eq!(repo["repo"]["skipped"]["too-large"], 1);
    assert_eq!(repo["languages"]["python"], 1);
    assert_eq!(repo["languages"]["markdown"], 1);
    assert!(json["store_bytes"].as_u64().unwrap() > 0);
    let human = env.ok(&["status"]);
    assert!(human.contains("skipped: binary 2, too-large 1"), "{human}");
    assert!(human.contains("python 1"), "{human}");
}

#[test]
fn status_and_search_before_any_index() {
    let env = Env::new();
    let json = env.json(&["status"]);
    assert_eq!(json["repos"].as_array().unwrap().len(), 0);
    let err = env.fails(&["search", "anything"]);
    assert!(err.contains("quarry index"), "{err}");
}

#[test]
fn bad_files_are_skipped_or_indexed_never_fatal() {
    let env = Env::new();
    env.write("ok.py", "def fine():\n    return 1\n");
    env.write(
        "latin1.py",
        b"# caf\xe9 na\xefve\ndef legacy_encoding_marker():\n    pass\n",
    );
    env.write("empty.rs", "");
    env.write("broken.rs", "fn broken( {{{ struct impl ]]]\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(env.repo.path(), env.repo.path().join("loop")).unwrap();
        std::os::unix::fs::symlink("/etc", env.repo.path().join("outside")).unwrap();
    }
    let json = env.json(&["index", env.repo_path()]);
    let r = &json["repos"][0];
    assert_eq!(r["files"], 4);
    assert_eq!(r["lossy_utf8"], 1);
    #[cfg(unix)]
    assert_eq!(r["skipped"]["symlink"], 2);
    let hits = env.json(&["search", "legacy encoding marker"]);
    assert_eq!(hits["results"][0]["path"], "latin1.py");

    let err = env.fails(&["index", "/no/such/folder/anywhere"]);
    assert!(err.contains("/no/such/folder/anywhere"), "{err}");
    let file = env.repo.path().join("ok.py");
    let err = env.fails(&["index", file.to_str().unwrap()]);
    assert!(err.contains("it is a file"), "{err}");
    // ... and registered no repo named after the file.
    let repos = env.json(&["status"])["repos"].as_array().unwrap().len();
    assert_eq!(repos, 1);
}

#[test]
fn empty_repo_indexes_to_nothing() {
    let env = Env::new();
    let json = env.json(&["index", env.repo_path()]);
    assert_eq!(json["repos"][0]["files"], 0);
    env.json_nothing(&["search", "anything"]);
}

#[test]
fn a_git_repository_indexes_without_its_git_folder() {
    let env = Env::new();
    sample_repo(&env);
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.repo.path())
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("git not available; skipping");
        return;
    }
    env.write(".gitignore", "generated/\n");
    env.write("generated/out.py", "def generated_code(): pass\n");
    let json = env.json(&["index", env.repo_path()]);
    assert_eq!(
        json["repos"][0]["files"], 5,
        "neither .git nor ignored files are indexed"
    );
}

#[test]
fn several_repos_share_one_workspace() {
    let env = Env::new();
    sample_repo(&env);
    let other = tempfile::tempdir().unwrap();
    common::write_file(
        other.path(),
        "billing/invoice.rb",
        b"class Invoice\n  def total_amount\n    lines.sum(&:amount)\n  end\nend\n",
    );
    env.ok(&["index", env.repo_path(), other.path().to_str().unwrap()]);
    let status = env.json(&["status"]);
    assert_eq!(status["repos"].as_array().unwrap().len(), 2);

    let all = env.json(&["search", "total amount"]);
    assert_eq!(all["results"][0]["path"], "billing/invoice.rb");
    assert_eq!(all["results"][0]["symbol"], "Invoice");
    assert_eq!(all["index"]["repos"].as_array().unwrap().len(), 2);

    let name = env.repo.path().file_name().unwrap().to_str().unwrap();
    env.json_nothing(&[
        "search",
        "total amount",
        "--repo",
        name,
        "--mode",
        "lexical",
    ]);
    let only = env.json(&["search", "user name", "--repo", name]);
    assert!(only["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["repo"] == name));
    assert_eq!(only["index"]["files"], 5);

    // Run inside one repo, a search covers that repo; --all-repos covers both, and human
    // output then names each result's repo.
    let inside = |args: &[&str]| {
        let out = env
            .quarry()
            .args(args)
            .current_dir(env.repo.path().join("app"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let scoped: serde_json::Value =
        serde_json::from_str(&inside(&["search", "user name", "--json"])).unwrap();
    assert_eq!(scoped["index"]["repos"], serde_json::json!([name]));
    assert_eq!(scoped["results"][0]["path"], "app/users.py");
    let elsewhere = env
        .quarry()
        .args(["search", "total amount", "--mode", "lexical"])
        .current_dir(env.repo.path().join("app"))
        .output()
        .unwrap();
    assert_eq!(
        elsewhere.status.code(),
        Some(1),
        "only the other repo has it: {}",
        String::from_utf8_lossy(&elsewhere.stdout)
    );
    let every = inside(&["search", "total amount", "--all-repos"]);
    let other_name = other.path().file_name().unwrap().to_str().unwrap();
    assert!(
        every.starts_with(&format!("[{other_name}] billing/invoice.rb:1-")),
        "{every}"
    );
}

#[test]
fn a_search_run_in_a_repo_the_workspace_lacks_says_whose_answers_it_gives() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let unindexed = tempfile::tempdir().unwrap();
    std::fs::create_dir(unindexed.path().join(".git")).unwrap();
    std::fs::create_dir(unindexed.path().join("src")).unwrap();
    let search_in = |dir: &std::path::Path| {
        let out = env
            .quarry()
            .args(["search", "user name", "--json"])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success());
        (
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (stdout, stderr) = search_in(&unindexed.path().join("src"));
    let name = env.repo.path().file_name().unwrap().to_str().unwrap();
    let root = unindexed.path().display();
    assert!(
        stderr.contains(&format!("{root} is not in this workspace"))
            && stderr.contains(&format!("searching {name} instead"))
            && stderr.contains(&format!("`quarry index {root}` adds it")),
        "{stderr}"
    );
    // The answers are still there, on stdout alone.
    let json: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(json["results"][0]["path"], "app/users.py");
    // Inside the indexed repo, nothing is said.
    let (_, stderr) = search_in(env.repo.path());
    assert!(!stderr.contains("not in this workspace"), "{stderr}");
}

#[test]
fn only_the_first_results_carry_their_text() {
    let env = Env::new();
    for i in 0..12 {
        env.write(
            &format!("src/widget_{i}.py"),
            format!("def make_widget_{i}():\n    return Widget({i})\n"),
        );
    }
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let json = env.json(&["search", "widget", "-k", "12", "--full-text", "3"]);
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 12);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["text"].is_string(), i < 3, "result {i}: {r}");
        assert!(r["path"].is_string() && r["start_line"].is_u64());
    }
    // The default: 16 results at most, 8 of them with text.
    let json = env.json(&["search", "widget"]);
    let with_text = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["text"].is_string())
        .count();
    assert_eq!(with_text, 8);
}

/// `quarry … | head -1`: a reader that has gone is a normal end — exit 0, no error text —
/// for every command that prints results (the pipe's read end is closed before quarry runs).
#[test]
fn a_closed_stdout_is_a_normal_end() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    for args in [
        vec!["search", "config", "--mode", "lexical"],
        vec!["search", "config", "--mode", "lexical", "--json"],
        vec!["status"],
        vec!["summary", "src/config.rs"],
        vec!["config", "list"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = env
            .quarry()
            .args(&args)
            .current_dir(env.repo_path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(
            !stderr.to_lowercase().contains("broken pipe"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_json_reader_that_closes_early_ends_quietly() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    for args in [
        &[
            "search", "config", "-k", "200", "--json", "--mode", "lexical",
        ][..],
        &[
            "summary",
            &format!("{}/src/config.rs", env.repo_path()),
            "--json",
        ][..],
    ] {
        let mut child = env
            .quarry()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before a byte is read: every write meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {said}");
        assert!(!said.contains("Broken pipe"), "{args:?}: {said}");
    }
}

#[test]
fn summary_of_a_missing_file_says_it_is_missing() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let said = env.fails(&["summary", "nonexist.py"]);
    assert!(said.contains("no such file"), "{said}");
    assert!(!said.contains("MiB"), "{said}");
}

/// After `index --no-embed` with the model installed (the suite installs it), `status` says
/// the model is there and how to embed, not to install it.
#[test]
fn status_after_no_embed_says_the_installed_model_waits() {
    let env = Env::new();
    common::sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let status = env.ok(&["status"]);
    assert!(
        status.contains("embedding: none yet (the model is installed"),
        "{status}"
    );
    assert!(!status.contains("quarry model install"), "{status}");
}

/// Code in a language quarry does not parse is named where it matters: `index` and `status`
/// say it is kept as text, and `callers` says its calls are not known (it said "no call of X
/// in the index" where grep found the calls). A language quarry parses (Kotlin, since it has
/// a grammar) answers `callers` from its calls.
#[test]
fn code_quarry_does_not_parse_is_named_not_passed_over() {
    let env = Env::new();
    env.write(
        "lib/main.ml",
        "let main () = greet \"x\"\n\nlet greet name = print_endline name\n",
    );
    env.write(
        "Main.kt",
        "fun main() {\n    welcome(\"x\")\n}\n\nfun welcome(name: String) {\n    println(name)\n}\n",
    );
    env.write("a.py", "def f():\n    pass\n");
    let out = env.run(&["index", env.repo_path(), "--no-embed"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("kept as text, not parsed") && said.contains("ocaml 1 file"),
        "{said}"
    );
    assert!(!said.contains("kotlin"), "{said}");
    let report = env.json(&["index", env.repo_path(), "--no-embed"]);
    assert_eq!(
        report["repos"][0]["kept_as_text"][0]["language"], "ocaml",
        "{report}"
    );
    assert!(env.ok(&["status"]).contains("ocaml 1 file"));
    let out = env.run(&["callers", "greet"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("ocaml (1 file) is not parsed"),
        "{said}"
    );
    let callers = env.ok(&["callers", "welcome"]);
    assert!(
        callers.contains("main") && callers.contains("Main.kt"),
        "{callers}"
    );
}

/// `quarry --help` names every language quarry parses, from the one list of them.
#[test]
fn help_lists_the_parsed_languages() {
    let env = Env::new();
    let help = env.ok(&["--help"]);
    for language in ["python", "kotlin", "swift", "shell", "lua", "scala", "dart"] {
        assert!(help.contains(language), "{language}: {help}");
    }
}

/// A script without an extension (`bin/deploy`, `#!/usr/bin/env bash`) is indexed in its
/// shebang's language: its functions are definitions the name route answers, and its outline
/// is shell's.
#[test]
fn a_script_without_an_extension_is_parsed_by_its_shebang() {
    let env = Env::new();
    env.write(
        "bin/deploy",
        "#!/usr/bin/env bash\nset -e\n\ndeploy_app() {\n    echo deploying\n}\n\ndeploy_app \"$@\"\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let found: serde_json::Value =
        serde_json::from_str(&env.ok(&["search", "deploy_app", "--json"])).unwrap();
    assert_eq!(found["results"][0]["path"], "bin/deploy", "{found}");
    assert_eq!(found["results"][0]["symbol"], "deploy_app", "{found}");
    assert_eq!(found["results"][0]["language"], "shell", "{found}");
    let outline: serde_json::Value = serde_json::from_str(&env.ok(&[
        "summary",
        &format!("{}/bin/deploy", env.repo_path()),
        "--json",
    ]))
    .unwrap();
    assert_eq!(outline["language"], "shell", "{outline}");
    assert_eq!(outline["items"][0]["name"], "deploy_app", "{outline}");
}

/// `quarry slice FILE:LINE`: the lines that can change a variable there, with their code;
/// `--json` gives the lines and runs; a language without a flow table says which have one.
#[test]
fn slice_gives_the_lines_that_can_change_a_variable() {
    let env = Env::new();
    env.write(
        "calc.py",
        "def total(items, limit):\n    count = 0\n    acc = 0\n    for item in items:\n        if count >= limit:\n            break\n        acc = acc + item\n        count += 1\n    label = \"done\"\n    return acc\n",
    );
    let file = format!("{}/calc.py", env.repo_path());
    let text = env.ok(&["slice", &format!("{file}:10"), "--var", "acc"]);
    assert!(
        text.contains("what can change `acc` at line 10, in total"),
        "{text}"
    );
    assert!(
        text.contains("acc = acc + item") && !text.contains("label"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["slice", &format!("{file}:10"), "--var", "acc", "--json"]))
            .unwrap();
    assert_eq!(
        json["lines"],
        serde_json::json!([1, 2, 3, 4, 5, 7, 8, 10]),
        "{json}"
    );
    // The extract view carries each function's flow: a loop and an `if`, complexity 3.
    let extract: serde_json::Value =
        serde_json::from_str(&env.ok(&["summary", &file, "--mode", "extract", "--json"])).unwrap();
    assert_eq!(extract["flow"][0]["name"], "total", "{extract}");
    assert_eq!(extract["flow"][0]["complexity"], 3, "{extract}");
    let blocks = extract["flow"][0]["cfg"]["blocks"].as_array().unwrap();
    assert!(
        blocks
            .iter()
            .any(|b| b["start_line"] == 7 && b["end_line"] == 8),
        "{extract}"
    );
    let pairs = extract["flow"][0]["dfg"]["edges"].as_array().unwrap();
    assert!(
        pairs
            .iter()
            .any(|p| p["var"] == "acc" && p["def_line"] == 7 && p["use_line"] == 10),
        "{extract}"
    );
    // Text: a block per line, where control goes and why.
    let text = env.ok(&["summary", &file, "--mode", "extract"]);
    for line in [
        "total 1-10  complexity 3",
        "    4 → 5 true, 9 false",
        "    5 → 6 true, 7 false",
        "    6 → 9 break",
        "    7-8 → 4 back",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    // `--symbol` keeps one function; a name the file lacks says so.
    let one: serde_json::Value = serde_json::from_str(&env.ok(&[
        "summary", &file, "--mode", "extract", "--symbol", "nothing", "--json",
    ]))
    .unwrap();
    assert!(one.get("flow").is_none(), "{one}");
    assert!(
        one["flow_note"]
            .as_str()
            .unwrap()
            .contains("no function named `nothing`"),
        "{one}"
    );
    env.write("Main.hs", "main = print 1\n");
    let out = env.run(&["slice", &format!("{}/Main.hs:1", env.repo_path())]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("they are for") && said.contains("python"),
        "{said}"
    );
}
