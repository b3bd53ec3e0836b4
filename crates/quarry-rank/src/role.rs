//! What a file is for, read from its path alone: source code, tests, documentation, a
//! changelog, translations, examples, vendored copies of other projects, …
//!
//! Why: a bug report or a question about behaviour asks where the *code* is. Tests, docs and
//! changelogs repeat the code's words (a test calls the function, a changelog names it, a
//! tutorial explains it), so word overlap alone ranks them beside — often above — the file
//! to change. On SWE-bench issues from repositories quarry was not tuned on, two thirds of the
//! lexical top 10 were such files, and no fix in those sets changes one of them. The rule is
//! about what files are, not about any project: every name below is a convention shared across
//! ecosystems (pytest/unittest, Jest, Go, JUnit, Sphinx, GNU gettext, Keep a Changelog).

use serde::{Deserialize, Serialize};

/// The role of a file in its repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileRole {
    /// Code the project ships.
    Source,
    /// Tests and their fixtures (`tests/`, `test_x.py`, `x_test.go`, `x.spec.ts`, `XTest.java`).
    Test,
    /// Prose: `docs/`, `.rst`, `.md`, `.txt`, README, LICENSE, AUTHORS.
    Docs,
    /// Release notes: CHANGES, CHANGELOG, HISTORY, NEWS, `whatsnew/`, `changelog/`.
    Changelog,
    /// Message catalogs (`.po`, `.pot`, `locale/`).
    Translation,
    /// Examples, demos, tutorials' code.
    Example,
    /// Benchmarks.
    Benchmark,
    /// Copies of other projects (`vendor/`, `third_party/`, `_vendor/`).
    Vendored,
    /// Configuration and data (`.json`, `.yaml`, `.toml`, `.cfg`, `.ini`, `.csv`, …).
    Data,
}

impl FileRole {
    pub fn name(self) -> &'static str {
        match self {
            FileRole::Source => "source",
            FileRole::Test => "test",
            FileRole::Docs => "docs",
            FileRole::Changelog => "changelog",
            FileRole::Translation => "translation",
            FileRole::Example => "example",
            FileRole::Benchmark => "benchmark",
            FileRole::Vendored => "vendored",
            FileRole::Data => "data",
        }
    }
}

const DOC_EXTENSIONS: &[&str] = &[
    "rst", "md", "markdown", "txt", "adoc", "asciidoc", "rdoc", "tex",
];
const DATA_EXTENSIONS: &[&str] = &[
    "json", "yaml", "yml", "toml", "cfg", "ini", "csv", "tsv", "xml", "lock", "conf",
];
const TRANSLATION_EXTENSIONS: &[&str] = &["po", "pot", "mo", "xliff", "xlf"];
const CHANGELOG_STEMS: &[&str] = &[
    "changes",
    "changelog",
    "history",
    "news",
    "releases",
    "release-notes",
    "release_notes",
    "whatsnew",
    "whats-new",
    "whats_new",
];
const DOC_STEMS: &[&str] = &[
    "readme",
    "license",
    "licence",
    "copying",
    "authors",
    "contributors",
    "contributing",
    "code_of_conduct",
    "notice",
    "security",
    "maintainers",
    "install",
];

/// Classifies a repo-relative path (`/`-separated).
pub fn classify(path: &str) -> FileRole {
    let lower = path.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('/').filter(|p| !p.is_empty()).collect();
    let Some((file, dirs)) = parts.split_last() else {
        return FileRole::Source;
    };
    let (stem, ext) = match file.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, e),
        _ => (*file, ""),
    };
    let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));

    if TRANSLATION_EXTENSIONS.contains(&ext) || in_dir(&["locale", "locales", "i18n", "l10n"]) {
        return FileRole::Translation;
    }
    let prose = ext.is_empty() || DOC_EXTENSIONS.contains(&ext);
    if (CHANGELOG_STEMS.contains(&stem) && prose)
        || in_dir(&[
            "changelog",
            "changelogs",
            "changes",
            "whatsnew",
            "release-notes",
            "releasenotes",
            "newsfragments",
            "changelog.d",
        ])
    {
        return FileRole::Changelog;
    }
    if in_dir(&[
        "vendor",
        "vendored",
        "_vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "node_modules",
        "extern",
    ]) {
        return FileRole::Vendored;
    }
    if is_test_file(stem, ext, file, path)
        || in_dir(&[
            "test",
            "tests",
            "__tests__",
            "spec",
            "specs",
            "testdata",
            "fixtures",
        ])
    {
        return FileRole::Test;
    }
    if DOC_EXTENSIONS.contains(&ext)
        || (DOC_STEMS.contains(&stem) && prose)
        || in_dir(&["doc", "docs", "documentation", "man"])
    {
        return FileRole::Docs;
    }
    if in_dir(&[
        "examples",
        "example",
        "demo",
        "demos",
        "samples",
        "sample",
        "tutorial",
        "tutorials",
        "gallery",
    ]) {
        return FileRole::Example;
    }
    if in_dir(&["benchmarks", "benchmark", "bench", "asv_bench"]) {
        return FileRole::Benchmark;
    }
    if DATA_EXTENSIONS.contains(&ext) {
        return FileRole::Data;
    }
    FileRole::Source
}

/// Test files by their name, in the conventions of the common test runners.
fn is_test_file(stem: &str, ext: &str, file: &str, original: &str) -> bool {
    if file == "conftest.py" {
        return true;
    }
    if stem.starts_with("test_") || stem.ends_with("_test") || stem.ends_with("_tests") {
        return true;
    }
    // `x.test.js`, `x.spec.ts`
    if stem.ends_with(".test") || stem.ends_with(".spec") {
        return true;
    }
    // JUnit / xUnit: `FooTest.java`, `FooTests.cs` — case matters here (`Contest.java` is not).
    if matches!(
        ext,
        "java" | "kt" | "scala" | "cs" | "groovy" | "swift" | "php"
    ) {
        let name = original.rsplit('/').next().unwrap_or(original);
        let stem_cased = name.rsplit_once('.').map_or(name, |(s, _)| s);
        return stem_cased.ends_with("Test") || stem_cased.ends_with("Tests");
    }
    false
}

/// Whether a commit whose changed paths have these roles has the shape of a fix: code the
/// project ships and tests beside it. A project that takes a bug report fixes the code and
/// adds the test that would have caught it; refactors, merges of a mainline, doc and release
/// commits rarely change both. `log` raises such commits for an issue text (commit_search.rs).
pub fn fix_shaped(roles: &[FileRole]) -> bool {
    roles.contains(&FileRole::Source) && roles.contains(&FileRole::Test)
}

/// Query words that ask for a role by name: a query that says "test" may want tests.
pub fn roles_named(words: &[String]) -> Vec<FileRole> {
    let mut roles = Vec::new();
    let mut add = |r: FileRole| {
        if !roles.contains(&r) {
            roles.push(r);
        }
    };
    for w in words {
        match w.as_str() {
            "test" | "tests" | "testing" | "testcase" | "unittest" | "fixture" | "fixtures"
            | "spec" | "specs" => add(FileRole::Test),
            "doc" | "docs" | "documentation" | "readme" | "tutorial" | "guide" | "manual" => {
                add(FileRole::Docs)
            }
            "changelog" | "changelogs" => add(FileRole::Changelog),
            "translation" | "translations" | "locale" | "catalog" | "gettext" => {
                add(FileRole::Translation)
            }
            "example" | "examples" | "demo" => add(FileRole::Example),
            "benchmark" | "benchmarks" => add(FileRole::Benchmark),
            "config" | "configuration" | "settings" | "yaml" | "json" | "toml" => {
                add(FileRole::Data)
            }
            _ => {}
        }
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;
    use FileRole::*;

    #[test]
    fn paths_are_classified_by_convention() {
        for (path, want) in [
            ("src/_pytest/python.py", Source),
            ("sympy/utilities/randtest.py", Source),
            ("sympy/testing/runtests.py", Source),
            ("testing/test_python.py", Test),
            ("sympy/core/tests/test_expr.py", Test),
            ("pkg/server_test.go", Test),
            ("web/app.spec.ts", Test),
            ("src/components/Button.test.tsx", Test),
            ("core/src/test/java/FooTest.java", Test),
            ("src/main/java/Contest.java", Source),
            ("conftest.py", Test),
            ("docs/user/quickstart.rst", Docs),
            ("doc/conf.py", Docs),
            ("README.md", Docs),
            ("LICENSE", Docs),
            ("HISTORY.rst", Changelog),
            ("CHANGES", Changelog),
            ("doc/whatsnew/2.5.rst", Changelog),
            ("changelog/1234.bugfix.rst", Changelog),
            ("sphinx/locale/de/LC_MESSAGES/sphinx.po", Translation),
            ("examples/intermediate/coupled_cluster.py", Example),
            ("asv_bench/benchmarks/groupby.py", Benchmark),
            ("pip/_vendor/requests/api.py", Vendored),
            ("setup.cfg", Data),
            ("package.json", Data),
            ("Makefile", Source),
            ("crates/engine/src/history.rs", Source),
            ("install.sh", Source),
            ("django/contrib/auth/news.py", Source),
        ] {
            assert_eq!(classify(path), want, "{path}");
        }
    }

    #[test]
    fn query_words_name_roles() {
        let w = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(roles_named(&w("where are the tests for parsing")), [Test]);
        assert_eq!(roles_named(&w("docs for retry config")), [Docs, Data]);
        assert!(roles_named(&w("retry failed uploads")).is_empty());
    }

    #[test]
    fn a_fix_changes_code_and_its_tests() {
        let fix_shaped =
            |paths: &[&str]| fix_shaped(&paths.iter().map(|p| classify(p)).collect::<Vec<_>>());
        assert!(fix_shaped(&[
            "sympy/core/mul.py",
            "sympy/core/tests/test_arit.py"
        ]));
        assert!(fix_shaped(&[
            "src/_pytest/python.py",
            "testing/test_terminal.py",
            "changelog/5220.feature.rst"
        ]));
        assert!(!fix_shaped(&["sympy/core/mul.py"]));
        assert!(!fix_shaped(&["tests/test_x.py", "docs/index.rst"]));
        assert!(!fix_shaped(&[]));
    }
}
