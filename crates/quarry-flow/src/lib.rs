//! The flow layer of quarry's `extract` view: for every function, its control-flow graph
//! (basic blocks with their lines, edges labelled by why control passes), its cyclomatic
//! complexity, the def-use pairs of its variables, and program slices ("which lines can
//! change `x` at line 42?"). Read from the chunker's tree-sitter grammars with one flow table
//! per language (spec.rs); the graph (graph.rs) and the data flow (dataflow.rs) are written
//! once over those tables. bench/go_cfg checks the graphs against Go's `go/cfg`, and
//! bench/handchecked/slices the slices against answers checked by hand; what each answer
//! leaves approximate is said in it.

mod dataflow;
mod graph;
mod spec;
mod text;

use std::collections::{BTreeSet, HashMap};

use quarry_core::Language;
use schemars::JsonSchema;
use serde::Serialize;
use tree_sitter::Node;

pub use graph::EdgeKind;
pub use spec::flow_languages;

/// A basic block: statements that run one after another, by their lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Block {
    pub id: usize,
    pub start_line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FlowEdge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

/// A definition of `var` on `def_line` that reaches its use on `use_line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DefUse {
    pub var: String,
    pub def_line: u32,
    pub use_line: u32,
}

/// A function's control-flow graph.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Cfg {
    /// Block 0 is the entry (the parameters are defined there), block 1 the exit.
    pub blocks: Vec<Block>,
    pub edges: Vec<FlowEdge>,
}

/// A function's data flow: which definition reaches which use.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Dfg {
    pub edges: Vec<DefUse>,
}

/// One function's control and data flow.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FunctionFlow {
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
    pub cfg: Cfg,
    /// Decisions plus one: each test a branch, loop, case or short-circuit operand makes,
    /// and each handler.
    pub complexity: u32,
    pub dfg: Dfg,
    /// Where the function did not parse: its graph is drawn from what did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syntax_error: Option<u32>,
}

/// The lines a slice holds, in the function that holds the line asked about.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Slice {
    pub function: String,
    pub line: u32,
    pub var: Option<String>,
    pub forward: bool,
    pub lines: Vec<u32>,
    /// `lines` as runs `[start, end]`.
    pub ranges: Vec<(u32, u32)>,
    /// What the answer leaves approximate (and where the function did not parse).
    pub note: String,
}

/// Why there is no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowError {
    /// quarry has no flow table for the language yet.
    Unsupported(Language),
    /// The file did not parse within the chunker's time budget.
    Unparsed,
    /// No function holds the line.
    NoFunction(u32),
}

impl std::fmt::Display for FlowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowError::Unsupported(language) => write!(
                f,
                "control and data flow are not read for {language} yet: they are for {}",
                flow_languages()
                    .iter()
                    .map(|l| l.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            FlowError::Unparsed => {
                f.write_str("the file could not be parsed within its time budget")
            }
            FlowError::NoFunction(line) => write!(f, "no function holds line {line}"),
        }
    }
}

impl std::error::Error for FlowError {}

const APPROXIMATE: &str = "variables are matched by name: a field or a global is its name, a \
     change in place (`xs[i] = v`, `obj.f = v`, `xs.append(v)`) changes `xs` or `obj` and \
     replaces nothing, and a nested function's body is its own";

fn parse(language: Language, text: &str) -> Result<tree_sitter::Tree, FlowError> {
    quarry_chunk::syntax_tree(language, text).ok_or(FlowError::Unparsed)
}

/// Every function of `text` (a file in `language`), with its flow.
pub fn functions(language: Language, text: &str) -> Result<Vec<FunctionFlow>, FlowError> {
    let spec = spec::flow_spec(language).ok_or(FlowError::Unsupported(language))?;
    let tree = parse(language, text)?;
    let mut out = Vec::new();
    for node in function_nodes(spec, tree.root_node()) {
        let graph = graph::build(spec, text, node);
        let mut flow = flow_of(&graph, &name_of(node, text), node);
        flow.syntax_error = first_error(node);
        out.push(flow);
    }
    Ok(out)
}

/// The slice at `line` of the innermost function holding it: backward (what can change `var`,
/// or what the line reads, there) or forward (what the line's definitions reach).
pub fn slice(
    language: Language,
    text: &str,
    line: u32,
    var: Option<&str>,
    forward: bool,
) -> Result<Slice, FlowError> {
    let spec = spec::flow_spec(language).ok_or(FlowError::Unsupported(language))?;
    let tree = parse(language, text)?;
    let node = function_nodes(spec, tree.root_node())
        .into_iter()
        .filter(|n| {
            let (s, e) = (
                n.start_position().row as u32 + 1,
                n.end_position().row as u32 + 1,
            );
            s <= line && line <= e
        })
        .min_by_key(|n| n.end_byte() - n.start_byte())
        .ok_or(FlowError::NoFunction(line))?;
    let graph = graph::build(spec, text, node);
    let reach = dataflow::reaching(&graph);
    // The statements on the line: the smallest ones holding it.
    let holding: Vec<usize> = (2..graph.stmts.len())
        .filter(|&s| graph.stmts[s].start_line <= line && line <= graph.stmts[s].end_line)
        .collect();
    let narrowest = holding
        .iter()
        .map(|&s| graph.stmts[s].end_line - graph.stmts[s].start_line)
        .min();
    let seeds: Vec<usize> = holding
        .into_iter()
        .filter(|&s| Some(graph.stmts[s].end_line - graph.stmts[s].start_line) == narrowest)
        .collect();
    let set = if forward {
        dataflow::forward(&graph, &reach, &seeds, var)
    } else {
        dataflow::backward(&graph, &reach, &seeds, var)
    };
    // Each statement with the `try` and handler headers it runs under.
    let mut set = set;
    let mut under: Vec<usize> = set.iter().filter_map(|&s| graph.stmts[s].context).collect();
    while let Some(c) = under.pop() {
        if set.insert(c) {
            under.extend(graph.stmts[c].context);
        }
    }
    let mut lines: BTreeSet<u32> = BTreeSet::new();
    for s in set {
        let stmt = &graph.stmts[s];
        if s == graph::EXIT {
            continue;
        }
        lines.extend(stmt.start_line..=stmt.end_line);
    }
    let lines: Vec<u32> = lines.into_iter().collect();
    let note = match first_error(node) {
        Some(at) => format!(
            "{APPROXIMATE}; the function does not parse at line {at}: the slice is drawn from what did"
        ),
        None => APPROXIMATE.to_string(),
    };
    Ok(Slice {
        function: name_of(node, text),
        line,
        var: var.map(str::to_string),
        forward,
        ranges: runs(&lines),
        lines,
        note,
    })
}

/// The line of the first syntax error under `node`, if any.
fn first_error(node: Node) -> Option<u32> {
    if !node.has_error() {
        return None;
    }
    let mut cursor = node.walk();
    let mut stack = vec![node];
    let mut first: Option<tree_sitter::Point> = None;
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            let at = n.start_position();
            if first.is_none_or(|f| at < f) {
                first = Some(at);
            }
            continue;
        }
        if n.has_error() {
            stack.extend(n.children(&mut cursor));
        }
    }
    first.map(|p| p.row as u32 + 1)
}

fn runs(lines: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &l in lines {
        match out.last_mut() {
            Some((_, end)) if *end + 1 == l => *end = l,
            _ => out.push((l, l)),
        }
    }
    out
}

fn function_nodes<'t>(spec: &spec::FlowSpec, root: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if spec.functions.contains(&node.kind()) {
            out.push(node);
        }
        for child in node.children(&mut cursor) {
            stack.push(child);
        }
    }
    out.sort_by_key(|n| n.start_byte());
    out
}

fn name_of(node: Node, text: &str) -> String {
    // C and C++ name a function in its declarator (`int *parse(char *s)`).
    // R's `function` keyword is its grammar's `name`: a name is a named node.
    let mut named = node.child_by_field_name("name").filter(|n| n.is_named());
    // Dart and Julia name a function in its signature (`int f(…)`, `function f(x)`).
    if named.is_none() {
        let mut cursor = node.walk();
        let signature = node.child_by_field_name("signature").or_else(|| {
            node.named_children(&mut cursor).find(|c| {
                matches!(
                    c.kind(),
                    "signature" | "function_signature" | "method_signature"
                )
            })
        });
        if let Some(sig) = signature {
            let mut at = sig;
            for _ in 0..3 {
                if let Some(n) = at.child_by_field_name("name") {
                    named = Some(n);
                    break;
                }
                match at.named_child(0) {
                    Some(c) if c.kind() == "identifier" => {
                        named = Some(c);
                        break;
                    }
                    Some(c) => at = c,
                    None => break,
                }
            }
        }
    }
    // `const f = () => …`, `f <- function(x) …`: the name it is given.
    if named.is_none() {
        if let Some(parent) = node.parent() {
            named = ["name", "left", "lhs"]
                .iter()
                .filter_map(|f| parent.child_by_field_name(f))
                .find(|n| {
                    n.id() != node.id()
                        && text.get(n.byte_range()).is_some_and(|t| {
                            !t.is_empty()
                                && t.chars().all(|c| {
                                    c.is_alphanumeric() || c == '_' || c == '.' || c == '$'
                                })
                        })
                });
        }
    }
    let mut declarator = node.child_by_field_name("declarator");
    for _ in 0..8 {
        if named.is_some() {
            break;
        }
        let Some(d) = declarator else { break };
        if matches!(
            d.kind(),
            "identifier" | "field_identifier" | "qualified_identifier"
        ) {
            named = Some(d);
        }
        declarator = d.child_by_field_name("declarator");
    }
    named
        .and_then(|n| text.get(n.byte_range()))
        .map_or_else(|| "<anonymous>".to_string(), str::to_string)
}

/// The graph's statements merged into basic blocks, with the data flow over it.
fn flow_of(graph: &graph::Graph, name: &str, node: Node) -> FunctionFlow {
    let n = graph.stmts.len();
    let mut preds = vec![0usize; n];
    let mut succs: Vec<Vec<(usize, EdgeKind)>> = vec![Vec::new(); n];
    for &(from, to, kind) in &graph.edges {
        preds[to] += 1;
        succs[from].push((to, kind));
    }
    // A statement starts a block unless it is the one plain successor of a statement that
    // has no other, and it has no other way in.
    let mut block_of = vec![usize::MAX; n];
    let mut blocks: Vec<Block> = Vec::new();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&s| (s > graph::EXIT, graph.stmts[s].start_line, s));
    for &s in &order {
        if block_of[s] != usize::MAX {
            continue;
        }
        let id = blocks.len();
        let mut block = Block {
            id,
            start_line: graph.stmts[s].start_line,
            end_line: graph.stmts[s].end_line,
        };
        block_of[s] = id;
        let mut at = s;
        while at > graph::EXIT
            && succs[at].len() == 1
            && succs[at][0].1 == EdgeKind::Next
            && !graph.stmts[at].header
        {
            let next = succs[at][0].0;
            if next <= graph::EXIT || preds[next] != 1 || block_of[next] != usize::MAX {
                break;
            }
            block_of[next] = id;
            block.end_line = block.end_line.max(graph.stmts[next].end_line);
            at = next;
        }
        blocks.push(block);
    }
    let mut edges: Vec<FlowEdge> = Vec::new();
    let mut seen: HashMap<(usize, usize, EdgeKind), ()> = HashMap::new();
    for &(from, to, kind) in &graph.edges {
        let (bf, bt) = (block_of[from], block_of[to]);
        if bf == bt && kind == EdgeKind::Next {
            continue;
        }
        if seen.insert((bf, bt, kind), ()).is_none() {
            edges.push(FlowEdge {
                from: bf,
                to: bt,
                kind,
            });
        }
    }
    let decisions = graph
        .edges
        .iter()
        .filter(|(_, _, k)| matches!(k, EdgeKind::False))
        .count()
        + graph
            .edges
            .iter()
            .filter(|(_, _, k)| matches!(k, EdgeKind::Exception))
            .map(|(_, to, _)| *to)
            .collect::<BTreeSet<_>>()
            .len();
    let reach = dataflow::reaching(graph);
    let def_use = dataflow::def_use(graph, &reach)
        .into_iter()
        .filter(|(var, ..)| !var.starts_with(graph::SWITCH_TAG))
        .map(|(var, d, u)| DefUse {
            var,
            def_line: graph.stmts[d].start_line,
            use_line: graph.stmts[u].start_line,
        })
        .collect();
    FunctionFlow {
        name: name.to_string(),
        start_line: node.start_position().row as u32 + 1,
        end_line: node.end_position().row as u32 + 1,
        cfg: Cfg { blocks, edges },
        complexity: decisions as u32 + 1,
        dfg: Dfg { edges: def_use },
        syntax_error: None,
    }
}
