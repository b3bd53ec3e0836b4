//! The outline as text for an agent: a header line, the imports, then one line per definition
//! (`start-end signature — doc`) indented by nesting, with a type's members under it.
//!
//! An outline is worth having only while it is much smaller than its file, so a code file's
//! outline has a budget in characters: `BUDGET_PERCENT` of the file, at least `MIN_BUDGET`.
//! Over it, detail goes one step at a time from the largest part of the outline (a top-level
//! definition with everything inside it, or the imports) until the whole fits, the least needed
//! detail first: the docs of methods and the nested functions inside functions, then the
//! parameter types of methods, then methods listed by name and line only, then the top-level
//! definition's own doc and parameter types. Every top-level definition keeps its line, its
//! range and its name with its parameter names, and every method its name and line, so an agent
//! can still ask for the exact lines next; whatever is left out is counted (`… 12 more`,
//! `(+2 nested)`, `21 definitions: …`, the closing `(shortened …)` line).

use crate::compact::{
    clip_words, member_name, members_shown, shorten_signature, trim_member, trim_signature,
    without_receiver,
};
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
/// Names listed on one line for the definitions inside a type at the last level, at least.
const MAX_LISTED: usize = 24;
/// A code file's outline aims at this share of the file's characters, in percent…
pub(crate) const BUDGET_PERCENT: usize = 8;
/// …and may always take this many characters (a short file's top-level lines alone can take
/// more than the share; they are never left out).
pub(crate) const MIN_BUDGET: usize = 600;
/// An outline whose every part is at its least detail may still pass its budget (a small
/// module dense with definitions); up to this many characters it lists them all, past it
/// definitions are folded to their names (`fold`), so no outline passes
/// `max(budget, FOLD_FLOOR)`.
const FOLD_FLOOR: usize = 1_200;
/// Detail levels of a top-level definition's part: 0 all of it, `LAST_LEVEL` the least.
const LAST_LEVEL: u8 = 6;
/// Detail levels of the imports: 0 the names (up to a line), 1 the first few, 2 counts only
/// (a block of a few names keeps them).
const LAST_IMPORT_LEVEL: u8 = 2;

/// What a part of the outline left out, for the closing line.
#[derive(Debug, Default, Clone, Copy)]
struct Elided {
    docs: usize,
    signatures: usize,
    by_name: usize,
    /// Definitions past the budget even by name: counted with their lines.
    left_out: usize,
}

impl Elided {
    fn add(&mut self, other: Elided) {
        self.docs += other.docs;
        self.signatures += other.signatures;
        self.by_name += other.by_name;
        self.left_out += other.left_out;
    }
}

struct Part {
    text: String,
    chars: usize,
    elided: Elided,
}

impl Part {
    fn new(text: String, elided: Elided) -> Self {
        Part {
            chars: text.chars().count(),
            text,
            elided,
        }
    }
}

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
    (outline.language.is_code() && outline.pages.is_none())
        .then(|| MIN_BUDGET.max(outline.total_chars as usize * BUDGET_PERCENT / 100))
}

pub fn render(outline: &Outline) -> String {
    let mut out = header(outline);
    let language = outline.language;
    let units = units(&outline.items, outline.language);
    // At the last level a type lists its definitions by name up to its share of the budget
    // (in characters; at least `MAX_LISTED` names): a class of 48,000 methods in a 2.7 MB
    // file lists thousands of them, not two dozen.
    let listed = budget(outline).map_or(0, |b| b * 3 / 4 / units.len().max(1));
    let unit = |i: usize, level: u8| render_unit(&units[i], level, language, listed);
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
        let bound = budget.max(FOLD_FLOOR);
        if total > bound {
            // Even the least detail of every definition is over: the smallest ones are
            // listed by name and line.
            folded = Some(fold(
                &units,
                &parts,
                bound.saturating_sub(total - sum(&parts)),
            ));
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

/// Longest line of definitions listed by name, in characters.
const FOLDED_LINE: usize = 120;
/// Room kept for the closing count of definitions left out (`… 1234 more definitions, lines
/// 10001-20000`).
const COUNT_LINE: usize = 64;

/// The definitions in at most `room` characters, once every part is at its least detail and
/// still over: the smallest definitions (by lines; the later of equal ones) are listed by name
/// and line, in runs (`12 definitions: f 3, g 4 (+2), …`; `(+2)`: what is inside), the rest
/// shown as rendered; when even that is over, the definitions from the first that does not fit
/// are counted with their lines. A file of 20,000 one-line functions gets the budget's worth
/// of names, never an outline the size of the file.
fn fold(units: &[Vec<OutlineItem>], parts: &[Part], room: usize) -> Part {
    let entry = |i: usize| {
        let top = &units[i][0];
        match units[i].len() - 1 {
            0 => format!("{} {}", top.name, top.start_line),
            inside => format!("{} {} (+{inside})", top.name, top.start_line),
        }
    };
    let folded_chars = |i: usize| entry(i).chars().count() + 2;
    let mut by_name = vec![false; parts.len()];
    let mut estimate = sum(parts);
    // First the definitions with nothing inside, smallest first: listed by name they lose
    // only their ranges and signatures.
    let mut leaves: Vec<usize> = (0..parts.len()).filter(|&i| units[i].len() == 1).collect();
    leaves.sort_by_key(|&i| (units[i][0].end_line - units[i][0].start_line, Reverse(i)));
    for i in leaves {
        if estimate <= room {
            break;
        }
        by_name[i] = true;
        estimate = estimate - parts[i].chars + folded_chars(i);
    }
    if estimate > room {
        // Still over: either types and functions with definitions inside are listed by name
        // with what they hold counted (`Store 10 (+40)`), fewest inside first, or the last
        // definitions are counted with their lines — whichever leaves out fewer names.
        let over = estimate - room + COUNT_LINE;
        let mut holders: Vec<usize> = (0..parts.len()).filter(|&i| units[i].len() > 1).collect();
        holders.sort_by_key(|&i| (units[i].len(), Reverse(i)));
        let (mut saved, mut collapse, mut collapse_loss) = (0usize, Vec::new(), 0usize);
        for &i in &holders {
            if saved >= over {
                break;
            }
            saved += parts[i].chars.saturating_sub(folded_chars(i));
            collapse_loss += units[i].len() - 1;
            collapse.push(i);
        }
        let (mut saved_at_tail, mut tail_loss) = (0usize, 0usize);
        for i in (0..parts.len()).rev() {
            if saved_at_tail >= over {
                break;
            }
            saved_at_tail += if by_name[i] {
                folded_chars(i)
            } else {
                parts[i].chars
            };
            tail_loss += units[i].len();
        }
        if saved >= over && collapse_loss < tail_loss {
            for i in collapse {
                by_name[i] = true;
            }
        }
    }
    let mut out = String::new();
    let mut chars = 0usize;
    let mut elided = Elided::default();
    let mut i = 0;
    'parts: while i < parts.len() {
        if !by_name[i] {
            if chars + parts[i].chars + COUNT_LINE > room {
                // Over what the estimate said (run headers): this one by name too.
                by_name[i] = true;
                continue;
            }
            out.push_str(&parts[i].text);
            chars += parts[i].chars;
            elided.add(parts[i].elided);
            i += 1;
            continue;
        }
        let run_end = (i..parts.len())
            .find(|&j| !by_name[j])
            .unwrap_or(parts.len());
        let mut line = match run_end - i {
            1 => "1 definition: ".to_string(),
            n => format!("{n} definitions: "),
        };
        let mut line_has_entry = false;
        let mut stopped = false;
        while i < run_end {
            let next = entry(i);
            let separator = if line_has_entry { ", " } else { "" };
            let line_chars = line.chars().count();
            let next_chars = separator.len() + next.chars().count();
            if line_has_entry && line_chars + next_chars > FOLDED_LINE {
                // The run goes on on a line of its own.
                line.push_str(",\n");
                chars += line_chars + 2;
                out.push_str(&line);
                line = "  ".to_string();
                line_has_entry = false;
                continue;
            }
            if chars + line_chars + next_chars + 1 + COUNT_LINE > room {
                stopped = true;
                break;
            }
            line.push_str(separator);
            line.push_str(&next);
            line_has_entry = true;
            elided.by_name += 1;
            elided.docs += units[i][0].doc.is_some() as usize;
            i += 1;
        }
        if line_has_entry {
            line.push('\n');
            chars += line.chars().count();
            out.push_str(&line);
        }
        if stopped {
            break 'parts;
        }
    }
    if i < parts.len() {
        let rest = &units[i..];
        let last = rest.iter().map(|u| u[0].end_line).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "… {} more definition{}, lines {}-{last}",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" },
            rest[0][0].start_line
        );
        elided.left_out += rest.len();
    }
    Part::new(out, elided)
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

/// Items nested inside a function (local functions and classes): hidden past level 0, each
/// function then showing how many it holds.
fn nested_in_functions(items: &[OutlineItem]) -> (Vec<bool>, Vec<usize>) {
    let mut hidden = vec![false; items.len()];
    let mut count = vec![0; items.len()];
    for i in 0..items.len() {
        if hidden[i] || !is_function(&items[i]) {
            continue;
        }
        let mut j = i + 1;
        while j < items.len() && items[j].depth > items[i].depth {
            hidden[j] = true;
            count[i] += 1;
            j += 1;
        }
    }
    (hidden, count)
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
fn render_unit(items: &[OutlineItem], level: u8, language: Language, listed: usize) -> Part {
    let top = &items[0];
    let mut out = String::new();
    let mut elided = Elided::default();
    let (hidden, nested) = nested_in_functions(items);
    let (top_detail, inner_detail) = level_detail(level);
    // Definitions inside functions are left out past level 0, counted on their function's line.
    let shown = |i: usize| level == 0 || !hidden[i];
    let nested_count = |i: usize, detail: &ItemDetail| if detail.nested { nested[i] } else { 0 };
    let mut skip_under: Option<String> = None;
    let count = nested_count(0, &top_detail);
    if write_item(
        &mut out,
        items,
        top,
        &top_detail,
        count,
        language,
        &mut elided,
    ) {
        skip_under = Some(format!("{}.", top.qualified_name));
    }
    let Some(inner_detail) = inner_detail else {
        if skip_under.is_none() {
            list_by_name(&mut out, items, &shown, level, listed, &mut elided);
        }
        return Part::new(out, elided);
    };
    for (i, item) in items.iter().enumerate().skip(1) {
        if let Some(prefix) = &skip_under {
            if item.qualified_name.starts_with(prefix.as_str()) {
                continue;
            }
            skip_under = None;
        }
        if !shown(i) {
            continue;
        }
        let count = nested_count(i, &inner_detail);
        if write_item(
            &mut out,
            items,
            item,
            &inner_detail,
            count,
            language,
            &mut elided,
        ) {
            skip_under = Some(format!("{}.", item.qualified_name));
        }
    }
    Part::new(out, elided)
}

/// The definitions directly inside `items[0]` on one line, by name and start line
/// (`5 definitions: check 103, to_json 110, …`); deeper ones counted; at the last level at most
/// `MAX_LISTED` names or as many as fit in `listed_chars`, the rest counted with their lines.
fn list_by_name(
    out: &mut String,
    items: &[OutlineItem],
    shown: &dyn Fn(usize) -> bool,
    level: u8,
    listed_chars: usize,
    elided: &mut Elided,
) {
    let top = &items[0];
    let children: Vec<&OutlineItem> = (1..items.len())
        .filter(|&i| shown(i) && items[i].depth == top.depth + 1)
        .map(|i| &items[i])
        .collect();
    let deeper = (1..items.len())
        .filter(|&i| shown(i) && items[i].depth > top.depth + 1)
        .count();
    if children.is_empty() {
        return;
    }
    let mut chars = 0;
    let listed: Vec<String> = children
        .iter()
        .map(|c| format!("{} {}", c.name, c.start_line))
        .enumerate()
        .take_while(|(i, name)| {
            chars += name.chars().count() + 2;
            level < LAST_LEVEL || *i < MAX_LISTED || chars <= listed_chars
        })
        .map(|(_, name)| name)
        .collect();
    let indent = "  ".repeat(top.depth as usize + 1);
    let _ = write!(
        out,
        "{indent}{} definition{}: {}",
        children.len(),
        if children.len() == 1 { "" } else { "s" },
        listed.join(", ")
    );
    if children.len() > listed.len() {
        let rest = &children[listed.len()..];
        let _ = write!(
            out,
            ", … {} more (lines {}-{})",
            rest.len(),
            rest[0].start_line,
            rest[rest.len() - 1].end_line
        );
    }
    if deeper > 0 {
        let _ = write!(out, " (+{deeper} nested)");
    }
    out.push('\n');
    elided.by_name += listed.len();
    elided.docs += children.iter().filter(|c| c.doc.is_some()).count();
}

struct ItemDetail {
    /// Longest doc shown; 0 for none.
    doc_max: usize,
    /// Parameters by name only, no return type.
    short_sig: bool,
    members: Members,
    /// Whether definitions nested in functions are left out (and counted on the line).
    nested: bool,
}

/// Writes one definition's line (and its members' line); true when it is a test module listed
/// as one line, whose items the caller skips.
fn write_item(
    out: &mut String,
    items: &[OutlineItem],
    item: &OutlineItem,
    detail: &ItemDetail,
    nested: usize,
    language: Language,
    elided: &mut Elided,
) -> bool {
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
    // Test modules are listed as one line: an agent asks for them by name when it needs them.
    if is_test_module(item) {
        let prefix = format!("{}.", item.qualified_name);
        let inner = items
            .iter()
            .filter(|i| i.qualified_name.starts_with(&prefix))
            .count();
        let _ = writeln!(out, "{} {} ({inner} definitions)", item.kind, item.name);
        return true;
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
            match (detail.short_sig || long)
                .then(|| shorten_signature(&sig, &item.name, language))
                .flatten()
            {
                Some(short) => {
                    out.push_str(&short);
                    elided.signatures += 1;
                }
                None => out.push_str(&sig),
            }
        }
        None => {
            let _ = write!(out, "{} {}", item.kind, item.name);
        }
    }
    if nested > 0 {
        let _ = write!(out, " (+{nested} nested)");
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
    false
}
