//! How many rows of each kind (chunks, files, commits) hold each lexeme, per repo: BM25's
//! document frequencies, the entries of the lexeme's posting list (postings.rs), kept with
//! the rows' and tokens' totals by the statement that writes or removes the rows. With them a
//! query knows every term's IDF before it reads a row or a list (bm25.rs); counting them at
//! query time read every row holding a common word (~240,000 at a million chunks).
//!
//! A query looks a lexeme up in every repo (the IDF is over the whole database, as FTS5's is
//! over its table): one index probe per repo and term, summing the blocks' entry counts (kept
//! in the row, so no list is read).

use anyhow::Result;

use crate::connection::{PgTransaction, Queries};
use crate::postings;

/// Runs `statement` (a `DELETE FROM {kind} …` in repo `$1`, without `RETURNING`) and takes
/// the rows it removed out of BM25's statistics in the same statement: the table's rows and
/// tokens (`fts_totals`) and each lexeme's posting list (postings.rs), whose entries are the
/// lexeme's document count. (Rows written are added by quarry, postings::write.)
pub(crate) fn removed(
    tx: &mut PgTransaction,
    kind: &str,
    statement: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<()> {
    tx.execute(
        &format!(
            "WITH changed AS ({statement} RETURNING id, tsv, n_tokens),
             totals AS (
                 INSERT INTO fts_totals(repo_id, kind, docs, tokens)
                 SELECT $1, '{kind}', -count(*), -coalesce(sum(n_tokens), 0) FROM changed
                 HAVING count(*) > 0
                 ON CONFLICT (repo_id, kind) DO UPDATE
                 SET docs = fts_totals.docs + excluded.docs,
                     tokens = fts_totals.tokens + excluded.tokens),
             {postings}",
            postings = postings::removed(kind)
        ),
        params,
    )?;
    Ok(())
}

/// The migration that created per-lexeme counts (schema 7; schema 8 replaced them with the
/// posting lists' entry counts).
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE fts_terms(
        kind text NOT NULL,
        lexeme text NOT NULL,
        repo_id bigint NOT NULL,
        docs bigint NOT NULL,
        PRIMARY KEY (repo_id, kind, lexeme)
    ) WITH (fillfactor = 80);
    INSERT INTO fts_terms
        SELECT 'chunks', u.lexeme, t.repo_id, count(*) FROM chunks t, unnest(t.tsv) u GROUP BY 2, 3;
    INSERT INTO fts_terms
        SELECT 'files', u.lexeme, t.repo_id, count(*) FROM files t, unnest(t.tsv) u GROUP BY 2, 3;
    INSERT INTO fts_terms
        SELECT 'commits', u.lexeme, t.repo_id, count(*) FROM commits t, unnest(t.tsv) u GROUP BY 2, 3;
"#;

/// A query term's document count and lexeme where it is one word; a phrase's lexemes.
pub(crate) struct TermCount {
    pub docs: i64,
    pub lexeme: Option<String>,
    /// A phrase's distinct lexemes (empty for a word, and for a term with none): the rows
    /// holding it hold all of them, and the phrase's rows are counted among those (bm25.rs).
    pub lexemes: Vec<String>,
}

/// The document counts of `terms` (as given to `phraseto_tsquery`) in `table`, over every
/// repo: a one-word term from the counts; a phrase (several lexemes, or one repeated) left
/// at 0 with its lexemes, to be counted by reading the rows that hold them all. Also the
/// table's rows and tokens (`fts_totals`).
pub(crate) fn counts(
    c: &mut impl Queries,
    table: &str,
    terms: &[String],
) -> Result<(Vec<TermCount>, f64, f64), crate::connection::PgError> {
    let rows = c.query(
        &format!(
            "WITH t AS (SELECT t.i, t.term, t.query,
                               CASE numnode(t.query) WHEN 1 THEN
                                   (SELECT lexeme FROM unnest(to_tsvector('quarry', t.term)) LIMIT 1)
                               END AS lexeme
                        FROM (SELECT t.i, t.term, phraseto_tsquery('quarry', t.term) AS query
                              FROM unnest($1::text[]) WITH ORDINALITY AS t(term, i)) t)
             SELECT (CASE
                 WHEN numnode(t.query) = 0 THEN 0
                 WHEN t.lexeme IS NOT NULL THEN (
                     SELECT coalesce(sum(p.entries), 0) FROM fts_postings p
                     WHERE p.repo_id = ANY(ARRAY(SELECT id FROM repos)) AND p.kind = '{table}'
                       AND p.lexeme = t.lexeme)
                 ELSE 0 END)::int8,
                 t.lexeme, totals.docs, totals.tokens,
                 CASE WHEN numnode(t.query) > 1 THEN
                     ARRAY(SELECT lexeme FROM unnest(to_tsvector('quarry', t.term)))
                 ELSE '{{}}'::text[] END
             FROM t, (SELECT coalesce(sum(docs), 0)::float8 AS docs,
                             coalesce(sum(tokens), 0)::float8 AS tokens
                      FROM fts_totals WHERE kind = '{table}') totals
             ORDER BY t.i"
        ),
        &[&terms],
    )?;
    let (docs, tokens) = rows
        .first()
        .map(|r| (r.get(2), r.get(3)))
        .unwrap_or((0.0, 0.0));
    let counts = rows
        .iter()
        .map(|r| TermCount {
            docs: r.get(0),
            lexeme: r.get(1),
            lexemes: r.get(4),
        })
        .collect();
    Ok((counts, docs, tokens))
}
