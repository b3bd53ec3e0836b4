//! Printing results for people (colour on a terminal, plain when piped or with NO_COLOR) and
//! for programs (`--json`: one document on stdout).

use anyhow::Result;
use quarry_core::history::HistoryStats;
use quarry_core::{tokens, RepoStats};
use quarry_engine::{IndexReport, SearchResponse};
use quarry_eval::EvalReport;
use std::io::{IsTerminal, Write};
use std::path::Path;

struct Style {
    on: bool,
}

impl Style {
    fn stdout() -> Style {
        Style {
            on: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Up to `n` lines of a chunk, starting at the first line that has a query term.
fn snippet<'a>(text: &'a str, terms: &[String], n: usize) -> (usize, Vec<&'a str>) {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|line| {
            let mut hit = false;
            tokens::for_each_token(line, |t| hit |= terms.iter().any(|q| q == t));
            hit
        })
        .or_else(|| lines.iter().position(|l| !l.trim().is_empty()))
        .unwrap_or(0);
    // One line of context above the match, unless it is blank.
    let mut start = first.saturating_sub(1).min(lines.len().saturating_sub(n));
    while start < first && lines[start].trim().is_empty() {
        start += 1;
    }
    (start, lines.iter().skip(start).take(n).copied().collect())
}

/// `--explain`: what the planner read from the query, and the file ranking with its evidence.
fn explain_plan(out: &mut impl Write, response: &SearchResponse) -> Result<()> {
    let Some(plan) = &response.plan else {
        return Ok(());
    };
    let list = |v: &[String], n: usize| {
        let mut s = v.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
        if v.len() > n {
            s.push_str(&format!(", … ({} in all)", v.len()));
        }
        if s.is_empty() {
            "-".to_string()
        } else {
            s
        }
    };
    writeln!(
        out,
        "plan: mode {:?} · natural language {} · {} terms",
        response.mode,
        plan.natural_language,
        plan.terms.len()
    )?;
    writeln!(out, "  identifiers: {}", list(&plan.identifiers, 12))?;
    writeln!(out, "  file hints: {}", list(&plan.file_hints, 8))?;
    if !plan.roles.is_empty() {
        let roles: Vec<String> = plan.roles.iter().map(|r| r.name().to_string()).collect();
        writeln!(out, "  asks for: {}", roles.join(", "))?;
    }
    if let Some(issue) = &plan.issue {
        let frames: Vec<String> = issue
            .frames
            .iter()
            .map(|f| {
                format!(
                    "{}{}{}",
                    f.path,
                    f.line.map_or(String::new(), |l| format!(":{l}")),
                    f.function
                        .as_ref()
                        .map_or(String::new(), |n| format!(" in {n}"))
                )
            })
            .collect();
        writeln!(
            out,
            "  issue text: {} passages for the model",
            issue.passages.len()
        )?;
        writeln!(out, "  stack frames: {}", list(&frames, 6))?;
        writeln!(out, "  modules: {}", list(&issue.modules, 8))?;
        writeln!(out, "  names in code: {}", list(&issue.code_names, 16))?;
        writeln!(out, "  error messages: {}", list(&issue.messages, 3))?;
    }
    if !response.files.is_empty() {
        writeln!(out, "files:")?;
        for f in response.files.iter().take(10) {
            let p = &f.parts;
            let named: Vec<String> = f.mentions.iter().map(mention).collect();
            writeln!(
                out,
                "  {:.3}  {}  [{}] file bm25 {:.2} + chunks {:.2} + named {:.2}, × prior {:.2}{}",
                f.score,
                shown(&f.path),
                f.role.name(),
                p.file_bm25,
                p.chunks,
                p.named,
                p.prior,
                if named.is_empty() {
                    String::new()
                } else {
                    format!(" · {}", named.join(", "))
                }
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}

fn mention(m: &quarry_engine::answer::Mention) -> String {
    use quarry_engine::answer::Mention::*;
    match m {
        Frame { innermost, line } => format!(
            "{}frame{}",
            if *innermost { "innermost " } else { "" },
            line.map_or(String::new(), |l| format!(" :{l}"))
        ),
        Path => "named path".into(),
        Module => "module path".into(),
        Defines {
            name,
            files,
            code_only,
        } => format!(
            "defines {name}{} (1 of {files})",
            if *code_only { " [code]" } else { "" }
        ),
        NamedFile { name, files, .. } => format!("named after {name} (1 of {files})"),
        Callee { name, via, files } => format!("defines {name}, called by {via} (1 of {files})"),
        Caller { name, files } => format!("calls {name} (1 of {files})"),
        Changed {
            share,
            commits,
            definitions,
        } => {
            let mut defs: Vec<_> = definitions.iter().collect();
            defs.sort_by(|a, b| b.share.total_cmp(&a.share));
            let named: Vec<String> = defs
                .iter()
                .take(3)
                .map(|d| match &d.symbol {
                    Some(s) => format!("{s} :{}", d.start_line),
                    None => format!(":{}-{}", d.start_line, d.end_line),
                })
                .collect();
            format!(
                "changed by past commits like the query ({:.2} of the best file's votes: {}){}",
                share,
                commits.join(", "),
                if named.is_empty() {
                    String::new()
                } else {
                    format!("; in {}", named.join(", "))
                }
            )
        }
    }
}

/// `quarry ask`: the answer, then the sources it cited that the given chunks back.
pub fn print_answer(response: &quarry_engine::AskResponse, answer: &str) -> Result<()> {
    let style = Style::stdout();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{answer}\n")?;
    if response.citations.is_empty() {
        writeln!(out, "{}", style.paint("2", "(no checked sources)"))?;
    } else {
        writeln!(out, "{}", style.paint("2", "sources:"))?;
        for c in &response.citations {
            writeln!(
                out,
                "  {}:{}",
                style.paint("35", &shown(&c.path)),
                style.paint("32", &format!("{}-{}", c.start_line, c.end_line))
            )?;
        }
    }
    if response.dropped_citations > 0 {
        writeln!(
            out,
            "{}",
            style.paint(
                "2",
                &format!(
                    "({} citation(s) dropped: not in the chunks the model was given)",
                    response.dropped_citations
                )
            )
        )?;
    }
    Ok(())
}

pub fn print_search(response: &SearchResponse, explain: bool) -> Result<()> {
    let style = Style::stdout();
    let terms = tokens::query_terms(&response.query);
    let mut out = std::io::stdout().lock();
    if explain {
        if let Some(route) = &response.route {
            let name = |v: serde_json::Result<serde_json::Value>| {
                v.ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            let class = match route.class {
                Some(class) => format!("reads as {}", name(serde_json::to_value(class))),
                None => "engine chosen by the caller".to_string(),
            };
            writeln!(
                out,
                "route: the query {class} → {}{}",
                name(serde_json::to_value(route.route)),
                route
                    .note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            )?;
        }
        explain_plan(&mut out, response)?;
        if let Some(r) = &response.rerank {
            match (r.applied, &r.note) {
                (true, _) => writeln!(
                    out,
                    "reranked by {}: it ranked {} of the top {}{} ({} ms)",
                    r.provider,
                    r.ranked,
                    r.candidates,
                    if r.cached { ", from the cache" } else { "" },
                    r.elapsed_ms
                )?,
                (false, note) => writeln!(
                    out,
                    "not reranked ({}): {}",
                    r.provider,
                    note.as_deref().unwrap_or("")
                )?,
            }
        }
    }
    // A path alone is ambiguous when more than one repo could answer: name the repo.
    let several_repos = response.index.repos.len() > 1;
    for r in &response.results {
        if several_repos {
            write!(out, "{} ", style.paint("36", &format!("[{}]", r.repo)))?;
        }
        writeln!(
            out,
            "{}{}  {}  {}",
            style.paint("35", &shown(&r.path)),
            style.paint("32", &r.position()),
            style.paint("33", r.symbol.as_deref().unwrap_or("-")),
            style.paint("2", &format!("{:.2}", r.score)),
        )?;
        if let (true, Some(reason)) = (explain, &r.reason) {
            writeln!(out, "  why: {reason}")?;
        }
        if let (true, Some(p)) = (explain, &r.score_parts) {
            let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
            writeln!(
                out,
                "  lexical #{} (bm25 {}) × {:.2} · semantic #{} (cos {}) × {:.2} → fused {:.3} + boost {:.2}",
                rank(p.lexical_rank),
                p.bm25.map_or("-".into(), |v| format!("{v:.2}")),
                p.lexical_weight,
                rank(p.semantic_rank),
                p.cosine.map_or("-".into(), |v| format!("{v:.3}")),
                p.semantic_weight,
                p.fused,
                p.boost
            )?;
        }
        let (offset, lines) = snippet(r.text.as_deref().unwrap_or(""), &terms, 3);
        for (i, line) in lines.iter().enumerate() {
            let number = r.start_line as usize + offset + i;
            let line: String = line.chars().take(160).collect();
            writeln!(
                out,
                "  {} {}",
                style.paint("2", &format!("{number:>5}")),
                line.trim_end()
            )?;
        }
        writeln!(out)?;
    }
    let repos = response.index.repos.len();
    eprintln!(
        "{} result{} · {} repo{} · {} files · {} chunks{}",
        response.results.len(),
        if response.results.len() == 1 { "" } else { "s" },
        repos,
        if repos == 1 { "" } else { "s" },
        response.index.files,
        response.index.chunks,
        response
            .index
            .indexed_at
            .as_ref()
            .map(|t| format!(" · indexed {t}"))
            .unwrap_or_default()
    );
    Ok(())
}

fn skipped_line(skipped: &quarry_core::store::SkipCounts) -> String {
    if skipped.is_empty() {
        return "none".into();
    }
    skipped
        .iter()
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `kept as text, not parsed (no definitions, no calls): kotlin 120 files, shell 3 files`.
pub fn kept_as_text_line(kept: &[quarry_engine::answer::KeptAsText]) -> Option<String> {
    if kept.is_empty() {
        return None;
    }
    let each: Vec<String> = kept
        .iter()
        .map(|k| {
            format!(
                "{} {} file{}",
                k.language,
                k.files,
                if k.files == 1 { "" } else { "s" }
            )
        })
        .collect();
    Some(format!(
        "kept as text, not parsed (no definitions, no calls; grep and ranked search still read them): {}",
        each.join(", ")
    ))
}

pub fn print_index_report(r: &IndexReport) {
    eprintln!(
        "{}: {} files, {} chunks — {} added, {} changed, {} removed, {} unchanged; skipped: {} ({:.1} s)",
        r.repo,
        r.files,
        r.chunks,
        r.added,
        r.changed,
        r.removed,
        r.unchanged,
        skipped_line(&r.skipped),
        r.elapsed_ms as f64 / 1000.0
    );
    if r.rebuild_undone {
        eprintln!(
            "  the rebuild was stopped before it finished and did not take effect: the index of {} is as it was; run `quarry index --rebuild` again",
            r.repo
        );
    } else if r.interrupted {
        eprintln!("  stopped before every file was read; the next `quarry index` reads the rest");
    }
    if r.lossy_utf8 > 0 {
        eprintln!(
            "  {} file(s) were not valid UTF-8; invalid bytes were replaced",
            r.lossy_utf8
        );
    }
    if let Some(line) = kept_as_text_line(&r.kept_as_text) {
        eprintln!("  {line}");
    }
    // On an update, say which files changed; a first run would only list everything.
    if r.unchanged > 0 || r.removed > 0 {
        for c in r.changes.iter().take(20) {
            let mark = match c.change {
                "added" => '+',
                "removed" => '-',
                _ => '~',
            };
            eprintln!("  {mark} {}", shown(&c.path));
        }
        if r.changes.len() > 20 {
            eprintln!(
                "  … and {} more",
                (r.added + r.changed + r.removed) as usize - 20
            );
        }
    }
}

pub fn print_embed_report(e: &quarry_engine::EmbedReport) {
    eprintln!(
        "embedded {} chunk texts in {:.1} s; {} of {} chunks have vectors ({})",
        e.embedded,
        e.elapsed_ms as f64 / 1000.0,
        e.coverage.embedded,
        e.coverage.total,
        short_model(&e.model)
    );
}

/// A model's fingerprint (`all-MiniLM-L6-v2/sha256:…/onnx-int8:…/max-tokens=128/…`) as a
/// progress line says it: the name and what runs it. `status` and JSON carry the whole one.
pub fn short_model(fingerprint: &str) -> String {
    let mut parts = fingerprint.split('/');
    let name = parts.next().unwrap_or(fingerprint);
    match parts.find_map(|p| {
        p.split_once(':')
            .map(|(what, _)| what)
            .filter(|w| *w != "sha256")
    }) {
        Some(runtime) => format!("{name}, {runtime}"),
        None => name.to_string(),
    }
}

fn human_bytes(n: u64) -> String {
    let mut v = n as f64;
    for unit in ["B", "KiB", "MiB", "GiB"] {
        if v < 1024.0 || unit == "GiB" {
            return if unit == "B" {
                format!("{n} B")
            } else {
                format!("{v:.1} {unit}")
            };
        }
        v /= 1024.0;
    }
    unreachable!()
}

pub fn print_status(
    file: &Path,
    stats: &[RepoStats],
    history: &[HistoryStats],
    bytes: u64,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let style = Style::stdout();
    // The embedding column is shown only when some repo embeds a history it has.
    let any_embed = history.iter().any(|h| h.embed && h.commits > 0);
    for s in stats {
        writeln!(out, "{}  {}", style.paint("1", &s.repo.name), s.repo.root)?;
        let history_only = s.repo.indexed_at.is_none()
            && s.files == 0
            && history
                .iter()
                .any(|h| h.repo == s.repo.name && h.commits > 0);
        if history_only {
            writeln!(
                out,
                "  code: not indexed (history only; `quarry index {}` adds it)",
                s.repo.root
            )?;
        }
        let when = match s.repo.indexed_at {
            Some(t) => humantime_ago(t),
            None => "never completed (run `quarry index` again to finish)".into(),
        };
        if !history_only {
            writeln!(
                out,
                "  files {} · chunks {} · symbols {} · indexed {when}",
                s.files, s.chunks, s.symbols
            )?;
            print_languages(&mut out, s)?;
        }
        if let Some(h) = history
            .iter()
            .find(|h| h.repo == s.repo.name && h.commits > 0)
        {
            let embed = match (any_embed, h.embed) {
                (false, _) => String::new(),
                (true, false) => " · embed off".to_string(),
                (true, true) => format!(" · embed on ({} of {} embedded)", h.embedded, h.commits),
            };
            writeln!(out, "  history: {} commits{embed}", h.commits)?;
        } else if Path::new(&s.repo.root).join(".git").exists() {
            writeln!(
                out,
                "  history: not synced (`quarry sync {}` adds it)",
                s.repo.root
            )?;
        } else {
            writeln!(out, "  history: none (not a git repository)")?;
        }
    }
    if stats.is_empty() {
        writeln!(out, "no repos indexed yet: run `quarry index PATH`")?;
    }
    writeln!(out, "store: {} ({})", file.display(), human_bytes(bytes))?;
    Ok(())
}

/// `status`'s line naming the server that answered reads, and the standbys passed over.
pub fn served_by_line(served: &quarry_core::ServedBy) -> String {
    let mut line = match served.lag_s {
        Some(lag) if served.replica => {
            format!("reads: {} (standby, {lag:.1} s behind)", served.server)
        }
        _ => format!("reads: {} (primary)", served.server),
    };
    for skipped in &served.skipped {
        line.push_str(&format!("\n  passed over {skipped}"));
    }
    line
}

fn print_languages(out: &mut impl Write, s: &RepoStats) -> Result<()> {
    let mut langs: Vec<_> = s.languages.iter().collect();
    langs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let langs: Vec<String> = langs.iter().map(|(l, n)| format!("{l} {n}")).collect();
    writeln!(
        out,
        "  languages: {}",
        if langs.is_empty() {
            "none".into()
        } else {
            langs.join(", ")
        }
    )?;
    writeln!(out, "  skipped: {}", skipped_line(&s.repo.skipped))?;
    Ok(())
}

fn humantime_ago(unix: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let ago = (now - unix).max(0) as u64;
    let when = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix as u64),
    );
    let rough = match ago {
        0..=59 => format!("{ago} s"),
        60..=3599 => format!("{} min", ago / 60),
        3600..=86399 => format!("{} h", ago / 3600),
        _ => format!("{} d", ago / 86400),
    };
    format!("{when} ({rough} ago)")
}

pub fn print_eval(r: &EvalReport) -> Result<()> {
    let m = &r.metrics;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} — {} queries, mode {:?}{}",
        r.queries_file,
        r.queries,
        r.mode,
        if r.setting.is_empty() {
            String::new()
        } else {
            format!(", {}", r.setting)
        }
    )?;
    writeln!(
        out,
        "  hit@1 {:.3}  hit@5 {:.3}  hit@10 {:.3}  recall@10 {:.3}  MRR {:.3}  nDCG@10 {:.3}",
        m.hit_at_1, m.hit_at_5, m.hit_at_10, m.recall_at_10, m.mrr, m.ndcg_at_10
    )?;
    for (repo, m) in &r.by_repo {
        writeln!(
            out,
            "    {repo:<28} hit@1 {:.3}  hit@5 {:.3}  hit@10 {:.3}  MRR {:.3}",
            m.hit_at_1, m.hit_at_5, m.hit_at_10, m.mrr
        )?;
    }
    if let Some(f) = &r.function {
        writeln!(
            out,
            "  function level ({} queries): hit@1 {:.3}  hit@5 {:.3}  hit@10 {:.3}  MRR {:.3}",
            f.queries, f.hit_at_1, f.hit_at_5, f.hit_at_10, f.mrr
        )?;
    }
    writeln!(
        out,
        "  latency p50 {:.1} ms  p95 {:.1} ms  (indexing {:.1} s)",
        r.latency_ms_p50,
        r.latency_ms_p95,
        r.index_ms as f64 / 1000.0
    )?;
    if !r.unavailable.is_empty() {
        writeln!(
            out,
            "  {} queries could not run (counted as misses), e.g. {}: {}",
            r.unavailable.len(),
            r.unavailable[0].0,
            r.unavailable[0].1
        )?;
    }
    Ok(())
}

/// A path as human output prints it (control characters escaped, `quarry_core::shown_path`).
pub fn shown(path: &str) -> std::borrow::Cow<'_, str> {
    quarry_core::shown_path(path)
}

/// The exit codes every command shares (grep's convention).
pub(crate) mod exit_code {
    /// A search found nothing that answers it.
    pub(crate) const NOTHING_FOUND: i32 = 1;
    /// Something went wrong (bad arguments, a missing index, a damaged file, ...).
    pub(crate) const ERROR: i32 = 2;
}

/// `word` as one shell word: unchanged when it holds only characters no shell treats
/// specially, else in single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
