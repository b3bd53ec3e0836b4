//! Property tests of the query planner on generated input: whatever an agent or a user sends
//! (issue texts, stack traces, binary noise), planning never panics and the files it names come
//! from the query. 256 cases in the suite; `PROPTEST_CASES` raises it (bench/faults.sh).

use proptest::prelude::*;
use quarry_rank::plan::plan;

fn issue_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("Traceback (most recent call last):\n".to_string()),
        Just("  File \"src/app/models.py\", line 42, in save\n".to_string()),
        Just("    at com.example.Foo.bar(Foo.java:12)\n".to_string()),
        Just("thread 'main' panicked at src/lib.rs:3:5\n".to_string()),
        Just("```python\nimport os\nos.path.join(a, b)\n```\n".to_string()),
        Just("`getUserName`".to_string()),
        Just("sympy.core.expr.Expr".to_string()),
        Just("https://github.com/x/y/blob/main/a.py#L3".to_string()),
        Just("\n\n".to_string()),
        Just("ValueError: invalid literal for int() with base 10: 'x'\n".to_string()),
        "[a-zA-Z_./:()\\[\\]{}<>\"'` \n-]{0,40}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn planning_any_query_never_panics_and_names_only_what_it_was_given(query in issue_like()) {
        let planned = plan(&query);
        let lower = query.to_lowercase();
        for hint in &planned.file_hints {
            let base = hint.rsplit('/').next().unwrap_or(hint).to_lowercase();
            prop_assert!(lower.contains(&base), "hint {hint} not in the query");
        }
    }
}
