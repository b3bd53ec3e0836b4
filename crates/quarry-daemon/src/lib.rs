//! quarry-daemon: one resident quarry per workspace. Agents meet quarry through short-lived
//! processes (the Claude Code hook on every Grep, `quarry search` from scripts), and each of
//! those would load the embedding model again (100–200 ms at rest, most of a second beside a
//! build). The daemon holds the model and answers the searches that embed their query over a
//! Unix socket in the workspace folder; clients that find no daemon (or a daemon of another
//! build, or one that does not answer in time) answer in-process exactly as before and start
//! one for the next call.
//!
//! - protocol.rs: what travels on the socket (typed requests and answers, one JSON line each way)
//! - place.rs: where the socket, lock and build id are, and the folder's permissions
//! - server.rs: the daemon itself (`quarry daemon run`)
//! - client.rs: asking it, with the in-process fallback, and starting it on demand
//! - fd_passing.rs: a grep's standard output handed to the daemon, which writes into it
//!
//! The same searches run on both sides (`Workspace::search_as` with the caller's `SearchCall`),
//! so an answer from the daemon is the answer the client would have computed.

pub mod client;
#[cfg(unix)]
mod fd_passing;
pub mod place;
pub mod protocol;
#[cfg(unix)]
pub mod server;
