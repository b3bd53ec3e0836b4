//! What counts as an answer. Ranking always orders *something*: kNN returns its nearest
//! neighbours however far they are, and BM25 over code-aware tokens matches a single part of
//! an identifier. A query that matches nothing (`zzqqxx_nonexistent_word`) must get no results
//! — and exit 1, as grep does — not sixteen unrelated chunks.
//!
//! A result is an answer when any of these holds:
//! - it matched the query's words — and, for a query that is one identifier, the whole
//!   identifier (its joined form, or every part of it), not just one part;
//! - its cosine to the query reaches `answer_floor` (calibrated on CoSQA dev and nonsense
//!   queries: docs/EVAL.md, "What counts as an answer");
//! - the query names its file or a definition in it (file-level evidence).

use crate::plan::QueryPlan;
use quarry_core::tokens;

/// The identifier a query consists of, when it is nothing else (`zzqqxx_nonexistent_word`,
/// `Blueprint.register`): its lowercase parts.
pub fn lone_identifier(query: &str, plan: &QueryPlan) -> Option<Vec<String>> {
    let query = query.trim().trim_matches('`');
    if plan.issue.is_some() || query.split_whitespace().count() != 1 {
        return None;
    }
    if !plan.identifiers.iter().any(|i| i == query) {
        return None;
    }
    let parts = tokens::identifier_parts(query);
    (parts.len() > 1).then_some(parts)
}

/// Whether a chunk (its path, symbol and text) holds the whole identifier: its joined form,
/// or every one of its parts (as words, allowing a plural `s`, which the FTS stemmer also
/// allows).
pub fn holds_identifier(parts: &[String], haystack: &[&str]) -> bool {
    let joined = parts.concat();
    let mut found = vec![false; parts.len()];
    let mut whole = false;
    for text in haystack {
        tokens::for_each_token(text, |token| {
            if token == joined {
                whole = true;
            }
            for (i, part) in parts.iter().enumerate() {
                if !found[i] && same_word(token, part) {
                    found[i] = true;
                }
            }
        });
        if whole {
            return true;
        }
    }
    found.iter().all(|&f| f)
}

fn same_word(token: &str, part: &str) -> bool {
    // `name`/`names`, `class`/`classes`: the word, without a final `s`, without a final `es`.
    // Borrowed, not copied: this runs for every token of every candidate a lone identifier
    // is checked against.
    fn forms(w: &str) -> [&str; 3] {
        let cut = |suffix: &str| w.strip_suffix(suffix).filter(|s| s.len() >= 3).unwrap_or(w);
        [w, cut("s"), cut("es")]
    }
    let (a, b) = (forms(token), forms(part));
    a.iter().any(|x| b.contains(x))
}

/// Whether a result is an answer (module docs): `words` — it matched the query's words (as a
/// whole identifier, for a lone identifier); `cosine` — its similarity, if kNN saw it;
/// `named` — the query names its file or a definition in it.
pub fn is_answer(words: bool, cosine: Option<f64>, named: bool, floor: f64) -> bool {
    words || named || cosine.is_some_and(|c| c >= floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan;

    #[test]
    fn a_lone_identifier_must_match_whole() {
        let q = "zzqqxx_nonexistent_word";
        let parts = lone_identifier(q, &plan(q)).unwrap();
        assert!(!holds_identifier(&parts, &["a word that does not exist"]));
        assert!(holds_identifier(&parts, &["x = zzqqxxNonexistentWord()"]));
        let q = "getUserNames";
        let parts = lone_identifier(q, &plan(q)).unwrap();
        assert!(holds_identifier(&parts, &["def get_user_name(self):"]));
        assert!(!holds_identifier(
            &parts,
            &["def get(self): return self.name"]
        ));
        let q = "ClassesLoader";
        let parts = lone_identifier(q, &plan(q)).unwrap();
        assert!(holds_identifier(&parts, &["the class loader"]));
        assert_eq!(
            lone_identifier("where are users stored", &plan("where are users stored")),
            None
        );
        assert_eq!(lone_identifier("session", &plan("session")), None);
    }

    #[test]
    fn far_neighbours_are_not_answers_unless_something_else_says_so() {
        assert!(!is_answer(false, Some(0.2), false, 0.35));
        assert!(is_answer(false, Some(0.5), false, 0.35));
        assert!(is_answer(true, Some(0.1), false, 0.35));
        assert!(is_answer(false, Some(0.1), true, 0.35));
        assert!(!is_answer(false, None, false, 0.35));
    }
}
