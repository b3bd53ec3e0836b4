//! The k best rows of a full-text table for a query of many terms, without scoring every row
//! that holds any of them.
//!
//! An issue text is thirty-odd terms, and the commonest of them ("function", "return",
//! "value") are in most rows: at a million chunks an issue's OR matched nearly every row, and
//! scoring each one (about a microsecond: the FTS5 API per phrase, the row's length) was most
//! of the second the search took. A common term can add little to a row's score, however often
//! the row holds it (`weighted_bm25::most_added`: IDF × weight × (k1 + 1)). So the terms are
//! split, in the manner of MaxScore (Turtle and Flood, 1995): the rows visited are those holding
//! one of the *leading* terms, each scored with every term it holds, and a row holding only
//! *trailing* terms is left out when even all of them together could not lift it to the k-th
//! best score found. The rows and their scores are those of the plain query
//! (`tests::the_split_query_finds_the_rows_of_the_whole_one`).
//!
//! In FTS5 terms: `(L1 OR L2 …) AND (every term as before)`: the rows holding a leading term
//! match, and every term's matches in them are known to the scoring function, in the order and
//! with the weights of the whole query after the leading ones, which weigh nothing (weight 0:
//! each score is summed as it was, to the last bit). The leading terms come first because FTS5
//! steps an AND by its first operand and seeks the others (through their doclist indexes) to
//! each row it finds; the other way round it stepped through every posting of every term.
//!
//! First pass: the trailing terms are the least-adding ones held by more than one row in
//! [`COMMON`]. If the k-th best score it finds beats what they could add together, it is the
//! answer. Else that score still bounds the k-th best from below: the longest run of
//! least-adding terms that could not reach it together stays trailing, and the next pass reads
//! only the rows the first did not, those holding one of the terms that stopped trailing and
//! none of the first's leading ones (`(new) NOT (read before) AND (every term)`); its best
//! join the first's, and so on until the trailing terms cannot reach the k-th best found (or
//! none trail: then every row holding a term has been read once). Each row is read at most
//! once: a second pass that read every row of the first again (one more leading term, a
//! tenth more rows) was a third of an issue text's search at a million chunks. (A first pass
//! of only the few terms that add most was tried: its k-th best is too low a bound.)

use crate::weighted_bm25::{idf, most_added, weighted_expression};
use rusqlite::{types::Value, Connection};

/// A term held by more than one row in this many trails in the first pass.
const COMMON: f64 = 50.0;

/// Where the rows come from and how they are scored.
pub(crate) struct Ranking<'a> {
    /// The FTS5 table.
    pub table: &'a str,
    /// Joins the filters read (empty when there are none).
    pub joins: &'a str,
    /// ` AND …` conditions, their parameters numbered from 5 on.
    pub filters: &'a str,
    /// The filters' parameters.
    pub filter_args: Vec<Value>,
    /// Length normalisation.
    pub b: f64,
    /// The columns' weights.
    pub columns: [f64; 3],
    /// Whether a query of many terms may be split: the split's own reads (the terms' counts
    /// first, each leading term twice) pay only where the whole query visits many rows.
    pub may_split: bool,
}

/// The `limit` best rows for `terms` (a term listed n times weighs n), as `(rowid, score)`,
/// best first; equal scores in row order.
pub(crate) fn best_rows(
    conn: &Connection,
    ranking: &Ranking,
    terms: &[impl AsRef<str>],
    limit: usize,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    Ok(best_rows_by_passes(conn, ranking, terms, limit)?.0)
}

/// `best_rows`, and how many terms trailed in each pass it ran (0: the whole query).
fn best_rows_by_passes(
    conn: &Connection,
    ranking: &Ranking,
    terms: &[impl AsRef<str>],
    limit: usize,
) -> rusqlite::Result<(Vec<(i64, f64)>, Vec<usize>)> {
    let mut passes = Vec::new();
    let counted = quarry_core::tokens::counted_terms(terms);
    if counted.is_empty() || limit == 0 {
        return Ok((Vec::new(), passes));
    }
    // Any of the terms, each distinct one once, weighted by how often it is listed.
    let (all, all_weights) = weighted_expression(terms);
    let whole = |mut passes: Vec<usize>| {
        passes.push(0);
        Ok((run(conn, ranking, &all, &all_weights, None, limit)?, passes))
    };
    if counted.len() < 3 || !ranking.may_split {
        return whole(passes);
    }
    let Some((rows, tokens, hits)) = counts(conn, ranking.table, &all)? else {
        return Ok((Vec::new(), passes));
    };
    // Each term's most, least first.
    let mut order: Vec<usize> = (0..counted.len()).collect();
    let most: Vec<f64> = counted
        .iter()
        .zip(&hits)
        .map(|((_, n), &h)| most_added(idf(rows as f64, h as f64), *n as f64))
        .collect();
    order.sort_by(|&a, &b| most[a].total_cmp(&most[b]).then(a.cmp(&b)));
    let common = order
        .iter()
        .take_while(|&&i| hits[i] as f64 * COMMON > rows as f64)
        .count()
        .min(counted.len() - 1);
    if common == 0 {
        return whole(passes);
    }
    let all_hits = hits
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    // The rows holding one of `order[from..to]` and none of `order[to..]` (the terms that led
    // the passes before), each scored with every term: the leading and the excluded terms
    // come first and weigh nothing.
    let pass = |from: usize, to: usize| -> rusqlite::Result<Vec<(i64, f64)>> {
        let listed = |terms: &[usize], of: &dyn Fn(usize) -> String, between: &str| {
            let mut terms = terms.to_vec();
            terms.sort_unstable();
            terms
                .iter()
                .map(|&i| of(i))
                .collect::<Vec<_>>()
                .join(between)
        };
        let phrase = |i: usize| format!("\"{}\"", counted[i].0.replace('"', ""));
        let (lead, before) = (&order[from..to], &order[to..]);
        let leading = listed(lead, &phrase, " OR ");
        let expression = if before.is_empty() {
            format!("({leading}) AND ({all})")
        } else {
            format!(
                "(({leading}) NOT ({})) AND ({all})",
                listed(before, &phrase, " OR ")
            )
        };
        let zero = |_| "0".to_string();
        let hits_of = |i: usize| hits[i].to_string();
        let (mut weights, mut counts) = (listed(lead, &zero, " "), listed(lead, &hits_of, " "));
        if !before.is_empty() {
            weights = format!("{weights} {}", listed(before, &zero, " "));
            counts = format!("{counts} {}", listed(before, &hits_of, " "));
        }
        let weights = format!("{weights} {all_weights}");
        let counts = format!("{rows} {tokens} {counts} {all_hits}");
        run(conn, ranking, &expression, &weights, Some(&counts), limit)
    };
    let left_out = |trailing: usize| -> f64 { order[..trailing].iter().map(|&i| most[i]).sum() };
    let mut trailing = common;
    let mut found = pass(trailing, counted.len())?;
    passes.push(trailing);
    loop {
        // Fewer than k: rows of trailing terms alone may fill them.
        let kth = found
            .get(limit - 1)
            .map_or(f64::NEG_INFINITY, |&(_, score)| score);
        if left_out(trailing) < kth {
            return Ok((found, passes));
        }
        // The k-th best of all rows is at least `kth`: the least-adding terms that cannot
        // reach it together stay trailing; the rows of the others not read yet are read now.
        let mut sum = 0.0;
        let next = order[..trailing]
            .iter()
            .take_while(|&&i| {
                sum += most[i];
                sum < kth
            })
            .count();
        let more = pass(next, trailing)?;
        found = merged(found, more, limit);
        trailing = next;
        passes.push(trailing);
        if trailing == 0 {
            return Ok((found, passes));
        }
    }
}

/// The `limit` best of two passes' rows (no row in both), as one query orders them: by score,
/// equal scores in row order.
fn merged(mut a: Vec<(i64, f64)>, b: Vec<(i64, f64)>, limit: usize) -> Vec<(i64, f64)> {
    a.extend(b);
    a.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    a.truncate(limit);
    a
}

/// `quarry_bm25_counts` of `expression` (the whole query's): rows, tokens, rows holding each
/// distinct term.
fn counts(
    conn: &Connection,
    table: &str,
    expression: &str,
) -> rusqlite::Result<Option<(i64, i64, Vec<i64>)>> {
    let sql =
        format!("SELECT quarry_bm25_counts({table}) FROM {table} WHERE {table} MATCH ?1 LIMIT 1");
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([expression])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let text: String = row.get(0)?;
    let numbers: Vec<i64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    Ok(match numbers.as_slice() {
        [rows, tokens, hits @ ..] => Some((*rows, *tokens, hits.to_vec())),
        _ => None,
    })
}

/// One query's k best rows, by `quarry_bm25_top`.
fn run(
    conn: &Connection,
    ranking: &Ranking,
    expression: &str,
    weights: &str,
    counts: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let Ranking {
        table,
        joins,
        filters,
        b,
        columns: [c1, c2, c3],
        ..
    } = ranking;
    let sql = format!(
        "SELECT {table}.rowid, quarry_bm25_top({table}, ?4, {b}, ?2, ?3, {c1:.3}, {c2:.3}, {c3:.3}) AS score
         FROM {table} {joins} WHERE {table} MATCH ?1{filters} ORDER BY score DESC LIMIT ?4"
    );
    let mut args = vec![
        Value::Text(expression.to_string()),
        Value::Text(weights.to_string()),
        counts.map_or(Value::Null, |c| Value::Text(c.to_string())),
        Value::Integer(limit as i64),
    ];
    args.extend(ranking.filter_args.iter().cloned());
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<f64>>(1)?))
    })?;
    let mut found = Vec::new();
    for row in rows {
        if let (id, Some(score)) = row? {
            found.push((id, score));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4,000 rows of words drawn unevenly from 600: a few in most rows, many in few.
    fn table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        crate::weighted_bm25::register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(path, symbols, body, content = '',
                 contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');",
        )
        .unwrap();
        let mut next = crate::weighted_bm25::draws(11);
        let mut insert = conn
            .prepare("INSERT INTO t(rowid, path, symbols, body) VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        for row in 1..=4000i64 {
            let mut words = |n: u64| {
                (0..n)
                    .map(|_| {
                        let w = next(600);
                        format!("w{}", w * w * w / 360_000)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let (path, symbols, mut body) = (words(1), words(2), words(2 + row as u64 % 25));
            // Two words in few rows.
            if row % 97 == 0 {
                body.push_str(" zeta");
            }
            if row % 173 == 0 {
                body.push_str(" omega omega");
            }
            insert
                .execute(rusqlite::params![row, path, symbols, body])
                .unwrap();
        }
        drop(insert);
        conn
    }

    fn plain(conn: &Connection, terms: &[&str], filter: &str, limit: usize) -> Vec<(i64, f64)> {
        let (expression, weights) = weighted_expression(terms);
        let sql = format!(
            "SELECT rowid, quarry_bm25(t, 0.75, '{weights}', 3.0, 2.0, 1.0) AS s FROM t
             WHERE t MATCH ?1{filter} ORDER BY s DESC LIMIT {limit}"
        );
        let mut stmt = conn.prepare(&sql).unwrap();
        let rows = stmt
            .query_map([expression], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        rows.map(Result::unwrap).collect()
    }

    #[test]
    fn the_split_query_finds_the_rows_of_the_whole_one() {
        let conn = table();
        let queries: [&[&str]; 5] = [
            // common words, a title word weighed three times, rare words
            &["w0", "w1", "w4", "w150", "w150", "w150", "w400", "w580"],
            &["w0", "w0", "w1", "w2", "w3", "w48", "w510", "w540", "w597"],
            &["w0", "w1", "w2", "w3"],
            &["w597", "w0", "w270"],
            &["w0", "w1", "w2", "w3", "zeta", "omega", "omega"],
        ];
        let mut most_passes = 0;
        for terms in queries {
            for filter in ["", " AND t.rowid % 3 = 0"] {
                for limit in [1, 10, 100, 3000] {
                    let want = plain(&conn, terms, filter, limit);
                    let ranking = Ranking {
                        table: "t",
                        joins: "",
                        filters: filter,
                        filter_args: Vec::new(),
                        b: 0.75,
                        columns: [3.0, 2.0, 1.0],
                        may_split: true,
                    };
                    let (got, passes) = best_rows_by_passes(&conn, &ranking, terms, limit).unwrap();
                    most_passes = most_passes.max(passes.len());
                    let scores = |rows: &[(i64, f64)]| rows.iter().map(|r| r.1).collect::<Vec<_>>();
                    assert_eq!(scores(&got), scores(&want), "{terms:?}{filter} k {limit}");
                    // The same rows in the same order, equal scores in row order.
                    assert_eq!(got, want, "{terms:?}{filter} k {limit}");
                    let all: std::collections::HashMap<i64, f64> =
                        plain(&conn, terms, filter, 100_000).into_iter().collect();
                    for (row, score) in &got {
                        assert_eq!(all[row], *score, "row {row} of {terms:?}");
                    }
                }
            }
        }
        // Some query read rows in a later pass that the first had not (`NOT` what was read).
        assert!(most_passes >= 2, "{most_passes}");
    }

    #[test]
    fn common_terms_trail_when_they_cannot_change_the_best() {
        let conn = table();
        // Four words in most rows, two in few: every pass leaves at least three common ones out.
        let terms = ["w0", "w1", "w2", "w3", "zeta", "zeta", "omega"];
        let (expression, _) = weighted_expression(&terms);
        let (rows, _, hits) = counts(&conn, "t", &expression).unwrap().unwrap();
        assert!(
            hits[0] * 2 > rows && hits[5] * 50 < rows,
            "{hits:?} of {rows}"
        );
        let ranking = Ranking {
            table: "t",
            joins: "",
            filters: "",
            filter_args: Vec::new(),
            b: 0.75,
            columns: [3.0, 2.0, 1.0],
            may_split: true,
        };
        let (got, passes) = best_rows_by_passes(&conn, &ranking, &terms, 5).unwrap();
        assert!(passes.iter().all(|&trailing| trailing >= 3), "{passes:?}");
        let scores = |rows: &[(i64, f64)]| rows.iter().map(|r| r.1).collect::<Vec<_>>();
        assert_eq!(scores(&got), scores(&plain(&conn, &terms, "", 5)));
        // Asked for nearly every row, the common ones may fill it: the whole query runs.
        let (_, passes) = best_rows_by_passes(&conn, &ranking, &terms, 3500).unwrap();
        assert_eq!(passes.last(), Some(&0), "{passes:?}");
        // A table too small to split runs the whole query at once.
        let small = Ranking {
            may_split: false,
            ..ranking
        };
        let (got, passes) = best_rows_by_passes(&conn, &small, &terms, 5).unwrap();
        assert_eq!(passes, [0]);
        assert_eq!(scores(&got), scores(&plain(&conn, &terms, "", 5)));
    }
}
