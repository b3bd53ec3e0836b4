//! Function-level scoring: a query's `relevant_symbols` labels (`{"path": ["Class.method"]}`)
//! are looked up in the evaluation index at the query's commit, and a result counts when its
//! lines overlap a labelled definition. Labels that are not definitions (`imports`,
//! `docstring`, a name the index does not hold at that commit) are left out; a query with none
//! left is not scored at this level.

use super::EvalQuery;
use anyhow::Result;
use quarry_engine::answer::SearchResult;
use quarry_engine::Workspace;

/// A labelled definition's place.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub path: String,
    pub start: u32,
    pub end: u32,
}

/// The labelled definitions of a query, as found in the index.
pub fn resolve(ws: &Workspace, q: &EvalQuery, repo: &str) -> Result<Vec<Span>> {
    let mut spans = Vec::new();
    for (path, names) in &q.relevant_symbols {
        for name in names {
            let bare = name.rsplit('.').next().unwrap_or(name);
            for d in ws.store().definitions(bare, &[repo.to_string()], 500)? {
                if &d.path == path && d.qualified_name == *name {
                    spans.push(Span {
                        path: d.path,
                        start: d.start_line,
                        end: d.end_line,
                    });
                }
            }
        }
    }
    Ok(spans)
}

/// 1-based rank of the first result whose lines overlap a labelled definition.
pub fn first_rank(results: &[SearchResult], spans: &[Span]) -> Option<usize> {
    results
        .iter()
        .position(|r| {
            spans
                .iter()
                .any(|s| s.path == r.path && r.start_line <= s.end && s.start <= r.end_line)
        })
        .map(|p| p + 1)
}
