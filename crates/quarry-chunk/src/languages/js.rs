//! JavaScript/TypeScript definitions, including those written as expressions: CommonJS and
//! prototype code defines most of its functions by assignment, call argument or object
//! literal rather than by declaration, so a table of declaration kinds alone misses them.
//!
//! Each rule starts at the function (or class) node and names it from where it stands, the
//! way Universal Ctags does:
//! - `obj.m = function …` (and `= () => …`): `m`, parent `obj` (`a.b.m`: parent `a.b`);
//!   `X.prototype.m = …`: a method `m` of `X`; `this.m = …`: a method of the enclosing
//!   definition; `exports.m = …` and `module.exports.m = …` like any member;
//!   `module.exports = function name` takes the function's own name (`exports`, parent
//!   `module`, when it has none); `a = function` and `a['m'] = function` are `a` and `m`.
//! - An object literal's function members (`key: function`, `key() {}`, `key: () => …`) are
//!   methods when the object is bound to a name (`const locale = {…}`, `X.prototype = {…}`,
//!   `module.exports = {…}`, a key of such an object: parent `locale`, `X`, `module.exports`,
//!   `outer.key`) or is `export default`ed or returned (parent: the enclosing definition).
//! - Any other named function expression (a call argument such as
//!   `defineGetter(req, 'host', function host(){})`, a returned `function wrap()`, a member of
//!   an object passed as an argument) is a function by its own name. Anonymous ones are not
//!   definitions: there is nothing to call them by.
//!
//! Locals: a function written with the `function` keyword (or method shorthand) and bound to
//! a name is a definition at any depth, as ctags has it (`var app = function(req, res)` inside
//! `createApplication`, `proto.parse = function` inside a plugin's factory). An arrow function
//! or class is module structure only outside function bodies: bound to a variable, outside
//! named functions (the rule declarations always had); bound to a member or key, outside any
//! function at all, since inside one it is a closure or a stub (`instance.utcOffset = () => 0`
//! in a test callback). ctags tags no member or key arrows at all.

use super::{name_of, Found};
use tree_sitter::Node;

/// Nodes looked through between a value and what it is bound to.
const TRANSPARENT: &[&str] = &[
    "parenthesized_expression",
    "as_expression",
    "satisfies_expression",
];

/// Objects nested in objects are followed this deep for their name.
const MAX_OBJECT_DEPTH: usize = 8;

fn found(name: String, kind: &'static str, scope: Option<String>) -> Option<Found> {
    Some(Found {
        name,
        kind,
        scope,
        file_scope: false,
    })
}

/// The node a value is bound by, and the child of it the value sits in, looking through
/// parentheses and type assertions.
fn binding_site(node: Node) -> Option<(Node, Node)> {
    let mut child = node;
    let mut parent = node.parent()?;
    while TRANSPARENT.contains(&parent.kind()) {
        child = parent;
        parent = parent.parent()?;
    }
    Some((parent, child))
}

fn is_field(site: Node, field: &str, child: Node) -> bool {
    site.child_by_field_name(field) == Some(child)
}

/// `variable_declarator` whose value is a function or class expression.
pub(super) fn declarator(node: Node, src: &str, in_function: bool) -> Option<Found> {
    let name_node = node
        .child_by_field_name("name")
        .filter(|n| n.kind() == "identifier")?;
    let kind = match node.child_by_field_name("value")?.kind() {
        "function_expression" | "function" | "generator_function" => "function",
        "arrow_function" if !in_function => "function",
        "class" if !in_function => "class",
        _ => return None,
    };
    found(name_of(name_node, src)?, kind, None)
}

/// A class field whose value is a function (`handler = () => {}`): a method.
pub(super) fn field(node: Node, src: &str, field: &str) -> Option<Found> {
    let value = node.child_by_field_name("value")?;
    if !matches!(
        value.kind(),
        "arrow_function" | "function_expression" | "function"
    ) {
        return None;
    }
    found(
        name_of(node.child_by_field_name(field)?, src)?,
        "method",
        None,
    )
}

/// `method_definition`: in a class body (a constructor when named `constructor` inside a
/// class), or in an object literal bound to a name, exported or returned.
pub(super) fn method(
    node: Node,
    src: &str,
    in_container: bool,
    ctor: Option<&str>,
) -> Option<Found> {
    let name = name_of(node.child_by_field_name("name")?, src)?;
    let parent = node.parent()?;
    match parent.kind() {
        "class_body" => {
            let kind = if in_container && Some(name.as_str()) == ctor {
                "constructor"
            } else {
                "method"
            };
            found(name, kind, None)
        }
        "object" => found(name, "method", object_scope(parent, src, 0)?),
        _ => None,
    }
}

/// A function, arrow function or class expression, named by what it is bound to (or by its
/// own name). Declarators and class fields have their own rules.
pub(super) fn expression(node: Node, src: &str) -> Option<Found> {
    if !node.is_named() {
        return None; // the `class` keyword shares the class expression's kind
    }
    let is_class = node.kind() == "class";
    let keyword = !is_class && node.kind() != "arrow_function";
    // An arrow or class bound to a member or key inside any function, named or not, is a
    // closure or a stub (`instance.utcOffset = () => 0` in a test), not structure.
    let bound_ok = keyword || !inside_function(node);
    let own = node
        .child_by_field_name("name")
        .and_then(|n| name_of(n, src));
    let (fn_kind, member_kind) = if is_class {
        ("class", "class")
    } else {
        ("function", "method")
    };
    let by_own_name = || found(own.clone()?, fn_kind, None);
    let (site, child) = binding_site(node)?;
    match site.kind() {
        "variable_declarator" | "field_definition" | "public_field_definition" => None,
        "assignment_expression" if is_field(site, "right", child) => {
            if !bound_ok {
                return by_own_name();
            }
            let left = site.child_by_field_name("left")?;
            match left.kind() {
                "identifier" => found(name_of(left, src)?, fn_kind, None),
                "member_expression" | "subscript_expression" => {
                    let Some(name) = member_name(left, src) else {
                        return by_own_name();
                    };
                    let object = left.child_by_field_name("object")?;
                    let path = dotted(object, src);
                    if path.as_deref() == Some(&["module".to_string()][..]) && name == "exports" {
                        // `module.exports = function name` is `name`.
                        return match own {
                            Some(own) => found(own, fn_kind, None),
                            None => found(name, fn_kind, Some("module".into())),
                        };
                    }
                    let (scope, is_member) = owner(path);
                    found(name, if is_member { member_kind } else { fn_kind }, scope)
                }
                _ => by_own_name(),
            }
        }
        "pair" if is_field(site, "value", child) => {
            let object = site.parent().filter(|o| o.kind() == "object");
            let scope = object.and_then(|o| object_scope(o, src, 0));
            let key = key_name(site, src);
            match (scope, key) {
                (Some(scope), Some(key)) if bound_ok => found(key, member_kind, scope),
                _ => by_own_name(),
            }
        }
        _ => by_own_name(),
    }
}

/// A pair's key as a name: `key`, `'key'`; not `[computed]` or `42`.
fn key_name(pair: Node, src: &str) -> Option<String> {
    let key = pair.child_by_field_name("key")?;
    match key.kind() {
        "property_identifier" | "private_property_identifier" | "string" => name_of(key, src),
        _ => None,
    }
}

/// Whether `node` is inside a function's body (or parameters), anonymous ones included.
fn inside_function(node: Node) -> bool {
    let mut up = node.parent();
    while let Some(n) = up {
        if matches!(
            n.kind(),
            "function_expression"
                | "function"
                | "arrow_function"
                | "function_declaration"
                | "generator_function"
                | "generator_function_declaration"
                | "method_definition"
        ) && n.is_named()
        {
            return true;
        }
        up = n.parent();
    }
    false
}

/// `m` of `obj.m`, `obj['m']`; `None` for a computed subscript (`obj[name]`).
fn member_name(left: Node, src: &str) -> Option<String> {
    let name = match left.kind() {
        "member_expression" => left.child_by_field_name("property")?,
        _ => left
            .child_by_field_name("index")
            .filter(|i| i.kind() == "string")?,
    };
    name_of(name, src).filter(|n| !n.is_empty())
}

/// `a.b.c` as its parts, when it is a plain path of names (`this` included).
fn dotted(node: Node, src: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut node = node;
    for _ in 0..16 {
        match node.kind() {
            "identifier" | "this" | "property_identifier" => {
                parts.push(name_of(node, src)?);
                parts.reverse();
                return Some(parts);
            }
            "member_expression" => {
                parts.push(name_of(node.child_by_field_name("property")?, src)?);
                node = node.child_by_field_name("object")?;
            }
            _ => return None,
        }
    }
    None
}

/// The parent a member assigned to `path` gets, and whether it is a method: `X.prototype` →
/// `X`, a method; `this` → the enclosing definition (no explicit parent), a method; `a.b` →
/// `a.b`; an object that is no plain path (`f().m = …`) → none.
fn owner(path: Option<Vec<String>>) -> (Option<String>, bool) {
    let Some(mut path) = path else {
        return (None, false);
    };
    let mut is_member = false;
    if path.first().map(String::as_str) == Some("this") {
        path.remove(0);
        is_member = true;
    }
    if path.len() >= 2 && path.last().map(String::as_str) == Some("prototype") {
        path.pop();
        is_member = true;
    }
    ((!path.is_empty()).then(|| path.join(".")), is_member)
}

/// Whether an object literal's function members are definitions, and under which parent:
/// `Some(Some(name))` when it is bound to a name, `Some(None)` when exported or returned,
/// `None` otherwise (an argument, an element, an operand).
fn object_scope(object: Node, src: &str, depth: usize) -> Option<Option<String>> {
    if depth > MAX_OBJECT_DEPTH {
        return None;
    }
    let (site, child) = binding_site(object)?;
    match site.kind() {
        "variable_declarator" if is_field(site, "value", child) => {
            let name = site
                .child_by_field_name("name")
                .filter(|n| n.kind() == "identifier")?;
            Some(Some(name_of(name, src)?))
        }
        "assignment_expression" if is_field(site, "right", child) => {
            let left = site.child_by_field_name("left")?;
            match left.kind() {
                "identifier" | "member_expression" => Some(owner(dotted(left, src)).0),
                _ => Some(None),
            }
        }
        "export_statement" | "return_statement" => Some(None),
        "pair" if is_field(site, "value", child) => {
            let outer = site.parent().filter(|o| o.kind() == "object")?;
            let scope = object_scope(outer, src, depth + 1)?;
            let key = key_name(site, src)?;
            Some(Some(match scope {
                Some(scope) => format!("{scope}.{key}"),
                None => key,
            }))
        }
        _ => None,
    }
}
