//! `quarry grep`'s pre-filter on OpenSearch: each indexed file's distinct trigrams, case
//! folded, as keywords of its document (`grams`); a requirement's strings (quarry-grep's
//! reading of the pattern) become `term` filters on them, AND within a string, as the
//! requirement says between strings, and the files they rule out are never read. The
//! embedded store does the same with an FTS5 trigram table, PostgreSQL with hashed trigrams
//! under GIN.
//!
//! The generation that tells a caller its kept file list is stale is a counter every write of
//! files moves (write.rs). OpenSearch reads have no snapshot across requests, so the lookup
//! reads the generation before and after and tries again when a write fell between.

use anyhow::Result;
use quarry_core::{Requirement, TrigramFile, TrigramLookup};
use serde_json::{json, Value};

use crate::OpenSearchStore;

/// The distinct trigrams of `text`, case folded (a filter may only be weaker than the
/// pattern, `-i` included), in order.
pub(crate) fn grams(text: &str) -> Vec<String> {
    // Each trigram packed into one integer (a char is 21 bits), whose order is the strings'
    // (code point order, which UTF-8 keeps): a file's every position sorted as integers, and
    // only the distinct ones made strings. A string per position, sorted, was a sixth of
    // the CPU of indexing into OpenSearch.
    let folded: Vec<u64> = text
        .chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c) as u64)
        .collect();
    let mut packed: Vec<u64> = folded
        .windows(3)
        .map(|w| (w[0] << 42) | (w[1] << 21) | w[2])
        .collect();
    packed.sort_unstable();
    packed.dedup();
    let char_at = |shift: u32, gram: u64| {
        char::from_u32(((gram >> shift) & 0x1F_FFFF) as u32).unwrap_or(char::REPLACEMENT_CHARACTER)
    };
    packed
        .into_iter()
        .map(|gram| {
            [char_at(42, gram), char_at(21, gram), char_at(0, gram)]
                .iter()
                .collect()
        })
        .collect()
}

/// The query that holds for every file whose text satisfies `required`; `None` when it
/// requires nothing.
fn condition(required: &Requirement) -> Option<Value> {
    match required {
        Requirement::Anything => None,
        Requirement::Contains(s) => {
            let grams = grams(s);
            if grams.is_empty() {
                return None;
            }
            let each: Vec<Value> = grams
                .iter()
                .map(|g| json!({"term": {"grams": g}}))
                .collect();
            Some(json!({"bool": {"filter": each}}))
        }
        Requirement::All(parts) => {
            let kept: Vec<Value> = parts.iter().filter_map(condition).collect();
            (!kept.is_empty()).then(|| json!({"bool": {"filter": kept}}))
        }
        Requirement::Any(options) => {
            let each: Vec<Value> = options.iter().map(condition).collect::<Option<_>>()?;
            Some(json!({"bool": {"should": each, "minimum_should_match": 1}}))
        }
    }
}

fn generation(store: &OpenSearchStore) -> Result<i64> {
    Ok(store
        .meta("counter-generation")?
        .and_then(|d| d["value"].as_i64())
        .unwrap_or(0))
}

pub(crate) fn lookup(
    store: &OpenSearchStore,
    required: &Requirement,
    known_generation: Option<i64>,
) -> Result<TrigramLookup> {
    let with_text = json!({"term": {"has_text": true}});
    let matching = match condition(required) {
        Some(c) => json!({"bool": {"filter": [with_text, c]}}),
        None => with_text.clone(),
    };
    let index = store.alias("files");
    let roots: std::collections::HashMap<i64, String> = store
        .repo_list()?
        .into_iter()
        .map(|r| (r.id, r.root))
        .collect();
    loop {
        let generation = generation(store)?;
        let mut may_match = Vec::new();
        store
            .client
            .scan(&index, matching.clone(), &["id"], |doc| {
                may_match.push(doc["id"].as_i64().unwrap_or(0));
                Ok(())
            })?;
        let files = if known_generation == Some(generation) {
            None
        } else {
            let mut files = Vec::new();
            store.client.scan(
                &index,
                with_text.clone(),
                &["id", "repo_id", "path", "size", "mtime_ns"],
                |doc| {
                    let repo = doc["repo_id"].as_i64().unwrap_or(0);
                    if let Some(root) = roots.get(&repo) {
                        files.push(TrigramFile {
                            id: doc["id"].as_i64().unwrap_or(0),
                            root: root.clone(),
                            path: doc["path"].as_str().unwrap_or("").to_string(),
                            size: doc["size"].as_u64().unwrap_or(0),
                            mtime_ns: doc["mtime_ns"].as_i64().unwrap_or(0),
                        });
                    }
                    Ok(())
                },
            )?;
            Some(files)
        };
        if self::generation(store)? == generation {
            return Ok(TrigramLookup {
                generation,
                may_match,
                files,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_requires_its_folded_trigrams_and_the_conditions_combine_as_it_does() {
        assert_eq!(grams("Parse"), grams("pARSE"));
        assert_eq!(grams("abcabc"), ["abc", "bca", "cab"]);
        assert!(grams("ab").is_empty());
        let open = Requirement::Any(vec![
            Requirement::Contains("abc".into()),
            Requirement::Anything,
        ]);
        assert_eq!(condition(&open), None);
        let both = condition(&Requirement::All(vec![
            Requirement::Contains("abcd".into()),
            Requirement::Anything,
        ]))
        .unwrap();
        assert_eq!(
            both["bool"]["filter"][0]["bool"]["filter"][1]["term"]["grams"],
            "bcd"
        );
    }

    #[test]
    fn packed_trigrams_are_the_strings_sorted_and_distinct_beyond_ascii() {
        let text = "Größe = ÜBER_größe; // 🎉 emoji 🎉 and a\ttab\nZ€ß𝔘𝔘𝔘𝔘";
        let folded: Vec<char> = text
            .chars()
            .map(|c| c.to_lowercase().next().unwrap_or(c))
            .collect();
        let mut expected: Vec<String> = folded.windows(3).map(|w| w.iter().collect()).collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(grams(text), expected);
        assert!(grams(text).contains(&"𝔘𝔘𝔘".to_string()));
    }
}
