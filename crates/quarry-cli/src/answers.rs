//! The answers of the commands that only the CLI has (index runs, git sync, `repo`, `status`,
//! settings, `sg`, `eval`), as typed data: `--json` prints them as they are, so each command's
//! JSON has one definition, built from the engine's answer types where one exists.

use std::path::PathBuf;

use quarry_core::history::HistoryStats;
use quarry_core::{RepoInfo, RepoStats};
use quarry_engine::answer::IndexReport;
use quarry_engine::commit_search::HistoryEmbedReport;
use quarry_engine::exact::FilterReport;
use quarry_engine::history::SyncReport;
use quarry_engine::EmbedReport;
use quarry_eval::EvalReport;
use quarry_grep::structural::{SgMatch, SgStats};
use serde::Serialize;

/// `quarry index --json`.
#[derive(Serialize)]
pub struct IndexRun {
    pub repos: Vec<IndexReport>,
    /// What the backfill embedded (absent when nothing was embedded).
    pub embedding: Option<EmbedReport>,
    /// Where a damaged index was moved (`--rebuild`).
    pub moved_aside: Option<PathBuf>,
}

/// `quarry sync --json`.
#[derive(Serialize)]
pub struct HistorySync {
    pub repos: Vec<SyncReport>,
    pub embedding: Option<HistoryEmbedReport>,
}

/// `quarry repo add --json`: the code index, the history and both embeddings.
#[derive(Serialize)]
pub struct RepoAdded {
    pub index: IndexReport,
    pub history: Option<SyncReport>,
    pub code_embedding: Option<EmbedReport>,
    pub embedding: Option<HistoryEmbedReport>,
}

/// `quarry repo list --json`.
#[derive(Serialize)]
pub struct RepoList {
    pub repos: Vec<RepoInfo>,
}

/// How much of the index has vectors, and from which model.
#[derive(Serialize)]
pub struct Coverage {
    pub model: Option<String>,
    pub embedded: u64,
    pub total: u64,
}

/// `quarry status --json`.
#[derive(Serialize)]
pub struct StatusReport {
    /// The index file, or the PostgreSQL URL with its password hidden.
    pub index: PathBuf,
    pub repos: Vec<RepoStats>,
    pub history: Vec<HistoryStats>,
    /// The newest commits per repo that get a vector (`history.embed_recent`); absent: all.
    pub history_embed_recent: Option<u64>,
    pub store_bytes: u64,
    /// Absent while the index has no vectors.
    pub embedding: Option<Coverage>,
    /// `"ok"` after `--check` found the file sound.
    pub check: Option<&'static str>,
    /// PostgreSQL: the server that answered (the primary, or a standby and its lag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<quarry_core::ServedBy>,
}

/// `quarry config get|set|unset --json`.
#[derive(Serialize)]
pub struct Setting {
    pub key: String,
    pub value: String,
    pub is_set: bool,
    /// The settings file written (`set`, `unset`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
}

/// `quarry model install --json`.
#[derive(Serialize)]
pub struct ModelInstalled {
    pub model: &'static str,
    pub path: PathBuf,
}

/// `quarry model use --json`.
#[derive(Serialize)]
pub struct ModelChosen {
    /// The fingerprint of the embedder now configured (absent: lexical only).
    pub model: Option<String>,
    /// The model the index's vectors were made with.
    pub index_model: Option<String>,
    pub reembed_on_next_index: bool,
}

/// `quarry sg --json`.
#[derive(Serialize)]
pub struct StructuralMatches {
    pub matches: Vec<SgMatch>,
    pub stats: SgStats,
    pub filter: FilterReport,
}

/// `quarry eval --json`.
#[derive(Serialize)]
pub struct EvalReports {
    pub reports: Vec<EvalReport>,
}

/// One row of `quarry model list`.
#[derive(Serialize)]
pub struct ModelRow {
    pub name: String,
    /// `local` or `endpoint`.
    pub kind: &'static str,
    /// Folder or URL.
    pub location: String,
    pub available: bool,
    pub active: bool,
    /// What runs a local model: `onnxruntime int8`, `candle fp32 (…why)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// `quarry model list --json`.
#[derive(Serialize)]
pub struct ModelList {
    pub models: Vec<ModelRow>,
    /// `embed.provider = none`: searches are lexical.
    pub semantic_off: bool,
    /// The index's vectors, when there is an index.
    pub index: Option<Coverage>,
    /// Why the configured embedder cannot be used, if it cannot.
    pub problem: Option<String>,
}
