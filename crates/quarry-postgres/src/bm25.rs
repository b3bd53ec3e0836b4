//! BM25 over quarry's own posting lists: the embedded store ranks with FTS5's `bm25()`, and
//! PostgreSQL has no such function (`ts_rank_cd` has no inverse document frequency, and ranked
//! sympy's files differently: docs/POSTGRES.md). The lists (postings.rs) are plain rows, so any
//! PostgreSQL, and Citus, serves them; no extension is needed.
//!
//! The server finds, quarry scores. A query's one-word terms have their lists read whole, in
//! binary, and summed here: PostgreSQL's executor spent about a microsecond on each entry
//! (unnested, its counts unpacked, looked up among the candidates), sending one costs it a
//! twentieth of that, and quarry adds it to its row's score in a few nanoseconds. An issue text
//! names ~30 words, some of them in most rows, so this is what keeps it under a second at a
//! million chunks. Every term's IDF is known before any list is read (term_counts.rs).
//!
//! A phrase (a term of several lexemes, e.g. an identifier's parts) has no list: the rows
//! holding all its lexemes are found from theirs, and the server checks each for the phrase
//! and weighs it by `ts_rank_cd` on its text vector (~10 µs a row), which also counts the
//! phrase's rows for its IDF. Rows themselves are read only for phrases, the filters and the
//! answer's columns, best first.

use foldhash::HashMap;
use tokio_postgres::Row;

use crate::connection::{PgError, Queries};
use crate::filters::Params;
use crate::postings::Int8s;
use crate::scores::Scores;
use crate::{term_counts, text_vector};

/// FTS5's BM25 constants (SQLite's `fts5_aux.c`), so both stores weigh a term alike; commit
/// search sets its own `b` (`Bm25::b`), as the embedded store's does.
const BM25_K1: f64 = 1.2;
pub(crate) const FTS5_B: f64 = 0.75;

/// What to rank: rows of `table` (aliased `t`, with a `tsv` and an `n_tokens` column, its
/// totals in `fts_totals` and its words' lists in `fts_postings` under the table's name), joined
/// by `joins` for the filters and for `columns`, the first `limit` best first, ties broken by
/// `tie`.
pub(crate) struct Bm25<'a> {
    pub terms: &'a [String],
    /// The weights of the fields stored as A, B, C and D.
    pub weights: [f64; 4],
    /// BM25's length normalisation (`FTS5_B` but for commits).
    pub b: f64,
    pub table: &'a str,
    pub joins: &'a str,
    pub columns: &'a str,
    pub tie: &'a str,
    pub limit: usize,
    /// The repos searched (all when empty): only their lists are read. The filters say so
    /// again for the rows.
    pub repos: &'a [String],
    /// Leave out the terms with no weight (in at least half of all rows: the IDF below is
    /// floored), unless every term is such: a row holding only them is not an answer. The
    /// embedded store's commit search does the same (it does not read their posting lists).
    pub only_weighing_terms: bool,
}

/// A distinct term of the query with what it weighs.
struct Term {
    /// Its lexeme when it is one word (its rows are in a posting list); none for a phrase.
    lexeme: Option<String>,
    /// IDF times the number of times the query names it.
    weight: f64,
    /// A phrase's rows in the repos searched.
    rows: Vec<PhraseRow>,
}

/// A row holding a phrase: its field-weighted count of the phrase and its length.
struct PhraseRow {
    repo: i64,
    id: i64,
    frequency: f64,
    len: f64,
}

/// The ids of the repos searched, `param` their names (every repo when it is empty).
fn searched_repos(param: &str) -> String {
    format!(
        "ARRAY(SELECT id FROM repos WHERE cardinality({param}::text[]) = 0 OR name = ANY({param}::text[]))"
    )
}

/// The blocks of lexeme `l.lexeme`'s list of kind `table` in the repos whose ids are `repos`,
/// looked up by the list's key (a lateral subquery kept whole: the planner cannot misjudge
/// the lists' size into scanning them all).
fn list_blocks(table: &str, repos: &str) -> String {
    format!(
        "LATERAL (SELECT p.repo_id, p.lo, p.hi, p.entries, p.ids, p.stats FROM fts_postings p
                  WHERE p.repo_id = ANY({repos}) AND p.kind = '{table}'
                    AND p.lexeme = l.lexeme OFFSET 0) p"
    )
}

/// What BM25 needs to weigh a term's occurrences in a row.
struct Weighing {
    avgdl: f64,
    fields: [f64; 4],
    b: f64,
}

impl Weighing {
    /// A term's share of a row's score: its field-weighted frequency `f` in a row of `len`
    /// tokens, times its `weight` (the order of operations is the SQL's that came before).
    fn share(&self, weight: f64, f: f64, len: f64) -> f64 {
        weight * f * (BM25_K1 + 1.0) / (f + BM25_K1 * (1.0 - self.b + self.b * len / self.avgdl))
    }

    /// The share of a posting-list entry's packed counts (`text_vector::pack`).
    fn entry_share(&self, weight: f64, stat: i64) -> f64 {
        let (len, [a, b, c, d]) = text_vector::unpack(stat);
        let [wa, wb, wc, wd] = self.fields;
        let f = wa * a as f64 + wb * b as f64 + wc * c as f64 + wd * d as f64;
        self.share(weight, f, len as f64)
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
///
/// The top is the first `limit` rows passing the filters by rank, then by id; the answer is
/// those rows ordered by rank, then by `tie`.
pub(crate) fn ranked(
    c: &mut impl Queries,
    q: &Bm25,
    push_filters: &dyn Fn(&mut String, &mut Params),
) -> Result<Vec<Row>, PgError> {
    let (terms, weighing) = weighed_terms(c, q)?;
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = read_lists(c, q, &terms, &weighing)?;
    for phrase in &terms {
        for row in &phrase.rows {
            found.add(
                row.id,
                row.repo,
                weighing.share(phrase.weight, row.frequency, row.len),
            );
        }
    }
    top_rows(c, q, &found, push_filters)
}

/// The query's distinct terms that some row holds, with their weights (rarest first), and
/// the table's average row length.
fn weighed_terms(c: &mut impl Queries, q: &Bm25) -> Result<(Vec<Term>, Weighing), PgError> {
    // A term asked for twice counts twice, as a phrase repeated in an FTS5 query does (an
    // issue's title is asked for three times): read once, its score multiplied.
    let (distinct, times): (Vec<String>, Vec<f64>) = quarry_core::tokens::counted_terms(q.terms)
        .into_iter()
        .map(|(term, n)| (term, n as f64))
        .unzip();
    let (counts, total_rows, total_tokens) = term_counts::counts(c, q.table, &distinct)?;
    let weighing = Weighing {
        avgdl: (total_tokens / total_rows.max(1.0)).max(1e-9),
        fields: q.weights,
        b: q.b,
    };
    let mut terms: Vec<(Term, bool)> = Vec::new();
    for ((text, count), times) in distinct.into_iter().zip(counts).zip(times) {
        let (docs, rows) = if count.lexemes.is_empty() {
            (count.docs, Vec::new())
        } else {
            phrase_rows(c, q, &text, &count.lexemes, &weighing)?
        };
        if docs == 0 {
            continue;
        }
        let n = docs as f64;
        let raw = ((total_rows - n + 0.5) / (n + 0.5)).ln();
        let term = Term {
            lexeme: count.lexeme,
            weight: times * raw.max(1e-6),
            rows,
        };
        terms.push((term, raw > 0.0));
    }
    if q.only_weighing_terms && terms.iter().any(|(_, weighs)| *weighs) {
        terms.retain(|(_, weighs)| *weighs);
    }
    let mut terms: Vec<Term> = terms.into_iter().map(|(t, _)| t).collect();
    terms.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    Ok((terms, weighing))
}

/// The rows holding the one-word terms (in the repos searched), each scored by them: their
/// lists read whole and summed term by term in the order given (so that rows alike get
/// equal scores).
fn read_lists(
    c: &mut impl Queries,
    q: &Bm25,
    terms: &[Term],
    weighing: &Weighing,
) -> Result<Scores, PgError> {
    let lexemes: Vec<&str> = terms.iter().filter_map(|t| t.lexeme.as_deref()).collect();
    let weights: Vec<f64> = terms
        .iter()
        .filter(|t| t.lexeme.is_some())
        .map(|t| t.weight)
        .collect();
    let blocks = format!(
        "FROM unnest($1::text[]) WITH ORDINALITY AS l(lexeme, i), {}",
        list_blocks(q.table, &searched_repos("$2"))
    );
    let span = c.query_one(
        &format!("SELECT min(p.lo), max(p.hi), sum(p.entries)::int8 {blocks}"),
        &[&lexemes, &q.repos],
    )?;
    let mut found = match (span.get(0), span.get(1), span.get(2)) {
        (Some(lo), Some(hi), Some(entries)) => Scores::new(lo, hi, entries),
        _ => return Ok(Scores::new(0, 0, 0)),
    };
    // An issue text's lists hold millions of entries: each block is summed as it arrives.
    c.for_each_row(
        &format!("SELECT l.i::int4, p.repo_id, p.ids, p.stats {blocks} ORDER BY 1"),
        &[&lexemes, &q.repos],
        &mut |block| {
            let weight = weights[block.try_get::<_, i32>(0)? as usize - 1];
            let repo: i64 = block.try_get(1)?;
            let ids: Int8s = block.try_get(2)?;
            let stats: Int8s = block.try_get(3)?;
            let mut add = found.adder(repo);
            for (id, stat) in ids.zip(stats) {
                add(id, weighing.entry_share(weight, stat));
            }
            Ok(())
        },
    )?;
    Ok(found)
}

/// How many rows in the whole database hold the phrase `text` (its distinct `lexemes` given),
/// and those of them in the repos searched, weighed by `ts_rank_cd` on their text vectors.
/// The rows holding every lexeme are found from the lists (the rarest lexeme's first, the
/// others only narrowing it), then each is checked for the phrase by its key: the same rows
/// a GIN index on the text vectors would have rechecked, without the index's upkeep on every
/// write (docs/POSTGRES.md).
fn phrase_rows(
    c: &mut impl Queries,
    q: &Bm25,
    text: &str,
    lexemes: &[String],
    weighing: &Weighing,
) -> Result<(i64, Vec<PhraseRow>), PgError> {
    let mut holding: HashMap<i64, (i64, usize)> = HashMap::default();
    c.for_each_row(
        &format!(
            "WITH l AS (SELECT l.lexeme, row_number() OVER (ORDER BY (
                            SELECT coalesce(sum(p.entries), 0) FROM fts_postings p
                            WHERE p.repo_id = ANY(ARRAY(SELECT id FROM repos))
                              AND p.kind = '{table}' AND p.lexeme = l.lexeme), l.lexeme) AS i
                        FROM unnest($1::text[]) AS l(lexeme))
             SELECT l.i::int4, p.repo_id, p.ids FROM l, {blocks}
             ORDER BY 1",
            table = q.table,
            blocks = list_blocks(q.table, "ARRAY(SELECT id FROM repos)"),
        ),
        &[&lexemes],
        &mut |block| {
            let lexeme = block.try_get::<_, i32>(0)? as usize;
            let repo: i64 = block.try_get(1)?;
            let ids: Int8s = block.try_get(2)?;
            for id in ids {
                if lexeme == 1 {
                    holding.insert(id, (repo, 1));
                } else if let Some(seen) = holding.get_mut(&id) {
                    // Held by every lexeme so far, and now by this one.
                    if seen.1 == lexeme - 1 {
                        seen.1 = lexeme;
                    }
                }
            }
            Ok(())
        },
    )?;
    let (repos, ids): (Vec<i64>, Vec<i64>) = holding
        .into_iter()
        .filter(|(_, (_, seen))| *seen == lexemes.len())
        .map(|(id, (repo, _))| (repo, id))
        .unzip();
    if ids.is_empty() {
        return Ok((0, Vec::new()));
    }
    // `ts_rank_cd` with a one-term query and no normalisation sums the weights of the term's
    // positions (each position is a cover of length one, worth its weight): a phrase's
    // field-weighted frequency. Its weights are {D, C, B, A}, each at most 1, so they are
    // scaled down here and the sum scaled back up.
    let [a, b, c_weight, d] = weighing.fields;
    let top = a.max(b).max(c_weight).max(d).max(f64::MIN_POSITIVE);
    let rank_weights: Vec<f32> = [d, c_weight, b, a]
        .iter()
        .map(|w| (w / top) as f32)
        .collect();
    let query = "phraseto_tsquery('quarry', $1::text)";
    let rows = c.query(
        &format!(
            "SELECT t.repo_id, t.id, ts_rank_cd($2::float4[], t.tsv, {query}, 0) * $3::float8,
                    t.n_tokens::float8, t.repo_id = ANY({searched})
             FROM unnest($4::int8[], $5::int8[]) AS s(repo_id, id)
             JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id
             WHERE t.tsv @@ {query}",
            table = q.table,
            searched = searched_repos("$6"),
        ),
        &[&text, &rank_weights, &top, &repos, &ids, &q.repos],
    )?;
    let searched = rows
        .iter()
        .filter(|r| r.get::<_, bool>(4))
        .map(|r| PhraseRow {
            repo: r.get(0),
            id: r.get(1),
            frequency: r.get(2),
            len: r.get(3),
        })
        .collect();
    Ok((rows.len() as i64, searched))
}

/// The first `q.limit` rows of `found` that pass the filters, by rank then id, with their
/// columns, ordered by rank then `q.tie`. The best are tried first, more only when the
/// filters turn too many away.
fn top_rows(
    c: &mut impl Queries,
    q: &Bm25,
    found: &Scores,
    push_filters: &dyn Fn(&mut String, &mut Params),
) -> Result<Vec<Row>, PgError> {
    let mut params: Params = vec![
        Box::new(Vec::<i64>::new()),
        Box::new(Vec::<i64>::new()),
        Box::new(Vec::<f64>::new()),
    ];
    let mut filters = String::new();
    push_filters(&mut filters, &mut params);
    let filtered = !filters.trim().is_empty();
    params.push(Box::new(q.limit as i64));
    let limit = params.len();
    let sql = format!(
        "WITH kept AS MATERIALIZED (
             SELECT s.repo_id, s.id, s.rank
             FROM unnest($1::int8[], $2::int8[], $3::float8[]) WITH ORDINALITY
                  AS s(repo_id, id, rank, o)
             JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id {joins}
             WHERE true {filters}
             ORDER BY s.o LIMIT ${limit})
         SELECT {columns}, s.rank, s.repo_id, s.id
         FROM kept s JOIN {table} t ON t.repo_id = s.repo_id AND t.id = s.id {joins}
         ORDER BY s.rank DESC, {tie} LIMIT ${limit}",
        table = q.table,
        joins = q.joins,
        columns = q.columns,
        tie = q.tie,
    );
    let mut tried = if filtered { q.limit * 8 } else { q.limit };
    loop {
        let best = found.best(tried);
        let repos: Vec<i64> = best.iter().map(|(_, f)| f.repo).collect();
        let ids: Vec<i64> = best.iter().map(|(id, _)| *id).collect();
        let ranks: Vec<f64> = best.iter().map(|(_, f)| f.rank).collect();
        params[0] = Box::new(repos);
        params[1] = Box::new(ids);
        params[2] = Box::new(ranks);
        let top = c.query(&sql, &crate::filters::refs(&params))?;
        if top.len() >= q.limit || best.len() < tried {
            return Ok(top);
        }
        tried = tried.saturating_mul(8);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_entry_is_weighed_by_its_packed_counts() {
        let w = super::Weighing {
            avgdl: 10.0,
            fields: [4.0, 3.0, 1.0, 0.0],
            b: super::FTS5_B,
        };
        let stat = super::text_vector::pack(20, [1, 2, 3, 5]);
        assert_eq!(
            w.entry_share(2.0, stat),
            w.share(2.0, 4.0 + 6.0 + 3.0, 20.0)
        );
        assert_eq!(super::text_vector::unpack(stat), (20, [1, 2, 3, 5]));
    }
}
