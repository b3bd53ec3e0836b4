//! Chunk embeddings in the same SQLite file: one vector per distinct embedding text
//! (`chunks.embed_hash` → `embeddings`), little-endian f32, unit length.
//!
//! Nearest-neighbour search is exact: one sequential scan of the vectors scores them all, then
//! the best are mapped to chunks that pass the filters, in score order, until enough are found.
//! Written by hand because at a repository's scale (tens of thousands of chunks, a few MB of
//! vectors) an exact scan answers in milliseconds, filters exactly, and needs no extension or
//! second file; an approximate index (HNSW) belongs to the PostgreSQL backend.

use crate::search::{hit_from_row, push_filters, HIT_COLUMNS};
use quarry_core::{ChunkHit, Coverage, PendingEmbedding, VectorQuery};
use rusqlite::{params, types::Value, Connection, OptionalExtension};

pub(crate) const MODEL_KEY: &str = "embedding_model";

pub fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Appends a stored vector (what `encode` wrote) to `out`, decoded.
pub(crate) fn decode_into(blob: &[u8], out: &mut Vec<f32>) {
    out.extend(
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    );
}

/// Dot product of a stored vector (little-endian f32 bytes) with the query. Eight independent
/// sums let the compiler use SIMD lanes (one running sum forces strict left-to-right adds);
/// the scan over every stored vector is most of a semantic search's time.
pub(crate) fn dot(blob: &[u8], query: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0f32; LANES];
    let blocks = blob.chunks_exact(4 * LANES).zip(query.chunks_exact(LANES));
    for (b, q) in blocks {
        for i in 0..LANES {
            let x = f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
            acc[i] += x * q[i];
        }
    }
    let done = query.len() / LANES * LANES;
    let tail: f32 = blob[done * 4..]
        .chunks_exact(4)
        .zip(&query[done..])
        .map(|(b, q)| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * q)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// `dot` over a vector already decoded: the same lanes in the same order, so the same sum to
/// the last bit (a resident matrix scores exactly as the scan does).
pub(crate) fn dot_decoded(stored: &[f32], query: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0f32; LANES];
    for (s, q) in stored.chunks_exact(LANES).zip(query.chunks_exact(LANES)) {
        for i in 0..LANES {
            acc[i] += s[i] * q[i];
        }
    }
    let done = query.len() / LANES * LANES;
    let tail: f32 = stored[done..]
        .iter()
        .zip(&query[done..])
        .map(|(s, q)| s * q)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// Whether vectors stay in memory between searches (`keep_in_memory`).
pub(crate) static KEEP_RESIDENT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Most vector components kept in memory per matrix, chunks' and commits' each (about 380 MB:
/// 250,000 vectors of MiniLM's 384 dims, 125,000 of EmbeddingGemma's 768); a bigger index is
/// scanned each time.
pub(crate) const MAX_RESIDENT_FLOATS: usize = 250_000 * 384;

/// The vectors of one index file, decoded, as of one state of its `embeddings` table.
struct Resident {
    /// The index file's path, device and inode: a rebuilt index is another file.
    file: (String, u64, u64),
    /// `max(id)` of `embeddings`: any vector added or replaced raises it. A vector deleted
    /// since only stays scored; its chunk is gone, so it is never an answer.
    max_id: Option<i64>,
    dims: usize,
    ids: Vec<i64>,
    data: Vec<f32>,
}

static RESIDENT: std::sync::Mutex<Option<std::sync::Arc<Resident>>> = std::sync::Mutex::new(None);

/// Keeps the vectors of the index in memory between searches, for a long-lived process (the
/// workspace daemon): a semantic search then scores a matrix instead of reading and decoding
/// every vector from SQLite (sympy, 36k vectors: most of a warm hybrid search). Each search
/// checks the matrix is still the index's (same file, same newest vector) and reloads it if
/// not. Off by default: a process that searches once gains nothing from keeping them.
pub(crate) fn keep_in_memory(on: bool) {
    KEEP_RESIDENT.store(on, std::sync::atomic::Ordering::SeqCst);
    if !on {
        *RESIDENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

#[cfg(unix)]
pub(crate) fn file_identity(conn: &Connection) -> Option<(String, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let path = conn.path().filter(|p| !p.is_empty())?;
    let meta = std::fs::metadata(path).ok()?;
    Some((path.to_string(), meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub(crate) fn file_identity(_conn: &Connection) -> Option<(String, u64, u64)> {
    None
}

/// The resident matrix for `conn`'s index, loaded or refreshed as needed; `None` when vectors
/// are not kept in memory (or too many to keep).
fn resident(conn: &Connection, dims: usize) -> rusqlite::Result<Option<std::sync::Arc<Resident>>> {
    if !KEEP_RESIDENT.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(None);
    }
    let Some(file) = file_identity(conn) else {
        return Ok(None);
    };
    let max_id: Option<i64> = conn.query_row("SELECT max(id) FROM embeddings", [], |r| r.get(0))?;
    let mut slot = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = slot.as_ref() {
        if m.file == file && m.max_id == max_id && m.dims == dims {
            return Ok(Some(m.clone()));
        }
    }
    *slot = None;
    let (mut ids, mut data) = (Vec::new(), Vec::new());
    let mut stmt = conn.prepare_cached("SELECT id, vector FROM embeddings")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let blob = row.get_ref(1)?.as_blob()?;
        if blob.len() == dims * 4 {
            if data.len() + dims > MAX_RESIDENT_FLOATS {
                return Ok(None);
            }
            ids.push(row.get(0)?);
            decode_into(blob, &mut data);
        }
    }
    let m = std::sync::Arc::new(Resident {
        file,
        max_id,
        dims,
        ids,
        data,
    });
    *slot = Some(m.clone());
    Ok(Some(m))
}

pub fn model(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [MODEL_KEY], |r| {
        r.get(0)
    })
    .optional()
}

pub fn set_model(conn: &mut Connection, fingerprint: &str) -> rusqlite::Result<bool> {
    let current = model(conn)?;
    if current.as_deref() == Some(fingerprint) {
        return Ok(false);
    }
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM embeddings", [])?;
    tx.execute("DELETE FROM commit_vectors", [])?;
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![MODEL_KEY, fingerprint],
    )?;
    refresh_coverage(&tx)?;
    tx.commit()?;
    Ok(current.is_some())
}

pub fn pending(
    conn: &Connection,
    limit: usize,
    after: Option<&str>,
    repos: &[String],
) -> rusqlite::Result<Vec<PendingEmbedding>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.embed_hash, f.path, c.kind, c.symbol, c.signature, c.text
         FROM chunks c JOIN files f ON f.id = c.file_id
         WHERE c.embed_hash > ?2
           AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.embed_hash)
           AND (?3 = '[]' OR f.repo_id IN (
                SELECT id FROM repos WHERE name IN (SELECT value FROM json_each(?3))))
         GROUP BY c.embed_hash
         ORDER BY c.embed_hash
         LIMIT ?1",
    )?;
    let repos = crate::repo_list(repos);
    let rows = stmt.query_map(params![limit as i64, after.unwrap_or(""), repos], |r| {
        let (path, kind, symbol, signature, text): (
            String,
            String,
            Option<String>,
            Option<String>,
            String,
        ) = (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?);
        Ok(PendingEmbedding {
            hash: r.get(0)?,
            text: quarry_core::embed_text(&quarry_core::EmbedSource {
                path: &path,
                kind: &kind,
                symbol: symbol.as_deref(),
                signature: signature.as_deref(),
                text: &text,
            }),
        })
    })?;
    rows.collect()
}

pub fn put(conn: &mut Connection, vectors: &[(String, Vec<f32>)]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let mut added = Vec::new();
    {
        let mut stored = tx.prepare_cached("SELECT 1 FROM embeddings WHERE hash = ?1")?;
        let mut insert =
            tx.prepare_cached("INSERT OR REPLACE INTO embeddings(hash, vector) VALUES (?1, ?2)")?;
        for (hash, vector) in vectors {
            if !stored.exists([hash])? {
                added.push(hash.as_str());
            }
            insert.execute(params![hash, encode(vector)])?;
        }
    }
    add_to_coverage(&tx, &added)?;
    tx.commit()
}

/// Counts the chunks of newly embedded `hashes` into the coverage cache, repo by repo. A
/// backfill stores a batch of 128 at a time: recounting the whole index after each (40 ms on
/// sympy) cost a third of an index run on a GPU, where a batch embeds in 40 ms. Without a
/// cache, or with a repo it does not know, it recounts everything as before.
fn add_to_coverage(conn: &Connection, hashes: &[&str]) -> rusqlite::Result<()> {
    let Some(mut map) = cached_coverage(conn)? else {
        return refresh_coverage(conn);
    };
    let mut chunks = conn.prepare_cached(
        "SELECT r.name, count(*) FROM chunks c JOIN files f ON f.id = c.file_id
         JOIN repos r ON r.id = f.repo_id WHERE c.embed_hash = ?1 GROUP BY r.id",
    )?;
    for hash in hashes {
        let counts = chunks
            .query_map([hash], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (repo, n) in counts {
            let Some(embedded) = map
                .get_mut(&repo)
                .and_then(|v| v.as_array_mut())
                .and_then(|pair| pair.first_mut())
            else {
                return refresh_coverage(conn);
            };
            *embedded = serde_json::json!(embedded.as_i64().unwrap_or(0) + n);
        }
    }
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![COVERAGE_KEY, serde_json::Value::Object(map).to_string()],
    )?;
    Ok(())
}

/// Drops vectors no chunk refers to any more.
pub fn prune(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute("DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.embed_hash = embeddings.hash)", [])
}

/// `meta` key of the per-repo coverage cache: `{"repo name": [embedded, total]}`. Counting
/// it live joins every chunk to the vectors (30 ms on sympy, more than the kNN scan), and
/// every semantic search reports it; so writers keep it current — every backfill batch and
/// every finished index run refresh it, and an index batch drops it until the run finishes.
const COVERAGE_KEY: &str = "coverage";

pub(crate) fn count_coverage(conn: &Connection, repos: &[String]) -> rusqlite::Result<Coverage> {
    let mut sql = String::from(
        "SELECT count(*), count(e.hash)
         FROM chunks c JOIN files f ON f.id = c.file_id JOIN repos r ON r.id = f.repo_id
         LEFT JOIN embeddings e ON e.hash = c.embed_hash
         WHERE 1",
    );
    let mut args = Vec::new();
    push_filters(&mut sql, &mut args, repos, None);
    conn.query_row(&sql, rusqlite::params_from_iter(args), |r| {
        Ok(Coverage {
            total: r.get::<_, i64>(0)? as u64,
            embedded: r.get::<_, i64>(1)? as u64,
        })
    })
}

/// Recounts every repo's coverage into the cache (writers call this).
pub fn refresh_coverage(conn: &Connection) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.name, count(c.id), count(e.hash)
         FROM repos r LEFT JOIN files f ON f.repo_id = r.id
         LEFT JOIN chunks c ON c.file_id = f.id
         LEFT JOIN embeddings e ON e.hash = c.embed_hash
         GROUP BY r.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(1)?,
        ))
    })?;
    let mut map = serde_json::Map::new();
    for row in rows {
        let (name, embedded, total) = row?;
        map.insert(name, serde_json::json!([embedded, total]));
    }
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![COVERAGE_KEY, serde_json::Value::Object(map).to_string()],
    )?;
    Ok(())
}

/// The coverage cache, repo name → `[embedded, total]`, if there is a readable one.
fn cached_coverage(
    conn: &Connection,
) -> rusqlite::Result<Option<serde_json::Map<String, serde_json::Value>>> {
    let cached: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [COVERAGE_KEY],
            |r| r.get(0),
        )
        .optional()?;
    Ok(cached.and_then(|v| serde_json::from_str(&v).ok()))
}

/// Drops the cache: the index is changing and counts would be stale.
pub fn invalidate_coverage(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM meta WHERE key = ?1", [COVERAGE_KEY])?;
    Ok(())
}

pub fn coverage(conn: &Connection, repos: &[String]) -> rusqlite::Result<Coverage> {
    if let Some(map) = cached_coverage(conn)? {
        let mut sum = Coverage {
            total: 0,
            embedded: 0,
        };
        let wanted: Vec<&String> = if repos.is_empty() {
            map.keys().collect()
        } else {
            repos.iter().collect()
        };
        let complete = wanted.iter().all(|name| {
            let Some(pair) = map.get(*name).and_then(|v| v.as_array()) else {
                return false;
            };
            sum.embedded += pair.first().and_then(|v| v.as_u64()).unwrap_or(0);
            sum.total += pair.get(1).and_then(|v| v.as_u64()).unwrap_or(0);
            true
        });
        if complete {
            return Ok(sum);
        }
    }
    count_coverage(conn, repos)
}

pub fn search(conn: &Connection, q: &VectorQuery) -> rusqlite::Result<Vec<ChunkHit>> {
    let Some(dims) = q.vectors.first().map(Vec::len) else {
        return Ok(Vec::new());
    };
    if q.limit == 0 || dims == 0 || q.vectors.iter().any(|v| v.len() != dims) {
        return Ok(Vec::new());
    }
    let mut scored: Vec<(f32, i64)> = Vec::new();
    if let Some(m) = resident(conn, dims)? {
        scored.reserve(m.ids.len());
        for (id, stored) in m.ids.iter().zip(m.data.chunks_exact(dims)) {
            let best = q
                .vectors
                .iter()
                .map(|v| dot_decoded(stored, v))
                .fold(f32::MIN, f32::max);
            scored.push((best, *id));
        }
    } else {
        let mut stmt = conn.prepare_cached("SELECT id, vector FROM embeddings")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let blob = row.get_ref(1)?.as_blob()?;
            if blob.len() == dims * 4 {
                let best = q
                    .vectors
                    .iter()
                    .map(|v| dot(blob, v))
                    .fold(f32::MIN, f32::max);
                scored.push((best, row.get(0)?));
            }
        }
    }
    scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));

    let mut sql = format!(
        "SELECT {HIT_COLUMNS} FROM embeddings e
         JOIN chunks c ON c.embed_hash = e.hash
         JOIN files f ON f.id = c.file_id
         JOIN repos r ON r.id = f.repo_id
         WHERE e.id = ?1"
    );
    let mut args: Vec<Value> = vec![Value::Null];
    push_filters(&mut sql, &mut args, &q.repos, q.path_glob.as_deref());
    crate::search::push_scope(&mut sql, &mut args, q.language, q.content, true);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut hits = Vec::with_capacity(q.limit);
    for (score, id) in scored {
        args[0] = Value::Integer(id);
        let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
        while let Some(row) = rows.next()? {
            let mut hit = hit_from_row(row)?;
            hit.score = score as f64;
            hits.push(hit);
        }
        if hits.len() >= q.limit {
            hits.truncate(q.limit);
            break;
        }
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoded_vector_scores_exactly_as_its_bytes() {
        for len in [0, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            assert_eq!(
                dot(&encode(&a), &b).to_bits(),
                dot_decoded(&a, &b).to_bits()
            );
        }
    }

    #[test]
    fn dot_matches_the_plain_sum_for_any_length() {
        for len in [0, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&encode(&a), &b) - plain).abs() < 1e-4, "len {len}");
        }
    }
}
