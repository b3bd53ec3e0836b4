//! Naming rules that need more than a field: Elixir's definitions written as calls, Julia's
//! call heads, Lua's `M.f`/`M:f`, and the type and declarator chains of Rust, Go and C/C++.

use tree_sitter::Node;

use super::{function_kind, name_of, Context, Found, Spec};

/// Elixir: `defmodule A.B do`, `def f(x) when … do`, `defp f, do: …`; `None` for any other call.
pub(super) fn elixir_def(node: Node, src: &str) -> Option<Found> {
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
pub(super) fn julia_called_name(head: Node, src: &str) -> Option<String> {
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
pub(super) fn lua_named(spec: &Spec, cx: &Context, target: Node, src: &str) -> Option<Found> {
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

/// `Foo` from `Foo`, `Foo<T>`, `a::b::Foo`, `&'a mut Foo<T>`.
pub(super) fn rust_type_name(node: Node, src: &str) -> Option<String> {
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
pub(super) fn go_type_name(node: Node, src: &str) -> Option<String> {
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
pub(super) fn c_innermost_name(node: Node, src: &str) -> Option<String> {
    c_name_from_declarator(node, src).map(|(name, _)| name)
}

/// The name (and `Class::`/`ns::` scope, dotted) of a C/C++ function definition.
pub(super) fn c_declarator_name(def: Node, src: &str) -> Option<(String, Option<String>)> {
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
