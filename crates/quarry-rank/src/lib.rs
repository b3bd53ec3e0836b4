//! quarry-rank: how quarry orders what it finds, with no I/O, so it can be read (and tested)
//! alone. The engine gathers evidence from the store and hands it here:
//!
//! ```text
//! query ─► plan (plan.rs, issue.rs) ─► [engine: BM25 over chunks and files, kNN, symbols, paths]
//!       ─► fusion of chunk lists (fusion.rs) ─► file ranking with role priors (files.rs, role.rs)
//!       ─► chunk order and per-file diversification ─► only answers (answers.rs)
//!       ─► [optional second stage: a language model reorders the top ones (rerank.rs), or
//!           answers from them with citations that are checked against them (cite.rs)]
//! ```

pub mod agentic;
pub mod answers;
pub mod cite;
pub mod echo;
pub mod exports;
pub mod files;
pub mod fusion;
pub mod issue;
pub mod names;
pub mod plan;
pub mod releases;
pub mod rerank;
pub mod role;
pub mod route;

pub use files::{
    ChangedDefinition, FileCandidate, FileRankConfig, FileScoreParts, Mention, RankedFile,
};
pub use fusion::{FusionConfig, FusionMethod, ScoreParts};
pub use plan::QueryPlan;
pub use role::FileRole;
