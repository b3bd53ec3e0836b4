//! Per-language knowledge: which grammar parses a language, which syntax-node kinds are
//! definitions (and what symbol kind they become), how each definition's name is found, which
//! nodes wrap a definition (`export`, decorators, templates), and which nodes attach to the
//! definition below them (comments, attributes).
//!
//! Everything language-specific lives here as data plus a few small name-finding helpers, so
//! the tree walk in `tree.rs` stays generic. JavaScript/TypeScript definitions written as
//! expressions (CommonJS, prototypes, object literals) are named in `js.rs`.

mod js;
mod names;
mod tables;

use names::{
    c_declarator_name, c_innermost_name, elixir_def, go_type_name, julia_called_name, lua_named,
    rust_type_name,
};
pub(crate) use tables::spec;

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

/// `function`, `method` or `constructor` for a function-like definition.
pub(super) fn function_kind(
    spec: &Spec,
    cx: &Context,
    name: &str,
    scope: Option<&str>,
) -> &'static str {
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
