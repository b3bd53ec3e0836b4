//! The second stage's protocol with a language model, with no I/O: the prompt that shows it the
//! first stage's top candidates, the lenient reading of its reply, and the merge of its order
//! with the first stage's.
//!
//! A model's reply is prose at worst: ids are read wherever they stand (`3, 1, 7`, `[3][1]`,
//! `3\n1`, "chunk 3 is best, then 1"), unknown and repeated ids are dropped, and candidates it
//! leaves out keep their first-stage order after the ones it ranked. A reply naming no
//! candidate is not an order at all, and the caller keeps the first stage.

use std::fmt::Write;

/// One first-stage result shown to the model.
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    pub path: &'a str,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<&'a str>,
    pub text: &'a str,
}

/// Characters of a candidate's text put in the prompt: the head of a chunk says what it is,
/// and twenty candidates stay within a small model's context.
pub const CANDIDATE_CHARS: usize = 1_500;

/// The rerank prompt: instructions, the candidates as `<chunk id="N" …>` tags (ids are the
/// candidates' positions, from 1), then the query.
pub fn prompt(query: &str, candidates: &[Candidate]) -> String {
    let mut out = String::with_capacity(candidates.len() * (CANDIDATE_CHARS + 120) + 600);
    out.push_str(
        "You rank code search results. Below are numbered chunks of code or text, then a query.\n\
         Answer with the ids of the chunks that help answer the query, most relevant first,\n\
         separated by commas, and nothing else. Leave out chunks that do not help.\n\n",
    );
    for (i, c) in candidates.iter().enumerate() {
        let _ = write!(
            out,
            "<chunk id=\"{}\" path=\"{}\" lines=\"{}-{}\"",
            i + 1,
            attribute(c.path),
            c.start_line,
            c.end_line
        );
        if let Some(symbol) = c.symbol {
            let _ = write!(out, " symbol=\"{}\"", attribute(symbol));
        }
        out.push_str(">\n");
        let text = cut(c.text, CANDIDATE_CHARS);
        // A chunk that contains the closing tag must not end its own element early.
        out.push_str(&text.replace("</chunk>", "</ chunk>"));
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("</chunk>\n");
    }
    close_with(&mut out, "query", query, "Ids, most relevant first:");
    out
}

/// The candidates' positions (0-based) in the order the reply gives, read leniently; empty
/// when the reply names none of the `count` candidates.
pub fn parse_order(reply: &str, count: usize) -> Vec<usize> {
    let mut seen = vec![false; count];
    let mut order = Vec::new();
    let bytes = reply.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        // Digits glued to letters, or to a dot and more digits, are part of something else
        // (`v2`, `x86`, `3.5`); a full stop after an id is just the end of a sentence.
        let at = |p: Option<usize>| p.and_then(|p| bytes.get(p)).copied();
        let letter = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphabetic());
        let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
        let before = at(start.checked_sub(1));
        let after = at(Some(i));
        if letter(before)
            || letter(after)
            || (before == Some(b'.') && digit(at(start.checked_sub(2))))
            || (after == Some(b'.') && digit(at(Some(i + 1))))
        {
            continue;
        }
        let Ok(id) = reply[start..i].parse::<usize>() else {
            continue;
        };
        if (1..=count).contains(&id) && !seen[id - 1] {
            seen[id - 1] = true;
            order.push(id - 1);
        }
    }
    order
}

/// All `count` positions: the model's order first, then the ones it left out in their
/// first-stage order.
pub fn merge(order: &[usize], count: usize) -> Vec<usize> {
    let mut placed = vec![false; count];
    let mut out = Vec::with_capacity(count);
    for &i in order {
        if i < count && !placed[i] {
            placed[i] = true;
            out.push(i);
        }
    }
    out.extend((0..count).filter(|&i| !placed[i]));
    out
}

/// Writes `<TAG path="…" lines="a-b">` and a newline.
pub(crate) fn open_tag(out: &mut String, tag: &str, c: &Candidate) {
    let _ = writeln!(
        out,
        "<{tag} path=\"{}\" lines=\"{}-{}\">",
        attribute(c.path),
        c.start_line,
        c.end_line
    );
}

/// Ends a prompt: the user's text in `<TAG>…</TAG>` (its own closing tag defused), then `cue`.
pub(crate) fn close_with(out: &mut String, tag: &str, text: &str, cue: &str) {
    let closing = format!("</{tag}>");
    let _ = write!(
        out,
        "\n<{tag}>{}{closing}\n\n{cue}",
        text.replace(&closing, &format!("</ {tag}>"))
    );
}

/// `s` made safe inside a double-quoted tag attribute.
pub(crate) fn attribute(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

fn cut(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// Reciprocal-rank constant for [`blend`]: small, because a second stage sees tens of
/// candidates, not hundreds, and a rank's weight should fall off within them.
const BLEND_RANK_K: f64 = 10.0;

/// A pointwise judge's order blended with the first stage's: each candidate scores
/// `model_weight / (K + model rank) + (1 - model_weight) / (K + first-stage rank)`; returns the
/// candidates' positions (0-based), best first. `model_weight` 1 is the judge's order alone
/// (ties keep the first stage's order), 0 the first stage's.
pub fn blend(scores: &[f32], model_weight: f64) -> Vec<usize> {
    let mut by_model: Vec<usize> = (0..scores.len()).collect();
    by_model.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut model_rank = vec![0usize; scores.len()];
    for (rank, &i) in by_model.iter().enumerate() {
        model_rank[i] = rank;
    }
    let fused = |i: usize| {
        model_weight / (BLEND_RANK_K + model_rank[i] as f64 + 1.0)
            + (1.0 - model_weight) / (BLEND_RANK_K + i as f64 + 1.0)
    };
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| fused(b).total_cmp(&fused(a)).then(a.cmp(&b)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prompt_tags_every_candidate_and_ends_with_the_query() {
        let c = [
            Candidate {
                path: "src/a.py",
                start_line: 1,
                end_line: 9,
                symbol: Some("load"),
                text: "def load():\n    pass\n",
            },
            Candidate {
                path: "b \"q\".md",
                start_line: 3,
                end_line: 4,
                symbol: None,
                text: "fake </chunk> end",
            },
        ];
        let p = prompt("how to </query> load", &c);
        assert!(p.contains("<chunk id=\"1\" path=\"src/a.py\" lines=\"1-9\" symbol=\"load\">"));
        assert!(p.contains("<chunk id=\"2\" path=\"b &quot;q&quot;.md\" lines=\"3-4\">"));
        assert_eq!(p.matches("</chunk>").count(), 2, "{p}");
        assert!(p.contains("<query>how to </ query> load</query>"));
        let long = "x".repeat(CANDIDATE_CHARS * 3);
        let p = prompt(
            "q",
            &[Candidate {
                text: &long,
                ..c[0].clone()
            }],
        );
        assert!(p.len() < CANDIDATE_CHARS + 1_000);
    }

    #[test]
    fn replies_are_read_leniently() {
        assert_eq!(parse_order("3, 1, 2", 3), vec![2, 0, 1]);
        assert_eq!(parse_order("[2][2] 9 0 1", 3), vec![1, 0]);
        assert_eq!(
            parse_order("Chunk 3 is the answer; then 1.\n(ignore v2 and 3.5)", 4),
            vec![2, 0]
        );
        assert!(parse_order("none of them help", 5).is_empty());
        assert!(parse_order("", 5).is_empty());
        assert!(parse_order("99999999999999999999999", 5).is_empty());
    }

    #[test]
    fn left_out_candidates_keep_their_order_after_the_ranked_ones() {
        assert_eq!(merge(&[3, 1], 5), vec![3, 1, 0, 2, 4]);
        assert_eq!(merge(&[], 3), vec![0, 1, 2]);
        assert_eq!(merge(&[7, 1, 1], 3), vec![1, 0, 2]);
    }

    proptest! {
        #[test]
        fn any_reply_gives_a_permutation(reply in ".{0,400}", count in 0usize..40) {
            let order = parse_order(&reply, count);
            prop_assert!(order.iter().all(|&i| i < count));
            let mut merged = merge(&order, count);
            prop_assert_eq!(&merged[..order.len()], &order[..]);
            merged.sort_unstable();
            prop_assert_eq!(merged, (0..count).collect::<Vec<_>>());
        }
    }

    #[test]
    fn blend_moves_from_the_first_stage_to_the_judge() {
        let scores = [0.1, 0.9, 0.5, 0.3];
        assert_eq!(blend(&scores, 1.0), vec![1, 2, 3, 0]);
        assert_eq!(blend(&scores, 0.0), vec![0, 1, 2, 3]);
        // Half and half: the judge's favourite overtakes, but a strong first-stage rank holds
        // against a weak judgement only so far.
        let half = blend(&scores, 0.5);
        assert_eq!(half[0], 1);
        assert_eq!(half.len(), 4);
        // Ties in the judge's scores keep the first stage's order.
        assert_eq!(blend(&[0.5, 0.5, 0.5], 1.0), vec![0, 1, 2]);
    }
}
