//! Versioned migrations, as in the embedded store: `quarry_meta.schema_version` says which
//! have run; each runs in the transaction that records it, under an advisory lock so two
//! `quarry` processes never apply one twice; a database written by a newer quarry is refused.
//!
//! Made for sharding: every table but `repos` and `quarry_meta` carries `repo_id` and leads
//! its keys with it, and no foreign key crosses repos, so Citus can distribute them all by
//! `repo_id` (docs/POSTGRES.md) with `repos` as a reference table.

use crate::connection::{PgClient, Queries};
use anyhow::{bail, Context, Result};

/// Held while migrating (any number: it names quarry's migration lock).
const MIGRATION_LOCK: i64 = 0x7175_6172_7279;

/// How long a migration of stored rows may run (each search's calls keep `store.timeout_s`).
const MIGRATION_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3600);

const MIGRATIONS: &[&str] = &[
    // 1: repos, files, chunks, symbols, calls and vectors.
    r#"
    CREATE TABLE quarry_meta(key text PRIMARY KEY, value text NOT NULL);
    CREATE SEQUENCE quarry_ids;
    -- Porter stemming without stop words, as the embedded store's FTS5 tokenizer does; the
    -- code-aware splitting (camelCase, snake_case) happens in quarry before the text arrives.
    CREATE TEXT SEARCH DICTIONARY quarry_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION quarry (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION quarry
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH quarry_stem;
    CREATE TABLE repos(
        id bigint PRIMARY KEY,
        name text NOT NULL UNIQUE,
        root text NOT NULL UNIQUE,
        indexed_at bigint,
        file_count bigint NOT NULL DEFAULT 0,
        chunk_count bigint NOT NULL DEFAULT 0,
        skipped text NOT NULL DEFAULT '{}',
        history_head text,
        embed_history boolean NOT NULL DEFAULT true
    );
    CREATE TABLE files(
        repo_id bigint NOT NULL,
        id bigint NOT NULL,
        path text NOT NULL,
        language text NOT NULL,
        hash text NOT NULL,
        size bigint NOT NULL,
        mtime_ns bigint NOT NULL,
        stem text,
        tsv tsvector NOT NULL,
        PRIMARY KEY (repo_id, id),
        UNIQUE (repo_id, path)
    );
    CREATE INDEX files_by_stem ON files(stem);
    CREATE INDEX files_tsv ON files USING gin(tsv);
    CREATE TABLE chunks(
        repo_id bigint NOT NULL,
        id bigint NOT NULL,
        file_id bigint NOT NULL,
        start_line integer NOT NULL,
        end_line integer NOT NULL,
        symbol text,
        kind text NOT NULL,
        parent text,
        signature text,
        text text NOT NULL,
        embed_hash text NOT NULL,
        tsv tsvector NOT NULL,
        PRIMARY KEY (repo_id, id)
    );
    CREATE INDEX chunks_by_file ON chunks(repo_id, file_id);
    CREATE INDEX chunks_by_embed_hash ON chunks(embed_hash);
    CREATE INDEX chunks_tsv ON chunks USING gin(tsv);
    CREATE TABLE symbols(
        repo_id bigint NOT NULL,
        file_id bigint NOT NULL,
        name text NOT NULL,
        kind text NOT NULL,
        parent text,
        start_line integer NOT NULL,
        end_line integer NOT NULL,
        signature text
    );
    CREATE INDEX symbols_by_name ON symbols(name);
    CREATE INDEX symbols_by_file ON symbols(repo_id, file_id);
    CREATE TABLE calls(
        repo_id bigint NOT NULL,
        file_id bigint NOT NULL,
        caller text,
        callee text NOT NULL,
        line integer NOT NULL
    );
    CREATE INDEX calls_by_callee ON calls(callee);
    CREATE INDEX calls_by_file ON calls(repo_id, file_id);
    -- One vector per distinct embedding text per repo. The column has no dimension until the
    -- first vector arrives: the HNSW index is then made for that dimension (store.rs).
    CREATE TABLE embeddings(
        repo_id bigint NOT NULL,
        hash text NOT NULL,
        vector vector NOT NULL,
        PRIMARY KEY (repo_id, hash)
    );
    "#,
    // 2: what BM25 needs beyond the text vectors: each row's token count, and per repo the
    // number of rows and tokens (read.rs), kept by the writing transaction (write.rs).
    r#"
    ALTER TABLE chunks ADD COLUMN n_tokens integer NOT NULL DEFAULT 0;
    ALTER TABLE files ADD COLUMN n_tokens integer NOT NULL DEFAULT 0;
    -- Rows written before this version count their stored positions (at most 256 per word).
    UPDATE chunks SET n_tokens = (SELECT coalesce(sum(array_length(positions, 1)), 0) FROM unnest(tsv));
    UPDATE files SET n_tokens = (SELECT coalesce(sum(array_length(positions, 1)), 0) FROM unnest(tsv));
    CREATE TABLE fts_totals(
        repo_id bigint NOT NULL,
        kind text NOT NULL,
        docs bigint NOT NULL,
        tokens bigint NOT NULL,
        PRIMARY KEY (repo_id, kind)
    );
    INSERT INTO fts_totals SELECT repo_id, 'chunks', count(*), sum(n_tokens) FROM chunks GROUP BY repo_id;
    INSERT INTO fts_totals SELECT repo_id, 'files', count(*), sum(n_tokens) FROM files GROUP BY repo_id;
    "#,
    // 3: git history — commits (BM25 over subject A, body B, changed paths C, patch D), the
    // files each changed, and one vector per commit.
    r#"
    CREATE TABLE commits(
        repo_id bigint NOT NULL,
        id bigint NOT NULL,
        sha text NOT NULL,
        parents text NOT NULL,
        author text NOT NULL,
        email text NOT NULL,
        author_time bigint NOT NULL,
        commit_time bigint NOT NULL,
        subject text NOT NULL,
        body text NOT NULL,
        patch text NOT NULL,
        patch_truncated boolean NOT NULL,
        files_changed integer NOT NULL,
        n_tokens integer NOT NULL,
        tsv tsvector NOT NULL,
        PRIMARY KEY (repo_id, id),
        UNIQUE (repo_id, sha)
    );
    CREATE INDEX commits_by_id ON commits(id);
    CREATE INDEX commits_by_sha ON commits(sha text_pattern_ops);
    CREATE INDEX commits_by_time ON commits(repo_id, author_time);
    CREATE INDEX commits_tsv ON commits USING gin(tsv);
    CREATE TABLE commit_files(
        repo_id bigint NOT NULL,
        commit_id bigint NOT NULL,
        ord integer NOT NULL,
        path text NOT NULL,
        old_path text,
        status text NOT NULL,
        added integer,
        removed integer
    );
    CREATE INDEX commit_files_by_commit ON commit_files(repo_id, commit_id);
    CREATE INDEX commit_files_by_path ON commit_files(path text_pattern_ops);
    CREATE TABLE commit_vectors(
        repo_id bigint NOT NULL,
        commit_id bigint NOT NULL,
        vector vector NOT NULL,
        PRIMARY KEY (repo_id, commit_id)
    );
    -- Vectors are found per repo by text hash (kNN's join, pruning).
    DROP INDEX chunks_by_embed_hash;
    CREATE INDEX chunks_by_embed_hash ON chunks(repo_id, embed_hash);
    "#,
    // 4: documents beside code: a chunk's own language (NULL: its file's; a notebook's cells
    // differ), its PDF page and notebook cell. reStructuredText, AsciiDoc, notebooks and
    // titled text were stored as `text` line windows before: re-read them.
    r#"
    ALTER TABLE chunks ADD COLUMN language text, ADD COLUMN page integer, ADD COLUMN cell integer;
    UPDATE files SET hash = '', mtime_ns = 0 WHERE language = 'text';
    "#,
    // 5: history as `git log -- PATH` reads it: a merge's change that came with the merged
    // branch is marked, and a rename away from a path is found by that path.
    r#"
    ALTER TABLE commit_files ADD COLUMN merged_in boolean NOT NULL DEFAULT false;
    CREATE INDEX commit_files_by_old_path ON commit_files(old_path) WHERE old_path IS NOT NULL;
    "#,
    // 6: `quarry grep`'s pre-filter (trigrams.rs): each file's distinct trigrams, hashed, under
    // a GIN index, and per repo a counter its file writes move. Files indexed before have no
    // trigrams here: grep reads them itself until they are indexed again.
    r#"
    CREATE TABLE file_grams(
        repo_id bigint NOT NULL,
        file_id bigint NOT NULL,
        grams integer[] NOT NULL,
        PRIMARY KEY (repo_id, file_id)
    );
    CREATE INDEX file_grams_gin ON file_grams USING gin (grams);
    ALTER TABLE repos ADD COLUMN files_generation bigint NOT NULL DEFAULT 0;
    "#,
    // 7: each lexeme's document count per kind and repo, for BM25's IDF without reading the
    // rows (term_counts.rs).
    crate::term_counts::MIGRATION,
    // 8: each lexeme's rows with their field counts and lengths, so that ranking reads lists,
    // not rows (postings.rs).
    crate::postings::MIGRATION,
    // 9: chunks in the order of their embedding text's hash across repos, for the backfill's
    // pending texts (read.rs: each batch from after the last) and for storing a vector by hash;
    // `(repo_id, embed_hash)` gives neither order nor a lookup by hash alone. ~1% of ingest.
    "CREATE INDEX IF NOT EXISTS chunks_by_hash ON chunks(embed_hash);",
    // 10: posting lists stored uncompressed (blocks written from here on): pglz found little
    // to take from arrays of ids and counts and cost a quarter of writing them (one sympy
    // copy's blocks: 5.4 → 3.9 s of COPY, 10% more space; bench/pg_scale.py).
    "ALTER TABLE fts_postings ALTER COLUMN ids SET STORAGE EXTERNAL,
                             ALTER COLUMN stats SET STORAGE EXTERNAL;",
    // 11: grep's trigram arrays in 16 partitions by repo, each with its own GIN index: every
    // repo's files share the trigrams, so one index's posting trees grew with every repo
    // indexed and each batch's COPY with them (4.2 → 2.3 s a sympy copy over 12 copies,
    // ingest 2,315 → 2,739 chunks/s; docs/POSTGRES.md). Queries name the parent as before.
    r#"
    DO $$ BEGIN
        -- (A database whose version was set back, as a test does, may have them already.)
        IF EXISTS (SELECT 1 FROM pg_partitioned_table
                   WHERE partrelid = 'file_grams'::regclass) THEN
            RETURN;
        END IF;
        ALTER TABLE file_grams RENAME TO file_grams_unpartitioned;
        ALTER INDEX file_grams_gin RENAME TO file_grams_unpartitioned_gin;
        ALTER TABLE file_grams_unpartitioned RENAME CONSTRAINT file_grams_pkey
            TO file_grams_unpartitioned_pkey;
        CREATE TABLE file_grams(
            repo_id bigint NOT NULL,
            file_id bigint NOT NULL,
            grams integer[] NOT NULL,
            PRIMARY KEY (repo_id, file_id)
        ) PARTITION BY HASH (repo_id);
        FOR i IN 0..15 LOOP
            EXECUTE format('CREATE TABLE file_grams_%s PARTITION OF file_grams
                            FOR VALUES WITH (MODULUS 16, REMAINDER %s)', i, i);
        END LOOP;
        INSERT INTO file_grams SELECT * FROM file_grams_unpartitioned;
        DROP TABLE file_grams_unpartitioned;
        CREATE INDEX file_grams_gin ON file_grams USING gin (grams);
    END $$;
    "#,
    // 12: no GIN index on the text vectors: ranking reads the posting lists, and a phrase's
    // rows are those of its lexemes' lists that hold it (bm25.rs), so the indexes were only
    // upkeep, most of each write's time for chunks and files (12 sympy copies: ingest 2,739 →
    // 3,246 chunks/s; docs/POSTGRES.md).
    "DROP INDEX IF EXISTS chunks_tsv; DROP INDEX IF EXISTS files_tsv;
     DROP INDEX IF EXISTS commits_tsv;",
];

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The database's schema version (0: none yet).
pub(crate) fn version(client: &mut impl Queries) -> Result<i64> {
    let exists: bool = client
        .query_one("SELECT to_regclass('quarry_meta') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client.query_opt(
        "SELECT value FROM quarry_meta WHERE key = 'schema_version'",
        &[],
    )?;
    Ok(row
        .map(|r| r.get::<_, String>(0).parse().unwrap_or(0))
        .unwrap_or(0))
}

/// Brings the schema up to date; refuses a newer one; says how to get pgvector when the
/// server lacks it.
pub fn migrate(client: &mut PgClient) -> Result<()> {
    let current = version(client)?;
    if current > SCHEMA_VERSION {
        bail!(
            "this database has quarry schema version {current}, newer than this quarry understands \
             ({SCHEMA_VERSION}); upgrade quarry, or point it at another database"
        );
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    if let Err(e) = tx.batch_execute("CREATE EXTENSION IF NOT EXISTS vector") {
        bail!(
            "the server has no pgvector extension ({}): install it on the server (the \
             `postgresql-NN-pgvector` package, or https://github.com/pgvector/pgvector), then run again",
            e.detail()
        );
    }
    // Another process may have migrated while this one waited for the lock.
    let current = version(&mut tx)?;
    if current > 0 && current < SCHEMA_VERSION {
        eprintln!(
            "quarry: bringing the PostgreSQL schema from version {current} to {SCHEMA_VERSION} \
             (once; a large database takes minutes)"
        );
        tx.extend_deadline(MIGRATION_DEADLINE)?;
    }
    for (step, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.batch_execute(sql)
            .with_context(|| format!("quarry schema migration {}", step + 1))?;
    }
    tx.execute(
        "INSERT INTO quarry_meta(key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&SCHEMA_VERSION.to_string()],
    )?;
    tx.commit()?;
    Ok(())
}
