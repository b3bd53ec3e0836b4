//! BM25 as the embedded store computes it (FTS5's `bm25()` with quarry's weight per query
//! phrase, quarry-store's weighted_bm25.rs), over candidates OpenSearch finds.
//!
//! Lucene's BM25 is not FTS5's: it scores each field on its own and sums the fields (FTS5
//! adds the weighted counts of all columns, then saturates once against the whole row's
//! length), and its IDF never falls to nothing for a term in most rows (FTS5's is floored at
//! 1e-6 there). On quarry's own sources that put only 60% of the top-10 files in common
//! between the two stores (docs/OPENSEARCH.md). So, as on PostgreSQL, the server finds and
//! quarry scores: the cluster ranks with Lucene's BM25 (the index's k1/b, quarry's field
//! weights as boosts) and returns its best `4 × limit + 100` candidates with their fields'
//! tokens; one aggregation over the whole index gives FTS5's row count, average length and
//! each term's document count; quarry counts each term in each field of each candidate and
//! scores it exactly as the embedded store does. A row outside Lucene's candidates cannot
//! be answered; within them the order and the scores are the embedded store's.
//!
//! Tokens are stored stemmed (Porter, diacritics folded, as FTS5's `porter unicode61
//! remove_diacritics 2` reads them), so the fields' analyzer only splits on whitespace and
//! quarry can count a candidate's terms from the text it gets back. The stems come from the
//! server (`_analyze` with the index's `quarry_stem` analyzer), asked once per distinct
//! token and kept in a [`Lexicon`].

use std::collections::HashMap;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::OpenSearchStore;

const K1: f64 = 1.2;
/// FTS5's length normalisation, for code and documents; commits pass their own.
pub(crate) const FTS5_B: f64 = 0.75;
/// Tokens per `_analyze` request (the server's default limit is 10,000).
const ANALYZE_TOKENS: usize = 5000;
/// A lexicon this large starts over (a process indexing many large repos).
const LEXICON_LIMIT: usize = 2_000_000;

/// The stem of every token this store has met.
#[derive(Default)]
pub(crate) struct Lexicon {
    stems: HashMap<String, String>,
}

impl Lexicon {
    /// Asks the server for the stems of the tokens of `texts` not known yet.
    pub fn learn<'a>(
        &mut self,
        store: &OpenSearchStore,
        texts: impl Iterator<Item = &'a str>,
    ) -> Result<()> {
        let mut unknown: Vec<&str> = Vec::new();
        let mut asked = std::collections::HashSet::new();
        for text in texts {
            for token in text.split_whitespace() {
                if !self.stems.contains_key(token) && asked.insert(token) {
                    unknown.push(token);
                }
            }
        }
        if unknown.is_empty() {
            return Ok(());
        }
        if self.stems.len() + unknown.len() > LEXICON_LIMIT {
            self.stems.clear();
        }
        for part in unknown.chunks(ANALYZE_TOKENS) {
            let answer = store.client.json(
                "POST",
                &format!("/{}/_analyze", store.alias("chunks")),
                Some(&json!({"analyzer": "quarry_stem", "text": part.join(" ")})),
            )?;
            let mut by_position: Vec<Vec<&str>> = vec![Vec::new(); part.len()];
            for token in answer["tokens"].as_array().into_iter().flatten() {
                let position = token["position"].as_u64().unwrap_or(u64::MAX) as usize;
                if let (Some(slot), Some(text)) =
                    (by_position.get_mut(position), token["token"].as_str())
                {
                    slot.push(text);
                }
            }
            for (token, stems) in part.iter().zip(by_position) {
                let stem = if stems.is_empty() {
                    token.to_string()
                } else {
                    stems.join("")
                };
                self.stems.insert(token.to_string(), stem);
            }
        }
        Ok(())
    }

    /// `text` (quarry's tokens, space-separated) with every token stemmed; `learn` first.
    pub fn stem(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for token in text.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(self.stems.get(token).map_or(token, String::as_str));
        }
        out
    }
}

/// What to rank: documents of the index of `kind` with the stemmed fields `fields` (each with
/// its weight) and their token count in `n_tokens`.
pub(crate) struct Ranking<'a> {
    pub kind: &'a str,
    /// quarry's terms, unstemmed (a term listed n times counts n times).
    pub terms: &'a [String],
    pub fields: &'a [(&'a str, f64)],
    pub b: f64,
    /// Filter clauses (they narrow the candidates, not the statistics: FTS5's are the whole
    /// table's).
    pub filters: Value,
    pub limit: usize,
    /// `_source` fields the caller reads from each hit (the fields and `id` are added).
    pub source: &'a [&'a str],
    /// Leave out terms with no weight (in at least half of all rows), unless every term is
    /// such: the embedded store's commit search does.
    pub only_weighing_terms: bool,
}

/// The best `limit` documents by the embedded store's BM25, best first (ties by `id`), with
/// their `_source` and score.
pub(crate) fn ranked(store: &OpenSearchStore, r: &Ranking) -> Result<Vec<(Value, f64)>> {
    // Distinct terms, stemmed, with how often each was named.
    let counted = quarry_core::tokens::counted_terms(r.terms);
    {
        let mut lexicon = store.lexicon.borrow_mut();
        lexicon.learn(store, counted.iter().map(|(t, _)| t.as_str()))?;
    }
    let terms: Vec<(Vec<String>, f64)> = {
        let lexicon = store.lexicon.borrow();
        counted
            .iter()
            .map(|(t, n)| {
                let stemmed = lexicon.stem(t);
                (
                    stemmed
                        .split(' ')
                        .map(String::from)
                        .collect::<Vec<String>>(),
                    *n as f64,
                )
            })
            .filter(|(t, _)| !t.is_empty() && !t[0].is_empty())
            .collect()
    };
    if terms.is_empty() || r.limit == 0 {
        return Ok(Vec::new());
    }
    let matches = |term: &[String]| -> Value {
        let text = term.join(" ");
        let kind = if term.len() > 1 {
            "match_phrase"
        } else {
            "match"
        };
        let per_field: Vec<Value> = r
            .fields
            .iter()
            .map(|(field, weight)| json!({kind: {*field: {"query": text, "boost": weight.max(1e-6)}}}))
            .collect();
        json!({"bool": {"should": per_field}})
    };
    // FTS5's statistics: rows, tokens, each term's rows — over the whole index (a `global`
    // aggregation: the query and the filters do not narrow it).
    let mut counts = serde_json::Map::new();
    for (i, (term, _)) in terms.iter().enumerate() {
        counts.insert(format!("t{i}"), matches(term));
    }
    let statistics = json!({"all": {"global": {}, "aggs": {
        "tokens": {"sum": {"field": "n_tokens"}},
        "rows": {"filters": {"filters": counts}},
    }}});
    // The candidates: Lucene's best by its own BM25, over the terms that weigh.
    let should = |used: &[usize]| -> Vec<Value> {
        used.iter()
            .map(|&i| {
                let mut m = matches(&terms[i].0);
                m["bool"]["boost"] = json!(terms[i].1);
                m
            })
            .collect()
    };
    // Only what scoring reads comes with the candidates; the answer's fields come for the
    // best `limit` alone.
    let mut source: Vec<&str> = r.fields.iter().map(|(f, _)| *f).collect();
    source.extend(["id", "n_tokens"]);
    let candidates = (4 * r.limit + 100).min(10_000);
    let path = format!(
        "/{}/_search?search_type=dfs_query_then_fetch",
        store.alias(r.kind)
    );
    let search = |used: &[usize], with_statistics: bool| -> Result<Value> {
        let mut body = json!({
            "size": candidates, "_source": source,
            "query": {"bool": {"should": should(used), "minimum_should_match": 1, "filter": r.filters}},
            "sort": ["_score", {"id": "asc"}],
        });
        if with_statistics {
            body["aggs"] = statistics.clone();
        }
        store.client.json("POST", &path, Some(&body))
    };
    let all: Vec<usize> = (0..terms.len()).collect();
    // Which terms are searched depends on the statistics only when terms that do not weigh
    // are left out: otherwise one search brings both.
    let (stats, mut answer) = if r.only_weighing_terms {
        let stats = store.client.json(
            "POST",
            &format!("/{}/_search", store.alias(r.kind)),
            Some(&json!({"size": 0, "aggs": statistics})),
        )?;
        (stats, None)
    } else {
        let answer = search(&all, true)?;
        (answer.clone(), Some(answer))
    };
    let stats = &stats["aggregations"]["all"];
    let rows = stats["doc_count"].as_f64().unwrap_or(0.0);
    let tokens = stats["tokens"]["value"].as_f64().unwrap_or(0.0);
    let average = tokens / rows.max(1.0);
    // Each term's IDF (floored as FTS5 floors it) times how often it was named, and whether
    // it weighs at all (in fewer than half of the rows).
    let mut weighing: Vec<(f64, bool)> = Vec::new();
    for (i, (_, times)) in terms.iter().enumerate() {
        let hits = stats["rows"]["buckets"][format!("t{i}")]["doc_count"]
            .as_f64()
            .unwrap_or(0.0);
        let raw = ((rows - hits + 0.5) / (hits + 0.5)).ln();
        weighing.push((if raw <= 0.0 { 1e-6 } else { raw } * times, raw > 0.0));
    }
    let mut used = all.clone();
    if r.only_weighing_terms && weighing.iter().any(|(_, weighs)| *weighs) {
        used.retain(|&i| weighing[i].1);
    }
    let answer = match answer.take() {
        Some(answer) => answer,
        None => search(&used, false)?,
    };
    let Some(hits) = answer["hits"]["hits"].as_array() else {
        bail!(
            "OpenSearch at {}: a search answered {answer}",
            store.client.shown
        );
    };
    let mut scored: Vec<(Option<i64>, f64)> = hits
        .iter()
        .map(|hit| {
            let doc = &hit["_source"];
            let fields: Vec<(Vec<&str>, f64)> = r
                .fields
                .iter()
                .map(|(f, w)| {
                    (
                        doc[*f].as_str().unwrap_or("").split_whitespace().collect(),
                        *w,
                    )
                })
                .collect();
            let length = doc["n_tokens"].as_f64().unwrap_or(0.0);
            let norm = K1 * (1.0 - r.b + r.b * length / average.max(1e-9));
            let score: f64 = used
                .iter()
                .map(|&i| {
                    let term = &terms[i].0;
                    let f: f64 = fields
                        .iter()
                        .map(|(tokens, w)| w * occurrences(tokens, term) as f64)
                        .sum();
                    weighing[i].0 * (f * (K1 + 1.0)) / (f + norm)
                })
                .sum();
            (doc["id"].as_i64(), score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(r.limit);
    let ids: Vec<i64> = scored.iter().filter_map(|(id, _)| *id).collect();
    let mut wanted: Vec<&str> = r.source.to_vec();
    wanted.push("id");
    let answer = store.client.json(
        "POST",
        &format!("/{}/_search", store.alias(r.kind)),
        Some(&json!({"size": ids.len(), "_source": wanted, "query": {"terms": {"id": ids}}})),
    )?;
    let mut docs: HashMap<i64, Value> = answer["hits"]["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| Some((h["_source"]["id"].as_i64()?, h["_source"].clone())))
        .collect();
    Ok(scored
        .into_iter()
        .filter_map(|(id, score)| Some((docs.remove(&id?)?, score)))
        .collect())
}

/// How often `term` (one token, or a phrase of several in order) occurs in `tokens`.
fn occurrences(tokens: &[&str], term: &[String]) -> usize {
    if term.is_empty() || tokens.len() < term.len() {
        return 0;
    }
    tokens
        .windows(term.len())
        .filter(|w| w.iter().zip(term).all(|(a, b)| *a == b.as_str()))
        .count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_phrase_counts_where_its_tokens_stand_together_in_order() {
        let tokens = ["get", "user", "name", "get", "user", "x", "user", "get"];
        let phrase = |p: &str| p.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(super::occurrences(&tokens, &phrase("get user")), 2);
        assert_eq!(super::occurrences(&tokens, &phrase("user")), 3);
        assert_eq!(super::occurrences(&tokens, &phrase("user get")), 1);
        assert_eq!(super::occurrences(&tokens[..1], &phrase("get user")), 0);
    }
}
