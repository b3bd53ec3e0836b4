//! `quarry eval` on a small query set over a JSONL document corpus, scored end to end.

mod common;

use common::{write_file, Env};

#[test]
fn eval_scores_a_document_corpus() {
    let env = Env::new();
    let dir = env.repo.path();
    let docs = [
        ("code_1.py", "def read_json_file(path):\n    with open(path) as f:\n        return json.load(f)\n"),
        ("code_2.py", "def reverse_string(s):\n    return s[::-1]\n"),
        ("code_3.py", "def is_iterable(obj):\n    try:\n        iter(obj)\n        return True\n    except TypeError:\n        return False\n"),
    ];
    let corpus: String = docs
        .iter()
        .map(|(p, t)| serde_json::json!({"path": p, "text": t}).to_string() + "\n")
        .collect();
    write_file(dir, "corpus.jsonl", corpus.as_bytes());
    let queries = [
        ("q1", "python read json file", "code_1.py"),
        ("q2", "reverse a string", "code_2.py"),
        ("q3", "check if object is iterable", "code_3.py"),
        ("q4", "open a socket connection", "code_9.py"),
    ];
    let lines: String = queries
        .iter()
        .map(|(id, q, rel)| serde_json::json!({"id": id, "query": q, "repo": "toy", "relevant": [rel], "corpus": "corpus.jsonl"}).to_string() + "\n")
        .collect();
    write_file(dir, "queries.jsonl", lines.as_bytes());
    let qfile = dir.join("queries.jsonl");
    let work = env.home.path().join("evalwork");
    let eval = |modes: &str| {
        env.json(&[
            "eval",
            qfile.to_str().unwrap(),
            "--work-dir",
            work.to_str().unwrap(),
            "--mode",
            modes,
        ])["reports"]
            .as_array()
            .unwrap()
            .clone()
    };
    let report = &eval("lexical")[0];
    assert_eq!(report["queries"], 4);
    assert_eq!(report["mode"], "lexical");
    let m = &report["metrics"];
    // Three answerable queries found at rank 1, one unanswerable.
    assert_eq!(m["hit_at_1"], 0.75);
    assert_eq!(m["mrr"], 0.75);
    assert_eq!(m["recall_at_10"], 0.75);
    let per_query = report["per_query"].as_array().unwrap();
    assert_eq!(per_query.len(), 4);
    // Each answered query carries the file ranking with its scores, best first, for analysis
    // without searching again (bench/history_ceiling.py reads it).
    for q in per_query.iter().filter(|q| q["first_relevant_rank"] == 1) {
        let files = q["ranked_files"].as_array().expect("ranked_files");
        assert!(!files.is_empty() && files.len() <= 20, "{q}");
        assert_eq!(files[0]["path"], q["top"][0], "{q}");
        let scores: Vec<f64> = files.iter().map(|f| f["score"].as_f64().unwrap()).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }
    assert!(
        report["latency_ms_p95"].as_f64().unwrap() >= report["latency_ms_p50"].as_f64().unwrap()
    );
    // Running again reuses the laid-out corpus and gives the same answer.
    let again = eval("lexical");
    assert_eq!(again[0]["metrics"], report["metrics"]);

    // Through the router (`--route`), as `quarry search` answers: a name, a place, a regex.
    let routed: String = [
        ("n1", "is_iterable", "code_3.py"),
        ("n2", "code_2.py:2", "code_2.py"),
        ("n3", "iter\\(obj\\)", "code_3.py"),
    ]
    .iter()
    .map(|(id, q, rel)| serde_json::json!({"id": id, "query": q, "repo": "toy", "relevant": [rel], "corpus": "corpus.jsonl"}).to_string() + "\n")
    .collect();
    write_file(dir, "routed.jsonl", routed.as_bytes());
    let by_route = env.json(&[
        "eval",
        dir.join("routed.jsonl").to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--mode",
        "lexical",
        "--route",
    ]);
    assert_eq!(
        by_route["reports"][0]["metrics"]["hit_at_1"], 1.0,
        "{by_route}"
    );

    // All modes in one run, in the order asked, with the real model: the corpus is embedded
    // once, and the answerable queries are found by each mode.
    let reports = eval("semantic,hybrid,lexical");
    let modes: Vec<&str> = reports
        .iter()
        .map(|r| r["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["semantic", "hybrid", "lexical"]);
    assert_eq!(reports[1]["metrics"]["hit_at_5"], 0.75);
    assert_eq!(reports[2]["metrics"], report["metrics"]);

    let missing = env.fails(&["eval", "/no/such/queries.jsonl"]);
    assert!(missing.contains("/no/such/queries.jsonl"), "{missing}");
}

/// `quarry eval --history` lays each query's history out as it stood at the query's commit:
/// past changes are there to vote, the later fix never is.
#[test]
fn eval_history_holds_only_what_the_query_commit_reaches() {
    use common::git::{commit, head, init};
    let env = Env::new();
    let repo = env.repo.path().join("widgets");
    std::fs::create_dir_all(&repo).unwrap();
    init(&repo);
    write_file(
        &repo,
        "core/widgets.py",
        b"def render_widget(widget, palette):\n    return palette[widget.color]\n",
    );
    write_file(
        &repo,
        "core/colors.py",
        b"def lookup_color(palette, name):\n    return palette[name]\n",
    );
    commit(
        &repo,
        "Add widgets and colors",
        "Ann",
        "2025-01-01T00:00:00Z",
    );
    write_file(&repo, "core/widgets.py", b"def render_widget(widget, palette):\n    color = palette.get(widget.color)\n    return color\n");
    commit(
        &repo,
        "Render widgets with a missing palette colour as none",
        "Ann",
        "2025-01-02T00:00:00Z",
    );
    write_file(&repo, "README.md", b"# Widgets\n");
    commit(&repo, "Add a readme", "Bob", "2025-01-03T00:00:00Z");
    let base = head(&repo);
    write_file(&repo, "core/widgets.py", b"def render_widget(widget, palette):\n    if not palette:\n        return None\n    return palette.get(widget.color)\n");
    commit(
        &repo,
        "Fix crash when the palette is empty in widget rendering",
        "Cid",
        "2025-01-04T00:00:00Z",
    );

    let dir = env.home.path();
    let query = serde_json::json!({
        "id": "w1",
        "query": "Crash when the palette is empty\n\nRendering a widget with an empty palette raises KeyError instead of drawing nothing.\nSteps: render_widget(w, {})",
        "repo": "acme/widgets",
        "commit": base,
        "relevant": ["core/widgets.py"],
    });
    write_file(dir, "history.jsonl", (query.to_string() + "\n").as_bytes());
    let work = dir.join("historywork");
    let report = env.json(&[
        "eval",
        dir.join("history.jsonl").to_str().unwrap(),
        "--repos",
        env.repo.path().to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
        "--mode",
        "lexical",
        "--history",
        "--set",
        "search.history_weight=0.5",
    ]);
    assert_eq!(report["reports"][0]["metrics"]["hit_at_1"], 1.0, "{report}");
    // The evaluation workspace holds the three commits the base reaches, not the fix.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"))
        .env("QUARRY_DAEMON", "off")
        .arg("--index-dir")
        .arg(work.join("workspace"))
        .args(["log", "--all-repos", "-k", "10", "--json"])
        .output()
        .unwrap();
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let subjects = common::git::subjects(&log);
    assert_eq!(subjects.len(), 3, "{log}");
    assert!(
        subjects.contains(&"Render widgets with a missing palette colour as none".to_string())
            && !subjects.iter().any(|s| s.starts_with("Fix crash")),
        "{subjects:?}"
    );
}
