//! Comments inside a multi-line C/C++ `#define`, blanked before the parse. tree-sitter-c reads
//! a macro's body as one `preproc_arg` token that stops at `/*`; a comment followed by the
//! line's `\` then leaves the definition unfinished, and the parser's recovery swallows what
//! follows: in redis's ziplist.c, `} else { /* prevlensize == 5 */ \` ended the macro
//! `ZIP_DECODE_PREVLEN` at that line and the function after it was lost.
//!
//! Each such comment's characters become spaces (line breaks and each line's closing `\`
//! kept), so every byte offset, line and column stays where it was; names and signatures are
//! still read from the file's own text. Only comments inside a `#define` that goes on past its
//! first line are touched, and string and character literals there are passed over.

use std::borrow::Cow;

/// `text` with the comments inside continued `#define`s blanked (borrowed when there are none).
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    if !text.contains("#") || !text.contains("/*") {
        return Cow::Borrowed(text);
    }
    let mut out: Option<Vec<u8>> = None;
    let bytes = text.as_bytes();
    let mut line_start = 0;
    let mut in_define = false;
    let mut in_comment = false;
    while line_start < bytes.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(bytes.len(), |i| line_start + i);
        let line = &text[line_start..line_end];
        let continued = line.trim_end().ends_with('\\');
        let starts_define = {
            let t = line.trim_start();
            t.strip_prefix('#')
                .is_some_and(|rest| rest.trim_start().starts_with("define"))
        };
        if !in_define && starts_define && continued {
            in_define = true;
        }
        if in_define {
            // Blank the comments of this line of the macro, keeping its closing `\`.
            let keep_from = if continued {
                line_start + line.rfind('\\').unwrap_or(line.len())
            } else {
                line_end
            };
            let mut i = line_start;
            let mut quote: Option<u8> = None;
            while i < keep_from {
                let b = bytes[i];
                if in_comment {
                    if b == b'*' && bytes.get(i + 1) == Some(&b'/') && i + 1 < keep_from {
                        blank(&mut out, bytes, i, i + 2);
                        in_comment = false;
                        i += 2;
                        continue;
                    }
                    if b != b'\r' {
                        blank(&mut out, bytes, i, i + 1);
                    }
                    i += 1;
                    continue;
                }
                match (quote, b) {
                    (Some(q), b'\\') if i + 1 < keep_from => {
                        let _ = q;
                        i += 2;
                        continue;
                    }
                    (Some(q), b) if b == q => quote = None,
                    (Some(_), _) => {}
                    (None, b'"' | b'\'') => quote = Some(b),
                    (None, b'/') if bytes.get(i + 1) == Some(&b'*') => {
                        blank(&mut out, bytes, i, i + 2);
                        in_comment = true;
                        i += 2;
                        continue;
                    }
                    // A line comment runs to the `\`: blank it too.
                    (None, b'/') if bytes.get(i + 1) == Some(&b'/') => {
                        blank(&mut out, bytes, i, keep_from);
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
            if !continued {
                in_define = false;
                in_comment = false;
            }
        }
        line_start = line_end + 1;
    }
    match out {
        // Only ASCII bytes were replaced by spaces, whole characters at a time.
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| text.to_string())),
        None => Cow::Borrowed(text),
    }
}

/// Spaces over `bytes[from..to]` in `out` (a copy of `bytes` made on the first change); a
/// multi-byte character inside a comment becomes as many spaces as it had bytes.
fn blank(out: &mut Option<Vec<u8>>, bytes: &[u8], from: usize, to: usize) {
    let out = out.get_or_insert_with(|| bytes.to_vec());
    for b in &mut out[from..to] {
        *b = b' ';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_in_continued_defines_are_blanked_in_place() {
        let text = "#define A(x) do { \\\n  f(x); /* why */ \\\n  g(\"/* not */\"); // note \\\n} while (0)\n/* kept */ int y;\n#define B 1 /* one line: kept */\n";
        let masked = mask(text);
        assert_eq!(masked.len(), text.len());
        assert_eq!(masked.lines().count(), text.lines().count());
        assert!(
            !masked.contains("why") && !masked.contains("note"),
            "{masked}"
        );
        assert!(masked.contains("\"/* not */\""), "a string stays: {masked}");
        assert!(masked.contains("/* kept */ int y;"), "{masked}");
        assert!(masked.contains("/* one line: kept */"), "{masked}");
        // Every line of the macro still ends with its `\`.
        assert_eq!(masked.matches('\\').count(), text.matches('\\').count());
        assert!(matches!(mask("int x; /* c */\n"), Cow::Borrowed(_)));
    }
}
