//! Branches beyond `if`: switches and matches (one test per case, in order, with guards,
//! fall-through and `default` last), conditions that short-circuit (`a && b` tests `b` only
//! when `a` holds, as go/cfg draws it), and the labels a `break` or `continue` names.

use tree_sitter::Node;

use super::names::children;
use super::{end_line, line, Builder, EdgeKind, Exits, Target};

/// Fields and kinds that label a case rather than run in it.
const CASE_LABEL_FIELDS: &[&str] = &[
    "value",
    "pattern",
    "guard",
    "condition",
    "communication",
    "type",
    "alias",
    "label",
];

fn is_case_label(kind: &str) -> bool {
    kind.ends_with("_label")
        || kind.ends_with("pattern")
        || matches!(kind, "when_clause" | "if_clause" | "expression_list")
}

impl<'a> Builder<'a> {
    /// A switch (`body` holds its cases, or "" for the node itself): the header, then each
    /// case's test in order, true into its body, false into the next test; the default
    /// (wherever it is written) when no test holds.
    pub(super) fn switch_statement(
        &mut self,
        node: Node<'a>,
        body: &str,
        breakable: bool,
        preds: Exits,
        label: Option<String>,
    ) -> Exits {
        let spec = self.spec;
        let holder = if body.is_empty() {
            Some(node)
        } else {
            node.child_by_field_name(body)
        };
        let Some(holder) = holder else {
            return self.simple(node, preds);
        };
        let mut cursor = holder.walk();
        let cases: Vec<Node> = holder
            .named_children(&mut cursor)
            .filter(|c| spec.cases.iter().any(|(k, ..)| *k == c.kind()))
            .collect();
        let mut skips: Vec<Node> = cases.clone();
        if holder.id() != node.id() {
            skips.push(holder);
        }
        let first_inner = if holder.id() != node.id() {
            Some(holder)
        } else {
            cases.first().copied()
        };
        let h = self.header_node(node, first_inner, &skips);
        // Each case compares with what the header computed: a variable of the switch's own.
        let tag = format!("{}{}", super::SWITCH_TAG, h);
        self.stmts[h].defs.push(tag.clone());
        self.connect(preds, h);
        if breakable {
            self.targets.push(Target {
                continue_to: None,
                breaks: Vec::new(),
                label,
            });
        }
        self.falls.push(Vec::new());
        let mut next: Exits = vec![(h, EdgeKind::Next)];
        let mut fall: Exits = Vec::new();
        let mut default = None;
        let mut exits = Vec::new();
        for case in cases {
            let &(_, body_field, falls_through) = spec
                .cases
                .iter()
                .find(|(k, ..)| *k == case.kind())
                .expect("filtered above");
            let statements = case_statements(case, body_field);
            // What falls off the case before falls into this one's body.
            let mut preds: Exits = std::mem::take(&mut fall)
                .into_iter()
                .map(|(s, k)| {
                    (
                        s,
                        if k == EdgeKind::Next {
                            EdgeKind::Fallthrough
                        } else {
                            k
                        },
                    )
                })
                .collect();
            if self.is_default(case) {
                let slot = self.placeholder();
                default = Some(slot);
                preds.push((slot, EdgeKind::Next));
            } else {
                for test in case_tests(case) {
                    let mut skips = statements.clone();
                    let only = test.map(|t| {
                        skips.clear();
                        t
                    });
                    let (defs, mut uses) = self.defs_uses(only.unwrap_or(case), &skips);
                    uses.push(tag.clone());
                    let (start, end) = header_lines(case, statements.first().copied());
                    let t = self.push(start, end, defs, uses, true);
                    self.connect(std::mem::take(&mut next), t);
                    preds.push((t, EdgeKind::True));
                    next = vec![(t, EdgeKind::False)];
                }
            }
            let body_exits = self.sequence(&statements, preds);
            if falls_through {
                fall = body_exits;
            } else {
                exits.extend(body_exits);
            }
            let named = std::mem::take(self.falls.last_mut().expect("pushed above"));
            fall.extend(named.into_iter().map(|s| (s, EdgeKind::Next)));
        }
        exits.extend(fall);
        match default {
            Some(slot) => self.resolved.push((slot, next)),
            None => exits.extend(next),
        }
        self.falls.pop();
        if breakable {
            let done = self.targets.pop().expect("pushed above");
            exits.extend(done.breaks.into_iter().map(|b| (b, EdgeKind::Break)));
        }
        exits
    }

    /// A stand-in for a statement not built yet (a switch's last test, which its default
    /// follows): its edges are redrawn from the real one when the graph is done.
    fn placeholder(&mut self) -> usize {
        self.placeholders += 1;
        usize::MAX - self.placeholders
    }

    fn is_default(&self, case: Node<'a>) -> bool {
        let kind = case.kind();
        if kind == "else" || kind.starts_with("default") || kind == "switch_default" {
            return true;
        }
        // `default:`, `default ->`; Kotlin's `else ->`.
        let text = self.src.get(case.byte_range()).unwrap_or("");
        ["default", "else"].iter().any(|word| {
            text.strip_prefix(word)
                .is_some_and(|rest| rest.trim_start().starts_with([':', '-']))
        })
    }

    /// The test of a branch or loop `node` (its `condition`, or Go's `for` clause's):
    /// `(true ways out, false ways out)` from the header `h`. A condition that
    /// short-circuits tests each operand on its own; `h` tests the first.
    pub(super) fn branch(&mut self, h: usize, node: Node<'a>) -> (Exits, Exits) {
        let (t, f) = match condition_of(node) {
            Some(cond) if splits(cond, self.src) => {
                let mut first = Some(h);
                self.condition(cond, &mut first, Vec::new())
            }
            _ => (vec![(h, EdgeKind::True)], vec![(h, EdgeKind::False)]),
        };
        if self.spec.negated.contains(&node.kind()) {
            // `until done`: the way on is the test failing.
            let flip = |x: Exits, k: EdgeKind| x.into_iter().map(|(s, _)| (s, k)).collect();
            return (flip(f, EdgeKind::True), flip(t, EdgeKind::False));
        }
        (t, f)
    }

    /// The operands a header leaves to their own tests (all but the first of a condition that
    /// short-circuits), so the header does not read them.
    pub(super) fn later_operands(&self, node: Node<'a>) -> Vec<Node<'a>> {
        match condition_of(node) {
            Some(cond) if splits(cond, self.src) => {
                let mut leaves = Vec::new();
                operands(cond, self.src, &mut leaves);
                leaves.into_iter().skip(1).collect()
            }
            _ => Vec::new(),
        }
    }

    fn condition(
        &mut self,
        e: Node<'a>,
        first: &mut Option<usize>,
        preds: Exits,
    ) -> (Exits, Exits) {
        let e = unwrap_parens(e);
        if let Some(inner) = negated(e, self.src) {
            let (t, f) = self.condition(inner, first, preds);
            let flip = |x: Exits, k: EdgeKind| x.into_iter().map(|(s, _)| (s, k)).collect();
            return (flip(f, EdgeKind::True), flip(t, EdgeKind::False));
        }
        if let Some((left, and, right)) = short_circuit(e, self.src) {
            let (lt, lf) = self.condition(left, first, preds);
            return if and {
                let (rt, rf) = self.condition(right, first, lt);
                (rt, lf.into_iter().chain(rf).collect())
            } else {
                let (rt, rf) = self.condition(right, first, lf);
                (lt.into_iter().chain(rt).collect(), rf)
            };
        }
        let t = match first.take() {
            Some(h) => h,
            None => {
                let (defs, uses) = self.defs_uses(e, &[]);
                let t = self.push(line(e), end_line(e), defs, uses, true);
                self.connect(preds, t);
                t
            }
        };
        (vec![(t, EdgeKind::True)], vec![(t, EdgeKind::False)])
    }

    /// The loop or switch a `break` or `continue` (`node`) leaves: the one its label names,
    /// or the innermost (a `break` leaves a switch, a `continue` only a loop); PHP's
    /// `break 2` counts them.
    pub(super) fn target_of(&self, node: Node<'a>, continues: bool) -> Option<usize> {
        let mut cursor = node.walk();
        let named: Option<Node> = node.named_children(&mut cursor).next();
        let text = named
            .and_then(|n| self.src.get(n.byte_range()))
            .unwrap_or("");
        let eligible = |t: &Target| !continues || t.continue_to.is_some();
        if let Ok(levels) = text.trim().parse::<usize>() {
            return self
                .targets
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, t)| eligible(t))
                .nth(levels.saturating_sub(1))
                .map(|(i, _)| i);
        }
        let label = text.trim_start_matches('\'');
        let labelled = named.is_some_and(|n| {
            matches!(
                n.kind(),
                "label_name" | "label" | "statement_identifier" | "identifier"
            )
        });
        if labelled {
            if let Some(i) = self
                .targets
                .iter()
                .rposition(|t| t.label.as_deref() == Some(label) && eligible(t))
            {
                return Some(i);
            }
        }
        self.targets.iter().rposition(eligible)
    }
}

/// The lines of a header: from the node's first line to the end of its last part before
/// `first_inner` (its body, or a case's first statement), leaving out comments between.
pub(super) fn header_lines(node: Node, first_inner: Option<Node>) -> (u32, u32) {
    let start = line(node);
    let end = match first_inner {
        Some(inner) => children(node)
            .into_iter()
            .map(|(_, c)| c)
            .filter(|c| c.end_byte() <= inner.start_byte() && !c.kind().contains("comment"))
            .map(end_line)
            .max()
            .unwrap_or(start),
        None => end_line(node),
    };
    (start, end.max(start))
}

/// What runs when a case is chosen: its `body` field's nodes, or its children after its labels.
fn case_statements<'t>(case: Node<'t>, body: &str) -> Vec<Node<'t>> {
    if !body.is_empty() {
        let mut cursor = case.walk();
        return case.children_by_field_name(body, &mut cursor).collect();
    }
    children(case)
        .into_iter()
        .filter(|(field, child)| {
            child.is_named()
                && !child.kind().contains("comment")
                && !field.is_some_and(|f| CASE_LABEL_FIELDS.contains(&f))
                && !is_case_label(child.kind())
        })
        .map(|(_, child)| child)
        .collect()
}

/// The tests a case makes, in order: one per value where it lists several (`case 1, 2:`,
/// Ruby's `when 1, 2`), as go/cfg counts them; else one for the whole case (`None`).
fn case_tests(case: Node) -> Vec<Option<Node>> {
    let mut values: Vec<Node> = Vec::new();
    for (field, child) in children(case) {
        match field {
            Some("value") if child.kind() == "expression_list" => {
                let mut cursor = child.walk();
                values.extend(child.named_children(&mut cursor));
            }
            Some("pattern") if case.kind() == "when" => values.push(child),
            // Kotlin's `1, 2 ->`.
            Some("condition") if case.kind() == "when_entry" => values.push(child),
            _ => {}
        }
    }
    if values.len() >= 2 {
        values.into_iter().map(Some).collect()
    } else {
        vec![None]
    }
}

/// Whether a loop runs until something leaves it (Rust's `loop`, `for {}`, `for (;;)`): no
/// test, so no false way out.
pub(super) fn is_endless(node: Node) -> bool {
    match node.kind() {
        "loop_expression" => true,
        "repeat_statement" => node.child_by_field_name("condition").is_none(),
        "for_statement" => {
            let mut cursor = node.walk();
            let ranges = node
                .named_children(&mut cursor)
                .any(|c| c.kind() == "range_clause");
            condition_of(node).is_none()
                && !ranges
                && node.child_by_field_name("left").is_none()
                && node.child_by_field_name("right").is_none()
        }
        _ => false,
    }
}

/// A branch's or loop's condition: its `condition` field, the one in Go's `for` clause, or
/// Go's `for x < n {`.
fn condition_of(node: Node) -> Option<Node> {
    let cond = node.child_by_field_name("condition").or_else(|| {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        if let Some(clause) = children.iter().find(|c| c.kind() == "for_clause") {
            return clause.child_by_field_name("condition");
        }
        let body = node.child_by_field_name("body");
        (node.kind() == "for_statement")
            .then(|| {
                children.into_iter().find(|c| {
                    Some(c.id()) != body.map(|b| b.id())
                        && !c.kind().contains("comment")
                        && c.kind() != "range_clause"
                        && node.child_by_field_name("left").is_none()
                })
            })
            .flatten()
    })?;
    // JavaScript's `for (…; i < n; …)` holds its test in a statement.
    Some(if cond.kind() == "expression_statement" {
        cond.named_child(0).unwrap_or(cond)
    } else {
        cond
    })
}

fn unwrap_parens(mut e: Node) -> Node {
    while matches!(e.kind(), "parenthesized_expression" | "condition_clause")
        && e.named_child_count() == 1
    {
        e = e.named_child(0).expect("one named child");
    }
    e
}

/// `!x`, `not x`: the operand.
fn negated<'t>(e: Node<'t>, src: &str) -> Option<Node<'t>> {
    if !matches!(
        e.kind(),
        "unary_expression" | "not_operator" | "unary" | "prefix_unary_expression"
    ) {
        return None;
    }
    let op = e.child(0)?;
    let text = src.get(op.byte_range())?;
    (matches!(text, "!" | "not") && !op.is_named())
        .then(|| {
            e.child_by_field_name("argument")
                .or_else(|| e.named_child(e.named_child_count().checked_sub(1)? as u32))
        })
        .flatten()
}

/// `a && b`, `a or b`: `(left, is it an and, right)`. Grammars name these parts in several
/// ways: an `operator` field or child between `left`/`lhs` and `right`/`rhs`, or a kind of
/// their own (Swift's `conjunction_expression`, Dart's `logical_and_expression`).
fn short_circuit<'t>(e: Node<'t>, src: &str) -> Option<(Node<'t>, bool, Node<'t>)> {
    let and = match e.kind() {
        "conjunction_expression" | "logical_and_expression" => true,
        "disjunction_expression" | "logical_or_expression" => false,
        "binary_expression" | "boolean_operator" | "binary" | "binary_operator"
        | "infix_expression" => {
            let op = e.child_by_field_name("operator").or_else(|| {
                let count = e.child_count();
                (1..count.saturating_sub(1))
                    .filter_map(|i| e.child(i as u32))
                    .find(|c| matches!(src.get(c.byte_range()), Some("&&" | "||" | "and" | "or")))
            })?;
            match src.get(op.byte_range())? {
                "&&" | "and" => true,
                "||" | "or" => false,
                _ => return None,
            }
        }
        _ => return None,
    };
    let left = e
        .child_by_field_name("left")
        .or_else(|| e.child_by_field_name("lhs"))
        .or_else(|| e.named_child(0))?;
    let right = e
        .child_by_field_name("right")
        .or_else(|| e.child_by_field_name("rhs"))
        .or_else(|| e.named_child(e.named_child_count().checked_sub(1)? as u32))?;
    (left.id() != right.id()).then_some((left, and, right))
}

fn splits(cond: Node, src: &str) -> bool {
    let e = unwrap_parens(cond);
    short_circuit(e, src).is_some() || negated(e, src).is_some_and(|i| splits(i, src))
}

/// The operands a condition tests one by one, left to right.
fn operands<'t>(e: Node<'t>, src: &str, out: &mut Vec<Node<'t>>) {
    let e = unwrap_parens(e);
    if let Some(inner) = negated(e, src) {
        return operands(inner, src, out);
    }
    match short_circuit(e, src) {
        Some((left, _, right)) => {
            operands(left, src, out);
            operands(right, src, out);
        }
        None => out.push(e),
    }
}
