//! What travels on the socket: one request line, one answer line, JSON. The envelope carries
//! the protocol version and the client's build id: a daemon of another build never answers
//! (it says so and steps down, so the client's next call starts one of its own build).

use quarry_engine::answer::{CommitSearch, Mode, SearchResponse};
use quarry_engine::exact::{FilterReport, GrepRequest, GrepStats};
pub use quarry_engine::request::SearchCall;
use quarry_engine::request::SearchRequest;
use quarry_engine::CommitQuery;
use serde::{Deserialize, Serialize};

/// Bumped whenever a request or answer changes shape.
pub const PROTOCOL: u32 = 3;

/// The byte a grep's client sends once the request is accepted: it still waits for the
/// output (see `Reply::Accepted`).
pub const GO: u8 = b'g';

/// Longest request line the daemon reads (a query is at most 32,768 characters).
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    pub protocol: u32,
    /// The client binary's build id (`place::build_id`).
    pub build: String,
    pub call: Call,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Call {
    /// A search, run as `how` says.
    Search {
        request: SearchRequest,
        how: SearchCall,
    },
    /// Commits ranked for `text` (`quarry log`), as `Workspace::search_commits` ranks them
    /// with the workspace's settings.
    Log {
        text: String,
        query: CommitQuery,
        mode: Mode,
    },
    /// `quarry grep`, its paths relative to `request.base` (the client's working directory).
    Grep { request: GrepRequest },
    /// Who is there: pid, build, uptime, requests served, memory.
    Status,
    /// Finish the requests at hand and exit.
    Stop,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Reply {
    /// The request was read and is being worked on: the first line of every answer to a
    /// search, log or grep, sent at once. A client that does not get it within a moment
    /// (`client::ACCEPT_TIMEOUT`) is talking to a stopped or hung daemon, and answers
    /// in-process instead of waiting for the work's own deadline.
    Accepted,
    Search {
        response: SearchResponse,
    },
    Commits {
        found: CommitSearch,
    },
    /// What `quarry grep` did; its output went into the descriptor the client passed with
    /// the request (its standard output, fd_passing.rs), as the client would have written it.
    Grep {
        stats: GrepStats,
        filter: FilterReport,
    },
    /// A grep writing into the client's descriptor failed, maybe after writing some of its
    /// output: the client reports it rather than search again (`closed`: the reader went
    /// away, as `| head` does — a normal end).
    GrepStopped {
        error: String,
        closed: bool,
    },
    Status {
        status: DaemonStatus,
    },
    Stopping,
    /// The daemon will not answer this (another build or protocol, another user, too busy):
    /// the client answers in-process.
    Refused {
        why: String,
    },
    /// The search failed: the client runs it in-process, which reports the error as usual.
    Failed {
        error: String,
    },
}

/// `quarry daemon status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DaemonStatus {
    pub pid: u32,
    pub build: String,
    pub protocol: u32,
    pub socket: String,
    pub uptime_s: u64,
    pub requests: u64,
    /// Seconds without a request after which it exits (`daemon.idle_s`).
    pub idle_s: u64,
    /// Resident memory (KiB), from /proc on Linux.
    pub rss_kib: Option<u64>,
    /// The embedding model it holds, when one is loaded.
    pub model: Option<String>,
    /// What greps take from memory: folders watched, file lists and file states held.
    #[serde(default)]
    pub tree: Option<quarry_engine::exact::TreeSummary>,
}
