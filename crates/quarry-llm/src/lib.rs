//! Language models for quarry's second stage, behind one trait: a command that reads the prompt
//! on stdin and answers on stdout (`claude -p`, `llm`, `ollama run qwen`…), or an
//! OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp's server, OpenAI).
//!
//! Every call is bounded by a timeout and by the size of what it reads back; a command is run
//! in its own process group, so a timeout kills everything it started. Failures are errors
//! that say what to fix; the caller turns them into "first-stage order, with a note".

mod command;
mod endpoint;
mod gguf_relevance;

pub use command::CommandModel;
pub use endpoint::EndpointModel;
pub use gguf_relevance::{GgufRelevanceModel, RelevanceScorer};

/// A language model that completes one prompt.
pub trait LanguageModel: Send + Sync {
    /// The provider and model, as the cache and `--json` name them: `command:claude -p`,
    /// `endpoint:http://localhost:11434/v1#qwen2.5-coder`.
    fn describe(&self) -> String;
    /// The model's answer to `prompt`.
    fn complete(&self, prompt: &str) -> anyhow::Result<String>;
}

/// Longest answer read back from a model, in bytes: a ranking of twenty ids is a few bytes, an
/// answer with citations a few kilobytes; more is a runaway.
pub const MAX_REPLY_BYTES: usize = 1 << 20;
