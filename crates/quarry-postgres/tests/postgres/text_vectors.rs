//! The text vectors quarry builds for the rows it writes (text_vector.rs) against the ones the
//! server builds from the same tokens.

use std::path::Path;

use quarry_core::store::{IndexBatch, IndexedFile, Store};
use quarry_core::{FileState, Language};
use quarry_postgres::PgStore;

use crate::common::{chunk, file};

/// quarry builds the rows' text vectors itself (text_vector.rs); each must equal what the
/// server makes of the same tokens: real source files, and made-up extremes of its limits
/// (positions past 16,383, a word more than 255 times in a field and 256 across them, the
/// same word in every field, words that are not ASCII), for files, chunks and commits.
#[test]
fn postgres_text_vectors_equal_the_servers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut batch = IndexBatch::default();
    for name in ["write.rs", "bm25.rs", "text_vector.rs"] {
        let text = std::fs::read_to_string(root.join("src").join(name)).unwrap();
        batch.upserts.push(IndexedFile {
            content: quarry_chunk::chunk_file(Language::Rust, &text, &Default::default()),
            path: format!("src/{name}"),
            language: Language::Rust,
            state: FileState {
                hash: name.into(),
                size: text.len() as u64,
                mtime_ns: 1,
            },
            grep_text: None,
            grep_trigrams: None,
        });
    }
    let long = format!(
        "repeat {} tail repeat tail\nstraße café naïve 日本語 x2 2x 1e5 ʼn\n{}",
        "word other ".repeat(9_000),
        "repeat ".repeat(300)
    );
    batch.upserts.push(file(
        "repeat/repeat.py",
        "h-long",
        vec![
            chunk(1, 2, Some("repeat"), &long),
            chunk(3, 3, Some("repeat_word"), &"repeat word ".repeat(200)),
            chunk(4, 4, None, ""),
        ],
    ));
    let url = quarry_test_postgres::database("text_vectors");
    let mut store = PgStore::connect(&url).unwrap();
    let repo = store.ensure_repo("r", "/src/r").unwrap();
    store.apply(repo.id, &batch).unwrap();
    let commit = |sha: &str, subject: &str, patch: String| quarry_core::history::CommitRecord {
        sha: sha.into(),
        parents: vec![],
        author: "a".into(),
        email: "a@example.com".into(),
        author_time: 1,
        commit_time: 1,
        subject: subject.into(),
        // Its last word past its 255th time: the next field starts after the highest
        // position stored, not after the last word.
        body: format!(
            "Fixes the repeat word parser.\n\nstraße {}",
            "repeat ".repeat(300)
        ),
        files: vec![quarry_core::history::ChangedFile {
            path: "repeat/repeat.py".into(),
            old_path: Some("old/repeat.py".into()),
            status: "renamed".into(),
            added: Some(1),
            removed: Some(0),
            merged_in: false,
        }],
        patch,
        patch_truncated: false,
    };
    quarry_core::history::HistoryStore::put_commits(
        &mut store,
        repo.id,
        &[
            commit("a1", "Repeat the word", "+repeat word\n".repeat(5_000)),
            commit("b2", "Parse straße", "-x\n+y\n".into()),
            // Twice in one batch: the first stays.
            commit("a1", "Repeat the word", "+repeat word\n".repeat(5_000)),
        ],
    )
    .unwrap();

    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let expected = "setweight(to_tsvector('quarry', $2), 'A') || setweight(to_tsvector('quarry', $3), 'B')
                    || setweight(to_tsvector('quarry', $4), 'C') || setweight(to_tsvector('quarry', $5), 'D')";
    let mut compared = 0;
    let mut compare = |admin: &mut postgres::Client, sql: &str, id: i64, fields: [&str; 4]| {
        let sql = format!("SELECT tsv = ({expected}), tsv::text, ({expected})::text FROM {sql}");
        let row = admin
            .query_one(&sql, &[&id, &fields[0], &fields[1], &fields[2], &fields[3]])
            .unwrap();
        assert!(
            row.get::<_, bool>(0),
            "{sql} {id}: stored {:.300} …, server {:.300} …",
            row.get::<_, String>(1),
            row.get::<_, String>(2)
        );
        compared += 1;
    };
    for f in &batch.upserts {
        let file_id: i64 = admin
            .query_one("SELECT id FROM files WHERE path = $1", &[&f.path])
            .unwrap()
            .get(0);
        let (chunk_fields, file_fields) = f.search_fields();
        compare(
            &mut admin,
            "files WHERE id = $1",
            file_id,
            [
                &file_fields.path,
                &file_fields.symbols,
                &file_fields.body,
                "",
            ],
        );
        for (c, fields) in f.content.chunks.iter().zip(&chunk_fields) {
            let id: i64 = admin
                .query_one(
                    "SELECT id FROM chunks WHERE file_id = $1 AND start_line = $2",
                    &[&file_id, &(c.start_line as i32)],
                )
                .unwrap()
                .get(0);
            compare(
                &mut admin,
                "chunks WHERE id = $1",
                id,
                [&fields.path, &fields.symbols, &fields.body, ""],
            );
        }
    }
    for (sha, c) in [
        (
            "a1",
            commit("a1", "Repeat the word", "+repeat word\n".repeat(5_000)),
        ),
        ("b2", commit("b2", "Parse straße", "-x\n+y\n".into())),
    ] {
        let id: i64 = admin
            .query_one("SELECT id FROM commits WHERE sha = $1", &[&sha])
            .unwrap()
            .get(0);
        let tokens = quarry_core::tokens::index_text;
        compare(
            &mut admin,
            "commits WHERE id = $1",
            id,
            [
                &tokens(&c.subject),
                &tokens(&c.body),
                &tokens("repeat/repeat.py old/repeat.py "),
                &tokens(&c.patch),
            ],
        );
    }
    assert!(compared > 20, "{compared} rows compared");
    let stored: i64 = admin
        .query_one("SELECT count(*) FROM commits", &[])
        .unwrap()
        .get(0);
    assert_eq!(stored, 2);
    assert_eq!(store.posting_mismatches().unwrap(), 0);
}
