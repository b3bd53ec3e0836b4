//! The trigrams the SQLite store's trigram table holds for a file: each distinct run of three
//! characters of its text, ASCII letters lowercased, written once.
//!
//! Why: the table stores only which files hold a trigram (FTS5 `detail=none`), so a file's
//! 30,000 windows carry no more than its 3,000 distinct trigrams (sympy: 29.8 M windows, 3.1 M
//! distinct). Handing FTS5 the whole text made the index writer — one thread, the indexing
//! run's slowest stage — hash every window; the indexing threads find the distinct ones
//! instead, and the table's tokenizer (quarry-store's `trigram_tokenizer`) reads them back
//! three characters at a time. Queries are cut into windows the same way, folded the same way.
//!
//! Only ASCII letters are folded: `quarry grep -i` requires of the table only runs of ASCII
//! characters whose case has no other form (quarry-grep's literals.rs), and the same folding on
//! both sides keeps a case-sensitive literal's trigrams inside its file's.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A character as the trigram table compares it.
pub fn fold(c: char) -> char {
    c.to_ascii_lowercase()
}

/// The distinct trigrams of `text`, folded, concatenated in the order first seen: three
/// characters each.
pub fn distinct_trigrams(text: &str) -> String {
    let mut seen: HashSet<u64, BuildHasherDefault<PackedHasher>> = HashSet::default();
    let mut out = String::new();
    let mut window = ['\0'; 3];
    for (i, c) in text.chars().map(fold).enumerate() {
        window = [window[1], window[2], c];
        if i < 2 {
            continue;
        }
        // A character fits in 21 bits: three make one key.
        let key = window[0] as u64 | (window[1] as u64) << 21 | (window[2] as u64) << 42;
        if seen.insert(key) {
            out.extend(window);
        }
    }
    out
}

/// `text`'s windows of three characters, folded, each as a string: what a query's trigram
/// asks the table for.
pub fn windows(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().map(fold).collect();
    chars.windows(3).map(|w| w.iter().collect()).collect()
}

/// Keys are three characters packed into one integer already spread over 63 bits: one
/// multiplication mixes them (the standard library's SipHash was most of the time spent
/// here, and no key comes from outside the process's own reading of a file).
#[derive(Default)]
struct PackedHasher(u64);

impl Hasher for PackedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = (key ^ (key >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_trigram_is_written_once_folded() {
        let grams = distinct_trigrams("abcABCabcé x");
        let chars: Vec<char> = grams.chars().collect();
        let split: Vec<String> = chars.chunks(3).map(|c| c.iter().collect()).collect();
        assert_eq!(split, ["abc", "bca", "cab", "bcé", "cé ", "é x"]);
        assert_eq!(distinct_trigrams("ab"), "");
        assert_eq!(windows("aBcD"), ["abc", "bcd"]);
        assert!(windows("ab").is_empty());
    }

    /// Every window of a text, and of any part of it, is among its distinct trigrams.
    #[test]
    fn a_texts_windows_are_all_among_its_trigrams() {
        let text = "fn main() {\n    let ÜBER = Straße::new(\"ΣΑΣ\");\n}\n";
        let grams = distinct_trigrams(text);
        let chars: Vec<char> = grams.chars().collect();
        let held: HashSet<String> = chars.chunks(3).map(|c| c.iter().collect()).collect();
        for w in windows(text) {
            assert!(held.contains(&w), "{w:?}");
        }
        assert_eq!(held.len(), chars.len() / 3, "no trigram twice");
    }
}
