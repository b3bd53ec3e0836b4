//! Symbol-level history and repos moved on disk, with real repositories made by git in temp
//! dirs: `touches FILE::Symbol` lists exactly the commits that changed that definition
//! (across a rename of its file), and a moved repo keeps its index and history.

mod common;

use common::git::{commit, git, init, subjects};
use common::Env;
use std::ffi::OsStr;

fn python(parse_body: &str, render_body: &str) -> String {
    format!(
        "import json\n\n\nclass Page:\n    def parse(self, text):\n        {parse_body}\n\n    def render(self):\n        {render_body}\n\n\ndef helper():\n    return 1\n"
    )
}

#[test]
fn touches_a_symbol_lists_the_commits_that_changed_it() {
    let env = Env::new();
    let dir = env.repo.path();
    init(dir);
    env.write("page.py", python("return text", "return ''"));
    commit(dir, "Add pages", "Alice", "2025-01-02T00:00:00Z");
    env.write("page.py", python("return text.strip()", "return ''"));
    commit(
        dir,
        "Strip text when parsing",
        "Alice",
        "2025-01-03T00:00:00Z",
    );
    env.write("page.py", python("return text.strip()", "return '<p>'"));
    commit(dir, "Render a paragraph", "Bob", "2025-01-04T00:00:00Z");
    git(
        dir,
        &["mv", "page.py", "pages.py"],
        OsStr::new("x"),
        "2025-01-05T00:00:00Z",
    );
    commit(dir, "Rename the module", "Bob", "2025-01-05T00:00:00Z");
    env.write(
        "pages.py",
        python("return text.strip().lower()", "return '<p>'"),
    );
    commit(
        dir,
        "Lower-case parsed text",
        "Alice",
        "2025-01-06T00:00:00Z",
    );
    env.write(
        "pages.py",
        python("return text.strip().lower()", "return '<p>'").replace("return 1", "return 2"),
    );
    commit(dir, "Change the helper", "Alice", "2025-01-07T00:00:00Z");

    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let parse = env.json(&["touches", "pages.py::Page.parse"]);
    assert_eq!(
        subjects(&parse),
        [
            "Lower-case parsed text",
            "Strip text when parsing",
            "Add pages"
        ],
        "{parse}"
    );
    let render = env.json(&["touches", "pages.py::render"]);
    assert_eq!(
        subjects(&render),
        ["Render a paragraph", "Add pages"],
        "{render}"
    );
    let helper = env.json(&["touches", "pages.py::helper", "-k", "1"]);
    assert_eq!(subjects(&helper), ["Change the helper"]);
    // The whole file, for comparison, has every commit.
    assert_eq!(subjects(&env.json(&["touches", "pages.py"])).len(), 6);
    let missing = env.fails(&["touches", "pages.py::nothing_here"]);
    assert!(missing.contains("defines `nothing_here`"), "{missing}");
}

#[test]
fn a_repo_moved_on_disk_keeps_its_index_and_history() {
    let env = Env::new();
    let old = env.repo.path().join("project");
    std::fs::create_dir_all(&old).unwrap();
    init(&old);
    common::write_file(&old, "src/lib.rs", b"pub fn rate_limit() {}\n");
    commit(&old, "Add a rate limiter", "Alice", "2025-01-02T00:00:00Z");
    env.ok(&["index", old.to_str().unwrap()]);
    env.ok(&["sync", old.to_str().unwrap(), "--no-embed"]);

    // Same folder name, new place: recognised by name.
    let moved = env.repo.path().join("elsewhere").join("project");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&old, &moved).unwrap();
    let report = env.json(&["index", moved.to_str().unwrap()]);
    let text = report.to_string();
    assert!(text.contains("moved_from"), "{text}");
    let repos = env.json(&["repo", "list"]);
    assert_eq!(repos["repos"].as_array().unwrap().len(), 1, "{repos}");
    assert_eq!(
        repos["repos"][0]["root"].as_str().unwrap(),
        std::fs::canonicalize(&moved).unwrap().to_str().unwrap()
    );

    // A new folder name: recognised by its history.
    let renamed = env.repo.path().join("renamed");
    std::fs::rename(&moved, &renamed).unwrap();
    common::write_file(
        &renamed,
        "src/lib.rs",
        b"pub fn rate_limit() { /* v2 */ }\n",
    );
    commit(&renamed, "Tune the limiter", "Bob", "2025-01-03T00:00:00Z");
    let out = env.run(&["sync", renamed.to_str().unwrap(), "--no-embed"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("moved from"), "{stderr}");
    let log = env.json(&["log"]);
    assert_eq!(
        subjects(&log),
        ["Tune the limiter", "Add a rate limiter"],
        "{log}"
    );
    assert_eq!(
        env.json(&["repo", "list"])["repos"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
