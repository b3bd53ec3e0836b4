//! Branches beyond `if` and `while`, per language: switches and matches (a test per case,
//! guards, fall-through, the default last), conditions that short-circuit, labelled jumps,
//! `do … while`, a loop's `else`, `with`, Go's `defer` and `panic`, Rust's `?`, and a file
//! that does not parse.

use quarry_core::Language;
mod common;

use common::{edge, function};
use quarry_flow::{slice, EdgeKind};

const GO: &str = r#"package main

func classify(x int, ch chan int) (n int) {
	defer done(n)
	switch x {
	case 1, 2:
		n = 1
		fallthrough
	case 3:
		return 3
	default:
		n = 4
	}
outer:
	for i := 0; i < x && i < 9; i++ {
		for {
			if i > 5 {
				break outer
			}
			continue outer
		}
	}
	if n < 0 {
		panic("negative")
	}
	return n
}
"#;

#[test]
fn go_switch_tests_each_value_falls_through_and_takes_the_default_last() {
    let f = function(Language::Go, GO, "classify");
    // `case 1, 2:` is two tests on line 6, as go/cfg draws it.
    assert!(edge(&f, 6, 6, EdgeKind::False), "{}", f.render(""));
    assert!(edge(&f, 6, 7, EdgeKind::True), "{}", f.render(""));
    assert!(edge(&f, 6, 9, EdgeKind::False), "{}", f.render(""));
    // `fallthrough` runs case 3's body; the default comes when no test holds.
    assert!(edge(&f, 8, 10, EdgeKind::Fallthrough), "{}", f.render(""));
    assert!(edge(&f, 9, 12, EdgeKind::False), "{}", f.render(""));
    // Both operands of `i < x && i < 9` are tests; `for {}` has no false way out.
    assert!(edge(&f, 15, 15, EdgeKind::True), "{}", f.render(""));
    assert!(edge(&f, 15, 16, EdgeKind::True), "{}", f.render(""));
    assert!(!edge(&f, 16, 23, EdgeKind::False), "{}", f.render(""));
    // `break outer` leaves both loops; `continue outer` goes to the outer header.
    assert!(edge(&f, 18, 23, EdgeKind::Break), "{}", f.render(""));
    assert!(edge(&f, 20, 15, EdgeKind::Continue), "{}", f.render(""));
    // `panic` and both returns run the deferred call on the way out.
    assert!(edge(&f, 24, 4, EdgeKind::Raise), "{}", f.render(""));
    assert!(edge(&f, 26, 4, EdgeKind::Return), "{}", f.render(""));
    assert!(edge(&f, 4, 0, EdgeKind::Defer), "{}", f.render(""));
    // Decisions: three case tests, two loop operands, the `if`s: 1 + 3 + 2 + 2.
    assert_eq!(f.complexity, 8, "{}", f.render(""));
}

#[test]
fn go_deferred_call_reads_what_the_function_returns() {
    // The deferred `done(n)` runs after `n = 4`: the forward slice of line 12 reaches it.
    let s = slice(Language::Go, GO, 12, Some("n"), true).unwrap();
    assert!(
        s.lines.contains(&4) && s.lines.contains(&26),
        "{:?}",
        s.lines
    );
}

const C: &str = r#"int scan(int x) {
    int n = 0;
    switch (x) {
    case 1:
    case 2:
        n++;
        break;
    default:
        n--;
    case 9:
        n += 9;
    }
    do {
        n--;
        if (n == 3) continue;
    } while (n > 0 || x < 0);
    return n;
}
"#;

#[test]
fn c_switch_falls_through_until_break_and_do_while_tests_last() {
    let f = function(Language::C, C, "scan");
    // `case 1:` has no body: it falls into case 2's.
    assert!(edge(&f, 4, 6, EdgeKind::True), "{}", f.render(""));
    assert!(edge(&f, 7, 13, EdgeKind::Break), "{}", f.render(""));
    // The default, written before `case 9`, comes after every test fails, and falls on.
    assert!(edge(&f, 10, 9, EdgeKind::False), "{}", f.render(""));
    assert!(edge(&f, 9, 11, EdgeKind::Fallthrough), "{}", f.render(""));
    // `do`: body first; `continue` goes to the test; the test's operands go back up.
    assert!(edge(&f, 15, 16, EdgeKind::Continue), "{}", f.render(""));
    assert!(edge(&f, 16, 13, EdgeKind::Back), "{}", f.render(""));
    assert!(edge(&f, 16, 17, EdgeKind::False), "{}", f.render(""));
    // Tests: cases 1, 2, 9; the `if`; the two operands of `||`.
    assert_eq!(f.complexity, 7, "{}", f.render(""));
}

const PY: &str = r#"def load(path, strict):
    with open(path) as fh:
        text = fh.read()
    match text.split():
        case [first, *rest] if strict and first:
            head = first
        case _:
            head = None
    for line in rest:
        if not line:
            break
    else:
        head = head or "empty"
    try:
        value = int(head)
    except ValueError as e:
        value = e
    else:
        value += 1
    return value
"#;

#[test]
fn python_match_with_for_else_and_try_else() {
    let f = function(Language::Python, PY, "load");
    // `with` binds `fh`, read on the next line.
    assert!(f
        .dfg
        .edges
        .iter()
        .any(|p| p.var == "fh" && p.def_line == 2 && p.use_line == 3));
    // A case binds its names; its guard is a test of its own operands.
    assert!(f
        .dfg
        .edges
        .iter()
        .any(|p| p.var == "first" && p.def_line == 5 && p.use_line == 6));
    assert!(edge(&f, 5, 7, EdgeKind::False), "{}", f.render(""));
    // The loop's `else` runs when the loop ends, not when it breaks.
    assert!(edge(&f, 9, 13, EdgeKind::False), "{}", f.render(""));
    assert!(edge(&f, 11, 14, EdgeKind::Break), "{}", f.render(""));
    // `try … else` runs when nothing was raised, outside the handler's reach.
    assert!(edge(&f, 15, 19, EdgeKind::Next), "{}", f.render(""));
    assert!(edge(&f, 15, 16, EdgeKind::Exception), "{}", f.render(""));
    assert!(!edge(&f, 19, 16, EdgeKind::Exception), "{}", f.render(""));
    // What can change `value` at the return: the handler's `e` and the `else`, with the
    // `try` and handler lines they run under.
    let s = slice(Language::Python, PY, 20, Some("value"), false).unwrap();
    for line in [14, 15, 16, 17, 19, 20] {
        assert!(s.lines.contains(&line), "{line} in {:?}", s.lines);
    }
}

const RUST: &str = r#"fn parse(input: &str) -> Result<u32, Error> {
    let n: u32 = input.trim().parse()?;
    let kind = match n {
        0 => return Ok(0),
        m if m > 100 => panic!("too big"),
        _ => n * 2,
    };
    'scan: loop {
        for d in digits(n) {
            if d == 7 {
                break 'scan;
            }
        }
        break;
    }
    Ok(kind)
}
"#;

#[test]
fn rust_question_mark_match_arms_and_labelled_loops() {
    let f = function(Language::Rust, RUST, "parse");
    // `?` may return from the middle of line 2; so may the `match` held in a `let`.
    assert!(edge(&f, 2, 0, EdgeKind::Return), "{}", f.render(""));
    assert!(edge(&f, 3, 0, EdgeKind::Return), "{}", f.render(""));
    // `break 'scan` leaves the outer loop, not only the `for`.
    assert!(edge(&f, 11, 16, EdgeKind::Break), "{}", f.render(""));
    // `loop` has no test: only its breaks leave it.
    assert!(!edge(&f, 8, 16, EdgeKind::False), "{}", f.render(""));
}

const JS: &str = r#"function pick(x, list) {
  let out = null;
  search: for (const item of list) {
    switch (item.kind) {
      case "a":
        out = item;
        break;
      case "b":
        continue search;
      default:
        break search;
    }
  }
  return out;
}
"#;

#[test]
fn javascript_switch_break_leaves_the_switch_and_labels_leave_the_loop() {
    let f = function(Language::JavaScript, JS, "pick");
    assert!(edge(&f, 7, 3, EdgeKind::Break), "{}", f.render(""));
    assert!(edge(&f, 9, 3, EdgeKind::Continue), "{}", f.render(""));
    assert!(edge(&f, 11, 14, EdgeKind::Break), "{}", f.render(""));
}

#[test]
fn a_function_that_does_not_parse_says_where() {
    let src = "def broken(x):\n    y = x + 1\n    if y >\n        return y\n    return x\n";
    let f = function(Language::Python, src, "broken");
    assert_eq!(f.syntax_error, Some(3), "{}", f.render(""));
    // What parsed still answers: `y` at line 4 comes from line 2, which reads the parameter.
    let s = slice(Language::Python, src, 4, Some("y"), false).unwrap();
    assert!(s.note.contains("does not parse at line 3"), "{}", s.note);
    assert_eq!(s.lines, vec![1, 2, 4]);
}

#[test]
fn a_case_depends_on_what_its_switch_compares() {
    let src = "package main\n\nfunc eq(a, b any) bool {\n\tav := value(a)\n\tswitch av.Kind() {\n\tcase Bool:\n\t\treturn false\n\t}\n\treturn true\n}\n";
    let s = slice(Language::Go, src, 7, None, false).unwrap();
    // The return runs when the case holds, which compares with the header's value.
    for line in [4, 5, 6, 7] {
        assert!(s.lines.contains(&line), "{line} in {:?}", s.lines);
    }
    // The switch's own value is no variable of the function's.
    let f = function(Language::Go, src, "eq");
    assert!(
        f.dfg.edges.iter().all(|p| !p.var.starts_with('<')),
        "{:?}",
        f.dfg.edges
    );
}

#[test]
fn a_change_in_place_reaches_past_itself_without_replacing_what_came_before() {
    let src = "def measure(rows):\n    widths = {}\n    for row in rows:\n        for idx, col in enumerate(row):\n            widths[idx] = max(widths.get(idx, 0), len(col))\n    seen = []\n    seen.append(len(rows))\n    label = 'x'\n    return widths, seen\n";
    let s = slice(Language::Python, src, 9, Some("widths"), false).unwrap();
    for line in [2, 3, 4, 5, 9] {
        assert!(s.lines.contains(&line), "{line} in {:?}", s.lines);
    }
    let s = slice(Language::Python, src, 9, Some("seen"), false).unwrap();
    assert!(
        s.lines.contains(&6) && s.lines.contains(&7),
        "{:?}",
        s.lines
    );
    assert!(!s.lines.contains(&8), "{:?}", s.lines);
}
