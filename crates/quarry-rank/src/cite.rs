//! Grounded answers, with no I/O: the prompt that asks a language model to answer from the
//! chunks it is given and to cite `path:start-end` for each claim, and the check of its
//! citations against those chunks. A citation is kept only when its path is a given chunk's
//! and its lines fall inside that chunk's; anything else (an invented file, lines the model
//! never saw) is dropped and counted, so a reader can trust every source that is shown.

use std::fmt::Write;

use crate::rerank::{close_with, open_tag, Candidate, CANDIDATE_CHARS};

/// A citation as the model wrote it, and whether it is backed by a given chunk.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Citation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// The answer prompt: the chunks (as for reranking), then the question and the rules.
pub fn answer_prompt(question: &str, chunks: &[Candidate]) -> String {
    let mut out = String::with_capacity(chunks.len() * (CANDIDATE_CHARS + 120) + 800);
    out.push_str(
        "Answer the question from the code and text chunks below, and from nothing else.\n\
         After every claim, cite the chunk it comes from as path:start-end (for example\n\
         src/app.py:10-24), using the lines shown in the chunk's tag or a narrower range inside\n\
         them. If the chunks do not answer the question, say so. Be brief.\n\n",
    );
    for c in chunks {
        open_tag(&mut out, "chunk", c);
        // Line numbers let the model cite narrower ranges that are still checkable.
        let head: String = c.text.chars().take(CANDIDATE_CHARS).collect();
        for (i, line) in head.lines().enumerate() {
            let line = line.replace("</chunk>", "</ chunk>");
            let _ = writeln!(out, "{:>5}  {line}", c.start_line as usize + i);
        }
        out.push_str("</chunk>\n");
    }
    close_with(&mut out, "question", question, "Answer:");
    out
}

/// Every `path:start-end` (or `path:line`) in `answer`, in order, without repeats.
pub fn citations(answer: &str) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for token in answer.split(|c: char| c.is_whitespace() || "()[]<>,;`'\"".contains(c)) {
        let token = token.trim_end_matches(['.', ':']);
        let Some((path, lines)) = token.rsplit_once(':') else {
            continue;
        };
        let path = path.trim_start_matches("./");
        if path.is_empty() || !path.contains(['.', '/']) || path.contains("://") {
            continue;
        }
        let (start, end) = match lines.split_once(['-', '–']) {
            Some((a, b)) => (a.parse::<u32>(), b.trim_start_matches('L').parse::<u32>()),
            None => (lines.parse::<u32>(), lines.parse::<u32>()),
        };
        let (Ok(start), Ok(end)) = (start, end) else {
            continue;
        };
        let start = start.min(end);
        let c = Citation {
            path: path.to_string(),
            start_line: start,
            end_line: end.max(start),
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Splits `cited` into the citations a given chunk backs and the number dropped.
pub fn check(cited: Vec<Citation>, chunks: &[Candidate]) -> (Vec<Citation>, usize) {
    let before = cited.len();
    let kept: Vec<Citation> = cited
        .into_iter()
        .filter(|c| {
            chunks.iter().any(|k| {
                k.path == c.path && k.start_line <= c.start_line && c.end_line <= k.end_line
            })
        })
        .collect();
    let dropped = before - kept.len();
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk<'a>(path: &'a str, start: u32, end: u32, text: &'a str) -> Candidate<'a> {
        Candidate {
            path,
            start_line: start,
            end_line: end,
            symbol: None,
            text,
        }
    }

    #[test]
    fn the_prompt_numbers_lines_from_the_chunk_start() {
        let p = answer_prompt(
            "how?",
            &[chunk("src/a.py", 10, 11, "def f():\n    return 1\n")],
        );
        assert!(p.contains("<chunk path=\"src/a.py\" lines=\"10-11\">\n   10  def f():\n   11      return 1\n</chunk>"), "{p}");
        assert!(p.ends_with("<question>how?</question>\n\nAnswer:"));
    }

    #[test]
    fn citations_are_found_in_prose() {
        let answer = "Retries happen in `net/upload.py:3-9` (see also (src/a.py:12), \
                      ./lib/x.rs:4–6.) Not https://example.com:8080 nor ratio 3:2 nor \
                      net/upload.py:3-9 again.";
        assert_eq!(
            citations(answer),
            vec![
                Citation {
                    path: "net/upload.py".into(),
                    start_line: 3,
                    end_line: 9
                },
                Citation {
                    path: "src/a.py".into(),
                    start_line: 12,
                    end_line: 12
                },
                Citation {
                    path: "lib/x.rs".into(),
                    start_line: 4,
                    end_line: 6
                },
            ]
        );
    }

    #[test]
    fn only_citations_inside_given_chunks_are_kept() {
        let chunks = [chunk("src/a.py", 10, 30, ""), chunk("src/b.py", 1, 5, "")];
        let cited = citations("a src/a.py:12-20 b src/b.py:4-9 c src/c.py:1-2 d src/a.py:11");
        let (kept, dropped) = check(cited, &chunks);
        assert_eq!(
            kept,
            vec![
                Citation {
                    path: "src/a.py".into(),
                    start_line: 12,
                    end_line: 20
                },
                Citation {
                    path: "src/a.py".into(),
                    start_line: 11,
                    end_line: 11
                },
            ]
        );
        assert_eq!(dropped, 2);
    }
}
