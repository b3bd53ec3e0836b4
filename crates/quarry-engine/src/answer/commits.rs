//! Answers about history: commits ranked for a query (`log`, `search_commits`) and the
//! commits that changed a path or one definition (`touches`).

use quarry_core::history::CommitHit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::search::Mode;

/// Commits ranked for a query.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CommitSearch {
    /// The mode that produced the ranking (`auto` resolved).
    pub mode: Mode,
    pub commits: Vec<CommitHit>,
    /// Embedded vs all commits of the searched repos (semantic and hybrid modes): commits
    /// without a vector are ranked by their words only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<quarry_core::Coverage>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
}

/// Commits that changed a path or a definition.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Touches {
    pub commits: Vec<CommitHit>,
    /// More commits match than were asked for.
    pub more: bool,
    /// What to do next: there are more, or why there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}
