//! ripgrep's file types (`-t/--type`, `-T/--type-not`, `--type-list`): the `ignore` crate's
//! default list, the very one ripgrep ships (`TypesBuilder::add_defaults`), so a type names
//! the same files in both. quarry's own languages (`--lang`) are a different thing: they are
//! what the chunker and the router know, and stay beside these.
//!
//! Types decide only for files found by walking a folder; a file named on the command line is
//! searched whatever its type, as in ripgrep. They are applied in the order given, the last
//! rule that names a file deciding (`-t py -T py` skips Python files, `-T py -t py` keeps
//! them); a selected type also lets through a hidden file it names, as ripgrep's walk does
//! (its whitelist comes before the hidden-file rule), which targets.rs handles.

use anyhow::{anyhow, Result};
use ignore::types::{Types, TypesBuilder};

/// One `-t NAME` or `-T NAME`, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TypeRule {
    /// `-t NAME`: only files of this type (several `-t` add up).
    Select(String),
    /// `-T NAME`: no files of this type.
    Negate(String),
}

/// The matcher for `rules`; `None` when there are none. An unknown name is an error worded as
/// ripgrep words it ("unrecognized file type: NAME").
pub(crate) fn matcher(rules: &[TypeRule]) -> Result<Option<Types>> {
    if rules.is_empty() {
        return Ok(None);
    }
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    for rule in rules {
        match rule {
            TypeRule::Select(name) => builder.select(name),
            TypeRule::Negate(name) => builder.negate(name),
        };
    }
    builder.build().map(Some).map_err(|e| anyhow!("{e}"))
}

/// Checks `rules` (for callers that want the error before anything else runs).
pub fn check(rules: &[TypeRule]) -> Result<()> {
    matcher(rules).map(|_| ())
}

/// Whether some rule selects a type (then files of no selected type are skipped).
pub(crate) fn selects(rules: &[TypeRule]) -> bool {
    rules.iter().any(|r| matches!(r, TypeRule::Select(_)))
}

/// `--type-list`: every type with its globs, one per line, as ripgrep prints it.
pub fn type_list() -> Vec<u8> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let mut out = Vec::new();
    for def in builder.definitions() {
        out.extend(def.name().as_bytes());
        out.extend(b": ");
        out.extend(def.globs().join(", ").as_bytes());
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn kept(rules: &[TypeRule], name: &str) -> bool {
        let types = matcher(rules).unwrap().unwrap();
        !types.matched(Path::new(name), false).is_ignore()
    }

    #[test]
    fn types_select_negate_and_the_last_rule_wins() {
        let py = || TypeRule::Select("py".into());
        let md = || TypeRule::Select("md".into());
        let not_py = || TypeRule::Negate("py".into());
        assert!(kept(&[py(), md()], "a.py") && kept(&[py(), md()], "b.md"));
        assert!(!kept(&[py(), md()], "c.rs"));
        assert!(!kept(&[not_py()], "a.py") && kept(&[not_py()], "c.rs"));
        assert!(!kept(&[py(), not_py()], "a.py"));
        assert!(kept(&[not_py(), py()], "a.py"));
        assert!(kept(&[TypeRule::Select("toml".into())], "Cargo.toml"));
        assert!(kept(&[TypeRule::Select("yaml".into())], "ci.yml"));
        let err = matcher(&[TypeRule::Select("nosuch".into())]).unwrap_err();
        assert_eq!(err.to_string(), "unrecognized file type: nosuch");
        assert!(matcher(&[]).unwrap().is_none());
        let list = String::from_utf8(type_list()).unwrap();
        assert!(list.lines().count() > 150, "{list}");
        assert!(list.contains("\npy: *.py, *.pyi\n"), "{list}");
    }
}
