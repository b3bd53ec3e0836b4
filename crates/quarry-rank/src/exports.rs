//! What a package says it exports: its entry files (`__init__.py`, `lib.rs`/`mod.rs`,
//! `index.ts`) and the names they re-export, read with a few rules per language rather than a
//! parse (an entry file is mostly import and export statements), plus the module-level
//! assignments that bind a Python name no `def` or `class` rule sees. names.rs ranks by these
//! facts; the engine reads the files.

use quarry_core::Language;

/// The file names a package says what it exports in, per language.
fn entry_names(language: Language) -> &'static [&'static str] {
    match language {
        Language::Python => &["__init__.py"],
        Language::Rust => &["mod.rs", "lib.rs"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            &["index.ts", "index.js", "index.tsx", "index.mjs"]
        }
        _ => &[],
    }
}

/// Whether `path` is a package entry file (its top-level definitions are the package's own).
pub fn is_entry_file(path: &str, language: Language) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    entry_names(language).contains(&file)
}

/// The files where a package says what it exports, above a definition in `path`, nearest
/// first: `__init__.py` of each enclosing package, `mod.rs`/`lib.rs` above a Rust file,
/// `index.{js,ts,…}` of each enclosing folder. The definition's own file is left out.
pub fn entry_files(path: &str, language: Language) -> Vec<String> {
    let names = entry_names(language);
    if names.is_empty() {
        return Vec::new();
    }
    let parent = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
    let mut dirs = Vec::new();
    let mut dir = parent(path);
    while let Some(d) = dir {
        dir = parent(&d);
        dirs.push(d);
    }
    dirs.push(String::new());
    let mut out = Vec::new();
    for d in dirs {
        for name in names {
            let entry = if d.is_empty() {
                name.to_string()
            } else {
                format!("{d}/{name}")
            };
            if entry != path {
                out.push(entry);
            }
        }
    }
    out
}

/// What an entry file says it exports, read once and asked for many definitions.
#[derive(Debug, Clone)]
pub struct EntryFile {
    path: String,
    language: Language,
    /// Python: each `from MODULE import names` statement.
    imports: Vec<(String, Vec<String>)>,
    /// Rust: `pub use …;` statements; JS/TS: `export …` statements.
    statements: Vec<String>,
}

impl EntryFile {
    pub fn parse(path: &str, text: &str, language: Language) -> EntryFile {
        let (imports, statements) = match language {
            Language::Python => (python_imports(text), Vec::new()),
            Language::Rust => (Vec::new(), owned(statements(text, "pub use "))),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                (Vec::new(), owned(statements(text, "export ")))
            }
            _ => (Vec::new(), Vec::new()),
        };
        EntryFile {
            path: path.to_string(),
            language,
            imports,
            statements,
        }
    }

    /// The repo-relative paths (without `.py`) of the modules a Python entry file imports
    /// `name` from (`from MODULE import name`).
    pub fn import_sources(&self, name: &str) -> Vec<String> {
        self.imports
            .iter()
            .filter(|(_, names)| names.iter().any(|n| n == name))
            .flat_map(|(module, _)| python_module_paths(&self.path, module))
            .collect()
    }

    /// Whether this entry file re-exports `name` from where the definition in `def_path`
    /// lives. Python: a `from MODULE import …name…` whose module resolves to the definition's
    /// file or a package above it. Rust: a `pub use` naming it from its module. JS/TS: an
    /// `export { … }` naming it, or `export * from` the definition's file.
    pub fn reexports(&self, name: &str, def_path: &str) -> bool {
        match self.language {
            Language::Python => self.imports.iter().any(|(module, names)| {
                names.iter().any(|n| n == name) && python_module_holds(&self.path, module, def_path)
            }),
            // `pub use crate::io::util::{BufStream, …}`: the name, from the definition's
            // module (its file's stem, or its folder for `mod.rs`), or a glob of that module.
            Language::Rust => {
                let mut parts = def_path.rsplit('/');
                let stem = parts.next().unwrap_or("").trim_end_matches(".rs");
                let module = match stem {
                    "mod" | "lib" => parts.next().unwrap_or(stem),
                    _ => stem,
                };
                self.statements.iter().any(|s| {
                    has_word(s, module) && (has_word(s, name) || s.trim_end().ends_with("::*"))
                })
            }
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                self.statements.iter().any(|s| {
                    (s.contains('{') && has_word(s, name))
                        || (s.starts_with("export *") && {
                            let stem = def_path.rsplit('/').next().unwrap_or(def_path);
                            let stem = stem.split('.').next().unwrap_or(stem);
                            s.contains(&format!("/{stem}'")) || s.contains(&format!("/{stem}\""))
                        })
                })
            }
            _ => false,
        }
    }
}

fn owned(statements: Vec<&str>) -> Vec<String> {
    statements.into_iter().map(str::to_string).collect()
}

/// Statements starting at a line that begins with `start`, through the `;` that ends them.
fn statements<'t>(text: &'t str, start: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(start) {
        let begin = from + at;
        let line_start = text[..begin].rfind('\n').map_or(0, |i| i + 1);
        let end = text[begin..].find(';').map_or(text.len(), |e| begin + e);
        if text[line_start..begin].trim().is_empty() {
            out.push(&text[begin..end]);
        }
        from = end.max(begin + start.len()).min(text.len());
    }
    out
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        boundary(before) && boundary(after)
    })
}

/// `from MODULE import a, b as c, (d, e)` statements: each module and the names it binds
/// under their own name (an `x as y` binds `y` to another definition's name: left out).
fn python_imports(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("from ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once(" import ") else {
            continue;
        };
        let mut names = names.to_string();
        if names.trim_start().starts_with('(') {
            while !names.contains(')') {
                match lines.next() {
                    Some(next) => {
                        names.push(' ');
                        names.push_str(next.split('#').next().unwrap_or(""));
                    }
                    None => break,
                }
            }
        } else {
            while names.trim_end().ends_with('\\') {
                names = names.trim_end().trim_end_matches('\\').to_string();
                match lines.next() {
                    Some(next) => names.push_str(next),
                    None => break,
                }
            }
        }
        let names = names.split('#').next().unwrap_or("");
        let bound: Vec<String> = names
            .trim_matches(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .split(',')
            .filter_map(|item| {
                let item = item.trim_matches(|c: char| c.is_whitespace() || c == '(' || c == ')');
                match item.split_once(" as ") {
                    Some((a, b)) if a.trim() == b.trim() => Some(a.trim().to_string()),
                    Some(_) => None,
                    None if !item.is_empty() => Some(item.to_string()),
                    None => None,
                }
            })
            .collect();
        out.push((module.trim().to_string(), bound));
    }
    out
}

/// The repo-relative paths (without `.py`) that `module`, imported in the entry file
/// `entry_path`, may be: relative imports resolve against the entry's package; an absolute
/// `pkg.sub` is tried under each folder above the entry (a `src/` layout, a sibling package
/// such as pytest's `_pytest`), nearest first.
fn python_module_paths(entry_path: &str, module: &str) -> Vec<String> {
    let parts: Vec<&str> = entry_path.split('/').collect();
    let entry_dir = &parts[..parts.len() - 1];
    let dots = module.chars().take_while(|&c| c == '.').count();
    let rest: Vec<&str> = module[dots..]
        .split('.')
        .filter(|s| !s.is_empty())
        .collect();
    if dots > 0 {
        if dots - 1 > entry_dir.len() {
            return Vec::new();
        }
        let mut t = entry_dir[..entry_dir.len() - (dots - 1)].to_vec();
        t.extend(&rest);
        return if t.is_empty() {
            Vec::new()
        } else {
            vec![t.join("/")]
        };
    }
    if rest.is_empty() {
        return Vec::new();
    }
    (0..=entry_dir.len())
        .rev()
        .map(|n| {
            let mut t = entry_dir[..n].to_vec();
            t.extend(&rest);
            t.join("/")
        })
        .collect()
}

/// Whether `module`, imported in the entry file `entry_path`, is `def_path`'s module or a
/// package above it.
fn python_module_holds(entry_path: &str, module: &str, def_path: &str) -> bool {
    python_module_paths(entry_path, module)
        .iter()
        .any(|target| {
            def_path == format!("{target}.py")
                || def_path == format!("{target}.pyi")
                || def_path.starts_with(&format!("{target}/"))
        })
}

/// The line (1-based) of a module-level assignment of `name` in Python source: `name = …`,
/// `name: T = …` at column 0 — a definition the syntax tree's def/class rules do not see
/// (flask's `session`, `request`, signals; sympy's `Eq = Equality`).
pub fn python_assignment_line(text: &str, name: &str) -> Option<u32> {
    text.lines()
        .position(|line| assigns(line, name))
        .map(|i| i as u32 + 1)
}

/// Whether a column-0 line assigns `name`: `name = …`, `name: T = …`, a chain
/// `a = name = …` or a tuple `a, name = …`.
fn assigns(line: &str, name: &str) -> bool {
    if !line.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return false;
    }
    // `name: Annotation[with, brackets] = …`
    if let Some(rest) = line.strip_prefix(name) {
        let rest = rest.trim_start();
        if rest.starts_with(':') && !rest.starts_with(":=") && rest.contains('=') {
            return true;
        }
    }
    // Split at each `=` that is an assignment (not `==`, `<=`, `>=`, `!=`), before any
    // bracket or string: targets are the parts before the last one.
    let bytes = line.as_bytes();
    let mut cuts = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' | b'"' | b'\'' | b'#' => break,
            b'=' => {
                let prev = if i > 0 { bytes[i - 1] } else { b' ' };
                let next = bytes.get(i + 1).copied().unwrap_or(b' ');
                if next != b'=' && !matches!(prev, b'=' | b'<' | b'>' | b'!') {
                    cuts.push(i);
                }
            }
            _ => {}
        }
    }
    let mut start = 0;
    cuts.iter().any(|&cut| {
        let target = &line[start..cut];
        start = cut + 1;
        target.split(',').any(|t| {
            let t = t.split(':').next().unwrap_or("").trim();
            t == name
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reexports(entry: &str, text: &str, language: Language, name: &str, def: &str) -> bool {
        EntryFile::parse(entry, text, language).reexports(name, def)
    }

    #[test]
    fn python_reexports_resolve_to_the_defining_module() {
        let init = "from .core import Symbol\nfrom .solvers import (solve, solve_linear,\n    nsolve)\nfrom .x import y as solve\n";
        assert!(reexports(
            "sympy/__init__.py",
            init,
            Language::Python,
            "solve",
            "sympy/solvers/solvers.py"
        ));
        assert!(reexports(
            "sympy/__init__.py",
            init,
            Language::Python,
            "nsolve",
            "sympy/solvers/solvers.py"
        ));
        assert!(!reexports(
            "sympy/__init__.py",
            init,
            Language::Python,
            "solve",
            "sympy/logic/sat.py"
        ));
        let init = "from flask.app import Flask as Flask\nfrom .helpers import url_for\n";
        assert!(reexports(
            "src/flask/__init__.py",
            init,
            Language::Python,
            "Flask",
            "src/flask/app.py"
        ));
        assert!(reexports(
            "src/flask/__init__.py",
            init,
            Language::Python,
            "url_for",
            "src/flask/helpers.py"
        ));
        assert!(!reexports(
            "src/flask/__init__.py",
            init,
            Language::Python,
            "url_for",
            "src/flask/app.py"
        ));
        let lib = "mod io;\npub use crate::io::buf_stream::{BufStream, Other};\n";
        assert!(!reexports(
            "src/lib.rs",
            lib,
            Language::Rust,
            "BufStream",
            "src/net/util.rs"
        ));
        assert!(reexports(
            "src/lib.rs",
            lib,
            Language::Rust,
            "BufStream",
            "src/io/buf_stream.rs"
        ));
        assert!(!reexports(
            "src/lib.rs",
            lib,
            Language::Rust,
            "Buf",
            "src/io/buf.rs"
        ));
        let index = "export { createApp } from './app';\nexport * from './router';\n";
        assert!(reexports(
            "src/index.ts",
            index,
            Language::TypeScript,
            "createApp",
            "src/app.ts"
        ));
        assert!(reexports(
            "src/index.ts",
            index,
            Language::TypeScript,
            "route",
            "src/router.ts"
        ));
    }

    #[test]
    fn entry_files_are_the_packages_above_nearest_first() {
        assert_eq!(
            entry_files("sympy/solvers/solvers.py", Language::Python),
            vec![
                "sympy/solvers/__init__.py",
                "sympy/__init__.py",
                "__init__.py"
            ]
        );
        assert!(entry_files("a.go", Language::Go).is_empty());
    }
}
