//! The release an issue was reported against. A bug report often says which version it runs
//! ("SymPy 1.10 gives …", "with pytest 5.4.3"); the bug was in that release, so the commit
//! that fixed it came after it was tagged. Commits older than the release named are
//! look-alikes from another era of the same code (sympy's history has fifteen years of
//! "fix printing of …"): `search.commit_before_release_prior` lowers them.
//!
//! Only a version next to the project's own name counts: "Python 3.8", "numpy 1.16" or a
//! bare `2.5` in pasted code say nothing about this project's releases, and a pre-release
//! ("1.5.dev", "6.0.0rc1") has no release tag to compare with.

use regex::Regex;
use std::sync::OnceLock;

fn version_after_name() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r"(?i)\b([a-z][a-z0-9_-]*[a-z0-9])\s+(?:version\s+|v)?(\d+\.\d+(?:\.\d+)?)((?:\.?(?:dev|rc|a|b|alpha|beta|post)\d*)|\.\d+)?\b",
        )
        .expect("valid regex")
    })
}

fn version_at_end() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"(?:^|[^0-9.])(\d+(?:\.\d+)+)$").expect("valid regex"))
}

/// The versions `text` names right after one of `project_names` (case-insensitive), as
/// written (`1.10`, `5.4.3`), releases only.
pub fn versions_named(text: &str, project_names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in version_after_name().captures_iter(text) {
        let name = &m[1];
        if !project_names.iter().any(|p| p.eq_ignore_ascii_case(name)) || m.get(3).is_some() {
            continue;
        }
        let version = m[2].to_string();
        if !out.contains(&version) {
            out.push(version);
        }
    }
    out
}

/// The release version a tag names (`v1.10`, `sympy-1.10`, `1.10.0` → `1.10`, `1.10`,
/// `1.10.0`); `None` for a pre-release (`1.9rc1`) or a tag with no version at its end.
pub fn tag_version(tag: &str) -> Option<&str> {
    version_at_end()
        .captures(tag)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

/// Whether a tag's version is the version named: the same numbers, a missing last `.0`
/// allowed (`1.10` names the tag `1.10.0`).
pub fn same_release(named: &str, tagged: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        let mut p: Vec<u64> = v.split('.').filter_map(|x| x.parse().ok()).collect();
        while p.len() > 2 && p.last() == Some(&0) {
            p.pop();
        }
        p
    };
    parts(named) == parts(tagged)
}

/// The earliest of the `named` versions (`versions_named`) among `tags` (name, time), if
/// any: the issue was seen in it, so its fix came later. The earliest when several are named
/// ("works in 1.9, fails in 1.10"): the bug is in one of them, and the earlier bound is the
/// safe one.
pub fn earliest_release<'t>(
    named: &[String],
    tags: &'t [(String, i64)],
) -> Option<&'t (String, i64)> {
    tags.iter()
        .filter(|(tag, _)| {
            tag_version(tag).is_some_and(|v| named.iter().any(|n| same_release(n, v)))
        })
        .min_by_key(|(_, time)| *time)
}

/// Parts of repo names that name a language, a runtime or a kind of repo rather than the
/// project: `python-requests` is not released as Python, and "Python 3.8" in its issues
/// is not one of its versions.
const NOT_A_PROJECT: &[&str] = &[
    "python", "node", "nodejs", "java", "golang", "rust", "ruby", "php", "perl", "dotnet",
    "kotlin", "scala", "swift", "django", "react", "lib", "core", "dev", "src", "history", "repo",
    "mirror", "git", "main", "master", "the", "and", "for",
];

/// The names an issue may call a project by: the parts of its repo's name and of its
/// folder's name (`pytest-dev+pytest` → `pytest`), three letters or more, less those that
/// name a language, a runtime or a kind of repo (`python-requests` → `requests`).
pub fn project_names(names: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        for part in name.split(|c: char| !c.is_alphanumeric()) {
            let part = part.to_ascii_lowercase();
            if part.len() >= 3
                && !part.chars().all(|c| c.is_ascii_digit())
                && !NOT_A_PROJECT.contains(&part.as_str())
                && !out.contains(&part)
            {
                out.push(part);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        project_names(&["sympy+sympy-history", "/src/sympy"])
    }

    #[test]
    fn a_version_counts_only_next_to_the_projects_name_and_as_a_release() {
        let text = "I'm trying to update my code to use SymPy 1.10 but ran into an issue. \
            SymPy 1.9 and under outputs (1,). Python 3.8, numpy 1.16; x**2.5 \
            This claims to be version 1.5.dev; sympy 1.11rc1 too.";
        assert_eq!(versions_named(text, &names()), vec!["1.10", "1.9"]);
        assert!(versions_named("with pytest 5.4.3", &names()).is_empty());
        assert_eq!(
            versions_named("with pytest 5.4.3", &project_names(&["pytest-dev+pytest"])),
            vec!["5.4.3"]
        );
    }

    #[test]
    fn a_language_in_the_repos_name_is_not_the_project() {
        assert_eq!(
            project_names(&["python-requests", "/src/python-requests"]),
            vec!["requests"]
        );
        assert_eq!(project_names(&["pytest-dev+pytest"]), vec!["pytest"]);
        let names = project_names(&["python-requests"]);
        assert_eq!(
            versions_named("Python 3.8, requests 2.10.0", &names),
            vec!["2.10.0"]
        );
    }

    #[test]
    fn tags_name_their_release_and_the_earliest_named_bounds_the_fix() {
        assert_eq!(tag_version("sympy-1.10"), Some("1.10"));
        assert_eq!(tag_version("v1.10.0"), Some("1.10.0"));
        assert_eq!(tag_version("1.9rc1"), None);
        assert_eq!(tag_version("latest"), None);
        assert!(same_release("1.10", "1.10.0"));
        assert!(!same_release("1.1", "1.10"));
        let tags = vec![
            ("sympy-1.9".to_string(), 100),
            ("sympy-1.10".to_string(), 200),
            ("sympy-1.10rc1".to_string(), 150),
            ("sympy-1.1".to_string(), 10),
        ];
        let release = |text: &str| {
            earliest_release(&versions_named(text, &names()), &tags).map(|(tag, _)| tag.clone())
        };
        assert_eq!(
            release("SymPy 1.9 works; sympy 1.10 fails").as_deref(),
            Some("sympy-1.9")
        );
        assert_eq!(release("sympy 1.10 fails").as_deref(), Some("sympy-1.10"));
        assert_eq!(release("Python 3.9 fails"), None);
        assert_eq!(release("sympy 2.0 fails"), None);
    }
}
