//! The one content hash quarry uses: for "did this file change" and for "was this text
//! already embedded". xxh3-128 in hex: fast, and collisions are no security concern here.

pub fn content_hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}
