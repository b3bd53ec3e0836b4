//! The one content hash quarry uses: for "did this file change" and for "was this text
//! already embedded". xxh3-128 in hex: fast, and collisions are no security concern here.

pub fn content_hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// A file's modification time in nanoseconds since the epoch (0 when unknown): the
/// "unchanged?" check of the indexer and of grep's trigram filter, which must agree.
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}
