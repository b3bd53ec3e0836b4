//! What travels on the socket: one request line, one answer line, JSON. The envelope carries
//! the protocol version and the client's build id: a daemon of another build never answers
//! (it says so and steps down, so the client's next call starts one of its own build).

use anyhow::Result;
use quarry_engine::answer::{CommitSearch, Mode, SearchResponse};
use quarry_engine::request::{AgenticMode, SearchRequest};
use quarry_engine::workspace::Workspace;
use quarry_engine::CommitQuery;
use serde::{Deserialize, Serialize};

/// Bumped whenever a request or answer changes shape.
pub const PROTOCOL: u32 = 1;

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
    /// Who is there: pid, build, uptime, requests served, memory.
    Status,
    /// Finish the requests at hand and exit.
    Stop,
}

/// Which of the engine's searches answers: the one the caller would have run in-process.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SearchCall {
    /// `Workspace::search`: ranked search as the hook asks it.
    Ranked,
    /// `Workspace::search_with_settings`: the router, then the second stage the settings (or
    /// `rerank`) ask for — `quarry search`.
    Routed { rerank: Option<bool> },
    /// `Workspace::search_agentic` with the follow-up model `mode` picks.
    Agentic { mode: AgenticMode },
}

impl SearchCall {
    /// Runs the search on `ws` (with its embedder attached by the caller).
    pub fn run(&self, ws: &Workspace, request: &SearchRequest) -> Result<SearchResponse> {
        match self {
            SearchCall::Ranked => ws.search(request),
            SearchCall::Routed { rerank } => {
                ws.search_with_settings(request, &ws.config()?, *rerank)
            }
            SearchCall::Agentic { mode } => {
                let model = quarry_engine::agentic::follow_up_model(&ws.config()?, *mode)?;
                ws.search_agentic(request, model.as_deref())
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Reply {
    Search {
        response: SearchResponse,
    },
    Commits {
        found: CommitSearch,
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
}
