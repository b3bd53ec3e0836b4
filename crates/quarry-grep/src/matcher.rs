//! The request's patterns as a matcher, built as ripgrep builds it: Rust's regex engine
//! (grep-regex) by default, PCRE2 (grep-pcre2, PCRE2 compiled from the crate's own sources)
//! with `-P`. Searching is generic over grep-matcher's `Matcher`; [`PatternMatcher`] says
//! which one a search runs.

use anyhow::{anyhow, Result};
use grep_pcre2::RegexMatcherBuilder as Pcre2Builder;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

use crate::request::GrepRequest;

/// The engine a search runs.
pub(crate) enum PatternMatcher {
    Rust(RegexMatcher),
    Pcre2(grep_pcre2::RegexMatcher),
}

/// The matcher for `request`'s patterns, or why they do not compile.
pub(crate) fn build(request: &GrepRequest) -> Result<PatternMatcher> {
    if request.patterns.is_empty() {
        return Err(anyhow!("no pattern: give one, or several with -e"));
    }
    if request.pcre2 {
        return pcre2(request).map(PatternMatcher::Pcre2);
    }
    rust(request).map(PatternMatcher::Rust)
}

/// What a Rust matcher is built from: its patterns and every flag the build reads.
#[derive(PartialEq)]
struct BuiltFrom {
    patterns: Vec<String>,
    flags: [bool; 7],
}

impl BuiltFrom {
    fn of(request: &GrepRequest) -> BuiltFrom {
        BuiltFrom {
            patterns: request.patterns.clone(),
            flags: [
                request.ignore_case,
                request.smart_case,
                request.word,
                request.line_regexp,
                request.fixed_strings,
                request.multiline,
                request.walk.binary,
            ],
        }
    }
}

/// Matchers built in this process, the latest last: building one compiles its regex to
/// automata (a DFA where it is small enough), which was 70% of a regex search through a
/// server (`fn poll_\w+\(` on tokio: 8 of 12 ms). A resident process (the servers, the
/// daemon) asked the same pattern again reuses it.
static BUILT: std::sync::Mutex<Vec<(BuiltFrom, RegexMatcher)>> = std::sync::Mutex::new(Vec::new());
/// Matchers kept (each at most grep-regex's DFA size limit).
const KEPT_MATCHERS: usize = 16;

/// Rust's regex engine, as ripgrep configures it (or as it was built for the same request
/// before, in this process).
pub(crate) fn rust(request: &GrepRequest) -> Result<RegexMatcher> {
    let key = BuiltFrom::of(request);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(at) = built.iter().position(|(from, _)| *from == key) {
        let entry = built.remove(at);
        let matcher = entry.1.clone();
        built.push(entry);
        return Ok(matcher);
    }
    drop(built);
    let matcher = build_rust(request)?;
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built.len() >= KEPT_MATCHERS {
        built.remove(0);
    }
    built.push((key, matcher.clone()));
    Ok(matcher)
}

fn build_rust(request: &GrepRequest) -> Result<RegexMatcher> {
    // Each pattern checked as written: the builder joins them as `(?:a)|(?:b)`, and its
    // errors quote that rewriting (`grep '\'` said "unclosed group").
    if !request.fixed_strings {
        for pattern in &request.patterns {
            if let Err(e) = regex_syntax::ParserBuilder::new()
                .multi_line(true)
                .build()
                .parse(pattern)
            {
                return Err(anyhow!("invalid pattern {pattern:?}:\n{e}"));
            }
        }
    }
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(request.ignore_case)
        .case_smart(request.smart_case && !request.ignore_case)
        .word(request.word)
        .whole_line(request.line_regexp)
        .fixed_strings(request.fixed_strings)
        // As ripgrep builds it: `^`/`$` match at line ends, so the searcher can run the
        // regex over a whole buffer instead of line by line (3× on an anchored pattern).
        .multi_line(true);
    if request.multiline {
        // A match may hold line ends; `.` still stops at one (no --multiline-dotall).
        builder.dot_matches_new_line(false);
    } else {
        builder
            .line_terminator(Some(b'\n'))
            .dot_matches_new_line(false);
    }
    if !request.walk.binary {
        // ripgrep: unless binary files are searched as text, no match holds a NUL byte.
        builder.ban_byte(Some(b'\x00'));
    }
    builder.build_many(&request.patterns).map_err(|e| {
        let e = e.to_string();
        if e.contains(r#"the literal '"\n"' is not allowed"#) {
            anyhow!("invalid pattern: {e}\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched.")
        } else {
            anyhow!("invalid pattern: {e}")
        }
    })
}

/// PCRE2, as ripgrep configures it (JIT, Unicode, `^`/`$` at line ends).
fn pcre2(request: &GrepRequest) -> Result<grep_pcre2::RegexMatcher> {
    let mut builder = Pcre2Builder::new();
    builder
        .multi_line(true)
        .fixed_strings(request.fixed_strings)
        .word(request.word)
        .whole_line(request.line_regexp)
        .utf(true)
        .ucp(true)
        .jit_if_available(true)
        // ripgrep's choice: 10 MB, where PCRE2's default is 32 KB.
        .max_jit_stack_size(Some(10 * (1 << 20)));
    if request.ignore_case {
        builder.caseless(true);
    } else if request.smart_case {
        builder.case_smart(true);
    }
    if request.multiline {
        builder.dotall(false);
    }
    builder
        .build_many(&request.patterns)
        .map_err(|e| anyhow!("invalid PCRE2 pattern: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_matcher::Matcher;

    /// A matcher built again for the same request is reused; one flag apart, it is not.
    #[test]
    fn a_kept_matcher_serves_only_the_request_it_was_built_for() {
        let mut request = GrepRequest {
            patterns: vec!["kept_matcher_\\w+".into()],
            ..Default::default()
        };
        let first = rust(&request).unwrap();
        assert!(first.is_match(b"a kept_matcher_x b").unwrap());
        assert!(!first.is_match(b"KEPT_MATCHER_X").unwrap());
        let again = rust(&request).unwrap();
        assert!(!again.is_match(b"KEPT_MATCHER_X").unwrap());
        request.ignore_case = true;
        let folded = rust(&request).unwrap();
        assert!(folded.is_match(b"KEPT_MATCHER_X").unwrap());
        request.ignore_case = false;
        request.fixed_strings = true;
        let fixed = rust(&request).unwrap();
        assert!(fixed.is_match(b"kept_matcher_\\w+").unwrap());
        assert!(!fixed.is_match(b"kept_matcher_x").unwrap());
        // A pattern that does not compile is an error every time, and never kept.
        request.fixed_strings = false;
        request.patterns = vec!["(".into()];
        assert!(rust(&request).is_err());
        assert!(rust(&request).is_err());
    }
}
