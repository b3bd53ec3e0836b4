//! Code files: parse with tree-sitter, collect definitions, and cut the file into chunks along
//! them. The grammar is the file's language's, except for a C file whose text is C++ (a `.h`
//! header of a C++ project), which `dialect.rs` sends to C++'s; C++ is parsed with its
//! annotation macros blanked out (`macros.rs`).
//!
//! The walk is iterative (a `TreeCursor`) so deeply nested input cannot overflow the stack of a
//! rayon worker, and definitions nested deeper than [`MAX_DEF_DEPTH`] stay part of their
//! ancestor's body.

use crate::languages::{self, Context, Spec};
use crate::ChunkOptions;
use crate::{dialect, macros};
use crate::{merge, windows, Ident, Item, Lines, Piece};
use quarry_core::{Language, Symbol};
use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

/// Definitions nested deeper than this are not split out (pathological nesting only).
const MAX_DEF_DEPTH: usize = 24;

/// A definition found in the tree.
struct Def {
    name: String,
    kind: &'static str,
    parent: Option<String>,
    qname: String,
    /// The definition's own lines (its syntax node, wrappers included).
    sym_start: u32,
    sym_end: u32,
    /// Where its chunk starts: `sym_start` extended over attached comments and attributes.
    start: u32,
    signature: Option<String>,
    /// Lexically nested definitions, in document order.
    children: Vec<usize>,
}

impl Def {
    fn symbol(&self) -> Symbol {
        Symbol {
            name: self.name.clone(),
            kind: self.kind.to_string(),
            parent: self.parent.clone(),
            start_line: self.sym_start,
            end_line: self.sym_end,
            signature: self.signature.clone(),
        }
    }

    fn ident(&self) -> Ident {
        Ident {
            symbol: Some(self.qname.clone()),
            kind: self.kind.to_string(),
            parent: self.parent.clone(),
            signature: self.signature.clone(),
        }
    }
}

/// The outcome of chunking a code file: pieces (not yet chunks), symbols, and the
/// (line, qualified name) list chunks' `symbols` are computed from.
pub(crate) struct CodeResult {
    pub pieces: Vec<Piece>,
    pub symbols: Vec<Symbol>,
    pub calls: Vec<quarry_core::CallSite>,
    pub names: Vec<(u32, String)>,
}

/// Chunks a code file; `None` when the language has no grammar or the parse failed (timed
/// out), so the caller falls back to line windows.
pub(crate) fn chunk(
    language: Language,
    text: &str,
    lines: &Lines,
    opts: &ChunkOptions,
) -> Option<CodeResult> {
    // A C header that is C++ is read with C++'s grammar and rules; it stays `language`.
    let grammar = dialect::grammar_language(language, text);
    let spec = languages::spec(grammar)?;
    let text = &*parse_text(grammar, text);
    let tree = parse(grammar, spec, text, parse_budget(text.len()))?;
    let defs = collect(grammar, spec, &tree, text, lines);
    let roots: Vec<usize> = {
        let mut nested = vec![false; defs.len()];
        for d in &defs {
            for &c in &d.children {
                nested[c] = true;
            }
        }
        (0..defs.len()).filter(|&i| !nested[i]).collect()
    };
    let cx = Splitter {
        defs: &defs,
        lines,
        opts,
    };
    let pieces = cx.level(1, lines.len(), None, &roots);
    let symbols = symbols_of(grammar, spec, &tree, text, &defs);
    let mut names: Vec<(u32, String)> = defs
        .iter()
        .map(|d| (d.sym_start, d.qname.clone()))
        .collect();
    names.sort_by_key(|(line, _)| *line);
    let calls = crate::calls::collect(&tree, text, &symbols);
    Some(CodeResult {
        pieces,
        symbols,
        calls,
        names,
    })
}

/// The syntax tree of `text` as the chunker reads it: the same grammar (a C header that is
/// C++ by C++'s), the same blanked macros and comments (offsets unchanged), the same time
/// budget and per-thread parsers. `None` without a grammar or past the budget. For readers
/// of the tree beyond definitions (quarry-flow), so a file is never parsed two ways.
pub(crate) fn syntax_tree(language: Language, text: &str) -> Option<Tree> {
    let grammar = dialect::grammar_language(language, text);
    let spec = languages::spec(grammar)?;
    let text = &*parse_text(grammar, text);
    parse(grammar, spec, text, parse_budget(text.len()))
}

/// A code file's definitions alone, without chunks or call sites (an outline needs no more:
/// on a 3,000-line Python file the parse is then most of the work); `None` as for [`chunk`].
pub(crate) fn symbols(language: Language, text: &str, lines: &Lines) -> Option<Vec<Symbol>> {
    let grammar = dialect::grammar_language(language, text);
    let spec = languages::spec(grammar)?;
    let text = &*parse_text(grammar, text);
    let tree = parse(grammar, spec, text, parse_budget(text.len()))?;
    let defs = collect(grammar, spec, &tree, text, lines);
    Some(symbols_of(grammar, spec, &tree, text, &defs))
}

/// The text the parser sees: the file's, with comments inside continued `#define`s (C, C++;
/// `define_comments.rs`) and C++ annotation macros (`macros.rs`) blanked out (same length,
/// same lines). Lines and signatures still come from the file's own text.
fn parse_text(grammar: Language, text: &str) -> Cow<'_, str> {
    let text = match grammar {
        Language::C | Language::Cpp | Language::ObjectiveC => crate::define_comments::mask(text),
        _ => Cow::Borrowed(text),
    };
    // `#if … #endif` in the middle of an initialiser list, a base list or before an `else`.
    let text = match grammar {
        Language::C | Language::Cpp | Language::ObjectiveC | Language::CSharp => {
            match crate::conditionals::mask(&text) {
                Cow::Borrowed(_) => text,
                Cow::Owned(masked) => Cow::Owned(masked),
            }
        }
        _ => text,
    };
    let mask = match grammar {
        Language::Cpp => macros::mask,
        Language::C => macros::mask_c,
        Language::ObjectiveC => macros::mask_objc,
        _ => return text,
    };
    match text {
        Cow::Borrowed(text) => mask(text),
        Cow::Owned(text) => Cow::Owned(mask(&text).into_owned()),
    }
}

fn symbols_of(
    language: Language,
    spec: &Spec,
    tree: &Tree,
    text: &str,
    defs: &[Def],
) -> Vec<Symbol> {
    let mut symbols: Vec<Symbol> = defs.iter().map(Def::symbol).collect();
    if language == Language::Rust {
        symbols.extend(macro_items(spec, tree, text, 0, 0));
        symbols.sort_by_key(|s| s.start_line);
    }
    symbols
}

/// Macros inside macros are read this deep (`cfg_net! { pin_project! { … } }`).
const MAX_MACRO_DEPTH: usize = 3;
/// Words that start an item in a macro body worth parsing again.
const ITEM_WORDS: &[&str] = &[
    "struct ", "enum ", "fn ", "trait ", "type ", "union ", "mod ", "impl", "const ", "static ",
];

/// Rust items declared inside macro invocations (`pin_project! { pub struct BufStream … }`,
/// `bitflags! { pub struct Flags: u32 … }`, `cfg_net! { pub struct TcpStream … }`).
/// tree-sitter keeps a macro's body as a flat token tree, so the body is parsed again as Rust
/// source and its definitions become symbols, their lines shifted to the file's (`line_offset`:
/// the file line of the body's first line, less one). They are symbols only: the invocation
/// stays one piece of the file's chunks, so chunking is what it was.
fn macro_items(spec: &Spec, tree: &Tree, src: &str, line_offset: u32, depth: usize) -> Vec<Symbol> {
    let mut out = Vec::new();
    if depth >= MAX_MACRO_DEPTH {
        return out;
    }
    let mut cursor = tree.walk();
    let mut bodies = Vec::new();
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "macro_invocation" {
            let mut children = node.walk();
            let body = node
                .children(&mut children)
                .find(|c| c.kind() == "token_tree");
            if let Some(body) = body {
                bodies.push(body);
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    for body in bodies {
        let (start, end) = (body.start_byte() + 1, body.end_byte().saturating_sub(1));
        let Some(inner) = src.get(start..end.max(start)) else {
            continue;
        };
        if !ITEM_WORDS.iter().any(|w| inner.contains(w)) {
            continue;
        }
        let Some(sub) = parse(Language::Rust, spec, inner, parse_budget(inner.len())) else {
            continue;
        };
        let offset = line_offset + body.start_position().row as u32;
        let sub_lines = Lines::new(inner);
        for def in collect(Language::Rust, spec, &sub, inner, &sub_lines) {
            let mut symbol = def.symbol();
            symbol.start_line += offset;
            symbol.end_line += offset;
            out.push(symbol);
        }
        out.extend(macro_items(spec, &sub, inner, offset, depth + 1));
    }
    out
}

thread_local! {
    /// One parser per language per thread: parsers are not `Sync`, and creating one per file
    /// would cost more than parsing a small file.
    static PARSERS: RefCell<Vec<(Language, Parser)>> = const { RefCell::new(Vec::new()) };
}

/// Parse time allowed: generous for real files (tree-sitter parses megabytes per second), but
/// bounded so a pathological file cannot stall an indexing thread.
fn parse_budget(bytes: usize) -> Duration {
    #[cfg(test)]
    if let Some(budget) = TEST_BUDGET.with(|b| b.get()) {
        return budget;
    }
    Duration::from_millis(1_000 + (bytes as u64 / 1024))
}

#[cfg(test)]
thread_local! {
    /// Overrides the parse budget in tests, to exercise the timeout fallback.
    pub(crate) static TEST_BUDGET: std::cell::Cell<Option<Duration>> = const { std::cell::Cell::new(None) };
}

/// Parses `text`, giving up (→ `None`) once `budget` has passed.
fn parse(language: Language, spec: &Spec, text: &str, budget: Duration) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.try_borrow_mut().ok()?;
        let index = match parsers.iter().position(|(l, _)| *l == language) {
            Some(i) => i,
            None => {
                let mut parser = Parser::new();
                parser.set_language(&(spec.grammar)()).ok()?;
                parsers.push((language, parser));
                parsers.len() - 1
            }
        };
        let parser = &mut parsers[index].1;
        let deadline = Instant::now() + budget;
        let mut progress = |_: &ParseState| {
            if Instant::now() > deadline {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let bytes = text.as_bytes();
        let mut input = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
        let options = ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(&mut input, None, Some(options));
        if tree.is_none() {
            // A cancelled parse leaves state behind for resumption; drop it.
            parser.reset();
        }
        tree
    })
}

/// 1-based inclusive lines of a node. A node ending at column 0 (a comment that swallowed its
/// newline) ends on the line before.
fn node_lines(node: Node, lines: &Lines) -> (u32, u32) {
    let start = node.start_position().row as u32 + 1;
    let end_pos = node.end_position();
    let mut end = end_pos.row as u32 + 1;
    if end_pos.column == 0 && end > start {
        end -= 1;
    }
    let last = lines.len().max(1);
    let start = start.clamp(1, last);
    (start, end.clamp(start, last))
}

/// Walks the whole tree once: records definitions (pre-order = document order) and marks the
/// lines of own-line comments/attributes that may attach to a definition below them.
fn collect(language: Language, spec: &Spec, tree: &Tree, src: &str, lines: &Lines) -> Vec<Def> {
    let mut defs: Vec<Def> = Vec::new();
    let mut attachable = vec![false; lines.len() as usize + 2];
    // (def index, cursor depth at which it was entered)
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut file_scope: Option<String> = None;
    let mut cursor = tree.walk();
    let mut depth = 0usize;
    loop {
        let node = cursor.node();
        if spec.attach.contains(&node.kind()) {
            mark_attachable(node, lines, &mut attachable);
        } else if open.len() < MAX_DEF_DEPTH {
            let parent = open.last().map(|&(i, _)| &defs[i]);
            let cx = Context {
                language,
                parent_kind: parent.map(|d| d.kind),
                parent_name: parent.map(|d| d.name.as_str()),
            };
            if let Some(found) = languages::classify(spec, node, src, &cx) {
                let mut name = found.name;
                // A namespace's segments are joined by dots, as every qualified name is
                // (`GuzzleHttp\Handler.MockHandler` mixed two separators in one name).
                if language == Language::Cpp && found.kind == "namespace" {
                    name = name.replace("::", ".");
                }
                if language == Language::Php && found.kind == "namespace" {
                    name = name.replace('\\', ".");
                }
                let lexical = parent
                    .map(|d| d.qname.clone())
                    .or_else(|| file_scope.clone());
                let parent_q = match (lexical, found.scope) {
                    (Some(l), Some(s)) => Some(format!("{l}.{s}")),
                    (l, s) => l.or(s),
                };
                let outer = outer_node(spec, node);
                let (outer_start, mut sym_end) = node_lines(outer, lines);
                // A body that follows the definition as its sibling belongs to it.
                if let Some(body) = spec
                    .body_after
                    .and_then(|kind| outer.next_named_sibling().filter(|n| n.kind() == kind))
                {
                    sym_end = sym_end.max(node_lines(body, lines).1);
                }
                // A decorated Python definition answers at its `def`/`class` line, as ctags
                // and editors do; its chunk keeps the decorators above.
                let sym_start = if language == Language::Python && outer.id() != node.id() {
                    node_lines(node, lines).0
                } else {
                    outer_start
                };
                let floor = parent.map_or(1, |d| d.sym_start + 1);
                let mut start = outer_start;
                while start > floor && attachable[start as usize - 1] {
                    start -= 1;
                }
                let qname = match &parent_q {
                    Some(p) => format!("{p}.{name}"),
                    None => name.clone(),
                };
                let def = Def {
                    signature: signature(language, node, outer, lines, &name),
                    name,
                    kind: found.kind,
                    parent: parent_q,
                    qname: qname.clone(),
                    sym_start,
                    sym_end,
                    start,
                    children: Vec::new(),
                };
                let index = defs.len();
                if let Some(&(p, _)) = open.last() {
                    defs[p].children.push(index);
                }
                defs.push(def);
                if found.file_scope && open.is_empty() {
                    file_scope = Some(qname);
                } else {
                    open.push((index, depth));
                }
            }
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            while open.last().is_some_and(|&(_, d)| d == depth) {
                open.pop();
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return defs;
            }
            depth -= 1;
        }
    }
}

/// Marks a comment's/attribute's lines when it stands alone on them (nothing but whitespace
/// before it on its first line or after it on its last).
fn mark_attachable(node: Node, lines: &Lines, attachable: &mut [bool]) {
    let (start, end) = node_lines(node, lines);
    let col = node.start_position().column;
    let before = lines.get(start).get(..col).unwrap_or("x");
    let end_pos = node.end_position();
    let after = if end_pos.column == 0 && end_pos.row as u32 + 1 > end {
        ""
    } else {
        lines
            .get(end)
            .get(end_pos.column.min(lines.get(end).len())..)
            .unwrap_or("x")
    };
    if before.trim().is_empty() && after.trim().is_empty() {
        for line in start..=end {
            if let Some(slot) = attachable.get_mut(line as usize) {
                *slot = true;
            }
        }
    }
}

/// The node whose range a definition covers: climbs through wrappers (`export`, decorators,
/// `template <…>`, `const f = …` with a single declarator, Go `type X …`).
fn outer_node<'t>(spec: &Spec, node: Node<'t>) -> Node<'t> {
    let mut outer = node;
    while let Some(parent) = outer.parent() {
        if !spec.wrappers.contains(&parent.kind()) {
            break;
        }
        if matches!(
            parent.kind(),
            "lexical_declaration" | "variable_declaration" | "type_declaration"
        ) {
            let mut cursor = parent.walk();
            let declarators = parent
                .named_children(&mut cursor)
                .filter(|c| !c.kind().contains("comment"))
                .count();
            if declarators != 1 {
                break;
            }
        }
        outer = parent;
    }
    outer
}

/// How many lines past its first a signature may reach to take in the definition's name.
const MAX_SIGNATURE_LINES: u32 = 4;

/// Kinds skipped when looking for the line a signature starts on.
const NOT_SIGNATURE: &[&str] = &[
    "comment",
    "line_comment",
    "block_comment",
    "decorator",
    "attribute_item",
    "attribute_list",
    "annotation",
    "marker_annotation",
    "attribute",
];

/// The definition's first line, trimmed, starting at its first token that is not a
/// decorator/attribute/annotation/comment. Python: the whole header through its `:`. A first
/// line without the definition's name (C's return type on a line of its own, `template <…>`
/// above a C++ function) goes on to the line that names it.
fn signature(
    language: Language,
    node: Node,
    outer: Node,
    lines: &Lines,
    name: &str,
) -> Option<String> {
    let top = if outer.kind() == "template_declaration" {
        node
    } else {
        outer
    };
    let (row, column) = first_token(top);
    let first = row as u32 + 1;
    let mut last = first;
    if language == Language::Python {
        let mut cursor = node.walk();
        let colon = node.children(&mut cursor).find(|c| c.kind() == ":");
        if let Some(colon) = colon {
            last = (colon.end_position().row as u32 + 1).clamp(first, first + 20);
        }
    }
    // The name's line, when the definition's first lines do not hold it (at most a few on).
    let named = (first..=(first + MAX_SIGNATURE_LINES).min(lines.len()))
        .find(|&n| lines.get(n).contains(name))
        .unwrap_or(first);
    last = last.max(named);
    let mut text = String::new();
    for line in first..=last.min(lines.len()) {
        let full = lines.get(line);
        // The first line from the definition's first token: on a line holding several
        // definitions (`class C { void m() {} }`) the inner one's signature starts at its own.
        let part = if line == first {
            full.get(column..).unwrap_or(full)
        } else {
            full
        }
        .trim();
        if part.is_empty() {
            continue;
        }
        // Joining a multi-line header: `f(\n  a,\n)` reads `f(a)`.
        if part.starts_with([')', ']', '}']) {
            if text.ends_with(',') {
                text.pop();
            }
        } else if !text.is_empty() && !text.ends_with(['(', '[', '{']) {
            text.push(' ');
        }
        text.push_str(part);
        if text.len() > 200 {
            break;
        }
    }
    let text = crate::cap(&text, 200).trim_end().to_string();
    (!text.is_empty()).then_some(text)
}

/// The (row, byte column) of the first token under `top` that is not inside a decorator,
/// attribute, annotation or comment.
fn first_token(top: Node) -> (usize, usize) {
    let fallback = (top.start_position().row, top.start_position().column);
    let mut cursor = top.walk();
    if !cursor.goto_first_child() {
        return fallback;
    }
    for _ in 0..10_000 {
        let node = cursor.node();
        if !NOT_SIGNATURE.contains(&node.kind()) {
            if node.child_count() == 0 {
                return (node.start_position().row, node.start_position().column);
            }
            cursor.goto_first_child();
            continue;
        }
        // Skip this subtree: on to the next sibling, climbing as needed.
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == top {
                return fallback;
            }
        }
    }
    fallback
}

/// Cuts a range into pieces at one nesting level.
struct Splitter<'a> {
    defs: &'a [Def],
    lines: &'a Lines<'a>,
    opts: &'a ChunkOptions,
}

impl Splitter<'_> {
    /// Pieces for lines `s..=e`, owned by definition `owner` (or the module when `None`),
    /// whose nested definitions are `children`.
    fn level(&self, s: u32, e: u32, owner: Option<usize>, children: &[usize]) -> Vec<Piece> {
        let gap_ident = match owner {
            Some(o) => self.defs[o].ident(),
            None => Ident::module(),
        };
        let mut items: Vec<Item> = Vec::new();
        let mut cursor = s;
        let mut i = 0;
        while i < children.len() {
            let first = &self.defs[children[i]];
            let mut ge = first.sym_end.min(e);
            let mut j = i + 1;
            // Definitions sharing lines with this one (`fn a() {} fn b() {}`) form a group.
            while j < children.len() && self.defs[children[j]].sym_start <= ge {
                ge = ge.max(self.defs[children[j]].sym_end.min(e));
                j += 1;
            }
            if ge < cursor {
                i = j;
                continue;
            }
            let gs = first.start.max(cursor);
            self.gap(cursor, gs.saturating_sub(1), &gap_ident, &mut items);
            if j == i + 1 {
                self.definition(children[i], gs, ge, &mut items);
            } else {
                self.leaf(first.ident(), gs, ge, &mut items);
            }
            cursor = ge + 1;
            i = j;
        }
        self.gap(cursor, e, &gap_ident, &mut items);
        merge(items, self.lines, self.opts)
    }

    /// Code between definitions (or a container's header/tail), attributed to `ident`.
    fn gap(&self, s: u32, e: u32, ident: &Ident, items: &mut Vec<Item>) {
        if s > e {
            return;
        }
        if let Some((s, e)) = self.lines.trim(s, e) {
            self.leaf(ident.clone(), s, e, items);
        }
    }

    /// One piece when it fits, else windows that all keep `ident`.
    fn leaf(&self, ident: Ident, s: u32, e: u32, items: &mut Vec<Item>) {
        if self.lines.fits(s, e, self.opts) {
            items.push(Item::new(
                Piece {
                    start: s,
                    end: e,
                    ident,
                },
                true,
                self.lines,
                self.opts,
            ));
            return;
        }
        for (ws, we) in windows(self.lines, s, e, self.opts) {
            items.push(Item::new(
                Piece {
                    start: ws,
                    end: we,
                    ident: ident.clone(),
                },
                false,
                self.lines,
                self.opts,
            ));
        }
    }

    fn definition(&self, index: usize, s: u32, e: u32, items: &mut Vec<Item>) {
        let def = &self.defs[index];
        if self.lines.fits(s, e, self.opts) || def.children.is_empty() {
            self.leaf(def.ident(), s, e, items);
            return;
        }
        // Too big and has nested definitions: split at the next level down.
        for piece in self.level(s, e, Some(index), &def.children) {
            items.push(Item::new(piece, false, self.lines, self.opts));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_over_budget_is_abandoned_and_the_parser_stays_usable() {
        let spec = languages::spec(Language::Rust).unwrap();
        let text = "fn f() { let x = [1, 2, 3]; }\n".repeat(20_000);
        assert!(parse(Language::Rust, spec, &text, Duration::ZERO).is_none());
        let tree = parse(Language::Rust, spec, "fn g() {}\n", Duration::from_secs(60))
            .expect("parser reset");
        assert_eq!(tree.root_node().kind(), "source_file");
        assert!(!tree.root_node().has_error());
        assert!(parse(Language::Rust, spec, &text, Duration::from_secs(60)).is_some());
    }
}
