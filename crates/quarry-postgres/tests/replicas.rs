//! Reads on hot standbys (`store.read_urls`) against a real primary and a streaming standby
//! (quarry-test-postgres). Named `postgres_*`: `cargo test postgres` runs it.

use quarry_core::store::{IndexBatch, Store};
use quarry_postgres::PgStore;

mod common;
use common::{chunk, file, query};

/// Searches read from a streaming standby (`store.read_urls`), which answers as the primary
/// does; a standby too far behind, killed under a reading store, or down is passed over and
/// the primary answers, and the store says which server answered and why.
#[test]
fn postgres_searches_read_from_a_standby_and_from_the_primary_when_it_cannot() {
    use std::time::{Duration, Instant};
    let url = quarry_test_postgres::database("replicas");
    let mut primary = PgStore::connect(&url).unwrap();
    let repo = primary.ensure_repo("r", "/src/r").unwrap();
    let mut add = |path: &str, symbol: &str, text: &str| {
        let mut batch = IndexBatch::default();
        batch
            .upserts
            .push(file(path, path, vec![chunk(1, 1, Some(symbol), text)]));
        primary.apply(repo.id, &batch).unwrap();
    };
    add(
        "src/parser.py",
        "parse_config",
        "def parse_config(path): return load(path)",
    );
    let standby = quarry_test_postgres::standby();
    let database = url.rsplit('/').next().unwrap();
    let replica_url = standby.url(database);
    let reading = |max_lag_s: f64| {
        PgStore::connect_reading(
            &url,
            &[replica_url.clone()],
            max_lag_s,
            Duration::from_secs(10),
        )
        .unwrap()
    };
    let finds = |store: &PgStore, words: &str| {
        store
            .search_lexical(&query(words))
            .unwrap()
            .iter()
            .map(|h| h.path.clone())
            .collect::<Vec<_>>()
    };
    // Polls until the standby answers `words` with `path`.
    let until_replayed = |words: &str, path: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let store = reading(30.0);
            let served = store.served_by().unwrap();
            if served.replica && finds(&store, words).contains(&path.to_string()) {
                return store;
            }
            assert!(
                Instant::now() < deadline,
                "the standby never showed {path}: {served:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };

    let on_standby = reading(30.0);
    let served = on_standby.served_by().unwrap();
    assert!(served.replica && served.skipped.is_empty(), "{served:?}");
    assert_eq!(served.server, replica_url);
    assert!(served.lag_s.is_some_and(|lag| lag < 30.0), "{served:?}");
    assert_eq!(finds(&on_standby, "parse config"), ["src/parser.py"]);

    // Writes go to the primary; the standby follows.
    add(
        "src/render.py",
        "render_page",
        "def render_page(page): return page",
    );
    until_replayed("render page", "src/render.py");

    // Replay paused while the primary writes: the standby falls behind store.max_lag_s and
    // the primary answers, with what the standby has not shown yet.
    let mut admin = postgres::Client::connect(&replica_url, postgres::NoTls).unwrap();
    admin.batch_execute("SELECT pg_wal_replay_pause()").unwrap();
    add(
        "src/emit.py",
        "emit_tokens",
        "def emit_tokens(stream): return stream",
    );
    std::thread::sleep(Duration::from_millis(1500));
    let behind = reading(1.0);
    let served = behind.served_by().unwrap();
    assert!(!served.replica && served.lag_s.is_none(), "{served:?}");
    assert!(
        served.skipped.len() == 1 && served.skipped[0].starts_with(&replica_url),
        "{served:?}"
    );
    assert_eq!(finds(&behind, "emit tokens"), ["src/emit.py"]);
    admin
        .batch_execute("SELECT pg_wal_replay_resume()")
        .unwrap();
    let on_standby = until_replayed("emit tokens", "src/emit.py");

    // Killed under a reading store: its reads go to the primary from then on.
    standby.kill();
    assert_eq!(finds(&on_standby, "parse config"), ["src/parser.py"]);
    let served = on_standby.served_by().unwrap();
    assert!(!served.replica, "{served:?}");
    assert!(
        served
            .skipped
            .iter()
            .any(|s| s.contains("failed during a read")),
        "{served:?}"
    );
    assert_eq!(finds(&on_standby, "render page"), ["src/render.py"]);
    // Down when a store opens: passed over.
    let down = reading(30.0);
    let served = down.served_by().unwrap();
    assert!(!served.replica && served.skipped.len() == 1, "{served:?}");
    assert_eq!(finds(&down, "emit tokens"), ["src/emit.py"]);
}
