//! Property tests of the chunker on generated input, as a fuzzer would feed it: any text, in
//! any language, gives chunks inside the file's lines whose text is exactly those lines, and
//! never panics. Runs 48 cases per language in the suite; `PROPTEST_CASES=20000` (bench/faults.sh)
//! is the long run.

use proptest::prelude::*;
use quarry_chunk::{chunk_file, ChunkOptions};
use quarry_core::Language;

/// Text made of code-shaped pieces (brackets, keywords, quotes, comments, odd whitespace,
/// non-ASCII), so parsers meet half-open constructs rather than only random letters.
fn code_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("    ".to_string()),
        Just("\t".to_string()),
        Just("def f(x):".to_string()),
        Just("class A:".to_string()),
        Just("fn main() ".to_string()),
        Just("impl X for Y ".to_string()),
        Just("function g() ".to_string()),
        Just("public static void m() ".to_string()),
        Just("#include <x.h>".to_string()),
        Just("<?php ".to_string()),
        Just("# Heading".to_string()),
        Just("\"\"\"".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("/*".to_string()),
        Just("//".to_string()),
        Just("é漢😀".to_string()),
        "[a-zA-Z_][a-zA-Z0-9_]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..200).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn chunks_stay_inside_the_file_and_hold_their_lines(text in code_like(), which in 0..Language::ALL.len()) {
        let language = Language::ALL[which];
        let lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
        let result = chunk_file(language, &text, &ChunkOptions::default());
        for chunk in &result.chunks {
            prop_assert!(chunk.start_line >= 1, "{chunk:?}");
            prop_assert!(chunk.start_line <= chunk.end_line, "{chunk:?}");
            prop_assert!(chunk.end_line as usize <= lines.len(), "{chunk:?} of {} lines", lines.len());
            let expected = lines[chunk.start_line as usize - 1..chunk.end_line as usize].join("\n");
            prop_assert_eq!(&chunk.text, &expected);
        }
        for symbol in &result.symbols {
            prop_assert!(symbol.start_line >= 1 && symbol.start_line <= symbol.end_line);
        }
    }
}
