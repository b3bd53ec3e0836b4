//! The languages added beside the first twelve (Kotlin, Swift, shell, Lua, Scala, Dart): one
//! realistic file each, with the definitions Universal Ctags (or, where it has no parser, a
//! reader) names, their kinds, qualified names and lines. Chunk invariants are checked on
//! every one (`chunk_checked`), and the fixtures join the property tests' set.

mod common;

use common::{chunk_checked, symbols};
use quarry_chunk::ChunkOptions;
use quarry_core::Language;

fn defs(language: Language) -> Vec<String> {
    let (_, text) = common::fixtures()
        .into_iter()
        .find(|(l, _)| *l == language)
        .unwrap();
    symbols(&chunk_checked(language, text, &ChunkOptions::default()))
        .into_iter()
        .map(|(name, kind, start, end)| format!("{kind} {name} {start}-{end}"))
        .collect()
}

#[test]
fn kotlin_classes_objects_companions_and_aliases() {
    assert_eq!(
        defs(Language::Kotlin),
        [
            "interface Shape 6-8",
            "method Shape.area 7-7",
            "class Circle 10-16",
            "method Circle.area 11-11",
            "object Circle.Companion 13-15",
            "method Circle.Companion.unit 14-14",
            "object Registry 18-21",
            "method Registry.add 20-20",
            "class Color 23-23",
            "type Shapes 25-25",
            "function totalArea 27-27",
        ]
    );
}

#[test]
fn swift_types_extensions_initialisers_and_protocols() {
    assert_eq!(
        defs(Language::Swift),
        [
            "interface Shape 3-5",
            "method Shape.area 4-4",
            "struct Circle 7-11",
            "constructor Circle.init 9-9",
            "method Circle.area 10-10",
            "class Registry 13-17",
            "method Registry.add 15-15",
            "method Registry.deinit 16-16",
            "extension Circle 19-21",
            "method Circle.unit 20-20",
            "enum Color 23-23",
            "type Shapes 25-25",
            "function totalArea 27-27",
        ]
    );
}

#[test]
fn shell_functions_in_both_spellings() {
    assert_eq!(
        defs(Language::Shell),
        [
            "function log 4-6",
            "function build_image 8-11",
            "function main 13-16",
            "function cleanup 17-19",
            "function usage 21-23",
        ]
    );
}

#[test]
fn lua_functions_declared_assigned_and_in_tables() {
    assert_eq!(
        defs(Language::Lua),
        [
            "function square 3-5",
            "function M.area 7-9",
            "method M.describe 11-13",
            "function total 15-19",
            "function on_open 22-24",
            "function describe_all 27-29",
        ]
    );
}

#[test]
fn scala_traits_objects_enums_and_top_level_definitions() {
    assert_eq!(
        defs(Language::Scala),
        [
            "trait Shape 3-5",
            "method Shape.area 4-4",
            "class Circle 7-9",
            "method Circle.area 8-8",
            "object Registry 11-14",
            "method Registry.add 13-13",
            "enum Color 16-18",
            "type Shapes 20-20",
            "function totalArea 22-22",
        ]
    );
}

/// Dart's bodies follow their signatures as siblings: a definition's lines run to its body's
/// end (`area` 13-15, `totalArea` 28-30).
#[test]
fn dart_classes_mixins_constructors_and_getters() {
    assert_eq!(
        defs(Language::Dart),
        [
            "class Shape 3-5",
            "method Shape.area 4-4",
            "class Circle 7-18",
            "constructor Circle.Circle 9-9",
            "constructor Circle.unit 10-10",
            "method Circle.area 13-15",
            "method Circle.diameter 17-17",
            "mixin Named 20-22",
            "method Named.name 21-21",
            "enum Color 24-24",
            "type Shapes 26-26",
            "function totalArea 28-30",
        ]
    );
}

/// Calls in the new grammars: a shell command names the function it runs, a Lua call its
/// last segment, Kotlin, Swift and Scala their call expressions.
#[test]
fn new_languages_know_their_calls() {
    use quarry_chunk::chunk_file;
    let calls = |language: Language| -> Vec<(Option<String>, String)> {
        let (_, text) = common::fixtures()
            .into_iter()
            .find(|(l, _)| *l == language)
            .unwrap();
        chunk_file(language, text, &ChunkOptions::default())
            .calls
            .into_iter()
            .map(|c| (c.caller, c.callee))
            .collect()
    };
    let has = |found: &[(Option<String>, String)], caller: &str, callee: &str| {
        found
            .iter()
            .any(|(c, n)| c.as_deref() == Some(caller) && n == callee)
    };
    let shell = calls(Language::Shell);
    assert!(has(&shell, "main", "build_image"), "{shell:?}");
    assert!(has(&shell, "build_image", "log"), "{shell:?}");
    let lua = calls(Language::Lua);
    assert!(has(&lua, "M.area", "square"), "{lua:?}");
    assert!(has(&lua, "total", "area"), "{lua:?}");
    let kotlin = calls(Language::Kotlin);
    assert!(
        has(&kotlin, "Circle.Companion.unit", "Circle"),
        "{kotlin:?}"
    );
    let swift = calls(Language::Swift);
    assert!(has(&swift, "Registry.add", "append"), "{swift:?}");
    let scala = calls(Language::Scala);
    assert!(has(&scala, "totalArea", "map"), "{scala:?}");
}

#[test]
fn r_functions_by_assignment() {
    assert_eq!(
        defs(Language::R),
        [
            "function mean_sd 4-6",
            "function scale01 8-11",
            "function summarise 13-16",
            "function summarise.helper 14-14",
            "function %+% 18-18",
        ]
    );
}

/// Methods are named by their selectors; an `.h` with `@interface` is parsed as
/// Objective-C too (dialect.rs).
#[test]
fn objective_c_interfaces_implementations_and_selectors() {
    let expected = [
        "interface Drawable 3-5",
        "method Drawable.draw 4-4",
        "class Shape 7-12",
        "method Shape.initWithWidth:height: 9-9",
        "method Shape.area 10-10",
        "method Shape.unit 11-11",
        "class Shape 14-31",
        "method Shape.initWithWidth:height: 15-18",
        "method Shape.area 20-22",
        "method Shape.unit 24-26",
        "method Shape.draw 28-30",
        "function twice 33-35",
    ];
    assert_eq!(defs(Language::ObjectiveC), expected);
    let (_, text) = common::fixtures()
        .into_iter()
        .find(|(l, _)| *l == Language::ObjectiveC)
        .unwrap();
    let chunked = chunk_checked(Language::C, text, &ChunkOptions::default());
    let as_header = symbols(&chunked);
    assert_eq!(as_header.len(), expected.len(), "{as_header:?}");
}

/// An annotation at the end of a declaration (`AF_API_AVAILABLE(ios(10))` before `{`) no
/// longer swallows the methods after it.
#[test]
fn objective_c_trailing_availability_annotations() {
    let text = "@interface Manager : NSObject\n- (instancetype)init NS_DESIGNATED_INITIALIZER;\n- (void)collect:(id)metrics AF_API_AVAILABLE(ios(10));\n@end\n\n@implementation Manager\n- (void)collect:(id)metrics AF_API_AVAILABLE(ios(10), macosx(10.12)) {\n    self.metrics = metrics;\n}\n\n- (void)after {\n    [self collect:nil];\n}\n@end\n";
    let chunked = chunk_checked(Language::ObjectiveC, text, &ChunkOptions::default());
    let found = symbols(&chunked);
    let names: Vec<&str> = found.iter().map(|(n, _, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Manager",
            "Manager.init",
            "Manager.collect:",
            "Manager",
            "Manager.collect:",
            "Manager.after"
        ],
        "{found:?}"
    );
}

#[test]
fn elixir_modules_functions_macros_and_protocols() {
    assert_eq!(
        defs(Language::Elixir),
        [
            "module MyApp.Accounts 1-19",
            "function MyApp.Accounts.list_users 6-8",
            "function MyApp.Accounts.get_user! 10-10",
            "function MyApp.Accounts.normalize 12-14",
            "function MyApp.Accounts.with_user 16-18",
            "module MyApp.Greeter 21-23",
            "function MyApp.Greeter.greet 22-22",
            "module MyApp.Greeter 25-27",
            "function MyApp.Greeter.greet 26-26",
        ]
    );
}

/// Each equation of a function is a definition (as Universal Ctags lists them); a prime is
/// part of a name (`jsonAccum'`).
#[test]
fn haskell_types_classes_and_equations() {
    assert_eq!(
        defs(Language::Haskell),
        [
            "type Shape 4-5",
            "type Name 7-7",
            "type Shapes 9-9",
            "class HasArea 11-12",
            "function area 15-15",
            "function area 16-16",
            "function perimeter 19-19",
            "function perimeter 20-20",
            "function total 22-22",
        ]
    );
    let chunked = chunk_checked(
        Language::Haskell,
        "module M where\n\njsonAccum' :: Int\njsonAccum' = 1\n",
        &ChunkOptions::default(),
    );
    let primed = symbols(&chunked);
    assert_eq!(primed[0].0, "jsonAccum'", "{primed:?}");
}

#[test]
fn zig_containers_functions_and_tests() {
    assert_eq!(
        defs(Language::Zig),
        [
            "struct Shape 3-14",
            "method Shape.area 7-9",
            "method Shape.init 11-13",
            "enum Color 16-16",
            "type Error 18-18",
            "function twice 20-22",
            "test area of a unit shape 24-26",
        ]
    );
}

#[test]
fn julia_modules_types_methods_and_short_forms() {
    assert_eq!(
        defs(Language::Julia),
        [
            "module Shapes 1-31",
            "type Shapes.Shape 5-5",
            "struct Shapes.Circle 8-10",
            "struct Shapes.Rect 12-15",
            "function Shapes.area 17-19",
            "function Shapes.area 21-21",
            "function Shapes.show 23-25",
            "macro Shapes.twice 27-29",
        ]
    );
}

/// A script without an extension is parsed in the language of its `#!` line: its chunks carry
/// that language and its functions are definitions.
#[test]
fn scripts_without_an_extension_go_by_their_shebang() {
    use quarry_chunk::{chunk_file, script_language};
    assert_eq!(
        script_language("#!/usr/bin/env bash\n"),
        Some(Language::Shell)
    );
    assert_eq!(script_language("#!/bin/sh -e\n"), Some(Language::Shell));
    assert_eq!(
        script_language("#!/usr/bin/env -S python3 -u\n"),
        Some(Language::Python)
    );
    assert_eq!(
        script_language("#!/usr/bin/ruby2.7\n"),
        Some(Language::Ruby)
    );
    assert_eq!(script_language("#!/usr/bin/perl\n"), None);
    assert_eq!(script_language("just text\n"), None);
    let text =
        "#!/usr/bin/env bash\nset -e\n\ndeploy_app() {\n    echo deploying\n}\n\ndeploy_app\n";
    let fc = chunk_file(Language::Text, text, &ChunkOptions::default());
    let names: Vec<&str> = fc.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["deploy_app"]);
    assert!(
        fc.chunks.iter().all(|c| c.language == Language::Shell),
        "{:?}",
        fc.chunks
    );
}
