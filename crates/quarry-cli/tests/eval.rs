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
