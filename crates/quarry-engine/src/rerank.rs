//! The second stage: a language model reorders the first stage's top candidates
//! (`search --rerank llm`, `search.rerank = "llm"`). The prompt and the lenient reading of the
//! reply are quarry-rank's (`rerank.rs`); the providers are quarry-llm's; this module runs them,
//! caches their orders in the workspace, and never lets a failing model fail a search: the
//! answer is then the first stage's, with a note saying why.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use quarry_llm::LanguageModel;
use quarry_rank::cite::{answer_prompt, check, citations};
use quarry_rank::rerank::{merge, parse_order, prompt, Candidate};
use serde::{Deserialize, Serialize};

use crate::answer::{AskResponse, RerankReport, SearchResponse, SearchResult};
use crate::request::SearchRequest;
use crate::workspace::Workspace;

#[derive(Serialize, Deserialize)]
struct CachedOrder {
    provider: String,
    order: Vec<usize>,
}

impl Workspace {
    /// The search every interface runs: `request`, then, when `rerank` says so (unset: the
    /// `search.rerank` setting), the language model of `config` reorders its top
    /// `search.rerank_candidates` results.
    pub fn search_with_settings(
        &self,
        request: &SearchRequest,
        config: &crate::workspace::config::Config,
        rerank: Option<bool>,
    ) -> Result<SearchResponse> {
        let rerank = match rerank {
            Some(on) => on,
            None => config.get("search.rerank")? == "llm",
        };
        if !rerank {
            return self.search_routed(request);
        }
        let model = language_model(config)?;
        let candidates = config.number("search.rerank_candidates") as usize;
        self.search_reranked(request, model.as_ref(), candidates)
    }

    /// Runs `request`, then has `model` reorder its top `candidates` results. The model sees
    /// each candidate's text (the first stage is asked for as many results, with text); the
    /// answer keeps `request.limit` results and `request.full_text` texts.
    pub fn search_reranked(
        &self,
        request: &SearchRequest,
        model: &dyn LanguageModel,
        candidates: usize,
    ) -> Result<SearchResponse> {
        let mut first = request.clone();
        first.limit = request.limit.max(candidates);
        first.full_text = first.limit;
        let mut response = self.search(&first)?;
        let n = candidates.min(response.results.len());
        let started = Instant::now();
        let mut report = RerankReport {
            provider: model.describe(),
            applied: false,
            cached: false,
            candidates: n,
            ranked: 0,
            elapsed_ms: 0,
            note: None,
        };
        if n >= 2 {
            let mut shown = candidates_of(&response.results);
            shown.truncate(n);
            let key = cache_key(&report.provider, &request.query, &shown);
            let cache = self.rerank_cache_file(&key);
            let order = match read_cached(&cache, &report.provider) {
                Some(order) => {
                    report.cached = true;
                    Ok(order)
                }
                None => ask(model, &request.query, &shown).inspect(|order| {
                    write_cached(&cache, &report.provider, order);
                }),
            };
            match order {
                Ok(order) => {
                    report.ranked = order.len();
                    report.applied = true;
                    let merged = merge(&order, n);
                    let mut slots: Vec<Option<_>> = response.results.drain(..n).map(Some).collect();
                    let reordered: Vec<_> =
                        merged.into_iter().filter_map(|i| slots[i].take()).collect();
                    response.results.splice(0..0, reordered);
                }
                Err(e) => {
                    let note = format!("{e:#}; first-stage order kept");
                    response.warnings.push(format!("rerank: {note}"));
                    report.note = Some(note);
                }
            }
        } else {
            report.note = Some("fewer than two results: nothing to reorder".into());
        }
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        response.results.truncate(request.limit);
        for r in response.results.iter_mut().skip(request.full_text) {
            r.text = None;
        }
        response.rerank = Some(report);
        Ok(response)
    }

    /// Answers `request.query` from its top `request.limit` chunks with `model`, checking the
    /// answer's citations against them. A model that fails leaves `answer` empty with a note.
    pub fn ask(&self, request: &SearchRequest, model: &dyn LanguageModel) -> Result<AskResponse> {
        let mut first = request.clone();
        first.full_text = first.limit;
        let search = self.search(&first)?;
        let started = Instant::now();
        let chunks = candidates_of(&search.results);
        let mut response = AskResponse {
            question: request.query.clone(),
            answer: None,
            provider: model.describe(),
            citations: Vec::new(),
            dropped_citations: 0,
            note: None,
            elapsed_ms: 0,
            search: search.clone(),
        };
        if chunks.is_empty() {
            response.note = Some("the search found nothing to answer from".into());
        } else {
            match model.complete(&answer_prompt(&request.query, &chunks)) {
                Ok(answer) => {
                    let (kept, dropped) = check(citations(&answer), &chunks);
                    response.citations = kept;
                    response.dropped_citations = dropped;
                    response.answer = Some(answer.trim().to_string());
                }
                Err(e) => {
                    response.note = Some(format!("{e:#}; here are the ranked chunks instead"))
                }
            }
        }
        response.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(response)
    }

    fn rerank_cache_file(&self, key: &str) -> PathBuf {
        self.dir
            .join("cache")
            .join("rerank")
            .join(format!("{key}.json"))
    }
}

/// The results of a search as the model is shown them.
pub(crate) fn candidates_of(results: &[SearchResult]) -> Vec<Candidate<'_>> {
    results
        .iter()
        .map(|r| Candidate {
            path: &r.path,
            start_line: r.start_line,
            end_line: r.end_line,
            symbol: r.symbol.as_deref(),
            text: r.text.as_deref().unwrap_or(""),
        })
        .collect()
}

/// Asks the model; an answer that names no candidate is an error (garbage, a refusal).
fn ask(model: &dyn LanguageModel, query: &str, shown: &[Candidate]) -> Result<Vec<usize>> {
    let reply = model.complete(&prompt(query, shown))?;
    let order = parse_order(&reply, shown.len());
    if order.is_empty() {
        let head: String = reply.trim().chars().take(120).collect();
        anyhow::bail!(
            "{}'s answer named no candidate ({:?})",
            model.describe(),
            head
        );
    }
    Ok(order)
}

/// The cache key: the provider, the query, and each candidate's place and text, so a changed
/// chunk or a changed first stage asks again.
fn cache_key(provider: &str, query: &str, shown: &[Candidate]) -> String {
    let mut material = format!("{provider}\n{query}\n");
    for c in shown {
        material.push_str(&format!(
            "{}:{}-{}:{}\n",
            c.path,
            c.start_line,
            c.end_line,
            quarry_core::content_hash(c.text.as_bytes())
        ));
    }
    quarry_core::content_hash(material.as_bytes())
}

fn read_cached(file: &std::path::Path, provider: &str) -> Option<Vec<usize>> {
    let cached: CachedOrder = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    (cached.provider == provider && !cached.order.is_empty()).then_some(cached.order)
}

/// Best effort: a workspace folder that cannot be written just means asking again next time.
fn write_cached(file: &std::path::Path, provider: &str, order: &[usize]) {
    write_json_atomically(
        file,
        &CachedOrder {
            provider: provider.to_string(),
            order: order.to_vec(),
        },
    );
}

/// Writes `value` as JSON beside `file`, then renames it into place, so a reader never sees
/// half a file; best effort (a cache that cannot be written is asked again next time).
pub fn write_json_atomically(file: &std::path::Path, value: &impl Serialize) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(bytes) = serde_json::to_vec(value) else {
        return;
    };
    let partial = file.with_extension(format!("{}.partial", std::process::id()));
    if std::fs::write(&partial, bytes).is_ok() && std::fs::rename(&partial, file).is_err() {
        let _ = std::fs::remove_file(&partial);
    }
}

/// Which language model the settings name: the endpoint when `llm.endpoint` is set, else the
/// command (`llm.command`, default `claude -p`).
pub fn language_model(config: &crate::workspace::config::Config) -> Result<Box<dyn LanguageModel>> {
    let timeout = config.seconds("llm.timeout_s");
    if config.is_set("llm.endpoint") {
        let key = std::env::var(config.get("llm.api_key_env")?)
            .ok()
            .filter(|k| !k.is_empty());
        return Ok(Box::new(quarry_llm::EndpointModel::new(
            &config.get("llm.endpoint")?,
            &config.get("llm.model")?,
            key,
            timeout,
        )?));
    }
    Ok(Box::new(quarry_llm::CommandModel::new(
        config.get("llm.command")?,
        timeout,
    )?))
}
