//! Read queries: BM25 over the full-text table with repo/language/path pre-filters, and the
//! per-repo counts behind `quarry status`.

use crate::best_rows::{best_rows, Ranking};
use crate::weighted_bm25::FTS5_B;
use crate::{repo_from_row, REPO_COLUMNS};
use quarry_core::{ChunkHit, ContentType, FileHit, Language, LexicalQuery, RepoStats};
use rusqlite::{types::Value, Connection, OptionalExtension};
use std::collections::{BTreeMap, HashMap};

/// A path filter as a GLOB pattern: a pattern with glob characters is used as given, a plain
/// string matches any path containing it.
pub(crate) fn path_pattern(filter: &str) -> String {
    if filter.contains(['*', '?', '[']) {
        filter.replace("**/", "*").replace("**", "*")
    } else {
        format!("*{filter}*")
    }
}

/// Appends the pre-filters shared by every search (repo names, path) to `sql`,
/// binding their values as numbered parameters after those already in `args`.
pub(crate) fn push_filters(
    sql: &mut String,
    args: &mut Vec<Value>,
    repos: &[String],
    path_glob: Option<&str>,
) {
    if !repos.is_empty() {
        let marks: Vec<String> = repos
            .iter()
            .map(|name| {
                args.push(Value::Text(name.clone()));
                format!("?{}", args.len())
            })
            .collect();
        sql.push_str(&format!(" AND r.name IN ({})", marks.join(",")));
    }
    if let Some(filter) = path_glob {
        sql.push_str(&format!(
            " AND {}",
            path_condition(args, filter, &["f.path"])
        ));
    }
}

/// `columns GLOB` each of `filter`'s patterns (its brace alternatives: SQLite's GLOB has no
/// braces), as one condition with its parameters bound.
pub(crate) fn path_condition(args: &mut Vec<Value>, filter: &str, columns: &[&str]) -> String {
    let patterns =
        quarry_core::glob::brace_alternatives(filter).unwrap_or_else(|| vec![filter.to_string()]);
    let mut alternatives = Vec::new();
    for pattern in patterns {
        args.push(Value::Text(path_pattern(&pattern)));
        for column in columns {
            alternatives.push(format!("{column} GLOB ?{}", args.len()));
        }
    }
    format!("({})", alternatives.join(" OR "))
}

/// Restricts a search by language and to code or documents. For chunks (`chunks = true`)
/// both are judged by the chunk's own language: `--lang python` also finds a notebook's
/// Python cells, and `--lang notebook` every cell of a notebook (the file's language). For
/// files, by the file's.
pub(crate) fn push_scope(
    sql: &mut String,
    args: &mut Vec<Value>,
    language: Option<Language>,
    content: ContentType,
    chunks: bool,
) {
    if let Some(lang) = language {
        args.push(Value::Text(lang.name().to_string()));
        let n = args.len();
        if chunks {
            sql.push_str(&format!(" AND (c.language = ?{n} OR f.language = ?{n})"));
        } else {
            sql.push_str(&format!(" AND f.language = ?{n}"));
        }
    }
    let own = if chunks {
        "coalesce(c.language, f.language)"
    } else {
        "f.language"
    };
    if let Some(condition) = content.sql_condition(own, !chunks) {
        sql.push_str(" AND ");
        sql.push_str(&condition);
    }
}

/// The columns `hit_from_row` reads, before a final score column.
pub(crate) const HIT_COLUMNS: &str =
    "c.id, r.name, f.path, c.start_line, c.end_line, c.symbol, c.kind, \
     coalesce(c.language, f.language), c.text, c.page, c.cell";

/// Reads `HIT_COLUMNS`; the score is 0 (the caller's to set).
pub(crate) fn hit_from_row(r: &rusqlite::Row) -> rusqlite::Result<ChunkHit> {
    let (id, start_line, end_line): (i64, u32, u32) = (r.get(0)?, r.get(3)?, r.get(4)?);
    // Texts read as bytes: one damaged into invalid UTF-8 is shown replaced, and noted.
    let place = |what: &str| {
        format!("the stored {what} of chunk {id} (lines {start_line}-{end_line}) is not what was written")
    };
    let text_at = |i: usize, what: &str| -> rusqlite::Result<Option<String>> {
        let value = r.get_ref(i)?;
        Ok((value != rusqlite::types::ValueRef::Null)
            .then(|| crate::checksums::text_of(value, || place(what))))
    };
    let language = text_at(7, "language")?.unwrap_or_default();
    Ok(ChunkHit {
        id,
        repo: text_at(1, "repo name")?.unwrap_or_default(),
        path: text_at(2, "path")?.unwrap_or_default(),
        start_line,
        end_line,
        symbol: text_at(5, "symbol")?,
        kind: text_at(6, "kind")?.unwrap_or_default(),
        language: Language::from_name(&language).unwrap_or(Language::Text),
        text: text_at(8, "text")?.unwrap_or_default(),
        page: r.get(9)?,
        cell: r.get(10)?,
        score: 0.0,
    })
}

pub fn lexical(conn: &Connection, q: &LexicalQuery) -> rusqlite::Result<Vec<ChunkHit>> {
    if q.terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    // The best rows are chosen first and only they are read: a common word matches a quarter
    // of a million chunks at a million, and reading each one's text before the sort was two
    // thirds of the search. The joins stay in the choice only when a filter reads them.
    let best = best_of(conn, "chunks_fts", q, true)?;
    let sql = format!(
        "SELECT {HIT_COLUMNS} FROM chunks c
         JOIN files f ON f.id = c.file_id
         JOIN repos r ON r.id = f.repo_id
         WHERE c.id IN"
    );
    in_best_order(conn, &best, &sql, |r| {
        let hit = hit_from_row(r)?;
        Ok((hit.id, hit))
    })
    .map(|hits| {
        hits.into_iter()
            .map(|(hit, score)| ChunkHit { score, ..hit })
            .collect()
    })
}

/// The rows `sql` (ending in `… IN`) reads for the ids of `best`, each `(id, row)`, in
/// `best`'s order with its score; an id without a row is left out.
fn in_best_order<T>(
    conn: &Connection,
    best: &[(i64, f64)],
    sql: &str,
    row: impl Fn(&rusqlite::Row) -> rusqlite::Result<(i64, T)>,
) -> rusqlite::Result<Vec<(T, f64)>> {
    let ids = best
        .iter()
        .map(|(id, _)| id.to_string())
        .collect::<Vec<_>>();
    let mut stmt = conn.prepare(&format!("{sql} ({})", ids.join(",")))?;
    let mut rows: HashMap<i64, T> = stmt.query_map([], row)?.collect::<rusqlite::Result<_>>()?;
    Ok(best
        .iter()
        .filter_map(|(id, score)| rows.remove(id).map(|row| (row, *score)))
        .collect())
}

/// Tables with at least this many rows may split a query of many terms: at sympy's 36,000
/// chunks the whole query is as fast, at tokio's 15,000 faster.
pub(crate) const SPLIT_FROM: i64 = 100_000;

/// The best `(rowid, score)` of `table` (`chunks_fts` or `files_fts`) for `q`, best first.
fn best_of(
    conn: &Connection,
    table: &str,
    q: &LexicalQuery,
    chunks: bool,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    // Parameters 1-4 are the choice's own (best_rows.rs).
    let mut args: Vec<Value> = vec![Value::Null; 4];
    let mut filters = String::new();
    push_filters(&mut filters, &mut args, &q.repos, q.path_glob.as_deref());
    push_scope(&mut filters, &mut args, q.language, q.content, chunks);
    let joins = match (filters.is_empty(), chunks) {
        (true, _) => "",
        (false, true) => {
            "JOIN chunks c ON c.id = chunks_fts.rowid
             JOIN files f ON f.id = c.file_id
             JOIN repos r ON r.id = f.repo_id"
        }
        (false, false) => "JOIN files f ON f.id = files_fts.rowid JOIN repos r ON r.id = f.repo_id",
    };
    // Split only a table of many rows (best_rows.rs); its content table's largest id is one
    // probe of its primary key.
    let rows: Option<i64> = conn.query_row(
        if chunks {
            "SELECT max(id) FROM chunks"
        } else {
            "SELECT max(id) FROM files"
        },
        [],
        |r| r.get(0),
    )?;
    let w = q.weights;
    let ranking = Ranking {
        table,
        joins,
        filters: &filters,
        filter_args: args.split_off(4),
        b: FTS5_B,
        columns: [w.path, w.symbol, w.body],
        may_split: rows.unwrap_or(0) >= SPLIT_FROM,
    };
    best_rows(conn, &ranking, &q.terms, q.limit)
}

/// BM25 over whole files, with the same terms, weights and filters as chunk search.
pub fn files_lexical(conn: &Connection, q: &LexicalQuery) -> rusqlite::Result<Vec<FileHit>> {
    if q.terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let best = best_of(conn, "files_fts", q, false)?;
    let sql = "SELECT f.id, r.name, f.path, f.language FROM files f
               JOIN repos r ON r.id = f.repo_id WHERE f.id IN";
    let files = in_best_order(conn, &best, sql, |r| {
        let language: String = r.get(3)?;
        Ok((
            r.get(0)?,
            (
                r.get(1)?,
                r.get(2)?,
                Language::from_name(&language).unwrap_or(Language::Text),
            ),
        ))
    })?;
    Ok(files
        .into_iter()
        .map(|((repo, path, language), score)| FileHit {
            repo,
            path,
            language,
            score,
        })
        .collect())
}

/// `(repo, path)` of the files whose normalised name (`tokens::file_stem_key`) is one of
/// `keys`: one probe of the `files_by_stem` index per key.
pub fn files_by_stem(
    conn: &Connection,
    keys: &[String],
    repos: &[String],
    limit: usize,
) -> rusqlite::Result<Vec<(String, String)>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut args: Vec<Value> = keys.iter().map(|k| Value::Text(k.clone())).collect();
    let marks: Vec<String> = (1..=keys.len()).map(|i| format!("?{i}")).collect();
    let mut sql = format!(
        "SELECT r.name, f.path FROM files f JOIN repos r ON r.id = f.repo_id WHERE f.stem IN ({})",
        marks.join(",")
    );
    push_filters(&mut sql, &mut args, repos, None);
    args.push(Value::Integer(limit as i64));
    sql.push_str(&format!(" ORDER BY r.name, f.path LIMIT ?{}", args.len()));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    rows.collect()
}

/// Every file with trigrams, and whether it satisfies `query` (a trigram FTS5 expression).
/// `query`: the FTS5 trigram expression of the requirement; `None` (it requires nothing):
/// every file may match.
pub fn trigram_lookup(
    conn: &Connection,
    query: Option<&str>,
    known_generation: Option<i64>,
) -> rusqlite::Result<quarry_core::TrigramLookup> {
    // One read transaction: the matches and the files belong to the same generation.
    let tx = conn.unchecked_transaction()?;
    let generation: i64 = tx
        .query_row(
            "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'files_generation'",
            [],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let may_match = match query {
        Some(query) => tx
            .prepare_cached("SELECT rowid FROM file_trigrams WHERE file_trigrams MATCH ?1")?
            .query_map([query], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?,
        None => tx
            .prepare_cached("SELECT id FROM files WHERE trigrams = 1")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?,
    };
    let files = if known_generation == Some(generation) {
        None
    } else {
        let mut stmt = tx.prepare_cached(
            "SELECT f.id, r.root, f.path, f.size, f.mtime_ns
             FROM files f JOIN repos r ON r.id = f.repo_id WHERE f.trigrams = 1",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(quarry_core::TrigramFile {
                id: r.get(0)?,
                root: r.get(1)?,
                path: r.get(2)?,
                size: r.get::<_, i64>(3)? as u64,
                mtime_ns: r.get(4)?,
            })
        })?;
        Some(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    };
    tx.finish()?;
    Ok(quarry_core::TrigramLookup {
        generation,
        may_match,
        files,
    })
}

/// Every chunk of one file, in line order; with `first_only`, the first alone.
pub fn file_chunks(
    conn: &Connection,
    repo: &str,
    path: &str,
    first_only: bool,
) -> rusqlite::Result<Vec<ChunkHit>> {
    let sql = format!(
        "SELECT {HIT_COLUMNS} FROM chunks c
         JOIN files f ON f.id = c.file_id
         JOIN repos r ON r.id = f.repo_id
         WHERE r.name = ?1 AND f.path = ?2
         ORDER BY c.page, c.cell, c.start_line{}",
        if first_only { " LIMIT 1" } else { "" }
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([repo, path], |r| hit_from_row(r))?;
    rows.collect()
}

pub fn indexed_symbols(
    conn: &Connection,
    repo: &str,
    path: &str,
) -> rusqlite::Result<Option<(quarry_core::FileState, Vec<quarry_core::Symbol>)>> {
    // One read transaction: the state and the symbols belong to the same indexing of the file.
    let tx = conn.unchecked_transaction()?;
    let file = tx
        .prepare_cached(
            "SELECT f.id, f.hash, f.size, f.mtime_ns FROM files f JOIN repos r ON r.id = f.repo_id
             WHERE r.name = ?1 AND f.path = ?2",
        )?
        .query_row([repo, path], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                quarry_core::FileState {
                    hash: r.get(1)?,
                    size: r.get::<_, i64>(2)? as u64,
                    mtime_ns: r.get(3)?,
                },
            ))
        })
        .optional()?;
    let Some((file_id, state)) = file else {
        return Ok(None);
    };
    let symbols = tx
        .prepare_cached(
            "SELECT name, kind, parent, start_line, end_line, signature FROM symbols
             WHERE file_id = ?1 ORDER BY id",
        )?
        .query_map([file_id], |r| {
            Ok(quarry_core::Symbol {
                name: r.get(0)?,
                kind: r.get(1)?,
                parent: r.get(2)?,
                start_line: r.get(3)?,
                end_line: r.get(4)?,
                signature: r.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some((state, symbols)))
}

pub fn stats(conn: &Connection) -> rusqlite::Result<Vec<RepoStats>> {
    let mut repos = conn.prepare(&format!("SELECT {REPO_COLUMNS} FROM repos ORDER BY name"))?;
    let repos = repos
        .query_map([], repo_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(repos.len());
    for repo in repos {
        let count = |sql: &str| {
            conn.query_row(sql, [repo.id], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
        };
        let files = count("SELECT count(*) FROM files WHERE repo_id = ?1")?;
        let chunks = count(
            "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.repo_id = ?1",
        )?;
        let symbols = count(
            "SELECT count(*) FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.repo_id = ?1",
        )?;
        let mut stmt = conn.prepare_cached(
            "SELECT language, count(*) FROM files WHERE repo_id = ?1 GROUP BY language ORDER BY count(*) DESC",
        )?;
        let languages = stmt
            .query_map([repo.id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?
            .collect::<rusqlite::Result<BTreeMap<_, _>>>()?;
        out.push(RepoStats {
            repo,
            files,
            chunks,
            symbols,
            languages,
        });
    }
    Ok(out)
}
