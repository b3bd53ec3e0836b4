//! The outline as text for an agent: a header line, the imports, then one line per definition
//! (`start-end signature — doc`) indented by nesting, with a type's members under it.
//!
//! An outline is worth having only while it is much smaller than its file, so a code file's
//! outline has a budget in characters: `BUDGET_PERCENT` of the file, at least `MIN_BUDGET` for
//! a short file. What it may never lose is a definition's name and start line: an agent asks
//! for exact lines next. Over the budget, detail goes one step at a time from the largest part
//! of the outline (a top-level definition with everything inside it, or the imports) until the
//! whole fits, the least needed detail first: the docs of methods, with the functions nested
//! in functions named on their function's line (`(nested: parse 12, emit 30)`), then the
//! parameter types of methods, then methods listed by name and line only, then the top-level
//! definition's own doc and parameter types. A test module's definitions are listed by name
//! and line at every level. When every part is at its least detail and still over, the
//! smallest definitions go by name and line too (fold.rs), in the budget or, when the names
//! alone are over it, in what they take up to a hard bound (`NAMES_PERCENT` of the file); only
//! past that are definitions counted with their lines. The closing `(shortened …)` line says
//! what was left out.

use crate::compact::{
    clip_words, member_name, members_shown, shorten_signature, trim_member, trim_signature,
    without_receiver,
};
use crate::fold::{fold, write_fold, write_names, Names};
use crate::parts::{Elided, Part};
use crate::units::units;
use crate::{ImportBlock, Outline, OutlineItem};
use quarry_core::Language;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write;

/// Longest import line, in characters.
const MAX_IMPORT_LINE: usize = 200;
/// Longest doc line shown, in characters.
const MAX_DOC: usize = 64;
/// A shorter doc, the step before leaving it out.
const SHORT_DOC: usize = 40;
/// A signature longer than this is shown with its parameters by name at every level.
const MAX_SIGNATURE: usize = 100;
/// Longest members line (a type's fields on one line), in characters.
const MAX_MEMBERS_LINE: usize = 240;
/// Import names shown per block once imports are shortened.
const SHORT_IMPORTS: usize = 3;
/// A code file's outline aims at this share of the file's characters, in percent…
pub(crate) const BUDGET_PERCENT: usize = 8;
/// …and a file under `FADE_FROM` characters may always take this many (its top-level lines
/// alone can take more than the share; the hook reads a file that short whole, so its outline
/// is asked for with `quarry summary`, where all of it is cheap)…
pub(crate) const MIN_BUDGET: usize = 600;
/// …a floor that fades by a character for every 10 of the file past this size, to the share
/// itself at 5,000 characters. Once the floor was 600 at every size: files of 4–7 kB, one
/// class each in C#, had outlines of 8–15% of the file, more than the names-first outline of
/// a dense file can pay for and keep the median outline under a tenth of its file (issue 64;
/// bench/ctags_defs.py --text, docs/EVAL.md).
const FADE_FROM: usize = 3_000;
/// An outline whose every part is at its least detail may still pass its budget (a small
/// module dense with definitions); up to this many characters it lists them all, past it
/// definitions are folded to their names (`fold`). It fades past `FADE_FROM` as the budget's
/// floor does, twice as fast: folding now costs signatures, never names.
const FOLD_FLOOR: usize = 1_200;
/// Names and lines come before the budget: when the definitions by name alone are over it, the
/// outline grows to hold them, up to this share of the file in percent…
pub(crate) const NAMES_PERCENT: usize = 20;
/// …or this many characters, past which the last are counted — no outline passes
/// `max(budget, FOLD_FLOOR, NAMES_FLOOR, NAMES_PERCENT %)`.
const NAMES_FLOOR: usize = 1_200;
/// Detail levels of a top-level definition's part: 0 all of it, `LAST_LEVEL` the least.
const LAST_LEVEL: u8 = 5;
/// Detail levels of the imports: 0 the names (up to a line), 1 the first few, 2 counts only
/// (a block of a few names keeps them).
const LAST_IMPORT_LEVEL: u8 = 2;

/// How a type's members are shown.
#[derive(Clone, Copy)]
enum Members {
    /// The first n as written.
    Full(usize),
    /// The first n by name.
    Names(usize),
    /// How many.
    Count,
}

fn is_test_module(item: &OutlineItem) -> bool {
    matches!(item.kind.as_str(), "module" | "mod" | "namespace")
        && (item.name == "tests" || item.name == "test" || item.name.ends_with("_tests"))
}

fn is_function(item: &OutlineItem) -> bool {
    matches!(
        item.kind.as_str(),
        "function" | "method" | "constructor" | "fn" | "func" | "def" | "sub" | "proc"
    )
}

/// The characters `outline`'s text aims at; `None` for documents, notebooks and PDFs, whose
/// headings are listed whole.
pub(crate) fn budget(outline: &Outline) -> Option<usize> {
    (outline.language.is_code() && outline.pages.is_none()).then(|| {
        let chars = outline.total_chars as usize;
        fading(MIN_BUDGET, chars).max(chars * BUDGET_PERCENT / 100)
    })
}

/// `floor` for a file of `chars` characters: whole under `FADE_FROM`, a character less for
/// every 10 past it.
fn fading(floor: usize, chars: usize) -> usize {
    floor.saturating_sub(chars.saturating_sub(FADE_FROM) / 10 * floor / MIN_BUDGET)
}

pub fn render(outline: &Outline) -> String {
    let mut out = header(outline);
    let language = outline.language;
    let units = units(&outline.items, outline.language);
    let unit = |i: usize, level: u8| render_unit(&units[i], level, language);
    let mut parts: Vec<Part> = (0..units.len()).map(|i| unit(i, 0)).collect();
    let mut imports = render_imports(&outline.imports, 0);
    let mut folded = None;
    if let Some(budget) = budget(outline) {
        let fixed = out.chars().count();
        let mut total = fixed + imports.chars + parts.iter().map(|p| p.chars).sum::<usize>();
        let mut levels = vec![0u8; units.len()];
        let mut import_level = 0u8;
        // The parts by size, largest first (ties: the earlier); an entry whose part has
        // changed since is stale and passed over. A heap and a running total keep this
        // linear in the number of definitions (a file of 20,000 small functions).
        let mut largest: BinaryHeap<(usize, Reverse<usize>)> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.chars, Reverse(i)))
            .collect();
        while total > budget {
            // The largest part that can still give up detail gives up one step.
            while largest.peek().is_some_and(|&(chars, Reverse(i))| {
                chars != parts[i].chars || levels[i] >= LAST_LEVEL
            }) {
                largest.pop();
            }
            match largest.peek().map(|&(_, Reverse(i))| i) {
                Some(i) if import_level == LAST_IMPORT_LEVEL || parts[i].chars >= imports.chars => {
                    largest.pop();
                    levels[i] += 1;
                    let shorter = unit(i, levels[i]);
                    total = total - parts[i].chars + shorter.chars;
                    parts[i] = shorter;
                    largest.push((parts[i].chars, Reverse(i)));
                }
                _ if import_level < LAST_IMPORT_LEVEL => {
                    import_level += 1;
                    let shorter = render_imports(&outline.imports, import_level);
                    total = total - imports.chars + shorter.chars;
                    imports = shorter;
                }
                _ => break,
            }
        }
        let bound = budget.max(fading(FOLD_FLOOR, outline.total_chars as usize));
        if total > bound {
            // Even the least detail of every definition is over: the smallest ones are
            // listed by name and line, in the budget or, when the names alone are over it,
            // in as much more as they take up to the hard bound.
            let fixed = total - sum(&parts);
            let names = write_fold(&units, &parts, &vec![true; units.len()], None).chars;
            let hard = bound
                .max(NAMES_FLOOR)
                .max(outline.total_chars as usize * NAMES_PERCENT / 100);
            let room = bound.max((fixed + names).min(hard)).saturating_sub(fixed);
            folded = Some(fold(&units, &parts, room));
        }
    }
    out.push_str(&imports.text);
    let mut elided = Elided::default();
    match folded {
        Some(folded) => {
            out.push_str(&folded.text);
            elided = folded.elided;
        }
        None => {
            for part in &parts {
                out.push_str(&part.text);
                elided.add(part.elided);
            }
        }
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut cuts = Vec::new();
    if elided.docs > 0 {
        cuts.push(plural(elided.docs, "doc", "docs") + " left out");
    }
    if elided.signatures > 0 {
        cuts.push(plural(elided.signatures, "signature", "signatures") + " by parameter names");
    }
    if elided.by_name > 0 {
        cuts.push(format!("{} listed by name", elided.by_name));
    }
    if elided.left_out > 0 {
        cuts.push(plural(elided.left_out, "definition", "definitions") + " counted only");
    }
    if !cuts.is_empty() {
        let _ = writeln!(out, "(shortened: {})", cuts.join(", "));
    }
    out
}

fn sum(parts: &[Part]) -> usize {
    parts.iter().map(|p| p.chars).sum()
}

fn header(outline: &Outline) -> String {
    let size = match outline.pages {
        Some(pages) => format!("{pages} pages"),
        None => format!("{} lines", outline.total_lines),
    };
    let what = if outline.language.is_docs() {
        "headings"
    } else {
        "definitions"
    };
    format!(
        "{} — {}, {size}, {} {what}{}\n",
        quarry_core::shown_path(&outline.path),
        outline.language.name(),
        outline.items.len(),
        if outline.heuristic {
            " (heuristic outline)"
        } else {
            ""
        }
    )
}

fn render_imports(blocks: &[ImportBlock], level: u8) -> Part {
    let mut out = String::new();
    for block in blocks {
        let mut unique: Vec<&str> = Vec::new();
        for name in &block.names {
            if !unique.contains(&name.as_str()) {
                unique.push(name);
            }
        }
        if let Some(cell) = block.cell {
            let _ = write!(out, "cell {cell}:");
        }
        let _ = write!(
            out,
            "{}-{} imports ({})",
            block.start_line,
            block.end_line,
            block.names.len()
        );
        let names = match level {
            0 => clip_words(&unique.join(", "), MAX_IMPORT_LINE),
            1 if unique.len() > SHORT_IMPORTS => unique[..SHORT_IMPORTS].join(", ") + ", …",
            // A few names cost no more than a count.
            _ if unique.len() <= SHORT_IMPORTS => unique.join(", "),
            _ => String::new(),
        };
        if !names.is_empty() {
            let _ = write!(out, ": {names}");
        }
        out.push('\n');
    }
    Part::new(out, Elided::default())
}

/// Where each item's subtree ends in `items` (depth first): the index of the first item after
/// it that is not inside it. Linear, whatever the nesting.
fn subtree_ends(items: &[OutlineItem]) -> Vec<usize> {
    let mut ends = vec![items.len(); items.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        while open.last().is_some_and(|&o| items[o].depth >= item.depth) {
            ends[open.pop().unwrap()] = i;
        }
        open.push(i);
    }
    ends
}

/// What a top-level definition's part shows at each detail level: the definition's own line
/// and members, and how the definitions inside it are shown (`None`: by name and line, on one
/// line). Each level keeps less than the one before; the least needed detail goes first.
fn level_detail(level: u8) -> (ItemDetail, Option<ItemDetail>) {
    let top = |doc_max, short_sig, members| ItemDetail {
        doc_max,
        short_sig,
        members,
        nested: true,
    };
    let inner = |doc_max, short_sig, members| {
        Some(ItemDetail {
            doc_max,
            short_sig,
            members,
            nested: level > 0,
        })
    };
    match level {
        0 => (
            ItemDetail {
                nested: false,
                ..top(MAX_DOC, false, Members::Full(8))
            },
            inner(MAX_DOC, false, Members::Full(4)),
        ),
        1 => (
            top(MAX_DOC, false, Members::Full(4)),
            inner(SHORT_DOC, false, Members::Full(2)),
        ),
        2 => (
            top(MAX_DOC, false, Members::Full(4)),
            inner(0, false, Members::Count),
        ),
        3 => (
            top(MAX_DOC, false, Members::Full(4)),
            inner(0, true, Members::Count),
        ),
        4 => (top(SHORT_DOC, false, Members::Names(4)), None),
        _ => (top(0, true, Members::Count), None),
    }
}

/// A top-level definition and everything in it, at detail `level` (see `level_detail`).
fn render_unit(items: &[OutlineItem], level: u8, language: Language) -> Part {
    let mut out = String::new();
    let mut elided = Elided::default();
    let ends = subtree_ends(items);
    let (top_detail, inner_detail) = level_detail(level);
    let mut i = write_item(
        &mut out,
        items,
        0,
        &ends,
        &top_detail,
        language,
        &mut elided,
    );
    match inner_detail {
        None if i < items.len() => list_by_name(&mut out, items, &mut elided),
        None => {}
        Some(inner_detail) => {
            while i < items.len() {
                i = write_item(
                    &mut out,
                    items,
                    i,
                    &ends,
                    &inner_detail,
                    language,
                    &mut elided,
                );
            }
        }
    }
    Part::new(out, elided)
}

/// The definitions inside `items[0]` on one line by name and start line, what each holds in
/// parentheses after it (`5 definitions: check 103, to_json 110 (inner 112), …`).
fn list_by_name(out: &mut String, items: &[OutlineItem], elided: &mut Elided) {
    let top = &items[0];
    let inside = &items[1..];
    let children = inside.iter().filter(|i| i.depth == top.depth + 1).count();
    let indent = "  ".repeat(top.depth as usize + 1);
    let mut names = Names::new(0);
    names.start(&format!(
        "{indent}{children} definition{}: ",
        if children == 1 { "" } else { "s" }
    ));
    write_names(&mut names, inside, "", None, 0);
    names.end_line();
    out.push_str(&names.text);
    elided.by_name += inside.len();
    elided.docs += inside.iter().filter(|c| c.doc.is_some()).count();
}

struct ItemDetail {
    /// Longest doc shown; 0 for none.
    doc_max: usize,
    /// Parameters by name only, no return type.
    short_sig: bool,
    members: Members,
    /// Whether definitions nested in functions are named on the function's line, by name and
    /// line, rather than on lines of their own.
    nested: bool,
}

/// Writes `items[i]`'s line (and its members' line); returns the index of the next item to
/// write: past `items[i]`'s subtree (`ends[i]`) when that went on its lines — the definitions
/// inside a function by name on the function's line, a test module's by name under it.
fn write_item(
    out: &mut String,
    items: &[OutlineItem],
    i: usize,
    ends: &[usize],
    detail: &ItemDetail,
    language: Language,
    elided: &mut Elided,
) -> usize {
    let item = &items[i];
    let inside = &items[i + 1..ends[i]];
    let indent = "  ".repeat(item.depth as usize);
    if let Some(page) = item.page {
        let _ = write!(out, "{indent}p.{page} ");
    } else if let Some(cell) = item.cell {
        let _ = write!(
            out,
            "{indent}cell {cell}:{}-{} ",
            item.start_line, item.end_line
        );
    } else if item.start_line == item.end_line {
        let _ = write!(out, "{indent}{} ", item.start_line);
    } else {
        let _ = write!(out, "{indent}{}-{} ", item.start_line, item.end_line);
    }
    // A test module's definitions are listed by name and line at every level: an agent asks
    // for them by name when it needs them.
    if is_test_module(item) {
        let _ = writeln!(out, "{} {}", item.kind, item.name);
        if !inside.is_empty() {
            list_by_name(out, &items[i..ends[i]], elided);
        }
        return ends[i];
    }
    match &item.signature {
        Some(sig) => {
            let sig = trim_signature(sig);
            let sig = if language == Language::Python {
                without_receiver(sig)
            } else {
                sig.into()
            };
            let long = sig.chars().count() > MAX_SIGNATURE;
            let (shown, short) = match (detail.short_sig || long)
                .then(|| shorten_signature(&sig, &item.name, language))
                .flatten()
            {
                Some(short) => {
                    elided.signatures += 1;
                    (short, true)
                }
                None => (sig.into_owned(), false),
            };
            // A definition named by quarry rather than by its line (Kotlin's `companion
            // object` is `Companion`, an Objective-C selector is spread over its parameters)
            // says its name before the line.
            if !shown.contains(item.name.as_str()) {
                let _ = write!(out, "{} ", item.name);
                if !short {
                    out.push_str("— ");
                }
            }
            out.push_str(&shown);
        }
        None => {
            let _ = write!(out, "{} {}", item.kind, item.name);
        }
    }
    let nested = detail.nested && is_function(item) && !inside.is_empty();
    if nested {
        let mut names = Names::new(0);
        write_names(&mut names, inside, " (nested: ", None, 0);
        let _ = write!(out, "{})", names.text);
        elided.by_name += inside.len();
        elided.docs += inside.iter().filter(|c| c.doc.is_some()).count();
    }
    if let Some(doc) = &item.doc {
        if detail.doc_max > 0 {
            let _ = write!(out, " — {}", clip_words(doc, detail.doc_max));
        } else {
            elided.docs += 1;
        }
    }
    out.push('\n');
    if !item.members.is_empty() {
        let line = match detail.members {
            Members::Full(n) => {
                let (kept, left) = members_shown(&item.members, n);
                let mut shown: Vec<&str> = kept.into_iter().map(trim_member).collect();
                let more = format!("… {left} more");
                if left > 0 {
                    shown.push(&more);
                }
                clip_words(&shown.join("; "), MAX_MEMBERS_LINE)
            }
            Members::Names(n) => {
                let (kept, left) = members_shown(&item.members, n);
                let mut shown: Vec<String> =
                    kept.iter().map(|m| member_name(m, language)).collect();
                if left > 0 {
                    shown.push(format!("… {left} more"));
                }
                shown.join(", ")
            }
            Members::Count => {
                let (_, left) = members_shown(&item.members, 0);
                format!("{left} member{}", if left == 1 { "" } else { "s" })
            }
        };
        let _ = writeln!(out, "{indent}  {{ {line} }}");
    }
    if nested {
        ends[i]
    } else {
        i + 1
    }
}
