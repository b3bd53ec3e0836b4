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

/// One language: its stable name (in the store, in JSON, on the command line), other names
/// `--lang` accepts, and the file names detected as it (`*.py`, `Rakefile`). Every question
/// about a language's name or files is answered from [`LANGUAGES`]; what quarry does with
/// its code is in quarry-chunk's entry for it (grammar, queries, naming rules).
pub struct Entry {
    pub language: Language,
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub files: &'static [&'static str],
}

/// Every language, in the order `--help` and listings show them. Text's `*` is what every
/// other file is: detection tries it last.
pub const LANGUAGES: &[Entry] = &[
    Entry {
        language: Language::Rust,
        name: "rust",
        aliases: &["rs"],
        files: &["*.rs"],
    },
    Entry {
        language: Language::Python,
        name: "python",
        aliases: &["py"],
        files: &["*.py", "*.pyi", "*.pyw"],
    },
    Entry {
        language: Language::Go,
        name: "go",
        aliases: &["golang"],
        files: &["*.go"],
    },
    Entry {
        language: Language::JavaScript,
        name: "javascript",
        aliases: &["js", "jsx"],
        files: &["*.js", "*.mjs", "*.cjs", "*.jsx"],
    },
    Entry {
        language: Language::TypeScript,
        name: "typescript",
        aliases: &["ts"],
        files: &["*.ts", "*.mts", "*.cts"],
    },
    Entry {
        language: Language::Tsx,
        name: "tsx",
        aliases: &[],
        files: &["*.tsx"],
    },
    Entry {
        language: Language::Java,
        name: "java",
        aliases: &[],
        files: &["*.java"],
    },
    Entry {
        language: Language::C,
        name: "c",
        aliases: &[],
        files: &["*.c", "*.h"],
    },
    Entry {
        language: Language::Cpp,
        name: "cpp",
        aliases: &["c++", "cc", "cxx"],
        files: &[
            "*.cc", "*.cpp", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.ipp", "*.tpp",
        ],
    },
    Entry {
        language: Language::CSharp,
        name: "csharp",
        aliases: &["c#", "cs"],
        files: &["*.cs"],
    },
    Entry {
        language: Language::Ruby,
        name: "ruby",
        aliases: &["rb"],
        files: &["*.rb", "*.rake", "*.gemspec", "Rakefile", "Gemfile"],
    },
    Entry {
        language: Language::Php,
        name: "php",
        aliases: &[],
        files: &["*.php", "*.phtml"],
    },
    Entry {
        language: Language::Kotlin,
        name: "kotlin",
        aliases: &["kt", "kts"],
        files: &["*.kt", "*.kts"],
    },
    Entry {
        language: Language::Swift,
        name: "swift",
        aliases: &[],
        files: &["*.swift"],
    },
    Entry {
        language: Language::Shell,
        name: "shell",
        aliases: &["sh", "bash", "zsh"],
        files: &[
            "*.sh",
            "*.bash",
            "*.zsh",
            ".bashrc",
            ".bash_profile",
            ".profile",
            ".zshrc",
        ],
    },
    Entry {
        language: Language::Lua,
        name: "lua",
        aliases: &[],
        files: &["*.lua"],
    },
    Entry {
        language: Language::Scala,
        name: "scala",
        aliases: &[],
        files: &["*.scala", "*.sc"],
    },
    Entry {
        language: Language::Dart,
        name: "dart",
        aliases: &[],
        files: &["*.dart"],
    },
    Entry {
        language: Language::R,
        name: "r",
        aliases: &[],
        files: &["*.r"],
    },
    Entry {
        language: Language::ObjectiveC,
        name: "objectivec",
        aliases: &["objective-c", "objc", "m"],
        files: &["*.m", "*.mm"],
    },
    Entry {
        language: Language::Elixir,
        name: "elixir",
        aliases: &["ex", "exs"],
        files: &["*.ex", "*.exs"],
    },
    Entry {
        language: Language::Haskell,
        name: "haskell",
        aliases: &["hs"],
        files: &["*.hs"],
    },
    Entry {
        language: Language::Zig,
        name: "zig",
        aliases: &[],
        files: &["*.zig"],
    },
    Entry {
        language: Language::Julia,
        name: "julia",
        aliases: &["jl"],
        files: &["*.jl"],
    },
    Entry {
        language: Language::Markdown,
        name: "markdown",
        aliases: &["md"],
        files: &["*.md", "*.markdown", "*.mdx"],
    },
    Entry {
        language: Language::Text,
        name: "text",
        aliases: &["txt"],
        files: &["*"],
    },
    Entry {
        language: Language::Rst,
        name: "rst",
        aliases: &["rest", "restructuredtext"],
        files: &["*.rst", "*.rest"],
    },
    Entry {
        language: Language::AsciiDoc,
        name: "asciidoc",
        aliases: &["adoc"],
        files: &["*.adoc", "*.asciidoc", "*.asc"],
    },
    Entry {
        language: Language::Pdf,
        name: "pdf",
        aliases: &[],
        files: &["*.pdf"],
    },
    Entry {
        language: Language::Notebook,
        name: "notebook",
        aliases: &["ipynb", "jupyter"],
        files: &["*.ipynb"],
    },
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
    pub const ALL: [Language; LANGUAGES.len()] = {
        let mut all = [Language::Text; LANGUAGES.len()];
        let mut i = 0;
        while i < LANGUAGES.len() {
            all[i] = LANGUAGES[i].language;
            i += 1;
        }
        all
    };

    fn entry(self) -> &'static Entry {
        LANGUAGES
            .iter()
            .find(|e| e.language == self)
            .expect("every language has an entry")
    }

    /// The stable name used in the store, in JSON and on the command line (`--lang`).
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// Parses a `--lang` value; accepts the stable name and common aliases.
    pub fn from_name(name: &str) -> Option<Language> {
        let lower = name.to_ascii_lowercase();
        LANGUAGES
            .iter()
            .find(|e| e.name == lower || e.aliases.contains(&lower.as_str()))
            .map(|e| e.language)
    }

    /// Detects the language from a path's extension (or well-known file name).
    pub fn detect(path: &Path) -> Language {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .unwrap_or_default();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        LANGUAGES
            .iter()
            .find(|e| {
                e.language != Language::Text
                    && e.files.iter().any(|p| match p.strip_prefix("*.") {
                        Some(extension) => extension == ext,
                        None => *p == name,
                    })
            })
            .map_or(Language::Text, |e| e.language)
    }

    /// The file names detected as this language, as globs (`*.py`, `Rakefile`); text is
    /// everything else (`--type-list`).
    pub fn file_names(self) -> &'static [&'static str] {
        self.entry().files
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

    /// The table is the one truth: its names are the serialised names, its aliases and file
    /// names belong to one language each.
    #[test]
    fn the_language_table_is_consistent() {
        let mut seen_names = std::collections::HashSet::new();
        let mut seen_files = std::collections::HashSet::new();
        for entry in LANGUAGES {
            let serialised = serde_json::to_value(entry.language).unwrap();
            assert_eq!(serialised, entry.name, "{:?}", entry.language);
            for name in std::iter::once(&entry.name).chain(entry.aliases) {
                assert!(seen_names.insert(*name), "{name} names two languages");
                assert_eq!(Language::from_name(name), Some(entry.language));
            }
            for file in entry.files {
                assert!(seen_files.insert(*file), "{file} is two languages' file");
            }
        }
        assert_eq!(LANGUAGES.len(), Language::ALL.len());
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
