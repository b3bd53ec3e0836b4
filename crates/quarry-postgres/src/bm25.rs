//! BM25 in SQL: the embedded store ranks with FTS5's `bm25()`, and PostgreSQL has no such
//! function (`ts_rank_cd` has no inverse document frequency, and ranked sympy's files
//! differently: docs/POSTGRES.md). Written as plain SQL over quarry's own posting lists
//! (postings.rs) rather than as an extension, so that any PostgreSQL, and Citus, runs it.
//!
//! Only the best candidates are scored (MaxScore, Turtle and Flood 1995): every term's IDF is
//! known before any row is read (term_counts.rs), so is the most a term can add to a row's
//! score (`idf · (k1 + 1)`, times the query's repeats). Rows holding the rarest terms are
//! the candidates, each scored by every term; when the terms left out could together add
//! less than the last of the top scores, no row holding only those can enter it, and the
//! answer is exact without them. A common word's list (~240,000 entries at a million chunks)
//! is then only joined to the candidates the rare words found. Rows themselves are read only
//! for the filters, for phrases and for the answer's columns.

use tokio_postgres::Row;

use crate::connection::{PgError, Queries};
use crate::filters::Params;
use crate::{postings, term_counts};

/// FTS5's BM25 constants (SQLite's `fts5_aux.c`), so both stores weigh a term alike.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// The first pass takes the rows of the rarest terms as candidates until about this many
/// (more only when the rarest term alone holds more): most short queries end there.
pub(crate) const FIRST_PASS_ROWS: i64 = 20_000;

/// What to rank: rows of `table` (aliased `t`, with a `tsv` and an `n_tokens` column, its
/// totals in `fts_totals` and its words' lists in `fts_postings` under the table's name), joined
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
    /// Its lexeme when it is one word (its rows are in a posting list); none for a phrase.
    lexeme: Option<String>,
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
///   database (`fts_totals`) and every row containing it (its posting list's entries) — counted before the
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
    let (distinct, times): (Vec<String>, Vec<f64>) = quarry_core::tokens::counted_terms(q.terms)
        .into_iter()
        .map(|(term, n)| (term, n as f64))
        .unzip();
    let (counts, total_rows, total_tokens) = term_counts::counts(c, q.table, &distinct)?;
    let avgdl = (total_tokens / total_rows.max(1.0)).max(1e-9);
    let mut terms: Vec<(Term, bool)> = distinct
        .into_iter()
        .zip(counts)
        .zip(times)
        .filter(|((_, count), _)| count.docs > 0)
        .map(|((text, count), times)| {
            let n = count.docs as f64;
            let raw = ((total_rows - n + 0.5) / (n + 0.5)).ln();
            let term = Term {
                text,
                lexeme: count.lexeme,
                docs: count.docs,
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
    let first = scored(c, q, &terms, read, avgdl, push_filters)?;
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
    // be read, judged by them, are enough.
    while read < terms.len() && left_out(read) >= threshold {
        read += 1;
    }
    scored(c, q, &terms, read, avgdl, push_filters)
}

/// The top `q.limit` of the rows holding any of the first `read` terms (and passing the
/// filters), each scored by every term: a one-word term's share from its posting list
/// (postings.rs), a phrase's from the row's text vector. The rank is the third column from the
/// end, then the row's repo and id.
fn scored(
    c: &mut impl Queries,
    q: &Bm25,
    terms: &[Term],
    read: usize,
    avgdl: f64,
    push_filters: &dyn Fn(&mut String, &mut Params),
) -> Result<Vec<Row>, PgError> {
    // `ts_rank_cd` with a one-term query and no normalisation sums the weights of the term's
    // positions (each position is a cover of length one, worth its weight): a phrase's
    // field-weighted frequency. Its weights are {D, C, B, A}, each at most 1, so they are
    // scaled down here and the sum scaled back up.
    let [a, b, c_weight, d] = q.weights;
    let top = a.max(b).max(c_weight).max(d).max(f64::MIN_POSITIVE);
    let rank_weights: Vec<f32> = [d, c_weight, b, a]
        .iter()
        .map(|w| (w / top) as f32)
        .collect();
    let texts: Vec<String> = terms.iter().map(|t| t.text.clone()).collect();
    let lexemes: Vec<Option<String>> = terms.iter().map(|t| t.lexeme.clone()).collect();
    let weights: Vec<f64> = terms.iter().map(|t| t.weight).collect();
    let first: Vec<bool> = (0..terms.len()).map(|i| i < read).collect();
    let mut params: Params = vec![
        Box::new(texts),
        Box::new(lexemes),
        Box::new(weights),
        Box::new(first),
        Box::new(q.weights.to_vec()),
        Box::new(avgdl),
        Box::new(rank_weights),
        Box::new(top),
    ];
    let mut filters = String::new();
    push_filters(&mut filters, &mut params);
    params.push(Box::new(q.limit as i64));
    let limit = params.len();
    // Rows are only read for the filters (when there are any), for phrases and for the top.
    let candidates = if filters.trim().is_empty() {
        "SELECT repo_id, id FROM found".to_string()
    } else {
        format!(
            "SELECT t.repo_id, t.id FROM found JOIN {table} t ON t.repo_id = found.repo_id
                 AND t.id = found.id {joins} WHERE true {filters}",
            table = q.table,
            joins = q.joins,
        )
    };
    // Each term's blocks looked up by the list's key (a lateral subquery kept whole: the
    // planner cannot misjudge the lists' size into scanning them all).
    let list = format!(
        "terms, LATERAL (SELECT p.repo_id, p.ids, p.stats FROM fts_postings p
                         WHERE p.repo_id = ANY(ARRAY(SELECT id FROM repos)) AND p.kind = '{}'
                           AND p.lexeme = terms.lexeme OFFSET 0) p",
        q.table
    );
    // A phrase's rows, found by the text vectors' index, each phrase its own branch so that
    // the planner sees its query (one over every phrase at once scanned the table).
    let mut phrases_found = String::new();
    let mut phrase_shares = String::new();
    for (k, term) in terms.iter().enumerate() {
        if term.lexeme.is_some() {
            continue;
        }
        let query = format!("phraseto_tsquery('quarry', $1[{}])", k + 1);
        if k < read {
            phrases_found.push_str(&format!(
                " UNION SELECT t.repo_id, t.id FROM {table} t WHERE t.tsv @@ {query}",
                table = q.table
            ));
        }
        phrase_shares.push_str(&format!(
            " UNION ALL
             SELECT t.repo_id, t.id, $3[{i}], ts_rank_cd($7::float4[], t.tsv, {query}, 0) * $8::float8,
                    t.n_tokens::float8
             FROM {table} t
             WHERE t.tsv @@ {query} AND (t.repo_id, t.id) IN (SELECT repo_id, id FROM candidates)",
            i = k + 1,
            table = q.table
        ));
    }
    let sql = format!(
        "-- Every parameter typed, whether the phrases below use these or not.
         WITH typed AS (SELECT $1::text[], $7::float4[], $8::float8),
         terms AS MATERIALIZED (
             SELECT t.lexeme, t.weight, t.first
             FROM unnest($2::text[], $3::float8[], $4::bool[]) AS t(lexeme, weight, first)
             WHERE t.lexeme IS NOT NULL),
         found AS MATERIALIZED (
             SELECT DISTINCT p.repo_id, x.id FROM {list}, unnest(p.ids) AS x(id) WHERE terms.first
             {phrases_found}),
         candidates AS MATERIALIZED ({candidates}),
         -- The lists read whole, each entry looked up in the candidates hashed. Written as
         -- NOT (… NOT IN …) (ids are never null, so it means IN) because PostgreSQL never
         -- turns NOT IN into a join: as a join, the planner, which cannot know how long a
         -- list or how many the candidates are, read every list once per candidate (16 s
         -- for one issue text over 33,000 commits).
         shares AS (
             SELECT l.repo_id, l.id, l.weight, {frequency} AS f, {tokens} AS len
             FROM (SELECT p.repo_id, x.id, terms.weight, x.stat
                   FROM {list}, unnest(p.ids, p.stats) AS x(id, stat)) l
             WHERE NOT ((l.repo_id, l.id) NOT IN (SELECT repo_id, id FROM candidates))
             {phrase_shares}),
         scored AS (
             SELECT repo_id, id,
                    sum(weight * f * ({k1} + 1) / (f + {k1} * (1 - {b} + {b} * len / $6::float8))) AS rank
             FROM shares
             GROUP BY repo_id, id
             ORDER BY rank DESC, id LIMIT ${limit})
         SELECT {columns}, s.rank::float8, s.repo_id, s.id
         FROM scored s JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id {joins}
         ORDER BY s.rank DESC, {tie} LIMIT ${limit}",
        frequency = postings::frequency("l.stat", "$5::float8[]"),
        tokens = postings::row_tokens("l.stat"),
        columns = q.columns,
        table = q.table,
        joins = q.joins,
        tie = q.tie,
        k1 = BM25_K1,
        b = BM25_B,
    );
    c.query(&sql, &crate::filters::refs(&params))
}
