//! Human output of the agent tools: symbol context, call graphs, callers and impact.

use anyhow::Result;
use quarry_engine::answer::{CallGraph, SymbolContext, Target};
use quarry_engine::graph::{Callers, Impact};
use std::io::Write;

/// The name a target stands for (a type line says which type it is).
fn target_name(t: &Target) -> &str {
    match t {
        Target::File { qualified_name, .. } => qualified_name,
        Target::Index(s) => &s.qualified_name,
        Target::Ambiguous { candidates } => candidates.first().map_or("?", |s| s.name.as_str()),
        Target::Unknown => "?",
    }
}

fn target(t: &Target) -> String {
    match t {
        Target::File {
            start_line,
            end_line,
            signature,
            ..
        } => format!(
            "here {start_line}-{end_line}  {}",
            signature.as_deref().unwrap_or("")
        ),
        Target::Index(s) => format!(
            "{}:{}-{}  {}",
            crate::output::shown(&s.path),
            s.start_line,
            s.end_line,
            s.signature.as_deref().unwrap_or("")
        ),
        Target::Ambiguous { candidates } => {
            let places: Vec<String> = candidates
                .iter()
                .take(3)
                .map(|s| format!("{}:{}", crate::output::shown(&s.path), s.start_line))
                .collect();
            format!(
                "{} definitions by that name: {}",
                candidates.len(),
                places.join(", ")
            )
        }
        Target::Unknown => "not defined in the index".into(),
    }
}

pub fn print_context(c: &SymbolContext) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let s = &c.symbol;
    writeln!(
        out,
        "{} {}-{} {} {}",
        crate::output::shown(&c.path),
        s.start_line,
        s.end_line,
        s.kind,
        s.qualified_name
    )?;
    for (i, line) in c.source.lines().enumerate() {
        writeln!(out, "{:>6}  {line}", s.start_line as usize + i)?;
    }
    writeln!(out, "\ncalls ({}):", c.calls.len())?;
    for e in &c.calls {
        writeln!(out, "  {:<24} {}", e.callee, target(&e.target))?;
    }
    writeln!(out, "\ncalled by ({}, matched by name):", c.callers.len())?;
    for caller in &c.callers {
        writeln!(
            out,
            "  {}:{}  {}  {}",
            crate::output::shown(&caller.path),
            caller.line,
            caller.caller.as_deref().unwrap_or("(top level)"),
            caller.signature.as_deref().unwrap_or("")
        )?;
    }
    if !c.types.is_empty() {
        writeln!(out, "\ntypes:")?;
        for t in &c.types {
            writeln!(out, "  {:<24} {}", target_name(t), target(t))?;
        }
    }
    Ok(())
}

pub fn print_call_graph(g: &CallGraph) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} — {} call sites (resolved by name)",
        crate::output::shown(&g.path),
        g.edges.len()
    )?;
    let mut last: Option<&Option<String>> = None;
    for e in &g.edges {
        if last != Some(&e.caller) {
            writeln!(out, "{}", e.caller.as_deref().unwrap_or("(top level)"))?;
            last = Some(&e.caller);
        }
        writeln!(
            out,
            "  {:>5} → {:<24} {}",
            e.line,
            e.callee,
            target(&e.target)
        )?;
    }
    if !g.flow.is_empty() {
        writeln!(
            out,
            "flow: each block's lines → where control goes next (`quarry slice FILE:LINE` for a line's slice, --json for def-use pairs)"
        )?;
    }
    for f in &g.flow {
        write!(out, "{}", f.render("  "))?;
    }
    if let Some(note) = &g.flow_note {
        writeln!(out, "flow: {note}")?;
    }
    Ok(())
}

pub fn print_callers(c: &Callers) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for call in &c.calls {
        writeln!(
            out,
            "{}:{}  {}",
            crate::output::shown(&call.path),
            call.line,
            call.caller.as_deref().unwrap_or("(top level)")
        )?;
    }
    eprintln!(
        "{} call sites of `{}` (matched by name)",
        c.calls.len(),
        c.name
    );
    Ok(())
}

pub fn print_impact(i: &Impact) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for e in &i.callers {
        writeln!(
            out,
            "{}{}:{}  {}",
            "  ".repeat(e.depth - 1),
            crate::output::shown(&e.path),
            e.line,
            e.caller.as_deref().unwrap_or("(top level)")
        )?;
    }
    eprintln!(
        "{} callers up to {} steps in {} files{} (matched by name)",
        i.callers.len(),
        i.max_depth,
        i.files.len(),
        if i.truncated {
            ", stopped at the limit"
        } else {
            ""
        }
    );
    Ok(())
}
