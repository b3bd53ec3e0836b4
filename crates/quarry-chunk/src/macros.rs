//! C++ annotation macros that derail tree-sitter. The grammar does not expand macros, so an
//! identifier it cannot place swallows or misnames the definitions after it:
//! `FMT_BEGIN_NAMESPACE` on its own line turns the `namespace detail {` below into a function
//! named `namespace`; `FMT_CONSTEXPR void f()`, `FMT_EXPORT template <…> class X`,
//! `class GTEST_API_ X` and `void f() GTEST_LOCK_EXCLUDED_(mu) {` each leave an ERROR where the
//! definition should be.
//!
//! Before a C++ parse (a C++ header named `.h` included), such macros are blanked out with
//! spaces, so every byte offset, line and column stays where it was and names and signatures
//! are still read from the file's own text. Only ALL_CAPS names with an underscore and at
//! least four characters count (`FMT_CONSTEXPR`, `GTEST_API_`, `Q_OBJECT`; not `DWORD` or
//! `T`), and only where C++ could not use a name anyway:
//! 1. a line that is nothing but the macro, or the macro with one argument list
//!    (`FMT_BEGIN_NAMESPACE`, `GTEST_DISABLE_MSC_WARNINGS_PUSH_(4251)`), after a line that
//!    ends a statement, block or label (or is such a macro) and before one that does not
//!    close or continue an expression (so an enum's last member `MAX_VALUE` without a comma
//!    stays);
//! 2. before a declaration, on a line that can begin one (the code above ends a statement,
//!    block, label, `)` or `template <…>`, so not `SOME_TYPE b)` continuing `f(int a,`): at
//!    its start, after other specifiers (`constexpr FMT_INLINE`, `extern template FMT_API`),
//!    or after `class`/`struct`/`union` (`class GTEST_API_ X`,
//!    `class FMT_SO_VISIBILITY("default") X`), when a name, a keyword or `~` follows
//!    (`FMT_CONSTEXPR20 ~basic_memory_buffer()`); a macro followed by `(`, `::`, `=`, `,` or an
//!    operator is code and stays;
//! 3. after a function's parameter list or its qualifiers and before its body, its `;` or
//!    `= 0` (`) const GTEST_LOCK_EXCLUDED_(mutex_) {`, or alone on the next line), unless the
//!    line is a statement (`if (x) RETURN_ERROR(y);` is a call); and between `if` and its
//!    condition (`if FMT_CONSTEXPR20 (…)`, a macro for `constexpr`).
//!
//! A statement macro with a block, indented after a block's `}` (`JSON_CATCH(...) {}`, the
//! catch of `JSON_TRY { … }`), is blanked and its block stays a block. Macro calls whose
//! arguments are types (`GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(unsigned char, 0);`) are
//! not recognised. Preprocessor lines (and their `\` continuations) are left alone. In C files
//! only a macro between a return type and a function's name is blanked (`int CJSON_CDECL
//! main(void)`): the C grammar reads a macro before a declaration as a type, which is what it
//! usually is there (`SIZE_T f(void)`), and cannot parse a function without one.

use std::borrow::Cow;

/// Specifier keywords a macro may stand among.
const SPECIFIERS: &[&str] = &[
    "constexpr",
    "consteval",
    "constinit",
    "static",
    "inline",
    "extern",
    "virtual",
    "explicit",
    "friend",
    "const",
    "volatile",
    "typedef",
    "template",
    "class",
    "struct",
    "union",
    "enum",
    "typename",
    "mutable",
    "thread_local",
    "register",
];

/// Lines looked through (blank, comment, preprocessor) for the code above or below a line.
const MAX_LOOK: usize = 64;

/// Qualifiers that may stand between a parameter list and a trailing annotation.
const QUALIFIERS: &[&str] = &["const", "override", "final", "noexcept", "volatile"];

/// `text` with derailing annotation macros replaced by spaces (borrowed when there are none).
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    mask_with(text, false)
}

/// For C: a statement macro alone on its line (Unity's `EXPECT_ABORT_BEGIN`, jemalloc's
/// `TEST_END`) and a calling
/// convention between a return type and a function's name (`int CJSON_CDECL main(void)`);
/// the C grammar reads every other macro before a declaration as the type it usually is.
pub(crate) fn mask_c(text: &str) -> Cow<'_, str> {
    mask_with(text, true)
}

/// For Objective-C: what C gets, and availability and naming annotations at the end of a
/// declaration (`…metrics AF_API_AVAILABLE(ios(10)) {`, `- (instancetype)init
/// NS_DESIGNATED_INITIALIZER;`), which the grammar cannot place and which derail the rest of
/// an `@implementation`.
pub(crate) fn mask_objc(text: &str) -> Cow<'_, str> {
    let c = mask_with(text, true);
    let mut bytes: Option<Vec<u8>> = None;
    let mut in_directive = false;
    for (start, line) in line_spans(&c) {
        let directive = in_directive || line.trim_start().starts_with('#');
        in_directive = directive && line.trim_end().ends_with('\\');
        if directive || !line.contains('_') {
            continue;
        }
        if let Some((s, e)) = annotation_at_end(line) {
            let out = bytes.get_or_insert_with(|| c.as_bytes().to_vec());
            for b in &mut out[start + s..start + e] {
                *b = b' ';
            }
        }
    }
    match bytes {
        Some(b) => Cow::Owned(String::from_utf8(b).unwrap_or_else(|_| c.into_owned())),
        None => c,
    }
}

/// `NAME` or `NAME(…)` as the last thing before a line's `;` or `{` (or its end), after a
/// name, `)` or `*` — an annotation, not a call (`x = FOO(y);` has `=` before it).
fn annotation_at_end(line: &str) -> Option<(usize, usize)> {
    let code_end = line.find("//").unwrap_or(line.len());
    let code = line[..code_end].trim_end();
    let code = code
        .strip_suffix('{')
        .or_else(|| code.strip_suffix(';'))
        .unwrap_or(code)
        .trim_end();
    let bytes = code.as_bytes();
    // The macro's end: after its balanced `(…)` when it has one.
    let mut end = code.len();
    let mut name_end = end;
    if bytes.last() == Some(&b')') {
        let mut depth = 0usize;
        let mut open = None;
        for (j, &b) in bytes.iter().enumerate().rev() {
            match b {
                b')' => depth += 1,
                b'(' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        name_end = code[..open?].trim_end().len();
    }
    let name_start = code[..name_end]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &code[name_start..name_end];
    if !is_macro_name(name) {
        return None;
    }
    let before = code[..name_start].trim_end();
    let ok = before
        .bytes()
        .last()
        .is_some_and(|b| is_ident_byte(b) || b == b')' || b == b'*');
    if !ok || before.ends_with("return") {
        return None;
    }
    if end > code.len() {
        end = code.len();
    }
    Some((name_start, end))
}

fn mask_with(text: &str, c_only: bool) -> Cow<'_, str> {
    let mut bytes: Option<Vec<u8>> = None;
    let lines: Vec<(usize, &str)> = line_spans(text);
    let mut in_directive = false;
    for (i, &(start, line)) in lines.iter().enumerate() {
        let directive = in_directive || line.trim_start().starts_with('#');
        in_directive = directive && line.trim_end().ends_with('\\');
        if directive || !line.contains('_') {
            continue;
        }
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let bare = bare_line(&lines, i);
        if let Some(span) = bare {
            spans.push(span);
        } else if c_only {
            if starts_declaration(&lines, i) {
                calling_convention(line, &mut spans);
            }
        } else {
            if starts_declaration(&lines, i) {
                leading(line, &mut spans);
                calling_convention(line, &mut spans);
            }
            trailing(&lines, i, &mut spans);
        }
        if spans.is_empty() {
            continue;
        }
        let out = bytes.get_or_insert_with(|| text.as_bytes().to_vec());
        for (s, e) in spans {
            for b in &mut out[start + s..start + e] {
                *b = b' ';
            }
        }
    }
    match bytes {
        // Only ASCII bytes were replaced by ASCII spaces, so the text is still UTF-8.
        Some(b) => Cow::Owned(String::from_utf8(b).unwrap_or_else(|_| text.to_string())),
        None => Cow::Borrowed(text),
    }
}

/// Each line with the byte offset it starts at (line ends excluded, `\r` kept).
fn line_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split('\n') {
        out.push((start, line));
        start += line.len() + 1;
    }
    out
}

/// An annotation-macro name: ALL_CAPS, digits and underscores, one underscore at least,
/// four characters at least.
fn is_macro_name(word: &str) -> bool {
    word.len() >= 4
        && word.contains('_')
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The identifier starting at `at`, if one does.
fn word_at(line: &str, at: usize) -> Option<&str> {
    let bytes = line.as_bytes();
    if at >= bytes.len() || !(bytes[at].is_ascii_alphabetic() || bytes[at] == b'_') {
        return None;
    }
    let end = (at..bytes.len())
        .find(|&j| !is_ident_byte(bytes[j]))
        .unwrap_or(bytes.len());
    Some(&line[at..end])
}

fn skip_space(line: &str, at: usize) -> usize {
    let bytes = line.as_bytes();
    (at..bytes.len())
        .find(|&j| !bytes[j].is_ascii_whitespace())
        .unwrap_or(bytes.len())
}

/// The end of a balanced `(…)` starting at `at` on this line.
fn parens_end(line: &str, at: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    if bytes.get(at) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    for (j, &b) in bytes.iter().enumerate().skip(at) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// The code on a line: trimmed, without a trailing `//` comment.
fn code(line: &str) -> &str {
    let line = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    line.trim()
}

/// The nearest line above (or `below`) with code, skipping blanks, comment-only lines and
/// preprocessor lines.
fn neighbour<'a>(lines: &[(usize, &'a str)], i: usize, below: bool) -> Option<&'a str> {
    let mut j = i;
    // Inside a `/* … */` block met from its far end: its lines are comment whatever they
    // start with (a doc comment's `@param[in] x …`).
    let mut in_block = false;
    // Bounded, so a long comment block costs no more than this per line.
    for _ in 0..MAX_LOOK {
        j = if below {
            j.checked_add(1).filter(|&j| j < lines.len())?
        } else {
            j.checked_sub(1)?
        };
        let c = code(lines[j].1);
        let (opens, closes) = (c.contains("/*"), c.ends_with("*/"));
        if in_block {
            in_block = !(if below { closes } else { opens });
            continue;
        }
        if !below && closes && !opens {
            in_block = true;
            continue;
        }
        if below && opens && !closes {
            in_block = true;
            continue;
        }
        if c.is_empty() || c.starts_with('#') || c.starts_with("/*") || c.starts_with('*') {
            continue;
        }
        return Some(c);
    }
    None
}

/// Rule 1: a line that is only a macro (with one argument list at most).
fn bare_line(lines: &[(usize, &str)], i: usize) -> Option<(usize, usize)> {
    let line = lines[i].1;
    let start = skip_space(line, 0);
    let word = word_at(line, start)?;
    if !is_macro_name(word) {
        return None;
    }
    let mut end = start + word.len();
    let after = skip_space(line, end);
    if line.as_bytes().get(after) == Some(&b'(') {
        end = parens_end(line, after)?;
    }
    let rest = code(&line[end..]);
    if rest.starts_with('{') && start > 0 {
        // `JSON_CATCH(...) {}` / `FMT_CATCH(...) {` after a block's `}`, indented: a
        // statement macro (the catch of a `JSON_TRY { … }`), whose block is a block. At the
        // margin, `TEST_F(Suite, Name) {` after a `}` is a definition and stays.
        let after_block = neighbour(lines, i, false).is_some_and(|p| p.ends_with('}'));
        return after_block.then_some((start, end));
    }
    if !rest.is_empty() {
        return None;
    }
    let before_ok = neighbour(lines, i, false).is_none_or(|p| {
        (p.ends_with([';', '{', '}', ')', ':']) && !p.ends_with("::")) || is_macro_name(p)
    });
    let after_ok = neighbour(lines, i, true).is_none_or(|n| {
        !n.starts_with([
            '}', ')', ']', ',', '.', ';', '+', '-', '*', '/', '|', '&', '?', ':', '=', '<', '>',
        ])
    });
    (before_ok && after_ok).then_some((start, end))
}

/// Whether line `i` can start a declaration: the code above ends a statement, block, label,
/// parameter list or `template <…>`, or is a bare macro (not `f(int a,` above
/// `SOME_TYPE b)`).
fn starts_declaration(lines: &[(usize, &str)], i: usize) -> bool {
    neighbour(lines, i, false)
        .is_none_or(|p| p.ends_with([';', '{', '}', ')', ':', '>']) || is_macro_name(p))
}

/// Rule 2: macros among a declaration's leading specifiers.
/// `TYPE MACRO name(`: a macro after a return type (words and `*`s, at least one word) and
/// before the function's name and its parameters is a calling convention or an export
/// annotation (`int CJSON_CDECL main(void)`, `char * CJSON_STDCALL cJSON_Print(…)`).
fn calling_convention(line: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = line.as_bytes();
    let mut at = skip_space(line, 0);
    let mut type_words = 0;
    while let Some(word) = word_at(line, at) {
        let end = at + word.len();
        if is_macro_name(word) && type_words > 0 {
            // The name and its `(` follow, a `*` or two between.
            let mut next = skip_space(line, end);
            while bytes.get(next) == Some(&b'*') {
                next = skip_space(line, next + 1);
            }
            let Some(name) = word_at(line, next) else {
                return;
            };
            if is_macro_name(name) {
                return;
            }
            if bytes.get(skip_space(line, next + name.len())) == Some(&b'(')
                && !spans.iter().any(|&(s, _)| s == at)
            {
                spans.push((at, end));
            }
            return;
        }
        if matches!(
            word,
            "return" | "else" | "case" | "goto" | "sizeof" | "typedef" | "do"
        ) {
            return;
        }
        type_words += 1;
        at = skip_space(line, end);
        while bytes.get(at) == Some(&b'*') {
            at = skip_space(line, at + 1);
        }
    }
}

fn leading(line: &str, spans: &mut Vec<(usize, usize)>) {
    let mut at = skip_space(line, 0);
    let mut after_class = false;
    while let Some(word) = word_at(line, at) {
        let end = at + word.len();
        if SPECIFIERS.contains(&word) {
            after_class = matches!(word, "class" | "struct" | "union");
            at = skip_space(line, end);
            if word == "template" && line.as_bytes().get(at) == Some(&b'<') {
                // `template <…>`: skip the parameter list (`extern template` has none).
                match template_end(line, at) {
                    Some(e) => at = skip_space(line, e),
                    None => return,
                }
            }
            continue;
        }
        if !is_macro_name(word) {
            return;
        }
        let mut macro_end = end;
        let next = skip_space(line, end);
        if line.as_bytes().get(next) == Some(&b'(') {
            // A macro with arguments is a declaration's annotation only after `class`.
            if !after_class {
                return;
            }
            match parens_end(line, next) {
                Some(e) => macro_end = e,
                None => return,
            }
        }
        let follow = skip_space(line, macro_end);
        let bytes = line.as_bytes();
        let ok = match bytes.get(follow) {
            Some(b'~') => true,
            Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
                // Not `FOO_BAR::x` or `FOO_BAR and` (an operator word is code).
                let w = word_at(line, follow).unwrap_or("");
                !matches!(w, "and" | "or" | "not" | "xor" | "bitand" | "bitor")
            }
            Some(b'[') => bytes.get(follow + 1) == Some(&b'['),
            _ => false,
        };
        if !ok {
            return;
        }
        spans.push((at, macro_end));
        at = follow;
    }
}

/// The end of a `<…>` template parameter list starting at `at` on this line.
fn template_end(line: &str, at: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    if bytes.get(at) != Some(&b'<') {
        return None;
    }
    let mut depth = 0usize;
    for (j, &b) in bytes.iter().enumerate().skip(at) {
        match b {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Rule 3: an annotation between a parameter list (or its qualifiers) and a body.
fn trailing(lines: &[(usize, &str)], i: usize, spans: &mut Vec<(usize, usize)>) {
    let full = lines[i].1;
    let trimmed = full.trim_start();
    if trimmed.starts_with("/*") || trimmed.starts_with('*') {
        return;
    }
    // Not into a trailing `//` comment.
    let line = &full[..full.find("//").unwrap_or(full.len())];
    let bytes = line.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let Some(word) = word_at(line, at).filter(|_| at == 0 || !is_ident_byte(bytes[at - 1]))
        else {
            at += 1;
            continue;
        };
        let end = at + word.len();
        if !is_macro_name(word) {
            at = end;
            continue;
        }
        // What stands before: `)` or a qualifier on this line, or (at the line's start) the
        // code line above ending so.
        let before = code(&line[..at]);
        if (before == "if" || before.ends_with(" if") || before.ends_with("}if"))
            && bytes.get(skip_space(line, end)) == Some(&b'(')
        {
            // `if FMT_CONSTEXPR20 (cond)`: a macro for `constexpr`.
            spans.push((at, end));
            at = end;
            continue;
        }
        let before_ok = if before.is_empty() {
            neighbour(lines, i, false).is_some_and(ends_signature)
        } else {
            ends_signature(before)
        };
        let mut macro_end = end;
        let next = skip_space(line, end);
        if bytes.get(next) == Some(&b'(') {
            match parens_end(line, next) {
                Some(e) => macro_end = e,
                None => return,
            }
        }
        let rest = code(&line[macro_end..]);
        // A declaration (`;`, `= 0`) rather than a definition only where the `)` cannot be a
        // statement's condition (`if (x) FOO_BAR(y);` is a call).
        let statement = if before.is_empty() {
            neighbour(lines, i, false).is_some_and(starts_with_control)
        } else {
            starts_with_control(line)
        };
        let after_ok = rest.starts_with(['{', ':'])
            || QUALIFIERS.iter().any(|q| rest.starts_with(q))
            || (rest.is_empty()
                && neighbour(lines, i, true).is_some_and(|n| n.starts_with(['{', ':'])))
            || word_at(rest, 0).is_some_and(is_macro_name)
            || (rest.starts_with([';', '=']) && !statement);
        if before_ok && after_ok {
            spans.push((at, macro_end));
        }
        at = macro_end;
    }
}

/// Whether a line starts with a statement keyword whose `(…)` is not a parameter list.
fn starts_with_control(line: &str) -> bool {
    let line = line.trim_start().trim_start_matches(['}', ' ', '\t']);
    word_at(line, 0).is_some_and(|w| {
        matches!(
            w,
            "if" | "while" | "for" | "switch" | "else" | "return" | "do" | "case"
        )
    })
}

/// Whether code ends a function's parameter list or its qualifiers.
fn ends_signature(code: &str) -> bool {
    code.ends_with(')')
        || QUALIFIERS
            .iter()
            .any(|q| code.ends_with(q) && !code[..code.len() - q.len()].ends_with(is_ident_char))
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> String {
        let out = mask(text).into_owned();
        assert_eq!(out.len(), text.len());
        out
    }

    #[test]
    fn annotation_macros_are_blanked_in_place() {
        assert_eq!(
            masked("FMT_BEGIN_NAMESPACE\nnamespace detail {\n}\nFMT_END_NAMESPACE\n"),
            "                   \nnamespace detail {\n}\n                 \n"
        );
        assert_eq!(
            masked("FMT_BEGIN_NAMESPACE\nFMT_BEGIN_EXPORT\n\nclass X {};\n"),
            "                   \n                \n\nclass X {};\n"
        );
        assert_eq!(
            masked("FMT_CONSTEXPR20 ~buffer() {}\n"),
            "                ~buffer() {}\n"
        );
        assert_eq!(
            masked("FMT_EXPORT template <typename T> class X {};\n"),
            "           template <typename T> class X {};\n"
        );
        assert_eq!(
            masked("class FMT_SO_VISIBILITY(\"default\") format_error : public E {\n"),
            "class                              format_error : public E {\n"
        );
        assert_eq!(
            masked("constexpr FMT_ALWAYS_INLINE basic_format_args(int x) {}\n"),
            "constexpr                   basic_format_args(int x) {}\n"
        );
        assert_eq!(
            masked("void A::f() const GTEST_LOCK_EXCLUDED_(mutex_) {\n}\n"),
            "void A::f() const                              {\n}\n"
        );
        assert_eq!(
            masked("    if FMT_CONSTEXPR20 (is_copy<T>::value) {\n"),
            "    if                 (is_copy<T>::value) {\n"
        );
        assert_eq!(
            masked("extern template FMT_API auto f<char>(int) -> char;\n"),
            "extern template         auto f<char>(int) -> char;\n"
        );
        assert_eq!(
            masked("virtual void Clear()\n    GTEST_LOCK_REQUIRED_(mu) = 0;\n"),
            "virtual void Clear()\n                             = 0;\n"
        );
        assert_eq!(
            masked("void f() override\n    GTEST_LOCK_EXCLUDED_(mu) {\n}\n"),
            "void f() override\n                             {\n}\n"
        );
    }

    #[test]
    fn macros_in_code_stay() {
        for text in [
            "#define FMT_CONSTEXPR constexpr\n",
            "#define X \\\n  FMT_API int f()\n",
            "enum E {\n  FIRST_ONE,\n  LAST_ONE\n};\n",
            "int x = FMT_VERSION;\nreturn MAX_SIZE;\n",
            "FMT_ASSERT(x, \"message\");\n",
            "FOO_BAR(x) + 1;\n",
            "int a[] = {\n  ONE_A,\n  TWO_B\n};\n",
            "if (x) RETURN_ERROR(y);\n",
            "if (x)\n  RETURN_ERROR(y);\n",
            "MY_TYPE *p = 0;\nFOO_BAR::baz();\n",
            "void f(int a,\n       SOME_TYPE b) {}\n",
            "DWORD GetSize() { return 0; }\n",
        ] {
            assert_eq!(masked(text), text, "{text:?}");
        }
    }
}
