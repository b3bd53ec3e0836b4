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
