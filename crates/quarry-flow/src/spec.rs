//! Each language's statements as the flow layer reads them: which node kinds are functions,
//! branches, loops, jumps and handlers, which fields hold their parts, and which nodes assign.
//! One table per language, as the chunker keeps its definitions (quarry-chunk's
//! `languages/tables.rs`); the graph builder and the data flow are written once over it.

use quarry_core::Language;

/// A language's flow table.
pub(crate) struct FlowSpec {
    /// Function-like nodes and the field holding their body.
    pub functions: &'static [&'static str],
    pub body: &'static str,
    /// The node holding a function's parameters (its identifiers are defined at entry).
    pub parameters: &'static [&'static str],
    /// Nodes that hold a sequence of statements (a body).
    pub blocks: &'static [&'static str],
    /// `if`: (kind, condition field, then field, else field).
    pub ifs: &'static [(&'static str, &'static str, &'static str, &'static str)],
    /// Nodes an `else` field may hold that wrap the branch (`else_clause`, `elif_clause`):
    /// elif clauses are ifs themselves (condition, consequence, and the next clause after).
    pub else_wrappers: &'static [&'static str],
    pub elifs: &'static [&'static str],
    /// Loops: (kind, body field); the loop's header is the node up to its body.
    pub loops: &'static [(&'static str, &'static str)],
    pub returns: &'static [&'static str],
    pub breaks: &'static [&'static str],
    pub continues: &'static [&'static str],
    pub raises: &'static [&'static str],
    /// `try`: (kind, body field); its handlers and `finally` are the kinds below.
    pub tries: &'static [(&'static str, &'static str)],
    pub handlers: &'static [&'static str],
    pub finallys: &'static [&'static str],
    /// Assignments: (kind, field of what is assigned to).
    pub assigns: &'static [(&'static str, &'static str)],
    /// Name nodes (a variable is one of these by its text).
    pub names: &'static [&'static str],
}

static PYTHON: FlowSpec = FlowSpec {
    functions: &["function_definition", "lambda"],
    body: "body",
    parameters: &["parameters", "lambda_parameters"],
    blocks: &["block", "module"],
    ifs: &[("if_statement", "condition", "consequence", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &["elif_clause"],
    loops: &[("while_statement", "body"), ("for_statement", "body")],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &["raise_statement"],
    tries: &[("try_statement", "body")],
    handlers: &["except_clause", "except_group_clause"],
    finallys: &["finally_clause"],
    assigns: &[
        ("assignment", "left"),
        ("augmented_assignment", "left"),
        ("for_statement", "left"),
        ("named_expression", "name"),
    ],
    names: &["identifier"],
};

static GO: FlowSpec = FlowSpec {
    functions: &["function_declaration", "method_declaration", "func_literal"],
    body: "body",
    parameters: &["parameter_list"],
    blocks: &["block", "statement_list"],
    ifs: &[("if_statement", "condition", "consequence", "alternative")],
    else_wrappers: &[],
    elifs: &[],
    loops: &[("for_statement", "body")],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &[],
    tries: &[],
    handlers: &[],
    finallys: &[],
    assigns: &[
        ("assignment_statement", "left"),
        ("short_var_declaration", "left"),
        ("var_spec", "name"),
        ("inc_statement", ""),
        ("dec_statement", ""),
        ("range_clause", "left"),
    ],
    names: &["identifier"],
};

static JAVASCRIPT: FlowSpec = FlowSpec {
    functions: &[
        "function_declaration",
        "function_expression",
        "arrow_function",
        "method_definition",
        "generator_function_declaration",
    ],
    body: "body",
    parameters: &["formal_parameters"],
    blocks: &["statement_block", "program"],
    ifs: &[("if_statement", "condition", "consequence", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &[],
    loops: &[
        ("while_statement", "body"),
        ("do_statement", "body"),
        ("for_statement", "body"),
        ("for_in_statement", "body"),
    ],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &["throw_statement"],
    tries: &[("try_statement", "body")],
    handlers: &["catch_clause"],
    finallys: &["finally_clause"],
    assigns: &[
        ("variable_declarator", "name"),
        ("assignment_expression", "left"),
        ("augmented_assignment_expression", "left"),
        ("update_expression", "argument"),
        ("for_in_statement", "left"),
    ],
    names: &["identifier", "shorthand_property_identifier_pattern"],
};

/// The flow table of `language`; `None` where quarry has none yet.
pub(crate) fn flow_spec(language: Language) -> Option<&'static FlowSpec> {
    Some(match language {
        Language::Python => &PYTHON,
        Language::Go => &GO,
        Language::JavaScript | Language::TypeScript | Language::Tsx => &JAVASCRIPT,
        _ => return None,
    })
}

/// The languages with a flow table, for messages.
pub fn flow_languages() -> Vec<Language> {
    Language::ALL
        .into_iter()
        .filter(|l| flow_spec(*l).is_some())
        .collect()
}
