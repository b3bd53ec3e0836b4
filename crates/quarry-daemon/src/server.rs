//! The daemon (`quarry daemon run`): takes the workspace's daemon lock (a second daemon exits
//! at once, so any number of clients starting one end with one), binds the socket (a stale one,
//! left by a daemon killed with -9, is replaced: nothing holds the lock), and answers one
//! request per connection on a thread of its own, through the same `Service` the HTTP and MCP
//! servers use (the model loaded once, the index opened per request so every answer sees the
//! latest index; writers never wait for it, WAL). It refuses peers of another user
//! (SO_PEERCRED), a client of another build (stepping down only when its own binary was
//! replaced on disk), and more than
//! `MAX_CLIENTS` at once. It exits after `idle` without a request, when asked, or when its
//! socket or workspace folder is gone.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use quarry_engine::Service;

use crate::place::{build_id, build_id_of, own_executable, Place};
use crate::protocol::{Call, DaemonStatus, Envelope, Reply, GO, MAX_REQUEST_BYTES, PROTOCOL};

/// Requests answered at once; more are refused (the client answers in-process).
const MAX_CLIENTS: usize = 16;
/// How long a starting daemon keeps trying a held lock (see `take_lock`).
const LOCK_PATIENCE: Duration = Duration::from_millis(300);
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

struct State {
    service: Service,
    started: Instant,
    /// Milliseconds since `started` of the last request.
    last_request_ms: AtomicU64,
    requests: AtomicU64,
    busy: AtomicUsize,
    idle: Duration,
    socket: String,
}

impl State {
    /// Notes a request now: idle time counts from the last one.
    fn touch(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        self.last_request_ms.store(now, Ordering::Relaxed);
    }

    /// Time since the last request (or since the daemon was ready).
    fn idle_for(&self) -> Duration {
        let now = self.started.elapsed().as_millis() as u64;
        // A request may note itself between the two reads: never below zero.
        Duration::from_millis(now.saturating_sub(self.last_request_ms.load(Ordering::Relaxed)))
    }
}

/// Runs the daemon of the workspace in `dir` until it is idle for `idle`, stopped, or
/// replaced. Returns at once when another daemon holds the workspace.
pub fn run(dir: &Path, idle: Duration) -> Result<()> {
    // The binary this daemon runs, read before anything can replace it.
    let _ = build_id();
    let place = Place::of(dir);
    if !place.usable() {
        anyhow::bail!(
            "the workspace path is too long for a Unix socket ({}): no daemon for it",
            place.socket.display()
        );
    }
    place.prepare().context("cannot create the daemon folder")?;
    let lock = place.open_lock().context("cannot open the daemon lock")?;
    if !take_lock(&lock, &place)? {
        // Another daemon runs (or starts) for this workspace.
        return Ok(());
    }
    // Who holds it, for a client that finds the daemon not answering.
    let _ = lock
        .set_len(0)
        .and_then(|_| (&lock).write_all(std::process::id().to_string().as_bytes()));
    // Nothing else holds the lock, so a socket file left here is stale.
    let _ = std::fs::remove_file(&place.socket);
    let listener = UnixListener::bind(&place.socket)
        .with_context(|| format!("cannot bind {}", place.socket.display()))?;
    std::fs::set_permissions(&place.socket, std::fs::Permissions::from_mode(0o600))?;
    let socket_inode = std::fs::metadata(&place.socket)?.ino();
    let state = Arc::new(State {
        service: Service::new(dir),
        started: Instant::now(),
        last_request_ms: AtomicU64::new(0),
        requests: AtomicU64::new(0),
        busy: AtomicUsize::new(0),
        idle,
        socket: place.socket.display().to_string(),
    });
    // Vectors stay decoded in memory between searches, and the model is loaded now, so the
    // first request after a start is warm too.
    quarry_engine::keep_vectors_in_memory(true);
    let _ = state.service.workspace();
    // Idle time counts from here, not from a slow start.
    state.touch();
    if watching(dir) {
        keep_current(dir);
    }
    let watchdog = state.clone();
    let socket = place.socket.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let replaced = std::fs::metadata(&socket).map_or(true, |m| m.ino() != socket_inode);
        if replaced {
            std::process::exit(0);
        }
        if watchdog.idle_for() > watchdog.idle && watchdog.busy.load(Ordering::SeqCst) == 0 {
            step_down(&socket);
        }
    });
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if !same_user(&stream) {
            let _ = reply(
                &stream,
                &Reply::Refused {
                    why: "another user's daemon".into(),
                },
            );
            continue;
        }
        if state.busy.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
            state.busy.fetch_sub(1, Ordering::SeqCst);
            let _ = reply(&stream, &Reply::Refused { why: "busy".into() });
            continue;
        }
        let state = state.clone();
        let socket = place.socket.clone();
        std::thread::spawn(move || {
            serve(&state, &stream, &socket);
            state.touch();
            state.busy.fetch_sub(1, Ordering::SeqCst);
        });
    }
    drop(lock);
    Ok(())
}

/// Takes the daemon lock; false when another daemon holds it. A client's `is_held` probe holds
/// the lock for a moment too, and a daemon that met only that probe and left would leave no
/// daemon at all (the probing client saw the lock held and starts none): so a lock found held is
/// tried again for a while, which a probe's hold never outlasts and a daemon's always does.
fn take_lock(lock: &std::fs::File, place: &Place) -> Result<bool> {
    let started = Instant::now();
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(false),
            Err(e) => anyhow::bail!("cannot lock {}: {e}", place.lock.display()),
        }
    }
}

fn watching(dir: &Path) -> bool {
    quarry_engine::Config::load(dir)
        .and_then(|c| c.get("daemon.watch"))
        .is_ok_and(|v| v == "true")
}

/// `daemon.watch`: re-indexes the workspace's repos as their files change, on a thread of its
/// own (each pass takes the write lock, so other writers interleave), while the daemon lives.
fn keep_current(dir: &Path) {
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let roots: Vec<std::path::PathBuf> =
            match quarry_engine::Workspace::open_existing(&dir).and_then(|ws| ws.store().repos()) {
                Ok(repos) => repos
                    .into_iter()
                    .filter(|r| r.indexed_at.is_some() && Path::new(&r.root).is_dir())
                    .map(|r| r.root.into())
                    .collect(),
                Err(_) => return,
            };
        if roots.is_empty() {
            return;
        }
        let _ = quarry_engine::watch::watch(
            &dir,
            &roots,
            Duration::from_secs(30),
            &|| false,
            &mut |_| {},
        );
    });
}

/// Removes the socket (new clients find no daemon) and exits.
fn step_down(socket: &Path) -> ! {
    let _ = std::fs::remove_file(socket);
    std::process::exit(0);
}

fn serve(state: &State, stream: &UnixStream, socket: &Path) {
    state.touch();
    state.requests.fetch_add(1, Ordering::Relaxed);
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    // The request's first bytes may carry a descriptor (a grep's standard output).
    let mut first = vec![0u8; 64 * 1024];
    let Ok((read, passed_fd)) = crate::fd_passing::recv_with_fd(stream, &mut first) else {
        return;
    };
    first.truncate(read);
    let rest = MAX_REQUEST_BYTES.saturating_sub(read) as u64;
    let mut line = String::new();
    let mut reader = BufReader::new(std::io::Cursor::new(first).chain(stream.take(rest)));
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let envelope: Envelope = match serde_json::from_str(&line) {
        Ok(e) => e,
        Err(e) => {
            let _ = reply(
                stream,
                &Reply::Refused {
                    why: format!("not a request: {e}"),
                },
            );
            return;
        }
    };
    if envelope.protocol != PROTOCOL || envelope.build != build_id() {
        // A client of another build answers in-process. This daemon steps down for it (the
        // client then starts one of its own) only when its own binary was replaced on disk —
        // an upgrade or a rebuild — never because a client says another build: any request
        // could say so, and stepping down ends every answer in flight.
        let replaced = build_id_of(own_executable().as_deref()) != build_id();
        let _ = reply(
            stream,
            &Reply::Refused {
                why: if replaced {
                    "another build; this daemon's binary was replaced, it steps down".into()
                } else {
                    "another build: answer in-process".into()
                },
            },
        );
        if replaced {
            step_down(socket);
        }
        return;
    }
    if matches!(
        envelope.call,
        Call::Search { .. } | Call::Log { .. } | Call::Grep { .. }
    ) && reply(stream, &Reply::Accepted).is_err()
    {
        return;
    }
    let answer = match envelope.call {
        Call::Search { request, how } => search(state, &request, &how),
        Call::Log { text, query, mode } => log(state, &text, query, mode),
        Call::Grep { request } if passed_fd.is_some() => {
            // The client says it still waits (it may have given up on a daemon that was
            // stopped when the request came): only then is its output written into.
            let mut go = [0u8; 1];
            if !matches!((&*stream).read(&mut go), Ok(1) if go[0] == GO) {
                return;
            }
            let fd = passed_fd.expect("checked");
            return grep_into(state, &request, fd, stream);
        }
        Call::Grep { .. } => Reply::Refused {
            why: "a grep comes with the client's standard output to write into".into(),
        },
        Call::Status => Reply::Status {
            status: status(state),
        },
        Call::Stop => {
            let _ = reply(stream, &Reply::Stopping);
            step_down(socket);
        }
    };
    let _ = reply(stream, &answer);
}

/// The workspace with the model attached, or the reply that sends the client in-process:
/// without the model it answers there, with its usual notes.
fn warm_workspace(state: &State) -> Result<quarry_engine::pool::Lease<'_>, Reply> {
    let ws = state.service.workspace().map_err(|e| Reply::Failed {
        error: format!("{e:#}"),
    })?;
    if ws.embedder().is_none() {
        return Err(Reply::Refused {
            why: "no embedding model here".into(),
        });
    }
    Ok(ws)
}

fn search(
    state: &State,
    request: &quarry_engine::SearchRequest,
    how: &crate::protocol::SearchCall,
) -> Reply {
    // A search that never embeds its query (a name, a path, a literal, a pattern, lexical
    // mode) is answered here with or without the model: the index is open and its caches
    // warm. One that embeds needs the model, else the client answers it in-process.
    let embeds = quarry_engine::routing::may_embed(request)
        || matches!(how, crate::protocol::SearchCall::Agentic { .. });
    let ws = if embeds {
        warm_workspace(state)
    } else {
        state.service.workspace().map_err(|e| Reply::Failed {
            error: format!("{e:#}"),
        })
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(reply) => return reply,
    };
    let response = ws
        .config()
        .and_then(|config| ws.search_as(request, how, &config));
    match response {
        Ok(response) => Reply::Search { response },
        Err(e) => Reply::Failed {
            error: format!("{e:#}"),
        },
    }
}

fn log(
    state: &State,
    text: &str,
    query: quarry_engine::CommitQuery,
    mode: quarry_engine::Mode,
) -> Reply {
    let ws = match warm_workspace(state) {
        Ok(ws) => ws,
        Err(reply) => return reply,
    };
    let found = ws
        .config()
        .and_then(|config| ws.search_commits(text, query, mode, &config.fusion()));
    match found {
        Ok(found) => Reply::Commits { found },
        Err(e) => Reply::Failed {
            error: format!("{e:#}"),
        },
    }
}

fn status(state: &State) -> DaemonStatus {
    DaemonStatus {
        pid: std::process::id(),
        build: build_id(),
        protocol: PROTOCOL,
        socket: state.socket.clone(),
        uptime_s: state.started.elapsed().as_secs(),
        requests: state.requests.load(Ordering::Relaxed),
        idle_s: state.idle.as_secs(),
        rss_kib: rss_kib(),
        model: state
            .service
            .workspace()
            .ok()
            .and_then(|ws| ws.embedder().map(|e| e.fingerprint())),
        tree: state.service.exact_memory().tree_summary(),
    }
}

/// A grep whose output goes into the client's own standard output (`fd`), as its in-process
/// run would write it; the answer line carries only the stats.
fn grep_into(
    state: &State,
    request: &quarry_engine::exact::GrepRequest,
    fd: std::os::fd::OwnedFd,
    stream: &UnixStream,
) {
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, std::fs::File::from(fd));
    let done = quarry_engine::exact::grep_kept(
        state.service.dir(),
        request,
        state.service.exact_memory(),
        &mut out,
    )
    .and_then(|answer| {
        out.flush()?;
        Ok(answer)
    });
    let answer = match done {
        Ok((stats, filter)) => Reply::Grep { stats, filter },
        Err(e) => Reply::GrepStopped {
            closed: e.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }),
            error: format!("{e:#}"),
        },
    };
    let _ = reply(stream, &answer);
}

fn reply(mut stream: &UnixStream, answer: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(answer)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    stream.flush()
}

/// Whether the peer runs as this process's user (SO_PEERCRED on Linux, getpeereid elsewhere).
fn same_user(stream: &UnixStream) -> bool {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    #[cfg(target_os = "linux")]
    {
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` and `len` are valid for writes of the sizes given.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        rc == 0 && cred.uid == me
    }
    #[cfg(not(target_os = "linux"))]
    {
        let (mut uid, mut gid) = (0, 0);
        // SAFETY: `uid` and `gid` are valid for writes.
        let rc = unsafe { libc::getpeereid(fd, &mut uid, &mut gid) };
        rc == 0 && uid == me
    }
}

/// This process's resident memory (KiB), on Linux.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
