//! PDF pages: a page that fits in a chunk is one chunk (a reader's unit, and enough words for
//! BM25 and an embedding to judge it by); a longer page is cut at the headings the extractor
//! found on it (sections, windows when still too big). Every chunk carries its page number
//! and lines counted within the page. A page or section that continues one from an earlier
//! page keeps that heading's name; a whole page also lists every heading on it.

use crate::sections::{self, Heading};
use crate::{finish, ChunkOptions, Ident, Lines, Piece};
use quarry_core::{FileChunks, Language, PagedText};

pub fn chunk_pdf(doc: &PagedText, opts: &ChunkOptions) -> FileChunks {
    let opts = opts.normalized();
    let mut out = FileChunks::default();
    // The innermost open heading and its parent, carried across pages.
    let mut open: Option<(String, Option<String>)> = None;
    for page in &doc.pages {
        let lines = Lines::new(&page.text);
        let headings: Vec<Heading> = page
            .headings
            .iter()
            .filter(|h| h.line >= 1 && h.line <= lines.len())
            .map(|h| Heading {
                line: h.line,
                title_line: h.line,
                level: h.level.max(1),
                text: h.text.clone(),
            })
            .collect();
        let mut cut = sections::chunk(&lines, &opts, &headings, Language::Pdf);
        let first_heading = headings.first().map_or(u32::MAX, |h| h.line);
        if let Some((s, e)) = lines
            .trim(1, lines.len())
            .filter(|&(s, e)| lines.fits(s, e, &opts))
        {
            // The page's own first heading names it when the page opens with it; otherwise
            // the section it continues does.
            let (symbol, parent) = match (headings.first(), &open) {
                (Some(h), _) if h.line <= s => (Some(h.text.clone()), None),
                (_, Some((name, parent))) => (Some(name.clone()), parent.clone()),
                (Some(h), None) => (Some(h.text.clone()), None),
                (None, None) => (None, None),
            };
            let names: Vec<(u32, String)> =
                headings.iter().map(|h| (h.line, h.text.clone())).collect();
            let piece = Piece {
                start: s,
                end: e,
                ident: Ident {
                    symbol,
                    kind: "page".to_string(),
                    parent,
                    signature: None,
                },
            };
            cut.chunks = finish(vec![piece], &lines, Language::Pdf, &names);
        }
        for chunk in &mut cut.chunks {
            chunk.page = Some(page.number);
            if chunk.symbol.is_none() && chunk.start_line < first_heading {
                if let Some((name, parent)) = &open {
                    chunk.symbol = Some(name.clone());
                    chunk.parent = parent.clone();
                }
            }
        }
        if let Some(last) = cut.symbols.last() {
            open = Some((last.name.clone(), last.parent.clone()));
        }
        out.chunks.extend(cut.chunks);
        out.symbols.extend(cut.symbols);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_core::{PageHeading, PageText};

    #[test]
    fn chunks_carry_pages_and_sections_run_across_page_breaks() {
        let doc = PagedText {
            pages: vec![
                PageText {
                    number: 1,
                    text: "A Title Page\n\n1 Retry policy\nClients retry three times.\n".into(),
                    headings: vec![PageHeading {
                        line: 3,
                        level: 1,
                        text: "1 Retry policy".into(),
                    }],
                },
                PageText {
                    number: 2,
                    text: "with exponential backoff.\n\n2 Timeouts\nThirty seconds.\n".into(),
                    headings: vec![PageHeading {
                        line: 3,
                        level: 1,
                        text: "2 Timeouts".into(),
                    }],
                },
                PageText {
                    number: 3,
                    text: String::new(),
                    headings: Vec::new(),
                },
            ],
        };
        let fc = chunk_pdf(&doc, &ChunkOptions::default());
        let got: Vec<(Option<u32>, u32, u32, Option<&str>, &str)> = fc
            .chunks
            .iter()
            .map(|c| {
                (
                    c.page,
                    c.start_line,
                    c.end_line,
                    c.symbol.as_deref(),
                    c.kind.as_str(),
                )
            })
            .collect();
        // Short pages are whole chunks, named by the heading they open with or continue.
        assert_eq!(
            got,
            [
                (Some(1), 1, 4, Some("1 Retry policy"), "page"),
                (Some(2), 1, 4, Some("1 Retry policy"), "page"),
            ]
        );
        assert_eq!(fc.chunks[1].symbols, ["2 Timeouts"]);
        // A page too long for one chunk is cut at its headings.
        let small = ChunkOptions {
            max_lines: 3,
            ..ChunkOptions::default()
        };
        let fc = chunk_pdf(&doc, &small);
        let got: Vec<(Option<u32>, u32, u32, Option<&str>)> = fc
            .chunks
            .iter()
            .map(|c| (c.page, c.start_line, c.end_line, c.symbol.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(1), 1, 1, None),
                (Some(1), 3, 4, Some("1 Retry policy")),
                (Some(2), 1, 1, Some("1 Retry policy")),
                (Some(2), 3, 4, Some("2 Timeouts")),
            ]
        );
        assert!(fc.chunks.iter().all(|c| c.language == Language::Pdf));
        assert_eq!(fc.symbols.len(), 2);
    }
}
