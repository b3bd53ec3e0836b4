//! Schema migrations, tracked by SQLite's `user_version`. Each entry upgrades the schema by
//! one version inside a transaction; a file written by a newer quarry is refused, not guessed at.

use anyhow::{bail, Result};
use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: repos, files, chunks, symbols and the contentless full-text index.
    r#"
    CREATE TABLE repos(
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        root TEXT NOT NULL UNIQUE,
        indexed_at INTEGER,
        file_count INTEGER NOT NULL DEFAULT 0,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        skipped TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE files(
        id INTEGER PRIMARY KEY,
        repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        language TEXT NOT NULL,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        UNIQUE(repo_id, path)
    );
    CREATE TABLE chunks(
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        symbol TEXT,
        kind TEXT NOT NULL,
        parent TEXT,
        signature TEXT,
        text TEXT NOT NULL
    );
    CREATE INDEX chunks_by_file ON chunks(file_id);
    CREATE TABLE symbols(
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        parent TEXT,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        signature TEXT
    );
    CREATE INDEX symbols_by_name ON symbols(name);
    CREATE INDEX symbols_by_file ON symbols(file_id);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        path, symbols, body,
        content = '', contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    "#,
    // 2: embeddings, stored once per distinct embedding text (`chunks.embed_hash`), so a
    // chunk whose text is unchanged is never embedded twice; `meta` records the model.
    r#"
    ALTER TABLE chunks ADD COLUMN embed_hash TEXT;
    CREATE INDEX chunks_by_embed_hash ON chunks(embed_hash);
    -- A rowid table keeps each 1.5 KB vector inline in its row, so a full scan is one pass
    -- over the table (a WITHOUT ROWID table spills them to overflow pages: ~10x slower).
    CREATE TABLE embeddings(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, vector BLOB NOT NULL);
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    -- Chunks stored before this version have no embed_hash: make the next run re-read them.
    UPDATE files SET hash = '', mtime_ns = 0;
    "#,
    // 3: call sites (callee name, calling definition, line), for callers/impact queries.
    r#"
    CREATE TABLE calls(
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        caller TEXT,
        callee TEXT NOT NULL,
        line INTEGER NOT NULL
    );
    CREATE INDEX calls_by_callee ON calls(callee);
    CREATE INDEX calls_by_file ON calls(file_id);
    -- Files stored before this version have no call sites: make the next run re-read them.
    UPDATE files SET hash = '', mtime_ns = 0;
    "#,
    // 4: git history — commits, the files each changed, and BM25 over subject, body, changed
    // paths and patch; per repo, the head last synced.
    r#"
    CREATE TABLE commits(
        id INTEGER PRIMARY KEY,
        repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
        sha TEXT NOT NULL,
        parents TEXT NOT NULL,
        author TEXT NOT NULL,
        email TEXT NOT NULL,
        author_time INTEGER NOT NULL,
        commit_time INTEGER NOT NULL,
        subject TEXT NOT NULL,
        body TEXT NOT NULL,
        patch TEXT NOT NULL,
        patch_truncated INTEGER NOT NULL,
        files_changed INTEGER NOT NULL,
        UNIQUE(repo_id, sha)
    );
    CREATE INDEX commits_by_sha ON commits(sha);
    CREATE INDEX commits_by_time ON commits(repo_id, author_time);
    CREATE TABLE commit_files(
        commit_id INTEGER NOT NULL REFERENCES commits(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        old_path TEXT,
        status TEXT NOT NULL,
        added INTEGER,
        removed INTEGER
    );
    CREATE INDEX commit_files_by_commit ON commit_files(commit_id);
    CREATE INDEX commit_files_by_path ON commit_files(path);
    CREATE VIRTUAL TABLE commits_fts USING fts5(
        subject, body, paths, patch,
        content = '', contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    ALTER TABLE repos ADD COLUMN history_head TEXT;
    "#,
    // 5: commit vectors (one per commit, from the workspace's embedding model) and the
    // per-repo switch for embedding history.
    r#"
    CREATE TABLE commit_vectors(
        commit_id INTEGER PRIMARY KEY REFERENCES commits(id) ON DELETE CASCADE,
        vector BLOB NOT NULL
    );
    ALTER TABLE repos ADD COLUMN embed_history INTEGER NOT NULL DEFAULT 1;
    "#,
    // 6: whole-file BM25 (path, every definition's name, the file's text; rowid = files.id),
    // the file-level evidence beside the chunks'.
    r#"
    CREATE VIRTUAL TABLE files_fts USING fts5(
        path, symbols, body,
        content = '', contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    -- Files stored before this version have no row here: make the next run re-read them.
    UPDATE files SET hash = '', mtime_ns = 0;
    "#,
    // 7: each file's name, normalised (`Sky_Coordinate.py` → `skycoordinate`), so a query
    // naming `SkyCoordinate` or a frame naming `…/sky_coordinate.py` finds its files by one
    // index probe.
    r#"
    ALTER TABLE files ADD COLUMN stem TEXT;
    CREATE INDEX files_by_stem ON files(stem);
    -- Files stored before this version have no stem: make the next run re-read them.
    UPDATE files SET hash = '', mtime_ns = 0;
    "#,
    // 8: every file's exact text as trigrams (rowid = files.id; the text itself is not kept),
    // so `quarry grep` reads only the files that contain its pattern's literals; `trigrams`
    // says the file has its row (a file read with replaced bytes has none and is always
    // scanned).
    r#"
    CREATE VIRTUAL TABLE file_trigrams USING fts5(
        text, content = '', contentless_delete = 1, detail = 'none', tokenize = 'trigram'
    );
    ALTER TABLE files ADD COLUMN trigrams INTEGER NOT NULL DEFAULT 0;
    -- Files stored before this version have no trigrams: make the next run re-read them.
    UPDATE files SET hash = '', mtime_ns = 0;
    "#,
    // 9: a counter that moves with every change to `files`, kept by triggers so that no
    // writer can forget it: `quarry grep` keeps the indexed files' states between runs and
    // reads them again only when it has moved. It starts at a random number, so that the
    // counter of a rebuilt index never meets a value the old one had.
    r#"
    INSERT OR IGNORE INTO meta(key, value) VALUES ('files_generation', abs(random() / 4));
    CREATE TRIGGER files_generation_on_insert AFTER INSERT ON files BEGIN
        UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'files_generation';
    END;
    CREATE TRIGGER files_generation_on_update AFTER UPDATE ON files BEGIN
        UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'files_generation';
    END;
    CREATE TRIGGER files_generation_on_delete AFTER DELETE ON files BEGIN
        UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'files_generation';
    END;
    "#,
    // 10: documents beside code. A chunk may differ in language from its file (a notebook's
    // code and markdown cells: NULL means the file's), and sits on a PDF page or in a
    // notebook cell. reStructuredText, AsciiDoc, notebooks and titled plain text were read
    // as line windows of `text` before: re-read them.
    r#"
    ALTER TABLE chunks ADD COLUMN language TEXT;
    ALTER TABLE chunks ADD COLUMN page INTEGER;
    ALTER TABLE chunks ADD COLUMN cell INTEGER;
    UPDATE files SET hash = '', mtime_ns = 0 WHERE language = 'text';
    "#,
    // 11: history as `git log -- PATH` reads it: a merge's change that came with the merged
    // branch is marked (histories synced before keep 0 until synced again from scratch), and
    // a rename away from a path is found by that path.
    r#"
    ALTER TABLE commit_files ADD COLUMN merged_in INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX commit_files_by_old_path ON commit_files(old_path) WHERE old_path IS NOT NULL;
    "#,
    // 12: commit vectors counted without reading them. Every semantic `log` says how much of
    // the history is embedded; counting the vectors table's rows read its 1.5 KB rows (42–79
    // ms over 95k commits), its ids alone take 12 ms.
    r#"
    CREATE INDEX commit_vectors_by_commit ON commit_vectors(commit_id);
    "#,
    // 13: a checksum of every row answers are read from (chunks, files, symbols), kept by
    // triggers in the writing transaction, and a digest of the code's full-text indexes that
    // any write of theirs drops (the same triggers) until an index run records it anew;
    // the deep check verifies both (checksums.rs). A few changed bytes inside a page pass
    // SQLite's checks and change answers. The triggers follow `checksums::SUMMED`.
    r#"
    CREATE TABLE row_sums(
        tbl TEXT NOT NULL, key NOT NULL, sum INTEGER NOT NULL, PRIMARY KEY (tbl, key)
    ) WITHOUT ROWID;
    CREATE TRIGGER chunks_sum_insert AFTER INSERT ON chunks BEGIN
        INSERT OR REPLACE INTO row_sums VALUES ('chunks', new.rowid, quarry_sum(new.file_id, new.start_line, new.end_line, new.symbol, new.kind, new.parent, new.signature, new.text, new.embed_hash, new.language, new.page, new.cell));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    CREATE TRIGGER chunks_sum_update AFTER UPDATE ON chunks BEGIN
        DELETE FROM row_sums WHERE tbl = 'chunks' AND key = old.rowid;
        INSERT OR REPLACE INTO row_sums VALUES ('chunks', new.rowid, quarry_sum(new.file_id, new.start_line, new.end_line, new.symbol, new.kind, new.parent, new.signature, new.text, new.embed_hash, new.language, new.page, new.cell));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    CREATE TRIGGER chunks_sum_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM row_sums WHERE tbl = 'chunks' AND key = old.rowid;
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    INSERT INTO row_sums SELECT 'chunks', t.rowid, quarry_sum(t.file_id, t.start_line, t.end_line, t.symbol, t.kind, t.parent, t.signature, t.text, t.embed_hash, t.language, t.page, t.cell) FROM chunks t;
    CREATE TRIGGER files_sum_insert AFTER INSERT ON files BEGIN
        INSERT OR REPLACE INTO row_sums VALUES ('files', new.rowid, quarry_sum(new.repo_id, new.path, new.language, new.hash, new.size, new.mtime_ns, new.stem, new.trigrams));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    CREATE TRIGGER files_sum_update AFTER UPDATE ON files BEGIN
        DELETE FROM row_sums WHERE tbl = 'files' AND key = old.rowid;
        INSERT OR REPLACE INTO row_sums VALUES ('files', new.rowid, quarry_sum(new.repo_id, new.path, new.language, new.hash, new.size, new.mtime_ns, new.stem, new.trigrams));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    CREATE TRIGGER files_sum_delete AFTER DELETE ON files BEGIN
        DELETE FROM row_sums WHERE tbl = 'files' AND key = old.rowid;
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    INSERT INTO row_sums SELECT 'files', t.rowid, quarry_sum(t.repo_id, t.path, t.language, t.hash, t.size, t.mtime_ns, t.stem, t.trigrams) FROM files t;
    CREATE TRIGGER symbols_sum_insert AFTER INSERT ON symbols BEGIN
        INSERT OR REPLACE INTO row_sums VALUES ('symbols', new.rowid, quarry_sum(new.file_id, new.name, new.kind, new.parent, new.start_line, new.end_line, new.signature));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    CREATE TRIGGER symbols_sum_update AFTER UPDATE ON symbols BEGIN
        DELETE FROM row_sums WHERE tbl = 'symbols' AND key = old.rowid;
        INSERT OR REPLACE INTO row_sums VALUES ('symbols', new.rowid, quarry_sum(new.file_id, new.name, new.kind, new.parent, new.start_line, new.end_line, new.signature));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    CREATE TRIGGER symbols_sum_delete AFTER DELETE ON symbols BEGIN
        DELETE FROM row_sums WHERE tbl = 'symbols' AND key = old.rowid;
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    INSERT INTO row_sums SELECT 'symbols', t.rowid, quarry_sum(t.file_id, t.name, t.kind, t.parent, t.start_line, t.end_line, t.signature) FROM symbols t;
    "#,
    // 14: the trigram table takes each file's distinct trigrams, found by the indexing threads,
    // through quarry's own tokenizer (trigram_tokenizer.rs), not the whole text through FTS5's:
    // the index writer hashed every window of every file. Its rows are rebuilt by the next run
    // (the text is not kept); until then grep reads every file itself.
    r#"
    DROP TABLE file_trigrams;
    CREATE VIRTUAL TABLE file_trigrams USING fts5(
        text, content = '', contentless_delete = 1, detail = 'none', tokenize = 'quarry_trigram'
    );
    UPDATE files SET trigrams = 0, hash = '', mtime_ns = 0;
    "#,
    // 15: the row checksums' triggers find a row's sum by its whole key. `key` has no type, so
    // compared with `old.rowid` (an integer's affinity) SQLite could not use it in the index
    // and read every sum of the table for each row deleted or updated: a re-index of all of
    // tokio's files took 15 s against 2 s for a fresh one. `+` drops the affinity.
    r#"
    DROP TRIGGER chunks_sum_update;
    CREATE TRIGGER chunks_sum_update AFTER UPDATE ON chunks BEGIN
        DELETE FROM row_sums WHERE tbl = 'chunks' AND key = +old.rowid;
        INSERT OR REPLACE INTO row_sums VALUES ('chunks', new.rowid, quarry_sum(new.file_id, new.start_line, new.end_line, new.symbol, new.kind, new.parent, new.signature, new.text, new.embed_hash, new.language, new.page, new.cell));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    DROP TRIGGER chunks_sum_delete;
    CREATE TRIGGER chunks_sum_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM row_sums WHERE tbl = 'chunks' AND key = +old.rowid;
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    DROP TRIGGER files_sum_update;
    CREATE TRIGGER files_sum_update AFTER UPDATE ON files BEGIN
        DELETE FROM row_sums WHERE tbl = 'files' AND key = +old.rowid;
        INSERT OR REPLACE INTO row_sums VALUES ('files', new.rowid, quarry_sum(new.repo_id, new.path, new.language, new.hash, new.size, new.mtime_ns, new.stem, new.trigrams));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    DROP TRIGGER files_sum_delete;
    CREATE TRIGGER files_sum_delete AFTER DELETE ON files BEGIN
        DELETE FROM row_sums WHERE tbl = 'files' AND key = +old.rowid;
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    DROP TRIGGER symbols_sum_update;
    CREATE TRIGGER symbols_sum_update AFTER UPDATE ON symbols BEGIN
        DELETE FROM row_sums WHERE tbl = 'symbols' AND key = +old.rowid;
        INSERT OR REPLACE INTO row_sums VALUES ('symbols', new.rowid, quarry_sum(new.file_id, new.name, new.kind, new.parent, new.start_line, new.end_line, new.signature));
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    DROP TRIGGER symbols_sum_delete;
    CREATE TRIGGER symbols_sum_delete AFTER DELETE ON symbols BEGIN
        DELETE FROM row_sums WHERE tbl = 'symbols' AND key = +old.rowid;
        DELETE FROM meta WHERE key = 'fts_digest';
    END;
    "#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The file's schema version; an error when it is newer than this build understands.
pub fn check_version(conn: &Connection) -> Result<i64> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        bail!(
            "this index has schema version {current}, newer than this quarry understands ({SCHEMA_VERSION}); \
             upgrade quarry or rebuild the index with `quarry index --rebuild PATH`"
        );
    }
    Ok(current)
}

/// The schema as the file records it — every table, index, trigger and view with its SQL,
/// SQLite's own `sqlite_*` tables (statistics) left out — as one digest, kept in `meta`.
fn digest(conn: &Connection) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema
         WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name",
    )?;
    let mut text = String::new();
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        for column in 0..4 {
            text.push_str(row.get_ref(column)?.as_str().unwrap_or(""));
            text.push('\0');
        }
    }
    Ok(quarry_core::hash::content_hash(text.as_bytes()))
}

/// What is wrong with the file's schema, if anything: its digest against the one recorded
/// when the schema was last written. Damage to the schema's own pages passes SQLite's page
/// checks and can leave a table read differently from how it was written; this finds it on
/// every open for microseconds (SQLite has just read the schema table). A file from before
/// digests were kept has none to compare and passes.
pub fn problem(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let recorded: Option<String> = match conn.query_row(
        "SELECT value FROM meta WHERE key = 'schema_digest'",
        [],
        |r| r.get(0),
    ) {
        Ok(value) => Some(value),
        Err(rusqlite::Error::QueryReturnedNoRows) => None,
        // No `meta` table: a file with no schema yet, or one whose schema is gone.
        Err(rusqlite::Error::SqliteFailure(_, Some(message)))
            if message.contains("no such table") =>
        {
            let tables: i64 =
                conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
            return Ok((tables > 0).then(|| "its schema has no `meta` table".to_string()));
        }
        Err(e) => return Err(e),
    };
    let Some(recorded) = recorded else {
        return Ok(None);
    };
    let found = digest(conn)?;
    Ok((found != recorded)
        .then(|| "its schema differs from the one quarry wrote (damaged schema pages)".to_string()))
}

/// Records the file's schema digest (after the schema was written, or for a file from
/// before digests were kept).
fn record(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_digest', ?1)",
        [digest(conn)?],
    )?;
    Ok(())
}

/// Brings the schema up to date in one immediate transaction: the version is read inside
/// it, so two openers can never both apply a step ("table already exists"), and a reader
/// sees either the old schema or the whole new one.
pub fn migrate(conn: &Connection) -> Result<()> {
    if check_version(conn)? == SCHEMA_VERSION {
        let recorded = conn
            .query_row("SELECT 1 FROM meta WHERE key = 'schema_digest'", [], |_| {
                Ok(())
            })
            .is_ok();
        if !recorded {
            record(conn)?;
        }
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| -> Result<()> {
        let current = check_version(conn)?;
        for sql in MIGRATIONS.iter().skip(current as usize) {
            conn.execute_batch(sql)?;
        }
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        record(conn)?;
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
    }
    Ok(())
}
