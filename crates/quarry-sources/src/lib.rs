//! Sources: which files of a repository quarry indexes, and how it reads them.
//!
//! Discovery follows the rules developers already wrote down for their tools — `.gitignore`,
//! `.ignore` and quarry's own `.quarryignore` — through the `ignore` crate (ripgrep's walker),
//! skips hidden files, and never follows symlinks, so nothing outside the repository and no
//! link loop is ever visited. Every file it does not index is counted with the reason, so
//! `quarry status` can say what was left out and why.

pub mod pdf;

use anyhow::{Context, Result};
use quarry_core::{content_hash, store::SkipCounts, Language};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Limits for one discovery run.
#[derive(Debug, Clone)]
pub struct DiscoverOptions {
    /// Files larger than this are skipped as `too-large`.
    pub max_file_size: u64,
    /// At most this many files are indexed; the rest are skipped as `max-files`.
    pub max_files: usize,
    /// PDFs and notebooks larger than this are skipped as `too-large` (they carry fonts,
    /// images and outputs, so their size says little about their text).
    pub max_document_size: u64,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions {
            max_file_size: 1024 * 1024,
            max_files: 200_000,
            max_document_size: 64 * 1024 * 1024,
        }
    }
}

impl DiscoverOptions {
    /// The size limit for a file in `language`.
    pub fn size_limit(&self, language: Language) -> u64 {
        match language {
            Language::Pdf | Language::Notebook => self.max_document_size.max(self.max_file_size),
            _ => self.max_file_size,
        }
    }
}

/// A file discovery accepted, not yet read.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Path relative to the repository root, with `/` separators.
    pub rel_path: String,
    pub abs_path: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
    pub language: Language,
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Accepted files, sorted by path.
    pub files: Vec<Candidate>,
    pub skipped: SkipCounts,
}

/// Skip reasons, as stored and shown.
pub mod reason {
    pub const BINARY: &str = "binary";
    pub const TOO_LARGE: &str = "too-large";
    pub const SYMLINK: &str = "symlink";
    pub const UNREADABLE: &str = "unreadable";
    pub const MAX_FILES: &str = "max-files";
    /// Minified or generated text: lines far longer than anyone writes (bundles, one-line
    /// JSON). Such a file would be a few giant chunks that match everything and cost an agent
    /// megabytes per hit.
    pub const MINIFIED: &str = "minified";
    /// A FIFO, socket or device: opening a FIFO would wait for a writer forever.
    pub const NOT_REGULAR: &str = "not-a-regular-file";
}

/// The name of quarry's own ignore file, read like `.gitignore`.
pub const IGNORE_FILE: &str = ".quarryignore";

/// Lists the files under `root` that quarry indexes.
pub fn discover(root: &Path, opts: &DiscoverOptions) -> Result<Discovery> {
    discover_beside(root, opts, &|_| false)
}

/// As [`discover`], for a repository indexed before: a file for which `indexed` holds (by its
/// path relative to `root`) is accepted whatever `opts.max_files` says, which then bounds only
/// the files not indexed yet. A limit skips new files; it never takes an indexed file out of
/// the index (`index --max-files 10` on an indexed repo would otherwise delete all but ten).
pub fn discover_beside(
    root: &Path,
    opts: &DiscoverOptions,
    indexed: &dyn Fn(&str) -> bool,
) -> Result<Discovery> {
    let meta =
        std::fs::metadata(root).with_context(|| format!("cannot read {}", root.display()))?;
    anyhow::ensure!(
        meta.is_dir(),
        "{} is not a directory: quarry indexes a repository folder",
        root.display()
    );

    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        // A folder that is not a git repository still honours its .gitignore files.
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(IGNORE_FILE)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();

    let mut found = Discovery::default();
    let mut skip = |reason: &str| *found.skipped.entry(reason.to_string()).or_insert(0) += 1;
    let mut accepted = Vec::new();
    let mut new_files = 0usize;
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(_) => {
                skip(reason::UNREADABLE);
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if entry.path_is_symlink() {
            skip(reason::SYMLINK);
            continue;
        }
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            continue;
        }
        if !file_type.is_file() {
            // A FIFO, socket or device: never opened, and counted like every other skip.
            skip(reason::NOT_REGULAR);
            continue;
        }
        let path = entry.path();
        let rel = match path.strip_prefix(root) {
            Ok(r) => r,
            Err(_) => continue,
        };
        let rel_path = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if has_binary_extension(path) {
            skip(reason::BINARY);
            continue;
        }
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(_) => {
                skip(reason::UNREADABLE);
                continue;
            }
        };
        let language = Language::detect(rel);
        if meta.len() > opts.size_limit(language) {
            skip(reason::TOO_LARGE);
            continue;
        }
        if !indexed(&rel_path) {
            if new_files >= opts.max_files {
                skip(reason::MAX_FILES);
                continue;
            }
            new_files += 1;
        }
        let mtime_ns = quarry_core::mtime_ns(&meta);
        accepted.push(Candidate {
            language,
            rel_path,
            abs_path: path.to_path_buf(),
            size: meta.len(),
            mtime_ns,
        });
    }
    found.files = accepted;
    Ok(found)
}

/// A file's content as indexable text, or why it is skipped.
#[derive(Debug)]
pub enum FileText {
    Text {
        text: String,
        /// Hash of the raw bytes (hex), the key for "did this file change".
        hash: String,
        /// True when the bytes were not valid UTF-8 and invalid sequences were replaced.
        lossy: bool,
    },
    Skipped(&'static str),
}

/// How many leading bytes are checked for NUL, the binary test git and ripgrep use.
const BINARY_SNIFF_BYTES: usize = 8192;

/// Reads a file for indexing. Binary content (a NUL byte in the first 8 KiB) and files that
/// grew past `max_size` since discovery are skipped; invalid UTF-8 is replaced, not rejected,
/// so one stray Latin-1 byte does not hide a whole source file from search.
pub fn read_text(path: &Path, max_size: u64) -> FileText {
    read_text_as(path, max_size, Language::Text)
}

/// [`read_text`] for a file in `language`: a notebook is JSON whose outputs hold long
/// base64 lines, so it is never judged minified.
pub fn read_text_as(path: &Path, max_size: u64, language: Language) -> FileText {
    let bytes = match read_bytes(path, max_size) {
        Ok(bytes) => bytes,
        Err(reason) => return FileText::Skipped(reason),
    };
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return FileText::Skipped(reason::BINARY);
    }
    if language != Language::Notebook && looks_minified(&bytes) {
        return FileText::Skipped(reason::MINIFIED);
    }
    let hash = content_hash(&bytes);
    match String::from_utf8(bytes) {
        Ok(text) => FileText::Text {
            text,
            hash,
            lossy: false,
        },
        Err(e) => FileText::Text {
            text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            hash,
            lossy: true,
        },
    }
}

/// A regular file's bytes, at most `max_size` of them, or why it is skipped.
pub fn read_bytes(path: &Path, max_size: u64) -> Result<Vec<u8>, &'static str> {
    // Only regular files are read (symlinks followed): the check comes before `open`, which
    // would block on a FIFO until something writes to it.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(reason::NOT_REGULAR),
        Err(_) => return Err(reason::UNREADABLE),
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|_| reason::UNREADABLE)?;
    if file.take(max_size + 1).read_to_end(&mut bytes).is_err() {
        return Err(reason::UNREADABLE);
    }
    if bytes.len() as u64 > max_size {
        return Err(reason::TOO_LARGE);
    }
    Ok(bytes)
}

/// Lines longer than this are not written by hand.
const LONG_LINE_BYTES: usize = 1000;
/// The share of a file's bytes in long lines from which it is generated text, in percent.
const MINIFIED_LONG_SHARE: usize = 50;

/// Whether `bytes` look minified or generated: most of its bytes in lines over 1,000 bytes
/// (a bundle on one line, a file of data rows). A hand-written file with a few long lines (an
/// inlined table, a data URI) is not: one line over 32 KiB used to be enough, and webpack's
/// lib/html/syntax.js (12,204 lines, 3 of them long) went unindexed. Files under 4 KiB are
/// never judged: too little to tell.
pub fn looks_minified(bytes: &[u8]) -> bool {
    if bytes.len() < 4096 {
        return false;
    }
    let in_long_lines: usize = bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .filter(|&len| len > LONG_LINE_BYTES)
        .sum();
    in_long_lines * 100 >= bytes.len() * MINIFIED_LONG_SHARE
}

/// Extensions that are binary for certain; skipping them saves reading the file.
fn has_binary_extension(path: &Path) -> bool {
    const BINARY: &[&str] = &[
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "ico",
        "webp",
        "tif",
        "tiff",
        "psd",
        "zip",
        "gz",
        "tgz",
        "bz2",
        "xz",
        "zst",
        "7z",
        "rar",
        "jar",
        "war",
        "class",
        "so",
        "dylib",
        "dll",
        "exe",
        "o",
        "a",
        "lib",
        "obj",
        "pyc",
        "pyo",
        "whl",
        "egg",
        "wasm",
        "mp3",
        "mp4",
        "wav",
        "ogg",
        "flac",
        "mov",
        "avi",
        "mkv",
        "ttf",
        "otf",
        "woff",
        "woff2",
        "eot",
        "sqlite",
        "db",
        "bin",
        "dat",
        "npy",
        "npz",
        "pkl",
        "parquet",
        "onnx",
        "safetensors",
        "pt",
    ];
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BINARY.iter().any(|b| b.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests;
