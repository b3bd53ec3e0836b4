//! Each parsed language's entry: its grammar, highlight query, definition node kinds and the
//! rule that names each, the nodes that wrap or attach to a definition. Adding a language is
//! a `Spec` here and its arm in [`spec`] (and its row in quarry-core's `LANGUAGES`).

use quarry_core::Language;

use super::{Rule, Spec};

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
    highlights: || include_str!("../../queries/kotlin-highlights.scm").into(),
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
    highlights: || include_str!("../../queries/julia-highlights.scm").into(),
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
