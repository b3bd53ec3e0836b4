//! Call sites: which names each definition calls, read from the same syntax tree the chunks
//! come from. They feed `quarry callers`, `quarry impact` and the summaries' call graphs.
//!
//! One rule for every grammar, because their call nodes share a shape: a node whose kind names
//! a call (`call_expression`, `call`, `method_invocation`, `invocation_expression`,
//! `function_call_expression`, `member_call_expression`, …) or a construction (`new_expression`,
//! `object_creation_expression`) has a callee child (field `function`, `name`, `method` or
//! `constructor`, else its first named child); the called name is that child's last
//! identifier (`a.b.run(x)` → `run`, `Foo::new()` → `new`, `self.save()` → `save`). Names only:
//! which definition a name resolves to is decided by the caller of this data (by name, which
//! has known limits: overloads and same-named methods of different types are not told apart).

use quarry_core::{CallSite, Symbol};
use tree_sitter::{Node, Tree};

/// At most this many call sites are kept per file (generated code can have hundreds of
/// thousands).
const MAX_CALLS: usize = 20_000;

fn is_call_kind(kind: &str) -> bool {
    matches!(
        kind,
        "call_expression"
            | "call"
            | "method_invocation"
            | "invocation_expression"
            | "function_call_expression"
            | "member_call_expression"
            | "scoped_call_expression"
            | "nullsafe_member_call_expression"
            | "new_expression"
            | "object_creation_expression"
            | "method_call"
            // Lua's `f(x)`, a shell command (`log "x"` calls the function `log`).
            | "function_call"
            | "command"
    )
}

fn is_name_kind(kind: &str) -> bool {
    // `word`: a shell command's name.
    kind.ends_with("identifier")
        || matches!(kind, "name" | "constant" | "property_identifier" | "word")
}

/// The last identifier inside `node` (itself included), in document order.
fn last_identifier<'t>(node: Node<'t>) -> Option<Node<'t>> {
    if is_name_kind(node.kind()) && node.named_child_count() == 0 {
        return Some(node);
    }
    // Skip argument lists and generic arguments: `foo::<T>()` calls `foo`.
    let mut best = None;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if matches!(
            child.kind(),
            "arguments" | "argument_list" | "type_arguments" | "generic_arguments"
        ) {
            continue;
        }
        if let Some(found) = last_identifier(child) {
            best = Some(found);
        }
    }
    best
}

fn callee_name(node: Node, src: &str) -> Option<String> {
    let callee = ["function", "name", "method", "constructor", "type"]
        .iter()
        .find_map(|f| node.child_by_field_name(f))
        .or_else(|| node.named_child(0))?;
    let ident = last_identifier(callee)?;
    let name = ident.utf8_text(src.as_bytes()).ok()?;
    (!name.is_empty() && name.len() <= 128).then(|| name.to_string())
}

/// Every call site of the tree, each attributed to the innermost definition containing it.
pub(crate) fn collect(tree: &Tree, src: &str, symbols: &[Symbol]) -> Vec<CallSite> {
    let mut calls = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if is_call_kind(node.kind()) {
            if let Some(callee) = callee_name(node, src) {
                calls.push((node.start_position().row as u32 + 1, callee));
                if calls.len() >= MAX_CALLS {
                    break;
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return attribute(calls, symbols);
            }
        }
    }
    attribute(calls, symbols)
}

fn attribute(calls: Vec<(u32, String)>, symbols: &[Symbol]) -> Vec<CallSite> {
    calls
        .into_iter()
        .map(|(line, callee)| {
            let caller = symbols
                .iter()
                .filter(|s| s.start_line <= line && line <= s.end_line)
                .min_by_key(|s| s.end_line - s.start_line)
                .map(Symbol::qualified_name);
            CallSite {
                callee,
                caller,
                line,
            }
        })
        .collect()
}
