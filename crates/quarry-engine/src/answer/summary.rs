//! Answers about one file: its outline (quarry-outline's `Outline`), one definition's
//! context (source, calls, callers, types) and its call graph.

use quarry_core::SymbolRef;
use schemars::JsonSchema;
use serde::Serialize;

pub use quarry_outline::{Outline, OutlineItem};

/// Where a called name is defined: in the same file, elsewhere in the index, or unknown.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "where", rename_all = "snake_case")]
pub enum Target {
    /// Defined in this file, at these lines.
    File {
        qualified_name: String,
        start_line: u32,
        end_line: u32,
        signature: Option<String>,
    },
    /// Defined once elsewhere in the index.
    Index(SymbolRef),
    /// Several definitions share the name (by-name resolution cannot tell them apart).
    Ambiguous { candidates: Vec<SymbolRef> },
    /// Not defined in this file nor in the index (library, builtin, dynamic).
    Unknown,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Edge {
    /// The calling definition (qualified), `None` for top-level code.
    pub caller: Option<String>,
    pub callee: String,
    pub line: u32,
    pub target: Target,
}

/// `quarry summary --mode context --symbol NAME`: what an agent needs to edit one definition.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SymbolContext {
    pub path: String,
    pub symbol: OutlineItem,
    /// The definition's full source, exactly its lines.
    pub source: String,
    /// What it calls, each name once, resolved.
    pub calls: Vec<Edge>,
    /// Who calls it: this file's calls plus the index's (by name).
    pub callers: Vec<CallerSite>,
    /// Types it names (CamelCase identifiers defined as class/struct/enum/… somewhere).
    pub types: Vec<Target>,
    pub by_name: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CallerSite {
    pub repo: Option<String>,
    pub path: String,
    pub caller: Option<String>,
    pub line: u32,
    pub signature: Option<String>,
}

/// `quarry summary --mode extract`: the file's call graph.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CallGraph {
    pub path: String,
    pub edges: Vec<Edge>,
    pub by_name: bool,
    /// Each function's control and data flow (quarry-flow), where its language has a flow
    /// table: basic blocks, labelled edges, complexity, def-use pairs.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub flow: Vec<quarry_flow::FunctionFlow>,
    /// Why `flow` is empty or partial: no flow table for the language, no such function.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flow_note: Option<String>,
}

/// A program slice of one file: the lines that can change a variable at a line (backward), or
/// that a line's definitions reach (forward), with their code.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SliceAnswer {
    pub path: String,
    #[serde(flatten)]
    pub slice: quarry_flow::Slice,
    /// Each line of the slice with its text.
    pub code: Vec<SliceLine>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SliceLine {
    pub line: u32,
    pub text: String,
}
