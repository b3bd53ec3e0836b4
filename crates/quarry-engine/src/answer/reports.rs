//! What the stages after retrieval did to an answer, for `--json` and `--explain`: how the
//! router read the query, whether a language model reordered the results, what the follow-up
//! rounds of an agentic search asked. Plain data, filled in by routing.rs, rerank.rs and
//! agentic.rs.

use quarry_rank::route::{QueryClass, Route};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the router handled a query (in `--json` and `--explain`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RouteReport {
    /// What the router took the query for; absent when the caller chose the engine.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub class: Option<QueryClass>,
    pub route: Route,
    /// Why the answer is ranked search's although the route was another.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
    /// The languages a structural pattern was searched in: the one asked for, or every
    /// language of the searched repos whose grammar parses the pattern.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub languages: Vec<quarry_core::Language>,
}

/// Whether and how a search's results were reordered by a language model.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RerankReport {
    /// The provider and model (`command:claude -p`, `endpoint:URL#model`).
    pub provider: String,
    /// True when the results are in the model's order.
    pub applied: bool,
    /// True when the order came from the workspace's cache (the model was not asked).
    pub cached: bool,
    /// First-stage results shown to the model.
    pub candidates: usize,
    /// How many of them the model ranked; the rest keep their first-stage order after them.
    pub ranked: usize,
    pub elapsed_ms: u64,
    /// Why the first-stage order was kept, when it was.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

/// What the rounds of an agentic search did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgenticReport {
    /// `offline` (identifiers of the top results) or the model's provider.
    pub provider: String,
    pub rounds: Vec<AgenticRound>,
    /// Why rounds stopped early, when a model failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgenticRound {
    pub queries: Vec<String>,
    /// Files none of the earlier lists held.
    pub new_files: usize,
}
