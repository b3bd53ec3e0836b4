//! File summaries for agents (`quarry summary`, the Claude Code hook): the outline of one file
//! read from disk. Needs no index and no model — only the parser — so it answers in
//! milliseconds even where nothing was indexed yet.

use anyhow::{bail, Result};
use quarry_core::Language;
use quarry_sources::FileText;
use std::path::Path;

pub use quarry_outline::{render, Outline, OutlineItem};

/// Files larger than this are not summarised (the chunker's own limit for indexing).
pub const MAX_SUMMARY_BYTES: u64 = 4 << 20;

/// Reads `path` and outlines it; `shown_path` is the name the outline carries. A binary,
/// unreadable or oversized file is an error that says so.
pub fn summarize_file(path: &Path, shown_path: &str) -> Result<Outline> {
    let text = match quarry_sources::read_text(path, MAX_SUMMARY_BYTES) {
        FileText::Text { text, .. } => text,
        FileText::Skipped(reason) => bail!(
            "cannot summarise {}: {reason} (limit {} MiB for too-large files)",
            path.display(),
            MAX_SUMMARY_BYTES >> 20
        ),
    };
    Ok(quarry_outline::outline(
        shown_path,
        Language::detect(path),
        &text,
    ))
}
