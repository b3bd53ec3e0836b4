//! `quarry sync`, `log`, `show`, `touches` and `repo`: git history commands. Arguments and
//! printing only; the work is in `quarry_engine::history`.

use crate::output::print_json;
use crate::ModeArg;
use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use quarry_core::history::{CommitHit, CommitQuery};
use quarry_engine::commit_search::{HistoryEmbedReport, HistoryEmbedScope};
use quarry_engine::{EmbedPurpose, Mode, Workspace};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args)]
pub struct SyncArgs {
    /// Repository folders [default: every repo in the workspace].
    paths: Vec<PathBuf>,
    /// Only this repo (by name). Run inside an indexed repo, only that repo unless --repo or
    /// --all-repos says otherwise.
    #[arg(long)]
    repo: Vec<String>,
    /// Every repo of the workspace, even when run inside one of them.
    #[arg(long, conflicts_with = "repo")]
    all_repos: bool,
    /// Only embed commits still without a vector (no ingest): backfills after the embedder
    /// was unreachable, or after `repo update NAME --embed`.
    #[arg(long, conflicts_with = "no_embed")]
    embed_only: bool,
    /// Ingest only; leave embedding for a later `sync` or `sync --embed-only`.
    #[arg(long)]
    no_embed: bool,
    /// Store commits whose changes cannot be read (a damaged git object) without their
    /// files, and exit 0; by default they are left out, reported, and the exit status is 2.
    #[arg(long)]
    keep_going: bool,
    /// Embed every commit, also where `history.embed_recent` bounds them to the newest of
    /// each repo (by default there is no bound).
    #[arg(long, conflicts_with = "no_embed")]
    embed_all: bool,
    #[arg(long, default_value_t = 10.0)]
    lock_wait: f64,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct FilterArgs {
    /// Only this repo (repeatable). Run inside an indexed repo, only that repo unless
    /// --repo or --all-repos says otherwise.
    #[arg(long)]
    repo: Vec<String>,
    /// Every repo of the workspace, even when run inside one of them.
    #[arg(long, conflicts_with = "repo")]
    all_repos: bool,
    /// Only commits authored on or after this date (YYYY-MM-DD or RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Only commits authored on or before this date.
    #[arg(long)]
    until: Option<String>,
    /// Only commits whose author name or email contains this.
    #[arg(long)]
    author: Option<String>,
    /// How many commits to print (`-n` as in `git log -n`).
    #[arg(short = 'k', short_alias = 'n', long = "limit", default_value_t = 20)]
    limit: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct LogArgs {
    /// Words, identifiers, a path, a whole issue text, or nothing (newest first).
    query: Vec<String>,
    /// Read the query from standard input (a whole issue, without shell quoting).
    #[arg(long, conflicts_with_all = ["query", "query_file"])]
    stdin: bool,
    /// Read the query from a file.
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    query_file: Option<std::path::PathBuf>,
    /// Only commits that changed a path matching this glob (or containing this text).
    #[arg(long)]
    path: Option<String>,
    /// How commits are ranked: `lexical` by words (BM25), `semantic` by meaning (the
    /// commit's embedding), `hybrid` both fused; `auto` is hybrid when the history is
    /// embedded, else lexical.
    #[arg(long, value_enum, default_value = "auto", hide_possible_values = true)]
    mode: ModeArg,
    /// Say how each commit was ranked: its place by words and by meaning, and whether an issue
    /// text's search raised it for changing code and tests (`why` in JSON).
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    filters: FilterArgs,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The commit's SHA or a prefix of it (at least 4 hex digits; must be unique).
    sha: String,
    #[arg(long)]
    repo: Vec<String>,
    /// Print at most this many lines of the patch (0: none).
    #[arg(long, default_value_t = 400)]
    patch_lines: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct TouchesArgs {
    /// A file or folder, relative to its repo's root; `FILE::Symbol` (e.g.
    /// `src/auth.py::Session.login`) lists the commits that changed that definition.
    path: String,
    #[command(flatten)]
    filters: FilterArgs,
}

#[derive(Args)]
pub struct RepoArgs {
    #[command(subcommand)]
    action: RepoAction,
}

#[derive(Subcommand)]
enum RepoAction {
    /// Index a repository's code and ingest its history.
    Add {
        path: PathBuf,
        #[arg(long)]
        name: Option<String>,
        /// Embed the repo's commits for search by meaning (the default when a model is set up).
        #[arg(long, conflicts_with = "no_embed")]
        embed: bool,
        /// Do not embed its commits (lexical commit search only; cheaper on huge histories).
        #[arg(long)]
        no_embed: bool,
        #[arg(long)]
        json: bool,
    },
    /// Change a repository's settings.
    Update {
        name: String,
        /// Embed its commits (`quarry sync --embed-only` does the backfill).
        #[arg(
            long,
            conflicts_with = "no_embed",
            required_unless_present = "no_embed"
        )]
        embed: bool,
        /// Stop embedding its commits and drop their vectors.
        #[arg(long)]
        no_embed: bool,
    },
    /// Repositories in the workspace.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a repository and everything stored for it.
    Remove { name: String },
}

fn query_of(ws: &Workspace, f: &FilterArgs, path: Option<String>) -> Result<CommitQuery> {
    let repos = if f.repo.is_empty() && !f.all_repos {
        crate::search_cmd::working_directory_repo(ws)?
    } else {
        f.repo.clone()
    };
    Ok(CommitQuery {
        terms: Vec::new(),
        repos,
        since: f
            .since
            .as_deref()
            .map(|s| quarry_engine::history::parse_date(s, false))
            .transpose()?,
        until: f
            .until
            .as_deref()
            .map(|s| quarry_engine::history::parse_date(s, true))
            .transpose()?,
        author: f.author.clone(),
        path,
        limit: f.limit,
        explain: false,
    })
}

fn print_commits(hits: &[CommitHit]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for h in hits {
        writeln!(
            out,
            "{}  {}  {}  {:<20}  {} ({} files)",
            &h.sha[..12.min(h.sha.len())],
            h.repo,
            &h.date[..10.min(h.date.len())],
            h.author.chars().take(20).collect::<String>(),
            h.subject,
            h.files_changed
        )?;
    }
    Ok(())
}

/// `log --explain` in text: after the list, one line per commit saying how it was ranked.
fn print_explained(found: &quarry_engine::answer::CommitSearch) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if found.commits.iter().all(|h| h.why.is_none()) {
        writeln!(
            out,
            "\nlisted newest first: the query has no words to rank by"
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "\nranked {}:",
        format!("{:?}", found.mode).to_lowercase()
    )?;
    if let Some(c) = &found.coverage {
        writeln!(out, "  {} of {} commits embedded", c.embedded, c.total)?;
    }
    for h in &found.commits {
        let Some(why) = &h.why else { continue };
        let mut parts = Vec::new();
        if let (Some(rank), Some(bm25)) = (why.lexical_rank, why.bm25) {
            parts.push(format!("words #{rank} (bm25 {bm25:.2})"));
        }
        if let (Some(rank), Some(cosine)) = (why.semantic_rank, why.cosine) {
            parts.push(format!("meaning #{rank} (cosine {cosine:.3})"));
        }
        if let Some(prior) = why.fix_prior {
            parts.push(format!("changed code and tests ×{prior}"));
        }
        if let Some(prior) = why.role_prior {
            parts.push(format!("changed no code ×{prior}"));
        }
        if let (Some(prior), Some(tag)) = (why.release_prior, &why.before_release) {
            parts.push(format!("before {tag}, the release the issue runs ×{prior}"));
        }
        if let (Some(n), Some(factor)) = (why.code_echoes, why.echo_factor) {
            let runs = if n == 1 { "run" } else { "runs" };
            parts.push(format!(
                "repeats the issue's code ({n} {runs}) ×{factor:.3}"
            ));
        }
        writeln!(
            out,
            "  {}  score {:.4}: {}",
            &h.sha[..12.min(h.sha.len())],
            h.score,
            parts.join(" · ")
        )?;
    }
    Ok(())
}

pub fn sync(dir: &Path, args: SyncArgs) -> Result<()> {
    let wait = Duration::from_secs_f64(args.lock_wait.max(0.0));
    let (mut ws, lock) = Workspace::open_for_writing(dir, wait, false)?;
    let mut named = args.repo.clone();
    if args.paths.is_empty() && named.is_empty() && !args.all_repos {
        named = crate::search_cmd::scope_to_working_directory(
            &ws,
            "syncing",
            "syncs",
            "quarry repo add",
        )?;
    }
    let targets: Vec<(PathBuf, Option<String>)> = if args.paths.is_empty() {
        let repos = ws.store().repos()?;
        let chosen: Vec<_> = repos
            .into_iter()
            .filter(|r| named.is_empty() || named.contains(&r.name))
            .map(|r| (PathBuf::from(r.root), Some(r.name)))
            .collect();
        if chosen.is_empty() {
            bail!("no repo to sync: `quarry sync PATH` or `quarry repo add PATH` first");
        }
        chosen
    } else {
        args.paths.iter().map(|p| (p.clone(), None)).collect()
    };
    let progress = crate::progress::Bars::new();
    crate::progress::stop_on_ctrl_c();
    let mut reports = Vec::new();
    // The repos this run is about: only their commits are embedded (another repo synced with
    // --no-embed, or with embedding off, waits for its own run).
    let mut scope: Vec<String> = Vec::new();
    let known = ws.store().repos()?;
    for (path, name) in &targets {
        let by_root = || {
            let root = path.canonicalize().ok()?;
            known
                .iter()
                .find(|r| Path::new(&r.root) == root)
                .map(|r| r.name.clone())
        };
        if let Some(name) = name.clone().or_else(by_root) {
            scope.push(name);
        }
    }
    let targets = if args.embed_only { Vec::new() } else { targets };
    for (path, name) in targets {
        let report = ws.sync_history(&path, name.as_deref(), args.keep_going, &progress)?;
        if !args.json {
            print_sync_report(&report);
        }
        reports.push(report);
        if crate::progress::interrupted() {
            break;
        }
    }
    ws.lock_per_batch(lock);
    let embedding = if args.no_embed || crate::progress::interrupted() {
        None
    } else {
        scope.extend(reports.iter().map(|r| r.repo.clone()));
        scope.sort();
        scope.dedup();
        let bound = if args.embed_all {
            HistoryEmbedScope::All
        } else {
            HistoryEmbedScope::Recent
        };
        embed_history(dir, &mut ws, &progress, args.json, bound, &scope)?
    };
    let incomplete: usize = reports.iter().map(|r| r.incomplete).sum();
    if args.json {
        print_json(&crate::answers::HistorySync {
            repos: reports,
            embedding,
        })?;
    }
    if incomplete > 0 && !args.keep_going {
        bail!(
            "{incomplete} commits could not be read completely (damaged or missing git objects; `git fsck` in the repo names them) and were not stored; fix the repository, or `quarry sync --keep-going` to store them without their changes"
        );
    }
    if crate::progress::interrupted() {
        let resume = if args.embed_all {
            "quarry sync --embed-all"
        } else {
            "quarry sync"
        };
        return Err(crate::Interrupted(resume.to_string()).into());
    }
    Ok(())
}

/// The summary line of one repo's history ingest.
fn print_sync_report(report: &quarry_engine::history::SyncReport) {
    eprintln!(
        "{}: {} new commits, {} dropped, {} stored ({:.1} s){}{}",
        report.repo,
        report.added,
        report.dropped,
        report.total,
        report.elapsed_ms as f64 / 1000.0,
        if report.interrupted {
            " — stopped before every commit was read"
        } else {
            ""
        },
        report
            .notes
            .iter()
            .map(|n| format!("\n  note: {n}"))
            .collect::<String>()
    );
}

/// Embeds the commits of `repos` still without a vector, where embedding is on for them. An
/// embedder that is missing or unreachable is a warning: the ingest stands, `sync
/// --embed-only` resumes.
fn embed_history(
    dir: &Path,
    ws: &mut Workspace,
    progress: &crate::progress::Bars,
    json: bool,
    scope: HistoryEmbedScope,
    repos: &[String],
) -> Result<Option<HistoryEmbedReport>> {
    let bound = ws.history_embed_bound(scope)?;
    let waiting = ws.store().waiting_commit_embeddings(bound, repos)?;
    if waiting == 0 {
        return Ok(None);
    }
    if let Some(note) = ws.attach_embedder(EmbedPurpose::Indexing)? {
        crate::settings::tell(
            dir,
            &note,
            &format!("{waiting} commits wait for embedding (`quarry sync --embed-only` later)"),
        );
        return Ok(None);
    }
    let report = ws.embed_history(progress, scope, repos)?;
    if let Some(r) = &report {
        if let (Some(why), false) = (&r.interrupted, crate::progress::interrupted()) {
            eprintln!("quarry: warning: embedding stopped: {why}");
        }
        if !json {
            let mut line = format!(
                "embedded {} commits ({:.1} s)",
                r.embedded,
                r.elapsed_ms as f64 / 1000.0
            );
            if r.pending > 0 {
                line.push_str(&format!("; {} still without a vector", r.pending));
            }
            if let (Some(n), true) = (r.newest_per_repo, r.beyond_bound > 0) {
                line.push_str(&format!(
                    "; the newest {n} per repo are embedded, {} older ones are found by their words (`quarry sync --embed-all` embeds them)",
                    r.beyond_bound
                ));
            }
            eprintln!("{line}");
        }
    }
    Ok(report)
}

pub fn log(dir: &Path, args: LogArgs) -> Result<()> {
    let mut ws = Workspace::open_existing(dir)?;
    let mode: Mode = args.mode.into();
    let query = CommitQuery {
        explain: args.explain,
        ..query_of(&ws, &args.filters, args.path)?
    };
    let text = crate::search_cmd::read_query(&args.query, args.stdin, args.query_file.as_deref())?;
    // Ranking by meaning is the workspace daemon's when one answers (the model stays loaded).
    let warm = if mode != Mode::Lexical && ws.store().embedding_model()?.is_some() {
        quarry_daemon::client::log(dir, &text, &query, mode)?
    } else {
        None
    };
    let found = match warm {
        Some(found) => found,
        None => {
            if mode != Mode::Lexical {
                if let Some(note) = ws.attach_embedder(EmbedPurpose::Searching)? {
                    if mode != Mode::Auto {
                        bail!("{}", note.message);
                    }
                }
            }
            let fusion = ws.config()?.fusion();
            ws.search_commits(&text, query, mode, &fusion)?
        }
    };
    for warning in &found.warnings {
        eprintln!("quarry: warning: {warning}");
    }
    if args.filters.json {
        print_json(&found)?;
    } else {
        print_commits(&found.commits)?;
        if args.explain {
            print_explained(&found)?;
        }
    }
    if found.commits.is_empty() {
        let synced = ws.store().history_stats()?.iter().any(|h| h.commits > 0);
        return Err(crate::NothingFound(if synced {
            "no commits found".into()
        } else {
            "no commits found: no history is synced yet (`quarry sync`)".into()
        })
        .into());
    }
    Ok(())
}

pub fn touches(dir: &Path, args: TouchesArgs) -> Result<()> {
    let ws = Workspace::open_existing(dir)?;
    let query = query_of(&ws, &args.filters, None)?;
    let touches = ws.commits_touching(&args.path, &query)?;
    if args.filters.json {
        print_json(&touches)?;
    } else {
        print_commits(&touches.commits)?;
    }
    // The hint says why nothing was found (exit 1), or that there are more.
    match (&touches.hint, touches.commits.is_empty()) {
        (hint, true) => {
            let why = hint.clone().unwrap_or_else(|| "no commits found".into());
            return Err(crate::NothingFound(why).into());
        }
        (Some(hint), false) if !args.filters.json => {
            eprintln!("quarry: {hint} (-k {})", args.filters.limit * 2);
        }
        _ => {}
    }
    Ok(())
}

pub fn show(dir: &Path, args: ShowArgs) -> Result<()> {
    let ws = Workspace::open_existing(dir)?;
    let mut shown = ws.show_commit(&args.sha, &args.repo)?;
    let total_lines = shown.commit.patch.lines().count();
    if total_lines > args.patch_lines {
        shown.commit.patch = shown
            .commit
            .patch
            .lines()
            .take(args.patch_lines)
            .collect::<Vec<_>>()
            .join("\n");
        shown.commit.patch_truncated = true;
    }
    if args.json {
        return print_json(&shown);
    }
    let c = &shown.commit;
    let mut out = std::io::stdout().lock();
    writeln!(out, "commit {} ({})", c.sha, shown.repo)?;
    writeln!(out, "Author: {} <{}>", c.author, c.email)?;
    let date = std::time::UNIX_EPOCH + Duration::from_secs(c.author_time.max(0) as u64);
    writeln!(out, "Date:   {}", humantime::format_rfc3339_seconds(date))?;
    writeln!(out, "\n    {}", c.subject)?;
    // As `git show`: a blank line between the subject and the body.
    let body = c.body.trim_start_matches(['\n', '\r']);
    if !body.is_empty() {
        writeln!(out)?;
    }
    for line in body.lines() {
        writeln!(out, "    {line}")?;
    }
    writeln!(out)?;
    for f in &c.files {
        let counts = match (f.added, f.removed) {
            (Some(a), Some(r)) => format!("+{a} -{r}"),
            _ => "binary".to_string(),
        };
        match &f.old_path {
            Some(old) => writeln!(
                out,
                "  {:<9} {} → {}  {counts}",
                f.status,
                crate::output::shown(old),
                crate::output::shown(&f.path)
            )?,
            None => writeln!(
                out,
                "  {:<9} {}  {counts}",
                f.status,
                crate::output::shown(&f.path)
            )?,
        }
    }
    if !c.patch.is_empty() {
        writeln!(out, "\n{}", c.patch)?;
    }
    if c.patch_truncated {
        writeln!(
            out,
            "… patch truncated (--patch-lines N shows more, up to what was stored)"
        )?;
    }
    Ok(())
}

pub fn repo(dir: &Path, args: RepoArgs) -> Result<()> {
    match args.action {
        RepoAction::Add {
            path,
            name,
            embed: _,
            no_embed,
            json,
        } => {
            let (mut ws, lock) = Workspace::open_for_writing(dir, Duration::from_secs(10), false)?;
            let progress = crate::progress::Bars::new();
            crate::progress::stop_on_ctrl_c();
            let interrupted = crate::progress::interrupted;
            let opts = quarry_engine::IndexOptions {
                name: name.clone(),
                ..Default::default()
            };
            // Each phase says what it did as it ends, so a stop in a later one loses no news.
            let index = ws.index_repo(&path, &opts, &progress)?;
            if !json {
                crate::output::print_index_report(&index);
            }
            let repo_id = repo_named(&ws, &index.repo)?;
            ws.store_mut().set_history_embedding(repo_id, !no_embed)?;
            let history = if interrupted() {
                None
            } else {
                let history = ws.sync_history(&path, Some(&index.repo), true, &progress)?;
                if !json {
                    print_sync_report(&history);
                }
                Some(history)
            };
            // Chunks first (code search by meaning), then commits; the lock is held only
            // while a batch of vectors is stored.
            ws.lock_per_batch(lock);
            let mut code = None;
            let this_repo = std::slice::from_ref(&index.repo);
            if !interrupted() && ws.attach_embedder(EmbedPurpose::Indexing)?.is_none() {
                code = ws.embed_pending(&progress, this_repo)?;
                if let (Some(e), false) = (&code, json) {
                    crate::output::print_embed_report(e);
                }
            }
            let embedding = if interrupted() {
                None
            } else {
                embed_history(
                    dir,
                    &mut ws,
                    &progress,
                    json,
                    HistoryEmbedScope::Recent,
                    this_repo,
                )?
            };
            if json {
                print_json(&crate::answers::RepoAdded {
                    index,
                    history,
                    code_embedding: code,
                    embedding,
                })?;
            }
            if interrupted() {
                let resume = format!(
                    "quarry repo add {}",
                    crate::output::shell_word(&path.display().to_string())
                );
                return Err(crate::Interrupted(resume).into());
            }
            Ok(())
        }
        RepoAction::Update {
            name,
            embed,
            no_embed: _,
        } => {
            let (mut ws, _lock) = Workspace::open_for_writing(dir, Duration::from_secs(10), false)?;
            let id = repo_named(&ws, &name)?;
            ws.store_mut().set_history_embedding(id, embed)?;
            if embed {
                eprintln!(
                    "{name}: history embedding on; `quarry sync --embed-only` embeds its commits"
                );
            } else {
                eprintln!("{name}: history embedding off; its commit vectors were dropped");
            }
            Ok(())
        }
        RepoAction::List { json } => {
            let ws = Workspace::open_existing(dir)?;
            let repos = ws.store().repos()?;
            if json {
                return print_json(&crate::answers::RepoList { repos });
            }
            for r in repos {
                println!(
                    "{:<24} {}  {} files, {} chunks",
                    r.name, r.root, r.files, r.chunks
                );
            }
            Ok(())
        }
        RepoAction::Remove { name } => {
            let (mut ws, _lock) = Workspace::open_for_writing(dir, Duration::from_secs(10), false)?;
            let id = repo_named(&ws, &name)?;
            ws.store_mut().remove_repo(id)?;
            eprintln!("removed {name}");
            Ok(())
        }
    }
}

fn repo_named(ws: &Workspace, name: &str) -> Result<i64> {
    match ws.store().repos()?.into_iter().find(|r| r.name == name) {
        Some(repo) => Ok(repo.id),
        None => bail!("no repo named `{name}` in this workspace (`quarry repo list`)"),
    }
}
