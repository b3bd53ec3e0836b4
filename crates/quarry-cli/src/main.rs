//! The `quarry` command. Thin by design: it parses arguments, calls quarry-engine, and prints
//! results — to stdout only the results (human or `--json`), everything else to stderr.

mod agent_output;
mod answers;
mod callers_cmd;
mod daemon_cmd;
mod eval_cmd;
mod exact_cmd;
mod history_cmd;
mod hook;
mod hook_install;
mod output;
mod progress;
mod search_cmd;
mod settings;
mod slice_cmd;

use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use output::exit_code;
use quarry_core::Language;
use quarry_engine::commit_search::HistoryEmbedScope;
use quarry_engine::{DiscoverOptions, EmbedPurpose, IndexOptions, Mode, Workspace};
use std::path::PathBuf;
use std::time::Duration;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "quarry",
    version,
    about = "Find code by name, by shape and by meaning — locally, in milliseconds."
)]
struct Cli {
    /// The workspace folder holding the index [default: $QUARRY_HOME, else ~/.local/share/quarry].
    #[arg(long, global = true, value_name = "DIR")]
    index_dir: Option<PathBuf>,
    /// Keep the index on PostgreSQL with pgvector (postgres://user@host/db) or OpenSearch
    /// (opensearch+http://host:9200/PREFIX) instead of the workspace's SQLite file
    /// [default: $QUARRY_DB_URL, else the workspace's store.url].
    #[arg(long, global = true, value_name = "URL")]
    db_url: Option<String>,
    /// A hot standby of the PostgreSQL store that searches may read from (repeatable; the
    /// first that answers and trails by at most store.max_lag_s) [default:
    /// $QUARRY_DB_READ_URLS, else the workspace's store.read_urls].
    #[arg(long, global = true, value_name = "URL")]
    db_read_url: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Index a repository (or update its index: only changed files are re-read).
    Index(IndexArgs),
    /// Search the indexed code.
    Search(search_cmd::SearchArgs),
    /// Lines matching a regular expression or literal, with ripgrep's flags and output; files
    /// the index proves cannot match are not read (works without an index too).
    Grep(exact_cmd::GrepArgs),
    /// Structural search with ast-grep patterns ('def $F($$$ARGS):', '$X.unwrap()'): matches
    /// with their lines and captured metavariables.
    Sg(exact_cmd::SgArgs),
    /// Answer a question from the top search results with a language model (llm.command,
    /// default `claude -p`, or llm.endpoint), citing path:start-end; citations are checked
    /// against the chunks it was given. Without a model: the ranked chunks.
    Ask(search_cmd::SearchArgs),
    /// Show what is indexed: files, chunks, languages, skipped files, freshness, store size.
    Status(StatusArgs),
    /// Outline a file: every definition with its lines, signature and doc line, type
    /// members, imports on one line — a fraction of the file's tokens.
    Summary(SummaryArgs),
    /// The lines of a function that can change a variable at FILE:LINE (or, with --forward,
    /// that the line reaches): data and control dependences (Python, Go, JavaScript,
    /// TypeScript, Rust, Java, C, C++, C#, Objective-C, Ruby, PHP).
    Slice(slice_cmd::SliceArgs),
    /// Ingest new commits of the workspace's repos (or of the given repository folders).
    Sync(history_cmd::SyncArgs),
    /// Search commits by words, identifiers or paths, with author/date/path filters.
    Log(history_cmd::LogArgs),
    /// One commit by SHA (a unique prefix): metadata, files with +/- counts, the patch.
    Show(history_cmd::ShowArgs),
    /// Commits that changed a file or folder, following renames.
    Touches(history_cmd::TouchesArgs),
    /// Add (index + history), list or remove repositories.
    Repo(history_cmd::RepoArgs),
    /// Where a name is called (by name; see docs/ARCHITECTURE.md for the limits).
    Callers(callers_cmd::CallersArgs),
    /// Transitive callers of a name and the files they are in: what a change to it affects.
    Impact(callers_cmd::CallersArgs),
    /// Agent integration: the Claude Code hook (`claude`), and installing it.
    Hook(hook_install::HookArgs),
    /// Score retrieval on a query set (JSONL, the format of the shared evaluation sets).
    Eval(eval_cmd::EvalArgs),
    /// Read or change the workspace's settings (config.toml beside the index).
    Config(settings::ConfigArgs),
    /// List, install or choose the embedding model.
    Model(settings::ModelArgs),
    /// Serve MCP on stdin/stdout (tools: search, search_commits, touches, summary, slice, status).
    Mcp,
    /// Serve the HTTP API (loopback by default; see /api/openapi.json).
    Serve(ServeArgs),
    /// Keep the index current: re-index files as they change (Ctrl-C stops).
    Watch(WatchArgs),
    /// The workspace's resident quarry: keeps the model and the index warm so searches that
    /// embed their query answer in milliseconds (started on demand unless daemon.auto = false).
    Daemon(daemon_cmd::DaemonArgs),
}

#[derive(Args)]
struct WatchArgs {
    /// Repository folders [default: every indexed repo of the workspace].
    paths: Vec<std::path::PathBuf>,
    /// Seconds to wait for another quarry process that is writing the index.
    #[arg(long, default_value_t = 30.0)]
    lock_wait: f64,
    /// Print one JSON line per re-index pass.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:7777")]
    addr: std::net::SocketAddr,
    /// Token every request must send (`Authorization: Bearer TOKEN`).
    #[arg(long, env = "QUARRY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Allow a non-loopback address (needs a token).
    #[arg(long)]
    allow_remote: bool,
    /// Connections held open at once; more are closed when they arrive.
    #[arg(long, default_value_t = quarry_http::Limits::default().max_connections)]
    max_connections: usize,
    /// Seconds a connection may take to send a request's headers (or sit idle).
    #[arg(long, default_value_t = quarry_http::Limits::default().header_timeout.as_secs_f64())]
    header_timeout: f64,
    /// Requests at work at once [default: two per CPU]; a few more wait, the rest get 503.
    #[arg(long)]
    max_concurrent: Option<usize>,
    /// Open the search page in the default browser once the server listens.
    #[arg(long)]
    open: bool,
}

#[derive(Args)]
struct IndexArgs {
    /// Repository folders to index [default: the current folder].
    paths: Vec<PathBuf>,
    /// Drop the stored index of these repos (or a damaged index file) and start over.
    #[arg(long)]
    rebuild: bool,
    /// Skip files larger than this (bytes; K, M and G suffixes accepted).
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    max_file_size: u64,
    /// Skip PDFs and notebooks larger than this (bytes; K, M and G suffixes accepted).
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    max_document_size: u64,
    /// Stop reading a PDF after this many seconds (it is skipped as `pdf-timeout`).
    #[arg(long, default_value_t = 60.0)]
    pdf_timeout: f64,
    /// Index at most this many files per repo.
    #[arg(long, default_value_t = 200_000)]
    max_files: usize,
    /// Name of the repo in the workspace [default: the folder's name].
    #[arg(long)]
    name: Option<String>,
    /// Index lexically only: do not embed chunks (a later `quarry index` embeds them).
    #[arg(long)]
    no_embed: bool,
    /// Seconds to wait for another quarry process that is writing the index.
    #[arg(long, default_value_t = 10.0)]
    lock_wait: f64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    /// BM25 over code-aware tokens.
    Lexical,
    /// Nearest neighbours of the query's embedding (needs the model).
    Semantic,
    /// Both, fused by what the query names (needs the model).
    Hybrid,
    /// The router picks the engine by what the query is: a name's definitions first, a path's
    /// files, grep for literal text and regexes, ast-grep for `$META` patterns, ranked search
    /// (hybrid when the index has vectors and the model is installed, else lexical) for
    /// questions and issue texts. `--explain` shows the class and the route.
    Auto,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Lexical => Mode::Lexical,
            ModeArg::Semantic => Mode::Semantic,
            ModeArg::Hybrid => Mode::Hybrid,
            ModeArg::Auto => Mode::Auto,
        }
    }
}

#[derive(Args)]
struct SummaryArgs {
    /// The file to outline.
    file: PathBuf,
    /// structure: the outline; context: one definition's source, calls, callers and types
    /// (needs --symbol); extract: the file's call graph and each function's control flow
    /// (basic blocks, labelled edges, complexity) and def-use pairs.
    #[arg(long, value_enum, default_value = "structure")]
    mode: SummaryMode,
    /// The definition for `--mode context` (qualified like `Class.method`, or bare); with
    /// `--mode extract`, the one function whose flow to show.
    #[arg(long)]
    symbol: Option<String>,
    /// Print JSON (schema: docs/JSON.md).
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum SummaryMode {
    Structure,
    Context,
    Extract,
}

#[derive(Args)]
struct StatusArgs {
    /// Also verify the index file (SQLite's quick check; reads the whole file).
    #[arg(long)]
    check: bool,
    /// With --check: also SQLite's full integrity check, the full-text indexes' own checks
    /// and every stored vector (finds small damage inside pages; slower).
    #[arg(long, requires = "check")]
    deep: bool,
    #[arg(long)]
    json: bool,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, factor) = match s.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .map(|n| n * factor)
        .map_err(|_| format!("`{s}` is not a size (e.g. 1048576, 512K, 1M)"))
}

fn parse_language(s: &str) -> Result<Language, String> {
    Language::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
        format!("unknown language `{s}` (known: {})", names.join(", "))
    })
}

/// What `quarry --help` says of the languages, from the one list of them.
fn languages_help() -> String {
    let parsed: Vec<&str> = quarry_core::Language::ALL
        .iter()
        .filter(|l| l.is_code())
        .map(|l| l.name())
        .collect();
    format!(
        "Languages parsed (definitions, calls, outlines, structural search, colours): {}.\n\
         Documents read by their headings: markdown, rst, asciidoc, pdf, notebook cells, text.\n\
         Code in other languages is indexed as text, and `index` and `status` name it.",
        parsed.join(", ")
    )
}

fn main() {
    // Until the command is known (the first allocations fault in mimalloc's first pages).
    huge_pages(false);
    quit_quietly_when_stdout_closes();
    let matches = <Cli as clap::CommandFactory>::command()
        .after_help(languages_help())
        .get_matches();
    let mut cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Command::Grep(args), Some(("grep", grep))) = (&mut cli.command, matches.subcommand()) {
        args.order_types(grep);
    }
    if let Some(url) = &cli.db_url {
        // The engine reads the store's URL from here (one place for flag, variable and
        // setting); set before any thread starts.
        std::env::set_var("QUARRY_DB_URL", url);
    }
    if !cli.db_read_url.is_empty() {
        std::env::set_var("QUARRY_DB_READ_URLS", cli.db_read_url.join(","));
    }
    if std::env::var_os("ORT_DISABLE_TELEMETRY").is_none() {
        // onnxruntime's Linux build carries Microsoft's 1DS telemetry: unless this is set it
        // creates an event store under ~/.cache/Microsoft/DeveloperTools when the model loads.
        // quarry sends nothing anywhere. Set before any thread starts.
        std::env::set_var("ORT_DISABLE_TELEMETRY", "1");
    }
    if !matches!(cli.command, Command::Grep(_) | Command::Sg(_)) {
        huge_pages(true);
    }
    let dir = cli.index_dir.clone().unwrap_or_else(Workspace::default_dir);
    // A writer given --db-url stores there; the workspace remembers the URL so that the
    // next command, without the flag, finds its index.
    let url_to_remember = cli.db_url.clone().filter(|_| {
        matches!(
            cli.command,
            Command::Index(_) | Command::Sync(_) | Command::Repo(_) | Command::Watch(_)
        )
    });
    let workspace_flag = cli.index_dir.as_ref().map(|d| {
        let absolute = std::path::absolute(d).unwrap_or_else(|_| d.clone());
        format!(
            " --index-dir {}",
            output::shell_word(&absolute.to_string_lossy())
        )
    });
    let result = run(cli);
    let stored = match &result {
        Ok(()) => true,
        Err(e) => e.downcast_ref::<Interrupted>().is_some(),
    };
    if let (Some(url), true) = (url_to_remember, stored) {
        settings::remember_store_url(&dir, &url);
    }
    if let Err(err) = result {
        let err = Workspace::diagnose(&dir, err);
        if is_broken_pipe(&err) {
            std::process::exit(0);
        }
        if let Some(Interrupted(resume)) = err.downcast_ref::<Interrupted>() {
            // The same workspace: its folder when one was named (its store URL is remembered).
            let resume = match (&workspace_flag, resume.strip_prefix("quarry ")) {
                (Some(flag), Some(rest)) => format!("quarry{flag} {rest}"),
                _ => resume.clone(),
            };
            eprintln!(
                "quarry: interrupted; what was stored is kept and searchable. `{resume}` resumes"
            );
            std::process::exit(progress::INTERRUPTED_EXIT);
        }
        if let Some(nothing) = err.downcast_ref::<NothingFound>() {
            eprintln!("quarry: {}", nothing.0);
            std::process::exit(exit_code::NOTHING_FOUND);
        }
        eprintln!("quarry: error: {err:#}");
        std::process::exit(exit_code::ERROR);
    }
}

/// For a command that lives a few milliseconds (grep, sg): no transparent huge pages. Where
/// the system offers them on request, mimalloc asks for them, and the kernel then zeroes 2 MiB
/// at the first touch of each region: 0.5-0.8 ms of a 9 ms `quarry grep`, and 18% of the CPU
/// of one answered by the daemon (measured on sympy). Long runs (indexing, embedding) keep
/// them.
fn huge_pages(allowed: bool) {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes one integer argument and touches no memory of ours.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            libc::c_ulong::from(!allowed),
            0,
            0,
            0,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = allowed;
}

/// Exit codes, as grep and ripgrep use them (README.md, "Exit codes").
/// A search with no answer: not an error, but exit 1, so scripts can tell "nothing" from
/// "something" (`quarry search X && ...`). The `--json` document is still printed.
#[derive(Debug)]
pub(crate) struct NothingFound(pub String);

impl std::fmt::Display for NothingFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NothingFound {}

/// Long work stopped by Ctrl-C after a batch; holds the command that resumes it. Each phase
/// has printed its summary line by then.
#[derive(Debug)]
pub(crate) struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted; `{}` resumes", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// A reader that stops reading (`quarry log | head -1`) is a normal end, as for grep: no
/// "Broken pipe" error and exit 0. Rust ignores SIGPIPE, so the write fails instead: an
/// error up the chain, or a panic inside `println!`, which this hook turns into a quiet exit.
fn quit_quietly_when_stdout_closes() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    // serde_json's error hides the io::Error it wraps from the chain (its `source` is the io
    // error's own source): ask it for the kind.
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(BrokenPipe))
    })
}

fn run(cli: Cli) -> Result<()> {
    let dir = cli.index_dir.clone().unwrap_or_else(Workspace::default_dir);
    match cli.command {
        Command::Index(args) => index(&dir, args),
        Command::Search(args) => search_cmd::search(&dir, args),
        Command::Grep(args) => exact_cmd::grep(&dir, args),
        Command::Sg(args) => exact_cmd::sg(&dir, args),
        Command::Ask(mut args) => {
            args.answer = true;
            search_cmd::search(&dir, args)
        }
        Command::Status(args) => status(&dir, args),
        Command::Eval(args) => eval_cmd::evaluate(&dir, args),
        Command::Summary(args) => summary(&dir, args),
        Command::Slice(args) => slice_cmd::slice(args),
        Command::Sync(args) => history_cmd::sync(&dir, args),
        Command::Mcp => quarry_mcp::serve_stdio(&dir),
        Command::Watch(args) => watch(&dir, args),
        Command::Daemon(args) => daemon_cmd::daemon(&dir, args),
        Command::Serve(args) => quarry_http::serve(
            &dir,
            quarry_http::ServeOptions {
                addr: args.addr,
                token: args.token,
                allow_remote: args.allow_remote,
                open: args.open,
                limits: quarry_http::Limits {
                    max_connections: args.max_connections,
                    header_timeout: std::time::Duration::from_secs_f64(
                        args.header_timeout.max(0.001),
                    ),
                    max_concurrent: args
                        .max_concurrent
                        .unwrap_or(quarry_http::Limits::default().max_concurrent),
                    ..Default::default()
                },
            },
        ),
        Command::Log(args) => history_cmd::log(&dir, args),
        Command::Show(args) => history_cmd::show(&dir, args),
        Command::Touches(args) => history_cmd::touches(&dir, args),
        Command::Repo(args) => history_cmd::repo(&dir, args),
        Command::Callers(args) => callers_cmd::callers(&dir, args, false),
        Command::Impact(args) => callers_cmd::callers(&dir, args, true),
        Command::Hook(args) => hook_install::hook(&cli.index_dir, &dir, args),
        Command::Config(args) => settings::config(&dir, args),
        Command::Model(args) => settings::model(&dir, args),
    }
}

fn index(dir: &std::path::Path, args: IndexArgs) -> Result<()> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    };
    let wait = Duration::from_secs_f64(args.lock_wait.max(0.0));
    let (mut ws, lock) = Workspace::open_for_writing(dir, wait, args.rebuild)?;
    if let Some(aside) = &ws.moved_aside {
        eprintln!(
            "quarry: the index was damaged; it was moved to {} (kept for inspection) and a new one is built. Repos not named here must be indexed again, and git history synced before must be synced again (`quarry sync`).",
            aside.display()
        );
    }
    let opts = IndexOptions {
        discover: DiscoverOptions {
            max_file_size: args.max_file_size,
            max_files: args.max_files,
            max_document_size: args.max_document_size,
        },
        rebuild: args.rebuild,
        name: args.name,
        pdf: quarry_engine::PdfLimits {
            timeout: std::time::Duration::from_secs_f64(args.pdf_timeout.clamp(0.1, 86_400.0)),
            ..Default::default()
        },
        ..Default::default()
    };
    let progress = progress::Bars::new();
    progress::stop_on_ctrl_c();
    let mut reports = Vec::new();
    for path in &paths {
        let report = ws.index_repo(path, &opts, &progress)?;
        ws.keep_file_list(std::path::Path::new(&report.root));
        if !args.json {
            output::print_index_report(&report);
        }
        reports.push(report);
        if progress::interrupted() {
            break;
        }
    }
    // From here on, the lock is held only while a batch of vectors is stored.
    ws.lock_per_batch(lock);
    let mut embedding = None;
    // Also after a Ctrl-C: the backfill then stores nothing more, and its report says how many
    // chunks have vectors, whenever the Ctrl-C came.
    if !args.no_embed {
        match ws.attach_embedder(EmbedPurpose::Indexing)? {
            Some(note) => settings::tell(dir, &note, "indexing lexically only"),
            None => {
                // Lexical search already works; an interrupted backfill resumes next run. Only
                // the repos of this run: another's chunks indexed with --no-embed stay so.
                let names: Vec<String> = reports.iter().map(|r| r.repo.clone()).collect();
                embedding = ws.embed_pending(&progress, &names)?;
                if let Some(e) = &embedding {
                    if let (Some(why), false) = (&e.interrupted, progress::interrupted()) {
                        eprintln!("quarry: warning: embedding stopped: {why}; what was embedded is kept, `quarry index` resumes");
                    }
                    if !args.json {
                        output::print_embed_report(e);
                    }
                }
            }
        }
    }
    // A rebuild stopped before its switch did not happen: it starts again, whole.
    let undone = reports.iter().any(|r| r.rebuild_undone);
    if args.json {
        output::print_json(&answers::IndexRun {
            repos: reports,
            embedding,
            moved_aside: ws.moved_aside.clone(),
        })?;
    }
    if progress::interrupted() {
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let paths: Vec<String> = paths.iter().map(|p| output::shell_word(p)).collect();
        let flag = if undone { "--rebuild " } else { "" };
        return Err(Interrupted(format!("quarry index {flag}{}", paths.join(" "))).into());
    }
    Ok(())
}

fn summary(dir: &std::path::Path, args: SummaryArgs) -> Result<()> {
    use quarry_engine::summary;
    let shown = args.file.to_string_lossy().into_owned();
    // Context and extract resolve names through the index when there is one.
    let ws = || Workspace::open_existing(dir).ok();
    match (args.mode, &args.symbol) {
        (SummaryMode::Structure, _) => {
            let outline = summary::summarize_file_in(ws().as_ref(), &args.file, &shown)?;
            if args.json {
                return output::print_json(&outline);
            }
            print!("{}", summary::render(&outline));
            Ok(())
        }
        (SummaryMode::Context, None) => anyhow::bail!("--mode context needs --symbol NAME"),
        (SummaryMode::Context, Some(symbol)) => {
            let ws = ws();
            let context = summary::symbol_context(ws.as_ref(), &args.file, &shown, symbol)?;
            if args.json {
                return output::print_json(&context);
            }
            agent_output::print_context(&context)
        }
        (SummaryMode::Extract, symbol) => {
            let ws = ws();
            let graph = summary::call_graph(ws.as_ref(), &args.file, &shown, symbol.as_deref())?;
            if args.json {
                return output::print_json(&graph);
            }
            agent_output::print_call_graph(&graph)
        }
    }
}

fn status(dir: &std::path::Path, args: StatusArgs) -> Result<()> {
    let store_url = Workspace::store_url(dir)?;
    // Where the index is: the workspace's file, or the PostgreSQL database (password hidden).
    let file = match &store_url {
        Some(url) => std::path::PathBuf::from(quarry_engine::redact_store_url(url)),
        None => Workspace::index_file(dir),
    };
    if store_url.is_none() && !file.exists() {
        if args.json {
            return output::print_json(&answers::StatusReport {
                index: file,
                repos: Vec::new(),
                history: Vec::new(),
                history_embed_recent: None,
                store_bytes: 0,
                embedding: None,
                check: None,
                served_by: None,
            });
        }
        eprintln!(
            "nothing indexed yet in {}: run `quarry index PATH`",
            dir.display()
        );
        return Ok(());
    }
    if args.check && store_url.is_none() {
        let checked = if args.deep {
            Workspace::check_deep(dir)
        } else {
            Workspace::check(dir)
        };
        match checked {
            quarry_engine::Checked::Sound => {}
            quarry_engine::Checked::Damaged(problem) => bail!(
                "the index file {} is damaged ({problem}); `quarry index --rebuild PATH` moves it aside and builds a new one",
                file.display()
            ),
            quarry_engine::Checked::Busy(why) => bail!("cannot check: {why}"),
        }
    }
    let ws = Workspace::open_existing(dir)?;
    let stats = ws.store().stats()?;
    let history = ws.store().history_stats()?;
    let bytes = ws.store().size_bytes();
    let embedding = match ws.store().embedding_model()? {
        Some(model) => {
            let c = ws.store().coverage(&[])?;
            Some(answers::Coverage {
                model: Some(model),
                embedded: c.embedded,
                total: c.total,
            })
        }
        None => None,
    };
    if args.json {
        output::print_json(&answers::StatusReport {
            index: file,
            repos: stats,
            history,
            history_embed_recent: ws.history_embed_bound(HistoryEmbedScope::Recent)?,
            store_bytes: bytes,
            embedding,
            check: args
                .check
                .then_some(if args.deep { "ok (deep)" } else { "ok" }),
            served_by: ws.store().served_by(),
        })
    } else {
        output::print_status(&file, &stats, &history, bytes)?;
        for repo in &stats {
            let kept = callers_cmd::kept_as_text(&ws, std::slice::from_ref(&repo.repo.name))?;
            if let Some(line) = output::kept_as_text_line(&kept) {
                println!("{}: {line}", repo.repo.name);
            }
        }
        let embedded_history: Vec<_> = history.iter().filter(|h| h.embed).collect();
        let commits = if embedded_history.iter().any(|h| h.commits > 0) {
            let (embedded, total) = (
                embedded_history.iter().map(|h| h.embedded).sum::<u64>(),
                embedded_history.iter().map(|h| h.commits).sum::<u64>(),
            );
            let bound = ws.history_embed_bound(HistoryEmbedScope::Recent)?;
            let waiting = ws.store().waiting_commit_embeddings(bound, &[])?;
            let beyond = total - embedded - waiting;
            let mut text = format!(", {embedded} of {total} commits");
            if let (Some(n), true) = (bound, beyond > 0) {
                text.push_str(&format!(
                    " (newest {n} per repo; `quarry sync --embed-all` embeds {beyond} older)"
                ));
            }
            text
        } else {
            String::new()
        };
        match embedding {
            Some(e) => println!(
                "embedding: {} of {} chunks{commits} · {}",
                e.embedded,
                e.total,
                e.model.as_deref().unwrap_or("")
            ),
            None if settings::model_ready(dir) => println!(
                "embedding: none yet (the model is installed: `quarry index PATH` embeds what `--no-embed` left)"
            ),
            None => println!("embedding: none yet (`quarry model install`, then `quarry index`)"),
        }
        if let Some(served) = ws.store().served_by() {
            println!("{}", output::served_by_line(&served));
        }
        if args.deep {
            println!("check: ok (SQLite integrity check, full-text indexes and vectors)");
        } else if args.check {
            println!("check: ok (SQLite quick check of the whole file)");
        }
        Ok(())
    }
}

fn watch(dir: &std::path::Path, args: WatchArgs) -> Result<()> {
    let roots: Vec<std::path::PathBuf> = if args.paths.is_empty() {
        let ws = Workspace::open_existing(dir)?;
        ws.store()
            .repos()?
            .into_iter()
            .filter(|r| r.indexed_at.is_some())
            .map(|r| r.root.into())
            .collect()
    } else {
        args.paths.clone()
    };
    if roots.is_empty() {
        anyhow::bail!("nothing to watch: `quarry index PATH` first, or `quarry watch PATH`");
    }
    eprintln!("quarry: watching {} repo(s); Ctrl-C stops", roots.len());
    let wait = std::time::Duration::from_secs_f64(args.lock_wait.max(0.0));
    quarry_engine::watch::watch(dir, &roots, wait, &|| false, &mut |pass| {
        if args.json {
            let _ = output::print_json(pass);
        } else if pass.index.added + pass.index.changed + pass.index.removed > 0 {
            eprintln!(
                "{}: +{} ~{} -{} files, {} chunks embedded ({} ms)",
                pass.repo,
                pass.index.added,
                pass.index.changed,
                pass.index.removed,
                pass.embedded,
                pass.elapsed_ms
            );
        }
    })
}
