//! The flow as an agent reads it at a glance: one line per basic block, its lines and where
//! control goes next and why (`5 → 6 true, 11 false`).

use std::fmt::Write;

use crate::{EdgeKind, FunctionFlow};

impl FunctionFlow {
    /// The function's header line and its blocks, each `lines → next lines (why)`, indented
    /// by `indent`.
    pub fn render(&self, indent: &str) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "{indent}{} {}-{}  complexity {}, {} def-use pairs",
            self.name,
            self.start_line,
            self.end_line,
            self.complexity,
            self.dfg.edges.len()
        );
        if let Some(at) = self.syntax_error {
            let _ = write!(out, "  (does not parse at line {at}: drawn from what did)");
        }
        out.push('\n');
        let name = |id: usize| -> String {
            match id {
                0 => "entry".to_string(),
                1 => "exit".to_string(),
                _ => self.cfg.blocks.get(id).map_or_else(String::new, |b| {
                    if b.start_line == b.end_line {
                        b.start_line.to_string()
                    } else {
                        format!("{}-{}", b.start_line, b.end_line)
                    }
                }),
            }
        };
        let mut order: Vec<usize> = (0..self.cfg.blocks.len()).filter(|&b| b != 1).collect();
        order.sort_by_key(|&b| (b != 0, self.cfg.blocks[b].start_line, b));
        for b in order {
            let next: Vec<String> = self
                .cfg
                .edges
                .iter()
                .filter(|e| e.from == b)
                .map(|e| {
                    let to = match e.to {
                        1 => "exit".to_string(),
                        to => self
                            .cfg
                            .blocks
                            .get(to)
                            .map_or_else(String::new, |t| t.start_line.to_string()),
                    };
                    match e.kind {
                        EdgeKind::Next => to,
                        kind => format!("{to} {}", kind.label()),
                    }
                })
                .collect();
            let _ = writeln!(out, "{indent}  {} → {}", name(b), next.join(", "));
        }
        out
    }
}

impl EdgeKind {
    /// The edge's label as JSON writes it.
    pub fn label(self) -> &'static str {
        match self {
            EdgeKind::Next => "next",
            EdgeKind::True => "true",
            EdgeKind::False => "false",
            EdgeKind::Back => "back",
            EdgeKind::Break => "break",
            EdgeKind::Continue => "continue",
            EdgeKind::Return => "return",
            EdgeKind::Raise => "raise",
            EdgeKind::Exception => "exception",
            EdgeKind::Fallthrough => "fallthrough",
            EdgeKind::Defer => "defer",
        }
    }
}
