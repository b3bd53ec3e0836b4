//! Agentic search, with no I/O: follow-up queries after a first search — proposed by a language
//! model that read the first results, or, offline, built from the identifiers those results
//! define (pseudo-relevance feedback) — and the fusion of every round's list into one.

use std::collections::HashMap;
use std::hash::Hash;

use crate::rerank::{close_with, open_tag, Candidate, CANDIDATE_CHARS};

/// Follow-up queries per round, and rounds, at most.
pub const MAX_FOLLOW_UPS: usize = 3;
pub const MAX_ROUNDS: usize = 3;
/// Identifiers an offline follow-up adds to the query.
pub const FEEDBACK_IDENTIFIERS: usize = 5;
/// Top results whose definitions feed an offline follow-up.
pub const FEEDBACK_RESULTS: usize = 5;

/// The offline follow-up: the query plus the names the top results define that it does not
/// already contain (`Class.method` counts as `method`), or `None` when there are none.
pub fn feedback_query(query: &str, top_symbols: &[&str]) -> Option<String> {
    let words: Vec<String> = crate::plan::plan(query)
        .terms
        .iter()
        .map(|t| t.to_lowercase())
        .collect();
    let mut added: Vec<&str> = Vec::new();
    for symbol in top_symbols.iter().take(FEEDBACK_RESULTS) {
        let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol).trim();
        if name.len() < 3
            || query.contains(name)
            || words.contains(&name.to_lowercase())
            || added.contains(&name)
        {
            continue;
        }
        added.push(name);
        if added.len() == FEEDBACK_IDENTIFIERS {
            break;
        }
    }
    (!added.is_empty()).then(|| format!("{query} {}", added.join(" ")))
}

/// The prompt asking a model for follow-up searches after reading the first results.
pub fn follow_up_prompt(query: &str, shown: &[Candidate]) -> String {
    let mut out = String::with_capacity(shown.len() * (CANDIDATE_CHARS / 3 + 100) + 600);
    out.push_str(
        "You help search a code base. Below are the first results for a query, then the query.\n\
         Propose up to 3 follow-up searches that would find what is still missing: names of\n\
         functions, classes or files to look up, or short phrases. One per line, nothing else.\n\
         If the results already answer the query, answer DONE.\n\n",
    );
    for c in shown {
        open_tag(&mut out, "result", c);
        let head: String = c.text.chars().take(CANDIDATE_CHARS / 3).collect();
        out.push_str(&head.replace("</result>", "</ result>"));
        out.push_str("\n</result>\n");
    }
    close_with(&mut out, "query", query, "Follow-up searches:");
    out
}

/// Words in a follow-up search at most: the prompt asks for names or short phrases; a longer
/// line is the model talking, not searching.
const MAX_FOLLOW_UP_WORDS: usize = 12;

/// The follow-up queries of a model's reply: one per line, list markers and quotes dropped,
/// `DONE` and empty lines ignored, at most [`MAX_FOLLOW_UPS`]. Lines that are not searches
/// are dropped: an introduction ending in `:`, prose longer than [`MAX_FOLLOW_UP_WORDS`]
/// words, markup or data (`{`, `<`, `[` first), text without a letter or digit. A reply with
/// none left (an error page, a refusal, another format) gives no follow-up.
pub fn parse_follow_ups(reply: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in reply.lines() {
        let raw = line.trim();
        if raw.starts_with(['{', '<', '[']) {
            continue;
        }
        let line = raw
            .trim_start_matches(|c: char| c.is_ascii_digit() || "-*•.)".contains(c))
            .trim()
            .trim_matches(['"', '`', '\''])
            .trim();
        let is_search = !line.ends_with(':')
            && line.split_whitespace().count() <= MAX_FOLLOW_UP_WORDS
            && line.chars().any(char::is_alphanumeric);
        if line.is_empty() || line.eq_ignore_ascii_case("done") || !is_search {
            continue;
        }
        if !out.iter().any(|q| q == line) {
            out.push(line.to_string());
        }
        if out.len() == MAX_FOLLOW_UPS {
            break;
        }
    }
    out
}

/// Reciprocal rank fusion of ranked lists (k = 60): the first list, the user's own query,
/// weighs 1, every follow-up list `follow_up_weight`. Ties keep the order of first appearance.
pub fn fuse_lists<K: Eq + Hash + Clone>(lists: &[Vec<K>], follow_up_weight: f64) -> Vec<K> {
    let mut score: HashMap<K, (f64, usize)> = HashMap::new();
    let mut seen = 0usize;
    for (l, list) in lists.iter().enumerate() {
        let weight = if l == 0 { 1.0 } else { follow_up_weight };
        for (rank, key) in list.iter().enumerate() {
            let entry = score.entry(key.clone()).or_insert_with(|| {
                seen += 1;
                (0.0, seen)
            });
            entry.0 += weight / (60.0 + rank as f64 + 1.0);
        }
    }
    let mut keys: Vec<(K, (f64, usize))> = score.into_iter().collect();
    keys.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    keys.into_iter().map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_adds_new_names_of_the_top_definitions() {
        assert_eq!(
            feedback_query(
                "where are uploads retried",
                &[
                    "UploadQueue.requeueWithBackoff",
                    "retried",
                    "id",
                    "send_blob",
                    "send_blob"
                ]
            ),
            Some("where are uploads retried requeueWithBackoff send_blob".into())
        );
        assert_eq!(feedback_query("parse_config", &["parse_config"]), None);
        assert_eq!(feedback_query("x", &[]), None);
    }

    #[test]
    fn follow_ups_are_read_from_lists_and_prose_lines() {
        assert_eq!(
            parse_follow_ups(
                "1. `retry_upload`\n- \"UploadQueue\"\n\nDONE\n* backoff policy\nextra one"
            ),
            vec!["retry_upload", "UploadQueue", "backoff policy"]
        );
        assert!(parse_follow_ups("DONE").is_empty());
    }

    #[test]
    fn a_reply_that_is_not_a_list_of_searches_gives_none() {
        assert_eq!(
            parse_follow_ups("Sure! Here are some searches you could try:\n- `retry_upload`"),
            vec!["retry_upload"]
        );
        let garbage = [
            "<html><body>502 Bad Gateway</body></html>",
            "{\"error\": {\"message\": \"rate limited\"}}",
            "I am sorry, but I cannot help with searching this code base because I do not see it.",
            "----\n***\n...",
        ];
        for reply in garbage {
            assert!(parse_follow_ups(reply).is_empty(), "{reply:?}");
        }
    }

    #[test]
    fn fusion_favours_agreement_and_keeps_the_first_list_ahead_on_ties() {
        let lists = vec![vec!["a", "b", "c"], vec!["c", "d"]];
        assert_eq!(fuse_lists(&lists, 1.0), vec!["c", "a", "b", "d"]);
        assert_eq!(fuse_lists(&lists, 0.0), vec!["a", "b", "c", "d"]);
        let p = follow_up_prompt(
            "q",
            &[Candidate {
                path: "a.py",
                start_line: 1,
                end_line: 2,
                symbol: None,
                text: "x",
            }],
        );
        assert!(
            p.contains("<result path=\"a.py\" lines=\"1-2\">\nx\n</result>")
                && p.ends_with("Follow-up searches:")
        );
    }
}
