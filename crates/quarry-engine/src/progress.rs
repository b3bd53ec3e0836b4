//! Progress reporting for long work, without tying the engine to a terminal library: the CLI
//! draws bars, other interfaces ignore it.

pub trait Progress: Sync {
    /// A phase starts (`label`), with `total` steps (0 when unknown).
    fn begin(&self, _label: &str, _total: u64) {}
    fn advance(&self, _steps: u64) {}
    /// The current phase is over.
    fn end(&self) {}
}

/// Reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {}
