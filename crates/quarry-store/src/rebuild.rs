//! `index --rebuild` of one repo as one write transaction: "build beside and switch" on the
//! embedded store.
//!
//! Why: a rebuild used to clear the repo's files in one transaction and write the new ones in
//! batches of their own, so every search in between saw a half-built repo (no results, or
//! another first hit). Here `begin` opens one write transaction (BEGIN IMMEDIATE: the write
//! lock at once, not at the first write), clears the repo's files inside it, and every batch
//! is a savepoint inside it; `commit` ends it. Under WAL a reader keeps the snapshot its read
//! transaction started on, so every search sees the old repo until the commit and the new one
//! after it, never a mix. A run that ends without the commit (an error, Ctrl-C, kill -9, power
//! loss) leaves no committed frame of the rebuild in the WAL: the next open answers from the
//! old index, and the rebuild has not happened (it must be run again).
//!
//! The cost is the WAL: nothing can be checkpointed while the transaction is open, so it
//! grows to the pages the rebuild writes (about the repo's share of the index) and is folded
//! back after the commit (`fold_wal`). Measured on sympy (2,035 Python files, a 59 MiB index,
//! release build, the store alone): the WAL reached 59 MiB before the commit (18-23 MiB in
//! place, where each batch's commit let it be checkpointed), and the rebuild took 32-37 s
//! against 36-40 s in place, most of it (23-29 s either way) deleting the old rows. Through
//! the CLI (debug build, 35,980 chunks, a 112 MiB index) the WAL peaked at 112 MiB. A second file built beside and swapped in would cost
//! a whole copy of every other repo and history in the workspace, and readers holding the
//! old file open would need to learn of the swap; one transaction needs neither.

use crate::{classify, clear_file_rows, SqliteStore};
use anyhow::{bail, Result};

/// Opens the rebuild's transaction and clears the repo's files inside it.
pub(crate) fn begin(store: &mut SqliteStore, repo: i64) -> Result<()> {
    if let Some(other) = store.rebuilding {
        bail!("a rebuild of repo {other} is already under way on this connection");
    }
    store
        .conn
        .execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| classify(&store.path, e))?;
    if let Err(e) = clear_file_rows(&store.conn, repo) {
        let _ = store.conn.execute_batch("ROLLBACK");
        return Err(classify(&store.path, e));
    }
    store.rebuilding = Some(repo);
    Ok(())
}

/// Commits the rebuild: every reader's next read transaction sees the new files.
pub(crate) fn commit(store: &mut SqliteStore, repo: i64) -> Result<()> {
    match store.rebuilding {
        Some(r) if r == repo => {}
        _ => bail!("no rebuild of repo {repo} is under way to commit"),
    }
    store.rebuilding = None;
    if let Err(e) = store.conn.execute_batch("COMMIT") {
        // A failed COMMIT may leave the transaction open: end it, the old files stay.
        if !store.conn.is_autocommit() {
            let _ = store.conn.execute_batch("ROLLBACK");
        }
        return Err(classify(&store.path, e));
    }
    store.fold_wal();
    Ok(())
}

/// Rolls the rebuild back: the repo's files are as they were before `begin`.
pub(crate) fn abandon(store: &mut SqliteStore, repo: i64) -> Result<()> {
    match store.rebuilding {
        Some(r) if r == repo => {}
        _ => return Ok(()),
    }
    store.rebuilding = None;
    if !store.conn.is_autocommit() {
        store
            .conn
            .execute_batch("ROLLBACK")
            .map_err(|e| classify(&store.path, e))?;
    }
    Ok(())
}
