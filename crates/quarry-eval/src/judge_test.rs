//! The pointwise judge in `quarry eval`: its order is blended at each weight, scored beside the
//! first stage, and its judgements are cached so a second run asks nothing.

use super::*;
use quarry_llm::RelevanceScorer;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Judges by a fixed rule: a passage that defines `load_settings` is relevant.
struct CountingJudge {
    calls: AtomicUsize,
}

impl RelevanceScorer for CountingJudge {
    fn describe(&self) -> String {
        "test:load_settings".into()
    }
    fn relevance(&self, _query: &str, passage: &str) -> Result<f32> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(if passage.contains("def load_settings") {
            0.9
        } else {
            0.1
        })
    }
}

#[test]
fn a_judge_is_scored_beside_the_first_stage_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    // The lexical first stage prefers the file that repeats the query's words; the judge
    // knows better.
    let docs = [
        ("code_1.py", "def parse_config_text(config):\n    # parse config, parse config\n    return config.parse()\n"),
        ("code_2.py", "def load_settings(path):\n    \"\"\"Parse the config file.\"\"\"\n    return toml.load(path)\n"),
        ("code_3.py", "def reverse_string(s):\n    return s[::-1]\n"),
    ];
    let corpus: String = docs
        .iter()
        .map(|(p, t)| serde_json::json!({"path": p, "text": t}).to_string() + "\n")
        .collect();
    std::fs::write(dir.path().join("corpus.jsonl"), corpus).unwrap();
    let query = serde_json::json!({"id": "q1", "query": "parse config", "repo": "toy",
        "relevant": ["code_2.py"], "corpus": "corpus.jsonl"});
    let queries_file = dir.path().join("queries.jsonl");
    std::fs::write(&queries_file, format!("{query}\n")).unwrap();

    let judge = Arc::new(CountingJudge {
        calls: AtomicUsize::new(0),
    });
    let opts = EvalOptions {
        modes: vec![Mode::Lexical],
        repos_dir: None,
        work_dir: dir.path().join("work"),
        candidates: 50,
        language: None,
        max_queries: None,
        weights: FieldWeights::default(),
        fusion: Default::default(),
        variants: Vec::new(),
        embedder: None,
        agentic: false,
        history: false,
        route: false,
        judge: Some(Judge {
            scorer: judge.clone(),
            candidates: 10,
            model_weights: vec![1.0, 0.0],
        }),
    };
    let reports = run(&queries_file, &opts, &quarry_engine::NoProgress).unwrap();
    let summary: Vec<(String, f64)> = reports
        .iter()
        .map(|r| (r.setting.clone(), r.metrics.mrr))
        .collect();
    assert_eq!(
        summary,
        vec![
            (String::new(), 0.5),
            ("judge_weight=1".to_string(), 1.0),
            ("judge_weight=0".to_string(), 0.5),
        ]
    );
    // Two candidates were judged once each (the second weight reused the judgements).
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2);
    // A second run is answered from the workspace's cache.
    let again = run(&queries_file, &opts, &quarry_engine::NoProgress).unwrap();
    assert_eq!(again[1].metrics.mrr, 1.0);
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2);
}
