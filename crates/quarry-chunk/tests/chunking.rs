//! Behaviour across languages: windows, container splits, merging, coverage, robustness,
//! Markdown and text.

mod common;

use common::{check_invariants, chunk_checked, chunks, fixtures, owned_symbols, symbols, unmerged};
use quarry_chunk::{chunk_file, ChunkOptions};
use quarry_core::Language;
use std::fmt::Write;

/// A Rust function `big` with `body` statement lines, preceded by a `use` line and a blank.
fn big_rust_function(body: usize) -> String {
    let mut s = String::from(
        "use std::io;\n\n/// Does a lot.\npub fn big(x: u64) -> u64 {\n    let mut acc = x;\n",
    );
    for i in 0..body {
        writeln!(s, "    acc = acc.wrapping_mul({i}).wrapping_add(x ^ {i});").unwrap();
    }
    s.push_str("    acc\n}\n");
    s
}

#[test]
fn oversized_function_becomes_overlapping_windows_that_keep_its_name() {
    let text = big_rust_function(200); // fn spans lines 3 (doc) ..= 207
    let opts = ChunkOptions {
        max_bytes: 100_000,
        ..ChunkOptions::default()
    };
    let fc = chunk_checked(Language::Rust, &text, &opts);
    assert_eq!(symbols(&fc), owned_symbols(&[("big", "function", 4, 207)]));
    let (first, windows) = fc.chunks.split_first().unwrap();
    assert_eq!(
        (first.start_line, first.end_line, first.kind.as_str()),
        (1, 1, "module")
    );
    assert_eq!(windows.len(), 3);
    let ranges: Vec<(u32, u32)> = windows.iter().map(|c| (c.start_line, c.end_line)).collect();
    assert_eq!(
        ranges,
        [(3, 82), (75, 154), (147, 207)],
        "80-line windows overlapping by 8"
    );
    for w in windows {
        assert_eq!(w.symbol.as_deref(), Some("big"));
        assert_eq!(w.kind, "function");
        assert_eq!(w.signature.as_deref(), Some("pub fn big(x: u64) -> u64 {"));
    }
    assert_eq!(
        windows[0].symbols,
        ["big"],
        "only the window holding its start lists it"
    );
    assert!(windows[2].text.ends_with("    acc\n}"));
}

#[test]
fn windows_respect_max_bytes() {
    let text = big_rust_function(100);
    let opts = ChunkOptions {
        max_bytes: 1000,
        ..ChunkOptions::default()
    };
    let fc = chunk_checked(Language::Rust, &text, &opts);
    let windows: Vec<_> = fc
        .chunks
        .iter()
        .filter(|c| c.symbol.as_deref() == Some("big"))
        .collect();
    assert!(
        windows.len() > 5,
        "byte limit forces more windows: {}",
        windows.len()
    );
    for pair in windows.windows(2) {
        assert!(
            pair[1].start_line <= pair[0].end_line,
            "consecutive windows overlap"
        );
        assert!(pair[1].start_line > pair[0].start_line, "windows advance");
    }
    for w in &windows {
        assert!(w.text.len() <= 1000, "window of {} bytes", w.text.len());
    }
}

/// A Python class with a docstring header and `methods` methods of 8 lines each.
fn big_python_class(methods: usize) -> String {
    let mut s = String::from(
        "import math\n\n\nclass Shapes:\n    \"\"\"Many shapes.\"\"\"\n\n    UNIT = 1\n",
    );
    for i in 0..methods {
        write!(
            s,
            "\n    def area_{i}(self, r):\n        a = math.pi * r * r\n        b = a * {i}\n        c = b + self.UNIT\n        if c > 10:\n            return c\n        return a\n"
        )
        .unwrap();
    }
    s.push_str("\n\ndef free():\n    return Shapes()\n");
    s
}

#[test]
fn big_class_becomes_header_chunk_plus_method_chunks() {
    let text = big_python_class(12); // class spans 4..=103
    let fc = chunk_checked(Language::Python, &text, &ChunkOptions::default());
    let got = chunks(&fc);
    assert_eq!(got[0], (1, 1, None, "module"));
    assert_eq!(
        got[1],
        (4, 7, Some("Shapes"), "class"),
        "header: up to the first method"
    );
    for (i, chunk) in got[2..14].iter().enumerate() {
        let start = 9 + 8 * i as u32;
        let name = format!("Shapes.area_{i}");
        assert_eq!(*chunk, (start, start + 6, Some(name.as_str()), "method"));
    }
    assert_eq!(got[14], (106, 107, Some("free"), "function"));
    assert_eq!(got.len(), 15);
    let method = &fc.chunks[2];
    assert_eq!(method.parent.as_deref(), Some("Shapes"));
    assert_eq!(method.signature.as_deref(), Some("def area_0(self, r):"));
    assert_eq!(method.symbols, ["Shapes.area_0"]);
    assert_eq!(fc.chunks[1].symbols, ["Shapes"]);
    assert_eq!(fc.symbols.len(), 14);
}

#[test]
fn big_class_with_big_method_windows_the_method() {
    let mut text =
        String::from("class Big {\n  constructor() {\n    this.x = 1;\n  }\n\n  run() {\n");
    for i in 0..150 {
        writeln!(text, "    this.x += {i};").unwrap();
    }
    text.push_str("  }\n}\n");
    let fc = chunk_checked(Language::JavaScript, &text, &ChunkOptions::default());
    let got = chunks(&fc);
    assert_eq!(
        got[0],
        (1, 4, Some("Big"), "class"),
        "header merged with the small constructor"
    );
    // 152 lines of `run` in two windows, the first 80 lines long; the class's closing brace
    // cannot join the full last window without breaking max_lines, so it stays the class's.
    assert_eq!(
        &got[1..],
        [
            (6, 85, Some("Big.run"), "method"),
            (78, 157, Some("Big.run"), "method"),
            (158, 158, Some("Big"), "class")
        ]
    );
    assert_eq!(fc.chunks[0].symbols, ["Big", "Big.constructor"]);
}

#[test]
fn tiny_functions_are_merged_up_to_the_limits() {
    let mut text = String::from("package tiny\n");
    for i in 0..40 {
        write!(text, "\nfunc f{i}() int {{\n\treturn {i}\n}}\n").unwrap();
    }
    // Lines: 1 package, then function i at 3 + 4i ..= 5 + 4i.
    let fc = chunk_checked(Language::Go, &text, &ChunkOptions::default());
    assert_eq!(fc.symbols.len(), 40);
    let got = chunks(&fc);
    // `package` (1 line) merges with f0..=f18 (lines 1..=77, as much as fits in 80 lines),
    // and the merged chunk is named after its first definition; the next run starts at f19.
    assert_eq!(
        got,
        [
            (1, 77, Some("f0"), "function"),
            (79, 157, Some("f19"), "function"),
            (159, 161, Some("f39"), "function")
        ]
    );
    let names: Vec<String> = (0..19).map(|i| format!("f{i}")).collect();
    assert_eq!(
        fc.chunks[0].symbols, names,
        "a merged chunk lists every definition in it"
    );
    assert_eq!(fc.chunks[1].symbols.len(), 20);
    assert_eq!(fc.chunks[1].signature.as_deref(), Some("func f19() int {"));

    // Without merging each function is its own chunk.
    let fc = chunk_checked(Language::Go, &text, &unmerged(80));
    assert_eq!(fc.chunks.len(), 41);

    // Functions at least min_lines long are never merged.
    let fc = chunk_checked(
        Language::Go,
        &text,
        &ChunkOptions {
            min_lines: 3,
            ..ChunkOptions::default()
        },
    );
    assert_eq!(fc.chunks.len(), 41);
}

#[test]
fn merged_chunks_respect_max_lines_and_max_bytes() {
    let mut text = String::new();
    for i in 0..30 {
        write!(text, "def f{i}():\n    return {i}\n\n").unwrap();
    }
    let opts = ChunkOptions {
        max_lines: 10,
        max_bytes: 60,
        ..ChunkOptions::default()
    };
    let fc = chunk_checked(Language::Python, &text, &opts);
    for c in &fc.chunks {
        assert!(c.text.len() <= 60, "{c:?}");
        assert!(c.symbols.len() >= 2, "tiny functions still merge: {c:?}");
    }
}

#[test]
fn top_level_code_between_definitions_is_module_chunks() {
    let mut text = String::from("import os\n\n");
    for i in 0..120 {
        writeln!(text, "CONFIG_{i} = os.environ.get('C{i}')").unwrap();
    }
    text.push_str("\n\ndef main():\n    print(CONFIG_1)\n    print(CONFIG_2)\n    print(CONFIG_3)\n    return 0\n");
    let fc = chunk_checked(Language::Python, &text, &ChunkOptions::default());
    let got = chunks(&fc);
    assert!(got.len() >= 3, "{got:?}");
    assert!(
        got[..got.len() - 1]
            .iter()
            .all(|c| c.2.is_none() && c.3 == "module"),
        "{got:?}"
    );
    assert_eq!(*got.last().unwrap(), (125, 129, Some("main"), "function"));
}

#[test]
fn comments_attach_only_when_directly_above() {
    let text = "// Header comment.\n\n// About a.\nfn a() {}\n\n// Stray comment.\n\nfn b() {}\n";
    let fc = chunk_checked(Language::Rust, text, &unmerged(80));
    assert_eq!(
        chunks(&fc),
        [
            (1, 1, None, "module"),
            (3, 4, Some("a"), "function"),
            (6, 6, None, "module"),
            (8, 8, Some("b"), "function")
        ]
    );
}

#[test]
fn definitions_sharing_a_line_share_a_chunk() {
    let text = "fn a() {} fn b() {}\nfn c() {}\n";
    let fc = chunk_checked(Language::Rust, text, &unmerged(80));
    assert_eq!(
        chunks(&fc),
        [(1, 1, Some("a"), "function"), (2, 2, Some("c"), "function")]
    );
    assert_eq!(fc.chunks[0].symbols, ["a", "b"]);
    assert_eq!(fc.symbols.len(), 3);
}

#[test]
fn coverage_holds_for_every_fixture_and_option_set() {
    let option_sets = [
        ChunkOptions::default(),
        unmerged(80),
        unmerged(10),
        ChunkOptions {
            max_lines: 3,
            max_bytes: 4000,
            window_overlap: 1,
            min_lines: 2,
        },
        ChunkOptions {
            max_lines: 1,
            max_bytes: 10,
            window_overlap: 0,
            min_lines: 5,
        },
        ChunkOptions {
            max_lines: 7,
            max_bytes: 120,
            window_overlap: 3,
            min_lines: 5,
        },
        // Nonsense limits are tolerated.
        ChunkOptions {
            max_lines: 0,
            max_bytes: 0,
            window_overlap: 50,
            min_lines: 1000,
        },
    ];
    for (language, text) in fixtures() {
        for opts in &option_sets {
            let fc = chunk_checked(language, text, opts);
            assert!(!fc.chunks.is_empty(), "{language}");
        }
        // Every code fixture parses into definitions (no silent fallback to text windows).
        if language.is_code() {
            let fc = chunk_file(language, text, &ChunkOptions::default());
            assert!(
                fc.chunks.iter().all(|c| c.kind != "text"),
                "{language} fell back to text"
            );
            assert!(fc.symbols.len() >= 5, "{language}");
        }
    }
}

#[test]
fn invalid_syntax_never_panics() {
    let garbage = [
        "}}}{{{ ((( ]]] fn class def struct impl <<< >>> \"unterminated",
        "class { def ( : \n\t\t  end end end }",
        "fn main() { let x = ; } }} impl for for for",
        "def f(:\n  return ((\nclass\n",
        "/* unterminated comment\nint main() {",
        "<?php function ( { class } ?> <html>",
        "\u{0}\u{1}\u{7f}\u{feff}ü€𝄞\r\r\n\r",
        "#[derive(\n",
        "@decorator\n@decorator\n",
    ];
    for language in Language::ALL {
        for text in garbage {
            chunk_checked(language, text, &ChunkOptions::default());
        }
        // Every prefix of the fixtures (cut mid-definition, mid-token, mid-UTF-8 avoided).
        for (_, fixture) in fixtures() {
            let step = (fixture.len() / 25).max(37);
            for cut in (0..fixture.len())
                .step_by(step)
                .filter(|&c| fixture.is_char_boundary(c))
            {
                chunk_checked(language, &fixture[..cut], &unmerged(6));
            }
        }
    }
}

#[test]
fn empty_and_blank_files_have_no_chunks() {
    for language in Language::ALL {
        for text in ["", "\n", "\n\n\n", "   \t \n  \r\n\t"] {
            let fc = chunk_file(language, text, &ChunkOptions::default());
            assert!(
                fc.chunks.is_empty() && fc.symbols.is_empty(),
                "{language} {text:?}"
            );
        }
    }
}

#[test]
fn crlf_files_chunk_like_lf_files() {
    for (language, text) in fixtures() {
        let crlf = text.replace('\n', "\r\n");
        let lf = chunk_file(language, text, &unmerged(10));
        let fc = chunk_checked(language, &crlf, &unmerged(10));
        assert_eq!(chunks(&fc), chunks(&lf), "{language}");
        assert_eq!(fc.symbols, lf.symbols, "{language}");
        assert!(
            fc.chunks.iter().all(|c| !c.text.contains('\r')),
            "{language}"
        );
    }
}

#[test]
fn no_trailing_newline_and_tabs() {
    let text = "package main\n\nfunc main() {\n\tif true {\n\t\tprintln(\"x\")\n\t}\n}";
    let fc = chunk_checked(Language::Go, text, &unmerged(80));
    assert_eq!(
        chunks(&fc),
        [(1, 1, None, "module"), (3, 7, Some("main"), "function")]
    );
    assert_eq!(
        fc.chunks[1].text,
        "func main() {\n\tif true {\n\t\tprintln(\"x\")\n\t}\n}"
    );
}

#[test]
fn huge_lines_and_deep_nesting_are_survived() {
    // One 2 MB line of minified code: a single chunk (one line cannot be split).
    let mut line = String::from("var a=");
    for i in 0..200_000 {
        write!(line, "{i},").unwrap();
    }
    line.push_str("0;function f(){return a}");
    let fc = chunk_checked(Language::JavaScript, &line, &ChunkOptions::default());
    assert_eq!(fc.chunks.len(), 1);

    // Deeply nested brackets must not overflow a (rayon-sized) stack.
    let deep = format!("x = {}1{}\n", "[".repeat(50_000), "]".repeat(50_000));
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for language in [Language::Python, Language::JavaScript, Language::Rust] {
                chunk_checked(language, &deep, &ChunkOptions::default());
            }
        })
        .unwrap();
    handle.join().expect("deep nesting handled");
}

#[test]
fn chunking_from_many_threads_agrees() {
    let expected: Vec<_> = fixtures()
        .iter()
        .map(|(l, t)| chunk_file(*l, t, &ChunkOptions::default()))
        .collect();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..5 {
                    for ((language, text), want) in fixtures().iter().zip(&expected) {
                        assert_eq!(&chunk_file(*language, text, &ChunkOptions::default()), want);
                    }
                }
            });
        }
    });
}

#[test]
fn markdown_splits_by_headings_outside_fences() {
    let fc = chunk_checked(
        Language::Markdown,
        include_str!("fixtures/sample.md"),
        &ChunkOptions::default(),
    );
    assert_eq!(
        symbols(&fc),
        owned_symbols(&[
            ("Quarry", "heading", 3, 28),
            ("Quarry.Install", "heading", 7, 22),
            ("Install.From source", "heading", 20, 22),
            ("Quarry.Usage", "heading", 24, 28),
        ])
    );
    assert_eq!(
        chunks(&fc),
        [
            (1, 1, None, "section"),
            (3, 5, Some("Quarry"), "section"),
            // `# not a heading` inside ``` and `## also not` inside ~~~ stay in Install.
            (7, 18, Some("Install"), "section"),
            (20, 22, Some("From source"), "section"),
            (24, 28, Some("Usage"), "section"),
        ]
    );
    let install = &fc.chunks[2];
    assert_eq!(install.parent.as_deref(), Some("Quarry"));
    assert_eq!(install.symbols, ["Install"]);
    assert_eq!(fc.chunks[3].parent.as_deref(), Some("Install"));
    assert!(fc.chunks[4].text.ends_with("#NotAHeading because no space"));
}

#[test]
fn oversized_markdown_sections_become_windows_keeping_the_heading() {
    let mut text = String::from("# Changelog\n\n## 1.0\n\n");
    for i in 0..100 {
        writeln!(text, "- change number {i}").unwrap();
    }
    let fc = chunk_checked(Language::Markdown, &text, &unmerged(40));
    let got = chunks(&fc);
    assert_eq!(got[0], (1, 1, Some("Changelog"), "section"));
    assert!(got.len() >= 3);
    assert!(got[1..].iter().all(|c| c.2 == Some("1.0")), "{got:?}");
    assert!(got[2].0 <= got[1].1, "windows overlap");
}

#[test]
fn text_is_line_windows() {
    let text = include_str!("fixtures/sample.txt");
    let fc = chunk_checked(Language::Text, text, &ChunkOptions::default());
    // ~55-byte lines: the 4000-byte limit cuts windows at 76 lines; 8 lines overlap.
    assert_eq!(
        chunks(&fc),
        [
            (1, 76, None, "text"),
            (69, 143, None, "text"),
            (136, 203, None, "text")
        ]
    );
    assert!(fc.symbols.is_empty());
    assert!(fc.chunks.iter().all(|c| c.symbols.is_empty()));

    let fc = chunk_checked(
        Language::Text,
        text,
        &ChunkOptions {
            max_bytes: usize::MAX,
            ..ChunkOptions::default()
        },
    );
    assert_eq!(
        chunks(&fc),
        [
            (1, 80, None, "text"),
            (73, 152, None, "text"),
            (145, 203, None, "text")
        ]
    );

    // All-blank windows are skipped.
    let sparse = format!("a\n{}b\n", "\n".repeat(30));
    let fc = chunk_checked(Language::Text, &sparse, &unmerged(5));
    let got = chunks(&fc);
    assert_eq!(got.first().map(|c| c.0), Some(1));
    assert_eq!(got.last().map(|c| c.1), Some(32));
    assert!(got.len() < 8, "{got:?}");
}

#[test]
fn invariants_hold_on_generated_files() {
    // Mixed sizes: big classes, tiny functions, long module sections, in several languages.
    let files = [
        (Language::Python, big_python_class(30)),
        (Language::Rust, big_rust_function(500)),
        (Language::Python, big_python_class(3)),
    ];
    for (language, text) in &files {
        for opts in [
            ChunkOptions::default(),
            unmerged(7),
            ChunkOptions {
                max_bytes: 200,
                ..ChunkOptions::default()
            },
        ] {
            let fc = chunk_file(*language, text, &opts);
            check_invariants(*language, text, &opts, &fc);
        }
    }
}
