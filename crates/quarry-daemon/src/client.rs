//! Asking the workspace's daemon, and starting it. Every failure to get an answer — no socket,
//! a stale one, another build, a busy or failing daemon, a timeout — is `Ok(None)`: the caller
//! answers in-process exactly as it would without a daemon, and says nothing. A daemon is
//! started (detached, for the calls that follow) when none runs and `daemon.auto` allows it.
//!
//! `QUARRY_DAEMON` overrides: `off` never asks or starts one; `require` makes every failure an
//! error (tests and benchmarks use it to be sure an answer came from the daemon).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};
use quarry_engine::answer::{CommitSearch, Mode, SearchResponse};
use quarry_engine::exact::{FilterReport, GrepRequest, GrepStats};
use quarry_engine::{CommitQuery, SearchRequest};

use crate::place::{build_id, Place};
use crate::protocol::{Call, DaemonStatus, Envelope, Reply, SearchCall, PROTOCOL};

/// How long a client waits for the daemon to take its request (`Reply::Accepted`, sent before
/// any work) or to answer a status: a daemon that is stopped (SIGSTOP) or hung says nothing,
/// and the client answers in-process after this instead of after the work's deadline.
pub const ACCEPT_TIMEOUT: Duration = Duration::from_millis(500);

/// How long a client waits for the answer to a request the daemon took (an issue text embeds
/// in well under a second; a daemon stuck longer than this is not worth waiting for).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The workspace's daemon holds it but did not take a request within `ACCEPT_TIMEOUT`.
#[derive(Debug)]
pub struct Unresponsive {
    pub pid: Option<u32>,
}

impl std::fmt::Display for Unresponsive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = ACCEPT_TIMEOUT.as_millis();
        match self.pid {
            Some(pid) => write!(
                f,
                "the workspace daemon (pid {pid}) did not answer within {ms} ms: it is stopped or hung (`kill -CONT {pid}` resumes it, `kill {pid}` ends it)"
            ),
            None => write!(
                f,
                "the workspace daemon did not answer within {ms} ms: it is stopped or hung (`quarry daemon stop` ends it)"
            ),
        }
    }
}

impl std::error::Error for Unresponsive {}

/// Says once per process that the daemon did not answer and the answer is this process's.
fn tell_unresponsive(e: &anyhow::Error) -> bool {
    static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let Some(hung) = e.downcast_ref::<Unresponsive>() else {
        return false;
    };
    if !TOLD.swap(true, std::sync::atomic::Ordering::SeqCst) {
        eprintln!("quarry: {hung}; answering in-process");
    }
    true
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Policy {
    Off,
    Auto,
    Require,
}

fn policy() -> Policy {
    match std::env::var("QUARRY_DAEMON").as_deref() {
        Ok("off") | Ok("0") | Ok("false") => Policy::Off,
        Ok("require") => Policy::Require,
        _ => Policy::Auto,
    }
}

/// `request` answered by the workspace's daemon as `how` says, if one answers; one is
/// started for the next call when none runs (a search that embeds its query).
pub fn search(
    dir: &Path,
    request: &SearchRequest,
    how: &SearchCall,
) -> Result<Option<SearchResponse>> {
    search_with(dir, request, how, true)
}

/// `request` answered by the workspace's daemon if one runs; none is started (a search that
/// never loads the model: a name, a path, a literal, as `quarry grep`).
pub fn search_if_running(
    dir: &Path,
    request: &SearchRequest,
    how: &SearchCall,
) -> Result<Option<SearchResponse>> {
    if policy() != Policy::Require && !Place::of(dir).is_held() {
        return Ok(None);
    }
    search_with(dir, request, how, false)
}

fn search_with(
    dir: &Path,
    request: &SearchRequest,
    how: &SearchCall,
    start: bool,
) -> Result<Option<SearchResponse>> {
    let call = Call::Search {
        request: request.clone(),
        how: how.clone(),
    };
    match answered(dir, call, start)? {
        Some(Reply::Search { response }) => Ok(Some(response)),
        _ => Ok(None),
    }
}

/// Commits ranked for `text` by the workspace's daemon, if one answers (`quarry log`).
pub fn log(
    dir: &Path,
    text: &str,
    query: &CommitQuery,
    mode: Mode,
) -> Result<Option<CommitSearch>> {
    let call = Call::Log {
        text: text.to_string(),
        query: query.clone(),
        mode,
    };
    match answered(dir, call, true)? {
        Some(Reply::Commits { found }) => Ok(Some(found)),
        _ => Ok(None),
    }
}

/// The daemon's answer to `call`; `None` (and, with `start`, a daemon started for next time)
/// when it gives none, an error instead under `QUARRY_DAEMON=require`.
fn answered(dir: &Path, call: Call, start: bool) -> Result<Option<Reply>> {
    let policy = policy();
    if policy == Policy::Off {
        return Ok(None);
    }
    match ask(dir, call) {
        Ok(reply @ (Reply::Search { .. } | Reply::Commits { .. })) => Ok(Some(reply)),
        other => {
            let hung =
                matches!(&other, Err(e) if policy != Policy::Require && tell_unresponsive(e));
            let why = match other {
                Ok(Reply::Refused { why }) => why,
                Ok(Reply::Failed { error }) => error,
                Ok(_) => "an unexpected answer".to_string(),
                Err(e) => format!("{e:#}"),
            };
            if policy == Policy::Require {
                bail!("the daemon did not answer: {why}");
            }
            if !hung && start {
                start_if_wanted(dir);
            }
            Ok(None)
        }
    }
}

/// `quarry grep` run by the workspace's daemon when one runs (its file lists and index are
/// warm there), writing its output into `output` (the caller's standard output, passed to the
/// daemon: fd_passing.rs) as the caller would have; the stats and the filter's report. `None`:
/// nothing was written, answer in-process. A grep never starts a daemon (it needs no model);
/// `request.base` must be the caller's working directory. A reader that closed `output` is
/// an `io::ErrorKind::BrokenPipe` error, as the in-process write would give.
#[cfg(unix)]
pub fn grep(
    dir: &Path,
    request: &GrepRequest,
    output: std::os::fd::BorrowedFd<'_>,
) -> Result<Option<(GrepStats, FilterReport)>> {
    let policy = policy();
    if policy == Policy::Off || !Place::of(dir).socket.exists() {
        return match policy {
            Policy::Require => bail!("no daemon runs for {}", dir.display()),
            _ => Ok(None),
        };
    }
    let call = Call::Grep {
        request: request.clone(),
    };
    let before = OutputMark::of(output);
    match ask_passing(dir, call, Some(output)) {
        Ok(Reply::Grep { stats, filter, .. }) => Ok(Some((stats, filter))),
        // The daemon was told to write and gave no answer: it may have written part of the
        // output, and may still (stopped, and continued later). Only once it can write no
        // more, and only when it wrote nothing, is the answer this process's.
        Err(e) if e.downcast_ref::<AnswerLost>().is_some() => {
            let lost = e.downcast::<AnswerLost>().expect("checked");
            let gone = lost.pid.is_some_and(silence);
            let untouched = before.is_some() && before == OutputMark::of(output);
            if gone && untouched && policy != Policy::Require {
                eprintln!("quarry: {lost}; it wrote nothing, answering in-process");
                return Ok(None);
            }
            bail!(
                "{lost}; {} — run the command again (`QUARRY_DAEMON=off` answers without it)",
                if gone {
                    "the output above may be incomplete"
                } else {
                    "it may still write into this output"
                }
            )
        }
        // It may have written part of the output: say what went wrong, never search again.
        Ok(Reply::GrepStopped { closed: true, .. }) => {
            Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into())
        }
        Ok(Reply::GrepStopped { error, .. }) => bail!("{error}"),
        other if policy == Policy::Require => bail!("the daemon did not answer: {other:?}"),
        Err(e) => {
            tell_unresponsive(&e);
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// The running daemon's status, if one answers.
pub fn status(dir: &Path) -> Option<DaemonStatus> {
    match ask(dir, Call::Status) {
        Ok(Reply::Status { status }) => Some(status),
        _ => None,
    }
}

/// Asks the daemon to stop; whether one was running.
pub fn stop(dir: &Path) -> bool {
    matches!(ask(dir, Call::Stop), Ok(Reply::Stopping))
}

/// One request, one answer.
#[cfg(unix)]
fn ask(dir: &Path, call: Call) -> Result<Reply> {
    ask_passing(dir, call, None)
}

/// One request, one answer; `output`, when given, travels with the request for the daemon
/// to write into (a grep's standard output, fd_passing.rs).
#[cfg(unix)]
fn ask_passing(
    dir: &Path,
    call: Call,
    output: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<Reply> {
    use std::os::unix::net::UnixStream;
    let place = Place::of(dir);
    let mut stream = UnixStream::connect(&place.socket)?;
    stream.set_read_timeout(Some(ACCEPT_TIMEOUT))?;
    stream.set_write_timeout(Some(ACCEPT_TIMEOUT))?;
    let envelope = Envelope {
        protocol: PROTOCOL,
        build: build_id(),
        call,
    };
    let mut line = serde_json::to_vec(&envelope)?;
    line.push(b'\n');
    let unresponsive = |e: std::io::Error| -> anyhow::Error {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Unresponsive {
                pid: place.holder_pid(),
            }
            .into(),
            _ => e.into(),
        }
    };
    match output {
        Some(fd) => crate::fd_passing::send_with_fd(&stream, &line, fd),
        None => stream.write_all(&line),
    }
    .map_err(unresponsive)?;
    let mut reader = BufReader::new(&stream);
    let first = read_reply(&mut reader).map_err(unresponsive)?;
    if !matches!(first, Reply::Accepted) {
        return Ok(first);
    }
    // Taken: now the work's own deadline; a grep's daemon waits for the word to write.
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    stream.set_write_timeout(Some(ANSWER_TIMEOUT))?;
    if output.is_some() {
        // Who will write: the process at the socket's other end, as the kernel says.
        let pid = peer_pid(&stream);
        (&stream).write_all(&[crate::protocol::GO])?;
        return read_reply(&mut reader).map_err(|e| AnswerLost { pid, why: e }.into());
    }
    Ok(read_reply(&mut reader)?)
}

/// A daemon told to write into the caller's output gave no answer (it died, was stopped, or
/// its deadline passed): what it wrote, and whether it still may, is unknown to the reply.
#[derive(Debug)]
struct AnswerLost {
    pid: Option<u32>,
    why: std::io::Error,
}

impl std::fmt::Display for AnswerLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who = self.pid.map_or("the workspace daemon".to_string(), |pid| {
            format!("the workspace daemon (pid {pid})")
        });
        write!(
            f,
            "{who} stopped answering in the middle of a grep ({})",
            self.why
        )
    }
}

impl std::error::Error for AnswerLost {}

/// The pid of the process at the other end of a Unix socket (SO_PEERCRED).
#[cfg(unix)]
fn peer_pid(stream: &std::os::unix::net::UnixStream) -> Option<u32> {
    nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .ok()
        .and_then(|c| u32::try_from(c.pid()).ok())
}

/// Makes sure `pid` can write no more: killed (a stopped process dies of SIGKILL too) and
/// waited for; whether it is gone.
#[cfg(unix)]
fn silence(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with a pid and a signal number has no memory effects.
    let killed = unsafe { libc::kill(raw, libc::SIGKILL) };
    if killed != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH) {
        return false;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        // Gone, or a zombie: either way it runs no more.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let running = match &state {
            Some(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
            // SAFETY: signal 0 only checks that the process exists.
            None => cfg!(not(target_os = "linux")) && unsafe { libc::kill(raw, 0) } == 0,
        };
        if !running {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Where an output stands: its offset and size, when it is a file (a pipe or a terminal
/// cannot say what was written into it).
#[derive(PartialEq, Eq, Clone, Copy)]
struct OutputMark {
    offset: u64,
    len: u64,
}

impl OutputMark {
    fn of(output: std::os::fd::BorrowedFd<'_>) -> Option<OutputMark> {
        use std::io::Seek;
        // A duplicate shares the open file's offset: asking it moves nothing.
        let mut file = std::fs::File::from(output.try_clone_to_owned().ok()?);
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        Some(OutputMark {
            offset: file.stream_position().ok()?,
            len: meta.len(),
        })
    }
}

/// One answer line.
#[cfg(unix)]
fn read_reply(reader: &mut impl BufRead) -> std::io::Result<Reply> {
    let mut answer = String::new();
    reader.read_line(&mut answer)?;
    serde_json::from_str(&answer).map_err(std::io::Error::other)
}

#[cfg(not(unix))]
fn ask(_dir: &Path, _call: Call) -> Result<Reply> {
    bail!("the daemon needs Unix sockets")
}

/// Starts the workspace's daemon in the background unless one runs (or starts), the settings
/// say `daemon.auto = false`, or `QUARRY_DAEMON=off`.
pub fn start_if_wanted(dir: &Path) {
    if policy() == Policy::Off || !auto_start(dir) {
        return;
    }
    let _ = spawn(dir);
}

fn auto_start(dir: &Path) -> bool {
    quarry_engine::Config::load(dir)
        .ok()
        .and_then(|c| c.get("daemon.auto").ok())
        .is_none_or(|v| v != "false")
}

/// Starts `quarry daemon run` for `dir`, detached (its own session, no terminal, stdio
/// closed), unless a daemon holds the workspace already. Returns whether one was started.
#[cfg(unix)]
pub fn spawn(dir: &Path) -> Result<bool> {
    use std::os::unix::process::CommandExt;
    let place = Place::of(dir);
    if !place.usable() {
        return Ok(false);
    }
    place.prepare()?;
    if place.is_held() {
        return Ok(false);
    }
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--index-dir")
        .arg(dir)
        .args(["daemon", "run"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        // What a daemon says when it cannot start (or stops on an error) is kept beside its
        // socket: nobody else would see it.
        .stderr(
            std::fs::File::create(place.folder.join("log"))
                .map_or_else(|_| std::process::Stdio::null(), std::process::Stdio::from),
        );
    // SAFETY: setsid is async-signal-safe; it detaches the child from the caller's session so
    // a terminal's hang-up or the hook's process group ending does not take the daemon along.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    command.spawn()?;
    Ok(true)
}

#[cfg(not(unix))]
pub fn spawn(_dir: &Path) -> Result<bool> {
    Ok(false)
}

/// Starts the daemon (unless one runs) and waits until it answers, up to `wait`.
pub fn start_and_wait(dir: &Path, wait: Duration) -> Result<DaemonStatus> {
    spawn(dir)?;
    let started = std::time::Instant::now();
    let mut last_spawn = started;
    loop {
        if let Some(status) = status(dir) {
            return Ok(status);
        }
        // A daemon of another build that was stepping down held the workspace when the first
        // one started (which then left at once): start again once it is gone.
        if last_spawn.elapsed() > Duration::from_millis(500) {
            spawn(dir)?;
            last_spawn = std::time::Instant::now();
        }
        if started.elapsed() > wait {
            bail!(
                "the daemon did not answer within {} s (see {}, or run `quarry --index-dir {} daemon run` in the foreground)",
                wait.as_secs(),
                Place::of(dir).folder.join("log").display(),
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_writer_is_silenced_for_good() {
        let mut child = std::process::Command::new("sleep")
            .arg("100")
            .spawn()
            .unwrap();
        let pid = child.id();
        // SAFETY: a signal to our own child.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) }, 0);
        assert!(silence(pid), "a stopped process is killed and seen gone");
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // One already gone is gone.
        assert!(silence(pid));
    }

    #[test]
    fn a_file_output_says_whether_anything_was_written() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let dir = tempfile::tempdir().unwrap();
        let mut file = std::fs::File::create(dir.path().join("out")).unwrap();
        let before = OutputMark::of(file.as_fd());
        assert!(before.is_some());
        assert!(
            before == OutputMark::of(file.as_fd()),
            "asking moves nothing"
        );
        file.write_all(b"x").unwrap();
        assert!(before != OutputMark::of(file.as_fd()));
        let (reader, _writer) = std::io::pipe().unwrap();
        assert!(
            OutputMark::of(reader.as_fd()).is_none(),
            "a pipe cannot say"
        );
    }
}
