//! `quarry hook claude|install|uninstall`: runs the hook (hook.rs), or adds quarry's
//! PreToolUse hook to a Claude Code settings file (project `.claude/settings.json` or the
//! user's `~/.claude/settings.json`), merging with what is there. Idempotent; the previous file is kept as `settings.json.quarry-backup`;
//! a file that is not valid JSON is left untouched and reported.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// How Claude Code matches the tools the hook handles.
pub const MATCHER: &str = "Read|Grep";
/// Seconds Claude Code waits for the hook (it answers or gives up well within).
const TIMEOUT_S: u64 = 5;
/// What identifies quarry's entries when merging or removing.
const MARK: &str = "hook claude";

#[derive(Args)]
pub struct HookArgs {
    #[command(subcommand)]
    action: HookAction,
}

#[derive(Subcommand)]
pub enum HookAction {
    /// Run as Claude Code's PreToolUse hook: reads the event JSON on stdin, answers on stdout.
    Claude,
    /// Add the hook to .claude/settings.json of the current project (or the user's settings).
    Install {
        /// Install into ~/.claude/settings.json (all projects).
        #[arg(long)]
        user: bool,
        /// The settings file to change [default: .claude/settings.json, or the user's with --user].
        #[arg(long, value_name = "FILE")]
        settings: Option<PathBuf>,
    },
    /// Remove quarry's hook from the settings file.
    Uninstall {
        #[arg(long)]
        user: bool,
        #[arg(long, value_name = "FILE")]
        settings: Option<PathBuf>,
    },
}

/// `quarry hook ACTION`.
pub fn hook(index_dir: &Option<PathBuf>, dir: &Path, args: HookArgs) -> Result<()> {
    let settings_file = |user: bool, settings: Option<PathBuf>| -> Result<PathBuf> {
        match settings {
            Some(s) => Ok(s),
            None => settings_path(user, &std::env::current_dir()?),
        }
    };
    match args.action {
        HookAction::Claude => crate::hook::run_claude(dir.to_path_buf()),
        HookAction::Install { user, settings } => {
            let file = settings_file(user, settings)?;
            // The workspace this command uses, pinned when it came from a flag or from
            // $QUARRY_HOME: Claude Code runs the hook without this shell's environment.
            let from_home = std::env::var_os("QUARRY_HOME").is_some_and(|h| !h.is_empty());
            let pinned = index_dir
                .clone()
                .or_else(|| from_home.then(|| dir.to_path_buf()))
                .map(|d| std::path::absolute(&d).unwrap_or(d));
            let command = hook_command(pinned.as_deref())?;
            let changed = install(&file, &command)?;
            eprintln!(
                "quarry: {} {} (PreToolUse {}: {command})",
                if changed {
                    "hook installed in"
                } else {
                    "hook already installed in"
                },
                file.display(),
                MATCHER
            );
            Ok(())
        }
        HookAction::Uninstall { user, settings } => {
            let file = settings_file(user, settings)?;
            let removed = uninstall(&file)?;
            eprintln!(
                "quarry: removed {removed} hook entr{} from {}",
                if removed == 1 { "y" } else { "ies" },
                file.display()
            );
            Ok(())
        }
    }
}

/// The settings file for the project (`.claude/settings.json` under `project`) or the user.
pub fn settings_path(user: bool, project: &Path) -> Result<PathBuf> {
    if user {
        let home = std::env::var_os("HOME").context("HOME is not set")?;
        Ok(PathBuf::from(home).join(".claude").join("settings.json"))
    } else {
        Ok(project.join(".claude").join("settings.json"))
    }
}

fn read_settings(path: &Path) -> Result<Value> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(json!({})),
        Ok(text) => {
            let value: Value = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not valid JSON; fix it first (quarry leaves it as it is)",
                    path.display()
                )
            })?;
            if !value.is_object() {
                bail!(
                    "{} is not a JSON object; quarry leaves it as it is",
                    path.display()
                );
            }
            Ok(value)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_settings(path: &Path, value: &Value) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if path.exists() {
        let backup = path.with_extension("json.quarry-backup");
        std::fs::copy(path, &backup).with_context(|| {
            format!("cannot back up {} to {}", path.display(), backup.display())
        })?;
    }
    // The user's key order is kept (serde_json's `preserve_order`) and so is their indent.
    let indent = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| indent_of(&text))
        .unwrap_or_else(|| "  ".to_string());
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut serializer)?;
    out.push(b'\n');
    let tmp = path.with_extension("json.quarry-tmp");
    std::fs::write(&tmp, out)
        .and_then(|_| std::fs::rename(&tmp, path))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The indent unit of a pretty-printed JSON file: the leading whitespace of its first
/// indented line (two spaces, four, a tab).
fn indent_of(text: &str) -> Option<String> {
    text.lines()
        .skip(1)
        .map(|line| {
            line.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .find(|ws| !ws.is_empty())
}

fn is_ours(entry: &Value) -> bool {
    entry["hooks"].as_array().is_some_and(|hooks| {
        hooks
            .iter()
            .any(|h| h["command"].as_str().is_some_and(|c| c.contains(MARK)))
    })
}

/// Removes quarry's entries from `PreToolUse`; returns how many.
fn remove_ours(settings: &mut Value) -> usize {
    let Some(list) = settings
        .get_mut("hooks")
        .and_then(|h| h.get_mut("PreToolUse"))
        .and_then(Value::as_array_mut)
    else {
        return 0;
    };
    let before = list.len();
    list.retain(|e| !is_ours(e));
    before - list.len()
}

/// Adds (or refreshes) the hook entry running `command`. Returns true when the file changed.
pub fn install(path: &Path, command: &str) -> Result<bool> {
    let original = read_settings(path)?;
    let mut settings = original.clone();
    remove_ours(&mut settings);
    let hooks = settings
        .as_object_mut()
        .expect("checked to be an object")
        .entry("hooks")
        .or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("`hooks` in {} is not an object", path.display());
    };
    let list = hooks.entry("PreToolUse").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        bail!("`hooks.PreToolUse` in {} is not a list", path.display());
    };
    list.push(json!({
        "matcher": MATCHER,
        "hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_S}],
    }));
    if settings == original {
        return Ok(false);
    }
    write_settings(path, &settings)?;
    Ok(true)
}

/// Removes quarry's hook entries; returns how many were removed.
pub fn uninstall(path: &Path) -> Result<usize> {
    if !path.exists() {
        return Ok(0);
    }
    let mut settings = read_settings(path)?;
    let removed = remove_ours(&mut settings);
    if removed > 0 {
        if let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) {
            if hooks["PreToolUse"].as_array().is_some_and(Vec::is_empty) {
                hooks.remove("PreToolUse");
            }
        }
        if settings["hooks"].as_object().is_some_and(|h| h.is_empty()) {
            settings.as_object_mut().expect("object").remove("hooks");
        }
        if settings.as_object().is_some_and(|s| s.is_empty()) {
            remove_emptied(path)?;
        } else {
            write_settings(path, &settings)?;
        }
    }
    Ok(removed)
}

/// Removes a settings file that held nothing but quarry's hook, with the backup quarry kept of
/// it when that holds nothing of the user's either, and its `.claude` folder when that is
/// then empty: a repo that had no `.claude/` before `hook install` has none after `uninstall`.
fn remove_emptied(path: &Path) -> Result<()> {
    std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
    let backup = path.with_extension("json.quarry-backup");
    let backup_is_ours = read_settings(&backup).is_ok_and(|mut kept| {
        remove_ours(&mut kept);
        kept.as_object().is_some_and(|k| {
            k.iter().all(|(key, v)| {
                key == "hooks"
                    && v.as_object().is_some_and(|h| {
                        h.values().all(|l| l.as_array().is_some_and(Vec::is_empty))
                    })
            })
        })
    });
    if backup.exists() && backup_is_ours {
        std::fs::remove_file(&backup)
            .with_context(|| format!("cannot remove {}", backup.display()))?;
    }
    if let Some(dir) = path.parent().filter(|d| d.ends_with(".claude")) {
        // Only when empty: anything else in it is the user's.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}

/// The command line Claude Code runs: this binary by absolute path, so PATH does not matter.
pub fn hook_command(index_dir: Option<&Path>) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find the quarry binary's path")?;
    let quote = |p: &Path| crate::output::shell_word(&p.to_string_lossy());
    Ok(match index_dir {
        Some(dir) => format!("{} --index-dir {} {MARK}", quote(&exe), quote(dir)),
        None => format!("{} {MARK}", quote(&exe)),
    })
}
