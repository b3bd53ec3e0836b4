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

    /// What a statement may change in place: the base of an element or field it assigns
    /// (`xs[i] = v`, `self.n += 1`), and the receiver of a method it calls as a statement
    /// (`xs.append(v)`) — names, as everything here.
    pub(super) fn weak_defs(&self, node: Node<'a>) -> Vec<String> {
        let spec = self.spec;
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if spec.functions.contains(&n.kind()) {
                continue;
            }
            let assign = spec
                .assigns
                .iter()
                .find(|(k, f)| *k == n.kind() && !f.is_empty() && !f.starts_with('@'));
            if let Some((_, field)) = assign {
                let mut cursor = n.walk();
                for target in n.children_by_field_name(field, &mut cursor) {
                    if let Some(base) = self.base_name(target) {
                        out.push(base);
                    }
                }
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        // `xs.append(v)` as a statement.
        let mut call = node;
        for _ in 0..2 {
            if call.named_child_count() == 1 && !call.kind().contains("call") {
                call = call.named_child(0).expect("one named child");
            }
        }
        if call.kind().contains("call") || call.kind() == "method_invocation" {
            let callee = call
                .child_by_field_name("function")
                .or_else(|| call.child_by_field_name("method").and_then(|m| m.parent()));
            let method = callee
                .and_then(|c| {
                    ["attribute", "property", "field", "name", "method"]
                        .iter()
                        .find_map(|f| c.child_by_field_name(f))
                        .or_else(|| call.child_by_field_name("method"))
                })
                .and_then(|m| self.src.get(m.byte_range()));
            if method.is_some_and(|m| MUTATORS.contains(&m)) {
                // `self.add(x)` is a method of the object's own, not a change it is known for.
                let own = callee
                    .and_then(|c| c.named_child(0))
                    .and_then(|r| self.src.get(r.byte_range()))
                    .is_some_and(|r| matches!(r, "self" | "this" | "@"));
                if let Some(base) = callee.and_then(|c| self.base_name(c)).filter(|_| !own) {
                    out.push(base);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The variable under an element or field (`xs` of `xs[i]`, `obj` of `obj.a.b`); `None`
    /// for a bare name (a plain definition) or what no name is under.
    fn base_name(&self, target: Node<'a>) -> Option<String> {
        let member = |k: &str| {
            [
                "subscript",
                "index",
                "attribute",
                "member",
                "field",
                "selector",
                "element",
                "access",
            ]
            .iter()
            .any(|m| k.contains(m))
        };
        if !member(target.kind()) {
            return None;
        }
        let mut at = target;
        for _ in 0..6 {
            if self.spec.names.contains(&at.kind()) {
                return self.src.get(at.byte_range()).map(str::to_string);
            }
            at = [
                "object", "value", "operand", "argument", "array", "receiver",
            ]
            .iter()
            .find_map(|f| at.child_by_field_name(f))
            .or_else(|| at.named_child(0))?;
        }
        None
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

    /// Whether `node` holds a return (or an expression that may return, Rust's `?`) outside
    /// nested functions.
    pub(super) fn returns_within(&self, node: Node<'a>) -> bool {
        let spec = self.spec;
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if spec.returns.contains(&n.kind()) || spec.early_returns.contains(&n.kind()) {
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

/// Methods that change their receiver in place, in the standard libraries agents meet most
/// (a call of another method is read as leaving its receiver as it was).
const MUTATORS: &[&str] = &[
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "pop",
    "popleft",
    "remove",
    "discard",
    "clear",
    "setdefault",
    "sort",
    "reverse",
    "push",
    "push_back",
    "push_front",
    "emplace_back",
    "pop_back",
    "unshift",
    "shift",
    "splice",
    "set",
    "put",
    "putAll",
    "delete",
    "erase",
    "truncate",
    "retain",
    "drain",
    "dedup",
    "sort_by",
    "sort_by_key",
    "extend_from_slice",
    "Add",
    "AddRange",
    "Remove",
    "Clear",
    "Insert",
    "Set",
    "Store",
    "Delete",
    "Push",
    "Reset",
];

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
