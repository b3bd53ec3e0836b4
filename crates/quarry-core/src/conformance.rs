//! Checks every `Store` must pass, run by each backend's own tests (the embedded SQLite file,
//! PostgreSQL and OpenSearch) so they cannot drift apart. They panic with what differs.

use crate::store::{IndexBatch, IndexedFile, Store};
use crate::{tokens, Chunk, ContentType, FileChunks, FileState, Language, LexicalQuery};

fn chunk(text: &str, language: Language, page: Option<u32>, cell: Option<u32>) -> Chunk {
    Chunk {
        start_line: 1,
        end_line: text.lines().count() as u32,
        symbol: None,
        kind: "section".into(),
        parent: None,
        signature: None,
        language,
        symbols: Vec::new(),
        text: text.into(),
        page,
        cell,
    }
}

fn file(path: &str, language: Language, chunks: Vec<Chunk>) -> IndexedFile {
    IndexedFile {
        path: path.into(),
        language,
        state: FileState {
            hash: format!("hash-{path}"),
            size: 10,
            mtime_ns: 1,
        },
        content: FileChunks {
            chunks,
            ..Default::default()
        },
        grep_text: None,
        grep_trigrams: None,
    }
}

/// A notebook's cells keep their own language and number, a PDF chunk its page, and
/// `ContentType` filters chunks by their own language (files by the file's: a notebook is
/// both code and docs). `store` must hold no repo named `documents`.
pub fn chunks_keep_their_place_and_language(store: &mut dyn Store) {
    let repo = store.ensure_repo("documents", "/src/documents").unwrap().id;
    let batch = IndexBatch {
        upserts: vec![
            file(
                "analysis.ipynb",
                Language::Notebook,
                vec![
                    chunk(
                        "# Churn analysis\nWhich tenants cancelled",
                        Language::Markdown,
                        None,
                        Some(1),
                    ),
                    chunk(
                        "def churn_rate(cancelled, total):\n    return cancelled / total",
                        Language::Python,
                        None,
                        Some(2),
                    ),
                ],
            ),
            file(
                "docs/policy.pdf",
                Language::Pdf,
                vec![chunk(
                    "Churn policy\nCancelled tenants are archived",
                    Language::Pdf,
                    Some(7),
                    None,
                )],
            ),
        ],
        ..Default::default()
    };
    store.apply(repo, &batch).unwrap();
    let query = |content: ContentType| LexicalQuery {
        terms: tokens::query_terms("churn cancelled"),
        repos: vec!["documents".into()],
        content,
        limit: 10,
        ..Default::default()
    };
    let search = |content: ContentType| {
        let mut found: Vec<(String, Option<u32>, Option<u32>, Language)> = store
            .search_lexical(&query(content))
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.page, h.cell, h.language))
            .collect();
        found.sort_by(|a, b| (&a.0, a.2).cmp(&(&b.0, b.2)));
        found
    };
    let markdown_cell = (
        "analysis.ipynb".to_string(),
        None,
        Some(1),
        Language::Markdown,
    );
    let code_cell = (
        "analysis.ipynb".to_string(),
        None,
        Some(2),
        Language::Python,
    );
    let page = ("docs/policy.pdf".to_string(), Some(7), None, Language::Pdf);
    assert_eq!(
        search(ContentType::All),
        [markdown_cell.clone(), code_cell.clone(), page.clone()]
    );
    assert_eq!(search(ContentType::Docs), [markdown_cell, page]);
    assert_eq!(search(ContentType::Code), [code_cell]);
    // A language names a chunk's own language or its file's.
    let by_language = |language: Language| {
        let mut found: Vec<Option<u32>> = store
            .search_lexical(&LexicalQuery {
                language: Some(language),
                ..query(ContentType::All)
            })
            .unwrap()
            .iter()
            .map(|h| h.cell.or(h.page))
            .collect();
        found.sort();
        found
    };
    assert_eq!(by_language(Language::Python), [Some(2)]);
    assert_eq!(by_language(Language::Markdown), [Some(1)]);
    assert_eq!(by_language(Language::Notebook), [Some(1), Some(2)]);
    assert_eq!(by_language(Language::Pdf), [Some(7)]);
    let files: Vec<String> = store
        .search_files_lexical(&query(ContentType::Code))
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(files, ["analysis.ipynb"]);
    let cells: Vec<Option<u32>> = store
        .file_chunks("documents", "analysis.ipynb")
        .unwrap()
        .iter()
        .map(|c| c.cell)
        .collect();
    assert_eq!(cells, [Some(1), Some(2)]);
    // The first chunk alone is the first of them; a path the index lacks has none.
    let first = store
        .first_chunk("documents", "analysis.ipynb")
        .unwrap()
        .map(|c| c.cell);
    assert_eq!(first, Some(Some(1)));
    assert!(store
        .first_chunk("documents", "missing.ipynb")
        .unwrap()
        .is_none());
    // The paths alone are those of the files' states.
    let repo = store
        .repos()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "documents")
        .unwrap();
    let mut paths = store.file_paths(repo.id).unwrap();
    paths.sort();
    let mut states: Vec<String> = store.file_states(repo.id).unwrap().into_keys().collect();
    states.sort();
    assert!(!paths.is_empty());
    assert_eq!(paths, states);
    // The paths holding a string: those of `file_paths` that contain it, and no others.
    for needle in [".", "/", "md", "no such part", ""] {
        let mut containing = store.file_paths_containing(repo.id, needle).unwrap();
        containing.sort();
        let expected: Vec<String> = paths
            .iter()
            .filter(|p| p.contains(needle))
            .cloned()
            .collect();
        assert_eq!(containing, expected, "{needle:?}");
    }
}

/// The trigram pre-filter of `quarry grep`: which indexed files can contain a requirement's
/// strings (case folded: a filter may only ever be weaker than the pattern), which files it
/// knows (not one without an exact text: grep reads that one itself), and a generation that
/// moves with every change to the files — a changed, deleted or merely touched file. `store`
/// must hold no repo named `grepped`.
pub fn trigram_lookup_says_which_files_can_contain_the_literals(store: &mut dyn Store) {
    use crate::Requirement::{All, Any, Contains};
    let with_text = |path: &str, hash: &str, text: &str| {
        let mut f = file(
            path,
            Language::Python,
            vec![chunk(text, Language::Python, None, None)],
        );
        f.state.hash = hash.into();
        f.grep_text = Some(text.into());
        f
    };
    let repo = store.ensure_repo("grepped", "/src/grepped").unwrap();
    let mut batch = IndexBatch::default();
    batch.upserts.push(with_text(
        "a.py",
        "h1",
        "def parse_expr(s, evaluate=False):\n",
    ));
    batch
        .upserts
        .push(with_text("b.py", "h2", "def other(): return PARSE_EXPR\n"));
    // Text read with replacements (invalid UTF-8): no exact text, grep reads the file itself.
    batch.upserts.push(file(
        "c.py",
        Language::Python,
        vec![chunk("parse_expr\u{fffd}", Language::Python, None, None)],
    ));
    store.apply(repo.id, &batch).unwrap();
    let may = |store: &dyn Store, required: &crate::Requirement| {
        let lookup = store.trigram_lookup(required, None).unwrap();
        let mut paths: Vec<(String, bool)> = lookup
            .files
            .unwrap()
            .iter()
            .filter(|f| f.root == "/src/grepped")
            .map(|f| (f.path.clone(), lookup.may_match.contains(&f.id)))
            .collect();
        paths.sort();
        paths
    };
    let both = |a: bool, b: bool| vec![("a.py".to_string(), a), ("b.py".to_string(), b)];
    let has = |s: &str| Contains(s.to_string());
    assert_eq!(may(store, &has("parse_e")), both(true, true));
    assert_eq!(may(store, &has("eval")), both(true, false));
    assert_eq!(may(store, &has("nowhere")), both(false, false));
    assert_eq!(
        may(store, &All(vec![has("other"), has("parse")])),
        both(false, true)
    );
    assert_eq!(
        may(store, &Any(vec![has("other"), has("evaluate")])),
        both(true, true)
    );
    // Characters LIKE and FTS5 read as syntax are plain text here.
    assert_eq!(may(store, &has("r%s")), both(false, false));
    assert_eq!(may(store, &has("r_e")), both(false, false));
    assert_eq!(may(store, &has("(s\"")), both(false, false));
    assert_eq!(may(store, &has("e_e")), both(true, true));
    assert_eq!(may(store, &crate::Requirement::Anything), both(true, true));

    // A caller that kept the files of the current generation is not sent them again.
    let eva = has("eva");
    let generation = store.trigram_lookup(&eva, None).unwrap().generation;
    assert!(store
        .trigram_lookup(&eva, Some(generation))
        .unwrap()
        .files
        .is_none());
    // A changed file replaces its text; a deleted one takes it away; either moves the
    // generation, and so does a file whose state alone changed.
    let mut batch = IndexBatch::default();
    batch
        .upserts
        .push(with_text("a.py", "h4", "nothing here\n"));
    batch.deleted.push("b.py".into());
    store.apply(repo.id, &batch).unwrap();
    assert_eq!(may(store, &eva), vec![("a.py".to_string(), false)]);
    let moved = store.trigram_lookup(&eva, Some(generation)).unwrap();
    assert!(moved.generation != generation && moved.files.is_some());
    let mut batch = IndexBatch::default();
    let mut state = with_text("a.py", "h4", "").state;
    state.mtime_ns += 1;
    batch.touched.push(("a.py".into(), state));
    store.apply(repo.id, &batch).unwrap();
    let touched = store.trigram_lookup(&eva, Some(moved.generation)).unwrap();
    assert!(touched.generation != moved.generation && touched.files.is_some());
    store.remove_repo(repo.id).unwrap();
    assert!(may(store, &eva).is_empty());
}
