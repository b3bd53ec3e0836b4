//! `index --rebuild` as readers see it: the old repo or the new one, never a half-built one,
//! and the old one after a rebuild that did not reach its commit (issue 63: 17 of 140 searches
//! during a rebuild saw no result or another first hit).

use super::*;
use crate::tests::{chunk, file, query};

fn batch_of(files: &[(&str, &str)]) -> IndexBatch {
    IndexBatch {
        upserts: files
            .iter()
            .map(|(path, name)| {
                file(
                    path,
                    &format!("hash of {path} {name}"),
                    vec![chunk(
                        1,
                        2,
                        Some(name),
                        &format!("def {name}(value):\n    return value\n"),
                    )],
                )
            })
            .collect(),
        ..Default::default()
    }
}

/// A writer holding a finished index of two files, and a reader on the same file.
fn writer_and_reader() -> (tempfile::TempDir, SqliteStore, SqliteStore, i64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let mut writer = SqliteStore::open(&path).unwrap();
    let repo = writer.ensure_repo("demo", "/src/demo").unwrap().id;
    let old = batch_of(&[
        ("app/config.py", "parse_config_file"),
        ("app/users.py", "load_user_record"),
    ]);
    writer.apply(repo, &old).unwrap();
    writer.finish_run(repo, &Default::default()).unwrap();
    let reader = SqliteStore::open_with(&path, Access::Read).unwrap();
    (dir, writer, reader, repo)
}

fn first_hit(store: &SqliteStore, words: &str) -> Option<String> {
    store
        .search_lexical(&query(words))
        .unwrap()
        .into_iter()
        .next()
        .map(|hit| hit.path)
}

fn files_of(store: &SqliteStore) -> u64 {
    store.stats().unwrap()[0].files
}

#[test]
fn readers_see_the_old_repo_or_the_new_one_never_a_half_built_one() {
    let (_dir, mut writer, reader, repo) = writer_and_reader();
    assert!(writer.begin_rebuild(repo).unwrap(), "built beside");
    // The writer builds from nothing: no file is "unchanged".
    assert!(writer.file_states(repo).unwrap().is_empty());
    // Half built: one batch of two.
    writer
        .apply(repo, &batch_of(&[("app/config.py", "parse_config_file")]))
        .unwrap();
    assert_eq!(
        first_hit(&reader, "load_user_record").as_deref(),
        Some("app/users.py")
    );
    assert_eq!(files_of(&reader), 2);
    writer
        .apply(repo, &batch_of(&[("app/ledger.py", "zebra_ledger")]))
        .unwrap();
    writer.finish_run(repo, &Default::default()).unwrap();
    // Finished but not switched: still the old repo.
    assert_eq!(first_hit(&reader, "zebra_ledger"), None);
    assert_eq!(reader.repos().unwrap()[0].files, 2);
    writer.commit_rebuild(repo).unwrap();
    // Switched: the new repo, whole.
    assert_eq!(first_hit(&reader, "load_user_record"), None);
    assert_eq!(
        first_hit(&reader, "zebra_ledger").as_deref(),
        Some("app/ledger.py")
    );
    assert_eq!(
        first_hit(&reader, "parse_config_file").as_deref(),
        Some("app/config.py")
    );
    assert_eq!(reader.repos().unwrap()[0].files, 2);
    // Writes after the switch are batches of their own again.
    writer
        .apply(repo, &batch_of(&[("app/more.py", "walrus_tusks")]))
        .unwrap();
    assert_eq!(
        first_hit(&reader, "walrus_tusks").as_deref(),
        Some("app/more.py")
    );
}

#[test]
fn a_rebuild_that_does_not_reach_its_commit_leaves_the_old_repo() {
    // Given up (Ctrl-C): rolled back at once.
    let (_dir, mut writer, reader, repo) = writer_and_reader();
    assert!(writer.begin_rebuild(repo).unwrap());
    writer
        .apply(repo, &batch_of(&[("app/ledger.py", "zebra_ledger")]))
        .unwrap();
    writer.abandon_rebuild(repo).unwrap();
    assert_eq!(
        first_hit(&writer, "load_user_record").as_deref(),
        Some("app/users.py")
    );
    assert_eq!(first_hit(&writer, "zebra_ledger"), None);
    assert_eq!(files_of(&reader), 2);
    assert_eq!(writer.file_states(repo).unwrap().len(), 2);

    // The writer gone mid-rebuild (its connection closed; kill -9 is the CLI's test): the
    // next open answers from the old repo, and a new rebuild runs.
    let (dir, mut writer, reader, repo) = writer_and_reader();
    writer.begin_rebuild(repo).unwrap();
    writer
        .apply(repo, &batch_of(&[("app/ledger.py", "zebra_ledger")]))
        .unwrap();
    drop(writer);
    drop(reader);
    let mut writer = SqliteStore::open(&dir.path().join("index.sqlite")).unwrap();
    assert_eq!(files_of(&writer), 2);
    assert_eq!(first_hit(&writer, "zebra_ledger"), None);
    assert_eq!(
        check_file_deep(&dir.path().join("index.sqlite")),
        Checked::Sound
    );
    writer.begin_rebuild(repo).unwrap();
    writer
        .apply(repo, &batch_of(&[("app/ledger.py", "zebra_ledger")]))
        .unwrap();
    writer.finish_run(repo, &Default::default()).unwrap();
    writer.commit_rebuild(repo).unwrap();
    assert_eq!(files_of(&writer), 1);
}
