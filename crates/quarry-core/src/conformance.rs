//! Checks every `Store` must pass, run by each backend's own tests (the embedded SQLite file
//! and PostgreSQL) so the two cannot drift apart. They panic with what differs.

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
}
