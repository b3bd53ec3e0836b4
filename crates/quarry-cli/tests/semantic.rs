//! Semantic and hybrid search with the real local model (installed by scripts/install-model.sh,
//! which the README's install command and CI run), and the lexical fallback without it.

mod common;

use common::{sample_repo, Env};

#[test]
fn finds_code_by_meaning_when_no_word_matches() {
    let env = Env::new();
    sample_repo(&env);
    let report = env.json(&["index", env.repo_path()]);
    let embedding = &report["embedding"];
    assert!(
        embedding["embedded"].as_u64().unwrap() > 0,
        "the model must be installed: {report}"
    );
    assert_eq!(
        embedding["coverage"]["embedded"],
        embedding["coverage"]["total"]
    );

    // No word of the query is in UploadQueue.requeueWithBackoff's chunk. (An earlier query,
    // "where do we schedule another attempt for a job", sat on the answer floor: cosine 0.365
    // in fp32, 0.350 in int8, against a floor of 0.35.)
    let json = env.json(&[
        "search",
        "put a task back in line after waiting longer each time",
        "--mode",
        "semantic",
        "-k",
        "2",
    ]);
    assert_eq!(json["mode"], "semantic");
    let paths: Vec<&str> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"web/upload.ts"), "{json}");
    let cosine = json["results"][0]["score"].as_f64().unwrap();
    assert!(cosine > 0.0 && cosine <= 1.0);

    let json = env.json(&["search", "parse_config_file reads settings"]);
    assert_eq!(json["mode"], "hybrid", "auto is hybrid once vectors exist");
    assert_eq!(json["results"][0]["path"], "src/config.rs");
    let parts = &json["results"][0]["score_parts"];
    assert_eq!(parts["lexical_rank"], 1);
    assert!(
        parts["boost"].as_f64().unwrap() >= 0.25,
        "named symbol is boosted: {parts}"
    );
    assert_eq!(json["coverage"]["embedded"], json["coverage"]["total"]);
    assert_eq!(json["plan"]["identifiers"][0], "parse_config_file");
    let explained = env.json(&["search", "parse_config_file reads settings", "--explain"]);
    assert_eq!(explained["plan"]["identifiers"][0], "parse_config_file");
    assert_eq!(
        explained["files"][0]["path"], "src/config.rs",
        "{explained}"
    );

    let status = env.json(&["status"]);
    assert_eq!(
        status["embedding"]["embedded"],
        status["embedding"]["total"]
    );
    assert!(status["embedding"]["model"]
        .as_str()
        .unwrap()
        .starts_with("all-MiniLM-L6-v2"));

    // Re-indexing unchanged files embeds nothing again.
    let again = env.json(&["index", env.repo_path()]);
    assert_eq!(again["embedding"]["embedded"], 0);
    env.write("src/config.rs", "pub fn load_settings() {}\n");
    let changed = env.json(&["index", env.repo_path()]);
    assert_eq!(changed["embedding"]["embedded"], 1);

    let human = env.ok(&[
        "search",
        "retry with backoff",
        "--mode",
        "hybrid",
        "--explain",
    ]);
    assert!(human.starts_with("plan: mode Hybrid"), "{human}");
    assert!(human.contains("semantic #"), "{human}");

    // A query that matches nothing, in words or in meaning, is not answered with the nearest
    // neighbours: no results, exit 1 — in every mode. Errors exit 2.
    for mode in ["auto", "semantic", "lexical"] {
        env.json_nothing(&["search", "zzqqxx_nonexistent_word", "--mode", mode]);
    }
    let human = env.run(&["search", "zzqqxx_nonexistent_word"]);
    assert_eq!(human.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&human.stderr).contains("no results"));
    assert_eq!(
        env.run(&["search", "x", "--repo", "nope"]).status.code(),
        Some(2)
    );
}

#[test]
fn without_vectors_search_is_lexical_and_says_how_to_get_more() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let out = env.run(&["search", "parse config file"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("searching lexically"), "{stderr}");
    let json = env.json(&["search", "parse config file"]);
    assert_eq!(json["mode"], "lexical");
    let err = env.fails(&["search", "parse config file", "--mode", "semantic"]);
    assert!(err.contains("no vectors yet"), "{err}");
}

#[test]
fn a_missing_model_leaves_indexing_and_search_lexical() {
    let env = Env::new();
    sample_repo(&env);
    let missing = env.home.path().join("no-model-here");
    let out = env
        .quarry()
        .env("QUARRY_MODEL_DIR", &missing)
        .args(["index", env.repo_path()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("semantic search is off") && stderr.contains("quarry model install"),
        "{stderr}"
    );
    // The hint is said once per workspace, not on every command.
    let out = env
        .quarry()
        .env("QUARRY_MODEL_DIR", &missing)
        .args(["index", env.repo_path()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("semantic search is off"), "{stderr}");
    let out = env
        .quarry()
        .env("QUARRY_MODEL_DIR", &missing)
        .args(["search", "config", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "lexical");
    assert_eq!(json["results"][0]["path"], "src/config.rs");
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_indexing_keeps_what_was_stored_and_names_the_resume_command() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    let env = Env::new();
    for i in 0..400 {
        env.write(
            &format!("handlers/h{i}.py"),
            format!("def handler_{i}(request):\n    \"\"\"Handle request {i}.\"\"\"\n    return request.value * {i}\n"),
        );
    }
    let mut child = env
        .quarry()
        .args(["index", env.repo_path()])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // The lexical phase's summary line comes first; embedding 400 chunks takes seconds.
    while !seen.contains("400 files") {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    stderr.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("stopping after the current batch"), "{seen}");
    assert!(
        seen.contains("chunks have vectors"),
        "the embedding phase's summary: {seen}"
    );
    // The hint names this workspace, so that pasting it resumes this index and no other.
    let hint = format!(
        "quarry --index-dir {} index {}",
        env.index_dir().display(),
        env.repo_path()
    );
    assert!(seen.contains(&format!("`{hint}` resumes")), "{seen}");

    // What was stored answers; part of it has vectors; the named command finishes the job.
    let found = env.json(&["search", "handler_7", "--mode", "lexical", "-k", "1"]);
    assert_eq!(found["results"][0]["path"], "handlers/h7.py");
    let embedded = env.json(&["status"])["embedding"]["embedded"]
        .as_u64()
        .unwrap();
    assert!(embedded < 400, "{embedded}");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_quarry"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pasted = std::process::Command::new("sh")
        .args(["-c", &hint])
        .env("PATH", path)
        .env("QUARRY_DAEMON", "off")
        .output()
        .unwrap();
    assert!(pasted.status.success(), "{pasted:?}");
    assert_eq!(env.json(&["status"])["embedding"]["embedded"], 400);
}

#[test]
fn an_index_embedded_at_the_other_precision_is_still_searched_by_meaning() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["config", "set", "embed.precision", "fp32"]);
    let report = env.json(&["index", env.repo_path()]);
    let model = report["embedding"]["model"].as_str().unwrap().to_string();
    assert!(!model.contains("int8"), "{model}");
    // Back to the default (int8): the fp32 vectors are searched with fp32 query vectors, not
    // turned off until a re-embed.
    env.ok(&["config", "unset", "embed.precision"]);
    let out = env.run(&[
        "search",
        "put a task back in line after waiting longer each time",
        "--mode",
        "semantic",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["results"][0]["path"], "web/upload.ts", "{json}");
    // Indexing at the new precision re-embeds, as for any model change.
    let report = env.json(&["index", env.repo_path()]);
    assert_eq!(report["embedding"]["model_changed"], true, "{report}");
    assert!(report["embedding"]["model"]
        .as_str()
        .unwrap()
        .contains("onnx-int8"));
}
