//! Documents cut by their headings: one chunk per section (windows when a section is too
//! big), every heading a symbol of kind `heading` whose parent is the enclosing heading. The
//! heading finders (Markdown, reStructuredText, AsciiDoc, plain text, PDF pages) differ; what
//! a section is does not.

use crate::{finish, windows, ChunkOptions, Ident, Lines, Piece};
use quarry_core::{FileChunks, Language, Symbol};

/// A heading found in a document: where its section starts (`line`: an overline, when the
/// markup has one), the line that holds its title, its level (1 = outermost) and title.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Heading {
    pub line: u32,
    pub title_line: u32,
    pub level: usize,
    pub text: String,
}

/// Sections between `headings` (sorted by line), the text before the first one as an
/// unnamed section.
pub(crate) fn chunk(
    lines: &Lines,
    opts: &ChunkOptions,
    headings: &[Heading],
    language: Language,
) -> FileChunks {
    let n = lines.len();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut names: Vec<(u32, String)> = Vec::new();

    let preamble_end = headings.first().map_or(n, |h| h.line - 1);
    let preamble = Ident {
        symbol: None,
        kind: "section".to_string(),
        parent: None,
        signature: None,
    };
    push_section(lines, opts, 1, preamble_end, &preamble, &mut pieces);

    // Open headings, outermost first: the enclosing heading of a new one is the last with a
    // lower level.
    let mut stack: Vec<usize> = Vec::new();
    for (i, h) in headings.iter().enumerate() {
        while stack.last().is_some_and(|&j| headings[j].level >= h.level) {
            stack.pop();
        }
        let parent = stack
            .last()
            .map(|&j| headings[j].text.clone())
            .filter(|t| !t.is_empty());
        stack.push(i);

        let section_end = headings.get(i + 1).map_or(n, |next| next.line - 1);
        // The symbol spans its subsections: up to the next heading of the same or higher level.
        let symbol_end = headings[i + 1..]
            .iter()
            .find(|next| next.level <= h.level)
            .map_or(n, |next| next.line - 1);
        let symbol_end = lines.trim(h.line, symbol_end).map_or(h.line, |(_, e)| e);
        let signature = Some(crate::cap(lines.get(h.title_line).trim(), 200).to_string());
        let name = (!h.text.is_empty()).then(|| h.text.clone());
        if let Some(name) = &name {
            symbols.push(Symbol {
                name: name.clone(),
                kind: "heading".to_string(),
                parent: parent.clone(),
                start_line: h.line,
                end_line: symbol_end,
                signature: signature.clone(),
            });
            names.push((h.line, name.clone()));
        }
        let ident = Ident {
            symbol: name,
            kind: "section".to_string(),
            parent,
            signature,
        };
        push_section(lines, opts, h.line, section_end, &ident, &mut pieces);
    }
    FileChunks {
        chunks: finish(pieces, lines, language, &names),
        symbols,
        calls: Vec::new(),
    }
}

/// A section's lines as one piece, or windows when it is too big; nothing when blank.
fn push_section(
    lines: &Lines,
    opts: &ChunkOptions,
    s: u32,
    e: u32,
    ident: &Ident,
    out: &mut Vec<Piece>,
) {
    let Some((s, e)) = lines.trim(s, e) else {
        return;
    };
    if lines.fits(s, e, opts) {
        out.push(Piece {
            start: s,
            end: e,
            ident: ident.clone(),
        });
    } else {
        for (start, end) in windows(lines, s, e, opts) {
            out.push(Piece {
                start,
                end,
                ident: ident.clone(),
            });
        }
    }
}
