//! Definitions by name and line: the outline's least detail, and what it keeps to the last.
//!
//! An agent reads an outline to ask for exact lines next, so a definition's name and start line
//! are worth more than any signature or doc. Once every part of an outline is at its least
//! detail and the whole is still over its budget, the smallest definitions are written as
//! `name LINE` in runs (`12 definitions: f 3, g 4 (h 5, i 6), …`), what a definition holds in
//! parentheses after it, so nested functions, test functions and a type's methods keep their
//! names too. Only when the names alone pass the outline's hard bound are the last definitions
//! counted with their lines (`… 20 more definitions, lines 900-1200`): a file of 20,000 small
//! functions gets its bound's worth of names, never an outline the size of the file.

use crate::parts::{Elided, Part};
use crate::OutlineItem;
use std::cmp::Reverse;
use std::fmt::Write;

/// Longest line of definitions listed by name, in characters.
const FOLDED_LINE: usize = 120;
/// Room kept for the closing count of definitions left out (`… 1234 more definitions, lines
/// 10001-20000`).
const COUNT_LINE: usize = 64;
/// Rounds of converting more definitions to names when a run came out longer than estimated.
const ROUNDS: usize = 4;

/// Text written by name and line, wrapped at `wrap` characters a line (0: one line).
pub(crate) struct Names {
    pub(crate) text: String,
    pub(crate) chars: usize,
    line_chars: usize,
    wrap: usize,
}

impl Names {
    pub(crate) fn new(wrap: usize) -> Self {
        Names {
            text: String::new(),
            chars: 0,
            line_chars: 0,
            wrap,
        }
    }

    fn push(&mut self, s: &str) {
        let n = s.chars().count();
        self.text.push_str(s);
        self.chars += n;
        self.line_chars = match s.rfind('\n') {
            Some(at) => s[at + 1..].chars().count(),
            None => self.line_chars + n,
        };
    }

    /// Starts a line; `head` is what it begins with (a run's count).
    pub(crate) fn start(&mut self, head: &str) {
        self.push(head);
    }

    /// Ends the current line.
    pub(crate) fn end_line(&mut self) {
        self.push("\n");
    }
}

fn entry(item: &OutlineItem) -> String {
    format!("{} {}", item.name, item.start_line)
}

/// Writes `items` (depth first, the first at the depth the others are under or beside) by name
/// and line after `first_sep` (what goes before the first entry when something came before):
/// `Store 10 (get 12, put 20 (check 22)), helper 30`. Stops before an entry that would pass
/// `limit` characters of `names` (keeping `reserve` for what follows), closing what it opened;
/// returns how many items it wrote.
pub(crate) fn write_names(
    names: &mut Names,
    items: &[OutlineItem],
    first_sep: &str,
    limit: Option<usize>,
    reserve: usize,
) -> usize {
    let Some(first) = items.first() else {
        return 0;
    };
    let base = first.depth;
    let mut depth = base;
    for (k, item) in items.iter().enumerate() {
        let e = entry(item);
        let sep = match k {
            0 => first_sep.to_string(),
            _ if item.depth > depth => " (".to_string(),
            _ => ")".repeat((depth - item.depth.max(base)) as usize) + ", ",
        };
        let opens = item.depth.max(base) - base;
        let e_chars = e.chars().count();
        let sep_chars = sep.chars().count();
        if let Some(limit) = limit {
            if names.chars + sep_chars + e_chars + opens as usize + 2 + reserve > limit {
                names.push(&")".repeat((depth - base) as usize));
                return k;
            }
        }
        if names.wrap > 0
            && sep.ends_with(' ')
            && names.line_chars + sep_chars + e_chars > names.wrap
        {
            // Goes on on a line of its own.
            names.push(sep.trim_end());
            names.push("\n  ");
        } else {
            names.push(&sep);
        }
        names.push(&e);
        depth = item.depth.max(base);
    }
    names.push(&")".repeat((depth - base) as usize));
    items.len()
}

/// The definitions in at most `room` characters, every part at its least detail and still
/// over: the smallest definitions (by lines; the later of equal ones), then those holding
/// others (fewest first), are written by name and line in runs, the rest shown as rendered;
/// when even every name is over, the definitions from the first that does not fit are counted
/// with their lines.
pub(crate) fn fold(units: &[Vec<OutlineItem>], parts: &[Part], room: usize) -> Part {
    // Each unit by name alone, as in a run (its separator included).
    let names_chars: Vec<usize> = units
        .iter()
        .map(|u| {
            let mut n = Names::new(0);
            write_names(&mut n, u, ", ", None, 0);
            n.chars
        })
        .collect();
    let mut order: Vec<usize> = (0..units.len()).filter(|&i| units[i].len() == 1).collect();
    order.sort_by_key(|&i| (units[i][0].end_line - units[i][0].start_line, Reverse(i)));
    let mut holders: Vec<usize> = (0..units.len()).filter(|&i| units[i].len() > 1).collect();
    holders.sort_by_key(|&i| (units[i].len(), Reverse(i)));
    order.extend(holders);
    let mut order = order.into_iter();
    let mut by_name = vec![false; units.len()];
    // A run's count (`12 definitions: `) and line breaks are estimated, then measured.
    let run_head = 18;
    let mut estimate = parts.iter().map(|p| p.chars).sum::<usize>();
    let mut target = room.saturating_sub(COUNT_LINE);
    for _ in 0..ROUNDS {
        while estimate > target {
            let Some(i) = order.next() else {
                break;
            };
            let joins = (i > 0 && by_name[i - 1]) as usize
                + by_name.get(i + 1).copied().unwrap_or(false) as usize;
            by_name[i] = true;
            estimate = (estimate + names_chars[i] + names_chars[i] / 50 + run_head)
                .saturating_sub(parts[i].chars + run_head * joins);
        }
        let whole = write_fold(units, parts, &by_name, None);
        if whole.chars <= room {
            return whole;
        }
        // Longer than estimated: aim lower by what it was over.
        estimate = whole.chars;
        target = target.saturating_sub(whole.chars - room);
    }
    write_fold(units, parts, &by_name, Some(room))
}

/// The outline with the units marked `by_name` written by name and line in runs, the others as
/// rendered; with a `room`, the definitions from the first that does not fit are counted.
pub(crate) fn write_fold(
    units: &[Vec<OutlineItem>],
    parts: &[Part],
    by_name: &[bool],
    room: Option<usize>,
) -> Part {
    let mut out = Names::new(FOLDED_LINE);
    let mut elided = Elided::default();
    let mut i = 0;
    // The first unit not written, and how many of its items were.
    let mut stopped: Option<(usize, usize)> = None;
    while i < units.len() {
        if !by_name[i] {
            let fits = room.is_none_or(|room| out.chars + parts[i].chars + COUNT_LINE <= room);
            if fits {
                out.push(&parts[i].text);
                elided.add(parts[i].elided);
                i += 1;
                continue;
            }
        }
        // A run: this unit and the next ones by name (a part over the room goes by name too).
        let run_end = (i + 1..units.len())
            .find(|&j| !by_name[j])
            .unwrap_or(units.len());
        let n: usize = units[i..run_end].iter().map(Vec::len).sum();
        out.start(&format!(
            "{n} definition{}: ",
            if n == 1 { "" } else { "s" }
        ));
        let mut first = true;
        while i < run_end {
            let sep = if first { "" } else { ", " };
            let written = write_names(&mut out, &units[i], sep, room, COUNT_LINE);
            elided.by_name += written;
            elided.docs += units[i][..written]
                .iter()
                .filter(|d| d.doc.is_some())
                .count();
            if written < units[i].len() {
                stopped = Some((i, written));
                break;
            }
            first = false;
            i += 1;
        }
        out.end_line();
        if stopped.is_some() {
            break;
        }
    }
    if let Some((unit, written)) = stopped {
        let rest = units[unit][written..]
            .iter()
            .chain(units[unit + 1..].iter().flatten());
        let (mut count, mut first, mut last) = (0usize, None, 0u32);
        for item in rest {
            count += 1;
            first.get_or_insert(item.start_line);
            last = last.max(item.end_line);
        }
        let mut line = String::new();
        let _ = writeln!(
            line,
            "… {count} more definition{}, lines {}-{last}",
            if count == 1 { "" } else { "s" },
            first.unwrap_or(0)
        );
        out.push(&line);
        elided.left_out += count;
    }
    Part {
        text: out.text,
        chars: out.chars,
        elided,
    }
}
