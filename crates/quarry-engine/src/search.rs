//! The search API under every interface: a request in, ranked chunks out, in the JSON shape
//! documented in docs/JSON.md (later modes extend it, never break it).

use crate::answer::{fit_to_request, IndexSummary, Mode, SearchResponse, SearchResult};
use crate::filter::PathFilter;
use crate::history_evidence::{PendingVotes, Votes};
use crate::request::{check_request, SearchRequest};
use crate::workspace::Workspace;
use anyhow::{bail, Result};
use quarry_core::{tokens, ChunkHit, LexicalQuery, Store, VectorQuery};
use quarry_rank::fusion::{self, FusionConfig, ScoreParts};
use quarry_rank::plan::QueryPlan;
use quarry_rank::{FileCandidate, Mention, RankedFile};
use std::collections::HashMap;

/// Query vectors for the kNN side: the whole query, and for an issue text also its title and
/// first passages (the model reads ~128 tokens, so most of a long text is otherwise unseen).
fn query_texts(query: &str, plan: &QueryPlan, passages: usize) -> Vec<String> {
    let mut texts = vec![query.to_string()];
    if let Some(issue) = &plan.issue {
        for p in issue.passages.iter().take(passages) {
            if !texts.contains(p) {
                texts.push(p.clone());
            }
        }
    }
    texts
}

/// Candidate files (from whole-file BM25) beside those the chunk lists bring.
const FILE_CANDIDATES: usize = 100;

/// The line spans of the definitions past commits like the query changed in `file`, the
/// best-voted first (at most two: the evidence names a place, not the whole file).
fn changed_definitions(file: &quarry_rank::RankedFile) -> Vec<(u32, u32)> {
    let mut defs: Vec<&quarry_rank::ChangedDefinition> = file
        .mentions
        .iter()
        .flat_map(|m| match m {
            quarry_rank::Mention::Changed { definitions, .. } => definitions.as_slice(),
            _ => &[],
        })
        .collect();
    defs.sort_by(|a, b| b.share.total_cmp(&a.share));
    defs.into_iter()
        .take(2)
        .map(|d| (d.start_line, d.end_line))
        .collect()
}

/// For a file ranked without any chunk among the candidates (found by whole-file BM25 or a
/// stack frame), the chunk to show: the one holding a frame's line, else the one defining a
/// name the query uses, else the one with most query terms.
fn representative_chunk(
    chunks: Vec<ChunkHit>,
    file: &quarry_rank::RankedFile,
    plan: &QueryPlan,
) -> Option<ChunkHit> {
    let frame_line = file.mentions.iter().find_map(|m| match m {
        quarry_rank::Mention::Frame { line: Some(l), .. } => Some(*l),
        _ => None,
    });
    if let Some(line) = frame_line {
        if let Some(c) = chunks
            .iter()
            .find(|c| c.start_line <= line && line <= c.end_line)
        {
            return Some(c.clone());
        }
    }
    let named: Vec<&str> = file
        .mentions
        .iter()
        .filter_map(|m| match m {
            quarry_rank::Mention::Defines { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    if let Some(c) = chunks.iter().find(|c| {
        c.symbol
            .as_deref()
            .is_some_and(|s| named.iter().any(|n| s.rsplit('.').next() == Some(n)))
    }) {
        return Some(c.clone());
    }
    chunks.into_iter().max_by_key(|c| {
        let mut found: Vec<&str> = Vec::new();
        tokens::for_each_token(&c.text, |t| {
            if let Some(q) = plan.terms.iter().find(|q| q.as_str() == t) {
                if !found.contains(&q.as_str()) {
                    found.push(q.as_str());
                }
            }
        });
        found.len()
    })
}

/// What points at files apart from the chunk candidates, read from the plan alone.
struct FileEvidence {
    /// Whole-file BM25's best files (issue texts only).
    file_bm25: Vec<quarry_core::FileHit>,
    /// The files the query's paths, frames and names point at.
    mentions: crate::evidence::Mentions,
    /// The votes of past changes like the query (issue texts with history on; `PendingVotes`).
    history: Votes,
}

impl FileEvidence {
    fn gather(
        store: &dyn Store,
        plan: &QueryPlan,
        request: &SearchRequest,
        file_query: &LexicalQuery,
    ) -> Result<FileEvidence> {
        // Whole-file BM25 is for whole issue texts, whose terms spread over a file's several
        // definitions; a short query's terms meet in one chunk, which the chunk scores already
        // count (with it, CoSQA hybrid MRR 0.529; without, 0.533 — docs/EVAL.md).
        let whole_files = plan.issue.is_some() && request.fusion.files.file_weight > 0.0;
        let file_bm25 = |store: &dyn Store| match whole_files {
            true => store.search_files_lexical(file_query),
            false => Ok(Vec::new()),
        };
        let mentions = |store: &dyn Store| {
            crate::evidence::gather(store, plan, &request.repos, &request.fusion.files)
        };
        let (file_bm25, mentions) = both(store, false, file_bm25, mentions);
        Ok(FileEvidence {
            file_bm25: file_bm25?,
            mentions: mentions?,
            history: Votes::new(),
        })
    }
}

/// Two reads of `store` beside each other, `a` on a thread of its own, where the store answers
/// several at once (`Store::concurrent`) or, when `apart` allows, opens another reader for
/// `a` (`Store::beside`); else one after the other. A panic in `a` is an error, as its reads'
/// would be.
fn both<A: Send, B>(
    store: &dyn Store,
    apart: bool,
    a: impl Fn(&dyn Store) -> Result<A> + Sync,
    b: impl Fn(&dyn Store) -> Result<B>,
) -> (Result<A>, Result<B>) {
    let joined = |a: Option<Result<A>>| {
        a.unwrap_or_else(|| Err(anyhow::anyhow!("a read beside the search panicked")))
    };
    if let Some(store) = store.concurrent() {
        return std::thread::scope(|scope| {
            let a = scope.spawn(|| a(store));
            let b = b(store);
            (joined(a.join().ok()), b)
        });
    }
    match apart.then(|| store.beside()).flatten() {
        Some(other) => std::thread::scope(|scope| {
            let a = &a;
            let a = scope.spawn(move || a(&*other));
            let b = b(store);
            (joined(a.join().ok()), b)
        }),
        None => (a(store), b(store)),
    }
}

impl Workspace {
    /// What the request searches, as an answer names it; an error for a repo the workspace
    /// lacks.
    pub(crate) fn index_summary(&self, request: &SearchRequest) -> Result<IndexSummary> {
        let repos = self.store().repos()?;
        for wanted in &request.repos {
            if !repos.iter().any(|r| &r.name == wanted) {
                let known: Vec<&str> = repos.iter().map(|r| r.name.as_str()).collect();
                // The caller's mistake (HTTP 400), not the index's.
                return Err(crate::error::bad(format!(
                    "no repo named `{wanted}` in this workspace (repos: {})",
                    known.join(", ")
                )));
            }
        }
        let searched: Vec<_> = repos
            .iter()
            .filter(|r| request.repos.is_empty() || request.repos.contains(&r.name))
            .collect();
        Ok(IndexSummary {
            repos: searched.iter().map(|r| r.name.clone()).collect(),
            files: searched.iter().map(|r| r.files).sum(),
            chunks: searched.iter().map(|r| r.chunks).sum(),
            indexed_at: searched
                .iter()
                .filter_map(|r| r.indexed_at)
                .max()
                .map(quarry_core::history::format_time),
            skipped: searched.iter().flat_map(|r| r.skipped.values()).sum(),
        })
    }

    /// Runs one search.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        check_request(request)?;
        let index = self.index_summary(request)?;
        let filter = PathFilter::new(request)?;
        let query_plan = quarry_rank::plan::plan(&request.query);
        let lexical_terms = query_plan.lexical_terms(
            request.fusion.files.title_repeat.round() as usize,
            request.fusion.files.message_repeat.round() as usize,
        );
        let lexical_query = |limit: usize| LexicalQuery {
            terms: lexical_terms.clone(),
            repos: request.repos.clone(),
            language: request.language,
            content: request.content,
            path_glob: request.path.clone(),
            limit,
            weights: request.weights,
        };
        let coverage = match (&self.embedder, request.mode) {
            (_, Mode::Lexical) | (None, Mode::Auto) => None,
            (None, _) => bail!(
                "{:?} search needs the embedding model: run `quarry model install` (or search with --mode lexical)",
                request.mode
            ),
            (Some(_), _) => Some(self.store().coverage(&request.repos)?),
        };
        let mut mode = match request.mode {
            Mode::Auto if coverage.is_some_and(|c| c.embedded > 0) => Mode::Hybrid,
            Mode::Auto => Mode::Lexical,
            m => m,
        };
        // The query's vectors first: if the embedder fails (an endpoint that went down), the
        // answer is lexical with a warning, never an error and never a hang.
        let mut warnings = Vec::new();
        let mut query_vectors = Vec::new();
        if let (Mode::Semantic | Mode::Hybrid, Some(embedder)) = (mode, &self.embedder) {
            let texts = query_texts(&request.query, &query_plan, request.fusion.files.passages);
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            match embedder.embed_queries(&texts) {
                Ok(v) => query_vectors = v,
                Err(e) => {
                    warnings.push(format!("{e:#}; answered lexically"));
                    mode = Mode::Lexical;
                }
            }
        }
        let semantic = |limit: usize| -> Result<Vec<ChunkHit>> {
            if query_vectors.is_empty() {
                return Ok(Vec::new());
            }
            self.store().search_vector(&VectorQuery {
                vectors: query_vectors.clone(),
                repos: request.repos.clone(),
                language: request.language,
                content: request.content,
                path_glob: request.path.clone(),
                limit,
            })
        };
        let cfg = &request.fusion;
        let mut files = Vec::new();
        let results: Vec<SearchResult> = match mode {
            Mode::Semantic => semantic(request.limit)?
                .into_iter()
                .filter(|h| h.score >= request.fusion.answer_floor)
                .map(SearchResult::from)
                .collect(),
            Mode::Lexical | Mode::Auto | Mode::Hybrid => {
                // Past changes like an issue text vote for files (synced history only): asked
                // beside everything below, on a connection of their own.
                let votes = PendingVotes::start(
                    self,
                    request,
                    query_plan.issue.is_some() && cfg.files.history_weight > 0.0,
                );
                // What points at files apart from the chunks (whole-file BM25, the names and
                // paths the query uses) needs only the plan: a store that answers several
                // reads at once is asked it beside the chunk candidates.
                let chunk_query = lexical_query(cfg.lexical_candidates);
                let file_query = lexical_query(FILE_CANDIDATES);
                // An issue text's whole-file BM25 is the read worth another connection.
                let (lexical, file_evidence) = both(
                    self.store(),
                    query_plan.issue.is_some(),
                    |store| store.search_lexical(&chunk_query),
                    |store| FileEvidence::gather(store, &query_plan, request, &file_query),
                );
                let (lexical, mut file_evidence) = (lexical?, file_evidence?);
                let semantic = if mode == Mode::Hybrid {
                    semantic(cfg.semantic_candidates)?
                } else {
                    Vec::new()
                };
                let lexical_share = if semantic.is_empty() {
                    1.0
                } else {
                    let (wl, ws) = fusion::weights(&query_plan, cfg);
                    wl / (wl + ws)
                };
                let fused = fusion::fuse(lexical, semantic, &query_plan, cfg);
                file_evidence.history = votes.finish(self, request)?;
                let ranked = self.rank_files(
                    &query_plan,
                    request,
                    &filter,
                    &fused,
                    file_evidence,
                    lexical_share,
                )?;
                let mut chunks = fused;
                // Files ranked high without a chunk among the candidates get their best one;
                // a definition past commits like the query changed joins its file's chunks.
                for file in ranked.iter().take(request.limit.max(10)) {
                    let changed = changed_definitions(file);
                    let have: Vec<(u32, u32)> = chunks
                        .iter()
                        .filter(|(h, _)| h.repo == file.repo && h.path == file.path)
                        .map(|(h, _)| (h.start_line, h.end_line))
                        .collect();
                    let missing: Vec<(u32, u32)> = changed
                        .into_iter()
                        .filter(|span| !have.contains(span))
                        .collect();
                    if !have.is_empty() && missing.is_empty() {
                        continue;
                    }
                    let all = self.store().file_chunks(&file.repo, &file.path)?;
                    if have.is_empty() && missing.is_empty() {
                        if let Some(c) = representative_chunk(all, file, &query_plan) {
                            chunks.push((ChunkHit { score: 0.0, ..c }, ScoreParts::default()));
                        }
                        continue;
                    }
                    for c in all {
                        if missing.contains(&(c.start_line, c.end_line)) {
                            chunks.push((ChunkHit { score: 0.0, ..c }, ScoreParts::default()));
                        }
                    }
                }
                let ordered = quarry_rank::files::order_chunks(chunks, &ranked, &cfg.files);
                let per_file = if query_plan.issue.is_some() {
                    cfg.files.issue_max_per_file
                } else {
                    cfg.max_per_file
                };
                let ordered = fusion::diversify(
                    ordered,
                    |(h, _)| (h.repo.as_str(), h.path.as_str(), h.page),
                    per_file,
                );
                let ordered = only_answers(ordered, &request.query, &query_plan, &ranked, cfg);
                // Files brought in by evidence (a definition of a name the query uses, a
                // frame, a path) hold the request's filters like every chunk found by search.
                let ordered: Vec<_> = ordered
                    .into_iter()
                    .filter(|(h, _)| !filter.is_set() || filter.admits_chunk(&h.path, h.language))
                    .collect();
                if request.explain {
                    files = ranked.into_iter().take(request.limit).collect();
                }
                ordered
                    .into_iter()
                    .take(request.limit)
                    .map(|(hit, parts)| SearchResult {
                        score_parts: (mode == Mode::Hybrid || request.explain).then_some(parts),
                        ..SearchResult::from(hit)
                    })
                    .collect()
            }
        };
        let mut results: Vec<SearchResult> = results;
        crate::answer::mark_matched_lines(&mut results, &request.query, request.colour_lines);
        fit_to_request(&mut results, request.limit, request.full_text);
        Ok(SearchResponse {
            query: request.query.clone(),
            mode,
            results,
            index,
            coverage,
            // Hybrid answers always carried the plan; what an issue text's frames and code
            // name comes with `explain` only (it can be long).
            plan: match (request.explain, mode) {
                (true, _) => Some(query_plan),
                (false, Mode::Hybrid) => Some(QueryPlan {
                    issue: None,
                    ..query_plan
                }),
                _ => None,
            },
            files,
            warnings,
            rerank: None,
            agentic: None,
            route: None,
        })
    }

    /// Every file the evidence points at, ranked (quarry-rank's `files`).
    fn rank_files(
        &self,
        plan: &QueryPlan,
        request: &SearchRequest,
        filter: &PathFilter,
        fused: &[(ChunkHit, ScoreParts)],
        evidence: FileEvidence,
        lexical_share: f64,
    ) -> Result<Vec<quarry_rank::RankedFile>> {
        let mut candidates: HashMap<(String, String), FileCandidate> = HashMap::new();
        fn entry<'a>(
            candidates: &'a mut HashMap<(String, String), FileCandidate>,
            repo: &str,
            path: &str,
        ) -> &'a mut FileCandidate {
            candidates
                .entry((repo.to_string(), path.to_string()))
                .or_insert_with(|| FileCandidate {
                    repo: repo.to_string(),
                    path: path.to_string(),
                    ..Default::default()
                })
        }
        for (hit, _) in fused {
            entry(&mut candidates, &hit.repo, &hit.path)
                .chunk_scores
                .push(hit.score);
        }
        for f in evidence.file_bm25 {
            entry(&mut candidates, &f.repo, &f.path).file_bm25 = Some(f.score);
        }
        for ((repo, path), list) in evidence.mentions {
            if !filter.admits_path(&path) {
                continue;
            }
            entry(&mut candidates, &repo, &path).mentions = list;
        }
        // Past changes like the issue vote for the files they changed (synced history only).
        for ((repo, path), votes) in evidence.history {
            if filter.admits_path(&path) {
                entry(&mut candidates, &repo, &path)
                    .mentions
                    .push(Mention::Changed {
                        share: votes.share,
                        commits: votes.commits,
                        definitions: votes.definitions,
                    });
            }
        }
        Ok(quarry_rank::files::rank_files(
            candidates.into_values().collect(),
            plan,
            &request.fusion.files,
            lexical_share,
        ))
    }
}

/// Drops what is not an answer (quarry-rank's answers.rs): results with no matching words
/// (for a lone identifier: not the whole identifier), a cosine below the floor, and a file
/// nothing in the query names.
fn only_answers(
    ordered: Vec<(ChunkHit, ScoreParts)>,
    query: &str,
    plan: &QueryPlan,
    ranked: &[RankedFile],
    cfg: &FusionConfig,
) -> Vec<(ChunkHit, ScoreParts)> {
    use quarry_rank::answers;
    let named: std::collections::HashSet<(&str, &str)> = ranked
        .iter()
        .filter(|f| !f.mentions.is_empty() || f.parts.file_bm25 > 0.0)
        .map(|f| (f.repo.as_str(), f.path.as_str()))
        .collect();
    let identifier = answers::lone_identifier(query, plan);
    ordered
        .into_iter()
        .filter(|(hit, parts)| {
            let words = parts.lexical_rank.is_some()
                && identifier.as_ref().is_none_or(|parts| {
                    answers::holds_identifier(
                        parts,
                        &[&hit.path, hit.symbol.as_deref().unwrap_or(""), &hit.text],
                    )
                });
            let is_named = named.contains(&(hit.repo.as_str(), hit.path.as_str()));
            answers::is_answer(words, parts.cosine, is_named, cfg.answer_floor)
        })
        .collect()
}
