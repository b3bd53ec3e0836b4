//! Language detection by file name. Cheap and deterministic: quarry never sniffs content for
//! the language, only for binariness (see quarry-sources).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A language quarry knows how to chunk. `Text` is any other readable file (chunked by
/// line windows); `Markdown` is split by headings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    Go,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Markdown,
    Text,
}

impl Language {
    pub const ALL: [Language; 14] = [
        Language::Rust,
        Language::Python,
        Language::Go,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Ruby,
        Language::Php,
        Language::Markdown,
        Language::Text,
    ];

    /// The stable name used in the store, in JSON and on the command line (`--lang`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::Go => "go",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Markdown => "markdown",
            Language::Text => "text",
        }
    }

    /// Parses a `--lang` value; accepts the stable name and common aliases.
    pub fn from_name(name: &str) -> Option<Language> {
        let lower = name.to_ascii_lowercase();
        let found = match lower.as_str() {
            "rs" => Language::Rust,
            "py" => Language::Python,
            "golang" => Language::Go,
            "js" | "jsx" => Language::JavaScript,
            "ts" => Language::TypeScript,
            "c++" | "cc" | "cxx" => Language::Cpp,
            "c#" | "cs" => Language::CSharp,
            "rb" => Language::Ruby,
            "md" => Language::Markdown,
            other => return Language::ALL.into_iter().find(|l| l.name() == other),
        };
        Some(found)
    }

    /// Detects the language from a path's extension (or well-known file name).
    pub fn detect(path: &Path) -> Language {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "rs" => Language::Rust,
            "py" | "pyi" | "pyw" => Language::Python,
            "go" => Language::Go,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" => {
                Language::Cpp
            }
            "cs" => Language::CSharp,
            "rb" | "rake" | "gemspec" => Language::Ruby,
            "php" | "phtml" => Language::Php,
            "md" | "markdown" | "mdx" => Language::Markdown,
            _ => match path.file_name().and_then(|n| n.to_str()) {
                Some("Rakefile" | "Gemfile") => Language::Ruby,
                _ => Language::Text,
            },
        }
    }

    /// True for languages chunked by a syntax tree (definitions become chunks and symbols).
    pub fn is_code(self) -> bool {
        !matches!(self, Language::Markdown | Language::Text)
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension_and_round_trips_names() {
        assert_eq!(Language::detect(Path::new("a/b.tsx")), Language::Tsx);
        assert_eq!(Language::detect(Path::new("x.HPP")), Language::Cpp);
        assert_eq!(Language::detect(Path::new("Rakefile")), Language::Ruby);
        assert_eq!(Language::detect(Path::new("LICENSE")), Language::Text);
        for lang in Language::ALL {
            assert_eq!(Language::from_name(lang.name()), Some(lang));
        }
        assert_eq!(Language::from_name("py"), Some(Language::Python));
        assert_eq!(Language::from_name("cobol"), None);
    }
}
