//! BM25 as the embedded store computes it (FTS5's `bm25()` with quarry's weight per query
//! phrase, quarry-store's weighted_bm25.rs), over candidates OpenSearch finds.
//!
//! Lucene's BM25 is not FTS5's: it scores each field on its own and sums the fields (FTS5
//! adds the weighted counts of all columns, then saturates once against the whole row's
//! length), and its IDF never falls to nothing for a term in most rows (FTS5's is floored at
//! 1e-6 there). On quarry's own sources that put only 60% of the top-10 files in common
//! between the two stores (docs/OPENSEARCH.md). So, as on PostgreSQL, the server finds and
//! quarry scores: the cluster ranks with Lucene's BM25 (the index's k1/b, quarry's field
//! weights as boosts) and returns its best `4 × limit + 100` candidates, each with its length
//! and how often each term occurs in each of its fields (named queries on the fields' `tf`
//! subfields, whose similarity scores a document by that count: schema.rs); counts over the
//! whole index (one `_msearch` the server's request cache mostly answers) give FTS5's row
//! count, average length and each term's document count; quarry scores each candidate
//! exactly as the embedded store does. A row outside Lucene's candidates cannot be
//! answered; within them the order and the scores are the embedded store's.
//!
//! Tokens are stored stemmed (Porter, diacritics folded, as FTS5's `porter unicode61
//! remove_diacritics 2` reads them), so the fields' analyzer only splits on whitespace: a
//! term's count in a field is the count of quarry's token. The stems come from the
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
/// Documents per part when the best candidates' fields are read.
const FETCH_PART: usize = 100;
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
    /// `_source` fields the caller reads from each hit (`id` is added).
    pub source: &'a [&'a str],
    /// The `source` fields are all keywords or numbers: read them from doc values, not from
    /// the stored document (a file's holds all its tokens and trigrams).
    pub from_doc_values: bool,
    /// Leave out terms with no weight (in at least half of all rows), unless every term is
    /// such: the embedded store's commit search does.
    pub only_weighing_terms: bool,
}

/// The best `limit` documents by the embedded store's BM25, best first (ties by `id`), with
/// their `_source` and score.
pub(crate) fn ranked(store: &OpenSearchStore, r: &Ranking) -> Result<Vec<(Value, f64)>> {
    // Distinct terms, stemmed, with how often each was named.
    let counted = quarry_core::tokens::counted_terms(r.terms);
    let terms: Vec<(Vec<String>, f64)> = {
        let mut lexicon = store.lexicon();
        lexicon.learn(store, counted.iter().map(|(t, _)| t.as_str()))?;
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
        let per_field: Vec<Value> = r
            .fields
            .iter()
            .map(|(field, weight)| term_query(term, field, json!({"boost": weight.max(1e-6)})))
            .collect();
        json!({"bool": {"should": per_field}})
    };
    // FTS5's statistics over the whole index (the query's filters do not narrow them): rows
    // and tokens, then each term's rows, each a search of its own in one `_msearch`. The
    // server keeps a size-0 search's answer until the index next changes (its request
    // cache), so the first is asked of the index once, and a term once whatever query it
    // is in; one aggregation of every term was 60-100 ms of an issue text at a million
    // chunks, over and over.
    let mut statistics = vec![json!({
        "size": 0, "track_total_hits": true,
        "aggs": {"tokens": {"sum": {"field": "n_tokens"}}},
    })];
    for (term, _) in &terms {
        let per_field: Vec<Value> = r
            .fields
            .iter()
            .map(|(field, _)| term_query(term, field, json!({})))
            .collect();
        statistics.push(json!({
            "size": 0, "track_total_hits": true,
            "query": {"bool": {"should": per_field}},
        }));
    }
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
    // The candidates come without their documents: the id is the sort's tie-breaker, the
    // length a doc value, and each term's count in each field the score of a named query
    // on the field's `tf` subfield (schema.rs), "i.j" for term i in field j. Reading the
    // tokens back instead cost 1.2 MB per short query and 13 MB per issue text's files.
    let candidates = (4 * r.limit + 100).min(10_000);
    let path = format!(
        "/{}/_search?search_type=dfs_query_then_fetch&include_named_queries_score=true",
        store.alias(r.kind)
    );
    let counting = |used: &[usize]| -> Value {
        let per_term: Vec<Value> = used
            .iter()
            .map(|&i| {
                let per_field: Vec<Value> = r
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(j, (field, _))| {
                        term_query(
                            &terms[i].0,
                            &format!("{field}.tf"),
                            json!({"_name": format!("{i}.{j}")}),
                        )
                    })
                    .collect();
                json!({"bool": {"should": per_field}})
            })
            .collect();
        json!({"bool": {"should": per_term}})
    };
    let search = |used: &[usize]| -> Result<Value> {
        let body = json!({
            "size": candidates, "_source": false, "stored_fields": "_none_",
            "docvalue_fields": ["n_tokens"],
            "query": {"bool": {"should": should(used), "minimum_should_match": 1, "filter": r.filters}},
            // Every candidate matches some term, so this keeps them all; it is here for its
            // named queries' counts.
            "post_filter": counting(used),
            "sort": ["_score", {"id": "asc"}],
        });
        store.client.json("POST", &path, Some(&body))
    };
    let all: Vec<usize> = (0..terms.len()).collect();
    // The statistics go as a search of their own, beside the candidate search: inside it, an
    // aggregation over the whole index made the candidate search collect every match (at a
    // million chunks 40-60 ms, where the two apart take 14-16 ms one after the other). Which
    // terms are searched depends on the statistics only when terms that do not weigh are
    // left out; otherwise the two are sent at once.
    let statistics_index = store.alias(r.kind);
    let client = &store.client;
    let ask_statistics = || client.msearch(&statistics_index, &statistics);
    let (stats, mut answer) = if r.only_weighing_terms {
        (ask_statistics()?, None)
    } else {
        let (stats, answer) = std::thread::scope(|scope| {
            let stats = scope.spawn(ask_statistics);
            let answer = search(&all);
            (
                stats
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a statistics request panicked"))),
                answer,
            )
        });
        (stats?, Some(answer?))
    };
    let matching = |answer: &Value| answer["hits"]["total"]["value"].as_f64().unwrap_or(0.0);
    let rows = matching(&stats[0]);
    let tokens = stats[0]["aggregations"]["tokens"]["value"]
        .as_f64()
        .unwrap_or(0.0);
    let average = tokens / rows.max(1.0);
    // Each term's IDF (floored as FTS5 floors it) times how often it was named, and whether
    // it weighs at all (in fewer than half of the rows).
    let mut weighing: Vec<(f64, bool)> = Vec::new();
    for (i, (_, times)) in terms.iter().enumerate() {
        let hits = matching(&stats[i + 1]);
        let raw = ((rows - hits + 0.5) / (hits + 0.5)).ln();
        weighing.push((if raw <= 0.0 { 1e-6 } else { raw } * times, raw > 0.0));
    }
    let mut used = all.clone();
    if r.only_weighing_terms && weighing.iter().any(|(_, weighs)| *weighs) {
        used.retain(|&i| weighing[i].1);
    }
    let answer = match answer.take() {
        Some(answer) => answer,
        None => search(&used)?,
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
            let counts = &hit["matched_queries"];
            let length = hit["fields"]["n_tokens"][0].as_f64().unwrap_or(0.0);
            let norm = K1 * (1.0 - r.b + r.b * length / average.max(1e-9));
            let score: f64 = used
                .iter()
                .map(|&i| {
                    let phrase = terms[i].0.len() as f64;
                    let f: f64 = r
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(j, (_, w))| {
                            let scored = counts[format!("{i}.{j}")].as_f64().unwrap_or(0.0);
                            w * (scored / phrase).round()
                        })
                        .sum();
                    weighing[i].0 * (f * (K1 + 1.0)) / (f + norm)
                })
                .sum();
            (hit["sort"][1].as_i64(), score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(r.limit);
    let ids: Vec<i64> = scored.iter().filter_map(|(id, _)| *id).collect();
    let mut wanted: Vec<&str> = r.source.to_vec();
    wanted.push("id");
    // Asked in parts of one `_msearch`, which the node answers side by side: reading 300
    // chunks' stored texts was one thread's work.
    let bodies: Vec<Value> = ids
        .chunks(FETCH_PART)
        .map(|part| {
            if r.from_doc_values {
                json!({"size": part.len(), "_source": false, "stored_fields": "_none_",
                       "docvalue_fields": wanted, "query": {"terms": {"id": part}}})
            } else {
                json!({"size": part.len(), "_source": wanted, "query": {"terms": {"id": part}}})
            }
        })
        .collect();
    let answers = if bodies.is_empty() {
        Vec::new()
    } else {
        store.client.msearch(&store.alias(r.kind), &bodies)?
    };
    let mut docs: HashMap<i64, Value> = answers
        .iter()
        .flat_map(|answer| answer["hits"]["hits"].as_array().into_iter().flatten())
        .filter_map(|h| {
            let doc = if r.from_doc_values {
                // Doc values come as arrays: their one value each, as `_source` holds it.
                let fields = h["fields"].as_object()?;
                Value::Object(
                    fields
                        .iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.get(0)?.clone())))
                        .collect(),
                )
            } else {
                h["_source"].clone()
            };
            Some((doc["id"].as_i64()?, doc))
        })
        .collect();
    Ok(scored
        .into_iter()
        .filter_map(|(id, score)| Some((docs.remove(&id?)?, score)))
        .collect())
}

/// The query for one term in one field: a `match` of its token, or a `match_phrase` of a
/// term of several, with `options` (a boost, a name) beside the text.
fn term_query(term: &[String], field: &str, mut options: Value) -> Value {
    let kind = if term.len() > 1 {
        "match_phrase"
    } else {
        "match"
    };
    options["query"] = json!(term.join(" "));
    json!({kind: {field: options}})
}
