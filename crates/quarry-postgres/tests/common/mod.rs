//! Fixtures the PostgreSQL store's test files share.
#![allow(dead_code)]

use std::path::Path;

use quarry_core::store::IndexedFile;
use quarry_core::{Chunk, FileChunks, FileState, Language, LexicalQuery, Symbol};
use quarry_postgres::PgStore;

pub fn chunk(start: u32, end: u32, symbol: Option<&str>, text: &str) -> Chunk {
    Chunk {
        start_line: start,
        end_line: end,
        symbol: symbol.map(str::to_string),
        kind: if symbol.is_some() {
            "function"
        } else {
            "module"
        }
        .to_string(),
        parent: None,
        signature: None,
        language: Language::Python,
        symbols: symbol.map(|s| vec![s.to_string()]).unwrap_or_default(),
        text: text.to_string(),
        page: None,
        cell: None,
    }
}

pub fn file(path: &str, hash: &str, chunks: Vec<Chunk>) -> IndexedFile {
    let symbols = chunks
        .iter()
        .filter_map(|c| {
            c.symbol.as_ref().map(|s| Symbol {
                name: s.clone(),
                kind: c.kind.clone(),
                parent: None,
                start_line: c.start_line,
                end_line: c.end_line,
                signature: None,
            })
        })
        .collect();
    IndexedFile {
        path: path.to_string(),
        language: Language::detect(Path::new(path)),
        state: FileState {
            hash: hash.to_string(),
            size: 10,
            mtime_ns: 1,
        },
        content: FileChunks {
            chunks,
            symbols,
            calls: vec![quarry_core::CallSite {
                callee: "helper".into(),
                caller: None,
                line: 1,
            }],
        },
        grep_text: None,
        grep_trigrams: None,
    }
}

pub fn query(text: &str) -> LexicalQuery {
    LexicalQuery {
        terms: quarry_core::tokens::query_terms(text),
        limit: 10,
        ..Default::default()
    }
}

pub fn store(hint: &str) -> PgStore {
    PgStore::connect(&quarry_test_postgres::database(hint)).expect("connect to the test server")
}
