//! The Claude Code hook, transcript-style: recorded PreToolUse events go through the real
//! binary one after another (as a session would send them), and every answer is checked
//! against the protocol — JSON with `hookSpecificOutput` when quarry answers, nothing at all
//! (and exit 0) when the tool should run unchanged.

mod common;

use common::Env;
use serde_json::{json, Value};

struct Session<'a> {
    env: &'a Env,
    state: tempfile::TempDir,
    id: String,
}

impl Session<'_> {
    /// Sends one event (raw bytes); returns the parsed answer, or None when stdout is empty.
    fn send_raw(&self, body: &[u8]) -> Option<Value> {
        let out = common::output_with_stdin(
            self.env
                .quarry()
                .args(["hook", "claude"])
                .env("QUARRY_HOOK_STATE", self.state.path())
                .env("CLAUDE_PROJECT_DIR", self.env.repo.path()),
            body,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "a hook must exit 0: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        if stdout.trim().is_empty() {
            return None;
        }
        let answer: Value = serde_json::from_str(&stdout).expect("the answer is one JSON document");
        let specific = &answer["hookSpecificOutput"];
        assert_eq!(specific["hookEventName"], "PreToolUse", "{answer}");
        match specific["permissionDecision"].as_str() {
            Some("deny") => assert!(specific["permissionDecisionReason"].is_string(), "{answer}"),
            None => assert!(specific["additionalContext"].is_string(), "{answer}"),
            Some(other) => panic!("unexpected decision {other}: {answer}"),
        }
        Some(answer)
    }

    fn send(&self, tool: &str, input: Value) -> Option<Value> {
        let event = json!({
            "session_id": self.id,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": self.env.repo.path(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_01",
        });
        self.send_raw(event.to_string().as_bytes())
    }

    fn read(&self, rel: &str) -> Option<Value> {
        let path = self.env.repo.path().join(rel);
        self.send("Read", json!({ "file_path": path }))
    }
}

fn reason(answer: &Option<Value>) -> &str {
    answer.as_ref().expect("quarry answered")["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .expect("a deny with a reason")
}

/// A Python module of about 240 lines with known definitions.
fn big_module() -> String {
    let mut text = String::from("import os\nimport sys\n\n\nclass UploadQueue:\n    \"\"\"Jobs waiting to be uploaded.\"\"\"\n\n    max_attempts = 5\n\n");
    for i in 0..20 {
        text.push_str(&format!(
            "    def step_{i}(self, job):\n        \"\"\"Step {i} of the upload.\"\"\"\n        job.log('step {i}')\n        job.attempts += {i}\n        return job\n\n"
        ));
    }
    text.push_str("    def requeue_with_backoff(self, job):\n        \"\"\"Puts a failed job back with a delay.\"\"\"\n        job.delay = 2 ** job.attempts\n        self.jobs.append(job)\n\n\n");
    for i in 0..16 {
        text.push_str(&format!(
            "def helper_{i}(value):\n    total = value * {i}\n    return total\n\n\n"
        ));
    }
    text
}

#[test]
fn a_session_of_reads_and_greps_gets_protocol_answers() {
    let env = Env::new();
    env.write("app/upload.py", big_module());
    env.write("app/small.py", "def tiny():\n    return 1\n");
    env.write(
        "README.md",
        "# Readme\n\n".to_string() + &"Some words about uploads.\n".repeat(200),
    );
    env.write("tests/test_upload.py", big_module());
    env.ok(&["index", env.repo_path()]);
    let session = Session {
        env: &env,
        state: tempfile::tempdir().unwrap(),
        id: "session-1".into(),
    };
    let lines = big_module().lines().count();

    // A whole-file Read of a big code file: the outline instead, with exact line numbers.
    let first = session.read("app/upload.py");
    let outline = reason(&first);
    assert!(
        outline.contains(&format!("app/upload.py has {lines} lines")),
        "{outline}"
    );
    assert!(outline.contains("offset/limit"), "{outline}");
    let requeue_line = big_module()
        .lines()
        .position(|l| l.contains("def requeue_with_backoff"))
        .unwrap()
        + 1;
    // A module this dense is outlined within its budget: methods by name and line.
    assert!(
        outline.contains(&format!("requeue_with_backoff {requeue_line}")),
        "{outline}"
    );
    assert!(outline.contains("1-2 imports (2): os, sys"), "{outline}");
    assert!(
        outline.len() * 2 < big_module().len(),
        "the outline is smaller"
    );

    // The escape hatches: a second Read, a scoped Read, and files that are not worth it.
    assert_eq!(
        session.read("app/upload.py"),
        None,
        "second read gets the whole file"
    );
    let scoped = session.send(
        "Read",
        json!({"file_path": env.repo.path().join("app/upload.py"), "offset": 10, "limit": 20}),
    );
    assert_eq!(scoped, None);
    assert_eq!(session.read("app/small.py"), None, "small file");
    assert_eq!(session.read("README.md"), None, "not code");
    assert_eq!(session.read("tests/test_upload.py"), None, "test file");
    assert_eq!(
        session.read("app/missing.py"),
        None,
        "missing file: the tool reports it"
    );

    // Greps, by kind of pattern.
    let question = session.send(
        "Grep",
        json!({"pattern": "where do we retry failed uploads with a delay"}),
    );
    let answer = reason(&question);
    assert!(answer.contains("app/upload.py:"), "{answer}");
    let ident = session.send(
        "Grep",
        json!({"pattern": "requeue_with_backoff", "output_mode": "content"}),
    );
    let note = ident.unwrap()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.contains(&format!("app/upload.py:{requeue_line}-")),
        "{note}"
    );
    assert_eq!(
        session.send("Grep", json!({"pattern": "def step_\\d+\\("})),
        None,
        "regex"
    );
    // A structural pattern gets ast-grep's matches instead of grep's nothing.
    let structural = session.send("Grep", json!({"pattern": "def $NAME($$$ARGS): $$$BODY"}));
    let matches = reason(&structural);
    assert!(
        matches.contains("structural pattern") && matches.contains("app/upload.py:"),
        "{matches}"
    );
    // A literal and a path go on to Grep untouched.
    assert_eq!(
        session.send("Grep", json!({"pattern": "\"retry later\""})),
        None,
        "literal"
    );
    assert_eq!(
        session.send("Grep", json!({"pattern": "app/upload.py"})),
        None,
        "path"
    );

    // A new session: Grep for a name, then Read its file: the outline brings the definition.
    let other = Session {
        env: &env,
        state: tempfile::tempdir().unwrap(),
        id: "session-2".into(),
    };
    other.send("Grep", json!({"pattern": "helper_7"}));
    let with_context = other.read("app/upload.py");
    let text = reason(&with_context);
    assert!(text.contains("You searched for `helper_7`"), "{text}");
    assert!(text.contains("total = value * 7"), "{text}");

    // Bad input never blocks the agent.
    assert_eq!(session.send_raw(b"{not json"), None);
    assert_eq!(session.send_raw(b""), None);
    assert_eq!(session.send("Bash", json!({"command": "ls"})), None);
    assert_eq!(session.send("Read", json!({"no_path": true})), None);
    let log = std::fs::read_to_string(session.state.path().join("hook.log")).unwrap();
    assert!(log.contains("malformed event JSON"), "{log}");
}

#[test]
fn a_grep_from_one_project_answers_from_that_repo_only() {
    // Two repos in one workspace that both know about uploads; the agent works in the first.
    let env = Env::new();
    env.write("app/upload.py", big_module());
    let other = tempfile::tempdir().unwrap();
    common::write_file(other.path(), "lib/upload_retry.py", big_module().as_bytes());
    common::write_file(
        other.path(),
        "lib/more.py",
        b"def retry_failed_upload_later(job):\n    \"\"\"Retry failed uploads with a delay.\"\"\"\n    return job\n",
    );
    env.ok(&["index", env.repo_path()]);
    env.ok(&["index", other.path().to_str().unwrap()]);
    let session = Session {
        env: &env,
        state: tempfile::tempdir().unwrap(),
        id: "scoped".into(),
    };
    let question = session.send(
        "Grep",
        json!({"pattern": "where do we retry failed uploads with a delay"}),
    );
    let answer = reason(&question);
    assert!(answer.contains("app/upload.py:"), "{answer}");
    assert!(!answer.contains("lib/"), "another repo's files: {answer}");
    let ident = session.send("Grep", json!({"pattern": "retry_failed_upload_later"}));
    assert_eq!(ident, None, "a name only the other repo defines: {ident:?}");

    // Grep aimed at the other repo's folder searches there, with paths the agent can open.
    let aimed = session.send(
        "Grep",
        json!({"pattern": "where do we retry failed uploads with a delay", "path": other.path()}),
    );
    let answer = reason(&aimed);
    let other_root = other.path().canonicalize().unwrap();
    assert!(
        answer.contains(&format!("{}/lib/", other_root.display())),
        "{answer}"
    );
    assert!(!answer.contains("app/upload.py"), "{answer}");

    // A name's Grep keeps its path and glob: aimed at the other repo, the definition there;
    // with a glob no definition matches, Grep answers alone.
    let ident = session.send(
        "Grep",
        json!({"pattern": "retry_failed_upload_later", "path": other.path()}),
    );
    let note = ident.unwrap()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(note.contains("lib/more.py:1-"), "{note}");
    let ident = session.send(
        "Grep",
        json!({"pattern": "retry_failed_upload_later", "path": other.path(), "glob": "*.rs"}),
    );
    assert_eq!(ident, None, "{ident:?}");
}

#[test]
fn without_an_index_reads_are_still_outlined_and_greps_pass() {
    let env = Env::new();
    env.write("app/upload.py", big_module());
    let session = Session {
        env: &env,
        state: tempfile::tempdir().unwrap(),
        id: "s".into(),
    };
    assert!(reason(&session.read("app/upload.py")).contains("UploadQueue"));
    assert_eq!(
        session.send("Grep", json!({"pattern": "where are jobs uploaded again"})),
        None
    );
    assert_eq!(
        session.send("Grep", json!({"pattern": "UploadQueue"})),
        None
    );
}

#[test]
fn install_merges_is_idempotent_backs_up_and_uninstalls() {
    let env = Env::new();
    let settings = env.repo.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = json!({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "their-check"}]}]}
    });
    std::fs::write(&settings, theirs.to_string()).unwrap();
    let install = || {
        let out = env
            .quarry()
            .args(["hook", "install"])
            .current_dir(env.repo.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str::<Value>(&std::fs::read_to_string(&settings).unwrap()).unwrap()
    };
    let once = install();
    let twice = install();
    assert_eq!(once, twice, "installing twice changes nothing");
    let entries = once["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["hooks"][0]["command"], "their-check");
    assert_eq!(entries[1]["matcher"], "Read|Grep");
    let command = entries[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.ends_with("hook claude"), "{command}");
    assert_eq!(once["permissions"], theirs["permissions"]);
    let backup = std::fs::read_to_string(settings.with_extension("json.quarry-backup")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&backup).unwrap(), theirs);

    let out = env
        .quarry()
        .args(["hook", "uninstall"])
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(after, theirs);

    // The user's key order and indent survive an install, and an uninstall gives back the
    // very same text.
    let ordered = "{\n    \"theme\": \"dark\",\n    \"model\": \"opus\",\n    \"env\": {\n        \"B\": \"1\",\n        \"A\": \"2\"\n    }\n}\n";
    std::fs::write(&settings, ordered).unwrap();
    install();
    let text = std::fs::read_to_string(&settings).unwrap();
    let keys: Vec<usize> = [
        "\"theme\"",
        "\"model\"",
        "\"env\"",
        "\"B\"",
        "\"A\"",
        "\"hooks\"",
    ]
    .iter()
    .map(|k| text.find(k).unwrap())
    .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(
        text.contains("\n    \"model\""),
        "four-space indent kept: {text}"
    );
    let out = env
        .quarry()
        .args(["hook", "uninstall"])
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), ordered);

    // A settings file that is not JSON is reported and left alone.
    std::fs::write(&settings, "{ broken").unwrap();
    let out = env
        .quarry()
        .args(["hook", "install"])
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ broken");
}

#[test]
fn the_installed_hook_names_the_workspace_quarry_home_chose() {
    let env = Env::new();
    let settings = env.repo.path().join(".claude/settings.json");
    let home = env.home.path().join("from-env");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args(["hook", "install"])
        .env("QUARRY_HOME", &home)
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let command = installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    // Claude Code runs the hook without this shell's QUARRY_HOME: the folder is in the command.
    assert!(
        command.contains(&format!("--index-dir {}", home.display())),
        "{command}"
    );
    // The repo had no `.claude/`: after an uninstall it has none (no `{}`, no backup).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"))
        .args(["hook", "uninstall"])
        .env("QUARRY_HOME", &home)
        .current_dir(env.repo.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        !env.repo.path().join(".claude").exists(),
        "{:?}",
        std::fs::read_dir(settings.parent().unwrap()).map(|d| d.count())
    );
}

/// A search for a name the file uses but does not define: the outline ends with the slice at
/// its last use in the first function that uses it — the lines that can change it there.
#[test]
fn a_search_for_a_used_name_brings_its_slice_to_the_next_outline() {
    let env = Env::new();
    let mut text = String::from(
        "def send_all(jobs, limit):\n    retries = 0\n    sent = []\n    for job in jobs:\n        if job.failed:\n            retries += 1\n        sent.append(job)\n    label = 'done'\n    if retries > limit:\n        raise TooMany(retries)\n    return sent\n\n\n",
    );
    for i in 0..80 {
        text.push_str(&format!(
            "def helper_{i}(value):\n    total = value * {i}\n    return total\n\n\n"
        ));
    }
    env.write("app/send.py", &text);
    env.ok(&["index", env.repo_path()]);
    let session = Session {
        env: &env,
        state: tempfile::tempdir().unwrap(),
        id: "session-slice".into(),
    };
    session.send("Grep", json!({"pattern": "retries"}));
    let answer = session.read("app/send.py");
    let said = reason(&answer);
    assert!(
        said.contains("You searched for `retries`; line 10 of send_all uses it"),
        "{said}"
    );
    let tail = &said[said.find("You searched for").unwrap()..];
    for line in [
        "     2\t    retries = 0",
        "     4\t    for job in jobs:",
        "     6\t            retries += 1",
        "     9\t    if retries > limit:",
    ] {
        assert!(tail.contains(line), "{line} in {tail}");
    }
    assert!(!tail.contains("label = 'done'"), "{tail}");
}
