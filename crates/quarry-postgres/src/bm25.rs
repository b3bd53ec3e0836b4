//! BM25 in SQL: the embedded store ranks with FTS5's `bm25()`, and PostgreSQL has no such
//! function (`ts_rank_cd` has no inverse document frequency, and ranked sympy's files
//! differently: docs/POSTGRES.md). Written as plain SQL over the stored text vectors rather
//! than as an extension, so that any PostgreSQL, and Citus, runs it.
//!
//! Only the best candidates are read (MaxScore, Turtle and Flood 1995): every term's IDF is
//! known before any row is read (term_counts.rs), so is the most a term can add to a row's
//! score (`idf · (k1 + 1)`, times the query's repeats). Rows holding the rarest terms are
//! scored first, in full; when the terms left out could together add less than the last of
//! the top scores, no row holding only those can enter it, and the answer is exact without
//! reading them. A common word (~240,000 rows at a million chunks) is then only looked up in
//! the rows the rare words found.

use tokio_postgres::Row;

use crate::connection::{PgError, Queries};
use crate::filters::Params;
use crate::term_counts;

/// FTS5's BM25 constants (SQLite's `fts5_aux.c`), so both stores weigh a term alike.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// The first pass reads the rows of the rarest terms until about this many (more only when
/// the rarest term alone holds more): most short queries end there.
pub(crate) const FIRST_PASS_ROWS: i64 = 20_000;

/// What to rank: rows of `table` (aliased `t`, with a `tsv` and an `n_tokens` column, its
/// totals in `fts_totals` and its words' counts in `fts_terms` under the table's name), joined
/// by `joins` for the filters and for `columns`, the first `limit` best first, ties broken by
/// `tie`.
pub(crate) struct Bm25<'a> {
    pub terms: &'a [String],
    /// The weights of the fields stored as A, B, C and D.
    pub weights: [f64; 4],
    pub table: &'a str,
    pub joins: &'a str,
    pub columns: &'a str,
    pub tie: &'a str,
    pub limit: usize,
    /// Leave out the terms with no weight (in at least half of all rows: the IDF below is
    /// floored), unless every term is such: a row holding only them is not an answer. The
    /// embedded store's commit search does the same (it does not read their posting lists).
    pub only_weighing_terms: bool,
    /// How many rows the first pass reads (about: the rarest term's are read whatever they
    /// hold), [`FIRST_PASS_ROWS`] unless a caller tunes it.
    pub first_pass_rows: i64,
}

/// A distinct term of the query with what it weighs.
struct Term {
    text: String,
    /// Rows holding it, in the whole database.
    docs: i64,
    /// IDF times the number of times the query names it.
    weight: f64,
}

impl Term {
    /// The most the term can add to a row's score: its term-frequency factor is below k1 + 1.
    fn bound(&self) -> f64 {
        self.weight * (BM25_K1 + 1.0)
    }
}

/// The rows behind chunk, file and commit search, best first: `columns`, the rank, then the
/// row's repo and id. `push_filters` appends the filters' conditions (`AND …`, numbered after the
/// parameters already bound). Ranked by BM25 as the embedded store's FTS5 computes it, so the
/// two stores order the same candidates alike (docs/POSTGRES.md measures how closely):
///
/// - each distinct term of the query is a phrase that a row matches or not, its score counted
///   as many times as the query names it (FTS5 scores a repeated phrase again);
/// - a term's IDF is `ln((N - n + 0.5) / (n + 0.5))` (at least 1e-6), over every row of the
///   database (`fts_totals`) and every row containing it (`fts_terms`) — counted before the
///   repo, language and path filters, as FTS5 counts before the join that applies them;
/// - its frequency in a row is the field-weighted count of its positions (a several-word term:
///   of its occurrences as a phrase);
/// - a row's length is its token count (`n_tokens`), against the average over all rows.
pub(crate) fn ranked(
    c: &mut impl Queries,
    q: &Bm25,
    push_filters: &dyn Fn(&mut String, &mut Params),
) -> Result<Vec<Row>, PgError> {
    // A term asked for twice counts twice, as a phrase repeated in an FTS5 query does (an
    // issue's title is asked for three times): read once, its score multiplied.
    let mut distinct: Vec<String> = Vec::new();
    let mut times: Vec<f64> = Vec::new();
    for term in q.terms {
        match distinct.iter().position(|t| t == term) {
            Some(i) => times[i] += 1.0,
            None => {
                distinct.push(term.clone());
                times.push(1.0);
            }
        }
    }
    let (docs, total_rows, total_tokens) = term_counts::counts(c, q.table, &distinct)?;
    let avgdl = (total_tokens / total_rows.max(1.0)).max(1e-9);
    let mut terms: Vec<(Term, bool)> = distinct
        .into_iter()
        .zip(docs)
        .zip(times)
        .filter(|((_, n), _)| *n > 0)
        .map(|((text, n), times)| {
            let raw = ((total_rows - n as f64 + 0.5) / (n as f64 + 0.5)).ln();
            let term = Term {
                text,
                docs: n,
                weight: times * raw.max(1e-6),
            };
            (term, raw > 0.0)
        })
        .collect();
    if q.only_weighing_terms && terms.iter().any(|(_, weighs)| *weighs) {
        terms.retain(|(_, weighs)| *weighs);
    }
    let mut terms: Vec<Term> = terms.into_iter().map(|(t, _)| t).collect();
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    // Those that can add the most first: the rare ones.
    terms.sort_by(|a, b| b.bound().total_cmp(&a.bound()));
    let mut read = 1;
    let mut rows_read = terms[0].docs;
    while read < terms.len() && rows_read + terms[read].docs <= q.first_pass_rows {
        rows_read += terms[read].docs;
        read += 1;
    }
    let first = scored(c, q, &terms, 0..read, &[], avgdl, push_filters)?;
    // The last of a full top: a row must beat it to enter (none yet: anything may).
    let threshold = match first.last() {
        Some(last) if first.len() >= q.limit => last.get::<_, f64>(last.len() - 3),
        _ => 0.0,
    };
    let left_out = |read: usize| terms[read..].iter().map(Term::bound).sum::<f64>();
    if read == terms.len() || left_out(read) < threshold {
        return Ok(first);
    }
    // The top scores so far only rise with more rows read: the fewest terms whose rows must
    // be read, judged by them, are enough. Only the rows those terms add are read now; the
    // first pass's top rows are scored again beside them (a handful), not the rest it read.
    let from = read;
    while read < terms.len() && left_out(read) >= threshold {
        read += 1;
    }
    let kept: Vec<(i64, i64)> = first
        .iter()
        .map(|r| (r.get(r.len() - 2), r.get(r.len() - 1)))
        .collect();
    scored(c, q, &terms, from..read, &kept, avgdl, push_filters)
}

/// The top `q.limit` of the rows holding any of the terms `read` and none before them, and of
/// the rows `kept` (`(repo_id, id)`: an earlier pass's top), each scored by every term. The
/// rank is the third column from the end, then the row's repo and id.
fn scored(
    c: &mut impl Queries,
    q: &Bm25,
    terms: &[Term],
    read: std::ops::Range<usize>,
    kept: &[(i64, i64)],
    avgdl: f64,
    push_filters: &dyn Fn(&mut String, &mut Params),
) -> Result<Vec<Row>, PgError> {
    let any_of = |range: std::ops::Range<usize>| {
        range
            .map(|k| format!("phraseto_tsquery('quarry', $1[{}])", k + 1))
            .collect::<Vec<_>>()
            .join(" || ")
    };
    let mut matched = format!("t.tsv @@ ({})", any_of(read.clone()));
    if read.start > 0 {
        matched.push_str(&format!(" AND NOT t.tsv @@ ({})", any_of(0..read.start)));
    }
    // `ts_rank_cd` with a one-term query and no normalisation sums the weights of the term's
    // positions (each position is a cover of length one, worth its weight): the field-weighted
    // term frequency, found by binary search in the text vector. Its weights are {D, C, B, A},
    // each at most 1, so they are scaled down here and the sum scaled back up.
    let [a, b, c_weight, d] = q.weights;
    let top = a.max(b).max(c_weight).max(d).max(f64::MIN_POSITIVE);
    let rank_weights: Vec<f32> = [d, c_weight, b, a]
        .iter()
        .map(|w| (w / top) as f32)
        .collect();
    let texts: Vec<String> = terms.iter().map(|t| t.text.clone()).collect();
    let weights: Vec<f64> = terms.iter().map(|t| t.weight).collect();
    let mut params: Params = vec![
        Box::new(texts),
        Box::new(rank_weights),
        Box::new(top),
        Box::new(weights),
        Box::new(avgdl),
    ];
    let mut filters = String::new();
    push_filters(&mut filters, &mut params);
    params.push(Box::new(q.limit as i64));
    let limit = params.len();
    let carried = if kept.is_empty() {
        String::new()
    } else {
        params.push(Box::new(kept.iter().map(|k| k.0).collect::<Vec<i64>>()));
        params.push(Box::new(kept.iter().map(|k| k.1).collect::<Vec<i64>>()));
        format!(
            "UNION ALL
             SELECT t.repo_id, t.id, t.tsv || ''::tsvector AS tsv, t.n_tokens
             FROM {table} t {joins}
             WHERE (t.repo_id, t.id) IN (SELECT * FROM unnest(${}::int8[], ${}::int8[])) {filters}",
            limit + 1,
            limit + 2,
            table = q.table,
            joins = q.joins,
        )
    };
    let sql = format!(
        "WITH terms AS MATERIALIZED (
             SELECT phraseto_tsquery('quarry', t.term) AS query, t.weight
             FROM unnest($1::text[], $4::float8[]) AS t(term, weight)),
         candidates AS MATERIALIZED (
             -- `|| ''`: the text vector decompressed once here, not by every term's call below
             -- (a stored vector stays compressed in the CTE; 40% of a long query's time).
             SELECT t.repo_id, t.id, t.tsv || ''::tsvector AS tsv, t.n_tokens
             FROM {table} t {joins}
             WHERE {matched} {filters}
             {carried}),
         scored AS (
             SELECT c.repo_id, c.id,
                    sum(terms.weight * x.f * ({k1} + 1)
                        / (x.f + {k1} * (1 - {b} + {b} * c.n_tokens / $5::float8))) AS rank
             -- Every term is looked up in every candidate: a row found by a rare term gets
             -- its common terms' share too.
             FROM candidates c JOIN terms ON c.tsv @@ terms.query
             CROSS JOIN LATERAL (
                 SELECT ts_rank_cd($2::float4[], c.tsv, terms.query, 0) * $3::float8 AS f) x
             GROUP BY c.repo_id, c.id
             ORDER BY rank DESC, c.id LIMIT ${limit})
         SELECT {columns}, s.rank::float8, s.repo_id, s.id
         FROM scored s JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id {joins}
         ORDER BY s.rank DESC, {tie} LIMIT ${limit}",
        columns = q.columns,
        table = q.table,
        joins = q.joins,
        tie = q.tie,
        k1 = BM25_K1,
        b = BM25_B,
    );
    c.query(&sql, &crate::filters::refs(&params))
}
