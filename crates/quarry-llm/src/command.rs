//! A command as the model: `sh -c COMMAND`, the prompt on its stdin, the answer on its stdout.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::{LanguageModel, MAX_REPLY_BYTES};

/// Runs `command` through `sh -c` (so `claude -p`, pipes and arguments work as typed).
#[derive(Debug, Clone)]
pub struct CommandModel {
    command: String,
    timeout: Duration,
}

impl CommandModel {
    pub fn new(command: impl Into<String>, timeout: Duration) -> Result<Self> {
        let command = command.into();
        if command.trim().is_empty() {
            bail!("llm.command is empty: set it to a command that reads a prompt on stdin, e.g. `claude -p`");
        }
        Ok(Self { command, timeout })
    }
}

impl LanguageModel for CommandModel {
    fn describe(&self) -> String {
        format!("command:{}", self.command)
    }

    fn complete(&self, prompt: &str) -> Result<String> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot run `{}` (sh -c)", self.command))?;
        // Write and read on threads: a command that answers before reading all of a long
        // prompt must not deadlock against a full pipe.
        let mut stdin = child.stdin.take().expect("piped");
        let prompt = prompt.to_owned();
        let writer = std::thread::spawn(move || {
            // A command that exits without reading is not an error here; its exit status is.
            let _ = stdin.write_all(prompt.as_bytes());
        });
        let stdout = read_bounded(child.stdout.take().expect("piped"));
        let stderr = read_bounded(child.stderr.take().expect("piped"));

        let Some(status) = wait_bounded(&mut child, self.timeout)? else {
            kill_group(&mut child);
            let _ = writer.join();
            bail!(
                "`{}` gave no answer within {:.0} s (llm.timeout_s)",
                self.command,
                self.timeout.as_secs_f64()
            );
        };
        let _ = writer.join();
        let out = stdout.join().unwrap_or_default();
        let err = stderr.join().unwrap_or_default();
        if !status.success() {
            let err = String::from_utf8_lossy(&err);
            let err = err.trim();
            let tail = &err[err.len()
                - err
                    .chars()
                    .rev()
                    .take(300)
                    .map(char::len_utf8)
                    .sum::<usize>()..];
            if status.code() == Some(127) {
                bail!(
                    "`{}` was not found ({}); install it or set llm.command",
                    self.command,
                    tail
                );
            }
            bail!("`{}` failed ({status}): {tail}", self.command);
        }
        let out = String::from_utf8_lossy(&out).into_owned();
        if out.trim().is_empty() {
            bail!("`{}` answered nothing", self.command);
        }
        Ok(out)
    }
}

/// Reads a pipe to its end on a thread, keeping at most [`MAX_REPLY_BYTES`].
fn read_bounded(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut pipe = pipe;
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_REPLY_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}

/// Waits for the child up to `timeout`: `Ok(None)` when it is still running.
fn wait_bounded(child: &mut Child, timeout: Duration) -> Result<Option<std::process::ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().context("waiting for the llm command")? {
            return Ok(Some(status));
        }
        if started.elapsed() >= timeout {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills the command and everything it started (its process group), then reaps it.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the process group the child leads (it was
    // started with process_group(0)); no memory is involved.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
