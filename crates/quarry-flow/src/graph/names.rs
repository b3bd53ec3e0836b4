//! What a statement assigns and reads, by name, and the calls and expressions that leave a
//! function in the middle of a statement (`panic(…)`, Rust's `?`).

use tree_sitter::Node;

use super::Builder;
use crate::spec::Jump;

impl<'a> Builder<'a> {
    /// The variables `node` assigns and reads, leaving out `skips` (a compound statement's
    /// bodies, the operands a condition tests on their own) and nested functions.
    pub(super) fn defs_uses(
        &self,
        node: Node<'a>,
        skips: &[Node<'a>],
    ) -> (Vec<String>, Vec<String>) {
        let mut defs = Vec::new();
        let mut uses = Vec::new();
        self.walk(node, skips, false, &mut defs, &mut uses, true);
        defs.sort();
        defs.dedup();
        uses.sort();
        uses.dedup();
        (defs, uses)
    }

    /// The parameter names under `node` (not their types or default values).
    pub(super) fn names_in(&self, node: Node<'a>, out: &mut Vec<String>) {
        if self.spec.names.contains(&node.kind()) {
            if let Some(text) = self.src.get(node.byte_range()) {
                out.push(text.to_string());
            }
            return;
        }
        for (field, child) in children(node) {
            if !matches!(field, Some("type" | "value" | "default")) {
                self.names_in(child, out);
            }
        }
    }

    fn walk(
        &self,
        node: Node<'a>,
        skips: &[Node<'a>],
        in_def: bool,
        defs: &mut Vec<String>,
        uses: &mut Vec<String>,
        top: bool,
    ) {
        let spec = self.spec;
        if skips.iter().any(|s| s.id() == node.id()) {
            return;
        }
        // `@cache def show():` defines `show` as `def show():` does.
        let node = match node.child_by_field_name("definition") {
            Some(inner) if top && spec.functions.contains(&inner.kind()) => inner,
            _ => node,
        };
        if spec.functions.contains(&node.kind()) {
            // A nested function is a value here, its insides its own; a statement that
            // defines one (`def show():`) defines its name.
            if top {
                if let Some(name) = node
                    .child_by_field_name("name")
                    .and_then(|n| self.src.get(n.byte_range()))
                {
                    defs.push(name.to_string());
                }
            }
            return;
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
        // A pattern binds its names (`Some(n) if n > 3`: `n` is bound, the guard reads it).
        if spec.bindings.contains(&node.kind()) {
            for (field, child) in children(node) {
                let guard = matches!(field, Some("condition" | "guard"));
                self.walk(child, skips, !guard, defs, uses, false);
            }
            return;
        }
        let assign = spec
            .assigns
            .iter()
            .find(|(k, _)| *k == node.kind())
            .copied()
            .or_else(|| self.operator_assign(node));
        // `@first`: the grammar names no field; the first named child is what is assigned.
        let first_named = node.named_child(0).map(|c| c.id());
        for (field, child) in children(node) {
            let target = match assign {
                Some((_, "@first")) => {
                    let target = Some(child.id()) == first_named;
                    let defines =
                        target && (spec.names.contains(&child.kind()) || is_pattern(child));
                    self.walk(child, skips, in_def || defines, defs, uses, false);
                    continue;
                }
                // `x += 1`, `i++`: the target is read and written.
                Some((k, f)) if f.is_empty() || field == Some(f) => {
                    let updates = k.starts_with("augmented")
                        || k.starts_with("update")
                        || k.starts_with("operator")
                        || k.starts_with("compound")
                        || f.is_empty()
                        || k.starts_with("inc")
                        || k.starts_with("dec");
                    if updates {
                        self.walk(child, skips, false, defs, uses, false);
                    }
                    true
                }
                _ => false,
            };
            // Inside a target, only the bare names are assigned (`a[i] = v` reads `a` and `i`).
            let defines = target && (spec.names.contains(&child.kind()) || is_pattern(child));
            self.walk(child, skips, in_def || defines, defs, uses, false);
        }
    }

    /// `x <- 1` (R): an assignment by its operator, as `(kind, field assigned)`.
    fn operator_assign(&self, node: Node<'a>) -> Option<(&'static str, &'static str)> {
        let spec = self.spec;
        let candidates: Vec<&(&str, &str, &str)> = spec
            .assign_operators
            .iter()
            .filter(|(k, ..)| *k == node.kind())
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let op = node
            .child_by_field_name("operator")
            .or_else(|| node.child(1))
            .and_then(|o| self.src.get(o.byte_range()))?;
        candidates
            .into_iter()
            .find(|(_, o, _)| *o == op)
            .map(|(k, _, f)| (*k, *f))
    }

    /// Whether `node` holds one of `kinds` outside nested functions.
    pub(super) fn holds(&self, node: Node<'a>, kinds: &[&str]) -> bool {
        if kinds.is_empty() {
            return false;
        }
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if kinds.contains(&n.kind()) {
                return true;
            }
            if self.spec.functions.contains(&n.kind()) {
                continue;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        false
    }

    /// The callee a statement calls, when it is one call (`panic("…")`, `os.Exit(1)`, Ruby's
    /// `raise ArgumentError`, Rust's `unreachable!()`, a shell's `exit 1`, R's `return(x)`).
    pub(super) fn called(&self, node: Node<'a>) -> Option<&'a str> {
        let mut n = node;
        // Through the statement's wrapper (`expression_statement`) to the call.
        for _ in 0..2 {
            if n.named_child_count() == 1
                && !n.kind().contains("call")
                && !n.kind().contains("macro")
                && n.kind() != "command"
            {
                n = n.named_child(0).expect("one named child");
            }
        }
        let callee = match n.kind() {
            "identifier" => Some(n),
            k if k.contains("call") || k.contains("macro_invocation") || k == "command" => n
                .child_by_field_name("function")
                .or_else(|| n.child_by_field_name("method"))
                .or_else(|| n.child_by_field_name("macro"))
                .or_else(|| n.child_by_field_name("name"))
                .or_else(|| n.named_child(0)),
            _ => None,
        };
        // A method call on a receiver (`obj.raise(…)`) is no raise.
        if n.child_by_field_name("receiver").is_some() {
            return None;
        }
        callee.and_then(|c| self.src.get(c.byte_range()))
    }

    /// How the statement `node` leaves the straight line, if it jumps: by its kind, by the
    /// keyword it starts with (Swift's `control_transfer_statement`), or by the call it is.
    pub(super) fn jump_of(&self, node: Node<'a>) -> Option<Jump> {
        let spec = self.spec;
        let kind = node.kind();
        if spec.returns.contains(&kind) {
            return Some(Jump::Return);
        }
        if spec.raises.contains(&kind) {
            return Some(Jump::Raise);
        }
        if spec.breaks.contains(&kind) {
            return Some(Jump::Break);
        }
        if spec.continues.contains(&kind) {
            return Some(Jump::Continue);
        }
        if spec.keyword_jumps.contains(&kind) {
            let first = node.child(0).and_then(|c| self.src.get(c.byte_range()))?;
            return match first {
                "return" => Some(Jump::Return),
                "throw" => Some(Jump::Raise),
                "break" => Some(Jump::Break),
                "continue" => Some(Jump::Continue),
                _ => None,
            };
        }
        if spec.raise_calls.is_empty() && spec.jump_calls.is_empty() {
            return None;
        }
        let callee = self.called(node)?;
        if spec.raise_calls.contains(&callee) {
            return Some(Jump::Raise);
        }
        spec.jump_calls
            .iter()
            .find(|(name, _)| *name == callee)
            .map(|(_, jump)| *jump)
    }
}

/// A node's children with the fields that hold them.
pub(super) fn children<'t>(node: Node<'t>) -> Vec<(Option<&'t str>, Node<'t>)> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// `obj.attr`'s `attr`, `f(key=1)`'s `key`: a name that is no variable.
fn is_member_name(node: Node) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let field = children(parent)
        .into_iter()
        .find(|(_, c)| c.id() == node.id())
        .and_then(|(f, _)| f);
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
            | "as_pattern_target"
            // `import os.path`, `import numpy as np`: the names bound.
            | "dotted_name"
            | "aliased_import"
            // Swift's `let x = …` and `x = …`.
            | "pattern"
            | "directly_assignable_expression"
            // Dart's `x = …`.
            | "assignable_expression"
    )
}
