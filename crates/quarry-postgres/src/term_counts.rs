//! How many rows of each kind (chunks, files, commits) hold each lexeme, per repo: BM25's
//! document frequencies, kept by the transaction that writes or removes the rows. With them a
//! query knows every term's IDF before it reads a row, so ranking can start from its rarest
//! terms and stop once the common ones cannot change the top results (bm25.rs); counting them
//! at query time read every row holding a common word (~240,000 at a million chunks).
//!
//! Keyed `(repo_id, kind, lexeme)`, as every table here leads with its repo (Citus distributes
//! by it): a batch's counts land in its own repo's part of the index, and two repos written at
//! once never touch one row. A query looks a lexeme up in every repo (the IDF is over the whole
//! database, as FTS5's is over its table): one index probe per repo and term. Pages are left
//! a fifth empty so that a count's update stays on its page (no index entry to add).

use anyhow::Result;

use crate::connection::{PgTransaction, Queries};

/// Runs `insert` (an `INSERT INTO {kind} … ` for repo `$1`, without `RETURNING`) and adds the
/// lexemes of the rows it wrote to `kind`'s counts, in one statement.
pub(crate) fn insert_counted(
    tx: &mut PgTransaction,
    kind: &str,
    insert: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<()> {
    tx.execute(
        &format!(
            "WITH written AS ({insert} RETURNING tsv)
             INSERT INTO fts_terms(kind, lexeme, repo_id, docs)
             SELECT '{kind}', u.lexeme, $1, count(*) FROM written, unnest(written.tsv) u
             GROUP BY u.lexeme ORDER BY u.lexeme
             ON CONFLICT (repo_id, kind, lexeme) DO UPDATE SET docs = fts_terms.docs + excluded.docs"
        ),
        params,
    )?;
    Ok(())
}

/// Runs `delete` (a `DELETE FROM {kind} …` in repo `$1`, without `RETURNING`) and takes the
/// lexemes of the rows it removed off `kind`'s counts, in one statement. A count that reaches
/// zero stays (a zero adds nothing to a sum; the word may come back).
pub(crate) fn delete_counted(
    tx: &mut PgTransaction,
    kind: &str,
    delete: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<()> {
    tx.execute(
        &format!(
            "WITH removed AS ({delete} RETURNING tsv)
             UPDATE fts_terms f SET docs = f.docs - g.docs
             FROM (SELECT u.lexeme, count(*) AS docs FROM removed, unnest(removed.tsv) u
                   GROUP BY u.lexeme) g
             WHERE f.kind = '{kind}' AND f.repo_id = $1 AND f.lexeme = g.lexeme"
        ),
        params,
    )?;
    Ok(())
}

/// The migration that creates the counts and fills them from the rows already stored.
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

/// The document counts of `terms` (as given to `phraseto_tsquery`) in `table`, over every
/// repo: a one-word term from the counts, a phrase (several lexemes, or one repeated) by
/// counting the rows that hold it (a phrase is rarer than its rarest word, so this reads few).
/// Also the table's rows and tokens (`fts_totals`).
pub(crate) fn counts(
    c: &mut impl Queries,
    table: &str,
    terms: &[String],
) -> Result<(Vec<i64>, f64, f64), crate::connection::PgError> {
    let rows = c.query(
        &format!(
            "WITH t AS (SELECT t.i, t.term, phraseto_tsquery('quarry', t.term) AS query
                        FROM unnest($1::text[]) WITH ORDINALITY AS t(term, i))
             SELECT (CASE numnode(t.query)
                 WHEN 0 THEN 0
                 WHEN 1 THEN (SELECT coalesce(sum(f.docs), 0) FROM fts_terms f
                              WHERE f.repo_id = ANY(ARRAY(SELECT id FROM repos)) AND f.kind = '{table}'
                                AND f.lexeme = (SELECT lexeme FROM unnest(to_tsvector('quarry', t.term)) LIMIT 1))
                 ELSE (SELECT count(*) FROM {table} x WHERE x.tsv @@ t.query) END)::int8,
                 (SELECT coalesce(sum(docs), 0) FROM fts_totals WHERE kind = '{table}')::float8,
                 (SELECT coalesce(sum(tokens), 0) FROM fts_totals WHERE kind = '{table}')::float8
             FROM t ORDER BY t.i"
        ),
        &[&terms],
    )?;
    let (docs, tokens) = rows
        .first()
        .map(|r| (r.get(1), r.get(2)))
        .unwrap_or((0.0, 0.0));
    Ok((rows.iter().map(|r| r.get(0)).collect(), docs, tokens))
}
