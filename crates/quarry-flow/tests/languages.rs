//! The languages quarry reads since [29], each with the same function written its own way: a
//! loop with a raise, a `break` and a running total, a closure that shadows the total, an early
//! return. Every one must draw the loop, the jumps and the slice of the total alike.

use quarry_core::Language;
mod common;

use common::edge;
use quarry_flow::{functions, slice, EdgeKind};

/// Line by line: 1 the function, 2 `acc = 0`, 3 `label = …`, 4 the loop, 5-6 `if item < 0`
/// raise, 8-9 `if item > limit` break, 11 `acc = acc + item`, 13 a closure with its own
/// `acc`, 14-15 `if acc == 0` return, 17 the total is returned.
const KOTLIN: &str = r#"fun total(items: List<Int>, limit: Int): Int {
    var acc = 0
    var label = "x"
    for (item in items) {
        if (item < 0) {
            throw IllegalArgumentException(label)
        }
        if (item > limit) {
            break
        }
        acc = acc + item
    }
    val show = { val acc = 1; acc + 1 }
    if (acc == 0) {
        return -1
    }
    return acc
}
"#;

const SWIFT: &str = r#"func total(items: [Int], limit: Int) throws -> Int {
    var acc = 0
    var label = "x"
    for item in items {
        if item < 0 {
            throw Failure(label)
        }
        if item > limit {
            break
        }
        acc = acc + item
    }
    let show = { () -> Int in let acc = 1; return acc + 1 }
    if acc == 0 {
        return -1
    }
    return acc
}
"#;

const SCALA: &str = r#"def total(items: List[Int], limit: Int): Int = {
  var acc = 0
  var label = "x"
  for (item <- items) {
    if (item < 0) {
      throw new IllegalArgumentException(label)
    }
    if (item > limit) {
      return -2
    }
    acc = acc + item
  }
  val show = (x: Int) => { val acc = 1; acc + x }
  if (acc == 0) {
    return -1
  }
  return acc
}
"#;

const LUA: &str = r#"local function total(items, limit)
  local acc = 0
  local label = "x"
  for _, item in ipairs(items) do
    if item < 0 then
      error(label)
    end
    if item > limit then
      break
    end
    acc = acc + item
  end
  local show = function() local acc = 1; return acc + 1 end
  if acc == 0 then
    return -1
  end
  return acc
end
"#;

const R: &str = r#"total <- function(items, limit) {
  acc <- 0
  label <- "x"
  for (item in items) {
    if (item < 0) {
      stop(label)
    }
    if (item > limit) {
      break
    }
    acc <- acc + item
  }
  show <- function() { acc <- 1; acc + 1 }
  if (acc == 0) {
    return(-1)
  }
  return(acc)
}
"#;

const DART: &str = r#"int total(List<int> items, int limit) {
  var acc = 0;
  var label = "x";
  for (final item in items) {
    if (item < 0) {
      throw ArgumentError(label);
    }
    if (item > limit) {
      break;
    }
    acc = acc + item;
  }
  var show = () { var acc = 1; return acc + 1; };
  if (acc == 0) {
    return -1;
  }
  return acc;
}
"#;

const JULIA: &str = r#"function total(items, limit)
    acc = 0
    label = "x"
    for item in items
        if item < 0
            throw(ArgumentError(label))
        end
        if item > limit
            break
        end
        acc = acc + item
    end
    show = () -> begin acc = 1; acc + 1 end
    if acc == 0
        return -1
    end
    return acc
end
"#;

const SHELL: &str = r#"total() {
  local acc=0
  local label="x"
  for item in "$@"; do
    if [ "$item" -lt 0 ]; then
      exit 1
    fi
    if [ "$item" -gt "$limit" ]; then
      break
    fi
    acc=$((acc + item))
  done
  show() { local acc=1; echo "$acc"; }
  if [ "$acc" -eq 0 ]; then
    return 1
  fi
  echo "$acc"
}
"#;

const ZIG: &str = r#"fn total(items: []const i32, limit: i32) !i32 {
    var acc: i32 = 0;
    var label: i32 = 1;
    for (items) |item| {
        if (item < 0) {
            return error.Negative;
        }
        if (item > limit) {
            break;
        }
        acc = acc + item;
    }
    const show = label;
    if (acc == 0) {
        return -1;
    }
    return acc;
}
"#;

/// The same checks for every language: how line 6 and line 9 leave, whether the closure is a
/// function of its own.
fn check(language: Language, src: &str, line6: EdgeKind, line9: (u32, EdgeKind), closure: bool) {
    let all = functions(language, src).unwrap_or_else(|e| panic!("{language}: {e}"));
    let f = all
        .iter()
        .find(|f| f.start_line == 1)
        .unwrap_or_else(|| panic!("{language}: no function on line 1"));
    let shown = f.render("");
    assert!(
        edge(f, 11, 4, EdgeKind::Back),
        "{language}: loop back\n{shown}"
    );
    assert!(
        edge(f, 4, 5, EdgeKind::True),
        "{language}: into the loop\n{shown}"
    );
    assert!(edge(f, 6, 0, line6), "{language}: line 6\n{shown}");
    assert!(edge(f, 9, line9.0, line9.1), "{language}: line 9\n{shown}");
    assert!(
        edge(f, 15, 0, EdgeKind::Return),
        "{language}: early return\n{shown}"
    );
    // The loop, the two ifs in it and the one after: four tests.
    assert_eq!(f.complexity, 5, "{language}\n{shown}");
    if closure {
        assert!(
            all.len() >= 2,
            "{language}: the closure is a function of its own"
        );
    }
    // What can change the total at the end: its definitions, the loop and the ifs deciding
    // whether line 11 runs — not the label, not the closure's own `acc`.
    let s = slice(language, src, 17, Some("acc"), false).unwrap();
    for line in [2, 4, 5, 8, 11, 17] {
        assert!(
            s.lines.contains(&line),
            "{language}: {line} in {:?}\n{shown}",
            s.lines
        );
    }
    for line in [3, 13] {
        assert!(
            !s.lines.contains(&line),
            "{language}: {line} not in {:?}\n{shown}",
            s.lines
        );
    }
}

#[test]
fn kotlin() {
    check(
        Language::Kotlin,
        KOTLIN,
        EdgeKind::Raise,
        (13, EdgeKind::Break),
        true,
    );
}

#[test]
fn swift() {
    check(
        Language::Swift,
        SWIFT,
        EdgeKind::Raise,
        (13, EdgeKind::Break),
        true,
    );
}

#[test]
fn scala() {
    check(
        Language::Scala,
        SCALA,
        EdgeKind::Raise,
        (0, EdgeKind::Return),
        true,
    );
}

#[test]
fn lua() {
    check(
        Language::Lua,
        LUA,
        EdgeKind::Raise,
        (13, EdgeKind::Break),
        true,
    );
}

#[test]
fn r() {
    check(Language::R, R, EdgeKind::Raise, (13, EdgeKind::Break), true);
}

#[test]
fn dart() {
    check(
        Language::Dart,
        DART,
        EdgeKind::Raise,
        (13, EdgeKind::Break),
        true,
    );
}

#[test]
fn julia() {
    check(
        Language::Julia,
        JULIA,
        EdgeKind::Raise,
        (13, EdgeKind::Break),
        true,
    );
}

#[test]
fn shell() {
    check(
        Language::Shell,
        SHELL,
        EdgeKind::Raise,
        (13, EdgeKind::Break),
        true,
    );
}

#[test]
fn zig() {
    check(
        Language::Zig,
        ZIG,
        EdgeKind::Return,
        (13, EdgeKind::Break),
        false,
    );
}
