//! Headings of reStructuredText, AsciiDoc and plain text, for `sections::chunk`.
//!
//! Hand-written for the same reason as Markdown's: a section title is a line pattern, and the
//! only context needed is which lines are literal blocks. No maintained Rust parser of either
//! markup exposes line positions.
//!
//! * reStructuredText: a title is a line of text underlined (and optionally overlined) by one
//!   punctuation character repeated; levels follow the order in which each style (character,
//!   with or without overline) first appears, as docutils assigns them. Titles are never
//!   indented, so literal blocks (indented) cannot produce one.
//! * AsciiDoc: `= Title` (document title, level 1) to `====== Title`, outside delimited blocks
//!   (`----`, `....`, `````, `++++`, `____`, `****`, `////`, `====` fences).
//! * Plain text: the conventions of RFCs, READMEs and manuals: numbered titles (`4.2.  Retry
//!   Policy`, level = depth of the number), underlined titles (as in reST) and short
//!   ALL-CAPS lines, each standing alone between blank lines.

use crate::sections::Heading;
use crate::Lines;

/// Characters docutils accepts for section adornment.
const RST_ADORNMENT: &str = "=-`:'\"~^_*+#<>.";

/// A line made of one adornment character repeated (at least three times); that character.
fn adornment(line: &str, allowed: &str) -> Option<char> {
    let line = line.trim_end();
    let first = line.chars().next()?;
    (allowed.contains(first) && line.chars().count() >= 3 && line.chars().all(|c| c == first))
        .then_some(first)
}

/// Whether `line` can be a title's text: not blank, not indented, not itself an adornment.
fn title_text(line: &str, allowed: &str) -> bool {
    !line.trim().is_empty() && !line.starts_with([' ', '\t']) && adornment(line, allowed).is_none()
}

/// Levels in order of first appearance of each style.
struct Styles(Vec<(char, bool)>);

impl Styles {
    fn level(&mut self, style: (char, bool)) -> usize {
        match self.0.iter().position(|s| *s == style) {
            Some(i) => i + 1,
            None => {
                self.0.push(style);
                self.0.len()
            }
        }
    }
}

/// reStructuredText section titles.
pub(crate) fn rst_headings(lines: &Lines) -> Vec<Heading> {
    underlined_headings(lines, RST_ADORNMENT, &mut Styles(Vec::new()))
}

/// Titles underlined (or over- and underlined) by a repeated adornment character at least as
/// long as most of the title (docutils warns on a short underline but still makes a title;
/// a quarter shorter is accepted here, so a typo'd underline still counts).
fn underlined_headings(lines: &Lines, allowed: &str, styles: &mut Styles) -> Vec<Heading> {
    let mut out = Vec::new();
    let n = lines.len();
    let mut i = 1;
    while i < n {
        let text = lines.get(i);
        let under = lines.get(i + 1);
        let long_enough = |mark: &str, title: &str| {
            let (m, t) = (
                mark.trim_end().chars().count(),
                title.trim().chars().count(),
            );
            4 * m >= 3 * t
        };
        // Overline, title, underline.
        if let Some(over) = adornment(text, allowed) {
            let title = lines.get(i + 1);
            let below = lines.get(i + 2);
            if i + 2 <= n
                && !title.trim().is_empty()
                && adornment(title, allowed).is_none()
                && adornment(below, allowed) == Some(over)
                && long_enough(text, title)
            {
                out.push(Heading {
                    line: i,
                    title_line: i + 1,
                    level: styles.level((over, true)),
                    text: title.trim().to_string(),
                });
                i += 3;
                continue;
            }
        }
        let above_blank = i == 1 || lines.is_blank(i - 1);
        if above_blank && title_text(text, allowed) {
            if let Some(mark) = adornment(under, allowed) {
                if long_enough(under, text) {
                    out.push(Heading {
                        line: i,
                        title_line: i,
                        level: styles.level((mark, false)),
                        text: text.trim().to_string(),
                    });
                    i += 2;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// Characters that open and close an AsciiDoc delimited block when repeated four times or
/// more on a line of their own.
const ASCIIDOC_DELIMITERS: &str = "-.`+_*/=";

/// AsciiDoc section titles (`=` to `======`, or Markdown's `#`), outside delimited blocks.
pub(crate) fn asciidoc_headings(lines: &Lines) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for n in 1..=lines.len() {
        let line = lines.get(n).trim_end();
        if let Some(fence) = &open {
            if line == fence {
                open = None;
            }
            continue;
        }
        // A block opens with a delimiter line (closed by the same line) or a Markdown fence
        // with an info string (closed by three backticks).
        let delimiter = line.len() >= 4
            && line
                .chars()
                .next()
                .is_some_and(|c| ASCIIDOC_DELIMITERS.contains(c) && line.chars().all(|d| d == c));
        if delimiter {
            open = Some(line.to_string());
            continue;
        }
        if line.starts_with("```") && !line[3..].contains('`') {
            open = Some("```".to_string());
            continue;
        }
        let marker = line.chars().next().filter(|&c| c == '=' || c == '#');
        let Some(marker) = marker else { continue };
        let level = line.chars().take_while(|&c| c == marker).count();
        let rest = &line[level..];
        if (1..=6).contains(&level) && rest.starts_with(' ') && !rest.trim().is_empty() {
            out.push(Heading {
                line: n,
                title_line: n,
                level,
                text: rest
                    .trim()
                    .trim_end_matches(&['=', '#'][..])
                    .trim()
                    .to_string(),
            });
        }
    }
    out
}

/// Plain-text titles: numbered (`2.1.  Scope`), underlined, or short ALL-CAPS lines, each on
/// its own between blank lines (an underlined title needs a blank line above only).
pub(crate) fn text_headings(lines: &Lines) -> Vec<Heading> {
    let mut styles = Styles(Vec::new());
    let mut out = underlined_headings(lines, "=-~*#^+", &mut styles);
    let underlined: std::collections::HashSet<u32> = out
        .iter()
        .flat_map(|h| [h.line, h.title_line, h.title_line + 1])
        .collect();
    let n = lines.len();
    for i in 1..=n {
        if underlined.contains(&i) {
            continue;
        }
        let line = lines.get(i);
        let alone = (i == 1 || lines.is_blank(i - 1)) && (i == n || lines.is_blank(i + 1));
        if !alone || line.starts_with([' ', '\t']) || line.trim().chars().count() > 72 {
            continue;
        }
        let level = numbered_title(line.trim()).or_else(|| caps_title(line.trim()).then_some(1));
        if let Some(level) = level {
            out.push(Heading {
                line: i,
                title_line: i,
                level,
                text: line.trim().to_string(),
            });
        }
    }
    out.sort_by_key(|h| h.line);
    out
}

/// `4.2.  Retry Policy` → Some(2): a section number, then a capitalised title that does not
/// end like a sentence. (`1. buy milk.` is a list item, not a title.)
fn numbered_title(line: &str) -> Option<usize> {
    let number_end = line.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let number = &line[..number_end];
    let title = line[number_end..].trim_start();
    if number.is_empty()
        || !number.starts_with(|c: char| c.is_ascii_digit())
        || number.contains("..")
        || line[number_end..].len() == title.len()
        || !title.starts_with(|c: char| c.is_uppercase())
        || title.ends_with(['.', ',', ';', ':'])
        || title.split_whitespace().count() > 10
    {
        return None;
    }
    Some(number.trim_end_matches('.').split('.').count())
}

/// `INTRODUCTION`, `SECURITY CONSIDERATIONS`: at least four letters, none lower-case.
fn caps_title(line: &str) -> bool {
    let letters = line.chars().filter(|c| c.is_alphabetic()).count();
    letters >= 4
        && !line.chars().any(|c| c.is_lowercase())
        && line
            .chars()
            .all(|c| c.is_alphanumeric() || " -&/:.,()'".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(found: Vec<Heading>) -> Vec<(u32, usize, String)> {
        found
            .into_iter()
            .map(|h| (h.line, h.level, h.text))
            .collect()
    }

    #[test]
    fn rst_levels_follow_first_appearance() {
        let text = "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nRun ``pip``::\n\n    Title\n    -----\n\nRetry policy\n------------\n\nDetails\n~~~~~~\n\nTuning\n======\n";
        let found = titles(rst_headings(&Lines::new(text)));
        assert_eq!(
            found,
            [
                (1, 1, "Guide".to_string()),
                (7, 2, "Install".to_string()),
                (15, 2, "Retry policy".to_string()),
                (18, 3, "Details".to_string()),
                (21, 4, "Tuning".to_string()),
            ]
        );
        // A transition (a lone line of dashes) and a short underline are not titles.
        let found = rst_headings(&Lines::new(
            "Text.\n\n--------\n\nA much longer title\n---\n",
        ));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn asciidoc_titles_outside_blocks() {
        let text = "= Manual\n\n== Retry policy\n\n----\n== not a title\n----\n\n=== Backoff ===\n\n====\nexample\n====\n";
        let found = titles(asciidoc_headings(&Lines::new(text)));
        assert_eq!(
            found,
            [
                (1, 1, "Manual".to_string()),
                (3, 2, "Retry policy".to_string()),
                (9, 3, "Backoff".to_string()),
            ]
        );
    }

    #[test]
    fn plain_text_numbered_underlined_and_caps() {
        let text = "ABSTRACT\n\nThis memo.\n\n1.  Introduction\n\nWords.\n\n4.2.  Retry Policy\n\n1. buy milk.\n\nOverview\n========\n\nThe 2024 plan is here\n";
        let found = titles(text_headings(&Lines::new(text)));
        assert_eq!(
            found,
            [
                (1, 1, "ABSTRACT".to_string()),
                (5, 1, "1.  Introduction".to_string()),
                (9, 2, "4.2.  Retry Policy".to_string()),
                (13, 1, "Overview".to_string()),
            ]
        );
    }
}
