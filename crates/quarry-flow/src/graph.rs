//! A function's statement graph: one node per simple statement and per branch, loop or case
//! header, edges labelled by why control passes (next, true/false, loop back, break,
//! continue, return, raise, into a handler, fall-through, deferred calls). Built once over the
//! language's flow table (spec.rs); switches and short-circuit conditions in branches.rs,
//! `try` and its handlers in handlers.rs, what each statement assigns and reads in names.rs.

mod branches;
mod handlers;
mod names;

use tree_sitter::Node;

use schemars::JsonSchema;
use serde::Serialize;

use crate::spec::{FlowSpec, Jump};

/// Why control passes along an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Next,
    True,
    False,
    Back,
    Break,
    Continue,
    Return,
    Raise,
    /// From a statement inside a `try` to a handler: it may raise there.
    Exception,
    /// From the end of a case's body into the next case's (C's missing `break`, Go's
    /// `fallthrough`).
    Fallthrough,
    /// Between deferred calls (Go's `defer`), which run last first on the way out.
    Defer,
}

/// One statement (or a compound statement's header) of a function.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    pub start_line: u32,
    pub end_line: u32,
    /// Variables it assigns, and those it reads.
    pub defs: Vec<String>,
    pub uses: Vec<String>,
    /// Variables it may change without replacing (`xs[i] = v`, `obj.f = v`, `xs.append(v)`):
    /// their earlier definitions still reach past it.
    pub weak_defs: Vec<String>,
    pub header: bool,
    /// The `try` or handler header it runs under, shown with it in a slice.
    pub context: Option<usize>,
}

/// The graph of one function: node 0 is its entry (parameters defined there), node 1 its exit.
pub(crate) struct Graph {
    pub stmts: Vec<Stmt>,
    pub edges: Vec<(usize, usize, EdgeKind)>,
}

/// The name of the value a switch's header computes and its cases compare with (no
/// variable of any language starts so).
pub(crate) const SWITCH_TAG: &str = "<switch>";

pub(crate) const ENTRY: usize = 0;
pub(crate) const EXIT: usize = 1;

type Exits = Vec<(usize, EdgeKind)>;

/// A loop or switch a `break` may leave.
struct Target {
    /// Where `continue` goes; `None` for a switch, which `continue` passes through.
    continue_to: Option<usize>,
    breaks: Vec<usize>,
    label: Option<String>,
}

struct Builder<'a> {
    spec: &'a FlowSpec,
    src: &'a str,
    stmts: Vec<Stmt>,
    edges: Vec<(usize, usize, EdgeKind)>,
    targets: Vec<Target>,
    /// Per `try` being built, innermost last: the handler headers a statement in its body may
    /// raise into, and whether one of them catches whatever is raised.
    handlers: Vec<(Vec<usize>, bool)>,
    /// Per switch being built, its `fallthrough` statements not yet joined to a case.
    falls: Vec<Vec<usize>>,
    /// Deferred calls, in the order they are written.
    deferred: Vec<Node<'a>>,
    /// Stand-ins and the ways in they stand for (a switch's default follows its last test).
    placeholders: usize,
    resolved: Vec<(usize, Exits)>,
    /// The `try` lines and handler headers the statements being built run under.
    contexts: Vec<usize>,
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

fn end_line(n: Node) -> u32 {
    let end = n.end_position();
    // A node ending at column 0 ends on the line before (its last newline).
    if end.column == 0 && end.row > n.start_position().row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

/// The graph of the function `node` (one of `spec.functions`).
pub(crate) fn build(spec: &FlowSpec, src: &str, node: Node) -> Graph {
    let mut b = Builder {
        spec,
        src,
        stmts: Vec::new(),
        edges: Vec::new(),
        targets: Vec::new(),
        handlers: Vec::new(),
        falls: Vec::new(),
        deferred: Vec::new(),
        placeholders: 0,
        resolved: Vec::new(),
        contexts: Vec::new(),
    };
    let mut params = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if spec.parameters.contains(&child.kind()) {
            b.names_in(child, &mut params);
        }
    }
    b.push(line(node), line(node), params, Vec::new(), true);
    b.push(
        end_line(node),
        end_line(node),
        Vec::new(),
        Vec::new(),
        false,
    );
    let body = b.body_of(node, spec.body);
    let exits = match body.as_slice() {
        [] => vec![(ENTRY, EdgeKind::Next)],
        // An expression body (`lambda x: x + 1`, `(x) => x + 1`) is one statement.
        [one] if !spec.blocks.contains(&one.kind()) && !b.is_compound(*one) => {
            b.simple(*one, vec![(ENTRY, EdgeKind::Next)])
        }
        statements => b.sequence(statements, vec![(ENTRY, EdgeKind::Next)]),
    };
    b.connect(exits, EXIT);
    b.run_deferred();
    b.resolve_placeholders();
    Graph {
        stmts: b.stmts,
        edges: b.edges,
    }
}

impl<'a> Builder<'a> {
    fn connect(&mut self, from: Exits, to: usize) {
        for (f, kind) in from {
            self.edges.push((f, to, kind));
        }
    }

    fn push(
        &mut self,
        start: u32,
        end: u32,
        defs: Vec<String>,
        uses: Vec<String>,
        header: bool,
    ) -> usize {
        let context = self.contexts.last().copied();
        self.stmts.push(Stmt {
            start_line: start,
            end_line: end,
            defs,
            uses,
            weak_defs: Vec::new(),
            header,
            context,
        });
        self.stmts.len() - 1
    }

    /// Statements one after another.
    fn sequence(&mut self, statements: &[Node<'a>], preds: Exits) -> Exits {
        let mut exits = preds;
        for &child in statements {
            if child.kind().contains("comment") {
                continue;
            }
            exits = self.statement(child, exits);
        }
        exits
    }

    /// Builds `node` entered from `preds`; returns the ways out that fall through.
    fn statement(&mut self, node: Node<'a>, preds: Exits) -> Exits {
        let spec = self.spec;
        let kind = node.kind();
        if spec.blocks.contains(&kind) || spec.else_wrappers.contains(&kind) {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            // `begin … rescue … ensure … end` written in the body itself (Ruby).
            if children.iter().any(|c| spec.handlers.contains(&c.kind())) {
                let (body, rest): (Vec<Node>, Vec<Node>) = children.into_iter().partition(|c| {
                    !spec.handlers.contains(&c.kind()) && !spec.finallys.contains(&c.kind())
                });
                return self.try_parts(None, body, rest, None, preds);
            }
            return self.sequence(&children, preds);
        }
        // `if x { … }` as a statement (Rust): the branch, not an expression.
        if spec.expression_statements.contains(&kind) {
            if let Some(inner) = node.named_child(0).filter(|c| self.is_compound(*c)) {
                return self.statement(inner, preds);
            }
        }
        if spec.labeled.contains(&kind) {
            // Its label (`outer:`; Zig's loops may be wrapped with none), then the statement.
            let count = node.named_child_count();
            let label = node
                .child_by_field_name("label")
                .or_else(|| node.named_child(0).filter(|_| count > 1))
                .and_then(|l| self.src.get(l.byte_range()))
                .map(|l| l.trim_start_matches('\'').trim_end_matches(':').to_string());
            let inner = count
                .checked_sub(1)
                .and_then(|i| node.named_child(i as u32));
            return match inner {
                Some(inner) => self.labelled(inner, preds, label),
                None => self.simple(node, preds),
            };
        }
        if let Some(&(_, then, otherwise)) = spec.ifs.iter().find(|(k, ..)| *k == kind) {
            return self.if_statement(node, then, otherwise, preds);
        }
        if spec.loops.iter().any(|(k, _)| *k == kind)
            || spec.do_loops.iter().any(|(k, _)| *k == kind)
            || spec.switches.iter().any(|(k, ..)| *k == kind)
        {
            return self.labelled(node, preds, None);
        }
        if let Some(&(_, body)) = spec.withs.iter().find(|(k, _)| *k == kind) {
            let inner = node.child_by_field_name(body);
            let h = self.header_node(node, inner, &inner.into_iter().collect::<Vec<_>>());
            self.connect(preds, h);
            return match inner {
                Some(inner) => self.statement(inner, vec![(h, EdgeKind::Next)]),
                None => vec![(h, EdgeKind::Next)],
            };
        }
        if let Some(&(_, body)) = spec.tries.iter().find(|(k, _)| *k == kind) {
            return self.try_statement(node, body, preds);
        }
        // `assert c`: on, or raise.
        if spec.asserts.contains(&kind) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            self.raise_from(s);
            return vec![(s, EdgeKind::True)];
        }
        if let Some(jump) = self.jump_of(node) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            match jump {
                Jump::Return => {
                    // What it returns may raise first.
                    self.may_raise(s);
                    self.edges.push((s, EXIT, EdgeKind::Return));
                }
                Jump::Raise => self.raise_from(s),
                Jump::Break | Jump::Continue => {
                    let continues = jump == Jump::Continue;
                    match self.target_of(node, continues) {
                        Some(i) if continues => {
                            let to = self.targets[i].continue_to.expect("a loop");
                            self.edges.push((s, to, EdgeKind::Continue));
                        }
                        Some(i) => self.targets[i].breaks.push(s),
                        None => return vec![(s, EdgeKind::Next)],
                    }
                }
            }
            return Vec::new();
        }
        if spec.fallthroughs.contains(&kind) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            match self.falls.last_mut() {
                Some(falls) => falls.push(s),
                None => return vec![(s, EdgeKind::Next)],
            }
            return Vec::new();
        }
        if spec.defers.contains(&kind) {
            self.deferred.push(node);
        }
        self.simple(node, preds)
    }

    /// Whether `node` is a statement with parts of its own (a branch, loop, switch or jump).
    fn is_compound(&self, c: Node) -> bool {
        let spec = self.spec;
        let kind = c.kind();
        spec.ifs.iter().any(|(k, ..)| *k == kind)
            || spec.loops.iter().any(|(k, _)| *k == kind)
            || spec.do_loops.iter().any(|(k, _)| *k == kind)
            || spec.switches.iter().any(|(k, ..)| *k == kind)
            || self.jump_of(c).is_some()
    }

    /// A loop or switch, which a `break` or `continue` may name by `label`.
    fn labelled(&mut self, node: Node<'a>, preds: Exits, label: Option<String>) -> Exits {
        let spec = self.spec;
        let kind = node.kind();
        // Rust writes the label on the loop itself (`'outer: loop { … }`).
        let label = label.or_else(|| {
            let mut cursor = node.walk();
            let own = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "label");
            own.and_then(|l| self.src.get(l.byte_range()))
                .map(|l| l.trim_start_matches('\'').to_string())
        });
        if let Some(&(_, body)) = spec.loops.iter().find(|(k, _)| *k == kind) {
            return self.loop_statement(node, body, preds, label);
        }
        if let Some(&(_, body)) = spec.do_loops.iter().find(|(k, _)| *k == kind) {
            return self.do_loop(node, body, preds, label);
        }
        if let Some(&(_, body, breakable)) = spec.switches.iter().find(|(k, ..)| *k == kind) {
            return self.switch_statement(node, body, breakable, preds, label);
        }
        self.statement(node, preds)
    }

    fn simple(&mut self, node: Node<'a>, preds: Exits) -> Exits {
        let s = self.simple_stmt(node);
        self.connect(preds, s);
        self.may_raise(s);
        // `let v = f()?;`, `let v = match x { … None => return 0 }`: it may return here.
        if self.returns_within(node) {
            self.edges.push((s, EXIT, EdgeKind::Return));
        }
        vec![(s, EdgeKind::Next)]
    }

    fn simple_stmt(&mut self, node: Node<'a>) -> usize {
        let s = self.simple_stmt_lines(node);
        self.stmts[s].weak_defs = self.weak_defs(node);
        s
    }

    fn simple_stmt_lines(&mut self, node: Node<'a>) -> usize {
        let (defs, uses) = self.defs_uses(node, &[]);
        // A nested function's statement is its header: its body runs when it is called.
        let inner = node.child_by_field_name("definition").unwrap_or(node);
        if self.spec.functions.contains(&inner.kind()) && line(node) != end_line(node) {
            let body = inner.child_by_field_name(self.spec.body);
            let (_, end) = branches::header_lines(inner, body);
            return self.push(line(node), end, defs, uses, false);
        }
        self.push(line(node), end_line(node), defs, uses, false)
    }

    /// Inside a `try`, any statement may raise into its handlers.
    fn may_raise(&mut self, s: usize) {
        if let Some((handlers, _)) = self.handlers.last().cloned() {
            for h in handlers {
                self.edges.push((s, h, EdgeKind::Exception));
            }
        }
    }

    /// A raise: into the innermost `try`'s handlers, and past them (to the next `try` out, or
    /// out of the function) unless one of them catches everything — which handler a raised
    /// type meets is not read here.
    fn raise_from(&mut self, s: usize) {
        for (handlers, catch_all) in self.handlers.iter().rev() {
            for &h in handlers {
                self.edges.push((s, h, EdgeKind::Raise));
            }
            if *catch_all {
                return;
            }
        }
        self.edges.push((s, EXIT, EdgeKind::Raise));
    }

    /// A header: `node`'s lines up to `first_inner` (`if x > 0:`), reading all of it but
    /// `skips` (its bodies, and the operands tested on their own).
    fn header_node(
        &mut self,
        node: Node<'a>,
        first_inner: Option<Node<'a>>,
        skips: &[Node<'a>],
    ) -> usize {
        let (defs, uses) = self.defs_uses(node, skips);
        let (start, end) = branches::header_lines(node, first_inner);
        self.push(start, end, defs, uses, true)
    }

    fn if_statement(&mut self, node: Node<'a>, then: &str, otherwise: &str, preds: Exits) -> Exits {
        let (consequence, alternatives) = self.if_parts(node, then, otherwise);
        let mut alternatives: std::collections::VecDeque<Node> = alternatives.into();
        let mut skips: Vec<Node> = consequence
            .iter()
            .chain(alternatives.iter())
            .copied()
            .collect();
        skips.extend(self.later_operands(node));
        let first = consequence.first().or(alternatives.front()).copied();
        let h = self.header_node(node, first, &skips);
        self.connect(preds, h);
        let (t, mut from) = self.branch(h, node);
        let mut exits = self.sequence(&consequence, t);
        while let Some(alt) = alternatives.pop_front() {
            let elif = self.spec.elifs.iter().find(|(k, _)| *k == alt.kind());
            if let Some(&(_, body_field)) = elif {
                let (body, next) = self.if_parts(alt, body_field, otherwise);
                let mut skips: Vec<Node> = body.iter().chain(next.iter()).copied().collect();
                skips.extend(self.later_operands(alt));
                let eh = self.header_node(alt, body.first().copied(), &skips);
                self.connect(from, eh);
                let (t, f) = self.branch(eh, alt);
                exits.extend(self.sequence(&body, t));
                from = f;
                // Ruby's `elsif` holds the clause after it.
                for (i, n) in next.into_iter().enumerate() {
                    alternatives.insert(i, n);
                }
            } else {
                exits.extend(self.statement(alt, from));
                from = Vec::new();
            }
        }
        exits.extend(from);
        exits
    }

    /// A branch's parts: what runs when its test holds (`then`'s field, or where the grammar
    /// names none, its children before `else`), and its alternatives (`otherwise`'s field,
    /// `else` clauses, what follows `else`).
    fn if_parts(
        &self,
        node: Node<'a>,
        then: &str,
        otherwise: &str,
    ) -> (Vec<Node<'a>>, Vec<Node<'a>>) {
        let spec = self.spec;
        let (mut consequence, mut alternatives) = (Vec::new(), Vec::new());
        let mut after_else = false;
        for (field, c) in names::children(node) {
            if c.kind() == "else" && c.named_child_count() == 0 {
                after_else = true;
                continue;
            }
            if !c.is_named() || c.kind().contains("comment") || field == Some("condition") {
                continue;
            }
            let wrapper = spec.else_wrappers.contains(&c.kind())
                || spec.elifs.iter().any(|(k, _)| *k == c.kind());
            if !otherwise.is_empty() && field == Some(otherwise) {
                alternatives.push(c);
            } else if !then.is_empty() {
                if field == Some(then) {
                    consequence.push(c);
                } else if wrapper && field.is_none() {
                    alternatives.push(c);
                }
            } else if wrapper || after_else {
                alternatives.push(c);
            } else {
                consequence.push(c);
            }
        }
        // A shell's `elif` names no condition: its first part is the test.
        if then.is_empty() && node.child_by_field_name("condition").is_none() {
            if !consequence.is_empty() {
                consequence.remove(0);
            }
        }
        (consequence, alternatives)
    }

    /// A compound statement's body (`field`; where the grammar names none, its last child
    /// when that is a block, else its children that are no header parts).
    fn body_of(&self, node: Node<'a>, field: &str) -> Vec<Node<'a>> {
        if !field.is_empty() {
            let mut cursor = node.walk();
            return node.children_by_field_name(field, &mut cursor).collect();
        }
        let spec = self.spec;
        let named: Vec<(Option<&str>, Node)> = names::children(node)
            .into_iter()
            .filter(|(_, c)| c.is_named() && !c.kind().contains("comment"))
            .collect();
        if let Some((None, last)) = named.last() {
            if spec.blocks.contains(&last.kind()) {
                return vec![*last];
            }
        }
        named
            .into_iter()
            .filter(|(f, c)| {
                let k = c.kind();
                f.is_none()
                    && !spec.loop_headers.contains(&k)
                    && !spec.parameters.contains(&k)
                    && !spec.handlers.contains(&k)
                    && !spec.finallys.contains(&k)
                    && !spec.else_wrappers.contains(&k)
            })
            .map(|(_, c)| c)
            .collect()
    }

    fn loop_statement(
        &mut self,
        node: Node<'a>,
        body_field: &str,
        preds: Exits,
        label: Option<String>,
    ) -> Exits {
        let body = self.body_of(node, body_field);
        let otherwise = (!self.spec.loop_else.is_empty())
            .then(|| node.child_by_field_name(self.spec.loop_else))
            .flatten();
        let mut skips: Vec<Node> = body.iter().copied().chain(otherwise).collect();
        skips.extend(self.later_operands(node));
        let h = self.header_node(node, body.first().copied(), &skips);
        self.connect(preds, h);
        self.enter_loop(h, label);
        let (t, mut f) = self.branch(h, node);
        if branches::is_endless(node) {
            f.clear();
            // An endless loop's header is no test: its way into the body is plain.
            if let [(from, kind)] = t.as_slice() {
                if *from == h && *kind == EdgeKind::True {
                    let exits = self.sequence(&body, vec![(h, EdgeKind::Next)]);
                    return self.close_loop(h, exits, f, otherwise);
                }
            }
        }
        let exits = self.sequence(&body, t);
        self.close_loop(h, exits, f, otherwise)
    }

    /// Joins what falls off a loop's body back to its header `h`; returns the ways out: the
    /// test's false way (`f`, through Python's loop `else`), and the breaks.
    fn close_loop(
        &mut self,
        h: usize,
        exits: Exits,
        f: Exits,
        otherwise: Option<Node<'a>>,
    ) -> Exits {
        // What falls off the body's end goes round; an `if`'s false way out keeps its label.
        for (from, kind) in exits {
            let kind = if kind == EdgeKind::Next {
                EdgeKind::Back
            } else {
                kind
            };
            self.edges.push((from, h, kind));
        }
        let done = self.targets.pop().expect("pushed above");
        // Python's `for … else`: the else runs when the loop ends, not when it breaks.
        let mut out = match otherwise {
            Some(o) => self.statement(o, f),
            None => f,
        };
        out.extend(done.breaks.into_iter().map(|b| (b, EdgeKind::Break)));
        out
    }

    /// A loop's `continue` goes to `to`; its `break`s are gathered until it is left.
    fn enter_loop(&mut self, to: usize, label: Option<String>) {
        self.targets.push(Target {
            continue_to: Some(to),
            breaks: Vec::new(),
            label,
        });
    }

    /// `do { … } while (c)`: the body first, then the test, true back to the top.
    fn do_loop(
        &mut self,
        node: Node<'a>,
        body_field: &str,
        preds: Exits,
        label: Option<String>,
    ) -> Exits {
        let body = self.body_of(node, body_field);
        let top = self.push(line(node), line(node), Vec::new(), Vec::new(), true);
        self.connect(preds, top);
        let cond = node.child_by_field_name("condition");
        let test = match cond {
            Some(c) => {
                let (defs, uses) = self.defs_uses(c, &self.later_operands(node));
                self.push(line(c), end_line(c), defs, uses, true)
            }
            None => self.push(end_line(node), end_line(node), Vec::new(), Vec::new(), true),
        };
        self.enter_loop(test, label);
        let exits = self.sequence(&body, vec![(top, EdgeKind::Next)]);
        self.connect(exits, test);
        let done = self.targets.pop().expect("pushed above");
        let (t, mut f) = self.branch(test, node);
        for (from, _) in t {
            self.edges.push((from, top, EdgeKind::Back));
        }
        f.extend(done.breaks.into_iter().map(|b| (b, EdgeKind::Break)));
        f
    }

    /// Go's deferred calls, run last first where the function returns, raises or ends.
    fn run_deferred(&mut self) {
        if self.deferred.is_empty() {
            return;
        }
        let deferred: Vec<Node> = self.deferred.drain(..).rev().collect();
        let chain: Vec<usize> = deferred.into_iter().map(|d| self.simple_stmt(d)).collect();
        for edge in &mut self.edges {
            if edge.1 == EXIT {
                edge.1 = chain[0];
            }
        }
        for pair in chain.windows(2) {
            self.edges.push((pair[0], pair[1], EdgeKind::Defer));
        }
        self.edges
            .push((*chain.last().expect("not empty"), EXIT, EdgeKind::Defer));
    }

    /// Redraws each stand-in's edges from the statements it stands for.
    fn resolve_placeholders(&mut self) {
        if self.resolved.is_empty() {
            return;
        }
        let resolved = std::mem::take(&mut self.resolved);
        let mut edges = Vec::with_capacity(self.edges.len());
        for &(from, to, kind) in &self.edges {
            match resolved.iter().find(|(slot, _)| *slot == from) {
                Some((_, real)) => edges.extend(real.iter().map(|&(r, k)| (r, to, k))),
                None => edges.push((from, to, kind)),
            }
        }
        self.edges = edges;
    }
}
