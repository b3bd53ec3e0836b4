//! Choosing the local model: EmbeddingGemma through `quarry model use`, its 768-d vectors through
//! index and search, and the errors when it is not installed. The model here is the toy
//! Gemma of quarry-embed's tests (tests/fixtures/tiny-gemma: EmbeddingGemma's shape and graph
//! builder, random weights), run by the onnxruntime the install put beside all-MiniLM-L6-v2.

mod common;

use std::path::{Path, PathBuf};

use common::{sample_repo, Env};

/// The row of `quarry model --json` that names `name`.
fn model_row<'a>(list: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    list["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

/// The toy Gemma in `env`'s home, with the installed onnxruntime beside it.
fn tiny_gemma(env: &Env) -> PathBuf {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../quarry-embed/tests/fixtures/tiny-gemma");
    let dir = env.home.path().join("tiny-gemma");
    std::fs::create_dir_all(dir.join("onnxruntime")).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let list = env.json(&["model"]);
    let minilm = model_row(&list, "all-MiniLM-L6-v2");
    let ort_dir = Path::new(minilm["location"].as_str().unwrap()).join("onnxruntime");
    for entry in std::fs::read_dir(&ort_dir).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(
            entry.path(),
            dir.join("onnxruntime").join(entry.file_name()),
        )
        .unwrap();
    }
    dir
}

#[test]
fn an_embeddinggemma_folder_indexes_and_searches_with_768_dimension_vectors() {
    let env = Env::new();
    sample_repo(&env);
    let dir = tiny_gemma(&env);
    env.ok(&["model", "use", dir.to_str().unwrap()]);

    let report = env.json(&["index", env.repo_path()]);
    let embedding = &report["embedding"];
    let model = embedding["model"].as_str().unwrap();
    assert!(
        model.starts_with("embeddinggemma-300m/onnx-int8:")
            && model.contains("/max-tokens=128/")
            && model.ends_with("/dims=768"),
        "{report}"
    );
    assert!(embedding["embedded"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(
        embedding["coverage"]["embedded"],
        embedding["coverage"]["total"]
    );

    // Nearest neighbours over the stored vectors answer (the toy's weights are random, so
    // which chunk comes first means nothing; that every answer is a cosine does).
    let out = env.run(&[
        "search",
        "read the settings file",
        "--mode",
        "semantic",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "semantic", "{json}");
    for r in json["results"].as_array().unwrap() {
        let score = r["score"].as_f64().unwrap();
        assert!((-1.0..=1.0).contains(&score), "{r}");
    }

    // Back to MiniLM: its own vectors, the Gemma ones no longer searched.
    env.ok(&["model", "use", "all-MiniLM-L6-v2"]);
    let report = env.json(&["index", env.repo_path()]);
    assert!(
        report["embedding"]["model"]
            .as_str()
            .unwrap()
            .starts_with("all-MiniLM-L6-v2/"),
        "{report}"
    );
}

#[test]
fn embeddinggemma_not_installed_says_how_to_install_it() {
    let env = Env::new();
    let empty = env.home.path().join("data");
    std::fs::create_dir_all(&empty).unwrap();
    let out = env
        .quarry()
        .env("XDG_DATA_HOME", &empty)
        .env_remove("QUARRY_MODEL_DIR")
        .args(["model", "use", "embeddinggemma"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("quarry model install embeddinggemma"),
        "{stderr}"
    );

    let out = env
        .quarry()
        .env("XDG_DATA_HOME", &empty)
        .env_remove("QUARRY_MODEL_DIR")
        .args(["model", "--json"])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gemma = model_row(&list, "embeddinggemma-300m");
    assert_eq!(gemma["available"], false);
    let problem = gemma["problem"].as_str().unwrap();
    assert!(
        problem.contains("quarry model install embeddinggemma")
            && problem.contains("Gemma Terms of Use"),
        "{problem}"
    );
    // An unknown name is refused with the names quarry knows.
    let err = env.fails(&["model", "install", "bge-small"]);
    assert!(err.contains("embeddinggemma-300m"), "{err}");
}
