//! What a pattern requires of a file's text, as plain data: quarry-grep reads it out of a
//! regex (literals.rs), and each store answers which indexed files can satisfy it
//! (`Store::trigram_lookup`) in its own index language — FTS5 trigrams in the embedded file,
//! hashed trigrams on PostgreSQL, trigram keywords on OpenSearch.

/// A boolean requirement over substrings of a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// Any text may match.
    Anything,
    /// The text contains this string (three or more characters).
    Contains(String),
    All(Vec<Requirement>),
    Any(Vec<Requirement>),
}

impl Requirement {
    /// The requirement as an FTS5 query over a `trigram` table: each string becomes the AND of
    /// its trigrams (the table keeps no positions, so a substring is its trigrams, all
    /// present). `None` when it requires nothing.
    pub fn fts5_query(&self) -> Option<String> {
        match self {
            Requirement::Anything => None,
            Requirement::Contains(s) => {
                let chars: Vec<char> = s.chars().collect();
                let mut grams: Vec<String> = chars
                    .windows(3)
                    .map(|w| format!("\"{}\"", w.iter().collect::<String>().replace('"', "\"\"")))
                    .collect();
                grams.dedup();
                Some(grams.join(" AND "))
            }
            Requirement::All(parts) => Some(
                parts
                    .iter()
                    .filter_map(|p| p.fts5_query())
                    .map(|q| format!("({q})"))
                    .collect::<Vec<_>>()
                    .join(" AND "),
            ),
            Requirement::Any(options) => {
                let parts: Vec<String> = options
                    .iter()
                    .map(|o| o.fts5_query().map(|q| format!("({q})")))
                    .collect::<Option<_>>()?;
                Some(parts.join(" OR "))
            }
        }
    }
}
