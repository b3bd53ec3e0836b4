//! BM25 in SQL: the embedded store ranks with FTS5's `bm25()`, and PostgreSQL has no such
//! function (`ts_rank_cd` has no inverse document frequency, and ranked sympy's files
//! differently: docs/POSTGRES.md). Written as plain SQL over the stored text vectors rather
//! than as an extension, so that any PostgreSQL, and Citus, runs it.

use crate::read::Params;

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
}

/// The full-text query behind chunk, file and commit search: `push_filters` appends its
/// conditions (`AND …`, numbered after the parameters already bound); the rank is the last
/// column. Ranked by BM25 as the embedded store's FTS5 computes it, so the two stores order
/// the same candidates alike (docs/POSTGRES.md measures how closely):
///
/// - each distinct term of the query is a phrase that a row matches or not;
/// - a term's IDF is `ln((N - n + 0.5) / (n + 0.5))` (at least 1e-6), over every row of the
///   database (`fts_totals`) and every row containing it — counted before the repo, language
///   and path filters, as FTS5 counts before the join that applies them;
/// - its frequency in a row is the field-weighted count of its positions; a several-word term
///   counts as its rarest word;
/// - a row's length is its token count (`n_tokens`), against the average over all rows.
pub(crate) fn ranked(
    q: &Bm25,
    push_filters: impl FnOnce(&mut String, &mut Params),
) -> (String, Params) {
    let mut seen = std::collections::HashSet::new();
    let terms: Vec<String> = q
        .terms
        .iter()
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect();
    let matched = (1..=terms.len())
        .map(|k| format!("phraseto_tsquery('quarry', $1[{k}])"))
        .collect::<Vec<_>>()
        .join(" || ");
    let [a, b, c, d] = q.weights;
    let mut params: Params = vec![
        Box::new(terms),
        Box::new(a),
        Box::new(b),
        Box::new(c),
        Box::new(d),
    ];
    let mut filters = String::new();
    push_filters(&mut filters, &mut params);
    params.push(Box::new(q.limit as i64));
    let limit = params.len();
    let sql = format!(
        "WITH terms AS MATERIALIZED (
             SELECT t.i, phraseto_tsquery('quarry', t.term) AS query,
                    tsvector_to_array(to_tsvector('quarry', t.term)) AS lexemes
             FROM unnest($1::text[]) WITH ORDINALITY AS t(term, i)),
         candidates AS MATERIALIZED (
             SELECT t.repo_id, t.id, t.tsv, t.n_tokens, (true {filters}) AS kept
             FROM {table} t {joins}
             WHERE t.tsv @@ ({matched})),
         totals AS (
             SELECT coalesce(sum(docs), 0)::float8 AS docs,
                    greatest(coalesce(sum(tokens), 0)::float8 / greatest(sum(docs), 1), 1e-9) AS avgdl
             FROM fts_totals WHERE kind = '{table}'),
         idf AS (
             SELECT terms.i, greatest(ln((totals.docs - count(*) + 0.5) / (count(*) + 0.5)), 1e-6) AS idf
             FROM terms JOIN candidates ON candidates.tsv @@ terms.query, totals
             GROUP BY terms.i, totals.docs),
         lexeme_tf AS (
             SELECT c.repo_id, c.id, c.n_tokens, u.lexeme,
                    sum(CASE w WHEN 'A' THEN $2::float8 WHEN 'B' THEN $3::float8
                               WHEN 'C' THEN $4::float8 ELSE $5::float8 END) AS f
             FROM candidates c, unnest(c.tsv) u, unnest(u.weights) w
             WHERE c.kept AND u.lexeme = ANY(ARRAY(SELECT unnest(lexemes) FROM terms))
             GROUP BY c.repo_id, c.id, c.n_tokens, u.lexeme),
         term_tf AS (
             SELECT lt.repo_id, lt.id, lt.n_tokens, terms.i, min(lt.f) AS f
             FROM terms, unnest(terms.lexemes) l JOIN lexeme_tf lt ON lt.lexeme = l
             GROUP BY lt.repo_id, lt.id, lt.n_tokens, terms.i),
         scored AS (
             SELECT tt.repo_id, tt.id,
                    sum(idf.idf * tt.f * ({k1} + 1)
                        / (tt.f + {k1} * (1 - {b} + {b} * tt.n_tokens / totals.avgdl))) AS rank
             FROM term_tf tt JOIN idf USING (i), totals
             GROUP BY tt.repo_id, tt.id)
         SELECT {columns}, s.rank::float8
         FROM scored s JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id {joins}
         ORDER BY s.rank DESC, {tie} LIMIT ${limit}",
        columns = q.columns,
        table = q.table,
        joins = q.joins,
        tie = q.tie,
        k1 = BM25_K1,
        b = BM25_B,
    );
    (sql, params)
}
