//! What a pattern requires of a file's text, as trigrams: the literal runs every match must
//! contain, combined with AND and OR as the pattern combines them (Russ Cox's "Regular
//! Expression Matching with a Trigram Index", the idea behind Google Code Search and zoekt).
//!
//! The requirement is only ever weaker than the pattern: a file it rules out cannot contain a
//! match, so the index narrows the files to read and the regex engine decides. Anything this
//! does not understand (classes, optional parts, lookarounds, literals under two characters)
//! requires nothing.
//!
//! regex-syntax parses the pattern exactly as grep-regex will; only the walk over its HIR is
//! ours: no crate turns a regex into an index query.

use regex_syntax::hir::{Hir, HirKind};

pub use quarry_core::Requirement;

/// How the patterns are read.
#[derive(Debug, Clone, Copy, Default)]
pub struct PatternSyntax {
    /// Patterns are literal strings (`-F`).
    pub fixed_strings: bool,
    /// Matching ignores case (`-i`): the trigram table folds case, but its folding is not the
    /// regex engine's Unicode simple case folding for every character, so literals with such
    /// characters are not required.
    pub case_insensitive: bool,
}

/// What any of `patterns` requires (a file matches if it matches one of them). A pattern that
/// does not parse requires nothing here: the matcher reports the error.
pub fn requirement(patterns: &[String], syntax: PatternSyntax) -> Requirement {
    let each: Vec<Requirement> = patterns
        .iter()
        .map(|p| {
            if syntax.fixed_strings {
                contains(p, syntax)
            } else {
                match regex_syntax::ParserBuilder::new().build().parse(p) {
                    Ok(hir) => of_hir(&hir, syntax),
                    Err(_) => Requirement::Anything,
                }
            }
        })
        .collect();
    any(each)
}

fn of_hir(hir: &Hir, syntax: PatternSyntax) -> Requirement {
    match hir.kind() {
        HirKind::Literal(lit) => match std::str::from_utf8(&lit.0) {
            Ok(s) => contains(s, syntax),
            Err(_) => Requirement::Anything,
        },
        HirKind::Capture(cap) => of_hir(&cap.sub, syntax),
        HirKind::Repetition(rep) if rep.min >= 1 => of_hir(&rep.sub, syntax),
        HirKind::Concat(parts) => {
            // Adjacent literals form one longer run (`ab` then `c` → `abc`).
            let mut all = Vec::new();
            let mut run = String::new();
            for part in parts {
                let text = match part.kind() {
                    HirKind::Literal(lit) => std::str::from_utf8(&lit.0).ok(),
                    _ => None,
                };
                match text {
                    Some(text) => run.push_str(text),
                    None => {
                        all.push(contains(&std::mem::take(&mut run), syntax));
                        all.push(of_hir(part, syntax));
                    }
                }
            }
            all.push(contains(&run, syntax));
            every(all)
        }
        HirKind::Alternation(options) => any(options.iter().map(|o| of_hir(o, syntax)).collect()),
        _ => Requirement::Anything,
    }
}

/// Characters whose case folding may differ between the regex engine and the trigram table:
/// `k` and `s` (the Kelvin sign and the long s fold to them) and everything outside ASCII.
fn folds_unevenly(c: char) -> bool {
    !c.is_ascii() || matches!(c, 'k' | 'K' | 's' | 'S')
}

fn contains(s: &str, syntax: PatternSyntax) -> Requirement {
    if !syntax.case_insensitive {
        return if s.chars().count() >= 3 {
            Requirement::Contains(s.to_string())
        } else {
            Requirement::Anything
        };
    }
    // Under -i, each stretch free of unevenly folding characters is required on its own.
    every(
        s.split(folds_unevenly)
            .filter(|part| part.chars().count() >= 3)
            .map(|part| Requirement::Contains(part.to_string()))
            .collect(),
    )
}

fn every(parts: Vec<Requirement>) -> Requirement {
    let mut kept: Vec<Requirement> = Vec::new();
    for part in parts {
        match part {
            Requirement::Anything => {}
            Requirement::All(inner) => kept.extend(inner),
            other => kept.push(other),
        }
    }
    match kept.len() {
        0 => Requirement::Anything,
        1 => kept.pop().unwrap_or(Requirement::Anything),
        _ => Requirement::All(kept),
    }
}

fn any(options: Vec<Requirement>) -> Requirement {
    if options.is_empty() || options.contains(&Requirement::Anything) {
        return Requirement::Anything;
    }
    let mut kept = Vec::new();
    for option in options {
        match option {
            Requirement::Any(inner) => kept.extend(inner),
            other => kept.push(other),
        }
    }
    if kept.len() == 1 {
        kept.pop().unwrap_or(Requirement::Anything)
    } else {
        Requirement::Any(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Requirement::*;

    fn req(p: &str) -> Requirement {
        requirement(&[p.to_string()], PatternSyntax::default())
    }
    fn lit(s: &str) -> Requirement {
        Contains(s.into())
    }

    #[test]
    fn literal_runs_are_required_and_combined_as_the_pattern_combines_them() {
        assert_eq!(req(r"parse_expr\("), lit("parse_expr("));
        assert_eq!(
            req(r"parse_expr\(.*evaluate=False"),
            All(vec![lit("parse_expr("), lit("evaluate=False")])
        );
        assert_eq!(req("TODO|FIXME"), Any(vec![lit("TODO"), lit("FIXME")]));
        assert_eq!(req(r"(foo)+bar"), All(vec![lit("foo"), lit("bar")]));
        // An optional part, a class, a short literal: nothing required from them.
        assert_eq!(req(r"(foo)?bar"), lit("bar"));
        assert_eq!(req(r"\w+\("), Anything);
        assert_eq!(req("ab|cdef"), Anything);
        assert_eq!(req("[a-z]+"), Anything);
        assert_eq!(req("(unclosed"), Anything);
        // Several -e patterns: any of them.
        assert_eq!(
            requirement(&["alpha".into(), "beta".into()], PatternSyntax::default()),
            Any(vec![lit("alpha"), lit("beta")])
        );
    }

    #[test]
    fn fixed_strings_and_ignored_case() {
        let fixed = PatternSyntax {
            fixed_strings: true,
            ..Default::default()
        };
        assert_eq!(requirement(&["a.b(c".into()], fixed), lit("a.b(c"));
        let icase = PatternSyntax {
            case_insensitive: true,
            ..Default::default()
        };
        // `k`/`s` and non-ASCII letters split the literal.
        assert_eq!(
            requirement(&["parse_task".into()], icase),
            All(vec![lit("par"), lit("e_ta")])
        );
    }

    #[test]
    fn the_fts5_query_is_the_trigrams_of_each_literal() {
        assert_eq!(lit("abcd").fts5_query().unwrap(), r#""abc" AND "bcd""#);
        assert_eq!(lit(r#"a"bc"#).fts5_query().unwrap(), r#""a""b" AND """bc""#);
        assert_eq!(
            Any(vec![lit("abc"), All(vec![lit("xyz"), lit("uvw")])])
                .fts5_query()
                .unwrap(),
            r#"("abc") OR (("xyz") AND ("uvw"))"#
        );
        assert_eq!(Anything.fts5_query(), None);
    }
}
