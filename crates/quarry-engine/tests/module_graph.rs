//! The data flows one way: within each crate of the workspace, a module imports only modules
//! below it, so the module graph is a DAG — no circle, no import that runs back up. A reader
//! who opens a stage's file can follow a query downwards without meeting the stage again.
//!
//! The graph is read from the sources as `farm-studio look` reads it: every `crate::…` and
//! `super::…` path a file names (in `use` items or inline) is an arrow to the module that path
//! lands in; a name lib.rs re-exports (`crate::Workspace`) is an arrow to the module it comes
//! from. `mod` declarations and a file's own `#[cfg(test)]` module are not arrows.
//!
//! Written by hand: no crate reads a module graph out of Rust sources without compiling them
//! (cargo-modules needs rust-analyzer's whole toolchain), and a check that runs in
//! milliseconds belongs in the test suite.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's modules: path (`answer::search`) → the file's source with comments and string
/// literals blanked.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        modules.insert(parts.join("::"), code_only(&text));
    }
    modules
}

/// `text` without comments, string and char literals, and the file's `#[cfg(test)]` module
/// (tests may reach anywhere in their own file).
fn code_only(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r' && matches!(chars.get(i + 1), Some('"' | '#')) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A char literal ('x'); lifetimes ('a) are left alone.
            i += 3;
        } else if c == '\'' && chars.get(i + 1) == Some(&'\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every path a source names after `crate::` or `super::` (groups `{a, b::c}` expanded),
/// as segments; `super` paths are made absolute from `module`.
fn named_paths(module: &str, code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let starts = |word: &str| {
            let w: Vec<char> = word.chars().collect();
            chars[i..].starts_with(&w) && (i == 0 || !is_ident(chars[i - 1]))
        };
        let base: Vec<String> = if starts("crate::") {
            i += "crate::".len();
            Vec::new()
        } else if starts("super::") {
            i += "super::".len();
            // `super` of `a::b` (a/b.rs or a/b/mod.rs) is `a`.
            let mut base: Vec<String> = module.split("::").map(String::from).collect();
            base.pop();
            while chars[i..].starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
                base.pop();
                i += "super::".len();
            }
            base
        } else {
            i += 1;
            continue;
        };
        let (tails, end) = parse_tree(&chars, i);
        i = end;
        for tail in tails {
            let mut path = base.clone();
            path.extend(tail);
            paths.push(path);
        }
    }
    paths
}

/// A use tree starting at `i`: `a::b`, `a::{b, c::d}`, `{a, b}`; returns its paths and where
/// it ends.
fn parse_tree(chars: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut prefix = Vec::new();
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i < chars.len() && chars[i] == '{' {
            i += 1;
            let mut paths = Vec::new();
            loop {
                while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                    i += 1;
                }
                if i >= chars.len() || chars[i] == '}' {
                    i += 1;
                    break;
                }
                let (inner, end) = parse_tree(chars, i);
                i = end;
                for tail in inner {
                    let mut path = prefix.clone();
                    path.extend(tail);
                    paths.push(path);
                }
                // Skip `as name` and anything else up to the next item of the group.
                while i < chars.len() && chars[i] != ',' && chars[i] != '}' {
                    i += 1;
                }
            }
            return (paths, i);
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i == start {
            return (vec![prefix], i);
        }
        prefix.push(chars[start..i].iter().collect());
        if chars[i..].starts_with(&[':', ':']) {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// Names `module` re-exports from the crate's own modules (`pub use search::{Mode, …}`,
/// `pub use crate::x::Y`): name → the module it comes from.
fn reexports(
    module: &str,
    code: &str,
    modules: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let here: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(String::from).collect()
    };
    let mut names = BTreeMap::new();
    let chars: Vec<char> = code.chars().collect();
    let mut at = 0;
    while let Some(found) = code[at..].find("pub use ") {
        let start = code[..at + found].chars().count() + "pub use ".len();
        at += found + "pub use ".len();
        let (paths, _) = parse_tree(&chars, start);
        for path in paths {
            let absolute: Vec<String> = match path.first().map(String::as_str) {
                Some("crate") => path[1..].to_vec(),
                Some("self") => here.iter().chain(&path[1..]).cloned().collect(),
                Some("super") => {
                    let mut base = here.clone();
                    base.pop();
                    base.extend(path[1..].iter().cloned());
                    base
                }
                Some(first) => {
                    let child: Vec<String> =
                        here.iter().chain([&first.to_string()]).cloned().collect();
                    if !modules.contains_key(&child.join("::")) {
                        continue; // another crate's item
                    }
                    here.iter().chain(&path).cloned().collect()
                }
                None => continue,
            };
            if let (Some(from), Some(name)) = (longest_module(&absolute, modules), path.last()) {
                if from != module {
                    names.insert(name.clone(), from);
                }
            }
        }
    }
    names
}

/// The longest prefix of `path` that is a module of the crate ("" for the root).
fn longest_module(path: &[String], modules: &BTreeMap<String, String>) -> Option<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|candidate| modules.contains_key(candidate))
}

/// The crate's arrows: module → modules it imports (the root's re-exports followed through).
fn arrows(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let reexported: BTreeMap<String, BTreeMap<String, String>> = modules
        .iter()
        .map(|(m, code)| (m.clone(), reexports(m, code, &modules)))
        .collect();
    // Where a path lands: its longest module, then through the re-exports of the name after
    // it (`crate::Mode` → lib.rs re-exports it from `answer` → `answer` from `answer::search`).
    let resolve = |path: &[String]| -> Option<String> {
        let mut module = longest_module(path, &modules)?;
        let depth = if module.is_empty() {
            0
        } else {
            module.split("::").count()
        };
        if let Some(name) = path.get(depth) {
            for _ in 0..4 {
                match reexported[&module].get(name) {
                    Some(from) => module = from.clone(),
                    None => break,
                }
            }
        }
        Some(module)
    };
    let mut graph = BTreeMap::new();
    for (module, code) in &modules {
        if module.is_empty() {
            continue;
        }
        let mut targets = BTreeSet::new();
        for path in named_paths(module, code) {
            if let Some(target) = resolve(&path).filter(|t| !t.is_empty()) {
                // A module's own items and its own children are not arrows.
                if target != *module && !target.starts_with(&format!("{module}::")) {
                    targets.insert(target);
                }
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// A circle in `graph`, if there is one (as the modules along it).
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::Open);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = stack.iter().position(|m| m == next).unwrap();
                    let mut circle = stack[from..].to_vec();
                    circle.push(next.clone());
                    return Some(circle);
                }
                Mark::New => {
                    if let Some(circle) = visit(next, graph, marks, stack) {
                        return Some(circle);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if marks.get(node).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(circle) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(circle);
            }
        }
    }
    None
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_crates_modules_import_only_downwards() {
    let mut circles = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(crates_dir()).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        checked += 1;
        if let Some(circle) = find_circle(&arrows(&src)) {
            circles.push(format!("{}: {}", src.display(), circle.join(" -> ")));
        }
    }
    assert!(checked >= 10, "found only {checked} crates");
    assert!(
        circles.is_empty(),
        "modules that import each other:\n{}",
        circles.join("\n")
    );
}

/// The engine's stages stand in the order a query goes through them: the answer types and
/// the request at the bottom, the service on top.
#[test]
fn the_engine_reads_as_a_pipeline() {
    let graph = arrows(&crates_dir().join("quarry-engine/src"));
    let imports = |from: &str| graph.get(from).cloned().unwrap_or_default();
    // The answers import nothing of the engine but each other.
    for (module, targets) in &graph {
        if module.starts_with("answer") {
            assert!(
                targets.iter().all(|t| t.starts_with("answer")),
                "{module} imports {targets:?}"
            );
        }
    }
    // Each stage names the stages it builds on (method calls on `Workspace` are not imports).
    for (stage, below) in [
        ("request", "answer::search"),
        ("filter", "request"),
        ("search", "filter"),
        ("name_lookup", "filter"),
        ("routing", "name_lookup"),
        ("rerank", "answer::reports"),
        ("agentic", "rerank"),
        ("service", "request"),
    ] {
        assert!(
            imports(stage).contains(below),
            "{stage} -> {below}: {graph:#?}"
        );
    }
    // And none names a stage after it: the order above is the only way the data flows.
    let order = [
        "request",
        "filter",
        "search",
        "name_lookup",
        "routing",
        "rerank",
        "agentic",
        "service",
    ];
    for (at, stage) in order.iter().enumerate() {
        for later in &order[at + 1..] {
            assert!(
                !imports(stage).contains(*later),
                "{stage} imports {later}, a later stage"
            );
        }
    }
    // The workspace knows nothing of searching.
    for (module, targets) in &graph {
        if module.starts_with("workspace") {
            assert!(
                targets.iter().all(|t| t.starts_with("workspace")),
                "{module} imports {targets:?}"
            );
        }
    }
}

/// lib.rs is the engine's face: it re-exports for the interfaces, and no stage imports through
/// it (`crate::Workspace` would be an arrow up to the face, which imports every stage).
#[test]
fn no_stage_of_the_engine_imports_through_its_face() {
    let src = crates_dir().join("quarry-engine/src");
    let modules = modules(&src);
    let mut through_root = Vec::new();
    for (module, code) in &modules {
        if module.is_empty() {
            continue;
        }
        for path in named_paths(module, code) {
            if longest_module(&path, &modules).as_deref() == Some("") {
                through_root.push(format!("{module}: crate::{}", path.join("::")));
            }
        }
    }
    assert!(through_root.is_empty(), "{through_root:#?}");
}

#[test]
fn a_circle_is_found_where_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\npub use a::Thing;\n").unwrap();
    std::fs::create_dir(src.join("b")).unwrap();
    std::fs::write(
        src.join("a.rs"),
        "use crate::b::{c::Other, Plain};\npub struct Thing;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b/mod.rs"),
        "// crate::a is only a comment\nmod c;\npub struct Plain;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b/c.rs"),
        "pub struct Other(crate::Thing);\nconst S: &str = \"crate::b\";\n",
    )
    .unwrap();
    let graph = arrows(src);
    assert_eq!(
        graph["a"],
        BTreeSet::from(["b".to_string(), "b::c".to_string()])
    );
    assert_eq!(graph["b::c"], BTreeSet::from(["a".to_string()]));
    assert!(graph["b"].is_empty(), "{graph:?}");
    let circle = find_circle(&graph).expect("a -> b::c -> a");
    assert!(circle.contains(&"a".to_string()) && circle.contains(&"b::c".to_string()));
}
