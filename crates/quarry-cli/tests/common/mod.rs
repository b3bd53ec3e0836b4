//! Helpers for driving the real `quarry` binary against real folders.

#![allow(dead_code)]

pub mod git;
pub mod relay;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Env {
    pub home: tempfile::TempDir,
    pub repo: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            repo: tempfile::tempdir().unwrap(),
        }
    }

    pub fn index_dir(&self) -> PathBuf {
        self.home.path().join("ws")
    }

    pub fn quarry(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_quarry"));
        // In-process answers unless a test asks for the workspace daemon (tests/daemon.rs).
        cmd.arg("--index-dir")
            .arg(self.index_dir())
            .env("NO_COLOR", "1")
            .env("QUARRY_DAEMON", "off");
        cmd
    }

    /// Runs quarry with `args`, asserting success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "quarry {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.ok(&all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// Runs a search expected to find nothing: exit 1 (as grep), the JSON document still
    /// printed.
    pub fn json_nothing(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert_eq!(
            out.status.code(),
            Some(1),
            "quarry {all:?} should find nothing:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let answers = ["results", "commits", "calls", "callers"]
            .iter()
            .find_map(|key| json[key].as_array())
            .unwrap_or_else(|| panic!("no list of answers in {json}"));
        assert!(answers.is_empty(), "{json}");
        json
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.quarry().args(args).output().expect("quarry runs")
    }

    /// Runs quarry expecting failure; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "quarry {args:?} should fail, printed {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "quarry panicked: {stderr}");
        stderr
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        write_file(self.repo.path(), rel, content.as_ref());
    }

    pub fn repo_path(&self) -> &str {
        self.repo.path().to_str().unwrap()
    }
}

/// The `path` of every result of a search's JSON, in order.
pub fn result_paths(json: &serde_json::Value) -> Vec<String> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

pub fn write_file(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A small multi-language repo with known definitions.
pub fn sample_repo(env: &Env) {
    env.write(
        "src/config.rs",
        "use std::path::Path;\n\n/// Reads the settings file.\npub fn parse_config_file(path: &Path) -> Config {\n    let text = std::fs::read_to_string(path).unwrap();\n    toml::from_str(&text).unwrap()\n}\n\npub struct Config {\n    pub name: String,\n}\n",
    );
    env.write(
        "app/users.py",
        "class UserStore:\n    \"\"\"Keeps users.\"\"\"\n\n    def getUserName(self, user_id):\n        return self.users[user_id].name\n\n    def delete_user(self, user_id):\n        del self.users[user_id]\n",
    );
    env.write(
        "web/upload.ts",
        "export class UploadQueue {\n  requeueWithBackoff(job: Job): void {\n    setTimeout(() => this.push(job), job.attempts * 1000);\n  }\n}\n",
    );
    env.write("docs/guide.md", "# Guide\n\nIntro text.\n\n## Retry policy\n\nFailed uploads are retried with exponential backoff.\n");
    env.write(
        "notes.txt",
        "plain text notes about nothing in particular\n",
    );
}

/// Validates published schemas against real answers with third-party validators
/// (fixtures/check_schemas.py: openapi-spec-validator and jsonschema, installed by
/// scripts/install-test-clients.sh): `{"openapi": DOC, "answers": [...]}` or
/// `{"tools": [...], "answers": [...]}`.
#[allow(dead_code)]
pub fn check_schemas(input: &serde_json::Value) {
    use std::io::Write;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check_schemas.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the schema checker");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "answers that do not fit their published schema (or a checker missing: run scripts/install-test-clients.sh):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `command` with `input` on its stdin; its stdout and stderr are captured.
#[allow(dead_code)]
pub fn output_with_stdin(command: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command starts");
    // A command that does not read its input (`--files` lists the tree) may have exited
    // before it is written: its closed pipe is no failure of the test.
    match child.stdin.take().unwrap().write_all(input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    child.wait_with_output().unwrap()
}

/// A `quarry serve` on a free loopback port, killed when dropped.
#[allow(dead_code)]
pub struct Server {
    child: std::process::Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `quarry serve` for `env`'s workspace (plus `extra` arguments) and reads the
/// address it prints.
#[allow(dead_code)]
pub fn serve(env: &Env, extra: &[&str]) -> Server {
    use std::io::BufRead;
    let mut child = env
        .quarry()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(extra)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("quarry: serving ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    Server { child, base }
}

/// A repo big enough for an index file of many pages: `n` Python files with unique names.
#[allow(dead_code)]
pub fn many_files(env: &Env, n: usize) {
    for i in 0..n {
        env.write(
            &format!("pkg/module_{i}.py"),
            format!(
                "def handler_{i}(request):\n    \"\"\"Handle request kind {i}.\"\"\"\n    return request.value * {i}\n\n\nclass Store{i}:\n    def load_{i}(self):\n        return {i}\n"
            ),
        );
    }
}

#[allow(dead_code)]
pub fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `GET path` on a `quarry serve`: status, `Retry-After` if any, and body (an error status is
/// an answer too).
pub fn get_with_retry_after(server: &Server, path: &str) -> (u16, Option<String>, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent.get(format!("{}{path}", server.base)).call().unwrap();
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    (status, retry, response.body_mut().read_to_string().unwrap())
}
