//! Language detection by file name. Cheap and deterministic: quarry never sniffs content for
//! the language, only for binariness (see quarry-sources).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A language quarry knows how to chunk. Code languages are cut along a syntax tree; the
/// documents (`Markdown`, `Rst`, `AsciiDoc`, `Text`, `Pdf`) by their headings (plain text
/// without headings by line windows); a `Notebook` cell by cell, each in its own language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
    Kotlin,
    Swift,
    /// Shell scripts (bash, sh, zsh), parsed with the bash grammar.
    Shell,
    Lua,
    Scala,
    Dart,
    R,
    ObjectiveC,
    Elixir,
    Haskell,
    Zig,
    Julia,
    Markdown,
    Text,
    Rst,
    AsciiDoc,
    Pdf,
    /// A Jupyter notebook (`.ipynb`): code cells in the kernel's language, markdown cells as
    /// Markdown.
    Notebook,
}

/// Which file names are which language: one table for detection and for listing.
const FILE_NAMES: &[(Language, &[&str])] = &[
    (Language::Rust, &["*.rs"]),
    (Language::Python, &["*.py", "*.pyi", "*.pyw"]),
    (Language::Go, &["*.go"]),
    (Language::JavaScript, &["*.js", "*.mjs", "*.cjs", "*.jsx"]),
    (Language::TypeScript, &["*.ts", "*.mts", "*.cts"]),
    (Language::Tsx, &["*.tsx"]),
    (Language::Java, &["*.java"]),
    (Language::C, &["*.c", "*.h"]),
    (
        Language::Cpp,
        &[
            "*.cc", "*.cpp", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.ipp", "*.tpp",
        ],
    ),
    (Language::CSharp, &["*.cs"]),
    (
        Language::Ruby,
        &["*.rb", "*.rake", "*.gemspec", "Rakefile", "Gemfile"],
    ),
    (Language::Php, &["*.php", "*.phtml"]),
    (Language::Kotlin, &["*.kt", "*.kts"]),
    (Language::Swift, &["*.swift"]),
    (
        Language::Shell,
        &[
            "*.sh",
            "*.bash",
            "*.zsh",
            ".bashrc",
            ".bash_profile",
            ".profile",
            ".zshrc",
        ],
    ),
    (Language::Lua, &["*.lua"]),
    (Language::Scala, &["*.scala", "*.sc"]),
    (Language::Dart, &["*.dart"]),
    (Language::R, &["*.r"]),
    (Language::ObjectiveC, &["*.m", "*.mm"]),
    (Language::Elixir, &["*.ex", "*.exs"]),
    (Language::Haskell, &["*.hs"]),
    (Language::Zig, &["*.zig"]),
    (Language::Julia, &["*.jl"]),
    (Language::Markdown, &["*.md", "*.markdown", "*.mdx"]),
    (Language::Rst, &["*.rst", "*.rest"]),
    (Language::AsciiDoc, &["*.adoc", "*.asciidoc", "*.asc"]),
    (Language::Pdf, &["*.pdf"]),
    (Language::Notebook, &["*.ipynb"]),
    (Language::Text, &["*"]),
];

/// Code languages quarry has no grammar for, by their files' extensions: such a file is
/// indexed as text (line windows, no definitions, no calls), and the answers that depend on a
/// parse say so by name rather than answer as if the code had none (a Kotlin repo's
/// `callers` said "no call of X in the index" where grep found 37).
const UNPARSED_CODE: &[(&str, &[&str])] = &[
    ("ocaml", &["ml", "mli"]),
    ("perl", &["pl", "pm"]),
    ("erlang", &["erl", "hrl"]),
    ("clojure", &["clj", "cljs", "cljc"]),
    ("groovy", &["groovy", "gradle"]),
    ("powershell", &["ps1", "psm1"]),
    ("hcl", &["tf", "hcl"]),
    ("protobuf", &["proto"]),
    ("sql", &["sql"]),
    ("vue", &["vue"]),
    ("svelte", &["svelte"]),
    ("f#", &["fs", "fsx"]),
    ("visual basic", &["vb"]),
    ("fortran", &["f90", "f95", "f03"]),
    ("nim", &["nim"]),
    ("crystal", &["cr"]),
];

/// The code language `path` is written in when quarry does not parse it (it is indexed as
/// text): `Some("kotlin")` for `Main.kt`; `None` for a parsed language or a non-code file.
pub fn unparsed_language(path: &std::path::Path) -> Option<&'static str> {
    if Language::detect(path) != Language::Text {
        return None;
    }
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    UNPARSED_CODE
        .iter()
        .find(|(_, exts)| exts.contains(&ext.as_str()))
        .map(|(name, _)| *name)
}

/// `(language, files)` of the paths in a code language quarry does not parse, most files
/// first.
pub fn count_unparsed<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<(String, u64)> {
    let mut counts: std::collections::BTreeMap<&'static str, u64> = Default::default();
    for path in paths {
        if let Some(language) = unparsed_language(std::path::Path::new(path)) {
            *counts.entry(language).or_default() += 1;
        }
    }
    let mut counted: Vec<(String, u64)> = counts
        .into_iter()
        .map(|(name, n)| (name.to_string(), n))
        .collect();
    counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counted
}

impl Language {
    pub const ALL: [Language; 30] = [
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
        Language::Kotlin,
        Language::Swift,
        Language::Shell,
        Language::Lua,
        Language::Scala,
        Language::Dart,
        Language::R,
        Language::ObjectiveC,
        Language::Elixir,
        Language::Haskell,
        Language::Zig,
        Language::Julia,
        Language::Markdown,
        Language::Text,
        Language::Rst,
        Language::AsciiDoc,
        Language::Pdf,
        Language::Notebook,
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
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Shell => "shell",
            Language::Lua => "lua",
            Language::Scala => "scala",
            Language::Dart => "dart",
            Language::R => "r",
            Language::ObjectiveC => "objectivec",
            Language::Elixir => "elixir",
            Language::Haskell => "haskell",
            Language::Zig => "zig",
            Language::Julia => "julia",
            Language::Markdown => "markdown",
            Language::Text => "text",
            Language::Rst => "rst",
            Language::AsciiDoc => "asciidoc",
            Language::Pdf => "pdf",
            Language::Notebook => "notebook",
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
            "kt" | "kts" => Language::Kotlin,
            "sh" | "bash" | "zsh" => Language::Shell,
            "objective-c" | "objc" | "m" => Language::ObjectiveC,
            "ex" | "exs" => Language::Elixir,
            "hs" => Language::Haskell,
            "jl" => Language::Julia,
            "md" => Language::Markdown,
            "rest" | "restructuredtext" => Language::Rst,
            "adoc" => Language::AsciiDoc,
            "ipynb" | "jupyter" => Language::Notebook,
            "txt" => Language::Text,
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
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        FILE_NAMES
            .iter()
            .find(|(language, patterns)| {
                *language != Language::Text
                    && patterns.iter().any(|p| match p.strip_prefix("*.") {
                        Some(extension) => extension == ext,
                        None => *p == name,
                    })
            })
            .map_or(Language::Text, |(language, _)| *language)
    }

    /// The file names detected as this language, as globs (`*.py`, `Rakefile`); text is
    /// everything else (`--type-list`).
    pub fn file_names(self) -> &'static [&'static str] {
        FILE_NAMES
            .iter()
            .find(|(language, _)| *language == self)
            .map_or(&[], |(_, patterns)| patterns)
    }

    /// Whether code in `self` can call code in `other` by name: the same language, or one
    /// family (JavaScript with TypeScript and TSX, C with C++). Calls are resolved by name,
    /// and a Rust `run` never calls a Java `run`.
    pub fn calls_into(self, other: Language) -> bool {
        let family = |l: Language| match l {
            Language::JavaScript | Language::TypeScript | Language::Tsx => Language::JavaScript,
            Language::C | Language::Cpp => Language::C,
            other => other,
        };
        family(self) == family(other)
    }

    /// True for languages chunked by a syntax tree (definitions become chunks and symbols).
    pub fn is_code(self) -> bool {
        !self.is_docs() && self != Language::Notebook
    }

    /// True for prose: documents cut by their headings (`--type docs`). A notebook is
    /// neither code nor docs as a whole; each of its cells is one or the other.
    pub fn is_docs(self) -> bool {
        matches!(
            self,
            Language::Markdown
                | Language::Text
                | Language::Rst
                | Language::AsciiDoc
                | Language::Pdf
        )
    }
}

/// What a search covers: code, documents (prose), or both (`--type code|docs|all`). Judged
/// per chunk, so a notebook's code cells are code and its markdown cells are docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(schemars::JsonSchema)]
pub enum ContentType {
    Code,
    Docs,
    #[default]
    All,
}

impl ContentType {
    pub fn from_name(name: &str) -> Option<ContentType> {
        match name.to_ascii_lowercase().as_str() {
            "code" => Some(ContentType::Code),
            "docs" | "doc" | "documents" | "prose" => Some(ContentType::Docs),
            "all" | "any" => Some(ContentType::All),
            _ => None,
        }
    }

    /// The SQL condition both stores add to a search (`None` for `All`), over the stored
    /// language name in `language` (for chunks, the chunk's own, coalesced with its file's).
    /// For whole files (`files`), a notebook is both code and docs.
    pub fn sql_condition(self, language: &str, files: bool) -> Option<String> {
        let docs: Vec<String> = Language::ALL
            .into_iter()
            .filter(|l| l.is_docs())
            .map(|l| format!("'{}'", l.name()))
            .collect();
        let docs = docs.join(",");
        match self {
            ContentType::All => None,
            ContentType::Docs if files => Some(format!("{language} IN ({docs},'notebook')")),
            ContentType::Docs => Some(format!("{language} IN ({docs})")),
            ContentType::Code => Some(format!("{language} NOT IN ({docs})")),
        }
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
    fn code_quarry_does_not_parse_is_named() {
        assert_eq!(unparsed_language(Path::new("lib/App.scala.txt")), None);
        assert_eq!(unparsed_language(Path::new("lib/app.ml")), Some("ocaml"));
        assert_eq!(unparsed_language(Path::new("Main.pl")), Some("perl"));
        assert_eq!(unparsed_language(Path::new("lib/app.ex")), None);
        assert_eq!(unparsed_language(Path::new("app/Main.kt")), None);
        assert_eq!(unparsed_language(Path::new("a.py")), None);
        assert_eq!(unparsed_language(Path::new("notes.txt")), None);
        assert_eq!(unparsed_language(Path::new("LICENSE")), None);
        assert_eq!(
            count_unparsed(["a.ml", "b.mli", "c.erl", "d.py", "e.kt"]),
            vec![("ocaml".to_string(), 2), ("erlang".to_string(), 1)]
        );
    }

    #[test]
    fn detects_by_extension_and_round_trips_names() {
        assert_eq!(Language::detect(Path::new("a/b.tsx")), Language::Tsx);
        assert_eq!(Language::detect(Path::new("x.HPP")), Language::Cpp);
        assert_eq!(Language::detect(Path::new("Rakefile")), Language::Ruby);
        assert_eq!(Language::detect(Path::new("LICENSE")), Language::Text);
        assert_eq!(Language::detect(Path::new("app/Main.kt")), Language::Kotlin);
        assert_eq!(Language::detect(Path::new("home/.bashrc")), Language::Shell);
        assert_eq!(Language::from_name("bash"), Some(Language::Shell));
        assert_eq!(Language::detect(Path::new("docs/index.rst")), Language::Rst);
        assert_eq!(
            Language::detect(Path::new("guide.adoc")),
            Language::AsciiDoc
        );
        assert_eq!(Language::detect(Path::new("paper.PDF")), Language::Pdf);
        assert_eq!(Language::detect(Path::new("nb.ipynb")), Language::Notebook);
        assert!(Language::Pdf.is_docs() && !Language::Pdf.is_code());
        assert!(!Language::Notebook.is_docs() && !Language::Notebook.is_code());
        let docs = "'markdown','text','rst','asciidoc','pdf'";
        assert_eq!(
            ContentType::Code.sql_condition("l", false),
            Some(format!("l NOT IN ({docs})"))
        );
        assert_eq!(
            ContentType::Docs.sql_condition("l", false),
            Some(format!("l IN ({docs})"))
        );
        assert_eq!(
            ContentType::Docs.sql_condition("l", true),
            Some(format!("l IN ({docs},'notebook')"))
        );
        assert_eq!(ContentType::All.sql_condition("l", false), None);
        assert_eq!(ContentType::from_name("DOCS"), Some(ContentType::Docs));
        for lang in Language::ALL {
            assert_eq!(Language::from_name(lang.name()), Some(lang));
        }
        assert_eq!(Language::from_name("py"), Some(Language::Python));
        assert_eq!(Language::from_name("cobol"), None);
    }
}
