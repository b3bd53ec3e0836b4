//! BM25 in SQL: the embedded store ranks with FTS5's `bm25()`, and PostgreSQL has no such
//! function (`ts_rank_cd` has no inverse document frequency, and ranked sympy's files
//! differently: docs/POSTGRES.md). Written as plain SQL over the stored text vectors rather
//! than as an extension, so that any PostgreSQL, and Citus, runs it.

use crate::filters::Params;

/// FTS5's BM25 constants (SQLite's `fts5_aux.c`), so both stores weigh a term alike.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// What to rank: rows of `table` (aliased `t`, with a `tsv` and an `n_tokens` column, its
/// totals in `fts_totals` under the table's name), joined by `joins` for the filters and for
/// `columns`, the first `limit` best first, ties broken by `tie`.
pub(crate) struct Bm25<'a> {
    pub terms: &'a [String],
    /// The weights of the fields stored as A, B, C and D.
    pub weights: [f64; 4],
    pub table: &'a str,
    pub joins: &'a str,
    pub columns: &'a str,
    pub tie: &'a str,
    pub limit: usize,
    /// Leave out the terms with no weight (in at least half of all rows: the IDF above is
    /// floored), unless every term is such: a row holding only them is not an answer. The
    /// embedded store's commit search does the same (it does not read their posting lists).
    pub only_weighing_terms: bool,
}

/// The full-text query behind chunk, file and commit search: `push_filters` appends its
/// conditions (`AND …`, numbered after the parameters already bound); the rank is the last
/// column. Ranked by BM25 as the embedded store's FTS5 computes it, so the two stores order
/// the same candidates alike (docs/POSTGRES.md measures how closely):
///
/// - each distinct term of the query is a phrase that a row matches or not, its score counted
///   as many times as the query names it (FTS5 scores a repeated phrase again);
/// - a term's IDF is `ln((N - n + 0.5) / (n + 0.5))` (at least 1e-6), over every row of the
///   database (`fts_totals`) and every row containing it — counted before the repo, language
///   and path filters, as FTS5 counts before the join that applies them;
/// - its frequency in a row is the field-weighted count of its positions (a several-word term:
///   of its occurrences as a phrase);
/// - a row's length is its token count (`n_tokens`), against the average over all rows.
pub(crate) fn ranked(
    q: &Bm25,
    push_filters: impl FnOnce(&mut String, &mut Params),
) -> (String, Params) {
    // A term asked for twice counts twice, as a phrase repeated in an FTS5 query does (an
    // issue's title is asked for three times): read once, its score multiplied.
    let mut terms: Vec<String> = Vec::new();
    let mut times: Vec<f64> = Vec::new();
    for term in q.terms {
        match terms.iter().position(|t| t == term) {
            Some(i) => times[i] += 1.0,
            None => {
                terms.push(term.clone());
                times.push(1.0);
            }
        }
    }
    let matched = (1..=terms.len())
        .map(|k| format!("phraseto_tsquery('quarry', $1[{k}])"))
        .collect::<Vec<_>>()
        .join(" || ");
    // `ts_rank_cd` with a one-term query and no normalisation sums the weights of the term's
    // positions (each position is a cover of length one, worth its weight): the field-weighted
    // term frequency, found by binary search in the text vector. Its weights are {D, C, B, A},
    // each at most 1, so they are scaled down here and the sum scaled back up.
    let [a, b, c, d] = q.weights;
    let top = a.max(b).max(c).max(d).max(f64::MIN_POSITIVE);
    let rank_weights: Vec<f32> = [d, c, b, a].iter().map(|w| (w / top) as f32).collect();
    let mut params: Params = vec![
        Box::new(terms),
        Box::new(rank_weights),
        Box::new(top),
        Box::new(times),
    ];
    let mut filters = String::new();
    push_filters(&mut filters, &mut params);
    params.push(Box::new(q.limit as i64));
    let limit = params.len();
    let sql = format!(
        "WITH terms AS MATERIALIZED (
             SELECT t.i, phraseto_tsquery('quarry', t.term) AS query, ($4::float8[])[t.i] AS times
             FROM unnest($1::text[]) WITH ORDINALITY AS t(term, i)),
         candidates AS MATERIALIZED (
             -- `|| ''`: the text vector decompressed once here, not by every term's call below
             -- (a stored vector stays compressed in the CTE; 40% of a long query's time).
             SELECT t.repo_id, t.id, t.tsv || ''::tsvector AS tsv, t.n_tokens,
                    (true {filters}) AS kept
             FROM {table} t {joins}
             WHERE t.tsv @@ ({matched})),
         totals AS (
             SELECT coalesce(sum(docs), 0)::float8 AS docs,
                    greatest(coalesce(sum(tokens), 0)::float8 / greatest(sum(docs), 1), 1e-9) AS avgdl
             FROM fts_totals WHERE kind = '{table}'),
         tf AS MATERIALIZED (
             SELECT c.repo_id, c.id, c.n_tokens, c.kept, terms.i, terms.times, x.f
             -- Every row containing the term counts for its IDF (as in FTS5), even where the
             -- term is only in fields weighted 0.
             FROM candidates c JOIN terms ON c.tsv @@ terms.query
             CROSS JOIN LATERAL (
                 SELECT ts_rank_cd($2::float4[], c.tsv, terms.query, 0) * $3::float8 AS f) x),
         idf AS MATERIALIZED (
             SELECT i, greatest(raw, 1e-6) AS idf, raw > 0 AS weighs
             FROM (SELECT tf.i, ln((totals.docs - count(*) + 0.5) / (count(*) + 0.5)) AS raw
                   FROM tf, totals GROUP BY tf.i, totals.docs) counted),
         scored AS (
             SELECT tf.repo_id, tf.id,
                    sum(tf.times * idf.idf * tf.f * ({k1} + 1)
                        / (tf.f + {k1} * (1 - {b} + {b} * tf.n_tokens / totals.avgdl))) AS rank
             FROM tf JOIN idf USING (i), totals
             WHERE tf.kept AND ({every_term})
             GROUP BY tf.repo_id, tf.id
             ORDER BY rank DESC, tf.id LIMIT ${limit})
         SELECT {columns}, s.rank::float8
         FROM scored s JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id {joins}
         ORDER BY s.rank DESC, {tie} LIMIT ${limit}",
        columns = q.columns,
        table = q.table,
        joins = q.joins,
        tie = q.tie,
        k1 = BM25_K1,
        b = BM25_B,
        every_term = if q.only_weighing_terms {
            "idf.weighs OR NOT EXISTS (SELECT 1 FROM idf WHERE idf.weighs)"
        } else {
            "true"
        },
    );
    (sql, params)
}
