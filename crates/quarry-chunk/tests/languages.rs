//! One realistic file per code language: the exact symbols it yields, its chunks under the
//! default options (small neighbours merged), and its chunks when containers must be split
//! (max 10 lines, no merging).

mod common;

use common::{chunk_checked, chunks, owned_symbols, symbols, unmerged};
use quarry_chunk::ChunkOptions;
use quarry_core::{FileChunks, Language};

type Sym = (&'static str, &'static str, u32, u32);
type Ch = (u32, u32, Option<&'static str>, &'static str);

/// Checks one fixture three ways and returns the default-options result for extra checks.
fn check(
    language: Language,
    text: &str,
    want_symbols: &[Sym],
    want_default: &[Ch],
    want_split: &[Ch],
) -> FileChunks {
    let fc = chunk_checked(language, text, &ChunkOptions::default());
    assert_eq!(
        symbols(&fc),
        owned_symbols(want_symbols),
        "{language} symbols"
    );
    assert_eq!(
        chunks(&fc),
        want_default,
        "{language} chunks (default options)"
    );
    let split = chunk_checked(language, text, &unmerged(10));
    assert_eq!(
        symbols(&split),
        owned_symbols(want_symbols),
        "{language} symbols do not depend on limits"
    );
    assert_eq!(
        chunks(&split),
        want_split,
        "{language} chunks (max 10 lines, unmerged)"
    );
    assert_eq!(
        quarry_chunk::file_symbols(language, text),
        fc.symbols,
        "{language} symbols without chunking (outlines) are the chunker's"
    );
    fc
}

fn chunk_at(fc: &FileChunks, start: u32) -> &quarry_core::Chunk {
    fc.chunks
        .iter()
        .find(|c| c.start_line == start)
        .expect("a chunk starting there")
}

#[test]
fn rust() {
    let fc = check(
        Language::Rust,
        include_str!("fixtures/sample.rs"),
        &[
            ("Point", "struct", 7, 10),
            ("Point", "impl", 12, 23),
            ("Point.new", "method", 14, 16),
            ("Point.distance", "method", 18, 22),
            ("Point", "impl", 25, 29),
            ("Point.fmt", "method", 26, 28),
            ("Shape", "enum", 31, 34),
            ("Area", "trait", 36, 38),
            ("Area.area", "method", 37, 37),
            ("origin", "function", 40, 42),
            ("tests", "module", 44, 48),
            ("tests.helper", "function", 45, 47),
        ],
        &[
            (1, 3, None, "module"),
            // Doc comment and #[derive] attach to the struct.
            (5, 10, Some("Point"), "struct"),
            (12, 23, Some("Point"), "impl"),
            (25, 29, Some("Point"), "impl"),
            // Three small neighbours merged.
            (31, 42, Some("Shape"), "enum"),
            (44, 48, Some("tests"), "module"),
        ],
        &[
            (1, 3, None, "module"),
            (5, 10, Some("Point"), "struct"),
            (12, 12, Some("Point"), "impl"),
            (13, 16, Some("Point.new"), "method"),
            // The impl's closing brace joins its last method.
            (18, 23, Some("Point.distance"), "method"),
            (25, 29, Some("Point"), "impl"),
            (31, 34, Some("Shape"), "enum"),
            (36, 38, Some("Area"), "trait"),
            (40, 42, Some("origin"), "function"),
            (44, 48, Some("tests"), "module"),
        ],
    );
    let s = fc.symbols.iter().find(|s| s.name == "fmt").unwrap();
    assert_eq!(s.parent.as_deref(), Some("Point"));
    assert_eq!(
        s.signature.as_deref(),
        Some("fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {")
    );
    let imp = chunk_at(&fc, 12);
    assert_eq!(imp.symbols, ["Point", "Point.new", "Point.distance"]);
    assert_eq!(imp.signature.as_deref(), Some("impl Point {"));
    assert_eq!(
        chunk_at(&fc, 31).symbols,
        ["Shape", "Area", "Area.area", "origin"]
    );
    assert!(chunk_at(&fc, 5).text.starts_with(
        "/// A point on the plane.\n#[derive(Debug, Clone, Copy)]\npub struct Point {"
    ));
}

#[test]
fn python() {
    let fc = check(
        Language::Python,
        include_str!("fixtures/sample.py"),
        &[
            // Decorated definitions answer at their `def`/`class` line, as ctags does; their
            // chunks (below) span the decorators.
            ("Item", "class", 8, 23),
            ("Item.restock", "method", 14, 15),
            ("Item.empty", "method", 18, 19),
            ("Item.Meta", "class", 21, 23),
            ("Item.Meta.describe", "method", 22, 23),
            ("load_items", "function", 26, 31),
        ],
        &[
            (1, 4, None, "module"),
            (7, 23, Some("Item"), "class"),
            (26, 31, Some("load_items"), "function"),
            (34, 34, None, "module"),
        ],
        &[
            (1, 4, None, "module"),
            (7, 12, Some("Item"), "class"),
            (14, 15, Some("Item.restock"), "method"),
            (17, 19, Some("Item.empty"), "method"),
            (21, 23, Some("Item.Meta"), "class"),
            (26, 31, Some("load_items"), "function"),
            (34, 34, None, "module"),
        ],
    );
    let sig = |name: &str| {
        fc.symbols
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .signature
            .clone()
            .unwrap()
    };
    assert_eq!(sig("Item"), "class Item:");
    assert_eq!(sig("empty"), "def empty(self) -> bool:");
    // A multi-line header is joined through its colon.
    assert_eq!(
        sig("load_items"),
        "def load_items(path: str, strict: bool = False) -> list:"
    );
    let describe = fc.symbols.iter().find(|s| s.name == "describe").unwrap();
    assert_eq!(describe.parent.as_deref(), Some("Item.Meta"));
}

#[test]
fn go() {
    let fc = check(
        Language::Go,
        include_str!("fixtures/sample.go"),
        &[
            ("Store", "struct", 9, 12),
            ("Getter", "interface", 14, 16),
            ("Getter.Get", "method", 15, 15),
            ("NewStore", "function", 19, 21),
            // A method's parent is its receiver type.
            ("Store.Get", "method", 23, 31),
        ],
        &[
            (1, 6, None, "module"),
            (8, 12, Some("Store"), "struct"),
            (14, 21, Some("Getter"), "interface"),
            (23, 31, Some("Store.Get"), "method"),
            (33, 33, None, "module"),
        ],
        &[
            (1, 6, None, "module"),
            (8, 12, Some("Store"), "struct"),
            (14, 16, Some("Getter"), "interface"),
            (18, 21, Some("NewStore"), "function"),
            (23, 31, Some("Store.Get"), "method"),
            (33, 33, None, "module"),
        ],
    );
    let merged = chunk_at(&fc, 14);
    assert_eq!(merged.symbols, ["Getter", "Getter.Get", "NewStore"]);
    let get = chunk_at(&fc, 23);
    assert_eq!(get.parent.as_deref(), Some("Store"));
    assert_eq!(
        get.signature.as_deref(),
        Some("func (s *Store) Get(key string) (string, error) {")
    );
}

#[test]
fn javascript() {
    let fc = check(
        Language::JavaScript,
        include_str!("fixtures/sample.js"),
        &[
            ("Cache", "class", 6, 22),
            ("Cache.constructor", "constructor", 7, 10),
            ("Cache.get", "method", 12, 14),
            ("Cache.set", "method", 16, 21),
            ("loadConfig", "function", 24, 26),
            ("double", "function", 28, 30),
            ("square", "function", 32, 34),
        ],
        &[
            (1, 1, None, "module"),
            (3, 22, Some("Cache"), "class"),
            (24, 34, Some("loadConfig"), "function"),
        ],
        &[
            (1, 1, None, "module"),
            (3, 6, Some("Cache"), "class"),
            (7, 10, Some("Cache.constructor"), "constructor"),
            (12, 14, Some("Cache.get"), "method"),
            (16, 22, Some("Cache.set"), "method"),
            (24, 26, Some("loadConfig"), "function"),
            (28, 30, Some("double"), "function"),
            (32, 34, Some("square"), "function"),
        ],
    );
    assert_eq!(
        chunk_at(&fc, 24).symbols,
        ["loadConfig", "double", "square"]
    );
    let double = fc.symbols.iter().find(|s| s.name == "double").unwrap();
    assert_eq!(double.signature.as_deref(), Some("const double = (x) => {"));
}

#[test]
fn typescript() {
    check(
        Language::TypeScript,
        include_str!("fixtures/sample.ts"),
        &[
            ("Listener", "interface", 3, 5),
            ("Listener.onEvent", "method", 4, 4),
            ("Handler", "type", 7, 7),
            ("Level", "enum", 9, 12),
            ("Bus", "class", 14, 29),
            ("Bus.constructor", "constructor", 17, 19),
            ("Bus.subscribe", "method", 21, 23),
            ("Bus.publish", "method", 25, 28),
            ("Util", "namespace", 31, 35),
            // Functions in a namespace stay functions.
            ("Util.clamp", "function", 32, 34),
            ("format", "function", 37, 39),
        ],
        &[
            (1, 12, Some("Listener"), "interface"),
            (14, 29, Some("Bus"), "class"),
            (31, 35, Some("Util"), "namespace"),
            (37, 39, Some("format"), "function"),
        ],
        &[
            (1, 1, None, "module"),
            (3, 5, Some("Listener"), "interface"),
            (7, 7, Some("Handler"), "type"),
            (9, 12, Some("Level"), "enum"),
            (14, 15, Some("Bus"), "class"),
            (17, 19, Some("Bus.constructor"), "constructor"),
            (21, 23, Some("Bus.subscribe"), "method"),
            (25, 29, Some("Bus.publish"), "method"),
            (31, 35, Some("Util"), "namespace"),
            (37, 39, Some("format"), "function"),
        ],
    );
}

#[test]
fn tsx() {
    check(
        Language::Tsx,
        include_str!("fixtures/sample.tsx"),
        &[
            ("ButtonProps", "interface", 3, 6),
            ("Button", "function", 8, 10),
            ("Counter", "class", 12, 22),
            ("Counter.increment", "method", 15, 17),
            ("Counter.render", "method", 19, 21),
            ("App", "function", 24, 26),
        ],
        &[
            (1, 10, Some("ButtonProps"), "interface"),
            (12, 22, Some("Counter"), "class"),
            (24, 26, Some("App"), "function"),
        ],
        &[
            (1, 1, None, "module"),
            (3, 6, Some("ButtonProps"), "interface"),
            (8, 10, Some("Button"), "function"),
            (12, 13, Some("Counter"), "class"),
            (15, 17, Some("Counter.increment"), "method"),
            (19, 22, Some("Counter.render"), "method"),
            (24, 26, Some("App"), "function"),
        ],
    );
}

#[test]
fn java() {
    check(
        Language::Java,
        include_str!("fixtures/Sample.java"),
        &[
            ("Account", "class", 9, 33),
            ("Account.Account", "constructor", 13, 16),
            ("Account.deposit", "method", 18, 23),
            ("Account.getBalance", "method", 25, 27),
            ("Account.Kind", "enum", 29, 32),
            ("Ledger", "interface", 35, 37),
            ("Ledger.record", "method", 36, 36),
            ("Entry", "record", 39, 39),
        ],
        &[
            (1, 4, None, "module"),
            (6, 33, Some("Account"), "class"),
            (35, 39, Some("Ledger"), "interface"),
        ],
        &[
            (1, 4, None, "module"),
            (6, 11, Some("Account"), "class"),
            (13, 16, Some("Account.Account"), "constructor"),
            (18, 23, Some("Account.deposit"), "method"),
            (25, 27, Some("Account.getBalance"), "method"),
            (29, 33, Some("Account.Kind"), "enum"),
            (35, 37, Some("Ledger"), "interface"),
            (39, 39, Some("Entry"), "record"),
        ],
    );
}

#[test]
fn c() {
    let fc = check(
        Language::C,
        include_str!("fixtures/sample.c"),
        &[
            ("buffer", "struct", 5, 9),
            ("buffer_t", "type", 11, 11),
            ("mode", "enum", 13, 13),
            ("grow", "function", 15, 22),
            ("buffer_take", "function", 24, 28),
            ("main", "function", 30, 35),
            ("MAX", "macro", 37, 37),
        ],
        &[
            (1, 2, None, "module"),
            (4, 9, Some("buffer"), "struct"),
            (11, 13, Some("buffer_t"), "type"),
            (15, 22, Some("grow"), "function"),
            (24, 28, Some("buffer_take"), "function"),
            (30, 35, Some("main"), "function"),
            (37, 37, Some("MAX"), "macro"),
        ],
        &[
            (1, 2, None, "module"),
            (4, 9, Some("buffer"), "struct"),
            (11, 11, Some("buffer_t"), "type"),
            (13, 13, Some("mode"), "enum"),
            (15, 22, Some("grow"), "function"),
            (24, 28, Some("buffer_take"), "function"),
            (30, 35, Some("main"), "function"),
            (37, 37, Some("MAX"), "macro"),
        ],
    );
    // The name comes from the declarator chain, through the pointer declarator.
    let take = fc.symbols.iter().find(|s| s.name == "buffer_take").unwrap();
    assert_eq!(
        take.signature.as_deref(),
        Some("char *buffer_take(struct buffer *b) {")
    );
}

#[test]
fn cpp() {
    let fc = check(
        Language::Cpp,
        include_str!("fixtures/sample.cpp"),
        &[
            ("geo", "namespace", 4, 31),
            ("geo.Polygon", "class", 6, 20),
            ("geo.Polygon.Polygon", "constructor", 8, 8),
            ("geo.Polygon.perimeter", "method", 10, 14),
            // `int Polygon::sides()` outside the class: name `sides`, parent the class.
            ("geo.Polygon.sides", "method", 22, 24),
            ("geo.Config", "struct", 26, 29),
            ("clamp", "function", 33, 36),
        ],
        &[
            (1, 2, None, "module"),
            (4, 31, Some("geo"), "namespace"),
            (33, 36, Some("clamp"), "function"),
        ],
        &[
            (1, 2, None, "module"),
            (4, 4, Some("geo"), "namespace"),
            (6, 7, Some("geo.Polygon"), "class"),
            (8, 8, Some("geo.Polygon.Polygon"), "constructor"),
            (10, 14, Some("geo.Polygon.perimeter"), "method"),
            // The class body between and after its methods belongs to the class.
            (16, 20, Some("geo.Polygon"), "class"),
            (22, 24, Some("geo.Polygon.sides"), "method"),
            (26, 31, Some("geo.Config"), "struct"),
            (33, 36, Some("clamp"), "function"),
        ],
    );
    let sides = fc.symbols.iter().find(|s| s.name == "sides").unwrap();
    assert_eq!(sides.parent.as_deref(), Some("geo.Polygon"));
    let clamp = fc.symbols.iter().find(|s| s.name == "clamp").unwrap();
    assert_eq!(
        clamp.signature.as_deref(),
        Some("T clamp(T v, T lo, T hi) {")
    );
}

#[test]
fn ruby() {
    check(
        Language::Ruby,
        include_str!("fixtures/sample.rb"),
        &[
            ("Billing", "module", 3, 20),
            ("Billing.Invoice", "class", 5, 19),
            ("Billing.Invoice.initialize", "constructor", 8, 10),
            ("Billing.Invoice.total", "method", 12, 14),
            ("Billing.Invoice.parse", "method", 16, 18),
            ("format_money", "function", 22, 24),
        ],
        &[
            (1, 1, None, "module"),
            (3, 20, Some("Billing"), "module"),
            (22, 24, Some("format_money"), "function"),
        ],
        &[
            (1, 1, None, "module"),
            (3, 3, Some("Billing"), "module"),
            // The comment above the class is part of its chunk.
            (4, 6, Some("Billing.Invoice"), "class"),
            (8, 10, Some("Billing.Invoice.initialize"), "constructor"),
            (12, 14, Some("Billing.Invoice.total"), "method"),
            (16, 20, Some("Billing.Invoice.parse"), "method"),
            (22, 24, Some("format_money"), "function"),
        ],
    );
}

#[test]
fn csharp() {
    check(
        Language::CSharp,
        include_str!("fixtures/sample.cs"),
        &[
            ("Shop.Orders", "namespace", 4, 35),
            ("Shop.Orders.Order", "class", 7, 22),
            ("Shop.Orders.Order.Order", "constructor", 11, 14),
            ("Shop.Orders.Order.AddLine", "method", 18, 21),
            ("Shop.Orders.IOrderRepository", "interface", 24, 27),
            ("Shop.Orders.IOrderRepository.Find", "method", 26, 26),
            ("Shop.Orders.Money", "struct", 29, 32),
            ("Shop.Orders.OrderPlaced", "record", 34, 34),
        ],
        &[
            (1, 2, None, "module"),
            (4, 35, Some("Shop.Orders"), "namespace"),
        ],
        &[
            (1, 2, None, "module"),
            (4, 5, Some("Shop.Orders"), "namespace"),
            (6, 9, Some("Shop.Orders.Order"), "class"),
            (11, 14, Some("Shop.Orders.Order.Order"), "constructor"),
            (16, 16, Some("Shop.Orders.Order"), "class"),
            (18, 22, Some("Shop.Orders.Order.AddLine"), "method"),
            (24, 27, Some("Shop.Orders.IOrderRepository"), "interface"),
            (29, 32, Some("Shop.Orders.Money"), "struct"),
            (34, 35, Some("Shop.Orders.OrderPlaced"), "record"),
        ],
    );
}

#[test]
fn php() {
    check(
        Language::Php,
        include_str!("fixtures/sample.php"),
        &[
            // `namespace X;` scopes the rest of the file; its segments are dotted as every qualified
            // name is (`App\\Models.User` mixed two separators).
            ("App.Models", "namespace", 3, 3),
            ("App.Models.User", "class", 10, 23),
            ("App.Models.User.__construct", "constructor", 14, 17),
            ("App.Models.User.greet", "method", 19, 22),
            ("App.Models.Repository", "interface", 25, 28),
            ("App.Models.Repository.find", "method", 27, 27),
            ("App.Models.slugify", "function", 30, 33),
        ],
        &[
            (1, 5, Some("App.Models"), "namespace"),
            (7, 23, Some("App.Models.User"), "class"),
            (25, 33, Some("App.Models.Repository"), "interface"),
        ],
        &[
            (1, 1, None, "module"),
            (3, 3, Some("App.Models"), "namespace"),
            (5, 5, None, "module"),
            (7, 12, Some("App.Models.User"), "class"),
            (14, 17, Some("App.Models.User.__construct"), "constructor"),
            (19, 23, Some("App.Models.User.greet"), "method"),
            (25, 28, Some("App.Models.Repository"), "interface"),
            (30, 33, Some("App.Models.slugify"), "function"),
        ],
    );
}

#[test]
fn rust_items_declared_inside_macros_are_definitions() {
    let text = "pin_project! {\n    /// Buffers both ways.\n    pub struct BufStream<RW> {\n        #[pin]\n        inner: RW,\n    }\n}\n\nbitflags! {\n    pub struct Flags: u32 {\n        const A = 1;\n    }\n}\n\ncfg_net! {\n    pin_project! {\n        pub struct TcpStream { io: u8 }\n    }\n    pub fn connect() {}\n}\n\nfn main() {\n    println!(\"struct {}\", 1);\n}\n";
    let fc = chunk_checked(Language::Rust, text, &ChunkOptions::default());
    let found = symbols(&fc);
    // bitflags' `struct Flags: u32` is not Rust: the parse recovers, and the struct's start
    // is still right.
    assert!(
        found
            .iter()
            .any(|s| s.0 == "Flags" && s.1 == "struct" && s.2 == 10),
        "{found:?}"
    );
    for want in [
        ("TcpStream", "struct", 17, 17),
        ("connect", "function", 19, 19),
        ("main", "function", 22, 24),
    ] {
        assert!(
            found.contains(&(want.0.to_string(), want.1, want.2, want.3)),
            "{want:?} in {found:?}"
        );
    }
    // A macro's items are symbols, not chunk boundaries: the invocation is still one piece.
    assert!(
        fc.chunks
            .iter()
            .any(|c| c.start_line == 1 && c.end_line >= 7),
        "{:?}",
        chunks(&fc)
    );
}

#[test]
fn a_signature_reaches_the_line_that_names_the_definition() {
    // C's return type on a line of its own (hiredis' ffc.h), a C++ template header.
    let c = "// Read 4 bytes.\nstatic inline uint32_t\nffc_read4_to_u32(char const *chars) {\n  return 0;\n}\n";
    let fc = chunk_checked(Language::C, c, &ChunkOptions::default());
    let f = fc
        .symbols
        .iter()
        .find(|s| s.name == "ffc_read4_to_u32")
        .unwrap();
    assert_eq!(
        f.signature.as_deref(),
        Some("static inline uint32_t ffc_read4_to_u32(char const *chars) {")
    );
    let cpp = "template <typename T>\nT max_of(T a, T b) {\n  return a > b ? a : b;\n}\n";
    let fc = chunk_checked(Language::Cpp, cpp, &ChunkOptions::default());
    let f = fc.symbols.iter().find(|s| s.name == "max_of").unwrap();
    assert_eq!(f.signature.as_deref(), Some("T max_of(T a, T b) {"));
}

#[test]
fn rust_constants_and_statics_are_definitions() {
    // axum's `close_code::NORMAL`: a name users look up.
    let rs = "pub mod close_code {\n    /// Normal closure.\n    pub const NORMAL: u16 = 1000;\n    pub const AWAY: u16 = 1001;\n}\n\nstatic GREETING: &str = \"hi\";\n";
    let fc = chunk_checked(Language::Rust, rs, &ChunkOptions::default());
    let found: Vec<(&str, &str, Option<&str>, u32)> = fc
        .symbols
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.kind.as_str(),
                s.parent.as_deref(),
                s.start_line,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("close_code", "module", None, 1),
            ("NORMAL", "constant", Some("close_code"), 3),
            ("AWAY", "constant", Some("close_code"), 4),
            ("GREETING", "constant", None, 7),
        ]
    );
}
