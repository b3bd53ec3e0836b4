//! `quarry search` and `quarry ask`: the search flags, the first stage and the second (rerank,
//! agentic follow-ups, a grounded answer), and the working-directory scoping both share with
//! the history commands.

use quarry_engine::request::{AgenticMode, Engine, SearchCall};
use quarry_engine::routing;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use quarry_core::{ContentType, Language};
use quarry_engine::{EmbedPurpose, Mode, SearchRequest, Workspace};

use crate::{output, parse_language, settings, ModeArg, NothingFound};

fn parse_content_type(s: &str) -> Result<ContentType, String> {
    ContentType::from_name(s).ok_or_else(|| format!("unknown type `{s}` (known: code, docs, all)"))
}

#[derive(Args)]
pub struct SearchArgs {
    /// What to look for: words, identifiers, a question, a whole issue text.
    #[arg(required_unless_present_any = ["stdin", "query_file"], num_args = 1..)]
    query: Vec<String>,
    /// Read the query from standard input (a whole issue or stack trace, without shell quoting).
    #[arg(long, conflicts_with_all = ["query", "query_file"])]
    stdin: bool,
    /// Read the query from a file.
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    query_file: Option<PathBuf>,
    /// How many chunks to return.
    #[arg(short = 'k', long = "limit", default_value_t = quarry_engine::request::DEFAULT_LIMIT)]
    limit: usize,
    /// How many of them carry their text (the rest: path, lines, symbol).
    #[arg(long, default_value_t = quarry_engine::request::DEFAULT_FULL_TEXT)]
    full_text: usize,
    /// Only this repo (repeatable). Run inside an indexed repo, search covers that repo
    /// unless --repo or --all-repos says otherwise.
    #[arg(long)]
    repo: Vec<String>,
    /// Search every repo of the workspace, even when run inside one of them.
    #[arg(long, conflicts_with = "repo")]
    all_repos: bool,
    /// Only this language (rust, python, go, javascript, typescript, tsx, java, c, cpp, csharp, ruby, php, kotlin, swift, shell, lua, scala, dart, markdown, rst, asciidoc, text, pdf, notebook).
    #[arg(long, value_parser = parse_language)]
    lang: Option<Language>,
    /// code (source, notebooks' code cells), docs (Markdown, reStructuredText, AsciiDoc,
    /// text, PDF pages, notebooks' markdown cells) or all.
    #[arg(long = "type", value_parser = parse_content_type, default_value = "all")]
    content_type: ContentType,
    /// Only paths matching this glob (or containing this text).
    #[arg(long)]
    path: Option<String>,
    #[arg(long, value_enum, default_value = "auto")]
    mode: ModeArg,
    /// The engine that answers, instead of the router's choice in auto mode: grep (regex
    /// lines), literal (lines with the text), structural (ast-grep pattern; --lang picks the
    /// grammar), symbol (definitions first), path, location (the definition enclosing
    /// file:line), ranked.
    #[arg(long, value_parser = parse_engine)]
    engine: Option<Engine>,
    /// A name's definitions alone, without the other places that mention it (go to
    /// definition: the symbol route, chosen with --engine symbol or by the router for a name).
    #[arg(long)]
    definitions_only: bool,
    /// Print the query plan (what an issue text's frames, code and names point at), the file
    /// ranking with each file's evidence, and each result's score parts.
    #[arg(long)]
    explain: bool,
    /// Bring the index up to date first (a size/mtime check, then hashes of what moved).
    #[arg(long)]
    sync: bool,
    /// Second stage: `llm` has a language model (llm.command, default `claude -p`, or
    /// llm.endpoint) reorder the top search.rerank_candidates results; `none` keeps the first
    /// stage's order [default: the search.rerank setting].
    #[arg(long, value_enum)]
    rerank: Option<RerankArg>,
    /// Answer the query as a question from the results with a language model, citing
    /// path:start-end (as `quarry ask`).
    #[arg(long)]
    pub answer: bool,
    /// Follow-up searches, fused with the first, until a round finds no new file (at most 3):
    /// `llm` asks the language model for them, `offline` adds the names the top results
    /// define; bare `--agentic` is `llm` when llm.command or llm.endpoint is set, else offline.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "auto")]
    agentic: Option<AgenticArg>,
    /// Print one JSON document (schema: docs/JSON.md).
    #[arg(long)]
    json: bool,
}

/// An engine's name as the JSON interfaces spell it (`grep`, `structural`, …).
fn parse_engine(s: &str) -> Result<Engine, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|_| {
        format!("unknown engine `{s}` (known: symbol, path, location, grep, literal, structural, ranked)")
    })
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AgenticArg {
    Auto,
    Llm,
    Offline,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RerankArg {
    None,
    Llm,
}

pub fn search(dir: &std::path::Path, mut args: SearchArgs) -> Result<()> {
    if args.repo.is_empty() && !args.all_repos {
        args.repo = working_directory_repo(&Workspace::open_existing(dir)?)?;
    }
    if args.sync {
        sync_before_search(dir, &args.repo)?;
    }
    let mut ws = Workspace::open_existing(dir)?;
    let config = ws.config()?;
    let mode: Mode = args.mode.into();
    let query = read_query(&args.query, args.stdin, args.query_file.as_deref())?;
    let mut request = SearchRequest::new(query);
    request.explain = args.explain;
    request.mode = mode;
    request.engine = args.engine;
    request.mentions = !args.definitions_only;
    request.repos = args.repo;
    request.language = args.lang;
    request.content = args.content_type;
    request.path = args.path;
    request.limit = args.limit;
    request.full_text = args.full_text;
    request.fusion = config.fusion();
    // The model loads only for an answer that embeds the query: a name, a path or a pattern
    // answers in milliseconds without it.
    let wants_model = args.answer || args.agentic.is_some() || routing::may_embed(&request);
    let how = match args.agentic {
        Some(agentic) => SearchCall::Agentic {
            mode: match agentic {
                AgenticArg::Llm => AgenticMode::Llm,
                AgenticArg::Offline => AgenticMode::Offline,
                AgenticArg::Auto => AgenticMode::Auto,
            },
        },
        None => SearchCall::Routed {
            rerank: args.rerank.map(|r| r == RerankArg::Llm),
        },
    };
    // A search is the workspace daemon's when one answers: one that embeds its query (on an
    // index with vectors) finds the model loaded there (a daemon starts for the next call
    // when none runs); any other finds the index open there, if one runs. Otherwise it runs
    // here as always.
    let has_vectors = ws.store().embedding_model()?.is_some();
    let warm = match (args.answer, wants_model) {
        (true, _) => None,
        (false, true) if has_vectors => quarry_daemon::client::search(dir, &request, &how)?,
        (false, true) => None,
        (false, false) => quarry_daemon::client::search_if_running(dir, &request, &how)?,
    };
    let mut model_attached = false;
    if wants_model && warm.is_none() {
        model_attached = attach_model(dir, &mut ws, mode)?;
    }
    if args.answer {
        return ask(&ws, &config, &request, args.json);
    }
    let response = if let Some(response) = warm {
        response
    } else {
        let mut response = ws.search_as(&request, &how, &config)?;
        let handed_over = response.route.as_ref().is_some_and(|r| r.note.is_some());
        let routed = matches!(how, SearchCall::Routed { .. });
        if routed && handed_over && !model_attached && mode == Mode::Auto {
            // An exact route found nothing and ranked search answered lexically: with the
            // model (the daemon's, else loaded here), ranked search answers again (the exact
            // route is not asked twice).
            let mut ranked = request.clone();
            ranked.engine = Some(Engine::Ranked);
            let again = match has_vectors {
                true => quarry_daemon::client::search(dir, &ranked, &how)?,
                false => None,
            };
            let again = match again {
                Some(answer) => Some(answer),
                None if attach_model(dir, &mut ws, mode)? => {
                    Some(ws.search_as(&ranked, &how, &config)?)
                }
                None => None,
            };
            if let Some(mut again) = again {
                again.route = response.route.take();
                response = again;
            }
        }
        response
    };
    for warning in &response.warnings {
        eprintln!("quarry: warning: {warning}");
    }
    if args.json {
        output::print_json(&response)?;
    } else {
        output::print_search(&response, args.explain)?;
    }
    if response.results.is_empty() {
        return Err(NothingFound(format!(
            "no results for \"{}\" in {} (exit 1)",
            response.query.chars().take(80).collect::<String>(),
            if response.index.repos.is_empty() {
                "an empty workspace".to_string()
            } else {
                response.index.repos.join(", ")
            }
        ))
        .into());
    }
    Ok(())
}

/// Attaches the embedding model for a search in `mode`; whether it did. In `auto` mode a
/// missing model or vectors is said once and the search goes on lexically.
fn attach_model(dir: &std::path::Path, ws: &mut Workspace, mode: Mode) -> Result<bool> {
    if mode == Mode::Lexical {
        return Ok(false);
    }
    match ws.attach_embedder(EmbedPurpose::Searching)? {
        None => Ok(true),
        Some(note) if mode != Mode::Auto => anyhow::bail!("{}", note.message),
        Some(note) => {
            settings::tell(dir, &note, "searching lexically");
            Ok(false)
        }
    }
}

/// `quarry ask`: the model's answer and its checked sources, or the ranked chunks when no model
/// answered.
fn ask(
    ws: &Workspace,
    config: &quarry_engine::Config,
    request: &SearchRequest,
    json: bool,
) -> Result<()> {
    let model = quarry_engine::language_model(config)?;
    let response = ws.ask(request, model.as_ref())?;
    for warning in &response.search.warnings {
        eprintln!("quarry: warning: {warning}");
    }
    if json {
        output::print_json(&response)?;
    } else if let Some(answer) = &response.answer {
        output::print_answer(&response, answer)?;
    } else {
        eprintln!(
            "quarry: no answer: {}",
            response.note.as_deref().unwrap_or("")
        );
        output::print_search(&response.search, false)?;
    }
    if response.answer.is_none() && response.search.results.is_empty() {
        return Err(NothingFound(format!(
            "no results for \"{}\" (exit 1)",
            response.question.chars().take(80).collect::<String>()
        ))
        .into());
    }
    Ok(())
}

/// The repo a command run from the working directory is about: the indexed repo that contains
/// it, when the workspace holds more than one (with one, scoping changes nothing).
pub(crate) fn working_directory_repo(ws: &Workspace) -> Result<Vec<String>> {
    scope_to_working_directory(ws, "searching", "searches", "quarry index")
}

/// The repo the working directory is in, when the workspace has several: a command run
/// inside one repo works on that repo (`doing` it; `--all-repos` `does` all), as `git` does.
/// Run inside a git repository the workspace does not hold, it works on the workspace's repos
/// and says so, with the command (`add_with`) that would add it.
pub(crate) fn scope_to_working_directory(
    ws: &Workspace,
    doing: &str,
    does: &str,
    add_with: &str,
) -> Result<Vec<String>> {
    let repos = ws.store().repos()?;
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(Vec::new());
    };
    let here = ws.repo_containing(&cwd)?;
    if here.is_none() && !repos.is_empty() {
        if let Some(root) = unindexed_git_root(&cwd) {
            let names: Vec<&str> = repos.iter().map(|r| r.name.as_str()).take(5).collect();
            let more = repos.len().saturating_sub(names.len());
            eprintln!(
                "quarry: {} is not in this workspace ({}); {doing} {}{} instead. `{add_with} {}` adds it",
                root.display(),
                ws.dir().display(),
                names.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() },
                root.display(),
            );
        }
    }
    if repos.len() < 2 {
        return Ok(Vec::new());
    }
    Ok(match here {
        Some((repo, _)) => {
            if std::io::stderr().is_terminal() {
                eprintln!(
                    "quarry: {doing} {} (the repo this folder is in; --all-repos {does} all {})",
                    repo.name,
                    repos.len()
                );
            }
            vec![repo.name]
        }
        None => Vec::new(),
    })
}

/// The git repository `cwd` is in (its top folder), for a command run there that the
/// workspace does not hold: the command still answers from the workspace's repos, and says
/// so, since an agent asking about the repo it works in would otherwise read another repo's
/// answers as this one's.
fn unindexed_git_root(cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(std::path::Path::to_path_buf)
}

/// `search --sync`: re-indexes the searched repos' changed files (and embeds their chunks).
fn sync_before_search(dir: &std::path::Path, repos: &[String]) -> Result<()> {
    Workspace::open_existing(dir)?;
    let wait = std::time::Duration::from_secs(10);
    let (mut ws, _lock) = Workspace::open_for_writing(dir, wait, false)?;
    let reports = ws.reindex_repos(repos)?;
    if reports.iter().any(|r| r.added + r.changed > 0) {
        let names: Vec<String> = reports.iter().map(|r| r.repo.clone()).collect();
        ws.embed_changes(&names)?;
    }
    Ok(())
}

/// The query of `search` and `log`: the words given, or a whole issue read from standard input
/// or a file. One read from a pipe or a file that is too long to search is cut to its head
/// (title, text, first trace) and the cut is said, rather than refused.
pub(crate) fn read_query(
    words: &[String],
    stdin: bool,
    file: Option<&std::path::Path>,
) -> Result<String> {
    let query = if stdin {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("cannot read the query from standard input")?;
        text
    } else if let Some(file) = file {
        std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the query file {}", file.display()))?
    } else {
        return Ok(words.join(" "));
    };
    Ok(match quarry_engine::request::head_of_long_query(&query) {
        Some(head) => {
            eprintln!(
                "quarry: note: the query is {} characters; searched its first {} ({} of {} lines; quarry reads at most {})",
                query.chars().count(),
                head.chars().count(),
                head.lines().count(),
                query.lines().count(),
                quarry_engine::request::MAX_QUERY_CHARS
            );
            head
        }
        None => query,
    })
}
