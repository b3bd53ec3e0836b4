//! Git history on OpenSearch beside the embedded store: the same commits stored in both
//! answer every history call alike.

use quarry_core::history::{ChangedFile, CommitQuery, CommitRecord, HistoryStore};
use quarry_core::store::Store;

use crate::common::store;

fn changed(path: &str, old: Option<&str>, status: &str) -> ChangedFile {
    ChangedFile {
        path: path.into(),
        old_path: old.map(String::from),
        status: status.into(),
        added: Some(3),
        removed: Some(1),
        merged_in: false,
    }
}

fn commit(
    n: u32,
    subject: &str,
    author: &str,
    files: Vec<ChangedFile>,
    patch: &str,
) -> CommitRecord {
    CommitRecord {
        sha: format!("{n:02x}{}", "ab".repeat(19)),
        parents: vec![],
        author: author.into(),
        email: format!("{}@example.com", author.to_lowercase()),
        author_time: 1_700_000_000 + i64::from(n) * 86_400,
        commit_time: 1_700_000_000 + i64::from(n) * 86_400,
        subject: subject.into(),
        body: format!("Body of {subject}."),
        files,
        patch: patch.into(),
        patch_truncated: false,
    }
}

fn history() -> Vec<CommitRecord> {
    vec![
        commit(
            1,
            "Add the session store",
            "Alice",
            vec![changed("auth/session.go", None, "added")],
            "+func Open() {}\n",
        ),
        commit(
            2,
            "Rate limit logins",
            "Bob",
            vec![
                changed("auth/session.go", None, "modified"),
                changed("auth/limit.go", None, "added"),
            ],
            "+// rate limiting, burst 5\n+func Limit() {}\n",
        ),
        commit(
            3,
            "Move sessions into their own file",
            "Alice",
            vec![changed(
                "auth/sessions.go",
                Some("auth/session.go"),
                "renamed",
            )],
            "rename\n",
        ),
        commit(
            4,
            "Document the rate limiter",
            "Carol",
            vec![changed("README.md", None, "modified")],
            "+Logins are rate limited.\n",
        ),
        commit(
            5,
            "Allow bursts of ten",
            "Bob",
            vec![changed("auth/limit.go", None, "modified")],
            "-burst 5\n+burst 10 rate limiting\n",
        ),
    ]
}

#[test]
fn opensearch_history_answers_as_the_embedded_store_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = quarry_store::SqliteStore::open(&dir.path().join("index.sqlite")).unwrap();
    let mut os = store("history");
    let commits = history();
    for s in [&mut sqlite as &mut dyn Store, &mut os as &mut dyn Store] {
        let repo = s.ensure_repo("svc", "/src/svc").unwrap().id;
        s.put_commits(repo, &commits[..3]).unwrap();
        // Already stored ones are skipped, new ones added.
        s.put_commits(repo, &commits).unwrap();
        assert_eq!(s.known_commits(repo).unwrap().len(), 5);
    }
    let repo = os.ensure_repo("svc", "/src/svc").unwrap().id;
    let shas = |hits: Vec<quarry_core::history::CommitHit>| -> Vec<(String, f64)> {
        hits.into_iter().map(|h| (h.subject, h.score)).collect()
    };
    let terms = |t: &str| quarry_core::tokens::query_terms(t);
    let queries = [
        CommitQuery {
            terms: terms("rate limiting"),
            limit: 10,
            ..Default::default()
        },
        CommitQuery {
            terms: terms("limiters throttled bursts"),
            limit: 10,
            ..Default::default()
        },
        CommitQuery {
            limit: 10,
            author: Some("BOB".into()),
            ..Default::default()
        },
        CommitQuery {
            limit: 10,
            since: Some(1_700_000_000 + 3 * 86_400),
            ..Default::default()
        },
        CommitQuery {
            limit: 10,
            path: Some("README.md".into()),
            ..Default::default()
        },
        CommitQuery {
            terms: terms("session"),
            path: Some("auth/*".into()),
            until: Some(1_700_000_000 + 3 * 86_400),
            limit: 10,
            ..Default::default()
        },
    ];
    for q in &queries {
        let (a, b) = (
            shas(sqlite.search_commits(q).unwrap()),
            shas(os.search_commits(q).unwrap()),
        );
        assert!(!a.is_empty(), "{q:?} finds nothing");
        assert_eq!(a.len(), b.len(), "{q:?}: {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.0, y.0, "{q:?}: {a:?} vs {b:?}");
            assert!(
                (x.1 - y.1).abs() <= 1e-6 * x.1.abs().max(1.0),
                "{q:?}: {a:?} vs {b:?}"
            );
        }
    }
    // touches follows the rename back to the old name.
    let all = CommitQuery {
        limit: 10,
        ..Default::default()
    };
    for path in ["auth/sessions.go", "auth", "auth/limit.go"] {
        assert_eq!(
            shas(sqlite.touches(path, &all).unwrap()),
            shas(os.touches(path, &all).unwrap()),
            "{path}"
        );
    }
    assert_eq!(os.touches("auth/sessions.go", &all).unwrap().len(), 3);
    // A SHA prefix, the changed paths and patches by SHA.
    let found = os.commits_by_prefix("03ab", &[]).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, commits[2]);
    assert_eq!(found, sqlite.commits_by_prefix("03ab", &[]).unwrap());
    let wanted = vec![commits[1].sha.clone(), "ffff".to_string()];
    assert_eq!(
        os.changed_paths("svc", &wanted).unwrap(),
        sqlite.changed_paths("svc", &wanted).unwrap()
    );
    assert_eq!(
        os.commit_patches("svc", &wanted).unwrap()[&commits[1].sha],
        commits[1].patch
    );

    // Embedding: the newest first, within the bound; vectors searched under the filters.
    assert_eq!(os.waiting_commit_embeddings(Some(2), &[]).unwrap(), 2);
    assert_eq!(os.waiting_commit_embeddings(None, &[]).unwrap(), 5);
    let pending = os.pending_commit_embeddings(10, Some(3), &[]).unwrap();
    assert_eq!(pending.len(), 3);
    assert!(
        pending[0].text.starts_with("Allow bursts of ten"),
        "{}",
        pending[0].text
    );
    let vector = |axis: usize| {
        let mut v = vec![0.0f32; 4];
        v[axis] = 1.0;
        v
    };
    let vectors: Vec<(i64, Vec<f32>)> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id, vector(i)))
        .collect();
    os.put_commit_vectors(&vectors).unwrap();
    assert!(os.has_commit_vectors(&[]).unwrap());
    assert_eq!(os.waiting_commit_embeddings(Some(3), &[]).unwrap(), 0);
    let near = os
        .search_commit_vectors(
            &vector(1),
            &CommitQuery {
                limit: 2,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(near[0].subject, "Document the rate limiter");
    assert!((near[0].score - 1.0).abs() < 1e-4 && near[0].embedded);
    let by_bob = os
        .search_commit_vectors(
            &vector(1),
            &CommitQuery {
                limit: 2,
                author: Some("bob".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(by_bob.iter().all(|h| h.author == "Bob"), "{by_bob:?}");
    let stats = os.history_stats().unwrap();
    assert_eq!(
        (stats[0].commits, stats[0].embedded, stats[0].embed),
        (5, 3, true)
    );
    os.set_history_embedding(repo, false).unwrap();
    assert!(!os.has_commit_vectors(&[]).unwrap());
    assert!(!os.history_stats().unwrap()[0].embed);
    assert_eq!(os.waiting_commit_embeddings(None, &[]).unwrap(), 0);

    // History rewritten: dropped commits are gone; a rebuild of the files keeps history.
    os.drop_commits(repo, &[commits[4].sha.clone()]).unwrap();
    assert_eq!(os.known_commits(repo).unwrap().len(), 4);
    os.clear_files(repo).unwrap();
    assert_eq!(os.search_commits(&all).unwrap().len(), 4);
}

/// A sync killed after writing commits and before they became searchable (a refresh), run
/// again: each commit is one document. The search that skips stored commits does not see
/// such writes, and each rewrite used to be a second document (the fault campaign: 5,736
/// documents for 5,531 commits after four killed syncs, `log` listing a SHA twice).
#[test]
fn opensearch_a_sync_killed_before_its_commits_were_searchable_stores_each_commit_once() {
    let url = quarry_test_opensearch::store_url("history_killed");
    let commits = history();
    let mut killed = quarry_opensearch::OpenSearchStore::connect(&url).unwrap();
    let repo = killed.ensure_repo("svc", "/src/svc").unwrap().id;
    // No refresh but quarry's own: the rerun comes within the index's 30 s.
    let index = killed.index("commits");
    let (status, body) = quarry_test_opensearch::request(
        quarry_test_opensearch::server(),
        "PUT",
        &format!("/{index}/_settings"),
        Some(r#"{"index": {"refresh_interval": "-1"}}"#),
    )
    .unwrap();
    assert!(status < 300, "{status} {body}");
    killed.put_commits_unrefreshed(repo, &commits[..3]).unwrap();
    drop(killed);

    let mut next = quarry_opensearch::OpenSearchStore::connect(&url).unwrap();
    assert!(
        next.known_commits(repo).unwrap().is_empty(),
        "the killed sync's writes are not searchable yet"
    );
    next.put_commits(repo, &commits).unwrap();
    next.put_commits(repo, &commits[1..2]).unwrap();
    assert_eq!(next.known_commits(repo).unwrap().len(), 5);
    assert_eq!(next.history_stats().unwrap()[0].commits, 5);
    let all = CommitQuery {
        limit: 20,
        ..Default::default()
    };
    let mut listed: Vec<String> = next
        .search_commits(&all)
        .unwrap()
        .into_iter()
        .map(|h| h.sha)
        .collect();
    listed.sort();
    let mut wanted: Vec<String> = commits.iter().map(|c| c.sha.clone()).collect();
    wanted.sort();
    assert_eq!(listed, wanted);
    // Each commit's vector lands on its one document.
    let pending = next.pending_commit_embeddings(10, None, &[]).unwrap();
    assert_eq!(pending.len(), 5);
    let vectors: Vec<(i64, Vec<f32>)> = pending
        .iter()
        .map(|p| (p.id, vec![1.0, 0.0, 0.0]))
        .collect();
    next.put_commit_vectors(&vectors).unwrap();
    let stats = next.history_stats().unwrap();
    assert_eq!((stats[0].commits, stats[0].embedded), (5, 5));
    assert_eq!(next.waiting_commit_embeddings(None, &[]).unwrap(), 0);
}
