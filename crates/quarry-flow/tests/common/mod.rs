//! What the flow tests share: a function by name, and an edge by the lines it joins.

use quarry_core::Language;
use quarry_flow::{functions, EdgeKind, FunctionFlow};

#[allow(dead_code)] // not every test file asks for a function by name
pub fn function(language: Language, src: &str, name: &str) -> FunctionFlow {
    functions(language, src)
        .unwrap()
        .into_iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// Whether control passes from the block holding line `from` to the block starting on line
/// `to` (0: the exit) for the reason `kind`.
pub fn edge(f: &FunctionFlow, from: u32, to: u32, kind: EdgeKind) -> bool {
    f.cfg.edges.iter().any(|e| {
        let (a, b) = (&f.cfg.blocks[e.from], &f.cfg.blocks[e.to]);
        e.from > 1
            && a.start_line <= from
            && from <= a.end_line
            && (if to == 0 {
                e.to == 1
            } else {
                e.to > 1 && b.start_line == to
            })
            && e.kind == kind
    })
}
