//! Git history on PostgreSQL: the embedded store's commit tables (quarry-store's history.rs
//! and history_vectors.rs) in PostgreSQL's terms. Commits are ranked by the same BM25
//! (bm25.rs) over subject, body, changed paths and patch with the embedded store's weights;
//! every filter (repo, dates, author, path) is in the same statement as the ranking, a
//! pre-filter; commit vectors are scored exactly over the commits that pass the filters.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use quarry_core::history::{
    commit_embed_text, ChangedFile, CommitHit, CommitQuery, CommitRecord, HistoryStats,
    PendingCommit, COMMIT_FIELD_WEIGHTS, COMMIT_LENGTH_NORMALISATION,
};
use quarry_core::tokens;

use crate::bm25::{self, Bm25};
use crate::connection::{PgTransaction, Queries};
use crate::copy_rows::{copy, row};
use crate::filters::{path_regex, push_filters, refs, Params};
use crate::postings;
use crate::term_counts;
use crate::text_vector::{Lexicon, NewEntries, TextVector};
use crate::{vector_text, PgStore};

/// Characters of a stored patch read to build an embedding text (the text keeps ~1 KB).
const PATCH_PREVIEW_CHARS: i32 = 8 * 1024;

/// The columns `hit` reads; the last says whether the commit has a vector (fusion needs to
/// know "not embedded" from "embedded and far").
const HIT_COLUMNS: &str = "r.name, c.sha, c.author, c.email, c.author_time, c.subject,
     c.files_changed, EXISTS(SELECT 1 FROM commit_vectors v
                             WHERE v.repo_id = c.repo_id AND v.commit_id = c.id)";

fn hit(r: &tokio_postgres::Row, score: f64) -> CommitHit {
    CommitHit {
        repo: r.get(0),
        sha: r.get(1),
        author: r.get(2),
        email: r.get(3),
        date: quarry_core::history::format_time(r.get(4)),
        subject: r.get(5),
        files_changed: r.get::<_, i32>(6) as u32,
        score,
        embedded: r.get(7),
        why: None,
    }
}

/// The filters of `q` for `commits c` and `repos r`; `with_path` adds the changed-path one.
fn push_commit_filters(sql: &mut String, params: &mut Params, q: &CommitQuery, with_path: bool) {
    push_filters(sql, params, &q.repos, None);
    if let Some(since) = q.since {
        params.push(Box::new(since));
        sql.push_str(&format!(" AND c.author_time >= ${}", params.len()));
    }
    if let Some(until) = q.until {
        params.push(Box::new(until));
        sql.push_str(&format!(" AND c.author_time <= ${}", params.len()));
    }
    if let Some(author) = &q.author {
        params.push(Box::new(format!(
            "%{}%",
            like_escape(&author.to_lowercase())
        )));
        sql.push_str(&format!(
            " AND (lower(c.author) LIKE ${0} OR lower(c.email) LIKE ${0})",
            params.len()
        ));
    }
    if let (Some(path), true) = (&q.path, with_path) {
        params.push(Box::new(path_regex(path)));
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM commit_files cf
                          WHERE cf.repo_id = c.repo_id AND cf.commit_id = c.id
                            AND (cf.path ~ ${0} OR cf.old_path ~ ${0}))",
            params.len()
        ));
    }
}

fn like_escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// Stores the commits of `repo` not stored yet, in `tx`: COPY straight into place with their
/// text vectors built by quarry, as a batch of files is (write.rs).
pub fn put(
    tx: &mut PgTransaction,
    repo: i64,
    commits: &[CommitRecord],
    lexicon: &mut Lexicon,
) -> Result<()> {
    if commits.is_empty() {
        return Ok(());
    }
    // Already stored (or twice in this batch): the first copy stays, as with INSERT OR IGNORE.
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    let mut seen: HashSet<String> = tx
        .query(
            "SELECT sha FROM commits WHERE repo_id = $1 AND sha = ANY($2)",
            &[&repo, &shas],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let commits: Vec<&CommitRecord> = commits
        .iter()
        .filter(|c| seen.insert(c.sha.clone()))
        .collect();
    if commits.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = tx
        .query(
            "SELECT nextval('quarry_ids') FROM generate_series(1, $1::bigint)",
            &[&(commits.len() as i64)],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let fields: Vec<[String; 4]> = commits
        .iter()
        .map(|c| {
            let mut paths = String::new();
            for f in &c.files {
                paths.push_str(&f.path);
                paths.push(' ');
                if let Some(old) = &f.old_path {
                    paths.push_str(old);
                    paths.push(' ');
                }
            }
            [
                tokens::index_text(&c.subject),
                tokens::index_text(&c.body),
                tokens::index_text(&paths),
                tokens::index_text(&c.patch),
            ]
        })
        .collect();
    lexicon.learn(tx, fields.iter().flatten().map(String::as_str))?;
    crate::write::more_memory(tx)?;
    let (mut commit_rows, mut file_rows) = (Vec::new(), Vec::new());
    let mut entries = NewEntries::default();
    let (mut vector, mut literal) = (TextVector::default(), String::new());
    let repo_text = repo.to_string();
    for ((c, &id), fields) in commits.iter().zip(&ids).zip(&fields) {
        lexicon.vector(
            &[&fields[0], &fields[1], &fields[2], &fields[3]],
            &mut vector,
        );
        let n_tokens: usize = fields.iter().map(|f| tokens::token_count(f)).sum();
        entries.add(id, n_tokens, &vector);
        let id = id.to_string();
        for (ord, f) in c.files.iter().enumerate() {
            row(
                &mut file_rows,
                &[
                    Some(&repo_text),
                    Some(&id),
                    Some(&ord.to_string()),
                    Some(&f.path),
                    f.old_path.as_deref(),
                    Some(&f.status),
                    f.added.map(|n| n.to_string()).as_deref(),
                    f.removed.map(|n| n.to_string()).as_deref(),
                    Some(if f.merged_in { "t" } else { "f" }),
                ],
            );
        }
        row(
            &mut commit_rows,
            &[
                Some(&repo_text),
                Some(&id),
                Some(&c.sha),
                Some(&c.parents.join(" ")),
                Some(&c.author),
                Some(&c.email),
                Some(&c.author_time.to_string()),
                Some(&c.commit_time.to_string()),
                Some(&c.subject),
                Some(&c.body),
                Some(&c.patch),
                Some(if c.patch_truncated { "t" } else { "f" }),
                Some(&c.files.len().to_string()),
                Some(&n_tokens.to_string()),
                Some(vector.literal(lexicon, &mut literal)),
            ],
        );
    }
    copy(
        tx,
        "COPY commits(repo_id, id, sha, parents, author, email, author_time, commit_time, subject,
                      body, patch, patch_truncated, files_changed, n_tokens, tsv) FROM STDIN",
        commit_rows,
    )?;
    copy(
        tx,
        "COPY commit_files(repo_id, commit_id, ord, path, old_path, status, added, removed,
                           merged_in) FROM STDIN",
        file_rows,
    )?;
    let mut blocks = postings::block_numbers(tx, entries.lexemes())?.into_iter();
    postings::write(
        tx,
        repo,
        "commits",
        postings::staged(entries, lexicon, &mut blocks),
    )
}

/// Removes commits no longer reachable, with their files, vectors and BM25 totals.
pub fn drop(tx: &mut PgTransaction, repo: i64, shas: &[String]) -> Result<()> {
    if shas.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = tx
        .query(
            "SELECT id FROM commits WHERE repo_id = $1 AND sha = ANY($2)",
            &[&repo, &shas],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for (table, key) in [
        ("commit_vectors", "commit_id"),
        ("commit_files", "commit_id"),
    ] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE repo_id = $1 AND {key} = ANY($2)"),
            &[&repo, &ids],
        )?;
    }
    term_counts::removed(
        tx,
        "commits",
        "DELETE FROM commits WHERE repo_id = $1 AND id = ANY($2)",
        &[&repo, &ids],
    )?;
    Ok(())
}

pub fn known(store: &PgStore, repo: i64) -> Result<HashSet<String>> {
    store.with(|c| {
        c.query("SELECT sha FROM commits WHERE repo_id = $1", &[&repo])
            .map(|rows| rows.iter().map(|r| r.get(0)).collect())
    })
}

pub fn search(store: &PgStore, q: &CommitQuery) -> Result<Vec<CommitHit>> {
    if !q.terms.is_empty() {
        // `t` for the ranking, `c` for the filters and columns.
        let ranking = Bm25 {
            terms: &q.terms,
            // Subject (A), body (B), changed paths (C) and patch (D), as the embedded store.
            weights: COMMIT_FIELD_WEIGHTS,
            b: COMMIT_LENGTH_NORMALISATION,
            table: "commits",
            joins: "JOIN commits c ON c.repo_id = t.repo_id AND c.id = t.id
                    JOIN repos r ON r.id = t.repo_id",
            columns: HIT_COLUMNS,
            tie: "c.author_time DESC, c.id DESC",
            limit: q.limit.max(1),
            repos: &q.repos,
            only_weighing_terms: true,
        };
        let filters =
            |sql: &mut String, params: &mut Params| push_commit_filters(sql, params, q, true);
        return store.with(|c| {
            bm25::ranked(c, &ranking, &filters)
                .map(|rows| rows.iter().map(|r| hit(r, r.get(8))).collect())
        });
    }
    let (sql, params) = {
        let mut params: Params = Vec::new();
        let mut sql = format!(
            "SELECT {HIT_COLUMNS}, 0::float8 FROM commits c JOIN repos r ON r.id = c.repo_id
             WHERE true"
        );
        push_commit_filters(&mut sql, &mut params, q, true);
        params.push(Box::new(q.limit.max(1) as i64));
        sql.push_str(&format!(
            " ORDER BY c.author_time DESC, c.id DESC LIMIT ${}",
            params.len()
        ));
        (sql, params)
    };
    store.with(|c| {
        c.query(&sql, &refs(&params))
            .map(|rows| rows.iter().map(|r| hit(r, r.get(8))).collect())
    })
}

/// Every path the commits changed, by SHA.
pub fn changed_paths(
    store: &PgStore,
    repo: &str,
    shas: &[String],
) -> Result<HashMap<String, Vec<String>>> {
    let rows = store.with(|c| {
        c.query(
            "SELECT c.sha, cf.path
             FROM commits c JOIN repos r ON r.id = c.repo_id
             JOIN commit_files cf ON cf.repo_id = c.repo_id AND cf.commit_id = c.id
             WHERE c.sha = ANY($2) AND r.name = $1",
            &[&repo, &shas],
        )
    })?;
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for r in &rows {
        out.entry(r.get(0)).or_default().push(r.get(1));
    }
    Ok(out)
}

/// The stored patch of each of the commits, by SHA.
pub fn patches(store: &PgStore, repo: &str, shas: &[String]) -> Result<HashMap<String, String>> {
    let rows = store.with(|c| {
        c.query(
            "SELECT c.sha, c.patch FROM commits c JOIN repos r ON r.id = c.repo_id
             WHERE c.sha = ANY($2) AND r.name = $1",
            &[&repo, &shas],
        )
    })?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

pub fn by_prefix(
    store: &PgStore,
    prefix: &str,
    repos: &[String],
) -> Result<Vec<(String, CommitRecord)>> {
    let prefix = prefix.to_ascii_lowercase();
    // Every SHA with the prefix sorts between the prefix and the prefix followed by 'g'.
    let upper = format!("{prefix}g");
    let rows = store.with(|c| {
        c.query(
            "SELECT c.repo_id, c.id, r.name, c.sha, c.parents, c.author, c.email, c.author_time,
                    c.commit_time, c.subject, c.body, c.patch, c.patch_truncated
             FROM commits c JOIN repos r ON r.id = c.repo_id
             WHERE c.sha >= $1 AND c.sha < $2 AND (cardinality($3::text[]) = 0 OR r.name = ANY($3))
             ORDER BY r.name LIMIT 20",
            &[&prefix, &upper, &repos],
        )
    })?;
    let mut out = Vec::new();
    for r in &rows {
        let (repo_id, id): (i64, i64) = (r.get(0), r.get(1));
        let files = store.with(|c| {
            c.query(
                "SELECT path, old_path, status, added, removed, merged_in FROM commit_files
                 WHERE repo_id = $1 AND commit_id = $2 ORDER BY ord",
                &[&repo_id, &id],
            )
        })?;
        let parents: String = r.get(4);
        out.push((
            r.get(2),
            CommitRecord {
                sha: r.get(3),
                parents: parents.split_whitespace().map(str::to_string).collect(),
                author: r.get(5),
                email: r.get(6),
                author_time: r.get(7),
                commit_time: r.get(8),
                subject: r.get(9),
                body: r.get(10),
                files: files
                    .iter()
                    .map(|f| ChangedFile {
                        path: f.get(0),
                        old_path: f.get(1),
                        status: f.get(2),
                        added: f.get::<_, Option<i32>>(3).map(|n| n as u32),
                        removed: f.get::<_, Option<i32>>(4).map(|n| n as u32),
                        merged_in: f.get(5),
                    })
                    .collect(),
                patch: r.get(11),
                patch_truncated: r.get(12),
            },
        ));
    }
    Ok(out)
}

/// Commits that changed `path` (or anything under it), following renames back in time.
pub fn touches(store: &PgStore, path: &str, q: &CommitQuery) -> Result<Vec<CommitHit>> {
    let path = path.trim_end_matches('/');
    let mut names: Vec<String> = vec![path.to_string()];
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut hits: Vec<(i64, i64, CommitHit)> = Vec::new();
    let mut i = 0;
    while i < names.len() && names.len() <= 64 {
        let name = names[i].clone();
        i += 1;
        // Paths under `name/` sort between "name/" and "name0" ('0' follows '/'): an index
        // range (text_pattern_ops), where a pattern would scan every changed file.
        let mut params: Params = vec![
            Box::new(name.clone()),
            Box::new(format!("{name}/")),
            Box::new(format!("{name}0")),
        ];
        let mut sql = format!(
            "SELECT {HIT_COLUMNS}, c.author_time, c.id, cf.path, cf.old_path, cf.status
             FROM commit_files cf
             JOIN commits c ON c.repo_id = cf.repo_id AND c.id = cf.commit_id
             JOIN repos r ON r.id = c.repo_id
             WHERE (cf.path = $1 OR (cf.path ~>=~ $2 AND cf.path ~<~ $3)
                    OR (cf.old_path = $1 AND cf.status = 'renamed'))
               AND NOT cf.merged_in"
        );
        push_commit_filters(&mut sql, &mut params, q, false);
        let rows = store.with(|c| c.query(&sql, &refs(&params)))?;
        for r in &rows {
            let (file, old, status): (String, Option<String>, String) =
                (r.get(10), r.get(11), r.get(12));
            // A rename into this exact path: older commits knew the file by its old name.
            if status == "renamed" && file == name {
                if let Some(old) = old {
                    if !names.contains(&old) {
                        names.push(old);
                    }
                }
            }
            let hit = hit(r, 0.0);
            if seen.insert((hit.repo.clone(), hit.sha.clone())) {
                hits.push((r.get(8), r.get(9), hit));
            }
        }
    }
    hits.sort_by_key(|h| std::cmp::Reverse((h.0, h.1)));
    Ok(hits
        .into_iter()
        .take(q.limit.max(1))
        .map(|(_, _, h)| h)
        .collect())
}

pub fn set_embedding(store: &PgStore, repo: i64, on: bool) -> Result<()> {
    store.transaction(|tx| {
        tx.execute(
            "UPDATE repos SET embed_history = $2 WHERE id = $1",
            &[&repo, &on],
        )?;
        if !on {
            tx.execute("DELETE FROM commit_vectors WHERE repo_id = $1", &[&repo])?;
        }
        Ok(())
    })
}

pub fn stats(store: &PgStore) -> Result<Vec<HistoryStats>> {
    store.with(|c| {
        c.query(
            "SELECT r.name, r.embed_history,
                    (SELECT count(*) FROM commits c WHERE c.repo_id = r.id),
                    (SELECT count(*) FROM commit_vectors v WHERE v.repo_id = r.id)
             FROM repos r ORDER BY r.name",
            &[],
        )
        .map(|rows| {
            rows.iter()
                .map(|r| HistoryStats {
                    repo: r.get(0),
                    embed: r.get(1),
                    commits: r.get::<_, i64>(2) as u64,
                    embedded: r.get::<_, i64>(3) as u64,
                })
                .collect()
        })
    })
}

pub fn any_vectors(store: &PgStore, repos: &[String]) -> Result<bool> {
    store.with(|c| {
        c.query_one(
            "SELECT EXISTS(SELECT 1 FROM commit_vectors v JOIN repos r ON r.id = v.repo_id
                           WHERE cardinality($1::text[]) = 0 OR r.name = ANY($1))",
            &[&repos],
        )
        .map(|r| r.get(0))
    })
}

/// The commits of repos with embedding on within the embedding bound (the newest `$1` of
/// each repo, by author time) that have no vector yet.
const WAITING: &str = "
    SELECT c.repo_id, c.id FROM (
        SELECT c.repo_id, c.id, row_number() OVER (
            PARTITION BY c.repo_id ORDER BY c.author_time DESC, c.id DESC) AS n
        FROM commits c JOIN repos r ON r.id = c.repo_id
        WHERE r.embed_history AND (cardinality($2::text[]) = 0 OR r.name = ANY($2))) c
    WHERE c.n <= $1 AND NOT EXISTS (
        SELECT 1 FROM commit_vectors v WHERE v.repo_id = c.repo_id AND v.commit_id = c.id)";

fn bound(newest: Option<u64>) -> i64 {
    newest.map_or(i64::MAX, |n| n.min(i64::MAX as u64) as i64)
}

pub fn waiting(store: &PgStore, newest: Option<u64>, repos: &[String]) -> Result<u64> {
    let repos = repos.to_vec();
    store.with(|c| {
        c.query_one(
            &format!("SELECT count(*) FROM ({WAITING}) w"),
            &[&bound(newest), &repos],
        )
        .map(|r| r.get::<_, i64>(0) as u64)
    })
}

pub fn pending(
    store: &PgStore,
    limit: usize,
    newest: Option<u64>,
    repos: &[String],
) -> Result<Vec<PendingCommit>> {
    let repos = repos.to_vec();
    let rows = store.with(|c| {
        c.query(
            &format!(
                "SELECT c.id, c.subject, c.body, substr(c.patch, 1, $4),
                        (SELECT string_agg(cf.path, E'\\n' ORDER BY cf.ord) FROM commit_files cf
                         WHERE cf.repo_id = c.repo_id AND cf.commit_id = c.id)
                 FROM ({WAITING}) w JOIN commits c ON c.repo_id = w.repo_id AND c.id = w.id
                 ORDER BY c.author_time DESC, c.id DESC LIMIT $3"
            ),
            &[
                &bound(newest),
                &repos,
                &(limit as i64),
                &PATCH_PREVIEW_CHARS,
            ],
        )
    })?;
    Ok(rows
        .iter()
        .map(|r| {
            let paths: Option<String> = r.get(4);
            let paths = paths.unwrap_or_default();
            let paths: Vec<&str> = paths.lines().collect();
            PendingCommit {
                id: r.get(0),
                text: commit_embed_text(r.get(1), r.get(2), &paths, r.get(3)),
            }
        })
        .collect())
}

/// Stores commit vectors; a commit dropped (history rewritten) while its vector was being
/// made is skipped.
pub fn put_vectors(store: &PgStore, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
    if vectors.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = vectors.iter().map(|(id, _)| *id).collect();
    let texts: Vec<String> = vectors.iter().map(|(_, v)| vector_text(v)).collect();
    store.transaction(|tx| {
        tx.execute(
            "INSERT INTO commit_vectors(repo_id, commit_id, vector)
             SELECT c.repo_id, c.id, u.vector::vector
             FROM unnest($1::bigint[], $2::text[]) AS u(id, vector) JOIN commits c ON c.id = u.id
             ON CONFLICT (repo_id, commit_id) DO UPDATE SET vector = excluded.vector",
            &[&ids, &texts],
        )?;
        Ok(())
    })
}

/// The commits nearest to `vector` among those passing the filters, scored exactly (the
/// filters run first; commits are few beside chunks).
pub fn search_vectors(store: &PgStore, vector: &[f32], q: &CommitQuery) -> Result<Vec<CommitHit>> {
    if vector.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let mut params: Params = vec![Box::new(vector_text(vector)), Box::new(vector.len() as i32)];
    let mut sql = format!(
        "SELECT {HIT_COLUMNS}, 1 - (v.vector <=> $1::text::vector)
         FROM commit_vectors v
         JOIN commits c ON c.repo_id = v.repo_id AND c.id = v.commit_id
         JOIN repos r ON r.id = c.repo_id
         WHERE vector_dims(v.vector) = $2"
    );
    push_commit_filters(&mut sql, &mut params, q, true);
    params.push(Box::new(q.limit as i64));
    sql.push_str(&format!(
        " ORDER BY v.vector <=> $1::text::vector, c.id LIMIT ${}",
        params.len()
    ));
    store.with(|c| {
        c.query(&sql, &refs(&params))
            .map(|rows| rows.iter().map(|r| hit(r, r.get(8))).collect())
    })
}
