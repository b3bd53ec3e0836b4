//! Read queries, the PostgreSQL forms of the embedded store's: full-text candidates ranked by
//! BM25 (bm25.rs) with the field weights, kNN by pgvector, and the lookups behind symbols,
//! callers, status and embedding.

use anyhow::Result;
use quarry_core::{
    CallRef, ChunkHit, ContentType, Coverage, FileHit, Language, LexicalQuery, PendingEmbedding,
    RepoStats, SymbolRef, VectorQuery,
};

use crate::bm25::{self, Bm25};
use crate::connection::{PgClient, PgError, Queries};
use crate::filters::{push_filters, push_scope, refs, Params};
use crate::{repo_from_row, vector_text, PgStore, REPO_COLUMNS};

const HIT_COLUMNS: &str = "c.id, r.name, f.path, c.start_line, c.end_line, c.symbol, c.kind, \
     coalesce(c.language, f.language), c.text, c.page, c.cell";

/// The column after `HIT_COLUMNS`.
const SCORE_COLUMN: usize = 11;

fn hit(r: &tokio_postgres::Row, score: f64) -> ChunkHit {
    let language: String = r.get(7);
    ChunkHit {
        id: r.get(0),
        repo: r.get(1),
        path: r.get(2),
        start_line: r.get::<_, i32>(3) as u32,
        end_line: r.get::<_, i32>(4) as u32,
        symbol: r.get(5),
        kind: r.get(6),
        language: Language::from_name(&language).unwrap_or(Language::Text),
        text: r.get(8),
        page: r.get::<_, Option<i32>>(9).map(|p| p as u32),
        cell: r.get::<_, Option<i32>>(10).map(|c| c as u32),
        score,
    }
}

/// The weights of the fields stored as A, B, C (write.rs); D is unused.
fn field_weights(q: &LexicalQuery) -> [f64; 4] {
    [q.weights.path, q.weights.symbol, q.weights.body, 0.0]
}

/// The lexical query's filters; `chunk` is the chunk table's alias (none for file search).
fn push_lexical_filters(
    sql: &mut String,
    params: &mut Params,
    q: &LexicalQuery,
    chunk: Option<&str>,
) {
    push_filters(sql, params, &q.repos, q.path_glob.as_deref());
    push_scope(sql, params, q.language, q.content, chunk);
}

pub fn lexical(store: &PgStore, q: &LexicalQuery) -> Result<Vec<ChunkHit>> {
    if q.terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let ranking = Bm25 {
        terms: &q.terms,
        weights: field_weights(q),
        b: bm25::FTS5_B,
        table: "chunks",
        joins: "JOIN files f ON f.repo_id = t.repo_id AND f.id = t.file_id
                    JOIN repos r ON r.id = t.repo_id",
        columns: &HIT_COLUMNS.replace("c.", "t."),
        tie: "t.id",
        limit: q.limit,
        repos: &q.repos,
        only_weighing_terms: false,
    };
    let filters =
        |sql: &mut String, params: &mut Params| push_lexical_filters(sql, params, q, Some("t"));
    store.with(|c| {
        bm25::ranked(c, &ranking, &filters)
            .map(|rows| rows.iter().map(|r| hit(r, r.get(SCORE_COLUMN))).collect())
    })
}

pub fn files_lexical(store: &PgStore, q: &LexicalQuery) -> Result<Vec<FileHit>> {
    if q.terms.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let ranking = Bm25 {
        terms: &q.terms,
        weights: field_weights(q),
        b: bm25::FTS5_B,
        table: "files",
        // `f` for the filters, which name the file so.
        joins: "JOIN files f ON f.repo_id = t.repo_id AND f.id = t.id
                    JOIN repos r ON r.id = t.repo_id",
        columns: "r.name, f.path, f.language",
        tie: "f.path",
        limit: q.limit,
        repos: &q.repos,
        only_weighing_terms: false,
    };
    let filters =
        |sql: &mut String, params: &mut Params| push_lexical_filters(sql, params, q, None);
    store.with(|c| {
        bm25::ranked(c, &ranking, &filters).map(|rows| {
            rows.iter()
                .map(|r| FileHit {
                    repo: r.get(0),
                    path: r.get(1),
                    language: Language::from_name(&r.get::<_, String>(2)).unwrap_or(Language::Text),
                    score: r.get(3),
                })
                .collect()
        })
    })
}

/// kNN: one query per query vector, each chunk scored by its best cosine. Without path or
/// language filters the HNSW index answers (approximate, `hnsw.ef_search` candidates, a few
/// times `limit`); with them every vector passing the filters is scored exactly, as the
/// embedded store does, so a narrow filter never loses its answers to the index's cut.
pub fn vector(store: &PgStore, q: &VectorQuery, dims: usize) -> Result<Vec<ChunkHit>> {
    if q.vectors.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let mut best: std::collections::HashMap<i64, ChunkHit> = std::collections::HashMap::new();
    let exact = q.language.is_some() || q.path_glob.is_some() || q.content != ContentType::All;
    for v in &q.vectors {
        let mut params: Params = vec![Box::new(vector_text(v))];
        let distance = format!("(e.vector::vector({dims}) <=> $1::text::vector({dims}))");
        let candidates = if exact {
            "embeddings e JOIN repos r ON r.id = e.repo_id".to_string()
        } else {
            let mut inner =
                "(SELECT e.* FROM embeddings e JOIN repos r ON r.id = e.repo_id WHERE true"
                    .to_string();
            if !q.repos.is_empty() {
                params.push(Box::new(q.repos.clone()));
                inner.push_str(&format!(" AND r.name = ANY(${})", params.len()));
            }
            params.push(Box::new((q.limit * 4).max(40) as i64));
            inner.push_str(&format!(
                " ORDER BY {distance} LIMIT ${}) e JOIN repos r ON r.id = e.repo_id",
                params.len()
            ));
            inner
        };
        let mut sql = format!(
            "SELECT {HIT_COLUMNS}, 1 - {distance}
             FROM {candidates}
             JOIN chunks c ON c.repo_id = e.repo_id AND c.embed_hash = e.hash
             JOIN files f ON f.repo_id = c.repo_id AND f.id = c.file_id
             WHERE true"
        );
        push_filters(&mut sql, &mut params, &q.repos, q.path_glob.as_deref());
        push_scope(&mut sql, &mut params, q.language, q.content, Some("c"));
        params.push(Box::new(q.limit as i64));
        sql.push_str(&format!(
            " ORDER BY {distance}, c.id LIMIT ${}",
            params.len()
        ));
        let ef_search = (q.limit * 4).clamp(40, 1000);
        // A repo filter inside the index scan: the nearest `ef_search` vectors may hold too few
        // of a small repo's, so the scan goes on until enough pass (order relaxed: the query
        // sorts again). Measured on 200k real vectors in docs/POSTGRES.md.
        let iterate = if !exact && !q.repos.is_empty() && store.iterative_scans()? {
            "; SET LOCAL hnsw.iterative_scan = relaxed_order"
        } else {
            ""
        };
        let rows = store.with(|c| {
            let mut tx = c.transaction()?;
            tx.batch_execute(&format!("SET LOCAL hnsw.ef_search = {ef_search}{iterate}"))?;
            let rows = tx.query(&sql, &refs(&params))?;
            tx.commit()?;
            Ok(rows)
        })?;
        for r in &rows {
            let score: f64 = r.get(SCORE_COLUMN);
            let chunk = hit(r, score);
            match best.get(&chunk.id) {
                Some(known) if known.score >= score => {}
                _ => {
                    best.insert(chunk.id, chunk);
                }
            }
        }
    }
    let mut hits: Vec<ChunkHit> = best.into_values().collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    hits.truncate(q.limit);
    Ok(hits)
}

pub fn files_by_stem(
    store: &PgStore,
    keys: &[String],
    repos: &[String],
    limit: usize,
) -> Result<Vec<(String, String)>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut params: Params = vec![Box::new(keys.to_vec())];
    let mut sql = String::from(
        "SELECT r.name, f.path FROM files f JOIN repos r ON r.id = f.repo_id WHERE f.stem = ANY($1)",
    );
    push_filters(&mut sql, &mut params, repos, None);
    params.push(Box::new(limit as i64));
    sql.push_str(&format!(" ORDER BY r.name, f.path LIMIT ${}", params.len()));
    store.with(|c| {
        c.query(&sql, &refs(&params))
            .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    })
}

pub fn file_chunks(store: &PgStore, repo: &str, path: &str) -> Result<Vec<ChunkHit>> {
    let sql = format!(
        "SELECT {HIT_COLUMNS} FROM chunks c
         JOIN files f ON f.repo_id = c.repo_id AND f.id = c.file_id
         JOIN repos r ON r.id = c.repo_id
         WHERE r.name = $1 AND f.path = $2 ORDER BY c.page, c.cell, c.start_line, c.id"
    );
    store.with(|c| {
        c.query(&sql, &[&repo, &path])
            .map(|rows| rows.iter().map(|r| hit(r, 0.0)).collect())
    })
}

fn call_ref(r: &tokio_postgres::Row) -> CallRef {
    CallRef {
        repo: r.get(0),
        path: r.get(1),
        caller: r.get(2),
        callee: r.get(3),
        line: r.get::<_, i32>(4) as u32,
    }
}

pub fn callers(
    store: &PgStore,
    name: &str,
    repos: &[String],
    limit: usize,
) -> Result<Vec<CallRef>> {
    let mut params: Params = vec![Box::new(name.to_string())];
    let mut sql = String::from(
        "SELECT r.name, f.path, c.caller, c.callee, c.line
         FROM calls c JOIN files f ON f.repo_id = c.repo_id AND f.id = c.file_id
         JOIN repos r ON r.id = c.repo_id
         WHERE c.callee = $1",
    );
    push_filters(&mut sql, &mut params, repos, None);
    params.push(Box::new(limit as i64));
    sql.push_str(&format!(
        " ORDER BY r.name, f.path, c.line LIMIT ${}",
        params.len()
    ));
    store.with(|c| {
        c.query(&sql, &refs(&params))
            .map(|rows| rows.iter().map(call_ref).collect())
    })
}

pub fn calls_from(
    store: &PgStore,
    repo: &str,
    path: &str,
    caller: &str,
    limit: usize,
) -> Result<Vec<CallRef>> {
    let limit = limit as i64;
    store.with(|c| {
        c.query(
            "SELECT r.name, f.path, c.caller, c.callee, c.line
             FROM repos r JOIN files f ON f.repo_id = r.id
             JOIN calls c ON c.repo_id = f.repo_id AND c.file_id = f.id
             WHERE r.name = $1 AND f.path = $2 AND c.caller = $3
             ORDER BY c.line LIMIT $4",
            &[&repo, &path, &caller, &limit],
        )
        .map(|rows| rows.iter().map(call_ref).collect())
    })
}

pub fn definitions(
    store: &PgStore,
    query: &quarry_core::DefinitionQuery,
) -> Result<Vec<SymbolRef>> {
    let mut params: Params = vec![Box::new(query.name.clone())];
    let mut sql = String::from(
        "SELECT r.name, f.path, s.name, s.parent, s.kind, s.start_line, s.end_line, s.signature,
                f.language
         FROM symbols s JOIN files f ON f.repo_id = s.repo_id AND f.id = s.file_id
         JOIN repos r ON r.id = s.repo_id
         WHERE s.name = $1",
    );
    push_filters(
        &mut sql,
        &mut params,
        &query.repos,
        query.path_glob.as_deref(),
    );
    push_scope(&mut sql, &mut params, query.language, query.content, None);
    params.push(Box::new(query.limit as i64));
    sql.push_str(&format!(
        " ORDER BY r.name, f.path, s.start_line LIMIT ${}",
        params.len()
    ));
    store.with(|c| {
        c.query(&sql, &refs(&params)).map(|rows| {
            rows.iter()
                .map(|r| {
                    let name: String = r.get(2);
                    let parent: Option<String> = r.get(3);
                    let language: String = r.get(8);
                    SymbolRef {
                        repo: r.get(0),
                        path: r.get(1),
                        qualified_name: match &parent {
                            Some(p) => format!("{p}.{name}"),
                            None => name.clone(),
                        },
                        name,
                        kind: r.get(4),
                        start_line: r.get::<_, i32>(5) as u32,
                        end_line: r.get::<_, i32>(6) as u32,
                        signature: r.get(7),
                        language: quarry_core::Language::from_name(&language)
                            .unwrap_or(quarry_core::Language::Text),
                    }
                })
                .collect()
        })
    })
}

pub fn stats(store: &PgStore) -> Result<Vec<RepoStats>> {
    store.with(|c| {
        let repos = c.query(
            &format!("SELECT {REPO_COLUMNS} FROM repos ORDER BY name"),
            &[],
        )?;
        let mut out = Vec::with_capacity(repos.len());
        for row in &repos {
            let repo = repo_from_row(row);
            let count = |c: &mut PgClient, table: &str| -> Result<u64, PgError> {
                c.query_one(
                    &format!("SELECT count(*) FROM {table} WHERE repo_id = $1"),
                    &[&repo.id],
                )
                .map(|r| r.get::<_, i64>(0) as u64)
            };
            let files = count(c, "files")?;
            let chunks = count(c, "chunks")?;
            let symbols = count(c, "symbols")?;
            let languages = c
                .query(
                    "SELECT language, count(*) FROM files WHERE repo_id = $1 GROUP BY language",
                    &[&repo.id],
                )?
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                .collect();
            out.push(RepoStats {
                repo,
                files,
                chunks,
                symbols,
                languages,
            });
        }
        Ok(out)
    })
}

pub fn pending_embeddings(
    store: &PgStore,
    limit: usize,
    after: Option<&str>,
    repos: &[String],
) -> Result<Vec<PendingEmbedding>> {
    let limit = limit as i64;
    let after = after.unwrap_or("");
    let repos = repos.to_vec();
    // The pending rows first, walked in hash order from `after` (chunks_by_hash) until enough
    // are found, then their texts: one query that joined files before ordering read and sorted
    // every chunk for each batch (67 ms a batch on sympy). Four rows per text leave room for
    // texts repeated in several places; fewer texts in a batch only make it smaller.
    store.with(|c| {
        c.query(
            "SELECT DISTINCT ON (c.embed_hash) c.embed_hash, f.path, c.kind, c.symbol, c.signature, c.text
             FROM (SELECT p.repo_id, p.id FROM chunks p
                   WHERE p.embed_hash > $2
                     AND NOT EXISTS (SELECT 1 FROM embeddings e
                                     WHERE e.repo_id = p.repo_id AND e.hash = p.embed_hash)
                     AND (cardinality($3::text[]) = 0
                          OR p.repo_id IN (SELECT id FROM repos WHERE name = ANY($3)))
                   ORDER BY p.embed_hash LIMIT 4 * $1::int8) AS pending
             JOIN chunks c ON c.repo_id = pending.repo_id AND c.id = pending.id
             JOIN files f ON f.repo_id = c.repo_id AND f.id = c.file_id
             ORDER BY c.embed_hash LIMIT $1",
            &[&limit, &after, &repos],
        )
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let (path, kind, symbol, signature, text): (
                        String,
                        String,
                        Option<String>,
                        Option<String>,
                        String,
                    ) = (r.get(1), r.get(2), r.get(3), r.get(4), r.get(5));
                    PendingEmbedding {
                        hash: r.get(0),
                        text: quarry_core::embed_text(&quarry_core::EmbedSource {
                            path: &path,
                            kind: &kind,
                            symbol: symbol.as_deref(),
                            signature: signature.as_deref(),
                            text: &text,
                        }),
                    }
                })
                .collect()
        })
    })
}

pub fn coverage(store: &PgStore, repos: &[String]) -> Result<Coverage> {
    let mut params: Params = Vec::new();
    let mut sql = String::from(
        "SELECT count(*) FILTER (WHERE EXISTS (SELECT 1 FROM embeddings e
                                             WHERE e.repo_id = c.repo_id AND e.hash = c.embed_hash)),
                count(*)
         FROM chunks c JOIN repos r ON r.id = c.repo_id WHERE true",
    );
    if !repos.is_empty() {
        params.push(Box::new(repos.to_vec()));
        sql.push_str(" AND r.name = ANY($1)");
    }
    store.with(|c| {
        c.query_one(&sql, &refs(&params)).map(|r| Coverage {
            embedded: r.get::<_, i64>(0) as u64,
            total: r.get::<_, i64>(1) as u64,
        })
    })
}
