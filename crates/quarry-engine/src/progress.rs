//! Progress reporting for long work, without tying the engine to a terminal library: the CLI
//! draws bars, other interfaces ignore it.

pub trait Progress: Sync {
    /// A phase starts (`label`), with `total` steps (0 when unknown).
    fn begin(&self, _label: &str, _total: u64) {}
    fn advance(&self, _steps: u64) {}
    /// The current phase is over.
    fn end(&self) {}
    /// Something the user should know while the work goes on (what it waits for).
    fn note(&self, _text: &str) {}
    /// Whether the user asked to stop (Ctrl-C). Long loops then end after their current
    /// batch: every stored batch stays, the run reports itself interrupted, and the next run
    /// resumes where this one stopped.
    fn cancelled(&self) -> bool {
        false
    }
}

/// Reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {}
