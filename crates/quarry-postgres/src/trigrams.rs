//! `quarry grep`'s pre-filter on PostgreSQL: each indexed file's exact text in `file_texts`
//! under a pg_trgm GIN index, so a requirement's strings (quarry-grep's reading of the
//! pattern) become `ILIKE '%…%'` conditions the index answers; the files it rules out are never
//! read. The embedded store does the same with an FTS5 trigram table.
//!
//! The generation that tells a caller its kept file list is stale is built from every repo's
//! own counter (`repos.files_generation`, moved by each write of that repo's files): writers of
//! different repos never touch one shared row, so they do not wait for each other.

use anyhow::Result;
use quarry_core::{Requirement, TrigramFile, TrigramLookup};
use std::hash::{Hash, Hasher};

use crate::connection::Queries;
use crate::PgStore;

/// The condition on `t.text` that holds for every text satisfying `required`, with its
/// parameters (the strings, escaped for LIKE); `None` when it requires nothing.
fn condition(required: &Requirement, params: &mut Vec<String>) -> Option<String> {
    match required {
        Requirement::Anything => None,
        Requirement::Contains(s) => {
            // Case folded, as the embedded store's trigram table is: a filter may only be
            // weaker than the pattern (`-i` included).
            let escaped = s
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            params.push(format!("%{escaped}%"));
            Some(format!("t.text ILIKE ${}", params.len()))
        }
        Requirement::All(parts) => {
            let kept: Vec<String> = parts.iter().filter_map(|p| condition(p, params)).collect();
            (!kept.is_empty()).then(|| format!("({})", kept.join(" AND ")))
        }
        Requirement::Any(options) => {
            let mut each = Vec::new();
            for option in options {
                each.push(condition(option, params)?);
            }
            Some(format!("({})", each.join(" OR ")))
        }
    }
}

pub fn lookup(
    store: &PgStore,
    required: &Requirement,
    known_generation: Option<i64>,
) -> Result<TrigramLookup> {
    let mut params = Vec::new();
    let condition = condition(required, &mut params).unwrap_or_else(|| "true".into());
    store.with(|c| {
        // One snapshot: the matches and the files belong to the same generation.
        let mut tx = c.transaction()?;
        tx.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for row in tx.query("SELECT id, files_generation FROM repos ORDER BY id", &[])? {
            (row.get::<_, i64>(0), row.get::<_, i64>(1)).hash(&mut hasher);
        }
        let generation = hasher.finish() as i64;
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let may_match = tx
            .query(
                &format!("SELECT t.file_id FROM file_texts t WHERE {condition}"),
                &refs,
            )?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let files = if known_generation == Some(generation) {
            None
        } else {
            let rows = tx.query(
                "SELECT f.id, r.root, f.path, f.size, f.mtime_ns
                 FROM file_texts t
                 JOIN files f ON f.repo_id = t.repo_id AND f.id = t.file_id
                 JOIN repos r ON r.id = f.repo_id",
                &[],
            )?;
            Some(
                rows.iter()
                    .map(|r| TrigramFile {
                        id: r.get(0),
                        root: r.get(1),
                        path: r.get(2),
                        size: r.get::<_, i64>(3) as u64,
                        mtime_ns: r.get(4),
                    })
                    .collect(),
            )
        };
        tx.commit()?;
        Ok(TrigramLookup {
            generation,
            may_match,
            files,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_wildcards_in_the_strings_are_plain_characters() {
        let mut params = Vec::new();
        let required = Requirement::Any(vec![
            Requirement::Contains("50%_off\\".into()),
            Requirement::All(vec![
                Requirement::Contains("abc".into()),
                Requirement::Anything,
            ]),
        ]);
        assert_eq!(
            condition(&required, &mut params).as_deref(),
            Some("(t.text ILIKE $1 OR (t.text ILIKE $2))")
        );
        assert_eq!(params, ["%50\\%\\_off\\\\%", "%abc%"]);
        let open = Requirement::Any(vec![
            Requirement::Contains("abc".into()),
            Requirement::Anything,
        ]);
        assert_eq!(condition(&open, &mut Vec::new()), None);
    }
}
