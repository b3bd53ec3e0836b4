//! The request's filters (`--path`, `--lang`, `--type`) for answers the store did not filter:
//! the exact routes that list files themselves (path, location, grep, ast-grep) and the files
//! ranked search brings in by evidence. The rules are the stores' (`push_filters`,
//! `push_scope`), so every route answers within the same scope.

use std::path::{Path, PathBuf};

use anyhow::Result;
use quarry_core::{ContentType, Language};

use crate::request::SearchRequest;

/// The request's path, language and content filters, for the routes that list files
/// themselves (path, grep, ast-grep): the same rules the store applies to ranked search — a
/// glob over the repo-relative path (`*` crosses folders), or a substring without glob
/// characters; the language and the code/docs split by the file's language.
pub(crate) struct PathFilter {
    glob: Option<globset::GlobMatcher>,
    substring: Option<String>,
    language: Option<Language>,
    content: ContentType,
}

impl PathFilter {
    pub(crate) fn new(request: &SearchRequest) -> Result<PathFilter> {
        let (mut glob, mut substring) = (None, None);
        if let Some(p) = &request.path {
            if p.contains(['*', '?', '[']) {
                glob = Some(globset::Glob::new(p)?.compile_matcher());
            } else {
                substring = Some(p.clone());
            }
        }
        Ok(PathFilter {
            glob,
            substring,
            language: request.language,
            content: request.content,
        })
    }

    /// Where under a repo's `root` the files this filter admits can be: the glob's folder
    /// before its first wildcard (`src/flask/json/*` → `root/src/flask/json`), so a scan
    /// with a limit reads only there.
    pub(crate) fn scan_root(&self, request: &SearchRequest, root: &Path) -> PathBuf {
        let Some(pattern) = request.path.as_deref().filter(|_| self.glob.is_some()) else {
            return root.to_path_buf();
        };
        let literal = &pattern[..pattern.find(['*', '?', '[']).unwrap_or(pattern.len())];
        match literal.rfind('/') {
            Some(end) if root.join(&literal[..end]).is_dir() => root.join(&literal[..end]),
            _ => root.to_path_buf(),
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        self.glob.is_some()
            || self.substring.is_some()
            || self.language.is_some()
            || self.content != ContentType::All
    }

    /// Matches to scan for when `limit` must survive the filter.
    pub(crate) fn scan_limit(&self, limit: usize) -> usize {
        if self.is_set() {
            limit.saturating_mul(20).max(1_000)
        } else {
            limit
        }
    }

    /// The path part alone (glob or substring), for evidence that names a file before its
    /// chunks' languages are known.
    pub(crate) fn admits_path(&self, path: &str) -> bool {
        self.glob.as_ref().is_none_or(|g| g.is_match(path))
            && self
                .substring
                .as_ref()
                .is_none_or(|s| path.contains(s.as_str()))
    }

    /// A whole file (a notebook is both code and docs, as the stores count it).
    pub(crate) fn admits(&self, path: &str) -> bool {
        let language = Language::detect(Path::new(path));
        if language == Language::Notebook && self.content != ContentType::All {
            let both = PathFilter {
                content: ContentType::All,
                glob: self.glob.clone(),
                substring: self.substring.clone(),
                language: self.language,
            };
            return both.admits_chunk(path, language);
        }
        self.admits_chunk(path, language)
    }

    /// A chunk of `path` in its own `language` (a notebook's cell in the kernel's): the
    /// language filter takes the chunk's or the file's, the content filter the chunk's.
    pub(crate) fn admits_chunk(&self, path: &str, chunk_language: Language) -> bool {
        let file_language = Language::detect(Path::new(path));
        let language = chunk_language;
        self.admits_path(path)
            && self
                .language
                .is_none_or(|l| l == language || l == file_language)
            && match self.content {
                ContentType::All => true,
                ContentType::Code => !language.is_docs(),
                ContentType::Docs => language.is_docs(),
            }
    }
}
