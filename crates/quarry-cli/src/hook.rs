//! `quarry hook claude`: a Claude Code PreToolUse hook that answers Reads of big code files
//! with their outline and natural-language Greps with search results.
//!
//! Design (docs/HOOK.md has the protocol notes): a Read is *denied* with the outline as the
//! reason — the agent sees the outline, and the read did not happen. Edit needs a prior Read,
//! so every way to a real read stays open: a Read with offset/limit passes untouched (and
//! counts as read for Edit), and a second Read of the same file within the re-read window
//! passes in full. Narrowing the read with `updatedInput` was rejected: the agent would edit
//! text it never saw, and re-reads collide with Claude Code's "file unchanged" dedup.
//!
//! Fail open, always: malformed input, an unknown tool, any internal error or running past the
//! time budget exits 0 with no output, which lets the tool call run unchanged. Why is logged
//! to `hook.log` in the state folder.

use anyhow::{Context, Result};
use quarry_core::Language;
use quarry_engine::rank_route::{classify, QueryClass, Route};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The hook answers within this, or lets the call run (Claude Code waits up to the configured
/// hook timeout; `quarry hook install` sets 5 s).
const BUDGET: Duration = Duration::from_millis(3000);
/// Files smaller than this are read whole: the outline would not save much.
const MIN_BYTES: u64 = 3 * 1024;
const MIN_LINES: usize = 100;
/// A second Read of a file within this many seconds of its outline gets the whole file.
const DEFAULT_REREAD_WINDOW_S: u64 = 300;
/// A Grep target is remembered this long for the next Read's outline.
const LAST_SEARCH_TTL_S: u64 = 30;
/// Lines of a searched-for definition appended to an outline.
const MAX_CONTEXT_LINES: usize = 120;

#[derive(Debug, PartialEq)]
pub enum Decision {
    /// Let the call run unchanged (no output).
    Allow(String),
    /// Block the call; the reason is what the agent reads instead.
    Deny(String),
    /// Let the call run and add this note for the agent.
    Context(String),
}

/// Per-session memory: which outlines were shown, and the last Grep target.
#[derive(Debug, Default, Serialize, Deserialize)]
struct SessionState {
    shown: HashMap<String, u64>,
    last_search: Option<(String, u64)>,
}

pub struct Hook {
    state_dir: PathBuf,
    workspace_dir: PathBuf,
    reread_window_s: u64,
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The state folder: `$QUARRY_HOOK_STATE`, else `$XDG_STATE_HOME/quarry/hook`, else
/// `~/.local/state/quarry/hook`.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("QUARRY_HOOK_STATE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs_state().join("quarry").join("hook")
}

fn dirs_state() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".local").join("state")
}

fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower
        .split('/')
        .any(|c| matches!(c, "test" | "tests" | "__tests__" | "spec" | "testing"))
        || name.starts_with("test_")
        || name == "conftest.py"
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.contains("_spec.")
}

impl Hook {
    pub fn new(workspace_dir: PathBuf) -> Hook {
        let reread_window_s = std::env::var("QUARRY_HOOK_REREAD_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_REREAD_WINDOW_S);
        Hook {
            state_dir: state_dir(),
            workspace_dir,
            reread_window_s,
        }
    }

    fn session_file(&self, session: &str) -> PathBuf {
        let safe: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        self.state_dir.join(format!("session-{safe}.json"))
    }

    fn load_state(&self, session: &str) -> SessionState {
        std::fs::read(self.session_file(session))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save_state(&self, session: &str, state: &SessionState) {
        let _ = std::fs::create_dir_all(&self.state_dir);
        let file = self.session_file(session);
        let tmp = file.with_extension("tmp");
        if let Ok(bytes) = serde_json::to_vec(state) {
            let _ = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, &file));
        }
    }

    /// Decides what to do with one PreToolUse event.
    pub fn decide(&self, event: &Value) -> Result<Decision> {
        let tool = event["tool_name"].as_str().unwrap_or("");
        let input = &event["tool_input"];
        let session = event["session_id"].as_str().unwrap_or("no-session");
        match tool {
            "Read" => self.read(event, input, session),
            "Grep" => self.grep(event, input, session),
            other => Ok(Decision::Allow(format!("tool {other:?} is not handled"))),
        }
    }

    fn read(&self, event: &Value, input: &Value, session: &str) -> Result<Decision> {
        let Some(file) = input["file_path"].as_str() else {
            return Ok(Decision::Allow("no file_path".into()));
        };
        for key in ["offset", "limit", "pages"] {
            if !input[key].is_null() {
                return Ok(Decision::Allow(format!("scoped read ({key})")));
            }
        }
        let path = Path::new(file);
        if file.contains("/.claude/") {
            return Ok(Decision::Allow("under .claude".into()));
        }
        if !Language::detect(path).is_code() {
            return Ok(Decision::Allow("not a code file".into()));
        }
        if is_test_path(file) {
            return Ok(Decision::Allow("test file".into()));
        }
        let project = std::env::var_os("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .or_else(|| event["cwd"].as_str().map(PathBuf::from));
        if let Some(project) = project {
            if !path.starts_with(&project) {
                return Ok(Decision::Allow("outside the project".into()));
            }
        }
        let meta = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => m,
            _ => return Ok(Decision::Allow("not a readable file".into())),
        };
        if meta.len() < MIN_BYTES {
            return Ok(Decision::Allow("small file".into()));
        }
        let mut state = self.load_state(session);
        let now = now_s();
        if let Some(&shown) = state.shown.get(file) {
            if now.saturating_sub(shown) <= self.reread_window_s {
                return Ok(Decision::Allow("second read: the whole file".into()));
            }
        }
        let rel = project_relative(file, event);
        let outline =
            quarry_engine::summary::summarize_file_in(self.workspace().as_ref(), path, &rel)?;
        if (outline.total_lines as usize) < MIN_LINES {
            return Ok(Decision::Allow("short file".into()));
        }
        let mut reason = format!(
            "quarry: {rel} has {} lines, so here is its outline instead of the whole file. \
             Read it with offset/limit to see or edit exact lines (the ranges below), or Read it \
             again within {} min for the whole file.\n\n{}",
            outline.total_lines,
            self.reread_window_s.div_ceil(60),
            quarry_engine::summary::render(&outline)
        );
        if let Some((target, at)) = &state.last_search {
            if now.saturating_sub(*at) <= LAST_SEARCH_TTL_S
                && !append_definition(&mut reason, &outline, target, path)
            {
                append_slice(&mut reason, path, &rel, target);
            }
        }
        state.shown.insert(file.to_string(), now);
        self.save_state(session, &state);
        Ok(Decision::Deny(reason))
    }

    fn grep(&self, event: &Value, input: &Value, session: &str) -> Result<Decision> {
        let Some(pattern) = input["pattern"].as_str() else {
            return Ok(Decision::Allow("no pattern".into()));
        };
        let mut state = self.load_state(session);
        state.last_search = Some((pattern.to_string(), now_s()));
        self.save_state(session, &state);
        // The router `quarry search` uses: literal text, regexes and paths are grep's job.
        match classify(pattern) {
            QueryClass::Question | QueryClass::IssueText => {
                self.answer_question(pattern, event, input)
            }
            QueryClass::Identifier => self.definition_site(pattern, event, input),
            QueryClass::Structural => self.structural_matches(pattern, event, input),
            class => Ok(Decision::Allow(format!("{class:?} pattern: grep's job"))),
        }
    }

    fn workspace(&self) -> Option<quarry_engine::Workspace> {
        quarry_engine::Workspace::open_existing(&self.workspace_dir).ok()
    }

    fn answer_question(&self, question: &str, event: &Value, input: &Value) -> Result<Decision> {
        let Some(mut ws) = self.workspace() else {
            return Ok(Decision::Allow("no quarry index".into()));
        };
        let scope = Scope::of(&ws, event)?;
        let mut request = quarry_engine::SearchRequest::new(question);
        request.limit = 12;
        request.full_text = 0;
        scope.narrow(&ws, input, &mut request);
        // The workspace daemon answers with the model warm; without one, the model loads here.
        let how = quarry_engine::request::SearchCall::Ranked;
        let warm = match ws.store().embedding_model()? {
            Some(_) => quarry_daemon::client::search(&self.workspace_dir, &request, &how)?,
            None => None,
        };
        let response = match warm {
            Some(response) => response,
            None => {
                let _ = ws.attach_embedder(quarry_engine::EmbedPurpose::Searching);
                ws.search(&request)?
            }
        };
        if response.results.is_empty() {
            return Ok(Decision::Allow("no search results".into()));
        }
        let mut reason = format!(
            "quarry: \"{question}\" reads as a question, not a pattern, so here are quarry's {} search results \
             (Read the lines you need; Grep an identifier or a regex to search literally):\n",
            format!("{:?}", response.mode).to_lowercase()
        );
        for r in &response.results {
            reason.push_str(&format!(
                "{}{}  {}\n",
                scope.path(&r.repo, &r.path),
                r.position(),
                r.symbol.as_deref().unwrap_or("")
            ));
        }
        Ok(Decision::Deny(reason))
    }

    /// A pattern with metavariables means nothing to grep: ast-grep's matches instead.
    fn structural_matches(&self, pattern: &str, event: &Value, input: &Value) -> Result<Decision> {
        let Some(ws) = self.workspace() else {
            return Ok(Decision::Allow("no quarry index".into()));
        };
        let scope = Scope::of(&ws, event)?;
        let mut request = quarry_engine::SearchRequest::new(pattern);
        request.limit = 12;
        scope.narrow(&ws, input, &mut request);
        let response = ws.search_routed(&request)?;
        let answered = response
            .route
            .as_ref()
            .is_some_and(|r| r.route == Route::Structural && r.note.is_none());
        if !answered || response.results.is_empty() {
            return Ok(Decision::Allow("no structural matches".into()));
        }
        let shown = response.results.len();
        let mut reason = format!(
            "quarry: `{pattern}` is a structural pattern (ast-grep metavariables), which grep cannot match; {} (`quarry sg` lists them all):",
            if shown == request.limit {
                format!("its first {shown} matches")
            } else {
                format!("its {shown} matches")
            }
        );
        for r in &response.results {
            let first = r
                .text
                .as_deref()
                .and_then(|t| t.lines().next())
                .unwrap_or("")
                .trim();
            reason.push_str(&format!(
                "\n{}:{}-{}  {first}",
                scope.path(&r.repo, &r.path),
                r.start_line,
                r.end_line
            ));
        }
        Ok(Decision::Deny(reason))
    }

    fn definition_site(&self, name: &str, event: &Value, input: &Value) -> Result<Decision> {
        let Some(ws) = self.workspace() else {
            return Ok(Decision::Allow("no quarry index".into()));
        };
        let scope = Scope::of(&ws, event)?;
        // The symbol route: the definitions the name means, in the order `quarry search`
        // gives them (its package's re-export first), under the Grep call's path, glob and type.
        let mut request = quarry_engine::SearchRequest::new(name);
        request.engine = Some(quarry_engine::request::Engine::Symbol);
        request.limit = 3;
        request.full_text = 0;
        scope.narrow(&ws, input, &mut request);
        let response = ws.search_routed(&request)?;
        let sites: Vec<String> = response
            .results
            .iter()
            .filter(|r| {
                r.reason
                    .as_deref()
                    .is_some_and(|w| w.starts_with("definition"))
            })
            .map(|r| {
                format!(
                    "{}:{}-{} ({})",
                    scope.path(&r.repo, &r.path),
                    r.start_line,
                    r.end_line,
                    r.kind
                )
            })
            .collect();
        if sites.is_empty() {
            return Ok(Decision::Allow("not a known symbol".into()));
        }
        Ok(Decision::Context(format!(
            "quarry: `{name}` is defined at {}",
            sites.join(", ")
        )))
    }
}

/// Where the agent works (Claude Code's project folder, else the event's `cwd`) and what a
/// search from there covers: the indexed repo that contains that folder, else every repo.
/// Result paths are written so the agent can open them from the project: relative to it
/// when inside it, else absolute.
struct Scope {
    project: Option<PathBuf>,
    repos: Vec<String>,
    roots: std::collections::HashMap<String, PathBuf>,
}

impl Scope {
    fn of(ws: &quarry_engine::Workspace, event: &Value) -> Result<Scope> {
        let project = std::env::var("CLAUDE_PROJECT_DIR")
            .ok()
            .filter(|p| !p.is_empty())
            .or_else(|| event["cwd"].as_str().map(str::to_string))
            .map(PathBuf::from);
        let project = project.map(|p| p.canonicalize().unwrap_or(p));
        let repos = match &project {
            Some(p) => ws
                .repo_containing(p)?
                .map(|(repo, _)| vec![repo.name])
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let roots = ws
            .store()
            .repos()?
            .into_iter()
            .map(|r| {
                let root = PathBuf::from(&r.root);
                (r.name, root.canonicalize().unwrap_or(root))
            })
            .collect();
        Ok(Scope {
            project,
            repos,
            roots,
        })
    }

    /// A path the agent gave, made absolute against the project folder.
    /// A search from the hook covers what the Grep call it replaces would: its `path` (a
    /// folder or file inside an indexed repo narrows to that repo and place), its `glob`
    /// (`*.py`, over repo-relative paths) and its `type` (ripgrep's: `py`, `rust`, `js`, …).
    fn narrow(
        &self,
        ws: &quarry_engine::Workspace,
        input: &Value,
        request: &mut quarry_engine::SearchRequest,
    ) {
        request.repos = self.repos.clone();
        let grep_path = input["path"].as_str().map(|p| self.absolute(p));
        if let Some((repo, inside)) = grep_path.and_then(|p| ws.repo_containing(&p).ok().flatten())
        {
            request.repos = vec![repo.name];
            let inside = inside.to_string_lossy().into_owned();
            request.path = (!inside.is_empty()).then(|| format!("{inside}*"));
        }
        if let Some(glob) = input["glob"].as_str().filter(|g| !g.is_empty()) {
            request.path = Some(match request.path.take() {
                // Both: the folder, then the glob within it.
                Some(folder) => format!(
                    "{}{}",
                    folder.trim_end_matches('*'),
                    glob.trim_start_matches("**/")
                ),
                None => glob.to_string(),
            });
        }
        if let Some(kind) = input["type"].as_str() {
            let name = match kind {
                "py" => "python",
                "rs" => "rust",
                "js" => "javascript",
                "ts" => "typescript",
                "md" | "markdown" => "markdown",
                "cs" => "csharp",
                "rb" => "ruby",
                "c++" => "cpp",
                other => other,
            };
            request.language = quarry_core::Language::from_name(name);
        }
    }

    fn absolute(&self, path: &str) -> PathBuf {
        match &self.project {
            Some(project) => project.join(path),
            None => PathBuf::from(path),
        }
    }

    fn path(&self, repo: &str, path: &str) -> String {
        let Some(root) = self.roots.get(repo) else {
            return path.to_string();
        };
        let full = root.join(path);
        match &self.project {
            Some(project) => match full.strip_prefix(project) {
                Ok(inside) => inside.to_string_lossy().into_owned(),
                Err(_) => full.to_string_lossy().into_owned(),
            },
            None => full.to_string_lossy().into_owned(),
        }
    }
}

/// The path as the agent would name it: relative to the project when inside it.
fn project_relative(file: &str, event: &Value) -> String {
    let base = std::env::var("CLAUDE_PROJECT_DIR")
        .ok()
        .or_else(|| event["cwd"].as_str().map(str::to_string));
    base.and_then(|b| {
        Path::new(file)
            .strip_prefix(&b)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    })
    .unwrap_or_else(|| file.to_string())
}

/// When the agent just searched for a name defined in this file, the definition's source is
/// what it came for: append it to the outline.
/// The definition the last search named, when this file has it; whether it did.
fn append_definition(
    reason: &mut String,
    outline: &quarry_engine::summary::Outline,
    target: &str,
    path: &Path,
) -> bool {
    let last = target.rsplit(['.', ':']).next().unwrap_or(target);
    let Some(item) = outline
        .items
        .iter()
        .find(|i| i.name == last || i.qualified_name == target)
    else {
        return false;
    };
    let Ok(text) = quarry_engine::summary::read_source(path) else {
        return false;
    };
    let lines: Vec<&str> = text
        .lines()
        .skip(item.start_line as usize - 1)
        .take((item.end_line - item.start_line + 1) as usize)
        .take(MAX_CONTEXT_LINES)
        .collect();
    reason.push_str(&format!(
        "\nYou searched for `{target}`; its definition, lines {}-{}:\n",
        item.start_line,
        item.start_line + lines.len() as u32 - 1
    ));
    for (i, line) in lines.iter().enumerate() {
        reason.push_str(&format!("{:>6}\t{line}\n", item.start_line as usize + i));
    }
    true
}

/// Where the last search's text is used in a function of this file (no definition of it
/// here): the lines that can change it there, the slice a debugging agent would read first.
fn append_slice(reason: &mut String, path: &Path, rel: &str, target: &str) {
    let Some(answer) = quarry_engine::summary::slice_for_search(path, rel, target) else {
        return;
    };
    let what = match &answer.slice.var {
        Some(var) => format!("what can change `{var}` there"),
        None => "what the line reads can come from".to_string(),
    };
    reason.push_str(&format!(
        "\nYou searched for `{target}`; line {} of {} uses it. {what} ({} lines, `quarry slice {rel}:{}` again):\n",
        answer.slice.line,
        answer.slice.function,
        answer.code.len(),
        answer.slice.line,
    ));
    for line in answer.code.iter().take(MAX_CONTEXT_LINES) {
        reason.push_str(&format!("{:>6}\t{}\n", line.line, line.text));
    }
}

/// What Claude Code reads on stdout for a decision (docs/HOOK.md).
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    pub hook_specific_output: HookDecision,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookDecision {
    /// Always `PreToolUse`: the only event quarry's hook answers.
    pub hook_event_name: &'static str,
    /// `deny`, with the reason Claude reads instead of the tool's result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    /// Context added beside the tool's own result (the call runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

/// The answer for a decision (`None`: print nothing, the call runs as asked).
pub fn protocol_output(decision: &Decision) -> Option<HookOutput> {
    let (deny, context) = match decision {
        Decision::Allow(_) => return None,
        Decision::Deny(reason) => (Some(reason.clone()), None),
        Decision::Context(note) => (None, Some(note.clone())),
    };
    Some(HookOutput {
        hook_specific_output: HookDecision {
            hook_event_name: "PreToolUse",
            permission_decision: deny.is_some().then_some("deny"),
            permission_decision_reason: deny,
            additional_context: context,
        },
    })
}

fn log(state_dir: &Path, line: &str) {
    let _ = std::fs::create_dir_all(state_dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state_dir.join("hook.log"))
    {
        let _ = writeln!(f, "{} {line}", now_s());
    }
}

/// Runs the hook on stdin/stdout. Never fails: every problem means "let the call run".
pub fn run_claude(workspace_dir: PathBuf) -> Result<()> {
    let started = Instant::now();
    let hook = Hook::new(workspace_dir);
    let state_dir = hook.state_dir.clone();
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(16 << 20).read_to_end(&mut raw) {
        log(&state_dir, &format!("allow: cannot read stdin: {e}"));
        return Ok(());
    }
    let event: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            log(&state_dir, &format!("allow: malformed event JSON: {e}"));
            return Ok(());
        }
    };
    let tool = event["tool_name"].as_str().unwrap_or("?").to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(hook.decide(&event));
    });
    let decision = match rx.recv_timeout(BUDGET) {
        Ok(Ok(d)) => d,
        Ok(Err(e)) => Decision::Allow(format!("error: {e:#}")),
        Err(_) => Decision::Allow(format!("over the {} ms budget", BUDGET.as_millis())),
    };
    let summary = match &decision {
        Decision::Allow(why) => format!("allow ({why})"),
        Decision::Deny(r) => format!("deny ({} bytes)", r.len()),
        Decision::Context(c) => format!("context ({c})"),
    };
    log(
        &state_dir,
        &format!("{tool}: {summary} in {} ms", started.elapsed().as_millis()),
    );
    if let Some(out) = protocol_output(&decision) {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer(&mut stdout, &out).context("writing the hook answer")?;
        writeln!(stdout)?;
    }
    // The decision thread may still hold the index open after a timeout: leave now.
    std::process::exit(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Event fields as a client might send them: right, missing, of the wrong type, or odd.
    fn field() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            "[a-zA-Z0-9_./ *?()\\[\\]-]{0,40}".prop_map(Value::String),
            any::<String>().prop_map(Value::String),
            Just(serde_json::json!(["a", 1])),
            Just(serde_json::json!({"nested": {}})),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever a PreToolUse event holds, the hook decides without panicking, and an
        /// Edit or Write is never denied (the hook must never break editing).
        #[test]
        fn any_event_gets_a_decision_and_edits_always_run(
            tool in prop_oneof![
                Just("Read".to_string()),
                Just("Grep".to_string()),
                Just("Edit".to_string()),
                Just("Write".to_string()),
                "[A-Za-z]{0,8}",
            ],
            file_path in field(),
            pattern in field(),
            path in field(),
            offset in field(),
            session in field(),
        ) {
            let state = tempfile::tempdir().unwrap();
            let hook = Hook {
                state_dir: state.path().to_path_buf(),
                workspace_dir: state.path().join("no-workspace"),
                reread_window_s: DEFAULT_REREAD_WINDOW_S,
            };
            let event = serde_json::json!({
                "tool_name": tool,
                "session_id": session,
                "cwd": state.path(),
                "tool_input": {"file_path": file_path, "pattern": pattern, "path": path, "offset": offset},
            });
            let decision = hook.decide(&event);
            if tool == "Edit" || tool == "Write" {
                prop_assert!(!matches!(decision, Ok(Decision::Deny(_))), "{decision:?}");
            }
        }
    }
}
