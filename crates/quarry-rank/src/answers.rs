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
    match quick_look(parts, &joined, haystack) {
        Look::Holds => return true,
        Look::Lacks => return false,
        Look::Maybe => {}
    }
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

/// What a look at the lowercase texts tells without tokenizing them.
#[derive(Debug, PartialEq)]
enum Look {
    /// A whole word is the identifier (`spawn_blocking`, `SpawnBlocking`, `spawnblocking`).
    Holds,
    /// No token can be the identifier or one of its parts.
    Lacks,
    /// Only the tokens can tell.
    Maybe,
}

/// Whether the texts can hold the identifier at all: a token equal to the joined form, or
/// one `same_word` as each part, contains that part less at most its plural ending, so the
/// lowercase text contains it too. Most candidates fail this and are never tokenized. And
/// whether one surely does: a whole word (a run of letters, digits and `_` between bytes that
/// are none of these nor part of a non-ASCII character) that is the joined form or the parts
/// joined by `_`, in any case, is a token equal to the joined form.
fn quick_look(parts: &[String], joined: &str, haystack: &[&str]) -> Look {
    if !joined.is_ascii() {
        return Look::Maybe;
    }
    let snake = parts.join("_");
    let stems: Vec<&str> = parts
        .iter()
        .map(|p| {
            let keep = if p.len() < 3 {
                p.len()
            } else {
                (p.len().saturating_sub(2)).max(3)
            };
            &p[..keep.min(p.len())]
        })
        .collect();
    let mut seen = vec![false; stems.len()];
    let mut may = false;
    for text in haystack {
        let lower = text.to_ascii_lowercase();
        if whole_word_in(&lower, &snake) || whole_word_in(&lower, joined) {
            return Look::Holds;
        }
        if lower.contains(joined) {
            may = true;
        }
        for (i, stem) in stems.iter().enumerate() {
            if !seen[i] && lower.contains(stem) {
                seen[i] = true;
            }
        }
    }
    if may || seen.iter().all(|&s| s) {
        Look::Maybe
    } else {
        Look::Lacks
    }
}

/// Whether `word` (ASCII) occurs in `text` with no word byte on either side (a letter, a
/// digit, `_`, or any byte of a non-ASCII character, which may be a letter).
fn whole_word_in(text: &str, word: &str) -> bool {
    let in_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || !b.is_ascii();
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let end = at + word.len();
        (at == 0 || !in_word(bytes[at - 1])) && bytes.get(end).is_none_or(|&b| !in_word(b))
    })
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

    /// The quick look never says no where the tokens would say yes.
    #[test]
    fn the_quick_look_agrees_with_the_tokens() {
        let texts = [
            "def spawn_blocking(f):",
            "SpawnBlocking::new()",
            "spawns and blocks",
            "spawn x blockings",
            "classes of names",
            "class Name",
            "nothing here",
            "SPAWN_BLOCKING = 1",
            "spawnblocking",
            "the ids",
            "id",
            "a b",
            "HTTPServer",
            "http_servers",
            "x.spawn_blocking(f)",
            "my_spawn_blockingx",
            "spawnblockingfoo = 1",
            "é_spawn_blocking",
            "spawn_blockingé",
            "Spawn__Blocking",
        ];
        let idents = [
            vec!["spawn", "blocking"],
            vec!["class", "names"],
            vec!["ids"],
            vec!["id"],
            vec!["a", "b"],
            vec!["http", "server"],
            vec!["nothing"],
        ];
        for parts in idents {
            let parts: Vec<String> = parts.into_iter().map(str::to_string).collect();
            for text in texts {
                let full = {
                    let joined = parts.concat();
                    let mut found = vec![false; parts.len()];
                    let mut whole = false;
                    tokens::for_each_token(text, |t| {
                        whole |= t == joined;
                        for (i, p) in parts.iter().enumerate() {
                            found[i] |= same_word(t, p);
                        }
                    });
                    whole || found.iter().all(|&f| f)
                };
                assert_eq!(
                    holds_identifier(&parts, &[text]),
                    full,
                    "{parts:?} in {text:?}"
                );
            }
        }
    }
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
