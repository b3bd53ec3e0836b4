//! File-level ranking: which files a query is about, from all the evidence at once, and then
//! the order of the chunks shown for them.
//!
//! Why files first: the answer to "where is this bug" is a file (then a function in it), and a
//! file is better evidence than any one of its chunks. Ranking files by their single best chunk
//! lets one lucky chunk (a docstring that repeats the issue's words, a test that calls the
//! function) beat the file whose several definitions all match, and it is why plain BM25 over
//! whole files beat quarry on repositories it had not been tuned on. So a file's score adds:
//!
//! | evidence | from |
//! |---|---|
//! | whole-file BM25 (normalised by the best file) | the `files_fts` table: every token of the file |
//! | its chunks' fused scores, best first, each later one weighed down by `chunk_decay` | BM25 + kNN over chunks (`fusion`) |
//! | being named: a stack-trace frame (the innermost in the repo counts most), a path or file name, a module path, a link | the planner (`issue`) resolved against the index's paths |
//! | defining a name the query uses, weighed by how specific the name is (1 / files defining it) | the symbol table |
//!
//! and is then multiplied by the prior of its role (`role`): a query that does not ask for
//! tests, docs or changelogs ranks them below code with the same evidence.

use crate::plan::QueryPlan;
use crate::role::{self, FileRole};
use quarry_core::ChunkHit;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Every constant of file ranking (settings `search.file_*`, `search.prior_*`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct FileRankConfig {
    /// Weight of whole-file BM25 (whole issue texts only; a short query's chunk scores say it).
    pub file_weight: f64,
    /// Weight of the chunk evidence.
    pub chunk_weight: f64,
    /// Each further chunk of a file counts `chunk_decay` times the one before.
    pub chunk_decay: f64,
    /// Chunks counted per file.
    pub chunks_counted: usize,
    /// A stack-trace frame in the file (the innermost frame in the repo counts this, outer ones half).
    pub frame_weight: f64,
    /// A path, file name or link naming the file.
    pub path_weight: f64,
    /// A module path (`pkg.sub.mod`) naming the file.
    pub module_weight: f64,
    /// The file defines a name the query's text uses, times 1 / (files defining it).
    pub definition_weight: f64,
    /// The same for names only the query's code uses (called, imported).
    pub code_name_weight: f64,
    /// The file is named after a name the query uses, divided by the number of such files
    /// (half for names only its code uses).
    pub file_name_weight: f64,
    /// The call graph around the definitions the query names: a file defining what they call,
    /// divided by the number of files defining that name.
    pub callee_weight: f64,
    /// The same for a file calling them, divided by the number of files that do.
    pub caller_weight: f64,
    /// Names defined in more files than this are no evidence.
    pub max_definitions: usize,
    /// A file past commits like the query changed (whole issue texts, synced history), times
    /// its share of the votes (history_evidence.rs in the engine).
    pub history_weight: f64,
    /// Days after which a past commit's vote counts half (0: every commit alike).
    pub history_half_life_days: f64,
    /// Chunk evidence of a definition that past commits like the query changed.
    pub history_definition_weight: f64,
    /// Role priors: a file of that role scores this times its evidence, unless the query
    /// names the role.
    pub prior_test: f64,
    pub prior_docs: f64,
    pub prior_changelog: f64,
    pub prior_translation: f64,
    pub prior_example: f64,
    pub prior_benchmark: f64,
    pub prior_vendored: f64,
    pub prior_data: f64,
    /// In the chunk order, the chunk's own score counts this much beside its file's.
    pub chunk_share: f64,
    /// Passages of a whole issue text (its title, paragraphs, code blocks) embedded beside the
    /// text itself: the model reads ~128 tokens, so most of a long issue is otherwise unseen.
    pub passages: usize,
    /// For a whole issue text, chunks of a file shown before every other file's (the
    /// `max_per_file` of other queries): a bug's fix is in one file far more often than not,
    /// and the file ranked first is the one to read function by function.
    pub issue_max_per_file: usize,
    /// For an issue text, its title's terms are counted this many more times in BM25 (over
    /// chunks and files): a title says in a line what the issue is about.
    pub title_repeat: f64,
    /// For an issue text, the fixed parts of its error messages count this many times in BM25,
    /// as phrases (`plan::message_phrases`).
    pub message_repeat: f64,
    /// Within that share, evidence naming the chunk itself (it holds a frame's line, defines
    /// a name the query uses) counts this much beside its fused score.
    pub chunk_evidence_weight: f64,
    /// Which definition a name means (names.rs): the symbol route's order.
    pub names: crate::names::NameWeights,
}

impl Default for FileRankConfig {
    fn default() -> Self {
        FileRankConfig {
            file_weight: 1.0,
            chunk_weight: 1.0,
            chunk_decay: 0.5,
            chunks_counted: 3,
            frame_weight: 0.5,
            path_weight: 0.5,
            module_weight: 0.3,
            definition_weight: 0.3,
            code_name_weight: 0.15,
            file_name_weight: 0.3,
            callee_weight: 0.0,
            caller_weight: 0.0,
            max_definitions: 20,
            history_weight: 0.0,
            history_half_life_days: 0.0,
            history_definition_weight: 1.0,
            prior_test: 0.5,
            prior_docs: 0.4,
            prior_changelog: 0.2,
            prior_translation: 0.1,
            prior_example: 0.6,
            prior_benchmark: 0.6,
            prior_vendored: 0.6,
            prior_data: 0.7,
            chunk_share: 0.3,
            chunk_evidence_weight: 1.0,
            title_repeat: 3.0,
            message_repeat: 1.0,
            issue_max_per_file: 10,
            passages: 2,
            names: crate::names::NameWeights::default(),
        }
    }
}

/// The settings keys of `FileRankConfig` (all numbers ≥ 0), with their help text.
pub const SETTINGS: &[(&str, &str)] = &[
    ("search.file_weight", "weight of whole-file BM25 in a file's score (whole issue texts)"),
    ("search.file_chunk_weight", "weight of a file's chunk evidence (best fused chunk score, then decayed ones)"),
    ("search.file_chunk_decay", "each further chunk of a file counts this times the one before"),
    ("search.file_chunks_counted", "chunks counted per file"),
    ("search.frame_weight", "added to a file a stack-trace frame of the query points at (the innermost in the repo; outer frames half)"),
    ("search.named_path_weight", "added to a file the query names by path, file name or link"),
    ("search.module_weight", "added to a file a dotted module path in the query resolves to"),
    ("search.definition_weight", "added to a file defining a name the query uses, divided by the number of files defining it"),
    ("search.code_name_weight", "the same for names only the query's code blocks use"),
    ("search.file_name_weight", "added to a file named after a name the query uses (refine → refine.py), divided by the number of such files"),
    ("search.callee_weight", "added to a file defining what a definition the query names calls, divided by the number of files defining it"),
    ("search.caller_weight", "added to a file calling a definition the query names, divided by the number of files that do"),
    ("search.max_definitions", "names defined in more files than this are no evidence"),
    ("search.history_weight", "added to a file that past commits like the query changed, times its share of their votes (whole issue texts, synced history)"),
    ("search.history_half_life_days", "a past commit's vote halves with every this many days between it and the newest voting commit (0: no decay)"),
    ("search.history_definition_weight", "chunk evidence of a definition that voting commits changed (their added lines still stand in it), times its share"),
    ("search.prior_test", "score factor of test files, unless the query asks for tests"),
    ("search.prior_docs", "score factor of documentation, unless the query asks for docs"),
    ("search.prior_changelog", "score factor of changelogs and release notes"),
    ("search.prior_translation", "score factor of message catalogs (.po)"),
    ("search.prior_example", "score factor of examples and demos"),
    ("search.prior_benchmark", "score factor of benchmarks"),
    ("search.prior_vendored", "score factor of vendored copies of other projects"),
    ("search.prior_data", "score factor of configuration and data files"),
    ("search.chunk_share", "in the result order, a chunk's own score beside its file's"),
    ("search.passages", "passages of a whole issue text embedded beside the text itself (0: the text only)"),
    ("search.issue_max_per_file", "for a whole issue text, chunks of a file shown before every other file's"),
    ("search.message_repeat", "times the fixed parts of an issue's error messages count in BM25, as phrases (whole issue texts only)"),
    ("search.title_repeat", "extra times an issue title's terms count in BM25 (whole issue texts only)"),
    ("search.name_qualified", "name lookup: a definition matching the query's qualifiers (`Class.method`, `module.func`, `path::Name`)"),
    ("search.name_exported", "name lookup: a definition a package entry file re-exports (`__init__.py`, `pub use`, `export … from`)"),
    ("search.name_public", "name lookup: public by the language's convention (added), private (subtracted)"),
    ("search.name_top_level", "name lookup: a top-level definition, for a bare name"),
    ("search.name_definition_kind", "name lookup: a type or function (added), an impl block of it (subtracted)"),
    ("search.name_source", "name lookup: a definition in source, not tests, docs, examples, benchmarks or vendored code"),
    ("search.name_named_file", "name lookup: a definition whose file is named after it"),
    ("search.chunk_evidence_weight", "within the chunk's share, evidence naming the chunk (a frame's line, a named definition) beside its fused score"),
];

impl FileRankConfig {
    fn slot(&mut self, key: &str) -> Option<&mut f64> {
        Some(match key {
            "search.file_weight" => &mut self.file_weight,
            "search.file_chunk_weight" => &mut self.chunk_weight,
            "search.file_chunk_decay" => &mut self.chunk_decay,
            "search.frame_weight" => &mut self.frame_weight,
            "search.named_path_weight" => &mut self.path_weight,
            "search.module_weight" => &mut self.module_weight,
            "search.definition_weight" => &mut self.definition_weight,
            "search.code_name_weight" => &mut self.code_name_weight,
            "search.file_name_weight" => &mut self.file_name_weight,
            "search.callee_weight" => &mut self.callee_weight,
            "search.caller_weight" => &mut self.caller_weight,
            "search.history_weight" => &mut self.history_weight,
            "search.history_half_life_days" => &mut self.history_half_life_days,
            "search.history_definition_weight" => &mut self.history_definition_weight,
            "search.prior_test" => &mut self.prior_test,
            "search.prior_docs" => &mut self.prior_docs,
            "search.prior_changelog" => &mut self.prior_changelog,
            "search.prior_translation" => &mut self.prior_translation,
            "search.prior_example" => &mut self.prior_example,
            "search.prior_benchmark" => &mut self.prior_benchmark,
            "search.prior_vendored" => &mut self.prior_vendored,
            "search.prior_data" => &mut self.prior_data,
            "search.chunk_share" => &mut self.chunk_share,
            "search.chunk_evidence_weight" => &mut self.chunk_evidence_weight,
            "search.name_qualified" => &mut self.names.qualified,
            "search.name_exported" => &mut self.names.exported,
            "search.name_public" => &mut self.names.public,
            "search.name_top_level" => &mut self.names.top_level,
            "search.name_definition_kind" => &mut self.names.definition_kind,
            "search.name_source" => &mut self.names.source,
            "search.name_named_file" => &mut self.names.named_file,
            "search.title_repeat" => &mut self.title_repeat,
            "search.message_repeat" => &mut self.message_repeat,
            _ => return None,
        })
    }

    /// The value of a `SETTINGS` key.
    pub fn get(&self, key: &str) -> Option<f64> {
        match key {
            "search.file_chunks_counted" => Some(self.chunks_counted as f64),
            "search.max_definitions" => Some(self.max_definitions as f64),
            "search.issue_max_per_file" => Some(self.issue_max_per_file as f64),
            "search.passages" => Some(self.passages as f64),
            _ => self.clone().slot(key).map(|v| *v),
        }
    }

    /// Sets a `SETTINGS` key; false if there is no such key.
    pub fn set(&mut self, key: &str, value: f64) -> bool {
        match key {
            "search.file_chunks_counted" => self.chunks_counted = value.max(1.0) as usize,
            "search.max_definitions" => self.max_definitions = value.max(0.0) as usize,
            "search.issue_max_per_file" => self.issue_max_per_file = value.max(1.0) as usize,
            "search.passages" => self.passages = value.max(0.0) as usize,
            _ => match self.slot(key) {
                Some(v) => *v = value,
                None => return false,
            },
        }
        true
    }

    /// The prior of a `role` for this query: 1 when the query asks for that role by name
    /// ("tests for parsing"), else [`FileRankConfig::prior`]. Files in code search, the paths a
    /// commit changed in commit search.
    pub fn prior_for(&self, role: FileRole, plan: &QueryPlan) -> f64 {
        if plan.roles.contains(&role) {
            1.0
        } else {
            self.prior(role)
        }
    }

    pub fn prior(&self, role: FileRole) -> f64 {
        match role {
            FileRole::Source => 1.0,
            FileRole::Test => self.prior_test,
            FileRole::Docs => self.prior_docs,
            FileRole::Changelog => self.prior_changelog,
            FileRole::Translation => self.prior_translation,
            FileRole::Example => self.prior_example,
            FileRole::Benchmark => self.prior_benchmark,
            FileRole::Vendored => self.prior_vendored,
            FileRole::Data => self.prior_data,
        }
    }
}

/// Why a file is named by the query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mention {
    /// A stack-trace frame or `file:line` reference resolves to the file.
    Frame { innermost: bool, line: Option<u32> },
    /// A path or file name in the text, or a link to the file.
    Path,
    /// A dotted module path resolves to the file.
    Module,
    /// The file defines `name`, which the query's text (or only its code) uses; `files` files
    /// define it.
    Defines {
        name: String,
        files: usize,
        code_only: bool,
    },
    /// The file is named after `name` (`refine` → refine.py); `files` files are.
    NamedFile {
        name: String,
        files: usize,
        code_only: bool,
    },
    /// The file defines `name`, which `via` (a definition the query names) calls; `files` files
    /// define it.
    Callee {
        name: String,
        via: String,
        files: usize,
    },
    /// The file calls `name`, a definition the query names; `files` files do.
    Caller { name: String, files: usize },
    /// Past commits whose words are like the query's changed the file: `share` of the best
    /// file's votes (each commit's match over the best one's, divided by the files it
    /// changed), `commits` the first that voted; `definitions` the file's definitions their
    /// added lines still stand in.
    Changed {
        share: f64,
        commits: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        definitions: Vec<ChangedDefinition>,
    },
}

/// A definition (an indexed chunk's lines) that past commits like the query changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangedDefinition {
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Its votes over the best definition's (0..1, across all files).
    pub share: f64,
}

/// Everything known about one candidate file.
#[derive(Debug, Clone, Default)]
pub struct FileCandidate {
    pub repo: String,
    pub path: String,
    /// Whole-file BM25, if the file was in that list.
    pub file_bm25: Option<f64>,
    /// Fused scores of the file's chunks among the chunk candidates.
    pub chunk_scores: Vec<f64>,
    pub mentions: Vec<Mention>,
}

/// How a file's score was made (`--explain`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileScoreParts {
    /// Whole-file BM25, normalised by the best file's.
    pub file_bm25: f64,
    /// Chunk evidence: best fused chunk score plus the decayed next ones.
    pub chunks: f64,
    /// From being named (frames, paths, modules, definitions).
    pub named: f64,
    pub prior: f64,
}

/// A ranked file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankedFile {
    pub repo: String,
    pub path: String,
    pub role: FileRole,
    pub score: f64,
    pub parts: FileScoreParts,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<Mention>,
}

fn named_score(mentions: &[Mention], cfg: &FileRankConfig) -> f64 {
    let mut frame: f64 = 0.0;
    let mut path: f64 = 0.0;
    let mut module: f64 = 0.0;
    let mut defs = 0.0;
    let mut named_file: f64 = 0.0;
    let mut graph = 0.0;
    let mut history: f64 = 0.0;
    for m in mentions {
        match m {
            Mention::Frame { innermost, .. } => {
                frame = frame.max(if *innermost { 1.0 } else { 0.5 } * cfg.frame_weight)
            }
            Mention::Path => path = cfg.path_weight,
            Mention::Module => module = cfg.module_weight,
            Mention::Defines {
                files, code_only, ..
            } => {
                if *files == 0 || *files > cfg.max_definitions {
                    continue;
                }
                let w = if *code_only {
                    cfg.code_name_weight
                } else {
                    cfg.definition_weight
                };
                defs += w / *files as f64;
            }
            Mention::NamedFile {
                files, code_only, ..
            } => {
                let w = cfg.file_name_weight * if *code_only { 0.5 } else { 1.0 };
                named_file = named_file.max(w / (*files).max(1) as f64);
            }
            Mention::Callee { files, .. } => graph += cfg.callee_weight / (*files).max(1) as f64,
            Mention::Caller { files, .. } => graph += cfg.caller_weight / (*files).max(1) as f64,
            Mention::Changed { share, .. } => history = history.max(cfg.history_weight * share),
        }
    }
    // Names are many small pieces of evidence; their sum is capped so a file that defines
    // a dozen names the issue mentions in passing cannot outweigh everything else.
    frame
        + path
        + module
        + named_file
        + history
        + defs.min(cfg.definition_weight * 2.0)
        + graph.min(cfg.callee_weight.max(cfg.caller_weight) * 2.0)
}

/// Ranks candidate files, best first.
///
/// `lexical_share` is the part word overlap has in the chunk fusion (`wl / (wl + ws)` of the
/// plan's weights, 1 without vectors): whole-file BM25 is word overlap too, and counts that
/// much — a question in words, where meaning leads, is not handed back to BM25 at file level.
pub fn rank_files(
    candidates: Vec<FileCandidate>,
    plan: &QueryPlan,
    cfg: &FileRankConfig,
    lexical_share: f64,
) -> Vec<RankedFile> {
    let best_file = candidates
        .iter()
        .filter_map(|c| c.file_bm25)
        .fold(0.0f64, f64::max);
    let mut ranked: Vec<RankedFile> = candidates
        .into_iter()
        .map(|mut c| {
            let role = role::classify(&c.path);
            let prior = cfg.prior_for(role, plan);
            let file_bm25 = match c.file_bm25 {
                Some(s) if best_file > 0.0 => s / best_file,
                _ => 0.0,
            };
            c.chunk_scores.sort_by(|a, b| b.total_cmp(a));
            let chunks: f64 = c
                .chunk_scores
                .iter()
                .take(cfg.chunks_counted.max(1))
                .enumerate()
                .map(|(i, s)| s * cfg.chunk_decay.powi(i as i32))
                .sum();
            let named = named_score(&c.mentions, cfg);
            let parts = FileScoreParts {
                file_bm25,
                chunks,
                named,
                prior,
            };
            let score =
                (cfg.file_weight * lexical_share * file_bm25 + cfg.chunk_weight * chunks + named)
                    * prior;
            RankedFile {
                repo: c.repo,
                path: c.path,
                role,
                score,
                parts,
                mentions: c.mentions,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.repo.cmp(&b.repo))
            .then_with(|| a.path.cmp(&b.path))
    });
    ranked
}

/// How directly the file's evidence names this chunk (0..1): it holds a stack frame's line,
/// or it defines a name the query uses (weighed like file evidence: by how few files define
/// it, half for names only the query's code uses).
fn chunk_evidence(hit: &ChunkHit, mentions: &[Mention], cfg: &FileRankConfig) -> f64 {
    let own = hit
        .symbol
        .as_deref()
        .map(|s| s.rsplit(['.', ':']).next().unwrap_or(s));
    let mut e: f64 = 0.0;
    for m in mentions {
        match m {
            Mention::Frame {
                line: Some(l),
                innermost,
            } if hit.start_line <= *l && *l <= hit.end_line => {
                e = e.max(if *innermost { 1.0 } else { 0.5 });
            }
            Mention::Defines {
                name,
                files,
                code_only,
            } if own == Some(name.as_str()) => {
                e += if *code_only { 0.5 } else { 1.0 } / (*files).max(1) as f64;
            }
            Mention::Changed { definitions, .. } => {
                for d in definitions {
                    if hit.start_line <= d.end_line && d.start_line <= hit.end_line {
                        e = e.max(cfg.history_definition_weight * d.share);
                    }
                }
            }
            _ => {}
        }
    }
    e.min(1.0)
}

/// Orders chunks by their file's score plus `chunk_share` of their own (both on the 0..1
/// scale of the best), so a file's best chunk comes first and a strong chunk of the second
/// file can precede a weak one of the first. Chunks of files not ranked go last. A PDF page
/// stands for itself: its own score takes the file's place, since a whole book's score says
/// which book, not which of its pages answers. Each chunk's `P` (fusion's score parts) travels
/// with it untouched.
pub fn order_chunks<P>(
    chunks: Vec<(ChunkHit, P)>,
    files: &[RankedFile],
    cfg: &FileRankConfig,
) -> Vec<(ChunkHit, P)> {
    let best_file = files
        .first()
        .map_or(1.0, |f| f.score.max(f64::MIN_POSITIVE));
    let file_score: HashMap<(&str, &str), f64> = files
        .iter()
        .map(|f| ((f.repo.as_str(), f.path.as_str()), f.score / best_file))
        .collect();
    let best_chunk = chunks
        .iter()
        .map(|(h, _)| h.score)
        .fold(f64::MIN_POSITIVE, f64::max);
    let mentions: HashMap<(&str, &str), &[Mention]> = files
        .iter()
        .map(|f| ((f.repo.as_str(), f.path.as_str()), f.mentions.as_slice()))
        .collect();
    let mut scored: Vec<(f64, (ChunkHit, P))> = chunks
        .into_iter()
        .map(|(hit, parts)| {
            let key = (hit.repo.as_str(), hit.path.as_str());
            let file = match hit.page {
                Some(_) => hit.score / best_chunk,
                None => file_score.get(&key).copied().unwrap_or(-1.0),
            };
            let named = mentions.get(&key).map_or(0.0, |m| {
                chunk_evidence(&hit, m, cfg) * cfg.chunk_evidence_weight
            });
            (
                file + cfg.chunk_share * (hit.score / best_chunk + named),
                (hit, parts),
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1 .0.id.cmp(&b.1 .0.id)));
    scored
        .into_iter()
        .map(|(s, (mut hit, parts))| {
            hit.score = s;
            (hit, parts)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan;

    fn cand(path: &str, file_bm25: Option<f64>, chunks: &[f64]) -> FileCandidate {
        FileCandidate {
            repo: "r".into(),
            path: path.into(),
            file_bm25,
            chunk_scores: chunks.to_vec(),
            mentions: Vec::new(),
        }
    }

    fn order(files: &[RankedFile]) -> Vec<&str> {
        files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn every_setting_reads_and_writes() {
        let mut cfg = FileRankConfig::default();
        for (key, _) in SETTINGS {
            assert!(cfg.get(key).is_some(), "{key}");
            assert!(cfg.set(key, 7.0), "{key}");
            assert_eq!(cfg.get(key), Some(7.0), "{key}");
        }
        assert!(!cfg.set("search.nope", 1.0));
    }

    #[test]
    fn several_matching_chunks_beat_one_lucky_chunk() {
        let cfg = FileRankConfig::default();
        let ranked = rank_files(
            vec![
                cand("src/lucky.py", Some(4.0), &[1.0]),
                cand("src/real.py", Some(9.0), &[0.9, 0.8, 0.7]),
            ],
            &plan("session cookies are dropped on redirect"),
            &cfg,
            1.0,
        );
        assert_eq!(order(&ranked), ["src/real.py", "src/lucky.py"]);
        assert!((ranked[0].parts.file_bm25 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn tests_and_docs_rank_below_code_unless_asked_for() {
        let cfg = FileRankConfig::default();
        let same = |p: &str| cand(p, Some(5.0), &[0.8]);
        let files = || {
            vec![
                same("tests/test_retry.py"),
                same("docs/retry.rst"),
                same("src/retry.py"),
            ]
        };
        let ranked = rank_files(files(), &plan("retry backoff is ignored"), &cfg, 1.0);
        assert_eq!(ranked[0].path, "src/retry.py");
        assert_eq!(ranked[0].role, FileRole::Source);
        let ranked = rank_files(files(), &plan("tests for retry backoff"), &cfg, 1.0);
        assert_ne!(
            ranked[2].path,
            "tests/test_retry.py",
            "{:?}",
            order(&ranked)
        );
    }

    #[test]
    fn named_files_and_specific_definitions_count() {
        let cfg = FileRankConfig::default();
        let mut framed = cand("pkg/core.py", Some(1.0), &[0.1]);
        framed.mentions.push(Mention::Frame {
            innermost: true,
            line: Some(10),
        });
        let mut defines = cand("pkg/util.py", Some(2.0), &[0.2]);
        defines.mentions.push(Mention::Defines {
            name: "parse_row".into(),
            files: 1,
            code_only: false,
        });
        let mut generic = cand("pkg/other.py", Some(1.0), &[0.1]);
        generic.mentions.push(Mention::Defines {
            name: "run".into(),
            files: 50,
            code_only: false,
        });
        let ranked = rank_files(
            vec![generic, defines, framed],
            &plan("parse_row fails"),
            &cfg,
            1.0,
        );
        assert_eq!(
            order(&ranked),
            ["pkg/util.py", "pkg/core.py", "pkg/other.py"],
            "{ranked:?}"
        );
        assert_eq!(
            ranked[2].parts.named, 0.0,
            "a name defined in 50 files is no evidence"
        );
    }
}
