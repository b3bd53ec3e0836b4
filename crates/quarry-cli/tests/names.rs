//! Names first: a name's definitions in the order the code gives them (its package's
//! re-export, public, top level, source, a type over its impl), every filter held on every
//! route, `file:line` answered by the enclosing definition, code fragments found as written.

mod common;

use common::{result_paths, Env};
use serde_json::Value;

/// A package whose `__init__.py` says which `solve` and which `session` it means, beside
/// look-alikes: a method, a test helper, a README heading, a Rust struct declared inside a
/// macro with an impl block elsewhere.
fn package() -> Env {
    let env = Env::new();
    env.write(
        "pkg/__init__.py",
        "from .solvers import (solve,\n    nsolve)\nfrom .globals import session\n",
    );
    env.write(
        "pkg/solvers.py",
        "def solve(eq):\n    \"\"\"Solves an equation.\"\"\"\n    return eq\n\n\ndef nsolve(eq):\n    return solve(eq)\n",
    );
    env.write(
        "pkg/logic/sat.py",
        "class SATSolver:\n    def solve(self):\n        return self.clauses\n",
    );
    env.write(
        "pkg/globals.py",
        "import contextvars\n\nsession = contextvars.ContextVar(\"session\")\n",
    );
    env.write(
        "tests/test_solvers.py",
        "def solve(x):\n    return x\n\n\ndef test_solve():\n    assert solve(1) == 1\n",
    );
    env.write(
        "README.md",
        "# solve\n\nCall solve on an equation.\n\n## session\n\nThe session holds state.\n",
    );
    env.write(
        "src/io.rs",
        "pin_project! {\n    /// Buffers both ways.\n    pub struct BufStream<RW> {\n        #[pin]\n        inner: RW,\n    }\n}\n",
    );
    env.write(
        "src/util.rs",
        "impl<RW> BufStream<RW> {\n    pub fn new(inner: RW) -> Self {\n        BufStream { inner }\n    }\n}\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env
}

fn first(json: &Value) -> (&str, u64, &str) {
    let r = &json["results"][0];
    (
        r["path"].as_str().unwrap(),
        r["start_line"].as_u64().unwrap(),
        r["reason"].as_str().unwrap_or(""),
    )
}

#[test]
fn a_name_means_the_definition_its_package_exports() {
    let env = package();
    let json = env.json(&["search", "solve"]);
    assert_eq!(json["route"]["route"], "symbol", "{json}");
    let (path, line, reason) = first(&json);
    assert_eq!((path, line), ("pkg/solvers.py", 1), "{json}");
    assert!(reason.contains("exported by pkg/__init__.py"), "{json}");
    let score = json["results"][0]["score"].as_f64().unwrap();
    assert!(score > 0.5, "a definition's score means something: {json}");
    // Every definition once, the heading after all the code, scores falling.
    let paths = result_paths(&json);
    let heading = paths.iter().position(|p| p == "README.md");
    let code = ["pkg/logic/sat.py", "tests/test_solvers.py"];
    for c in code {
        let at = paths
            .iter()
            .position(|p| p == c)
            .unwrap_or_else(|| panic!("{c}: {json}"));
        assert!(heading.is_none_or(|h| h > at), "{json}");
    }
    let scores: Vec<f64> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    // Go to definition: the same definitions in the same order, and nothing that only
    // mentions the name (the test helper's caller, the README's sentence).
    let reasons = |json: &Value| -> Vec<(String, String)> {
        json["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let reason = r["reason"].as_str().unwrap_or("").to_string();
                (r["path"].as_str().unwrap().to_string(), reason)
            })
            .collect()
    };
    let all = reasons(&json);
    assert!(
        all.iter()
            .any(|(_, why)| why.starts_with("mentions the name")),
        "{json}"
    );
    let alone = env.json(&["search", "solve", "--definitions-only"]);
    let definitions: Vec<_> = all
        .into_iter()
        .filter(|(_, why)| why.starts_with("definition:"))
        .collect();
    assert_eq!(reasons(&alone), definitions, "{alone}");

    let explained = env.ok(&["search", "solve", "--explain", "-k", "2"]);
    assert!(
        explained
            .contains("why: definition: function solve; top level; exported by pkg/__init__.py"),
        "{explained}"
    );

    // A qualified name means its qualifier; a path before `::` means that file.
    let json = env.json(&["search", "SATSolver.solve"]);
    assert_eq!(first(&json).0, "pkg/logic/sat.py", "{json}");
    let json = env.json(&["search", "tests/test_solvers.py::solve"]);
    assert_eq!(first(&json).0, "tests/test_solvers.py", "{json}");
    // A name the package binds by assignment and exports.
    let json = env.json(&["search", "session"]);
    let r = &json["results"][0];
    assert_eq!(r["path"], "pkg/globals.py", "{json}");
    assert!(
        r["start_line"].as_u64() <= Some(3) && r["end_line"].as_u64() >= Some(3),
        "{json}"
    );
    // A struct declared inside a macro is a definition, above its impl block.
    let json = env.json(&["search", "BufStream"]);
    assert_eq!(first(&json).0, "src/io.rs", "{json}");
    // Asked for documents, the heading answers.
    let json = env.json(&["search", "solve", "--type", "docs"]);
    let paths = result_paths(&json);
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p == "README.md"),
        "{json}"
    );
}

#[test]
fn every_route_holds_every_filter() {
    let env = package();
    // (query, what the router takes it for)
    let routes = [
        ("solve", "symbol"),
        ("pkg/", "path"),
        ("\"return\"", "grep_literal"),
        ("ret\\w+", "grep_regex"),
        ("return $X", "structural"),
        ("solvers.py:2", "location"),
        ("how are equations solved", "ranked"),
    ];
    for (query, route) in routes {
        let all = env.run(&["search", query, "--json", "-k", "50"]);
        let all: Value = serde_json::from_slice(&all.stdout).unwrap();
        assert_eq!(all["route"]["route"], route, "{query}: {all}");
        for (flag, value, admits) in [
            (
                "--path",
                "tests/*",
                (|p: &str| p.starts_with("tests/")) as fn(&str) -> bool,
            ),
            ("--path", "logic", |p: &str| p.contains("logic")),
            ("--lang", "rust", |p: &str| p.ends_with(".rs")),
            ("--type", "docs", |p: &str| p.ends_with(".md")),
            ("--type", "code", |p: &str| !p.ends_with(".md")),
        ] {
            let out = env.run(&["search", query, flag, value, "--json", "-k", "50"]);
            let json: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{query} {flag} {value}: {e}"));
            for path in result_paths(&json) {
                assert!(
                    admits(&path),
                    "{query} {flag} {value} answered {path}: {json}"
                );
            }
        }
    }
}

#[test]
fn a_file_line_answers_its_definition_and_a_code_fragment_is_found_as_written() {
    let env = package();
    let json = env.json(&["search", "solvers.py:2"]);
    assert_eq!(json["route"]["class"], "location", "{json}");
    let r = &json["results"][0];
    assert_eq!(r["path"], "pkg/solvers.py", "{json}");
    assert_eq!(r["symbol"], "solve", "{json}");
    assert!(
        r["reason"].as_str().unwrap().contains("encloses line 2"),
        "{json}"
    );
    let json = env.json(&["search", "pkg/solvers.py:7:12"]);
    assert_eq!(json["results"][0]["symbol"], "nsolve", "{json}");
    let json = env.json(&["search", "solvers.py:6", "--engine", "location"]);
    assert_eq!(json["route"]["route"], "location", "{json}");
    assert_eq!(json["results"][0]["symbol"], "nsolve", "{json}");
    // Edited since it was indexed: the file as it is now answers, not the index's definitions.
    env.write(
        "pkg/solvers.py",
        "def nsolve(eq):\n    return solve(eq)\n\n\ndef solve(eq):\n    return eq\n",
    );
    let json = env.json(&["search", "solvers.py:2"]);
    assert_eq!(json["results"][0]["symbol"], "nsolve", "{json}");
    assert_eq!(json["results"][0]["start_line"], 1, "{json}");

    let json = env.json(&["search", "return self.clauses"]);
    assert_eq!(json["route"]["route"], "grep_literal", "{json}");
    assert_eq!(
        (first(&json).0, first(&json).1),
        ("pkg/logic/sat.py", 3),
        "{json}"
    );
}

#[test]
fn a_type_answers_before_its_impl_and_a_method_with_its_own_lines() {
    // tokio's shape: a crate-private struct and its impl in one file (the impl reads as
    // public); fd's: a small impl kept whole in one chunk, asked for one of its methods.
    let env = Env::new();
    env.write(
        "src/harness.rs",
        "/// Drives a task.\npub(crate) struct Harness {\n    inner: u32,\n}\n\nimpl Harness {\n    pub fn new() -> Self {\n        Harness { inner: 0 }\n    }\n\n    /// The process's exit code.\n    pub fn exit_code(&self) -> i32 {\n        self.inner as i32\n    }\n}\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let json = env.json(&["search", "Harness"]);
    let r = &json["results"][0];
    assert_eq!(
        (r["start_line"].as_u64(), r["kind"].as_str()),
        (Some(1), Some("struct")),
        "the struct itself first, with its doc: {json}"
    );
    assert!(
        !r["reason"].as_str().unwrap().contains("bound again"),
        "an impl does not bind the name again: {json}"
    );
    let json = env.json(&["search", "exit_code"]);
    let r = &json["results"][0];
    assert_eq!(
        (r["start_line"].as_u64(), r["end_line"].as_u64()),
        (Some(11), Some(14)),
        "the method's own lines with its doc, not its impl's: {json}"
    );
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .trim_start()
            .starts_with("/// The process's exit code.\n    pub fn exit_code(&self) -> i32 {"),
        "{json}"
    );
    // Two same-named definitions in one chunk: each with its own lines.
    env.write(
        "lib/base.rb",
        "class Base\n  # Class-level settings.\n  def self.settings\n    self\n  end\n\n  # Instance settings.\n  def settings\n    self.class.settings\n  end\nend\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let json = env.json(&["search", "settings", "--lang", "ruby"]);
    let lines: Vec<(u64, u64)> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .map(|r| {
            (
                r["start_line"].as_u64().unwrap(),
                r["end_line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(sorted, [(2, 5), (7, 10)], "{json}");
}

#[test]
fn a_structural_pattern_that_names_no_language_is_read_in_the_repos_own() {
    // `{ $$$A }` says nothing of its language: in a Rust repo it is Rust's blocks.
    let env = Env::new();
    env.write(
        "src/lib.rs",
        "pub fn f() {\n    let x = 1;\n}\n\npub fn g() {\n    let y = 2;\n}\n",
    );
    env.write("README.md", "# Blocks\n\nSome text.\n");
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let json = env.json(&["search", "{ $$$A }"]);
    assert_eq!(json["route"]["route"], "structural", "{json}");
    assert!(json["route"]["note"].is_null(), "{json}");
    assert_eq!(result_paths(&json)[0], "src/lib.rs", "{json}");
}
