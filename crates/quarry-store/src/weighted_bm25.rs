//! `quarry_bm25`: FTS5's BM25 with a weight per query phrase, so an issue's title words can
//! count several times without being asked for several times.
//!
//! The ranking weighs an issue title's words (and its error messages' phrases) by listing them
//! again in the query (`QueryPlan::lexical_terms`): a term listed n times counts n times. Given
//! to FTS5 as written, `"a" OR "a" OR "a"` is three phrases, and FTS5 reads each one's postings
//! and positions once per phrase, for every matching row: over sympy's 62k commits an issue's
//! 45 phrases (28 distinct) took 214 ms where the 28 took 139 ms. FTS5's own `bm25()` weighs
//! columns, not phrases, and no crate offers a weighted one, hence this auxiliary function,
//! registered on every connection through FTS5's C API (`fts5_api.xCreateFunction`).
//!
//! `quarry_bm25(table, b, 'w1 w2 …', c1, c2, …)`: the length normalisation `b` (`FTS5_B`, 0.75,
//! for code; commit search weighs a long commit down harder:
//! `quarry_core::history::COMMIT_LENGTH_NORMALISATION`), the phrase weights in the order the
//! phrases appear in the MATCH expression (a missing one is 1), then the column weights as
//! `bm25()` takes them. The score is `bm25()`'s — same IDF (floored at 1e-6), same k1 = 1.2,
//! same average length; with b 0.75 the same — with each phrase's term multiplied by its
//! weight, and positive (higher is better), so a deduplicated query with weights scores every
//! row as the repeated query did (`tests::scores_equal_repeating_the_phrase`).
//!
//! `quarry_bm25_top(table, k, b, 'w1 w2 …', counts, c1, …)` scores the same, but only the rows that may
//! be among the `k` best it has scored so far; any other row is NULL. A row's length is what
//! costs (FTS5 looks it up in its `docsize` table, a B-tree search per row: two thirds of a
//! search over a quarter of a million matching chunks), and its score can only fall as its
//! length grows, so a bound is had without it: the score at the least length the row's own
//! matches allow (as many tokens as distinct positions they start at). A row whose bound is
//! below the k-th best exact score met so far cannot enter the k best and is not looked up.
//! Used as `ORDER BY score DESC LIMIT k`, the k rows are those `quarry_bm25` gives, with the
//! same scores (`tests::the_top_rows_are_those_of_the_full_scores`). The function sees only
//! rows that passed the query's WHERE clause (SQLite computes result columns after it), so a
//! filtered search prunes among the rows it may return.

use rusqlite::ffi;
use rusqlite::Connection;
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

pub(crate) const K1: f64 = 1.2;
/// FTS5's length normalisation, `bm25()`'s: what code search passes.
pub(crate) const FTS5_B: f64 = 0.75;
const NAME: &CStr = c"quarry_bm25";
const TOP_NAME: &CStr = c"quarry_bm25_top";
const COUNTS_NAME: &CStr = c"quarry_bm25_counts";

/// A MATCH expression with one phrase per distinct term (first-seen order) and the weights
/// `quarry_bm25` takes with it: how many times each was listed.
pub(crate) fn weighted_expression(terms: &[impl AsRef<str>]) -> (String, String) {
    let counted = quarry_core::tokens::counted_terms(terms);
    let expression = counted
        .iter()
        .map(|(t, _)| format!("\"{}\"", t.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" OR ");
    let weights = counted
        .iter()
        .map(|(_, n)| n.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    (expression, weights)
}

/// Registers `quarry_bm25`, `quarry_bm25_top` and `quarry_bm25_counts` on `conn` (FTS5
/// functions belong to one connection).
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is `conn`'s own and outlives these calls; the fts5_api pointer is
    // filled by SQLite for exactly this use (`SELECT fts5(?)` with a bound pointer of type
    // "fts5_api_ptr", as SQLite's documentation shows) and lives as long as the connection.
    unsafe {
        let db = conn.handle();
        let api = fts5_api(db)?;
        let create = (*api)
            .xCreateFunction
            .ok_or_else(|| fail(ffi::SQLITE_MISUSE, "FTS5 cannot create functions"))?;
        type Function = unsafe extern "C" fn(
            *const ffi::Fts5ExtensionApi,
            *mut ffi::Fts5Context,
            *mut ffi::sqlite3_context,
            c_int,
            *mut *mut ffi::sqlite3_value,
        );
        let functions: [(&CStr, Function); 3] = [
            (NAME, score_row),
            (TOP_NAME, score_top_row),
            (COUNTS_NAME, counts_row),
        ];
        for (name, function) in functions {
            let rc = create(api, name.as_ptr(), ptr::null_mut(), Some(function), None);
            if rc != ffi::SQLITE_OK {
                return Err(fail(
                    rc,
                    &format!("cannot register {}", name.to_string_lossy()),
                ));
            }
        }
    }
    Ok(())
}

pub(crate) fn fail(code: c_int, what: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(what.to_string()))
}

pub(crate) unsafe fn fts5_api(db: *mut ffi::sqlite3) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    let rc = ffi::sqlite3_prepare_v2(
        db,
        c"SELECT fts5(?1)".as_ptr(),
        -1,
        &mut stmt,
        ptr::null_mut(),
    );
    if rc != ffi::SQLITE_OK {
        return Err(fail(rc, "this SQLite has no FTS5"));
    }
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    ffi::sqlite3_bind_pointer(
        stmt,
        1,
        (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
        c"fts5_api_ptr".as_ptr(),
        None,
    );
    ffi::sqlite3_step(stmt);
    ffi::sqlite3_finalize(stmt);
    if api.is_null() {
        return Err(fail(ffi::SQLITE_ERROR, "FTS5 gave no API pointer"));
    }
    Ok(api)
}

/// What one query's rows share, computed at its first row and kept as FTS5 auxiliary data.
struct QueryConstants {
    /// Per phrase: its IDF times its weight.
    weighted_idf: Vec<f64>,
    /// Per column: its weight.
    columns: Vec<f64>,
    /// Average row length in tokens.
    average_length: f64,
    /// The length normalisation.
    b: f64,
    /// Per phrase: its weighted frequency in the current row (reused between rows).
    frequency: Vec<f64>,
    /// `quarry_bm25_top`'s: the k best exact scores so far.
    top: Option<Top>,
    /// The current row's match positions, `(column, offset)` (reused between rows).
    positions: Vec<(c_int, c_int)>,
}

/// The k best scores met so far, least first.
struct Top {
    k: usize,
    best: std::collections::BinaryHeap<std::cmp::Reverse<Score>>,
}

impl Top {
    /// The score a row must reach to enter the k best, once there are k.
    fn threshold(&self) -> Option<f64> {
        (self.best.len() >= self.k).then(|| self.best.peek().map_or(f64::INFINITY, |s| s.0 .0))
    }

    fn offer(&mut self, score: f64) {
        if self.k == 0 {
            return;
        }
        self.best.push(std::cmp::Reverse(Score(score)));
        if self.best.len() > self.k {
            self.best.pop();
        }
    }
}

/// A score ordered by `f64::total_cmp`.
#[derive(PartialEq)]
struct Score(f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

unsafe extern "C" fn drop_constants(p: *mut c_void) {
    drop(Box::from_raw(p.cast::<QueryConstants>()));
}

unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    rows: *mut c_void,
) -> c_int {
    *rows.cast::<i64>() += 1;
    ffi::SQLITE_OK
}

/// The FTS5 auxiliary function: one row's score, or the SQLite error code.
unsafe extern "C" fn score_row(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    give_score(api, fts, ctx, n_args, args, false)
}

/// `quarry_bm25_top`: one row's score, NULL where it cannot be among the k best.
unsafe extern "C" fn score_top_row(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    give_score(api, fts, ctx, n_args, args, true)
}

/// Sets the result of either function: the score, NULL, or the error code.
unsafe fn give_score(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
    top: bool,
) {
    let args: &[*mut ffi::sqlite3_value] = if args.is_null() || n_args <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(args, n_args as usize)
    };
    match score(&*api, fts, args, top) {
        Ok(Some(s)) => ffi::sqlite3_result_double(ctx, s),
        Ok(None) => ffi::sqlite3_result_null(ctx),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

/// Calls an FTS5 API entry, turning a missing one into SQLITE_MISUSE.
macro_rules! call {
    ($api:expr, $f:ident, $($arg:expr),*) => {
        match $api.$f {
            Some(f) => f($($arg),*),
            None => return Err(ffi::SQLITE_MISUSE),
        }
    };
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
    top: bool,
) -> Result<Option<f64>, c_int> {
    let mut constants = call!(api, xGetAuxdata, fts, 0).cast::<QueryConstants>();
    if constants.is_null() {
        let made = if top {
            let (k, rest) = match args.split_first() {
                Some((&k, rest)) => (ffi::sqlite3_value_int64(k).max(0) as usize, rest),
                None => (0, args),
            };
            let mut constants = constants_of(api, fts, rest, true)?;
            constants.top = Some(Top {
                k,
                best: std::collections::BinaryHeap::with_capacity(k + 1),
            });
            constants
        } else {
            constants_of(api, fts, args, false)?
        };
        let made = Box::into_raw(Box::new(made));
        let rc = call!(api, xSetAuxdata, fts, made.cast(), Some(drop_constants));
        if rc != ffi::SQLITE_OK {
            // SQLite has called drop_constants on failure.
            return Err(rc);
        }
        constants = made;
    }
    let q = &mut *constants;
    q.positions.clear();
    let mut most = 0; // the most matches of one phrase: each starts at a position of its own
    for (phrase, frequency) in q.frequency.iter_mut().enumerate() {
        *frequency = 0.0;
        if q.weighted_idf[phrase] == 0.0 {
            continue; // weighs nothing (a term listed again to lead a split query: best_rows.rs)
        }
        let mut iter = ffi::Fts5PhraseIter {
            a: ptr::null(),
            b: ptr::null(),
        };
        let (mut column, mut offset) = (0, 0);
        let rc = call!(
            api,
            xPhraseFirst,
            fts,
            phrase as c_int,
            &mut iter,
            &mut column,
            &mut offset
        );
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        let before = q.positions.len();
        while column >= 0 {
            *frequency += q.columns.get(column as usize).copied().unwrap_or(1.0);
            if q.top.is_some() {
                q.positions.push((column, offset));
            }
            call!(api, xPhraseNext, fts, &mut iter, &mut column, &mut offset);
        }
        most = most.max(q.positions.len() - before);
    }
    let prunes = (0.0..=1.0).contains(&q.b); // else a longer row may score higher
    if let Some(threshold) = q.top.as_ref().and_then(Top::threshold).filter(|_| prunes) {
        // The row holds at least one token per distinct position a match starts at: as many
        // as one phrase's matches (no sorting), then, if that does not settle it, as many as
        // all phrases' distinct starts (two phrases may match the same token).
        if q.sum(most.max(1) as f64) < threshold {
            return Ok(None);
        }
        q.positions.sort_unstable();
        q.positions.dedup();
        if q.sum(q.positions.len().max(1) as f64) < threshold {
            return Ok(None);
        }
    }
    let mut length: c_int = 0;
    let rc = call!(api, xColumnSize, fts, -1, &mut length);
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let score = q.sum(f64::from(length));
    if let Some(top) = q.top.as_mut() {
        top.offer(score);
    }
    Ok(Some(score))
}

impl QueryConstants {
    /// The row's score at `length` tokens, from the phrase frequencies last read. Falls as
    /// `length` grows (b ≥ 0), which makes the least length give a bound.
    fn sum(&self, length: f64) -> f64 {
        let norm = K1 * (1.0 - self.b + self.b * length / self.average_length);
        self.weighted_idf
            .iter()
            .zip(&self.frequency)
            .map(|(idf, f)| idf * (f * (K1 + 1.0)) / (f + norm))
            .sum()
    }
}

/// A text argument's whitespace-separated numbers (none for NULL); a word that is not one is 1.
unsafe fn numbers(v: Option<&*mut ffi::sqlite3_value>) -> Vec<f64> {
    match v {
        Some(&v) if !ffi::sqlite3_value_text(v).is_null() => {
            CStr::from_ptr(ffi::sqlite3_value_text(v).cast())
                .to_string_lossy()
                .split_whitespace()
                .map(|w| w.parse().unwrap_or(1.0))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The table's row count and token count, and per phrase of the query how many rows hold it.
unsafe fn document_counts(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<(i64, i64, Vec<i64>), c_int> {
    let phrases = call!(api, xPhraseCount, fts).max(0) as usize;
    let (mut rows, mut tokens) = (0i64, 0i64);
    let rc = call!(api, xRowCount, fts, &mut rows);
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let rc = call!(api, xColumnTotalSize, fts, -1, &mut tokens);
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let mut counts = Vec::with_capacity(phrases);
    for phrase in 0..phrases {
        let mut hits = 0i64;
        let rc = call!(
            api,
            xQueryPhrase,
            fts,
            phrase as c_int,
            (&mut hits as *mut i64).cast(),
            Some(count_row)
        );
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        counts.push(hits);
    }
    Ok((rows, tokens, counts))
}

/// bm25()'s IDF of a phrase held by `hits` of `rows` rows, floored where a phrase is in more
/// than half of them.
pub(crate) fn idf(rows: f64, hits: f64) -> f64 {
    let idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
    if idf <= 0.0 {
        1e-6
    } else {
        idf
    }
}

/// The most one phrase of IDF `idf` and weight `weight` can add to a row's score, however
/// often the row holds it.
pub(crate) fn most_added(idf: f64, weight: f64) -> f64 {
    idf * weight * (K1 + 1.0)
}

/// `quarry_bm25_counts(table)`: "rows tokens n1 n2 …", the table's row and token counts and
/// how many rows hold each phrase of the query: what a caller needs to split a query by IDF
/// and to pass the counts on, so that they are not counted again.
unsafe extern "C" fn counts_row(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n_args: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    match document_counts(&*api, fts) {
        Ok((rows, tokens, counts)) => {
            let mut text = format!("{rows} {tokens}");
            for n in counts {
                text.push_str(&format!(" {n}"));
            }
            let text = std::ffi::CString::new(text).unwrap_or_default();
            ffi::sqlite3_result_text(ctx, text.as_ptr(), -1, ffi::SQLITE_TRANSIENT());
        }
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

/// The query's constants from the function's arguments: `b, weights, columns…`, or for
/// `quarry_bm25_top` `b, weights, counts, columns…` (`counts` as `quarry_bm25_counts` gives
/// them, or NULL to count here).
unsafe fn constants_of(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
    with_counts: bool,
) -> Result<QueryConstants, c_int> {
    let phrases = call!(api, xPhraseCount, fts).max(0) as usize;
    let (b, args) = match args.split_first() {
        Some((&b, rest)) => (ffi::sqlite3_value_double(b), rest),
        None => (FTS5_B, args),
    };
    let weights = numbers(args.first());
    let given = if with_counts {
        numbers(args.get(1))
    } else {
        Vec::new()
    };
    let columns = args
        .iter()
        .skip(if with_counts { 2 } else { 1 })
        .map(|&v| ffi::sqlite3_value_double(v))
        .collect();
    let (rows, tokens, counts) = if given.len() == phrases + 2 {
        let counts = given[2..].iter().map(|&n| n as i64).collect();
        (given[0] as i64, given[1] as i64, counts)
    } else {
        document_counts(api, fts)?
    };
    let weighted_idf = counts
        .iter()
        .enumerate()
        .map(|(phrase, &hits)| {
            idf(rows as f64, hits as f64) * weights.get(phrase).copied().unwrap_or(1.0)
        })
        .collect();
    Ok(QueryConstants {
        weighted_idf,
        columns,
        average_length: tokens as f64 / (rows.max(1) as f64),
        b,
        frequency: vec![0.0; phrases],
        top: None,
        positions: Vec::new(),
    })
}

/// Numbers below n, the same for the same seed (a linear congruential generator): the test
/// tables' words.
#[cfg(test)]
pub(crate) fn draws(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(title, body, content = '', contentless_delete = 1,
                 tokenize = 'porter unicode61 remove_diacritics 2');
             INSERT INTO t(rowid, title, body) VALUES
               (1, 'session cookie', 'the session cookie is signed with the secret key'),
               (2, 'fix redirect', 'resolve redirects keeps the method of a 303 redirect'),
               (3, 'cookie jar', 'merge cookies from the session into the request cookie jar'),
               (4, 'docs', 'explain how the secret key signs the session'),
               (5, 'unrelated', 'nothing to see here at all');",
        )
        .unwrap();
        conn
    }

    fn scores(conn: &Connection, sql: &str, expression: &str) -> Vec<(i64, f64)> {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt
            .query_map([expression], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        let mut out: Vec<(i64, f64)> = rows.map(Result::unwrap).collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }

    #[test]
    fn scores_equal_repeating_the_phrase() {
        let conn = table();
        let terms = [
            "session",
            "cookie",
            "secret key",
            "session",
            "session",
            "redirect",
        ];
        let repeated = terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR ");
        let by_bm25 = scores(
            &conn,
            "SELECT rowid, -bm25(t, 3.0, 1.0) FROM t WHERE t MATCH ?1",
            &repeated,
        );
        let (expression, weights) = weighted_expression(&terms);
        assert_eq!(weights, "3 1 1 1");
        let by_weights = scores(
            &conn,
            &format!(
                "SELECT rowid, quarry_bm25(t, 0.75, '{weights}', 3.0, 1.0) FROM t WHERE t MATCH ?1"
            ),
            &expression,
        );
        assert_eq!(by_bm25.len(), 4, "{by_bm25:?}");
        assert_eq!(by_bm25.len(), by_weights.len());
        for ((a, x), (b, y)) in by_bm25.iter().zip(&by_weights) {
            assert_eq!(a, b);
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "row {a}: {x} vs {y}"
            );
        }
        // The weight matters: "session" counted once ranks the redirect row differently.
        let once = scores(
            &conn,
            &format!(
                "SELECT rowid, quarry_bm25(t, 0.75, '1 1 1 1', 3.0, 1.0) FROM t WHERE t MATCH ?1"
            ),
            &expression,
        );
        assert!(once
            .iter()
            .zip(&by_weights)
            .any(|((_, x), (_, y))| (x - y).abs() > 1e-6));
    }

    #[test]
    fn missing_weights_count_once() {
        let conn = table();
        let a = scores(
            &conn,
            "SELECT rowid, -bm25(t) FROM t WHERE t MATCH ?1",
            "\"cookie\" OR \"secret\"",
        );
        let b = scores(
            &conn,
            "SELECT rowid, quarry_bm25(t) FROM t WHERE t MATCH ?1",
            "\"cookie\" OR \"secret\"",
        );
        assert_eq!(a.len(), b.len());
        for ((_, x), (_, y)) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-9);
        }
    }

    #[test]
    fn b_sets_how_much_length_costs() {
        let conn = table();
        // "secret" is once in the body of row 1 (12 tokens) and of row 4 (9 tokens).
        let with_b = |b: f64| {
            scores(
                &conn,
                &format!(
                    "SELECT rowid, quarry_bm25(t, {b}, '2', 3.0, 1.0) FROM t WHERE t MATCH ?1"
                ),
                "\"secret\"",
            )
        };
        // At FTS5's b, `bm25()` over the phrase asked for twice.
        let plain = scores(
            &conn,
            "SELECT rowid, -bm25(t, 3.0, 1.0) FROM t WHERE t MATCH ?1",
            "\"secret\" OR \"secret\"",
        );
        let fts5 = with_b(0.75);
        assert_eq!(plain.len(), 2, "{plain:?}");
        for ((a, x), (b, y)) in plain.iter().zip(&fts5) {
            assert_eq!(a, b);
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "row {a}: {x} vs {y}"
            );
        }
        let gap = |s: &[(i64, f64)]| s[1].1 - s[0].1; // the shorter row 4 over row 1
        let none = with_b(0.0);
        assert!(gap(&none).abs() <= 1e-12, "{none:?}");
        assert!(gap(&fts5) > 0.0, "{fts5:?}");
        assert!(gap(&with_b(0.9)) > gap(&fts5));
    }

    #[test]
    fn the_top_rows_are_those_of_the_full_scores() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(title, body, content = '', contentless_delete = 1,
                 tokenize = 'porter unicode61 remove_diacritics 2');",
        )
        .unwrap();
        // 3,000 rows of 1-80 words drawn unevenly from 40, so that some words are in most
        // rows, some in few, and many rows tie.
        let mut next = draws(7);
        let word = |i: u64| format!("w{}", i * i % 40);
        {
            let mut insert = conn
                .prepare("INSERT INTO t(rowid, title, body) VALUES (?1, ?2, ?3)")
                .unwrap();
            for row in 1..=3000i64 {
                let title: Vec<String> = (0..next(4)).map(|_| word(next(40))).collect();
                let body: Vec<String> = (0..1 + next(80)).map(|_| word(next(40))).collect();
                insert
                    .execute(rusqlite::params![row, title.join(" "), body.join(" ")])
                    .unwrap();
            }
        }
        let ranked = |function: &str, k: usize, expression: &str, filter: &str| {
            let args = if function == "quarry_bm25_top" {
                format!("{k}, 0.75, '3 1 2', NULL, 2.5, 1.0")
            } else {
                "0.75, '3 1 2', 2.5, 1.0".to_string()
            };
            let sql = format!(
                "SELECT rowid, {function}(t, {args}) AS s FROM t WHERE t MATCH ?1{filter}
                 ORDER BY s DESC LIMIT {k}"
            );
            scores(&conn, &sql, expression)
        };
        let mut pruned_any = false;
        for expression in [
            "\"w0\" OR \"w1\" OR \"w9\"",
            "\"w16\" OR \"w4\"",
            "\"w25\" OR \"w36 w0\" OR \"w0\"",
        ] {
            for filter in ["", " AND rowid % 3 = 0"] {
                for k in [1, 5, 10, 200] {
                    let full = ranked("quarry_bm25", k, expression, filter);
                    let top = ranked("quarry_bm25_top", k, expression, filter);
                    let desc = |rows: &[(i64, f64)]| {
                        let mut s: Vec<f64> = rows.iter().map(|r| r.1).collect();
                        s.sort_by(|a, b| b.total_cmp(a));
                        s
                    };
                    assert_eq!(desc(&full), desc(&top), "{expression}{filter} k {k}");
                    // Each row given keeps its full score.
                    let all: std::collections::HashMap<i64, f64> =
                        ranked("quarry_bm25", 100_000, expression, filter)
                            .into_iter()
                            .collect();
                    for (row, score) in &top {
                        assert_eq!(all[row], *score, "row {row}");
                    }
                    let nulls: i64 = conn
                        .query_row(
                            &format!(
                                "SELECT count(*) FROM (SELECT quarry_bm25_top(t, {k}, 0.75, '3 1 2',
                                 NULL, 2.5, 1.0) AS s FROM t WHERE t MATCH ?1{filter}) WHERE s IS NULL"
                            ),
                            [expression],
                            |r| r.get(0),
                        )
                        .unwrap();
                    pruned_any |= nulls > 0;
                }
            }
        }
        assert!(pruned_any, "no row was ever skipped");
    }
}
