//! Writing a batch while quarry prepares the next. A batch's rows, text vectors and list
//! entries are built in quarry (write.rs) and its statements run on the server; in turn, each
//! waited for the other, so on a 2-core machine one core idled through most of an ingest
//! (bench/pg_scale.py: of ~21 s per sympy copy, ~15 s on the server, ~5 s preparing). Here
//! the transaction runs on a connection of its own in a thread of its own, while the caller
//! goes on to prepare the next batch; at most one batch is in flight, and any other use of
//! the store waits for it first (PgStore::settle), so every read sees every batch applied.
//!
//! A batch still commits whole or not at all; its error is reported by the next call on the
//! store (the next batch, `finish_run`, a read), and that call fails with it.

use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::connection::{at_server, PgClient, PgError};
use crate::write::{self, Prepared};

/// The writer's connection and its batch in flight.
pub(crate) struct BackgroundWriter {
    url: String,
    shown_url: String,
    timeout: Duration,
    idle: Option<PgClient>,
    in_flight: Option<JoinHandle<(PgClient, Result<()>)>>,
}

impl BackgroundWriter {
    pub(crate) fn new(url: &str, shown_url: &str, timeout: Duration) -> BackgroundWriter {
        BackgroundWriter {
            url: url.to_string(),
            shown_url: shown_url.to_string(),
            timeout,
            idle: None,
            in_flight: None,
        }
    }

    /// Waits for the batch in flight, if any: its error, if it failed.
    pub(crate) fn settle(&mut self) -> Result<()> {
        let Some(handle) = self.in_flight.take() else {
            return Ok(());
        };
        let (client, outcome) = handle
            .join()
            .map_err(|_| anyhow!("the PostgreSQL writer thread panicked"))?;
        // A connection that failed (ended by the server, timed out) is not used again.
        if outcome.is_ok() && !client.is_abandoned() {
            self.idle = Some(client);
        }
        outcome
    }

    /// Writes `batch` in one transaction on the writer's connection, in the background, once
    /// the batch before it is in.
    pub(crate) fn start(&mut self, batch: Prepared) -> Result<()> {
        self.settle()?;
        let mut client = match self.idle.take() {
            Some(client) => client,
            None => PgClient::connect(&self.url, self.timeout).map_err(|e| self.err(e))?,
        };
        let shown_url = self.shown_url.clone();
        self.in_flight = Some(std::thread::spawn(move || {
            let outcome = commit(&mut client, batch).map_err(|e| at_server(&shown_url, e));
            (client, outcome)
        }));
        Ok(())
    }

    fn err(&self, e: PgError) -> anyhow::Error {
        crate::connection::said_at(&self.shown_url, &e)
    }
}

fn commit(client: &mut PgClient, batch: Prepared) -> Result<()> {
    let mut tx = client.transaction()?;
    write::write(&mut tx, batch)?;
    tx.commit()?;
    Ok(())
}

impl Drop for BackgroundWriter {
    /// A batch in flight is finished, not abandoned (its error has no one left to tell).
    fn drop(&mut self) {
        let _ = self.settle();
    }
}
