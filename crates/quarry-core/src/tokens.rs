//! Code-aware tokens, shared by indexing and querying so both sides always agree.
//!
//! An identifier is indexed as its whole form *and* its parts: `getUserName`,
//! `get_user_name` and `GetUserName` all become `getusername get user name`. So the query
//! `get user name` matches each of them, and the query `getUserName` also prefers the chunk
//! that has the whole identifier (one more matching term). The joined form drops separators,
//! which makes the whole identifier match across naming conventions.
//!
//! Written by hand because this is quarry's own definition of a token: FTS5's tokenizers
//! split on punctuation but know nothing of camelCase, and the store sees only the output
//! (space-separated lowercase words), which any full-text engine can index unchanged.

/// Splits one identifier into its lowercase parts at `_`, `-`, `.` and case changes
/// (`HTTPServer` → `http`, `server`; `parse2D` → `parse2`, `d`). Digits stay with the part
/// they follow.
pub fn identifier_parts(ident: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = ident.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // fooBar → foo|Bar ; HTTPServer → HTTP|Server ; x2D stays with digits' word
            if prev.is_lowercase()
                || (prev.is_uppercase() && next_is_lower)
                || prev.is_ascii_digit() && next_is_lower
            {
                parts.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// Calls `emit` for every token of `text`: each word's joined lowercase form, then its parts
/// when it has more than one. Every chunk indexed and every candidate a search reads again
/// goes through here: an ASCII word (nearly all of them) is split on its bytes into buffers
/// kept from word to word, as `identifier_parts` splits it.
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let mut lower = String::new();
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.is_empty() || !word.chars().any(char::is_alphanumeric) {
            continue;
        }
        if word.is_ascii() {
            ascii_parts(word.as_bytes(), &mut lower, &mut parts);
            if parts.len() == 1 {
                emit(&lower);
            } else {
                emit(&lower);
                for &(start, end) in &parts {
                    emit(&lower[start..end]);
                }
            }
            continue;
        }
        let parts = identifier_parts(word);
        if parts.len() == 1 {
            emit(&parts[0]);
        } else {
            emit(&parts.concat());
            for part in &parts {
                emit(part);
            }
        }
    }
}

/// The ASCII letters and digits of an ASCII `text`, lowercased, all else dropped, into `out`;
/// false (and `out` empty) for a text that is not ASCII, whose words are lowercased by
/// Unicode's rules. Every token [`for_each_token`] gives an ASCII text is one unbroken run of
/// `out` (a word's joined form drops only its separators, and its parts are runs of that), so
/// a text whose `out` holds none of a set of starts has no token beginning with any of them:
/// one pass and no allocation, where tokenizing allocates per word.
pub fn squeeze_ascii(text: &str, out: &mut Vec<u8>) -> bool {
    out.clear();
    if !text.is_ascii() {
        return false;
    }
    out.extend(
        text.bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| b.to_ascii_lowercase()),
    );
    true
}

/// `identifier_parts` of an ASCII word: its lowercase letters and digits in `lower` (the
/// parts joined), each part's range in `parts`.
fn ascii_parts(word: &[u8], lower: &mut String, parts: &mut Vec<(usize, usize)>) {
    lower.clear();
    parts.clear();
    let mut start = 0;
    for (i, &c) in word.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if lower.len() > start {
                parts.push((start, lower.len()));
                start = lower.len();
            }
            continue;
        }
        if c.is_ascii_uppercase() && lower.len() > start {
            let prev = word[i - 1];
            let next_is_lower = word.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || (prev.is_ascii_uppercase() && next_is_lower)
                || prev.is_ascii_digit() && next_is_lower
            {
                parts.push((start, lower.len()));
                start = lower.len();
            }
        }
        lower.push(c.to_ascii_lowercase() as char);
    }
    if lower.len() > start {
        parts.push((start, lower.len()));
    }
}

/// The text the full-text index stores for `text`: its tokens separated by spaces.
pub fn index_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for_each_token(text, |t| {
        if t.len() <= MAX_TOKEN_LEN {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(t);
        }
    });
    out
}

/// How many tokens `index_text`'s output holds: the length BM25 weighs (FTS5 counts the same).
pub fn token_count(index_text: &str) -> usize {
    index_text.split_ascii_whitespace().count()
}

/// A file's name as the store indexes it: the last path component without its extension,
/// lowercase, separators dropped (`src/Sky_Coordinate.py` → `skycoordinate`), so a class, a
/// function and the file named after it meet whatever the naming convention.
pub fn file_stem_key(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s,
        _ => name,
    };
    name_key(stem)
}

/// A name reduced for matching against `file_stem_key`: lowercase alphanumerics only.
pub fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Tokens longer than this (hashes, base64 blobs, minified code) are noise for search.
pub const MAX_TOKEN_LEN: usize = 64;

/// The distinct search terms of a query, in first-seen order: code-aware tokens minus
/// English stop words (which carry no signal in code search and make long queries slow).
/// A query made only of stop words keeps them, so it still finds something.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut all = Vec::new();
    for_each_token(query, |t| {
        if t.len() <= MAX_TOKEN_LEN && !all.iter().any(|s: &String| s == t) {
            all.push(t.to_string());
        }
    });
    let kept: Vec<String> = all.iter().filter(|t| !is_stop_word(t)).cloned().collect();
    if kept.is_empty() {
        all
    } else {
        kept
    }
}

/// Each distinct term once, in first-seen order, with how many times it is listed. A query
/// weighs a term by listing it again (an issue's title words: `QueryPlan::lexical_terms`);
/// both stores ask for a distinct term once and count its score that many times.
pub fn counted_terms<S: AsRef<str>>(terms: &[S]) -> Vec<(String, usize)> {
    let mut counted: Vec<(String, usize)> = Vec::new();
    for term in terms {
        let term = term.as_ref();
        match counted.iter_mut().find(|(t, _)| t == term) {
            Some((_, n)) => *n += 1,
            None => counted.push((term.to_string(), 1)),
        }
    }
    counted
}

/// English function words that appear in natural-language queries and issue texts.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

// Sorted, for binary search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "even",
    "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me",
    "might", "more", "most", "much", "must", "my", "myself", "no", "nor", "not", "now", "of",
    "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "us", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your",
];

#[cfg(test)]
mod tests {
    /// Every token of an ASCII text is a run of its squeezed form; a text that is not ASCII
    /// has none.
    #[test]
    fn every_token_is_a_run_of_the_squeezed_text() {
        let mut out = Vec::new();
        for text in [
            "let x = spawn_blocking(move || HTTPServer::new(parse2D));",
            "  __init__(self, a_b.c-d) # SPAWN__Blocking x2D",
            "",
            "+-*/",
        ] {
            assert!(super::squeeze_ascii(text, &mut out));
            let squeezed = String::from_utf8(out.clone()).unwrap();
            let mut tokens = 0;
            super::for_each_token(text, |t| {
                tokens += 1;
                assert!(squeezed.contains(t), "{t:?} not in {squeezed:?} ({text:?})");
            });
            assert_eq!(tokens == 0, squeezed.is_empty(), "{text:?}");
        }
        assert!(!super::squeeze_ascii("naïve", &mut out));
        assert!(out.is_empty());
    }

    /// The ASCII path gives the tokens the general one gives, word by word.
    #[test]
    fn ascii_words_split_as_identifier_parts_splits_them() {
        let words = [
            "fooBar",
            "HTTPServer",
            "x2D",
            "parse_config_file",
            "__init__",
            "A",
            "a",
            "ABC",
            "getHTTPResponseCode",
            "v2Beta",
            "x2d",
            "_x",
            "snake_Case_Mixed",
            "IOError",
            "a1B2c3",
            "ABCdef",
            "abcDEF",
            "Ab_Cd",
            "99",
            "S3Bucket",
            "utf8Decode",
            "X_Y_Z",
        ];
        for word in words {
            let mut fast = Vec::new();
            super::for_each_token(word, |t| fast.push(t.to_string()));
            let parts = super::identifier_parts(word);
            let mut slow = Vec::new();
            if parts.len() == 1 {
                slow.push(parts[0].clone());
            } else {
                slow.push(parts.concat());
                slow.extend(parts);
            }
            assert_eq!(fast, slow, "{word}");
        }
    }

    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        for_each_token(text, |t| v.push(t.to_string()));
        v
    }

    #[test]
    fn splits_case_and_separators() {
        assert_eq!(identifier_parts("getUserName"), ["get", "user", "name"]);
        assert_eq!(identifier_parts("get_user_name"), ["get", "user", "name"]);
        assert_eq!(identifier_parts("HTTPServer"), ["http", "server"]);
        assert_eq!(identifier_parts("__init__"), ["init"]);
        assert_eq!(identifier_parts("sha256sum"), ["sha256sum"]);
        assert_eq!(
            identifier_parts("parseJSON2Yaml"),
            ["parse", "json2", "yaml"]
        );
    }

    #[test]
    fn conventions_share_the_joined_form() {
        let a = tokens("getUserName");
        let b = tokens("get_user_name");
        assert_eq!(a, b);
        assert_eq!(a, ["getusername", "get", "user", "name"]);
        assert_eq!(tokens("x = 1"), ["x", "1"]);
    }

    #[test]
    fn stop_words_are_sorted_and_dropped() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
        assert_eq!(
            query_terms("how to parse the config file"),
            ["parse", "config", "file"]
        );
        assert_eq!(query_terms("the"), ["the"]);
        assert_eq!(
            query_terms("parseConfig parse"),
            ["parseconfig", "parse", "config"]
        );
    }

    #[test]
    fn file_names_meet_identifiers() {
        assert_eq!(
            file_stem_key("astropy/coordinates/sky_coordinate.py"),
            "skycoordinate"
        );
        assert_eq!(file_stem_key("Makefile"), "makefile");
        assert_eq!(file_stem_key(".bashrc"), "bashrc");
        assert_eq!(name_key("SkyCoordinate"), "skycoordinate");
        assert_eq!(name_key("__init__"), "init");
    }

    #[test]
    fn drops_huge_tokens_from_the_index() {
        let blob = "a".repeat(100);
        assert_eq!(index_text(&format!("keep {blob} this")), "keep this");
    }
}
