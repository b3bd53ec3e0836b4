//! A function's statement graph: one node per simple statement and per branch or loop header,
//! edges labelled by why control passes (next, true/false, loop back, break, continue,
//! return, raise, into a handler). Built once over the language's flow table (spec.rs).

use tree_sitter::Node;

use schemars::JsonSchema;
use serde::Serialize;

use crate::spec::FlowSpec;

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
}

/// One statement (or a compound statement's header) of a function.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    pub start_line: u32,
    pub end_line: u32,
    /// Variables it assigns, and those it reads.
    pub defs: Vec<String>,
    pub uses: Vec<String>,
    pub header: bool,
}

/// The graph of one function: node 0 is its entry (parameters defined there), node 1 its exit.
pub(crate) struct Graph {
    pub stmts: Vec<Stmt>,
    pub edges: Vec<(usize, usize, EdgeKind)>,
}

pub(crate) const ENTRY: usize = 0;
pub(crate) const EXIT: usize = 1;

type Exits = Vec<(usize, EdgeKind)>;

struct Loop {
    header: usize,
    breaks: Vec<usize>,
}

struct Builder<'a> {
    spec: &'a FlowSpec,
    src: &'a str,
    stmts: Vec<Stmt>,
    edges: Vec<(usize, usize, EdgeKind)>,
    loops: Vec<Loop>,
    /// Handler headers a raise inside a `try` body goes to, innermost last.
    handlers: Vec<Vec<usize>>,
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
        loops: Vec::new(),
        handlers: Vec::new(),
    };
    let mut params = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if spec.parameters.contains(&child.kind()) {
            b.names_in(child, &mut params);
        }
    }
    b.stmts.push(Stmt {
        start_line: line(node),
        end_line: line(node),
        defs: params,
        uses: Vec::new(),
        header: true,
    });
    b.stmts.push(Stmt {
        start_line: end_line(node),
        end_line: end_line(node),
        defs: Vec::new(),
        uses: Vec::new(),
        header: false,
    });
    let exits = match node.child_by_field_name(spec.body) {
        Some(body) if spec.blocks.contains(&body.kind()) => {
            b.statement(body, vec![(ENTRY, EdgeKind::Next)])
        }
        // An expression body (`lambda x: x + 1`, `(x) => x + 1`) is one statement.
        Some(body) => b.simple(body, vec![(ENTRY, EdgeKind::Next)]),
        None => vec![(ENTRY, EdgeKind::Next)],
    };
    b.connect(exits, EXIT);
    Graph {
        stmts: b.stmts,
        edges: b.edges,
    }
}

impl<'a> Builder<'a> {
    /// The parameter names under `node` (not their types or default values).
    fn names_in(&self, node: Node<'a>, out: &mut Vec<String>) {
        if self.spec.names.contains(&node.kind()) {
            if let Some(text) = self.src.get(node.byte_range()) {
                out.push(text.to_string());
            }
            return;
        }
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let skip = matches!(cursor.field_name(), Some("type" | "value" | "default"));
                if !skip {
                    self.names_in(cursor.node(), out);
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
    }

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
        self.stmts.push(Stmt {
            start_line: start,
            end_line: end,
            defs,
            uses,
            header,
        });
        self.stmts.len() - 1
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
                return self.try_parts(body, rest, preds);
            }
            let mut exits = preds;
            for child in children {
                if child.kind().contains("comment") {
                    continue;
                }
                exits = self.statement(child, exits);
            }
            return exits;
        }
        // `if x { … }` as a statement (Rust): the branch, not an expression.
        if spec.expression_statements.contains(&kind) {
            if let Some(inner) = node.named_child(0).filter(|c| {
                spec.ifs.iter().any(|(k, ..)| *k == c.kind())
                    || spec.loops.iter().any(|(k, _)| *k == c.kind())
                    || spec.returns.contains(&c.kind())
                    || spec.breaks.contains(&c.kind())
                    || spec.continues.contains(&c.kind())
                    || spec.raises.contains(&c.kind())
            }) {
                return self.statement(inner, preds);
            }
        }
        if let Some(&(_, then, otherwise)) = spec.ifs.iter().find(|(k, ..)| *k == kind) {
            return self.if_statement(node, then, otherwise, preds);
        }
        if let Some(&(_, body)) = spec.loops.iter().find(|(k, _)| *k == kind) {
            return self.loop_statement(node, body, preds);
        }
        if let Some(&(_, body)) = spec.tries.iter().find(|(k, _)| *k == kind) {
            return self.try_statement(node, body, preds);
        }
        if spec.returns.contains(&kind) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            self.edges.push((s, EXIT, EdgeKind::Return));
            return Vec::new();
        }
        if spec.raises.contains(&kind) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            self.raise_from(s);
            return Vec::new();
        }
        if spec.breaks.contains(&kind) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            match self.loops.last_mut() {
                Some(l) => l.breaks.push(s),
                None => return vec![(s, EdgeKind::Next)],
            }
            return Vec::new();
        }
        if spec.continues.contains(&kind) {
            let s = self.simple_stmt(node);
            self.connect(preds, s);
            match self.loops.last() {
                Some(l) => {
                    let header = l.header;
                    self.edges.push((s, header, EdgeKind::Continue));
                }
                None => return vec![(s, EdgeKind::Next)],
            }
            return Vec::new();
        }
        self.simple(node, preds)
    }

    fn simple(&mut self, node: Node<'a>, preds: Exits) -> Exits {
        let s = self.simple_stmt(node);
        self.connect(preds, s);
        // Inside a `try`, any statement may raise into its handlers.
        if let Some(handlers) = self.handlers.last().cloned() {
            for h in handlers {
                self.edges.push((s, h, EdgeKind::Exception));
            }
        }
        vec![(s, EdgeKind::Next)]
    }

    fn simple_stmt(&mut self, node: Node<'a>) -> usize {
        let (defs, uses) = self.defs_uses(node, None);
        self.push(line(node), end_line(node), defs, uses, false)
    }

    fn raise_from(&mut self, s: usize) {
        match self.handlers.last().cloned() {
            Some(handlers) if !handlers.is_empty() => {
                for h in handlers {
                    self.edges.push((s, h, EdgeKind::Raise));
                }
            }
            _ => self.edges.push((s, EXIT, EdgeKind::Raise)),
        }
    }

    /// A header: the node's lines up to `body` (`if x > 0:`), reading what is not the body.
    fn header(&mut self, node: Node<'a>, body: Option<Node<'a>>) -> usize {
        let (defs, uses) = self.defs_uses(node, body);
        let end = body.map_or(end_line(node), |b| line(b).max(line(node)));
        let end = if body.is_some_and(|b| line(b) > line(node)) {
            end - 1
        } else {
            end
        };
        self.push(line(node), end.max(line(node)), defs, uses, true)
    }

    fn if_statement(&mut self, node: Node<'a>, then: &str, otherwise: &str, preds: Exits) -> Exits {
        let consequence = node.child_by_field_name(then);
        let h = self.header(node, consequence);
        self.connect(preds, h);
        let mut exits = match consequence {
            Some(c) => self.statement(c, vec![(h, EdgeKind::True)]),
            None => vec![(h, EdgeKind::True)],
        };
        // Python's `elif`/`else` clauses are each an `alternative`; other grammars hold one.
        let mut cursor = node.walk();
        let mut alternatives: std::collections::VecDeque<Node> = if otherwise.is_empty() {
            Default::default()
        } else {
            node.children_by_field_name(otherwise, &mut cursor)
                .collect()
        };
        let mut from = vec![(h, EdgeKind::False)];
        while let Some(alt) = alternatives.pop_front() {
            let elif = self.spec.elifs.iter().find(|(k, _)| *k == alt.kind());
            if let Some(&(_, body_field)) = elif {
                let body = alt.child_by_field_name(body_field);
                let eh = self.header(alt, body);
                self.connect(from, eh);
                if let Some(body) = body {
                    exits.extend(self.statement(body, vec![(eh, EdgeKind::True)]));
                }
                from = vec![(eh, EdgeKind::False)];
                // Ruby's `elsif` holds the clause after it.
                let mut inner = alt.walk();
                let next: Vec<Node> = alt.children_by_field_name(otherwise, &mut inner).collect();
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

    fn loop_statement(&mut self, node: Node<'a>, body_field: &str, preds: Exits) -> Exits {
        let body = node.child_by_field_name(body_field);
        let h = self.header(node, body);
        self.connect(preds, h);
        self.loops.push(Loop {
            header: h,
            breaks: Vec::new(),
        });
        let exits = match body {
            Some(b) => self.statement(b, vec![(h, EdgeKind::True)]),
            None => vec![(h, EdgeKind::True)],
        };
        // What falls off the body's end goes round; an `if`'s false way out keeps its label.
        for (from, kind) in exits {
            let kind = if kind == EdgeKind::Next {
                EdgeKind::Back
            } else {
                kind
            };
            self.edges.push((from, h, kind));
        }
        let done = self.loops.pop().expect("pushed above");
        let mut out = vec![(h, EdgeKind::False)];
        out.extend(done.breaks.into_iter().map(|b| (b, EdgeKind::Break)));
        out
    }

    fn try_statement(&mut self, node: Node<'a>, body_field: &str, preds: Exits) -> Exits {
        let mut cursor = node.walk();
        let rest: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| {
                self.spec.handlers.contains(&c.kind()) || self.spec.finallys.contains(&c.kind())
            })
            .collect();
        let body: Vec<Node> = node.child_by_field_name(body_field).into_iter().collect();
        self.try_parts(body, rest, preds)
    }

    /// A `try`: its body's statements, then its handlers and `finally` (in `rest`).
    fn try_parts(&mut self, body: Vec<Node<'a>>, rest: Vec<Node<'a>>, preds: Exits) -> Exits {
        let spec = self.spec;
        let handlers: Vec<Node> = rest
            .iter()
            .copied()
            .filter(|c| spec.handlers.contains(&c.kind()))
            .collect();
        let finally = rest
            .iter()
            .copied()
            .find(|c| spec.finallys.contains(&c.kind()));
        // Handler headers first, so the body's statements can raise into them.
        let heads: Vec<usize> = handlers
            .iter()
            .map(|h| {
                let body = h.child_by_field_name("body").or_else(|| last_named(*h));
                self.header(*h, body)
            })
            .collect();
        self.handlers.push(heads.clone());
        let mut exits = preds;
        for statement in body {
            if statement.kind().contains("comment") {
                continue;
            }
            exits = self.statement(statement, exits);
        }
        self.handlers.pop();
        for (handler, head) in handlers.iter().zip(&heads) {
            let body = handler
                .child_by_field_name("body")
                .or_else(|| last_named(*handler));
            if let Some(body) = body.filter(|b| b.id() != handler.id()) {
                exits.extend(self.statement(body, vec![(*head, EdgeKind::Next)]));
            } else {
                exits.push((*head, EdgeKind::Next));
            }
        }
        match finally {
            // `finally { … }` holds a block; Ruby's `ensure` is the block itself.
            Some(f) => {
                let block = f
                    .child_by_field_name("body")
                    .or_else(|| last_named(f).filter(|b| spec.blocks.contains(&b.kind())));
                match block {
                    Some(b) => self.statement(b, exits),
                    None => self.statement(f, exits),
                }
            }
            None => exits,
        }
    }

    /// The variables `node` assigns and reads, leaving out `skip` (a compound statement's body)
    /// and nested functions.
    fn defs_uses(&self, node: Node<'a>, skip: Option<Node<'a>>) -> (Vec<String>, Vec<String>) {
        let mut defs = Vec::new();
        let mut uses = Vec::new();
        self.walk(node, skip, false, &mut defs, &mut uses, true);
        defs.sort();
        defs.dedup();
        uses.sort();
        uses.dedup();
        (defs, uses)
    }

    fn walk(
        &self,
        node: Node<'a>,
        skip: Option<Node<'a>>,
        in_def: bool,
        defs: &mut Vec<String>,
        uses: &mut Vec<String>,
        top: bool,
    ) {
        let spec = self.spec;
        if skip.is_some_and(|s| s.id() == node.id()) {
            return;
        }
        if !top && spec.functions.contains(&node.kind()) {
            return; // a nested function is a value here; its insides are its own
        }
        if spec.names.contains(&node.kind()) {
            if let Some(text) = self.src.get(node.byte_range()) {
                if !is_member_name(node) {
                    if in_def {
                        defs.push(text.to_string());
                    } else {
                        uses.push(text.to_string());
                    }
                }
            }
            return;
        }
        let assign = spec.assigns.iter().find(|(k, _)| *k == node.kind());
        let mut cursor = node.walk();
        let children: Vec<(Option<&str>, Node)> = {
            let mut out = Vec::new();
            if cursor.goto_first_child() {
                loop {
                    out.push((cursor.field_name(), cursor.node()));
                    if !cursor.goto_next_sibling() {
                        break;
                    }
                }
            }
            out
        };
        for (field, child) in children {
            let target = match assign {
                // `x += 1`, `i++`: the target is read and written.
                Some((k, f)) if f.is_empty() || field == Some(f) => {
                    let updates = k.starts_with("augmented")
                        || k.starts_with("update")
                        || f.is_empty()
                        || k.starts_with("inc")
                        || k.starts_with("dec");
                    if updates {
                        self.walk(child, skip, false, defs, uses, false);
                    }
                    true
                }
                _ => false,
            };
            // Inside a target, only the bare names are assigned (`a[i] = v` reads `a` and `i`).
            let defines = target && (spec.names.contains(&child.kind()) || is_pattern(child));
            self.walk(child, skip, in_def || defines, defs, uses, false);
        }
    }
}

/// `obj.attr`'s `attr`, `f(key=1)`'s `key`: a name that is no variable.
fn is_member_name(node: Node) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let field = {
        let mut cursor = parent.walk();
        let mut found = None;
        if cursor.goto_first_child() {
            loop {
                if cursor.node().id() == node.id() {
                    found = cursor.field_name();
                    break;
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        found
    };
    matches!(
        (parent.kind(), field),
        ("attribute", Some("attribute")) | ("keyword_argument", Some("name"))
    )
}

/// Tuple and list targets (`a, b = …`, `x, err := …`) assign each name in them.
fn is_pattern(node: Node) -> bool {
    matches!(
        node.kind(),
        "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "expression_list"
            | "array_pattern"
            | "object_pattern"
            | "identifier_list"
    )
}

fn last_named(node: Node) -> Option<Node> {
    let count = node.named_child_count();
    node.named_child(u32::try_from(count.checked_sub(1)?).ok()?)
}
