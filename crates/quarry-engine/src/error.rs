//! The one error kind the engine tells apart: the caller's mistake (`BadRequest`: HTTP 400,
//! an MCP tool error that says what to change) as opposed to a failure of the index. At the
//! bottom of the engine so every stage can refuse a request without importing the interfaces.

/// An error in what the caller asked, as opposed to a failure of the index.
#[derive(Debug)]
pub struct BadRequest(pub String);

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadRequest {}

pub(crate) fn bad(message: impl Into<String>) -> anyhow::Error {
    BadRequest(message.into()).into()
}

/// Whether an error is the caller's (see `BadRequest`).
pub fn is_bad_request(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| cause.is::<BadRequest>())
}
