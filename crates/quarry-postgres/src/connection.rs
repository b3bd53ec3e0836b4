//! One connection to PostgreSQL whose every call has a deadline.
//!
//! Why not the `postgres` crate's blocking client: it has no per-call timeout, and a server
//! that stops answering while its kernel still acknowledges (a frozen or SIGSTOPped server, a
//! postmaster that accepts but never forks) keeps TCP keepalives and `TCP_USER_TIMEOUT`
//! satisfied, and a server-side `statement_timeout` never fires in a process that does not run.
//! Only the client can end that wait. So this wraps tokio-postgres the way the `postgres` crate
//! does (one current-thread runtime per connection, driving the connection while a call
//! waits) and bounds each call, the connect included, with tokio's timer. After a call times
//! out the protocol state is unknown: the connection is marked abandoned and the store opens a
//! fresh one for its next call, so a long-running server recovers when PostgreSQL does.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use quarry_core::store::Unavailable;
use tokio::runtime::Runtime;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, NoTls, Row};

/// What a call to the server can end in besides an answer.
#[derive(Debug)]
pub enum PgError {
    /// The server answered with an error, or the connection failed.
    Db(tokio_postgres::Error),
    /// No answer within the deadline; the connection is abandoned.
    TimedOut(Duration),
}

impl PgError {
    /// The server's own message when it sent one, else the error's text.
    pub fn detail(&self) -> String {
        match self {
            PgError::Db(e) => e
                .as_db_error()
                .map(|d| d.message().to_string())
                .unwrap_or_else(|| {
                    // "error connecting to server" says nothing of why: the causes do
                    // ("Connection refused").
                    let mut text = e.to_string();
                    let mut cause = std::error::Error::source(e);
                    while let Some(c) = cause {
                        text.push_str(&format!(": {c}"));
                        cause = c.source();
                    }
                    text
                }),
            PgError::TimedOut(limit) => format!(
                "no answer within {} (store.timeout_s); check that the server is up and not \
                 overloaded, or raise store.timeout_s",
                format!("{} s", limit.as_secs_f64())
            ),
        }
    }
}

impl PgError {
    /// Whether the server cannot answer now but may soon: the connection failed or was
    /// closed, no answer came in time, or the server is starting, shutting down or full
    /// (SQLSTATE classes 08 and 57P, 53300). Such errors are [`Unavailable`]: HTTP answers
    /// them 503 with `Retry-After`. A wrong password or a bad query is not.
    pub fn is_unavailable(&self) -> bool {
        match self {
            PgError::TimedOut(_) => true,
            PgError::Db(e) => match e.code() {
                // Closed, or failed on the socket (refused, reset): not a malformed URL or
                // a protocol error, which would fail the same way again.
                None => e.is_closed() || io_failure(e),
                Some(code) => {
                    let code = code.code();
                    code.starts_with("08") || code.starts_with("57P") || code == "53300"
                }
            },
        }
    }
}

/// Whether an I/O error is among `e`'s causes (the server refused, reset or dropped us).
fn io_failure(e: &tokio_postgres::Error) -> bool {
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.is::<std::io::Error>() {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The server at `shown_url` failed with `e`: said with the server's name, and
/// [`Unavailable`] when it may answer again soon.
pub(crate) fn said_at(shown_url: &str, e: &PgError) -> anyhow::Error {
    let message = format!("PostgreSQL at {shown_url}: {}", e.detail());
    if e.is_unavailable() {
        anyhow::Error::new(Unavailable(message))
    } else {
        anyhow::anyhow!(message)
    }
}

/// `e` said as the server at `shown_url` failed, when it is the server's failure (a
/// [`PgError`] inside); quarry's own errors as they are.
pub(crate) fn at_server(shown_url: &str, e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<PgError>() {
        Ok(pg) => said_at(shown_url, &pg),
        Err(other) => other,
    }
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail())
    }
}

impl std::error::Error for PgError {}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> Self {
        PgError::Db(e)
    }
}

/// Runs `call` on `runtime` (which also drives the connection), giving up after `limit`.
fn timed<T>(
    runtime: &Runtime,
    limit: Duration,
    abandoned: &mut bool,
    call: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, PgError> {
    match runtime.block_on(async { tokio::time::timeout(limit, call).await }) {
        Ok(answer) => answer.map_err(PgError::Db),
        Err(_) => {
            *abandoned = true;
            Err(PgError::TimedOut(limit))
        }
    }
}

/// A connection: a client, the runtime that drives it, and the deadline of each call.
pub struct PgClient {
    runtime: Runtime,
    client: tokio_postgres::Client,
    limit: Duration,
    abandoned: bool,
}

impl PgClient {
    /// Connects to `url` within `limit`, and asks the server to give up on any statement
    /// after `limit` too, so work the client abandoned does not go on holding locks.
    pub fn connect(url: &str, limit: Duration) -> Result<PgClient, PgError> {
        let mut config: tokio_postgres::Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(limit);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .expect("a current-thread runtime builds");
        let mut abandoned = false;
        let (client, connection) = timed(&runtime, limit, &mut abandoned, config.connect(NoTls))?;
        // The connection task runs whenever a call blocks on the runtime.
        runtime.spawn(async move {
            let _ = connection.await;
        });
        let mut client = PgClient {
            runtime,
            client,
            limit,
            abandoned,
        };
        let millis = limit.as_millis().max(1);
        client.batch_execute(&format!("SET statement_timeout = {millis}"))?;
        Ok(client)
    }

    /// Whether the connection is unusable: a call on it timed out, or the server closed it
    /// (restarted, or cut off); a fresh connection takes its place.
    pub fn is_abandoned(&self) -> bool {
        self.abandoned || self.client.is_closed()
    }

    /// Begins a transaction, rolled back unless committed.
    pub fn transaction(&mut self) -> Result<PgTransaction<'_>, PgError> {
        let transaction = timed(
            &self.runtime,
            self.limit,
            &mut self.abandoned,
            self.client.transaction(),
        )?;
        Ok(PgTransaction {
            runtime: &self.runtime,
            transaction,
            limit: self.limit,
            abandoned: &mut self.abandoned,
        })
    }
}

/// A transaction on a [`PgClient`]; dropping it uncommitted rolls it back.
pub struct PgTransaction<'a> {
    runtime: &'a Runtime,
    transaction: tokio_postgres::Transaction<'a>,
    limit: Duration,
    abandoned: &'a mut bool,
}

impl PgTransaction<'_> {
    pub fn commit(self) -> Result<(), PgError> {
        let PgTransaction {
            runtime,
            transaction,
            limit,
            abandoned,
        } = self;
        timed(runtime, limit, abandoned, transaction.commit())
    }

    /// Lets each later call of this transaction, here and on the server, run up to `limit`:
    /// for a migration, which rewrites every stored row once and may take minutes where a
    /// search takes milliseconds.
    pub fn extend_deadline(&mut self, limit: Duration) -> Result<(), PgError> {
        self.limit = self.limit.max(limit);
        let millis = self.limit.as_millis().max(1);
        self.batch_execute(&format!("SET LOCAL statement_timeout = {millis}"))
    }

    /// Streams `data` (COPY text format) into `statement` (`COPY ... FROM STDIN`).
    pub fn copy_in(&mut self, statement: &str, data: Vec<u8>) -> Result<u64, PgError> {
        let data = Bytes::from(data);
        let transaction = &self.transaction;
        timed(self.runtime, self.limit, self.abandoned, async move {
            let sink = transaction.copy_in::<_, Bytes>(statement).await?;
            let mut sink = std::pin::pin!(sink);
            sink.send(data).await?;
            sink.finish().await
        })
    }
}

/// The calls a connection and a transaction share, each bounded by the deadline.
pub trait Queries {
    type Client: GenericClient;
    fn parts(&mut self) -> (&Runtime, &Self::Client, Duration, &mut bool);

    fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, PgError> {
        let (runtime, client, limit, abandoned) = self.parts();
        timed(runtime, limit, abandoned, client.execute(sql, params))
    }

    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, PgError> {
        let (runtime, client, limit, abandoned) = self.parts();
        timed(runtime, limit, abandoned, client.query(sql, params))
    }

    fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, PgError> {
        let (runtime, client, limit, abandoned) = self.parts();
        timed(runtime, limit, abandoned, client.query_one(sql, params))
    }

    fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, PgError> {
        let (runtime, client, limit, abandoned) = self.parts();
        timed(runtime, limit, abandoned, client.query_opt(sql, params))
    }

    /// Runs a query and hands each row to `each` as it arrives, so that a large answer (the
    /// posting lists that ranking reads) is never held whole; `each`'s error ends the query.
    fn for_each_row(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        each: &mut dyn FnMut(&Row) -> Result<(), tokio_postgres::Error>,
    ) -> Result<(), PgError> {
        let (runtime, client, limit, abandoned) = self.parts();
        timed(runtime, limit, abandoned, async {
            let rows = client.query_raw(sql, params.iter().copied()).await?;
            let mut rows = std::pin::pin!(rows);
            while let Some(row) = rows.next().await {
                each(&row?)?;
            }
            Ok(())
        })
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), PgError> {
        let (runtime, client, limit, abandoned) = self.parts();
        timed(runtime, limit, abandoned, client.batch_execute(sql))
    }
}

impl Queries for PgClient {
    type Client = tokio_postgres::Client;
    fn parts(&mut self) -> (&Runtime, &Self::Client, Duration, &mut bool) {
        (&self.runtime, &self.client, self.limit, &mut self.abandoned)
    }
}

impl<'a> Queries for PgTransaction<'a> {
    type Client = tokio_postgres::Transaction<'a>;
    fn parts(&mut self) -> (&Runtime, &Self::Client, Duration, &mut bool) {
        (self.runtime, &self.transaction, self.limit, self.abandoned)
    }
}
