//! Which grammar parses a file whose extension does not settle it: a `.h` file is C to
//! `Language::detect` (path only), but C++ projects name their headers `.h` too, and the C
//! grammar turns C++ into noise (`namespace detail {` read as a function named `namespace`,
//! classes, templates and in-class methods lost).
//!
//! The choice: the file keeps the language its path gives (`c`), everywhere it is stored and
//! shown (chunks' language, `--lang` filters, summaries), because those are decided from the
//! path alone in many places (quarry-engine's filters, quarry-sources, quarry-grep), and a
//! file whose language depended on its content there would be filtered one way and indexed
//! another. Only the parse changes: chunking and outlines (both go through this crate, for
//! indexing and for `quarry summary`) read a C file's definitions with the C++ grammar and
//! rules when its text is C++, so a C++ header's definitions are C++'s.
//!
//! How a C file is recognised as C++: its first [`SNIFF_BYTES`], outside comments, hold a line
//! that C cannot have: `namespace x {`, `template <`, `class X` at the start of a line, an
//! access label (`public:`), `using namespace`, `extern "C++"`, or an `#include <string>` of a
//! header without an extension (C's standard and system headers all end in `.h`). One such line
//! is enough; a C header's `#ifdef __cplusplus` / `extern "C" {` guard is not one. Sniffing
//! beats parsing twice and keeping the tree with fewer errors: it costs a scan of a few
//! kilobytes instead of a second parse of every header, and it does not depend on how well
//! either grammar recovers from macros.

use quarry_core::Language;

/// How much of a file's start is read for C++-only syntax.
pub(crate) const SNIFF_BYTES: usize = 32 * 1024;

/// The language whose grammar and rules parse a file in `language` with this text.
pub(crate) fn grammar_language(language: Language, text: &str) -> Language {
    if language != Language::C {
        language
    } else if looks_like_objc(text) {
        Language::ObjectiveC
    } else if looks_like_cpp(text) {
        Language::Cpp
    } else {
        language
    }
}

/// Whether a `.h` is Objective-C: a line of its first [`SNIFF_BYTES`] starts with
/// `@interface`, `@protocol`, `@implementation` or `#import` (C and C++ include).
pub(crate) fn looks_like_objc(text: &str) -> bool {
    let mut end = text.len().min(SNIFF_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].lines().any(|line| {
        let line = line.trim_start();
        ["@interface", "@protocol", "@implementation", "#import"]
            .iter()
            .any(|start| line.starts_with(start))
    })
}

/// Whether C-or-C++ source holds a line only C++ can have.
pub(crate) fn looks_like_cpp(text: &str) -> bool {
    let mut end = text.len().min(SNIFF_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut in_comment = false;
    for line in text[..end].lines() {
        let mut line = line.trim();
        if in_comment {
            match line.find("*/") {
                Some(i) => {
                    in_comment = false;
                    line = line[i + 2..].trim();
                }
                None => continue,
            }
        }
        if let Some(rest) = line.strip_prefix("/*") {
            match rest.find("*/") {
                Some(i) => line = rest[i + 2..].trim(),
                None => {
                    in_comment = true;
                    continue;
                }
            }
        }
        if cpp_only(line) {
            return true;
        }
    }
    false
}

/// One trimmed line (comments at its start removed) that only C++ can have.
fn cpp_only(line: &str) -> bool {
    if let Some(directive) = line.strip_prefix('#') {
        // `#include <string>`, `#include <QObject>`: a header without an extension.
        let Some(rest) = directive.trim_start().strip_prefix("include") else {
            return false;
        };
        let Some(header) = rest.trim_start().strip_prefix('<') else {
            return false;
        };
        let Some(header) = header.split('>').next() else {
            return false;
        };
        let file = header.rsplit('/').next().unwrap_or(header);
        return !file.is_empty()
            && !file.contains('.')
            && file.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    }
    let word = |prefix: &str| {
        line.strip_prefix(prefix)
            .filter(|rest| rest.starts_with(|c: char| c.is_whitespace() || c == '<'))
            .map(str::trim_start)
    };
    if let Some(rest) = word("namespace") {
        // `namespace fmt {`, `namespace {`, `namespace a::b {`, `namespace fs = std::fs;`.
        return rest.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '{');
    }
    if let Some(rest) = word("template") {
        return rest.starts_with('<');
    }
    if let Some(rest) = word("class") {
        return rest.starts_with(|c: char| c.is_alphabetic() || c == '_');
    }
    matches!(line, "public:" | "private:" | "protected:")
        || line.starts_with("using namespace ")
        || line.starts_with("extern \"C++\"")
}

/// The language a script without an extension is written in, by its `#!` line: `bin/deploy`
/// starting `#!/usr/bin/env bash` is shell. Such a file stays `text` where its language is
/// decided by path (the stored file, `status`), as a C++ header named `.h` stays `c`; its
/// chunks, definitions and outline are the script language's.
pub fn script_language(text: &str) -> Option<Language> {
    let first = text.lines().next()?.strip_prefix("#!")?;
    let mut words = first.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        // `#!/usr/bin/env -S python3 -u`: the first word that is not an option.
        program = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
    }
    let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match program {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" => Language::Shell,
        "python" | "pypy" => Language::Python,
        "ruby" => Language::Ruby,
        "node" | "nodejs" => Language::JavaScript,
        "lua" | "luajit" => Language::Lua,
        "php" => Language::Php,
        "Rscript" => Language::R,
        "julia" => Language::Julia,
        "elixir" => Language::Elixir,
        "runhaskell" | "runghc" => Language::Haskell,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_headers_are_told_from_c_headers() {
        for cpp in [
            "#pragma once\n#include <string>\n",
            "// (c) 2024\nnamespace fmt {\nint x;\n}\n",
            "FMT_BEGIN_NAMESPACE\nnamespace detail {\n",
            "template <typename T> struct S {};\n",
            "class RedisQtAdapter : public QObject {\n",
            "struct A {\n public:\n  int x;\n};\n",
            "#include <QObject>\n",
        ] {
            assert!(looks_like_cpp(cpp), "{cpp:?}");
            assert_eq!(grammar_language(Language::C, cpp), Language::Cpp);
        }
        for c in [
            "#include <stdio.h>\n#include <sys/types.h>\nint main(void) { return 0; }\n",
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\ntypedef struct redisReader redisReader;\n",
            "/* namespace fmt {\n class X { */\nint x;\n",
            "// template <typename T>\nint class_count;\nint namespace_id;\n",
            "#include \"string\"\n",
        ] {
            assert!(!looks_like_cpp(c), "{c:?}");
        }
        // Only C is sniffed: other languages keep their grammar.
        assert_eq!(
            grammar_language(Language::Java, "class A {}\n"),
            Language::Java
        );
    }
}
