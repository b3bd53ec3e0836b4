//! Reads on hot standbys. A store opened for reading (searches, never the index runs) may
//! send its reads to a streaming replica of the primary (`store.read_urls`), leaving the
//! primary to the writers. A replica is used only when it answers, holds the schema this
//! build writes, and trails the primary by no more than `store.max_lag_s`; otherwise the next
//! one is tried, and the primary last. Why a replica that fails during a read (killed,
//! restarted, a query cancelled by recovery) hands that read and every later one to the
//! primary is in `PgStore::with`.

use std::time::Duration;

use crate::connection::{PgClient, Queries};
use crate::{redact, schema};

/// The replica a reading store is connected to.
pub(crate) struct Replica {
    pub url: String,
    pub shown_url: String,
    pub lag_s: f64,
}

/// How far the server at the other end trails its primary, in seconds: `Ok(None)` when it is
/// a primary itself. A standby streaming from its primary that has replayed everything it
/// received trails by 0; one behind in replay, or cut off from its primary, by the age of the
/// last transaction it replayed (and without one, by an unknown amount: an error).
fn lag(client: &mut PgClient) -> Result<Option<f64>, String> {
    let row = client
        .query_one(
            "SELECT pg_is_in_recovery(),
                    EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')
                      AND pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn(),
                    EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8",
            &[],
        )
        .map_err(|e| e.detail())?;
    let (in_recovery, caught_up, age): (bool, Option<bool>, Option<f64>) =
        (row.get(0), row.get(1), row.get(2));
    if !in_recovery {
        return Ok(None);
    }
    if caught_up == Some(true) {
        return Ok(Some(0.0));
    }
    age.map(|a| Some(a.max(0.0)))
        .ok_or_else(|| "it has replayed nothing yet and is not caught up".to_string())
}

/// Connects to the first of `urls` that can serve reads now; the reason each one before it
/// could not, beside.
pub(crate) fn choose(
    urls: &[String],
    max_lag_s: f64,
    timeout: Duration,
) -> (Option<(PgClient, Replica)>, Vec<String>) {
    let mut skipped = Vec::new();
    for url in urls {
        let shown_url = redact(url);
        match usable(url, max_lag_s, timeout) {
            Ok((client, lag_s)) => {
                return (
                    Some((
                        client,
                        Replica {
                            url: url.clone(),
                            shown_url,
                            lag_s,
                        },
                    )),
                    skipped,
                )
            }
            Err(why) => skipped.push(format!("{shown_url}: {why}")),
        }
    }
    (None, skipped)
}

fn usable(url: &str, max_lag_s: f64, timeout: Duration) -> Result<(PgClient, f64), String> {
    let mut client = PgClient::connect(url, timeout).map_err(|e| e.detail())?;
    let lag_s = match lag(&mut client)? {
        Some(lag_s) => lag_s,
        // A primary listed as a replica serves reads as well as any standby.
        None => 0.0,
    };
    if lag_s > max_lag_s {
        return Err(format!(
            "{lag_s:.1} s behind its primary, more than store.max_lag_s ({max_lag_s} s)"
        ));
    }
    let version = schema::version(&mut client).map_err(|e| format!("{e:#}"))?;
    if version != schema::SCHEMA_VERSION {
        return Err(format!(
            "its quarry schema is version {version}, this build reads {}: the primary has not \
             been upgraded yet, or the standby has not replayed it",
            schema::SCHEMA_VERSION
        ));
    }
    Ok((client, lag_s))
}
