//! Agent tools over a real indexed repo: callers, impact (transitive callers), a definition's
//! context and a file's call graph.

mod common;

use common::Env;
use serde_json::Value;

fn repo(env: &Env) {
    env.write(
        "app/store.py",
        "class Store:\n    \"\"\"Keeps items.\"\"\"\n\n    def save(self, item):\n        self._write(item)\n\n    def _write(self, item):\n        print(item)\n",
    );
    env.write(
        "app/service.py",
        "from app.store import Store\n\n\ndef create_user(name):\n    s = Store()\n    s.save(name)\n    return name\n\n\ndef handler(req):\n    return create_user(req.name)\n",
    );
    // Another `save`: the context of create_user must pick the one its file imports.
    env.write("app/other.py", "def save(x):\n    return x\n");
    env.write(
        "app/cli.py",
        "from app.service import handler\n\n\ndef main():\n    handler(parse())\n\n\ndef parse():\n    return None\n",
    );
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e[key].as_str().unwrap_or("-").to_string())
        .collect()
}

#[test]
fn callers_and_impact_follow_calls_across_files() {
    let env = Env::new();
    repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);

    let callers = env.json(&["callers", "save"]);
    assert_eq!(callers["by_name"], true);
    let calls = &callers["calls"];
    assert_eq!(strings(calls, "path"), ["app/service.py"]);
    assert_eq!(strings(calls, "caller"), ["create_user"]);
    assert_eq!(calls[0]["line"], 6);
    // A dotted name is matched by its last segment.
    assert_eq!(
        env.json(&["callers", "Store.save"])["calls"],
        callers["calls"]
    );

    let impact = env.json(&["impact", "save", "--depth", "5"]);
    let entries: Vec<(u64, String)> = impact["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["depth"].as_u64().unwrap(),
                e["caller"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            (1, "create_user".to_string()),
            (2, "handler".to_string()),
            (3, "main".to_string())
        ]
    );
    let files: Vec<&str> = impact["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let name = env
        .repo
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        files,
        [
            format!("{name}:app/cli.py"),
            format!("{name}:app/service.py")
        ]
    );
    let shallow = env.json(&["impact", "save", "--depth", "1"]);
    assert_eq!(shallow["callers"].as_array().unwrap().len(), 1);

    let human = env.ok(&["impact", "save"]);
    assert!(human.contains("app/service.py:6  create_user"), "{human}");
    assert!(human.contains("    app/cli.py:5  main"), "{human}");
    // Nothing found is exit 1 (the JSON still printed), as for every search.
    env.json_nothing(&["callers", "no_such_function"]);
    env.json_nothing(&["impact", "no_such_function"]);
}

#[test]
fn context_and_call_graph_resolve_names_through_the_index() {
    let env = Env::new();
    repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let service = env.repo.path().join("app/service.py");
    let service = service.to_str().unwrap();

    let c = env.json(&[
        "summary",
        service,
        "--mode",
        "context",
        "--symbol",
        "create_user",
    ]);
    assert_eq!(c["symbol"]["qualified_name"], "create_user");
    assert_eq!(
        c["source"],
        "def create_user(name):\n    s = Store()\n    s.save(name)\n    return name"
    );
    let calls = c["calls"].as_array().unwrap();
    let save = calls.iter().find(|e| e["callee"] == "save").unwrap();
    assert_eq!(save["target"]["where"], "index", "import-aware: {save}");
    assert_eq!(save["target"]["path"], "app/store.py");
    assert_eq!(save["target"]["start_line"], 4);
    assert_eq!(strings(&c["callers"], "caller"), ["handler"]);
    let types = c["types"].as_array().unwrap();
    assert_eq!(types.len(), 1, "{c}");
    assert_eq!(types[0]["qualified_name"], "Store");
    let human = env.ok(&[
        "summary",
        service,
        "--mode",
        "context",
        "--symbol",
        "create_user",
    ]);
    assert!(human.contains("     6      s.save(name)"), "{human}");
    assert!(human.contains("app/store.py:4-5"), "{human}");
    // Each type line says which type it is.
    let types = human.split("\ntypes:\n").nth(1).expect("a types section");
    assert!(types.starts_with("  Store "), "{human}");

    let g = env.json(&["summary", service, "--mode", "extract"]);
    let edges = g["edges"].as_array().unwrap();
    let to_create = edges.iter().find(|e| e["callee"] == "create_user").unwrap();
    assert_eq!(to_create["caller"], "handler");
    assert_eq!(to_create["target"]["where"], "file");
    assert_eq!(to_create["target"]["start_line"], 4);

    // Without an index, in-file names still resolve.
    let bare = Env::new();
    let g = bare.json(&["summary", service, "--mode", "extract"]);
    let to_save = g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["callee"] == "save")
        .unwrap()
        .clone();
    assert_eq!(to_save["target"]["where"], "unknown");

    let err = env.fails(&["summary", service, "--mode", "context", "--symbol", "nope"]);
    assert!(
        err.contains("defines no `nope`") && err.contains("create_user"),
        "{err}"
    );
    assert!(env
        .fails(&["summary", service, "--mode", "context"])
        .contains("--symbol"));
}

/// An outline of an indexed, unchanged file is built from the index's definitions (no parse):
/// the same answer as a parse; a file whose size or time moved since is parsed again.
#[test]
fn outlines_of_unchanged_files_come_from_the_index() {
    let env = Env::new();
    repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let bare = Env::new();
    let path = env.repo.path().join("app/service.py");
    let service = path.to_str().unwrap();
    let names = |outline: &Value| strings(&outline["items"], "qualified_name");
    let indexed = env.json(&["summary", service]);
    assert_eq!(indexed, bare.json(&["summary", service]));
    assert_eq!(names(&indexed), ["create_user", "handler"]);

    // The same size and time as indexed: the index's definitions are trusted (as grep's
    // trigram filter trusts them), so the outline still names `handler`.
    let time = std::fs::metadata(&path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("def handler", "def hendler")).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(time)
        .unwrap();
    assert_eq!(
        names(&env.json(&["summary", service])),
        ["create_user", "handler"]
    );
    // A new time: parsed again.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(time + std::time::Duration::from_secs(1))
        .unwrap();
    assert_eq!(
        names(&env.json(&["summary", service])),
        ["create_user", "hendler"]
    );
}

/// Names resolve within the repo and language family they were found in: a workspace holding
/// a Python repo and a Java one never walks from one into the other.
#[test]
fn impact_and_context_stay_in_their_repo_and_language() {
    let env = Env::new();
    env.write(
        "pipeline.py",
        "def run(x):\n    return build(x)\n\n\ndef build(x):\n    return x.clone()\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let java = tempfile::tempdir().unwrap();
    common::write_file(
        java.path(),
        "src/Task.java",
        b"class Task {\n    Object clone() { return this; }\n    void run() { build(); }\n    void start() { run(); }\n    void build() {}\n}\n",
    );
    env.ok(&["index", java.path().to_str().unwrap(), "--no-embed"]);
    let python = env.repo.path().file_name().unwrap().to_str().unwrap();

    let impact = env.json(&["impact", "build", "--repo", python, "--depth", "3"]);
    let reached: Vec<String> = strings(&impact["callers"], "path");
    assert_eq!(reached, ["pipeline.py"], "{impact}");

    let path = env.repo.path().join("pipeline.py");
    let c = env.json(&[
        "summary",
        path.to_str().unwrap(),
        "--mode",
        "context",
        "--symbol",
        "build",
    ]);
    let clone = c["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["callee"] == "clone")
        .unwrap_or_else(|| panic!("{c}"));
    assert_eq!(clone["target"]["where"], "unknown", "not Java's clone: {c}");
    // The Java repo's own view still resolves there.
    let task = java.path().join("src/Task.java");
    let c = env.json(&[
        "summary",
        task.to_str().unwrap(),
        "--mode",
        "context",
        "--symbol",
        "start",
    ]);
    assert_eq!(c["calls"][0]["target"]["where"], "file", "{c}");
}
