//! Connecting and migrating: errors that name the server without its password, a schema from
//! a newer quarry refused, databases from before the posting lists and before the trigram
//! partitions brought up to date, a server without pgvector.

use quarry_core::store::{IndexBatch, Store};
use quarry_postgres::PgStore;

use crate::common::{chunk, file, query};

#[test]
fn postgres_bad_url_names_the_server_without_the_password() {
    let server = quarry_test_postgres::server();
    let url = format!(
        "postgres://nobody:s3cret-pass@127.0.0.1:{}/missing",
        server.port
    );
    let message = format!("{:#}", PgStore::connect(&url).err().expect("no such user"));
    assert!(message.contains("127.0.0.1"), "{message}");
    assert!(message.contains("nobody:***@"), "{message}");
    assert!(!message.contains("s3cret-pass"), "{message}");
    let closed = "postgres://quarry:pw@127.0.0.1:1/x";
    let message = format!(
        "{:#}",
        PgStore::connect(closed).err().expect("nothing listens")
    );
    assert!(
        message.contains("cannot connect") && !message.contains(":pw@"),
        "{message}"
    );
    assert_eq!(
        quarry_postgres::redact("host=h user=u password=x dbname=d"),
        "host=h user=u password=*** dbname=d"
    );
}

#[test]
fn postgres_schema_from_a_newer_quarry_is_refused() {
    let url = quarry_test_postgres::database("newer");
    drop(PgStore::connect(&url).unwrap());
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .execute(
            "UPDATE quarry_meta SET value = '999' WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
    let message = format!("{:#}", PgStore::connect(&url).err().expect("refused"));
    assert!(
        message.contains("999") && message.contains("upgrade quarry"),
        "{message}"
    );
}

#[test]
fn postgres_a_database_from_before_the_posting_lists_gets_them_in_its_migration() {
    let url = quarry_test_postgres::database("before_postings");
    let mut store = PgStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(file(
        "a.py",
        "h1",
        vec![chunk(
            1,
            2,
            Some("alpha"),
            "def alpha():\n    return beta_value",
        )],
    ));
    batch.upserts.push(file(
        "b.py",
        "h2",
        vec![chunk(1, 1, Some("beta"), "def beta(): pass")],
    ));
    store.apply(repo.id, &batch).unwrap();
    let ranked = |store: &PgStore| -> Vec<(String, f64)> {
        store
            .search_lexical(&query("alpha beta"))
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    let before = ranked(&store);
    assert_eq!(before.len(), 2, "{before:?}");
    drop(store);
    // The database as schema 7 left it: counts, no posting lists.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "DROP TABLE fts_postings; DROP SEQUENCE fts_blocks;
             UPDATE quarry_meta SET value = '7' WHERE key = 'schema_version'",
        )
        .unwrap();
    let store = PgStore::connect(&url).unwrap();
    assert_eq!(store.posting_mismatches().unwrap(), 0);
    assert_eq!(ranked(&store), before);
}

#[test]
fn postgres_a_database_with_one_trigram_index_gets_it_partitioned_in_its_migration() {
    let url = quarry_test_postgres::database("before_gram_partitions");
    let mut store = PgStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    let mut batch = IndexBatch::default();
    for (path, text) in [
        ("a.py", "def parse_expr(s):\n"),
        ("b.py", "def other(): pass\n"),
    ] {
        let mut f = file(path, path, vec![chunk(1, 1, None, text)]);
        f.grep_text = Some(text.into());
        batch.upserts.push(f);
    }
    store.apply(repo.id, &batch).unwrap();
    let required = quarry_core::Requirement::Contains("parse_expr".into());
    let before = store.trigram_lookup(&required, None).unwrap().may_match;
    assert_eq!(before.len(), 1);
    drop(store);
    // The database as schema 10 left it: one table, one GIN index.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "CREATE TABLE flat AS SELECT * FROM file_grams;
             DROP TABLE file_grams;
             ALTER TABLE flat RENAME TO file_grams;
             ALTER TABLE file_grams ADD PRIMARY KEY (repo_id, file_id);
             CREATE INDEX file_grams_gin ON file_grams USING gin (grams);
             UPDATE quarry_meta SET value = '10' WHERE key = 'schema_version'",
        )
        .unwrap();
    let store = PgStore::connect(&url).unwrap();
    let partitions: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'file_grams'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(partitions, 16);
    assert_eq!(
        store.trigram_lookup(&required, None).unwrap().may_match,
        before
    );
}

#[test]
fn postgres_without_pgvector_says_how_to_install_it() {
    // PostgreSQL 18 looks for extensions where `extension_control_path` says: point it at an
    // empty folder, as on a server where pgvector was never installed.
    let empty = tempfile::tempdir().unwrap();
    let url = format!(
        "{}?options=-c%20extension_control_path%3D{}",
        quarry_test_postgres::database("no_vector"),
        empty.path().display()
    );
    let message = format!("{:#}", PgStore::connect(&url).err().expect("no pgvector"));
    assert!(
        message.contains("pgvector") && message.contains("install"),
        "{message}"
    );
}
