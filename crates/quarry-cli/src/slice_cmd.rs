//! `quarry slice FILE:LINE`: the lines that can change a variable at a line (backward), or
//! that the line's definitions reach (forward) — the few lines of a long function an agent
//! chasing a wrong value needs to read.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use crate::output;

#[derive(Args)]
pub struct SliceArgs {
    /// The file and line: `src/app.py:42`.
    pub at: String,
    /// The variable at that line (default: every variable the line reads, or, forward, defines).
    #[arg(long)]
    pub var: Option<String>,
    /// What the line's definitions reach, instead of what reaches the line.
    #[arg(long)]
    pub forward: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

pub fn slice(args: SliceArgs) -> Result<()> {
    let Some((file, line)) = args
        .at
        .rsplit_once(':')
        .and_then(|(f, l)| Some((f, l.parse::<u32>().ok()?)))
        .filter(|(_, l)| *l > 0)
    else {
        bail!(
            "`{}` is not FILE:LINE: give the file and a line number, as in src/app.py:42",
            args.at
        );
    };
    let answer = quarry_engine::summary::slice(
        &PathBuf::from(file),
        file,
        line,
        args.var.as_deref(),
        args.forward,
    )?;
    if args.json {
        return output::print_json(&answer);
    }
    let s = &answer.slice;
    let what = match (&s.var, s.forward) {
        (Some(v), false) => format!("what can change `{v}` at line {}", s.line),
        (None, false) => format!("what line {} reads", s.line),
        (Some(v), true) => format!("what `{v}` at line {} reaches", s.line),
        (None, true) => format!("what line {} reaches", s.line),
    };
    println!(
        "{}: {what}, in {} — {} of its lines ({})",
        answer.path,
        s.function,
        s.lines.len(),
        s.note
    );
    let mut previous = None;
    for code in &answer.code {
        if previous.is_some_and(|p: u32| code.line > p + 1) {
            println!("     ⋮");
        }
        println!("{:>6}  {}", code.line, code.text);
        previous = Some(code.line);
    }
    Ok(())
}
