//! Posting lists: for each lexeme of each kind (chunks, files, commits) in each repo, the rows
//! holding it, with what BM25 needs of each (how many of its positions lie in each field, and
//! the row's token count), packed into arrays. Ranking sums a term's share over its list
//! without reading a row (bm25.rs): reading and decompressing every row's text vector cost
//! ~10 µs a row, an entry of a list costs well under one. PostgreSQL's GIN index on the text
//! vectors knows which rows hold a lexeme, but not how often, so it cannot rank.
//!
//! A list is stored as blocks (rows of `fts_postings`), each written once by the statement that
//! wrote its rows; a block holding fewer than [`SMALL_BLOCK`] entries is merged into the next
//! write's block for the same lexeme (so re-indexing one file at a time leaves a few blocks per
//! lexeme, not one per write), a larger one stays as written until rows in it are removed.
//! A lexeme's document count (BM25's IDF, term_counts.rs) is the sum of its blocks' `entries`.
//! Blocks lead with their repo, as every table here (Citus distributes by it): two repos
//! written at once never touch one block. Each block carries its lowest and highest row id,
//! so that removing rows opens only the blocks that may hold them.
//!
//! Hand-written rather than an extension (RUM, pg_search) so that any PostgreSQL, managed or
//! Citus, runs it: those extensions are not on the package registries quarry installs from.

use std::collections::HashMap;

use anyhow::Result;
use fallible_iterator::FallibleIterator;
use postgres_protocol::types::{array_from_sql, ArrayValues};
use tokio_postgres::types::{FromSql, Type};

use crate::connection::{PgTransaction, Queries};
use crate::copy_rows::{array_literal, copy, row};
use crate::text_vector::{Lexicon, NewEntries};

/// A block with fewer entries than this is merged into the next block written for its lexeme.
const SMALL_BLOCK: i32 = 128;

/// An entry's row token count and position counts per field, packed into one integer (one
/// array to store and unnest, not five): the token count above bit 36, then the positions
/// weighted A, B, C and D, 9 bits each (a text vector keeps at most 256 positions per lexeme).
/// Of the row `c` (with `n_tokens`) and its text vector's entry `u` (an `unnest(tsv)` row). A
/// macro, so that the migration below is one literal; `text_vector::pack` is the same in quarry.
macro_rules! packed {
    () => {
        "((least(c.n_tokens, 134217727)::int8 << 36)
          | (cardinality(array_positions(u.weights, 'A'))::int8 << 27)
          | (cardinality(array_positions(u.weights, 'B'))::int8 << 18)
          | (cardinality(array_positions(u.weights, 'C'))::int8 << 9)
          | cardinality(array_positions(u.weights, 'D'))::int8)"
    };
}

/// A list's `ids` or `stats` (a `bigint[]`) read where it lies in the row's buffer and walked
/// without being copied into a `Vec` (an issue text's lists hold millions of entries, and the
/// copies cost more than the reading). Checked once, without walking it: a one-dimensional
/// array of `bigint` without nulls, as long as its elements need (each a 4-byte length and 8
/// bytes).
pub(crate) struct Int8s<'a>(ArrayValues<'a>);

impl<'a> FromSql<'a> for Int8s<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let array = array_from_sql(raw)?;
        if array.element_type() != Type::INT8.oid() || array.dimensions().count()? > 1 {
            return Err("a posting list that is not a bigint[]".into());
        }
        let dimension = array.dimensions().next()?;
        let elements = dimension.map_or(0, |d| d.len.max(0) as usize);
        let header = 12 + 8 * usize::from(dimension.is_some());
        if array.has_nulls() || raw.len() != header + 12 * elements {
            return Err("a posting list with a null or malformed entry".into());
        }
        Ok(Int8s(array.values()))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::INT8_ARRAY
    }
}

impl Iterator for Int8s<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        match self.0.next() {
            Ok(Some(Some(bytes))) => Some(i64::from_be_bytes(bytes.try_into().ok()?)),
            _ => None,
        }
    }
}

/// A batch's new entries of one kind, one list per lexeme with the number of the block it
/// becomes, and the rows and tokens they add to the totals: made ready before the batch's
/// transaction (write.rs).
pub(crate) struct Staged {
    lists: Vec<StagedList>,
    rows: i64,
    tokens: i64,
}

struct StagedList {
    lexeme: String,
    block: i64,
    ids: Vec<i64>,
    stats: Vec<i64>,
}

/// `new` with a block number from `blocks` for each lexeme (`new.lexemes()` of them).
pub(crate) fn staged(
    new: NewEntries,
    lexicon: &Lexicon,
    blocks: &mut impl Iterator<Item = i64>,
) -> Staged {
    let (rows, tokens) = (new.rows, new.tokens);
    let lists = new
        .into_lists()
        .map(|(lexeme, ids, stats)| StagedList {
            lexeme: lexicon.lexeme(lexeme).to_string(),
            block: blocks.next().unwrap_or_default(),
            ids,
            stats,
        })
        .collect();
    Staged {
        lists,
        rows,
        tokens,
    }
}

/// `n` numbers for new blocks.
pub(crate) fn block_numbers(c: &mut impl Queries, n: usize) -> Result<Vec<i64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    Ok(c.query(
        "SELECT nextval('fts_blocks') FROM generate_series(1, $1::bigint)",
        &[&(n as i64)],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

/// Adds a batch's new rows of kind `kind` in `repo` to their lexemes' lists, and their rows
/// and tokens to the kind's totals. Each lexeme's small blocks are taken out (returned to
/// quarry, which adds their entries to the lexeme's new block) and the new blocks COPYed in.
/// The blocks are looked up through the list's key in a lateral subquery kept whole
/// (`OFFSET 0`): flattened, the planner misjudged a freshly written table's size and scanned
/// every block of the repo once per lexeme (seconds a batch).
pub(crate) fn write(tx: &mut PgTransaction, repo: i64, kind: &str, mut new: Staged) -> Result<()> {
    if new.rows == 0 {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO fts_totals(repo_id, kind, docs, tokens) VALUES ($1, $2, $3, $4)
         ON CONFLICT (repo_id, kind) DO UPDATE
         SET docs = fts_totals.docs + excluded.docs, tokens = fts_totals.tokens + excluded.tokens",
        &[&repo, &kind, &new.rows, &new.tokens],
    )?;
    let lexemes: Vec<&str> = new.lists.iter().map(|l| l.lexeme.as_str()).collect();
    let merged = tx.query(
        &format!(
            "DELETE FROM fts_postings p WHERE p.ctid = ANY(ARRAY(
                 SELECT s.ctid FROM unnest($2::text[]) l(lexeme),
                 LATERAL (SELECT s.ctid FROM fts_postings s
                          WHERE s.repo_id = $1 AND s.kind = '{kind}' AND s.lexeme = l.lexeme
                            AND s.entries < {SMALL_BLOCK} OFFSET 0) s))
             RETURNING p.lexeme, p.ids, p.stats"
        ),
        &[&repo, &lexemes],
    )?;
    let index: HashMap<&str, usize> = lexemes.iter().enumerate().map(|(i, l)| (*l, i)).collect();
    let merged: Vec<(usize, Vec<i64>, Vec<i64>)> = merged
        .iter()
        .filter_map(|r| Some((*index.get(r.get::<_, &str>(0))?, r.get(1), r.get(2))))
        .collect();
    for (i, ids, stats) in merged {
        new.lists[i].ids.extend(ids);
        new.lists[i].stats.extend(stats);
    }
    let mut data = Vec::new();
    let repo_text = repo.to_string();
    for list in &new.lists {
        let lo = list.ids.iter().min().copied().unwrap_or_default();
        let hi = list.ids.iter().max().copied().unwrap_or_default();
        row(
            &mut data,
            &[
                Some(&repo_text),
                Some(kind),
                Some(&list.lexeme),
                Some(&list.block.to_string()),
                Some(&list.ids.len().to_string()),
                Some(&lo.to_string()),
                Some(&hi.to_string()),
                Some(&array_literal(&list.ids)),
                Some(&array_literal(&list.stats)),
            ],
        );
    }
    copy(
        tx,
        "COPY fts_postings(repo_id, kind, lexeme, block, entries, lo, hi, ids, stats) FROM STDIN",
        data,
    )
}

/// The rest of a statement (common table expressions, then the `UPDATE`) that takes the rows
/// of `changed` (removed by a statement of kind `kind` in repo `$1`) out of their lexemes'
/// lists. A block left empty stays until a write merges it.
pub(crate) fn removed(kind: &str) -> String {
    format!(
        "entries AS (SELECT u.lexeme, c.id FROM changed c, unnest(c.tsv) u),
         gone AS (
             SELECT lexeme, array_agg(id) AS ids, min(id) AS lo, max(id) AS hi
             FROM entries GROUP BY lexeme)
         UPDATE fts_postings p SET (entries, ids, stats) = (k.entries, k.ids, k.stats)
         FROM gone g,
              LATERAL (SELECT s.ctid, s.ids, s.stats FROM fts_postings s
                       WHERE s.repo_id = $1 AND s.kind = '{kind}' AND s.lexeme = g.lexeme
                         AND s.lo <= g.hi AND s.hi >= g.lo AND s.ids && g.ids OFFSET 0) s,
              LATERAL (SELECT count(*)::int4 AS entries,
                              coalesce(array_agg(x.id ORDER BY x.o), '{{}}') AS ids,
                              coalesce(array_agg(x.stat ORDER BY x.o), '{{}}') AS stats
                       FROM unnest(s.ids, s.stats) WITH ORDINALITY x(id, stat, o)
                       WHERE x.id <> ALL(g.ids)) k
         WHERE p.ctid = s.ctid"
    )
}

/// The entries the lists should hold for the rows of one kind (the check below).
macro_rules! expected {
    ($kind:literal) => {
        concat!(
            "SELECT c.repo_id, '",
            $kind,
            "' AS kind, u.lexeme, c.id, ",
            packed!(),
            " AS stat FROM ",
            $kind,
            " c, unnest(c.tsv) u"
        )
    };
}

/// How many entries the lists and the rows' text vectors disagree on, both ways.
pub(crate) const MISMATCHES: &str = concat!(
    "WITH stored AS (SELECT p.repo_id, p.kind, p.lexeme, x.id, x.stat
                     FROM fts_postings p, unnest(p.ids, p.stats) x(id, stat)),
     expected AS (",
    expected!("chunks"),
    " UNION ALL ",
    expected!("files"),
    " UNION ALL ",
    expected!("commits"),
    ")
     SELECT count(*) FROM ((SELECT * FROM stored EXCEPT ALL SELECT * FROM expected)
                           UNION ALL (SELECT * FROM expected EXCEPT ALL SELECT * FROM stored)) d"
);

/// Fills the lists of one kind from the rows already stored (the migration below).
macro_rules! fill {
    ($kind:literal) => {
        concat!(
            "INSERT INTO fts_postings
                 SELECT e.repo_id, e.kind, e.lexeme, nextval('fts_blocks'), count(*), min(e.id),
                        max(e.id), array_agg(e.id), array_agg(e.stat)
                 FROM (",
            expected!($kind),
            ") e GROUP BY e.repo_id, e.kind, e.lexeme;"
        )
    };
}

/// The migration that creates the lists and fills them from the rows already stored.
pub(crate) const MIGRATION: &str = concat!(
    "CREATE SEQUENCE fts_blocks;
     -- A lexeme's document count is its blocks' entries summed: the counts of schema 7 go.
     DROP TABLE IF EXISTS fts_terms;
     CREATE TABLE fts_postings(
         repo_id bigint NOT NULL,
         kind text NOT NULL,
         lexeme text NOT NULL,
         block bigint NOT NULL,
         entries integer NOT NULL,
         lo bigint NOT NULL,
         hi bigint NOT NULL,
         ids bigint[] NOT NULL,
         stats bigint[] NOT NULL,
         PRIMARY KEY (repo_id, kind, lexeme, block)
     );",
    fill!("chunks"),
    fill!("files"),
    fill!("commits"),
);

#[cfg(test)]
mod tests {
    use super::Int8s;
    use tokio_postgres::types::{FromSql, ToSql, Type};

    fn sent(values: &[i64]) -> Vec<u8> {
        let mut buf = bytes::BytesMut::new();
        values.to_vec().to_sql(&Type::INT8_ARRAY, &mut buf).unwrap();
        buf.to_vec()
    }

    #[test]
    fn a_list_is_read_in_place_and_a_cut_one_is_refused() {
        for values in [vec![], vec![7], vec![1, -2, i64::MAX, 1 << 40]] {
            let raw = sent(&values);
            let read: Vec<i64> = Int8s::from_sql(&Type::INT8_ARRAY, &raw).unwrap().collect();
            assert_eq!(read, values);
        }
        let raw = sent(&[1, 2, 3]);
        assert!(Int8s::from_sql(&Type::INT8_ARRAY, &raw[..raw.len() - 1]).is_err());
        let nulls = {
            let mut buf = bytes::BytesMut::new();
            vec![Some(1i64), None]
                .to_sql(&Type::INT8_ARRAY, &mut buf)
                .unwrap();
            buf.to_vec()
        };
        assert!(Int8s::from_sql(&Type::INT8_ARRAY, &nulls).is_err());
    }
}
