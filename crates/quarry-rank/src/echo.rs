//! An issue's code, echoed by the commit that fixed it. A bug report pastes the code that
//! fails (`pprint(MatrixSymbol('y*', n, n))`, a traceback's source line) and its fix's patch
//! repeats it: the test the fix adds reproduces the report's example, and the fix edits the
//! lines the traceback quoted. Words alone do not see this (every commit of a printing module
//! says `MatrixSymbol` and `pprint`); runs of consecutive code tokens do: four tokens in a row
//! — `MatrixSymbol ( 'y*'`… — are rare outside the code they were copied from.
//!
//! Written by hand: a shingle set over a small code tokenizer; no crate does this for
//! patches, and it is a few lines.

use regex::Regex;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Tokens per shingle. Three matched common idioms (`self . x`); five missed an expression
/// reformatted by one token (docs/EVAL.md, issue [19]).
const SHINGLE_TOKENS: usize = 4;

fn code_token() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\*\*|==|!=|<=|>=|->|[^\sA-Za-z0-9_]")
            .expect("valid regex")
    })
}

/// The runs of `SHINGLE_TOKENS` consecutive code tokens in `text` that hold at least one
/// name (`) ) , )` is in every file), hashed.
pub fn shingles(text: &str) -> HashSet<u64> {
    let tokens: Vec<&str> = code_token().find_iter(text).map(|m| m.as_str()).collect();
    let named = |t: &&str| t.starts_with(|c: char| c.is_alphabetic() || c == '_');
    tokens
        .windows(SHINGLE_TOKENS)
        .filter(|w| w.iter().any(named))
        .map(|w| {
            // FNV-1a: stable across runs and platforms, and enough for a set of a few
            // thousand shingles.
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for t in w {
                for b in t.bytes().chain([0u8]) {
                    h ^= b as u64;
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
            }
            h
        })
        .collect()
}

/// How many of the issue's shingles the patch's changed lines hold.
pub fn echoes(issue: &HashSet<u64>, patch: &str) -> usize {
    if issue.is_empty() {
        return 0;
    }
    let changed: Vec<&str> = quarry_core::history::changed_lines(patch).collect();
    shingles(&changed.join("\n"))
        .iter()
        .filter(|s| issue.contains(s))
        .count()
}

/// The factor for a commit whose patch echoes `count` of the issue's shingles: 1 for none,
/// growing with the log of the count (a long test file echoing forty shingles is not ten
/// times the evidence of one echoing four).
pub fn echo_factor(count: usize, weight: f64) -> f64 {
    1.0 + weight * (count as f64).ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "Error pretty printing MatAdd\n```py\n>>> pprint(MatrixSymbol('x', n, n) + MatrixSymbol('y*', n, n))\nTraceback (most recent call last):\n    if S(item.args[0]).is_negative:\n```";

    #[test]
    fn a_patch_repeating_the_reports_code_echoes_it_and_one_sharing_words_does_not() {
        let issue = shingles(ISSUE);
        let fix = "--- a/pretty.py\n+++ b/pretty.py\n@@ -825 +825 @@\n-                if S(item.args[0]).is_negative:\n+                if _coeff_isneg(S(coeff)):\n--- a/test_pretty.py\n+++ b/test_pretty.py\n+    y = MatrixSymbol('y*', n, n)\n+    assert pretty(x + y) == \"x + y*\"\n";
        let look_alike = "--- a/pretty.py\n+++ b/pretty.py\n+    def _print_MatAdd(self, expr):  # MatrixSymbol pprint args negative\n+        return self._print_seq(expr.args, None, None, ' + ')\n";
        let fix_echoes = echoes(&issue, fix);
        assert!(fix_echoes >= 6, "{fix_echoes}");
        assert_eq!(echoes(&issue, look_alike), 0);
        assert!(echo_factor(fix_echoes, 0.15) > echo_factor(0, 0.15));
        assert_eq!(echo_factor(0, 0.15), 1.0);
    }

    #[test]
    fn punctuation_alone_is_no_shingle() {
        assert!(shingles(") ) , ) ] ]").is_empty());
        assert_eq!(shingles("a(b, c)").len(), 3);
    }
}
