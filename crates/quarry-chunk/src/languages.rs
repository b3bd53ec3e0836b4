//! Per-language knowledge: which grammar parses a language, which syntax-node kinds are
//! definitions (and what symbol kind they become), how each definition's name is found, which
//! nodes wrap a definition (`export`, decorators, templates), and which nodes attach to the
//! definition below them (comments, attributes).
//!
//! Everything language-specific lives here as data plus a few small name-finding helpers, so
//! the tree walk in `tree.rs` stays generic. JavaScript/TypeScript definitions written as
//! expressions (CommonJS, prototypes, object literals) are named in `js.rs`.

mod js;

use quarry_core::Language;
use tree_sitter::Node;

/// How a definition node is named and what kind of symbol it becomes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rule {
    /// Name from a field; a fixed symbol kind.
    Named {
        field: &'static str,
        kind: &'static str,
    },
    /// Like `Named`, but only when the node has a `body` field (skips `mod foo;`, forward
    /// declarations and bodiless namespaces).
    WithBody {
        field: &'static str,
        kind: &'static str,
    },
    /// A function: `function` at top level, `method` inside a class-like container,
    /// `constructor` when it has the language's constructor name.
    Func { field: &'static str },
    /// Always a constructor (Java/C# `constructor_declaration`).
    Ctor { field: &'static str },
    /// C# destructor: `~Name`, a method.
    Dtor { field: &'static str },
    /// Rust `impl`: named after its `type` field (`impl Display for Foo` → `Foo`).
    RustImpl,
    /// C/C++ `function_definition`: named from the declarator chain (`Class::m` → `m` with
    /// explicit parent `Class`).
    CFunction,
    /// C/C++ struct/union/enum/class specifier with a body; an anonymous one inside a typedef
    /// takes the typedef's name.
    CSpecifier { kind: &'static str },
    /// C/C++ `typedef` of anything but an inline struct body → kind `type`.
    CTypedef,
    /// Go `type_spec`: `struct`, `interface` or `type` depending on the underlying type.
    GoType,
    /// Go `method_declaration`: a method whose parent is the receiver's type.
    GoMethod,
    /// JS/TS `variable_declarator` whose value is a function or class expression (an arrow or
    /// class only outside function bodies; see `js.rs`).
    JsVar,
    /// JS/TS class field whose value is a function (`handler = () => {}`): a method.
    JsField { field: &'static str },
    /// JS/TS `method_definition` in a class body, or in an object literal that is bound to a
    /// name, exported or returned.
    JsMethod,
    /// JS/TS function, arrow or class expression named by what it is assigned to
    /// (`app.use = function`, `X.prototype.m = function`, `key: function` in a bound object
    /// literal) or by its own name (`f(function host() {})`).
    JsExpr,
    /// Ruby class/module: last segment of `A::B`.
    RubyConst { kind: &'static str },
    /// Ruby `def self.x`: always a method.
    RubySingleton,
    /// A namespace that covers the rest of the file (`namespace A.B;` in C#, `namespace A\B;`
    /// in PHP): a symbol, and the parent of every later top-level definition.
    FileScope,
    /// PHP `namespace_definition`: braced → namespace container; bodiless → `FileScope`.
    PhpNamespace,
    /// C# `operator_declaration` (`operator+`) and `conversion_operator_declaration`
    /// (`operator decimal`, named by the type converted to): methods.
    CsOperator,
    /// A definition without a name of its own: this fixed name and kind (TypeScript's construct
    /// signature `new (…): T` is `new`).
    Fixed {
        name: &'static str,
        kind: &'static str,
    },
    /// Named from a field, or `default` when the field is absent (Kotlin's `companion object`).
    NamedOr {
        field: &'static str,
        default: &'static str,
        kind: &'static str,
    },
    /// Named from a field; the kind from the first keyword among the node's own tokens that
    /// `keywords` lists, else `kind` (Kotlin's `interface` is a `class_declaration`).
    Keyworded {
        field: &'static str,
        kind: &'static str,
        keywords: &'static [(&'static str, &'static str)],
    },
    /// Named by the first child of one of these kinds (Dart's `typedef`).
    FirstChild {
        kinds: &'static [&'static str],
        kind: &'static str,
    },
    /// Dart constructor: `Circle(…)` is `Circle`, the named `Circle.unit(…)` (and a factory's
    /// `factory Circle.unit(…)`) is `unit`.
    DartCtor,
    /// Swift `class_declaration`: a class, struct, enum, actor or extension by its
    /// `declaration_kind`; an extension is named by the type it extends.
    SwiftType,
    /// Lua `function_declaration`: `f`, `M.f` (function `f` in `M`), `M:f` (method `f`).
    LuaFunction,
    /// Elixir's definitions are calls: `defmodule A.B`, `defprotocol`, `defimpl` (modules) and
    /// `def f(x)`, `defp`, `defmacro`, `defguard`, `defdelegate` (functions), named by their
    /// first argument.
    ElixirDef,
    /// R's functions are assignments: `name <- function(…)`, `name = function(…)`.
    RAssign,
    /// Julia `function f(x)`, `macro m(x)`: named by the call in their signature (`Base.show`
    /// is `show`); `f(x) = …` at the top of a file or module too.
    JuliaSignature { kind: &'static str },
    /// Julia `struct`, `abstract type`, `primitive type`: named by the first name in the head
    /// (`struct Point{T} <: Shape`).
    JuliaType { kind: &'static str },
    /// Zig `const Name = struct { … }` (also `enum`, `union`, `opaque`, an error set): a type.
    ZigContainer,
    /// Objective-C method: named by its selector (`count`, `initWithFrame:style:`).
    ObjcMethod,
    /// Lua `function_definition` (an anonymous `function`) named by what it is assigned to:
    /// `M.f = function`, `local f = function`, a table's `key = function`.
    LuaAssigned,
}

const FUNC: Rule = Rule::Func { field: "name" };
const CTOR: Rule = Rule::Ctor { field: "name" };

/// `Named` by the usual `name` field.
const fn named(kind: &'static str) -> Rule {
    Rule::Named {
        field: "name",
        kind,
    }
}

/// `WithBody` by the usual `name` field.
const fn with_body(kind: &'static str) -> Rule {
    Rule::WithBody {
        field: "name",
        kind,
    }
}

/// A language's tables.
pub(crate) struct Spec {
    pub grammar: fn() -> tree_sitter::Language,
    /// The highlight query the file view colours with (the grammar's own, where it has one),
    /// and the injections query.
    pub highlights: fn() -> String,
    pub injections: &'static str,
    /// A definition's body that follows it as a sibling rather than inside it (Dart's
    /// `function_body` after a top-level `function_signature`): it joins the definition.
    pub body_after: Option<&'static str>,
    /// What `$` becomes in an `sg` pattern where `$` cannot start a name (ast-grep-language's
    /// choice per language): `µ` in Python, Rust, Go, …; `𐀀` in C-family; `$` where it can.
    pub expando: char,
    /// Definition node kinds and their rules.
    pub defs: &'static [(&'static str, Rule)],
    /// Nodes that wrap a single definition and belong to its range (`export`, decorators,
    /// `template <…>`, `const f = …`).
    pub wrappers: &'static [&'static str],
    /// Nodes standing on their own lines directly above a definition that join its chunk.
    pub attach: &'static [&'static str],
    /// The name a constructor method has, if the language names constructors.
    pub ctor_name: Option<&'static str>,
}

const COMMENT: &[&str] = &["comment"];
const JS_WRAPPERS: &[&str] = &[
    "export_statement",
    "lexical_declaration",
    "variable_declaration",
    "ambient_declaration",
    "expression_statement",
    // `app.use = function use() {…};`, `key: function () {…}`.
    "assignment_expression",
    "pair",
];

const JS_DEFS: &[(&str, Rule)] = &[
    ("function_declaration", FUNC),
    ("generator_function_declaration", FUNC),
    ("class_declaration", named("class")),
    ("method_definition", Rule::JsMethod),
    ("variable_declarator", Rule::JsVar),
    ("field_definition", Rule::JsField { field: "property" }),
    ("function_expression", Rule::JsExpr),
    ("generator_function", Rule::JsExpr),
    ("arrow_function", Rule::JsExpr),
    ("class", Rule::JsExpr),
];

const TS_DEFS: &[(&str, Rule)] = &[
    ("function_declaration", FUNC),
    ("generator_function_declaration", FUNC),
    ("function_signature", FUNC),
    ("class_declaration", named("class")),
    ("abstract_class_declaration", named("class")),
    ("interface_declaration", named("interface")),
    ("type_alias_declaration", named("type")),
    ("enum_declaration", named("enum")),
    ("internal_module", named("namespace")),
    ("module", with_body("module")),
    ("method_definition", Rule::JsMethod),
    ("method_signature", FUNC),
    ("abstract_method_signature", FUNC),
    (
        "construct_signature",
        Rule::Fixed {
            name: "new",
            kind: "method",
        },
    ),
    ("variable_declarator", Rule::JsVar),
    ("public_field_definition", Rule::JsField { field: "name" }),
    ("function_expression", Rule::JsExpr),
    ("generator_function", Rule::JsExpr),
    ("arrow_function", Rule::JsExpr),
    ("class", Rule::JsExpr),
];

const C_DEFS: &[(&str, Rule)] = &[
    ("function_definition", Rule::CFunction),
    ("struct_specifier", Rule::CSpecifier { kind: "struct" }),
    ("union_specifier", Rule::CSpecifier { kind: "struct" }),
    ("enum_specifier", Rule::CSpecifier { kind: "enum" }),
    ("type_definition", Rule::CTypedef),
    ("preproc_function_def", named("macro")),
];

const CPP_DEFS: &[(&str, Rule)] = &[
    ("function_definition", Rule::CFunction),
    ("class_specifier", Rule::CSpecifier { kind: "class" }),
    ("struct_specifier", Rule::CSpecifier { kind: "struct" }),
    ("union_specifier", Rule::CSpecifier { kind: "struct" }),
    ("enum_specifier", Rule::CSpecifier { kind: "enum" }),
    ("type_definition", Rule::CTypedef),
    ("preproc_function_def", named("macro")),
    ("alias_declaration", named("type")),
    ("namespace_definition", with_body("namespace")),
];

static RUST: Spec = Spec {
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    highlights: || tree_sitter_rust::HIGHLIGHTS_QUERY.into(),
    injections: tree_sitter_rust::INJECTIONS_QUERY,
    body_after: None,
    expando: 'µ',
    defs: &[
        ("function_item", FUNC),
        ("function_signature_item", FUNC),
        ("struct_item", named("struct")),
        ("union_item", named("struct")),
        ("enum_item", named("enum")),
        ("trait_item", named("trait")),
        ("impl_item", Rule::RustImpl),
        ("mod_item", with_body("module")),
        ("type_item", named("type")),
        ("macro_definition", named("macro")),
        // Named values a user looks up by name (`MAX_FRAME_SIZE`, a `close_code::NORMAL`).
        ("const_item", named("constant")),
        ("static_item", named("constant")),
    ],
    wrappers: &[],
    attach: &["line_comment", "block_comment", "attribute_item"],
    ctor_name: None,
};

static PYTHON: Spec = Spec {
    grammar: || tree_sitter_python::LANGUAGE.into(),
    highlights: || tree_sitter_python::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("function_definition", FUNC),
        ("class_definition", named("class")),
    ],
    wrappers: &["decorated_definition"],
    attach: COMMENT,
    ctor_name: Some("__init__"),
};

static GO: Spec = Spec {
    grammar: || tree_sitter_go::LANGUAGE.into(),
    highlights: || tree_sitter_go::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("function_declaration", FUNC),
        ("method_declaration", Rule::GoMethod),
        ("type_spec", Rule::GoType),
        ("type_alias", named("type")),
        ("method_elem", FUNC),
    ],
    wrappers: &["type_declaration"],
    attach: COMMENT,
    ctor_name: None,
};

static JAVASCRIPT: Spec = Spec {
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    highlights: || {
        format!(
            "{}\n{}",
            tree_sitter_javascript::JSX_HIGHLIGHT_QUERY,
            tree_sitter_javascript::HIGHLIGHT_QUERY
        )
    },
    injections: "",
    body_after: None,
    expando: '$',
    defs: JS_DEFS,
    wrappers: JS_WRAPPERS,
    attach: &["comment", "decorator"],
    ctor_name: Some("constructor"),
};

static TYPESCRIPT: Spec = Spec {
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    highlights: || {
        format!(
            "{}\n{}",
            tree_sitter_typescript::HIGHLIGHTS_QUERY,
            tree_sitter_javascript::HIGHLIGHT_QUERY
        )
    },
    injections: "",
    body_after: None,
    expando: '$',
    defs: TS_DEFS,
    wrappers: JS_WRAPPERS,
    attach: &["comment", "decorator"],
    ctor_name: Some("constructor"),
};

static TSX: Spec = Spec {
    grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
    highlights: || {
        format!(
            "{}\n{}\n{}",
            tree_sitter_typescript::HIGHLIGHTS_QUERY,
            tree_sitter_javascript::JSX_HIGHLIGHT_QUERY,
            tree_sitter_javascript::HIGHLIGHT_QUERY
        )
    },
    injections: "",
    body_after: None,
    expando: '$',
    defs: TS_DEFS,
    wrappers: JS_WRAPPERS,
    attach: &["comment", "decorator"],
    ctor_name: Some("constructor"),
};

static JAVA: Spec = Spec {
    grammar: || tree_sitter_java::LANGUAGE.into(),
    highlights: || tree_sitter_java::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: '$',
    defs: &[
        ("class_declaration", named("class")),
        ("interface_declaration", named("interface")),
        ("annotation_type_declaration", named("interface")),
        ("enum_declaration", named("enum")),
        ("record_declaration", named("record")),
        ("method_declaration", FUNC),
        // `Class<?> value();` in an `@interface`.
        ("annotation_type_element_declaration", FUNC),
        ("constructor_declaration", CTOR),
        ("compact_constructor_declaration", CTOR),
        // `IDENTITY() { … }`: an enum constant with a body is an anonymous subclass, whose
        // methods are its own.
        ("enum_constant", with_body("class")),
    ],
    wrappers: &[],
    attach: &["line_comment", "block_comment"],
    ctor_name: None,
};

static C: Spec = Spec {
    grammar: || tree_sitter_c::LANGUAGE.into(),
    highlights: || tree_sitter_c::HIGHLIGHT_QUERY.into(),
    injections: "",
    body_after: None,
    expando: '𐀀',
    defs: C_DEFS,
    wrappers: &["type_definition"],
    attach: COMMENT,
    ctor_name: None,
};

static CPP: Spec = Spec {
    grammar: || tree_sitter_cpp::LANGUAGE.into(),
    highlights: || {
        format!(
            "{}\n{}",
            tree_sitter_cpp::HIGHLIGHT_QUERY,
            tree_sitter_c::HIGHLIGHT_QUERY
        )
    },
    injections: "",
    body_after: None,
    expando: '𐀀',
    defs: CPP_DEFS,
    wrappers: &["type_definition", "template_declaration"],
    attach: COMMENT,
    ctor_name: None,
};

static RUBY: Spec = Spec {
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    highlights: || tree_sitter_ruby::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("class", Rule::RubyConst { kind: "class" }),
        ("module", Rule::RubyConst { kind: "module" }),
        ("method", FUNC),
        ("singleton_method", Rule::RubySingleton),
    ],
    wrappers: &[],
    attach: COMMENT,
    ctor_name: Some("initialize"),
};

static CSHARP: Spec = Spec {
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    highlights: || tree_sitter_c_sharp::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("namespace_declaration", named("namespace")),
        ("file_scoped_namespace_declaration", Rule::FileScope),
        ("class_declaration", named("class")),
        ("struct_declaration", named("struct")),
        ("interface_declaration", named("interface")),
        ("enum_declaration", named("enum")),
        ("record_declaration", named("record")),
        ("record_struct_declaration", named("record")),
        ("method_declaration", FUNC),
        ("local_function_statement", FUNC),
        ("constructor_declaration", CTOR),
        ("destructor_declaration", Rule::Dtor { field: "name" }),
        ("operator_declaration", Rule::CsOperator),
        ("conversion_operator_declaration", Rule::CsOperator),
        ("delegate_declaration", named("type")),
    ],
    wrappers: &[],
    attach: &["comment", "attribute_list"],
    ctor_name: None,
};

static PHP: Spec = Spec {
    grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
    highlights: || tree_sitter_php::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("function_definition", FUNC),
        ("class_declaration", named("class")),
        ("interface_declaration", named("interface")),
        ("trait_declaration", named("trait")),
        ("enum_declaration", named("enum")),
        ("method_declaration", FUNC),
        ("namespace_definition", Rule::PhpNamespace),
    ],
    wrappers: &[],
    attach: &["comment", "attribute_list"],
    ctor_name: Some("__construct"),
};

static KOTLIN: Spec = Spec {
    grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    highlights: || include_str!("../queries/kotlin-highlights.scm").into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        (
            "class_declaration",
            Rule::Keyworded {
                field: "name",
                kind: "class",
                keywords: &[("interface", "interface")],
            },
        ),
        ("object_declaration", named("object")),
        (
            "companion_object",
            Rule::NamedOr {
                field: "name",
                default: "Companion",
                kind: "object",
            },
        ),
        ("function_declaration", FUNC),
        // `typealias Name = …`: the grammar calls the new name's field `type`.
        (
            "type_alias",
            Rule::Named {
                field: "type",
                kind: "type",
            },
        ),
    ],
    wrappers: &[],
    attach: &["line_comment", "block_comment", "annotation"],
    ctor_name: None,
};

static SWIFT: Spec = Spec {
    grammar: || tree_sitter_swift::LANGUAGE.into(),
    highlights: || tree_sitter_swift::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("class_declaration", Rule::SwiftType),
        ("protocol_declaration", named("interface")),
        ("function_declaration", FUNC),
        ("protocol_function_declaration", FUNC),
        (
            "init_declaration",
            Rule::Fixed {
                name: "init",
                kind: "constructor",
            },
        ),
        (
            "deinit_declaration",
            Rule::Fixed {
                name: "deinit",
                kind: "method",
            },
        ),
        (
            "subscript_declaration",
            Rule::Fixed {
                name: "subscript",
                kind: "method",
            },
        ),
        ("typealias_declaration", named("type")),
        ("associatedtype_declaration", named("type")),
    ],
    wrappers: &[],
    attach: &["comment", "multiline_comment", "attribute"],
    ctor_name: None,
};

static SHELL: Spec = Spec {
    grammar: || tree_sitter_bash::LANGUAGE.into(),
    highlights: || tree_sitter_bash::HIGHLIGHT_QUERY.into(),
    injections: "",
    body_after: None,
    expando: '$',
    defs: &[("function_definition", FUNC)],
    wrappers: &[],
    attach: COMMENT,
    ctor_name: None,
};

static LUA: Spec = Spec {
    grammar: || tree_sitter_lua::LANGUAGE.into(),
    highlights: || tree_sitter_lua::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: '$',
    defs: &[
        ("function_declaration", Rule::LuaFunction),
        ("function_definition", Rule::LuaAssigned),
    ],
    // `local f = function`, `M.f = function`, `key = function`: the statement is the
    // definition's range and signature.
    wrappers: &[
        "expression_list",
        "assignment_statement",
        "variable_declaration",
        "field",
    ],
    attach: COMMENT,
    ctor_name: None,
};

static SCALA: Spec = Spec {
    grammar: || tree_sitter_scala::LANGUAGE.into(),
    highlights: || tree_sitter_scala::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: '$',
    defs: &[
        ("class_definition", named("class")),
        ("object_definition", named("object")),
        ("package_object", named("object")),
        ("trait_definition", named("trait")),
        ("enum_definition", named("enum")),
        ("function_definition", FUNC),
        ("function_declaration", FUNC),
        ("type_definition", named("type")),
        ("given_definition", named("object")),
    ],
    wrappers: &[],
    attach: &["comment", "block_comment", "annotation"],
    ctor_name: None,
};

static DART: Spec = Spec {
    grammar: || tree_sitter_dart::LANGUAGE.into(),
    highlights: || tree_sitter_dart::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: Some("function_body"),
    expando: '$',
    defs: &[
        ("class_declaration", named("class")),
        ("mixin_declaration", named("mixin")),
        ("extension_declaration", named("extension")),
        ("extension_type_declaration", named("class")),
        ("enum_declaration", named("enum")),
        ("function_signature", FUNC),
        ("getter_signature", FUNC),
        // `bool operator [](int index)`: `operator[]`, a method.
        ("operator_signature", Rule::CsOperator),
        ("setter_signature", FUNC),
        ("constructor_signature", Rule::DartCtor),
        ("constant_constructor_signature", Rule::DartCtor),
        ("factory_constructor_signature", Rule::DartCtor),
        ("redirecting_factory_constructor_signature", Rule::DartCtor),
        (
            "type_alias",
            Rule::FirstChild {
                kinds: &["type_identifier"],
                kind: "type",
            },
        ),
    ],
    // A member's signature sits in a `method_signature` or `declaration`, its body beside it
    // in the same `member_declaration`.
    wrappers: &["method_signature", "declaration", "member_declaration"],
    attach: &["comment", "documentation_comment", "annotation"],
    ctor_name: None,
};

static R_LANG: Spec = Spec {
    grammar: || tree_sitter_r::LANGUAGE.into(),
    highlights: || tree_sitter_r::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[("binary_operator", Rule::RAssign)],
    wrappers: &[],
    attach: COMMENT,
    ctor_name: None,
};

const OBJC_DEFS: &[(&str, Rule)] = &[
    ("function_definition", Rule::CFunction),
    ("struct_specifier", Rule::CSpecifier { kind: "struct" }),
    ("union_specifier", Rule::CSpecifier { kind: "struct" }),
    ("enum_specifier", Rule::CSpecifier { kind: "enum" }),
    ("type_definition", Rule::CTypedef),
    ("preproc_function_def", named("macro")),
    (
        "class_interface",
        Rule::FirstChild {
            kinds: &["identifier"],
            kind: "class",
        },
    ),
    (
        "class_implementation",
        Rule::FirstChild {
            kinds: &["identifier"],
            kind: "class",
        },
    ),
    (
        "protocol_declaration",
        Rule::FirstChild {
            kinds: &["identifier"],
            kind: "interface",
        },
    ),
    ("method_declaration", Rule::ObjcMethod),
    ("method_definition", Rule::ObjcMethod),
];

static OBJC: Spec = Spec {
    grammar: || tree_sitter_objc::LANGUAGE.into(),
    highlights: || {
        format!(
            "{}\n{}",
            tree_sitter_objc::HIGHLIGHTS_QUERY,
            tree_sitter_c::HIGHLIGHT_QUERY
        )
    },
    injections: "",
    body_after: None,
    expando: '𐀀',
    defs: OBJC_DEFS,
    // An implementation's methods sit in `implementation_definition`s.
    wrappers: &["type_definition"],
    attach: COMMENT,
    ctor_name: None,
};

static ELIXIR: Spec = Spec {
    grammar: || tree_sitter_elixir::LANGUAGE.into(),
    highlights: || tree_sitter_elixir::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[("call", Rule::ElixirDef)],
    wrappers: &[],
    attach: COMMENT,
    ctor_name: None,
};

static HASKELL: Spec = Spec {
    grammar: || tree_sitter_haskell::LANGUAGE.into(),
    highlights: || tree_sitter_haskell::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        ("function", named("function")),
        ("bind", named("function")),
        ("data_type", named("type")),
        ("newtype", named("type")),
        ("type_synonym", named("type")),
        ("type_family", named("type")),
        ("class", named("class")),
    ],
    wrappers: &[],
    // A function's type signature stands above its equations and joins its chunk.
    attach: &["comment", "haddock", "signature"],
    ctor_name: None,
};

static ZIG: Spec = Spec {
    grammar: || tree_sitter_zig::LANGUAGE.into(),
    highlights: || tree_sitter_zig::HIGHLIGHTS_QUERY.into(),
    injections: "",
    body_after: None,
    expando: '_',
    defs: &[
        ("function_declaration", FUNC),
        ("variable_declaration", Rule::ZigContainer),
        (
            "test_declaration",
            Rule::FirstChild {
                kinds: &["string", "identifier"],
                kind: "test",
            },
        ),
    ],
    wrappers: &[],
    attach: &["comment"],
    ctor_name: None,
};

static JULIA: Spec = Spec {
    grammar: || tree_sitter_julia::LANGUAGE.into(),
    highlights: || include_str!("../queries/julia-highlights.scm").into(),
    injections: "",
    body_after: None,
    expando: 'µ',
    defs: &[
        (
            "function_definition",
            Rule::JuliaSignature { kind: "function" },
        ),
        ("macro_definition", Rule::JuliaSignature { kind: "macro" }),
        ("assignment", Rule::JuliaSignature { kind: "function" }),
        ("struct_definition", Rule::JuliaType { kind: "struct" }),
        ("abstract_definition", Rule::JuliaType { kind: "type" }),
        ("primitive_definition", Rule::JuliaType { kind: "type" }),
        ("module_definition", named("module")),
    ],
    wrappers: &[],
    attach: &["line_comment", "block_comment", "string_literal"],
    ctor_name: None,
};

/// The tables for a code language; `None` for Markdown and Text.
pub(crate) fn spec(language: Language) -> Option<&'static Spec> {
    Some(match language {
        Language::Rust => &RUST,
        Language::Python => &PYTHON,
        Language::Go => &GO,
        Language::JavaScript => &JAVASCRIPT,
        Language::TypeScript => &TYPESCRIPT,
        Language::Tsx => &TSX,
        Language::Java => &JAVA,
        Language::C => &C,
        Language::Cpp => &CPP,
        Language::CSharp => &CSHARP,
        Language::Ruby => &RUBY,
        Language::Php => &PHP,
        Language::Kotlin => &KOTLIN,
        Language::Swift => &SWIFT,
        Language::Shell => &SHELL,
        Language::Lua => &LUA,
        Language::Scala => &SCALA,
        Language::Dart => &DART,
        Language::R => &R_LANG,
        Language::ObjectiveC => &OBJC,
        Language::Elixir => &ELIXIR,
        Language::Haskell => &HASKELL,
        Language::Zig => &ZIG,
        Language::Julia => &JULIA,
        Language::Markdown
        | Language::Text
        | Language::Rst
        | Language::AsciiDoc
        | Language::Pdf
        | Language::Notebook => return None,
    })
}

/// Kinds of containers inside which a function is a method.
pub(crate) fn is_method_container(language: Language, kind: &str) -> bool {
    matches!(
        kind,
        "class"
            | "struct"
            | "enum"
            | "impl"
            | "trait"
            | "interface"
            | "record"
            | "object"
            | "extension"
            | "mixin"
    ) || (language == Language::Ruby && kind == "module")
}

/// Kinds that are function-like (their bodies are code, not declarations).
pub(crate) fn is_function_kind(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "constructor")
}

/// A definition recognised at a node, before ranges are worked out.
pub(crate) struct Found {
    pub name: String,
    pub kind: &'static str,
    /// A parent named by the definition itself (Go receiver, C++ `Class::method`), joined to
    /// the lexical parent.
    pub scope: Option<String>,
    /// This definition names the enclosing scope of the rest of the file.
    pub file_scope: bool,
}

/// What the walk knows about the enclosing definition.
pub(crate) struct Context<'a> {
    pub language: Language,
    pub parent_kind: Option<&'static str>,
    pub parent_name: Option<&'a str>,
}

/// Recognises a definition at `node`, if it is one.
pub(crate) fn classify(spec: &Spec, node: Node, src: &str, cx: &Context) -> Option<Found> {
    let kind = node.kind();
    let rule = spec.defs.iter().find(|(k, _)| *k == kind)?.1;
    let found = |name: Option<String>, kind: &'static str| {
        Some(Found {
            name: name?,
            kind,
            scope: None,
            file_scope: false,
        })
    };
    let field = |f: &str| node.child_by_field_name(f).and_then(|n| name_of(n, src));
    let in_container = cx
        .parent_kind
        .is_some_and(|k| is_method_container(cx.language, k));
    let in_function = cx.parent_kind.is_some_and(is_function_kind);
    match rule {
        Rule::Named { field: f, kind } => found(field(f), kind),
        Rule::WithBody { field: f, kind } => {
            node.child_by_field_name("body")?;
            found(field(f), kind)
        }
        Rule::Func { field: f } => {
            let name = field(f)?;
            let kind = function_kind(spec, cx, &name, None);
            found(Some(name), kind)
        }
        Rule::Ctor { field: f } => found(field(f), "constructor"),
        Rule::Dtor { field: f } => found(field(f).map(|n| format!("~{n}")), "method"),
        Rule::RustImpl => found(
            node.child_by_field_name("type")
                .and_then(|t| rust_type_name(t, src)),
            "impl",
        ),
        Rule::CFunction => {
            let (name, scope) = c_declarator_name(node, src)?;
            let kind = function_kind(spec, cx, &name, scope.as_deref());
            Some(Found {
                name,
                kind,
                scope,
                file_scope: false,
            })
        }
        Rule::CSpecifier { kind } => {
            node.child_by_field_name("body")?;
            let name = field("name").or_else(|| {
                let parent = node.parent().filter(|p| p.kind() == "type_definition")?;
                c_innermost_name(parent.child_by_field_name("declarator")?, src)
            });
            found(name, kind)
        }
        Rule::CTypedef => {
            let inline_body = node
                .child_by_field_name("type")
                .is_some_and(|t| t.child_by_field_name("body").is_some());
            if inline_body {
                return None; // the struct inside is the definition
            }
            found(
                c_innermost_name(node.child_by_field_name("declarator")?, src),
                "type",
            )
        }
        Rule::GoType => {
            let kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") => "struct",
                Some("interface_type") => "interface",
                _ => "type",
            };
            found(field("name"), kind)
        }
        Rule::GoMethod => {
            let receiver = node.child_by_field_name("receiver")?;
            let mut cursor = receiver.walk();
            let scope = receiver
                .named_children(&mut cursor)
                .find(|c| c.kind() == "parameter_declaration")
                .and_then(|p| p.child_by_field_name("type"))
                .and_then(|t| go_type_name(t, src));
            Some(Found {
                name: field("name")?,
                kind: "method",
                scope,
                file_scope: false,
            })
        }
        Rule::JsVar => js::declarator(node, src, in_function),
        Rule::JsField { field: f } => js::field(node, src, f),
        Rule::JsMethod => js::method(node, src, in_container, spec.ctor_name),
        Rule::JsExpr => js::expression(node, src),
        Rule::RubyConst { kind } => {
            let n = node.child_by_field_name("name")?;
            let n = if n.kind() == "scope_resolution" {
                n.child_by_field_name("name")?
            } else {
                n
            };
            found(name_of(n, src), kind)
        }
        Rule::RubySingleton => found(field("name"), "method"),
        Rule::FileScope => {
            let name = field("name")?;
            Some(Found {
                name,
                kind: "namespace",
                scope: None,
                file_scope: true,
            })
        }
        Rule::CsOperator => {
            let name = if kind == "conversion_operator_declaration" {
                format!("operator {}", field("type")?)
            } else {
                format!("operator{}", field("operator")?)
            };
            found(Some(name), "method")
        }
        Rule::Fixed { name, kind } => found(Some(name.to_string()), kind),
        Rule::NamedOr {
            field: f,
            default,
            kind,
        } => found(field(f).or_else(|| Some(default.to_string())), kind),
        Rule::Keyworded {
            field: f,
            kind,
            keywords,
        } => {
            let mut cursor = node.walk();
            let keyword = node
                .children(&mut cursor)
                .filter(|c| !c.is_named())
                .find_map(|c| keywords.iter().find(|(k, _)| *k == c.kind()));
            found(field(f), keyword.map_or(kind, |(_, k)| *k))
        }
        Rule::FirstChild { kinds, kind } => {
            let mut cursor = node.walk();
            let child = node
                .named_children(&mut cursor)
                .find(|c| kinds.contains(&c.kind()));
            found(child.and_then(|c| name_of(c, src)), kind)
        }
        Rule::DartCtor => {
            let mut cursor = node.walk();
            let last = node
                .named_children(&mut cursor)
                .take_while(|c| c.kind() != "formal_parameter_list")
                .filter(|c| c.kind() == "identifier")
                .last();
            found(last.and_then(|n| name_of(n, src)), "constructor")
        }
        Rule::SwiftType => {
            let declared = node
                .child_by_field_name("declaration_kind")
                .map_or("class", |k| k.kind());
            let kind = match declared {
                "struct" => "struct",
                "enum" => "enum",
                "extension" => "extension",
                _ => "class",
            };
            // `extension Array where Element: Equatable` is named `Array`.
            let name = field("name").map(|n| n.split('<').next().unwrap_or(&n).trim().to_string());
            found(name, kind)
        }
        Rule::ElixirDef => elixir_def(node, src),
        Rule::RAssign => {
            let operator = node.child_by_field_name("operator")?;
            if !matches!(operator.kind(), "<-" | "=" | "<<-")
                || node.child_by_field_name("rhs")?.kind() != "function_definition"
            {
                return None;
            }
            let name = name_of(node.child_by_field_name("lhs")?, src)?;
            let kind = function_kind(spec, cx, &name, None);
            found(Some(name), kind)
        }
        Rule::JuliaSignature { kind } => {
            let head = if node.kind() == "assignment" {
                // `f(x) = …` only where definitions stand, not `a[i] = f(x)` in a body.
                if in_function {
                    return None;
                }
                node.named_child(0)?
            } else {
                let mut cursor = node.walk();
                let signature = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "signature")?;
                signature.named_child(0)?
            };
            let name = julia_called_name(head, src)?;
            let kind = if kind == "macro" {
                kind
            } else {
                function_kind(spec, cx, &name, None)
            };
            found(Some(name), kind)
        }
        Rule::JuliaType { kind } => {
            let mut cursor = node.walk();
            let head = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "type_head")?;
            let mut at = head;
            for _ in 0..8 {
                if at.kind() == "identifier" {
                    return found(name_of(at, src), kind);
                }
                at = at.named_child(0)?;
            }
            None
        }
        Rule::ZigContainer => {
            let mut cursor = node.walk();
            let mut name = None;
            let mut kind = None;
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "identifier" if name.is_none() => name = name_of(child, src),
                    "struct_declaration" | "opaque_declaration" => kind = Some("struct"),
                    "union_declaration" => kind = Some("struct"),
                    "enum_declaration" => kind = Some("enum"),
                    // `const Error = error{ … }`: an error set is a type.
                    "error_set_declaration" => kind = Some("type"),
                    _ => {}
                }
            }
            found(name, kind?)
        }
        Rule::ObjcMethod => {
            // `- (id)initWithWidth:(double)w height:(double)h`: each keyword is an
            // `identifier` child before its `method_parameter`; a unary selector is one name.
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            let keywords: Vec<String> = children
                .iter()
                .filter(|c| c.kind() == "identifier")
                .filter_map(|c| name_of(*c, src))
                .collect();
            let takes_arguments = children.iter().any(|c| c.kind() == "method_parameter");
            let name = if takes_arguments {
                Some(keywords.iter().map(|k| format!("{k}:")).collect::<String>())
            } else {
                keywords.into_iter().next()
            };
            found(name.filter(|n| !n.is_empty()), "method")
        }
        Rule::LuaAssigned => {
            let parent = node.parent()?;
            let target = match parent.kind() {
                "field" => parent.child_by_field_name("name")?,
                "expression_list" => {
                    // The variable at the same place on the left of the `=`.
                    let mut cursor = parent.walk();
                    let at = parent
                        .named_children(&mut cursor)
                        .position(|c| c.id() == node.id())?;
                    let assignment = parent
                        .parent()
                        .filter(|p| p.kind() == "assignment_statement")?;
                    let mut cursor = assignment.walk();
                    let variables = assignment
                        .named_children(&mut cursor)
                        .find(|c| c.kind() == "variable_list")?;
                    let mut cursor = variables.walk();
                    let variable = variables
                        .children_by_field_name("name", &mut cursor)
                        .nth(at)?;
                    variable
                }
                _ => return None,
            };
            lua_named(spec, cx, target, src)
        }
        Rule::LuaFunction => {
            let target = node.child_by_field_name("name")?;
            lua_named(spec, cx, target, src)
        }
        Rule::PhpNamespace => {
            let name = field("name")?;
            let file_scope = node.child_by_field_name("body").is_none();
            Some(Found {
                name,
                kind: "namespace",
                scope: None,
                file_scope,
            })
        }
    }
}

/// Elixir: `defmodule A.B do`, `def f(x) when … do`, `defp f, do: …`; `None` for any other call.
fn elixir_def(node: Node, src: &str) -> Option<Found> {
    let target = node.child_by_field_name("target")?;
    let keyword = src.get(target.byte_range())?;
    let module = matches!(keyword, "defmodule" | "defprotocol" | "defimpl");
    let function = matches!(
        keyword,
        "def"
            | "defp"
            | "defmacro"
            | "defmacrop"
            | "defguard"
            | "defguardp"
            | "defdelegate"
            | "defn"
            | "defnp"
    );
    if !module && !function {
        return None;
    }
    let mut cursor = node.walk();
    let arguments = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "arguments")?;
    let first = arguments.named_child(0)?;
    let name = if module {
        name_of(first, src)?
    } else {
        // `f`, `f(x)`, `f(x) when guard`.
        let call = match first.kind() {
            "binary_operator" => first.child_by_field_name("left")?,
            _ => first,
        };
        let named = match call.kind() {
            "call" => call.child_by_field_name("target")?,
            _ => call,
        };
        if named.kind() != "identifier" {
            return None;
        }
        name_of(named, src)?
    };
    Some(Found {
        name,
        kind: if module { "module" } else { "function" },
        scope: None,
        file_scope: false,
    })
}

/// The name a Julia call head gives: `f(x)` → `f`, `Base.show(io, x)` → `show`, `f(x)::T`,
/// `f(x) where T`, `f{T}(x)` → `f`.
fn julia_called_name(head: Node, src: &str) -> Option<String> {
    let mut at = head;
    for _ in 0..8 {
        match at.kind() {
            "call_expression"
            | "typed_expression"
            | "where_expression"
            | "curly_expression"
            | "parametrized_type_expression" => at = at.named_child(0)?,
            "field_expression" => {
                let count = at.named_child_count();
                at = at.named_child(u32::try_from(count.checked_sub(1)?).ok()?)?;
            }
            "identifier" | "operator" => return name_of(at, src),
            _ => return None,
        }
    }
    None
}

/// A Lua function named by `target`: `f`, `M.f` (function `f` in `M`), `M:f` (method `f`).
fn lua_named(spec: &Spec, cx: &Context, target: Node, src: &str) -> Option<Found> {
    let (name, scope, kind) = match target.kind() {
        "dot_index_expression" => (
            target.child_by_field_name("field"),
            target.child_by_field_name("table"),
            "function",
        ),
        "method_index_expression" => (
            target.child_by_field_name("method"),
            target.child_by_field_name("table"),
            "method",
        ),
        _ => (Some(target), None, "function"),
    };
    let name = name_of(name?, src)?;
    let scope = scope.and_then(|t| name_of(t, src));
    let kind = if scope.is_some() {
        kind
    } else {
        function_kind(spec, cx, &name, None)
    };
    Some(Found {
        name,
        kind,
        scope,
        file_scope: false,
    })
}

/// `function`, `method` or `constructor` for a function-like definition.
fn function_kind(spec: &Spec, cx: &Context, name: &str, scope: Option<&str>) -> &'static str {
    let in_container = cx
        .parent_kind
        .is_some_and(|k| is_method_container(cx.language, k));
    // C++: a constructor carries its class's name (in the class, or as `Class::Class`).
    let class_name = scope
        .map(|s| s.rsplit('.').next().unwrap_or(s))
        .or(if in_container { cx.parent_name } else { None });
    if matches!(cx.language, Language::Cpp) && class_name == Some(name) {
        return "constructor";
    }
    if in_container && Some(name) == spec.ctor_name {
        return "constructor";
    }
    if in_container || scope.is_some() {
        "method"
    } else {
        "function"
    }
}

/// A node's text as a symbol name: one line, quotes stripped, capped; `None` when empty.
pub(crate) fn name_of(node: Node, src: &str) -> Option<String> {
    let text = src.get(node.byte_range())?.trim();
    // Quotes around a name (`'key': function`, R's `"%+%" <- function`) go; a quote that is
    // part of it (Haskell's `jsonAccum'`) stays.
    let text = ['"', '\'', '`']
        .iter()
        .find_map(|q| {
            text.strip_prefix(*q)
                .and_then(|t| t.strip_suffix(*q))
                .filter(|_| text.len() >= 2)
        })
        .unwrap_or(text);
    let first = text.lines().next()?.trim();
    if first.is_empty() {
        return None;
    }
    // A name whose template arguments go on past its first line (`formatter<std::vector<T>,`
    // / `Char>`) is read whole, its line breaks and indents one space each.
    let open = |c: char| first.chars().filter(|&x| x == c).count();
    if open('<') > open('>') && text.len() <= 400 {
        let whole = text.split_whitespace().collect::<Vec<_>>().join(" ");
        return Some(crate::cap(&whole, 200).to_string());
    }
    Some(crate::cap(first, 200).to_string())
}

/// `Foo` from `Foo`, `Foo<T>`, `a::b::Foo`, `&'a mut Foo<T>`.
fn rust_type_name(node: Node, src: &str) -> Option<String> {
    let mut node = node;
    for _ in 0..16 {
        node = match node.kind() {
            "generic_type" | "reference_type" | "pointer_type" => {
                node.child_by_field_name("type")?
            }
            "scoped_type_identifier" => node.child_by_field_name("name")?,
            _ => return name_of(node, src),
        };
    }
    None
}

/// `Store` from `Store`, `*Store`, `*Store[T]`, `pkg.Store`.
fn go_type_name(node: Node, src: &str) -> Option<String> {
    let mut node = node;
    for _ in 0..16 {
        node = match node.kind() {
            "pointer_type" | "parenthesized_type" => node.named_child(0)?,
            "generic_type" => node.child_by_field_name("type")?,
            "qualified_type" => node.child_by_field_name("name")?,
            _ => return name_of(node, src),
        };
    }
    None
}

/// The name at the bottom of a C declarator chain (`*foo`, `foo[3]`, `(*fp)(int)`).
fn c_innermost_name(node: Node, src: &str) -> Option<String> {
    c_name_from_declarator(node, src).map(|(name, _)| name)
}

/// The name (and `Class::`/`ns::` scope, dotted) of a C/C++ function definition.
fn c_declarator_name(def: Node, src: &str) -> Option<(String, Option<String>)> {
    c_name_from_declarator(def.child_by_field_name("declarator")?, src)
}

fn c_name_from_declarator(node: Node, src: &str) -> Option<(String, Option<String>)> {
    let mut node = node;
    let mut scopes: Vec<String> = Vec::new();
    for _ in 0..32 {
        match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "destructor_name"
            | "operator_name" | "primitive_type" => {
                let name = name_of(node, src)?;
                let scope = (!scopes.is_empty()).then(|| scopes.join("."));
                return Some((name, scope));
            }
            "qualified_identifier" => {
                if let Some(scope) = node
                    .child_by_field_name("scope")
                    .and_then(|s| name_of(s, src))
                {
                    // `Foo<T>::bar` → scope `Foo`; `a::b` namespaces → `a.b`.
                    let bare = scope
                        .split('<')
                        .next()
                        .unwrap_or(&scope)
                        .trim()
                        .replace("::", ".");
                    if !bare.is_empty() {
                        scopes.push(bare);
                    }
                }
                node = node.child_by_field_name("name")?;
            }
            "template_function" | "template_type" => node = node.child_by_field_name("name")?,
            // `operator bool() const`, `operator int*()`: named by what it converts to.
            "operator_cast" => {
                let mut inner = node.child_by_field_name("declarator")?;
                for _ in 0..8 {
                    if let Some(params) = inner.child_by_field_name("parameters") {
                        let text = src.get(node.start_byte()..params.start_byte())?;
                        let name = text.split_whitespace().collect::<Vec<_>>().join(" ");
                        let scope = (!scopes.is_empty()).then(|| scopes.join("."));
                        return Some((crate::cap(&name, 200).to_string(), scope));
                    }
                    // `&` and `&&` hold their declarator as an unnamed child.
                    inner = match inner.child_by_field_name("declarator") {
                        Some(d) => d,
                        None => {
                            let mut cursor = inner.walk();
                            let next = inner
                                .named_children(&mut cursor)
                                .find(|c| c.kind().ends_with("declarator"));
                            next?
                        }
                    };
                }
                return None;
            }
            _ => {
                node = match node.child_by_field_name("declarator") {
                    Some(d) => d,
                    None => {
                        let mut cursor = node.walk();
                        let next = node.named_children(&mut cursor).find(|c| {
                            c.kind().ends_with("declarator")
                                || matches!(
                                    c.kind(),
                                    "identifier"
                                        | "field_identifier"
                                        | "type_identifier"
                                        | "qualified_identifier"
                                        | "operator_name"
                                        | "destructor_name"
                                )
                        });
                        next?
                    }
                }
            }
        }
    }
    None
}
