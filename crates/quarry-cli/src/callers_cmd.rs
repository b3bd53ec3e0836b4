//! `quarry callers NAME` and `quarry impact NAME`: the calls of a name, one step or several,
//! and what to say when there are none — including that code quarry does not parse has no
//! calls in the index (`kept_as_text`, which `status` also reads).

use anyhow::Result;
use clap::Args;
use quarry_engine::Workspace;

use crate::{agent_output, output, NothingFound};

#[derive(Args)]
pub(crate) struct CallersArgs {
    /// The called name (`save`, `Store.save` — matched by its last segment).
    name: String,
    /// Only this repo (repeatable).
    #[arg(long)]
    repo: Vec<String>,
    /// For `impact`: how many steps of callers of callers.
    #[arg(long, default_value_t = 3)]
    depth: usize,
    #[arg(long)]
    json: bool,
}

pub(crate) fn callers(dir: &std::path::Path, args: CallersArgs, transitive: bool) -> Result<()> {
    let ws = Workspace::open_existing(dir)?;
    // No caller is an empty answer: exit 1, as every search with nothing found.
    let found_any = if transitive {
        let impact = ws.impact(&args.name, &args.repo, args.depth)?;
        if args.json {
            output::print_json(&impact)?;
        } else if !impact.callers.is_empty() {
            agent_output::print_impact(&impact)?;
        }
        !impact.callers.is_empty()
    } else {
        let found = ws.callers(&args.name, &args.repo)?;
        if args.json {
            output::print_json(&found)?;
        } else if !found.calls.is_empty() {
            agent_output::print_callers(&found)?;
        }
        !found.calls.is_empty()
    };
    if !found_any {
        // Code quarry does not parse has no calls in the index: say so, not "no call".
        let unparsed = kept_as_text(&ws, &args.repo)?;
        if !unparsed.is_empty() {
            let languages: Vec<String> = unparsed
                .iter()
                .map(|k| {
                    format!(
                        "{} ({} file{})",
                        k.language,
                        k.files,
                        if k.files == 1 { "" } else { "s" }
                    )
                })
                .collect();
            return Err(NothingFound(format!(
                "no call of `{}` in the parsed code; {} {} not parsed (kept as text), so calls there are not known: `quarry grep -w {}` finds the name",
                args.name,
                languages.join(", "),
                if languages.len() == 1 { "is" } else { "are" },
                args.name
            ))
            .into());
        }
        return Err(NothingFound(format!(
            "no call of `{}` in the index (calls are matched by name; `quarry search {}` finds other mentions)",
            args.name, args.name
        ))
        .into());
    }
    Ok(())
}

/// The indexed files of `repos` (all when empty) in code languages quarry does not parse.
pub(crate) fn kept_as_text(
    ws: &Workspace,
    repos: &[String],
) -> Result<Vec<quarry_engine::answer::KeptAsText>> {
    let mut paths = Vec::new();
    for repo in ws.store().repos()? {
        if repos.is_empty() || repos.contains(&repo.name) {
            paths.extend(ws.store().file_states(repo.id)?.into_keys());
        }
    }
    Ok(quarry_engine::answer::KeptAsText::of(
        paths.iter().map(String::as_str),
    ))
}
