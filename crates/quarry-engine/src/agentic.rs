//! Agentic search (`search --agentic`): after the first search, follow-up searches — a language
//! model's proposals after reading the first results, or offline the query plus the names the
//! top results define — run, and every round's list is fused into one, until a round finds no
//! new file (at most three rounds). quarry-rank's `agentic.rs` holds the protocol and fusion.

use std::collections::HashSet;

use anyhow::Result;
use quarry_llm::LanguageModel;
use quarry_rank::agentic::{
    feedback_query, follow_up_prompt, fuse_lists, parse_follow_ups, MAX_ROUNDS,
};

use crate::answer::{AgenticReport, AgenticRound, SearchResponse, SearchResult};
use crate::request::{AgenticMode, SearchCall, SearchRequest};
use crate::workspace::config::Config;
use crate::workspace::Workspace;

/// The model an agentic search in `mode` asks, if any (every interface decides the same way).
pub fn follow_up_model(
    config: &Config,
    mode: AgenticMode,
) -> Result<Option<Box<dyn LanguageModel>>> {
    let use_model = match mode {
        AgenticMode::Llm => true,
        AgenticMode::Offline => false,
        AgenticMode::Auto => config.is_set("llm.command") || config.is_set("llm.endpoint"),
    };
    use_model
        .then(|| crate::rerank::language_model(config))
        .transpose()
}

/// Weight of a follow-up's list against the user's own query in the fusion.
pub const FOLLOW_UP_WEIGHT: f64 = 0.2;

impl Workspace {
    /// `request` answered by the search `how` names, with `config`'s settings (the embedder,
    /// when the search needs one, attached by the caller).
    pub fn search_as(
        &self,
        request: &SearchRequest,
        how: &SearchCall,
        config: &Config,
    ) -> Result<SearchResponse> {
        let mut response = match how {
            SearchCall::Ranked => self.search(request),
            SearchCall::Routed { rerank } => self.search_with_settings(request, config, *rerank),
            SearchCall::Agentic { mode } => {
                let model = follow_up_model(config, *mode)?;
                self.search_agentic(request, model.as_deref())
            }
        }?;
        // Damage met on the way (a stored text no longer what was written) is named with the
        // command that repairs it; the answer stands on the rest.
        if let Some(damage) = self.store().damage_noted() {
            response.warnings.push(damage);
        }
        Ok(response)
    }

    /// `request`, then follow-up rounds (`model`'s, or offline ones without a model), fused.
    pub fn search_agentic(
        &self,
        request: &SearchRequest,
        model: Option<&dyn LanguageModel>,
    ) -> Result<SearchResponse> {
        // Every round's results keep their text: the model reads them (the budget of full
        // texts, `full_text`, is applied to the fused answer at the end).
        let mut searched = request.clone();
        searched.full_text = searched.full_text.max(searched.limit);
        let mut response = self.search(&searched)?;
        let mut lists: Vec<Vec<SearchResult>> = vec![response.results.clone()];
        let mut files: HashSet<(String, String)> = response
            .results
            .iter()
            .map(|r| (r.repo.clone(), r.path.clone()))
            .collect();
        let mut asked: HashSet<String> = HashSet::from([request.query.clone()]);
        let mut report = AgenticReport {
            provider: model.map_or("offline".into(), |m| m.describe()),
            rounds: Vec::new(),
            note: None,
        };
        let mut current = response.results.clone();
        for _ in 0..MAX_ROUNDS {
            let proposals = match model {
                None => {
                    let symbols: Vec<&str> =
                        current.iter().filter_map(|r| r.symbol.as_deref()).collect();
                    feedback_query(&request.query, &symbols)
                        .into_iter()
                        .collect()
                }
                Some(model) => {
                    let shown = crate::rerank::candidates_of(&current);
                    match model.complete(&follow_up_prompt(
                        &request.query,
                        &shown[..shown.len().min(10)],
                    )) {
                        Ok(reply) => {
                            let proposals = parse_follow_ups(&reply);
                            let done = reply.trim().eq_ignore_ascii_case("done");
                            if proposals.is_empty() && !done && !reply.trim().is_empty() {
                                report.note = Some(format!(
                                    "the model's reply was not a list of searches ({:?}); stopped after {} round(s)",
                                    reply.trim().chars().take(80).collect::<String>(),
                                    report.rounds.len()
                                ));
                            }
                            proposals
                        }
                        Err(e) => {
                            report.note = Some(format!(
                                "{e:#}; stopped after {} round(s)",
                                report.rounds.len()
                            ));
                            break;
                        }
                    }
                }
            };
            let queries: Vec<String> = proposals
                .into_iter()
                .filter(|q| asked.insert(q.clone()))
                .collect();
            if queries.is_empty() {
                break;
            }
            let mut new_files = 0;
            for query in &queries {
                let mut follow_up = searched.clone();
                follow_up.query = query.clone();
                follow_up.explain = false;
                let found = self.search(&follow_up)?.results;
                for r in &found {
                    if files.insert((r.repo.clone(), r.path.clone())) {
                        new_files += 1;
                    }
                }
                lists.push(found);
            }
            report.rounds.push(AgenticRound { queries, new_files });
            current = fuse(&lists, request.limit);
            if new_files == 0 {
                break;
            }
        }
        if !report.rounds.is_empty() {
            response.results = current;
        }
        for r in response.results.iter_mut().skip(request.full_text) {
            r.text = None;
        }
        // Said where every reader looks, not only in the JSON's `agentic.note`.
        if let Some(note) = &report.note {
            response.warnings.push(format!("agentic search: {note}"));
        }
        response.agentic = Some(report);
        Ok(response)
    }
}

/// One list from every round's, by weighted reciprocal rank; a chunk keeps the text and
/// details of its first appearance.
fn fuse(lists: &[Vec<SearchResult>], limit: usize) -> Vec<SearchResult> {
    let ids: Vec<Vec<&str>> = lists
        .iter()
        .map(|l| l.iter().map(|r| r.id.as_str()).collect())
        .collect();
    let order = fuse_lists(&ids, FOLLOW_UP_WEIGHT);
    let mut out = Vec::with_capacity(limit);
    for id in order.into_iter().take(limit) {
        if let Some(r) = lists.iter().flatten().find(|r| r.id == id) {
            out.push(r.clone());
        }
    }
    out
}
