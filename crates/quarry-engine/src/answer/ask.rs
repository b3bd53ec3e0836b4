//! `quarry ask`: a language model's answer from the first stage's top chunks, with the
//! citations those chunks back.

use quarry_rank::cite::Citation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::search::SearchResponse;

/// A language model's answer to a question, from the first stage's top chunks.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AskResponse {
    pub question: String,
    /// The model's answer; `None` when no model answered (`note` says why; the chunks are
    /// still in `search`).
    pub answer: Option<String>,
    pub provider: String,
    /// The answer's citations that a given chunk backs (its path, lines inside its lines).
    pub citations: Vec<Citation>,
    /// Citations of files or lines the model was not given: dropped, counted.
    pub dropped_citations: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
    pub elapsed_ms: u64,
    /// The chunks the model was given: the first stage's results, with their text.
    pub search: SearchResponse,
}
