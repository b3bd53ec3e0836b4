//! Preprocessor conditionals in the middle of a construct. tree-sitter's C, C++, C# and
//! Objective-C grammars take `#if … #endif` only where a statement or declaration may stand;
//! one inside an initialiser list (leveldb's `Limiter(int n) :` / `#if !defined(NDEBUG)` /
//! `max_(n),` / `#endif` / `allowed_(n) {`), a base list (Newtonsoft's `class JsonWriter` /
//! `#if HAVE_ASYNC_DISPOSABLE` / `: IAsyncDisposable` / `#endif` / `{`) or between `}` and an
//! `else` becomes an error whose recovery nests every later class inside one, or names a
//! function `if`.
//!
//! Such a group is read as if its condition held: its `#if` and `#endif` lines are blanked
//! (spaces, so every offset and line stays), its code kept. Only a group with no `#else` or
//! `#elif` (an optional part, whose code is well-formed with the rest either way), and only in
//! the middle of a construct: the code line above it ends with `,`, `:`, `(` or an operator,
//! or its first code line starts with `,`, `:`, `)` or `else`. A conditional that wraps whole
//! declarations or statements is left to the grammar, which parses it.

use std::borrow::Cow;

/// `text` with mid-construct optional conditionals' directive lines blanked.
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    let lines: Vec<(usize, &str)> = {
        let mut start = 0;
        text.split('\n')
            .map(|line| {
                let at = start;
                start += line.len() + 1;
                (at, line)
            })
            .collect()
    };
    if !lines.iter().any(|(_, l)| l.trim_start().starts_with('#')) {
        return Cow::Borrowed(text);
    }
    let mut blank: Vec<usize> = Vec::new();
    // Open groups: (the `#if` line, whether it has an `#else`/`#elif`).
    let mut open: Vec<(usize, bool)> = Vec::new();
    for (i, (_, line)) in lines.iter().enumerate() {
        let Some(directive) = directive(line) else {
            continue;
        };
        match directive {
            "if" | "ifdef" | "ifndef" => open.push((i, false)),
            "else" | "elif" | "elifdef" | "elifndef" => {
                if let Some(group) = open.last_mut() {
                    group.1 = true;
                }
            }
            "endif" => {
                if let Some((start, has_else)) = open.pop() {
                    if !has_else && mid_construct(&lines, start, i) {
                        blank.push(start);
                        blank.push(i);
                    }
                }
            }
            _ => {}
        }
    }
    if blank.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for i in blank {
        let (start, line) = lines[i];
        // The directive and any `\` continuation are on this line alone here (a continued
        // `#if` is rare and left as it is when it spans lines).
        for b in &mut bytes[start..start + line.len()] {
            if *b != b'\r' {
                *b = b' ';
            }
        }
    }
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| text.to_string()))
}

/// The directive's name on a preprocessor line (`if`, `endif`), if the line is one.
fn directive(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The code of a line: trimmed, without a trailing `//` comment; empty for blank, comment and
/// preprocessor lines.
fn code(line: &str) -> &str {
    let line = line.split("//").next().unwrap_or("").trim();
    if line.starts_with('#') || line.starts_with("/*") || line.starts_with('*') {
        ""
    } else {
        line
    }
}

/// Whether the group from line `start` (`#if`) to `end` (`#endif`) stands inside a construct.
fn mid_construct(lines: &[(usize, &str)], start: usize, end: usize) -> bool {
    let above = lines[..start]
        .iter()
        .rev()
        .take(64)
        .map(|(_, l)| code(l))
        .find(|c| !c.is_empty());
    let first_inside = lines[start + 1..end]
        .iter()
        .map(|(_, l)| code(l))
        .find(|c| !c.is_empty());
    let Some(first_inside) = first_inside else {
        return false;
    };
    let above_open = above.is_some_and(|c| {
        c.ends_with([',', ':', '(', '&', '|', '+', '-', '?', '='])
            && !c.ends_with("::")
            && !c.ends_with("public:")
            && !c.ends_with("private:")
            && !c.ends_with("protected:")
            && !c.ends_with("default:")
            && !(c.starts_with("case ") && c.ends_with(':'))
    });
    let inside_continues = first_inside.starts_with([',', ':', ')'])
        && !first_inside.starts_with("::")
        || first_inside == "else"
        || first_inside.starts_with("else ")
        || first_inside.starts_with("else{");
    above_open || inside_continues
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_part_of_an_initialiser_list_is_kept_without_its_directives() {
        let text = "Limiter(int n)\n    :\n#if !defined(NDEBUG)\n      max_(n),\n#endif  // x\n      allowed_(n) {}\n";
        let masked = mask(text);
        assert_eq!(masked.len(), text.len());
        assert!(!masked.contains("#if") && !masked.contains("#endif"));
        assert!(masked.contains("max_(n),"));
    }

    #[test]
    fn a_base_list_part_and_an_else_branch_are_kept() {
        let base = "class JsonWriter\n#if HAVE_ASYNC\n    : IAsyncDisposable\n#endif\n{\n}\n";
        assert!(!mask(base).contains("#if"));
        let else_if = "if (a) {\n}\n#if HAVE_X\nelse if (b) {\n}\n#endif\nelse {\n}\n";
        assert!(!mask(else_if).contains("#if"));
    }

    #[test]
    fn whole_declarations_and_alternatives_are_left_to_the_grammar() {
        let declarations = "int a;\n#if X\nint b(void) { return 0; }\n#endif\n";
        assert!(matches!(mask(declarations), Cow::Borrowed(_)));
        let alternatives = "f(a,\n#if X\n  b\n#else\n  c\n#endif\n);\n";
        assert!(matches!(mask(alternatives), Cow::Borrowed(_)));
        let access = "class A {\n public:\n#if X\n  void f();\n#endif\n};\n";
        assert!(matches!(mask(access), Cow::Borrowed(_)));
    }
}
