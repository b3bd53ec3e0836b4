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
    /// `if`: (kind, then field, else field); its header is the node up to its `then` part.
    pub ifs: &'static [(&'static str, &'static str, &'static str)],
    /// Nodes an `else` field may hold that wrap the branch (`else_clause`).
    pub else_wrappers: &'static [&'static str],
    /// `elif` clauses: (kind, body field); an if of their own, the next clause after them (or,
    /// as Ruby's `elsif`, in their own `else` field).
    pub elifs: &'static [(&'static str, &'static str)],
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
    /// Statements that only wrap an expression, read as that expression when it is a branch
    /// or a loop (Rust's `if` and `loop` are expressions).
    pub expression_statements: &'static [&'static str],
}

static PYTHON: FlowSpec = FlowSpec {
    functions: &["function_definition", "lambda"],
    body: "body",
    parameters: &["parameters", "lambda_parameters"],
    blocks: &["block", "module"],
    ifs: &[("if_statement", "consequence", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &[("elif_clause", "consequence")],
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
    expression_statements: &[],
};

static GO: FlowSpec = FlowSpec {
    functions: &["function_declaration", "method_declaration", "func_literal"],
    body: "body",
    parameters: &["parameter_list"],
    blocks: &["block", "statement_list"],
    ifs: &[("if_statement", "consequence", "alternative")],
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
    expression_statements: &[],
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
    ifs: &[("if_statement", "consequence", "alternative")],
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
    expression_statements: &[],
};

static RUBY: FlowSpec = FlowSpec {
    functions: &["method", "singleton_method", "lambda", "do_block", "block"],
    body: "body",
    parameters: &["method_parameters", "lambda_parameters", "block_parameters"],
    blocks: &[
        "body_statement",
        "then",
        "do",
        "block_body",
        "begin",
        "ensure",
    ],
    ifs: &[
        ("if", "consequence", "alternative"),
        ("unless", "consequence", "alternative"),
        ("if_modifier", "body", ""),
        ("unless_modifier", "body", ""),
    ],
    else_wrappers: &["else"],
    elifs: &[("elsif", "consequence")],
    loops: &[
        ("while", "body"),
        ("until", "body"),
        ("for", "body"),
        ("while_modifier", "body"),
        ("until_modifier", "body"),
    ],
    returns: &["return"],
    breaks: &["break"],
    continues: &["next"],
    // `raise` is a method call to Ruby's grammar.
    raises: &[],
    tries: &[],
    handlers: &["rescue"],
    finallys: &["ensure"],
    assigns: &[
        ("assignment", "left"),
        ("operator_assignment", "left"),
        ("for", "pattern"),
    ],
    names: &["identifier"],
    expression_statements: &[],
};

static PHP: FlowSpec = FlowSpec {
    functions: &[
        "function_definition",
        "method_declaration",
        "anonymous_function",
        "arrow_function",
    ],
    body: "body",
    parameters: &["formal_parameters"],
    blocks: &["compound_statement", "colon_block"],
    ifs: &[("if_statement", "body", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &[("else_if_clause", "body")],
    loops: &[
        ("while_statement", "body"),
        ("for_statement", "body"),
        ("foreach_statement", "body"),
        ("do_statement", "body"),
    ],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &["throw_expression"],
    tries: &[("try_statement", "body")],
    handlers: &["catch_clause"],
    finallys: &["finally_clause"],
    assigns: &[
        ("assignment_expression", "left"),
        ("augmented_assignment_expression", "left"),
        ("update_expression", ""),
    ],
    names: &["variable_name"],
    expression_statements: &["expression_statement"],
};

static RUST: FlowSpec = FlowSpec {
    functions: &["function_item", "closure_expression"],
    body: "body",
    parameters: &["parameters", "closure_parameters"],
    blocks: &["block"],
    ifs: &[("if_expression", "consequence", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &[],
    loops: &[
        ("loop_expression", "body"),
        ("while_expression", "body"),
        ("for_expression", "body"),
    ],
    returns: &["return_expression"],
    breaks: &["break_expression"],
    continues: &["continue_expression"],
    raises: &[],
    tries: &[],
    handlers: &[],
    finallys: &[],
    assigns: &[
        ("let_declaration", "pattern"),
        ("assignment_expression", "left"),
        ("compound_assignment_expr", "left"),
        ("for_expression", "pattern"),
    ],
    names: &["identifier"],
    expression_statements: &["expression_statement"],
};

static JAVA: FlowSpec = FlowSpec {
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "lambda_expression",
    ],
    body: "body",
    parameters: &["formal_parameters"],
    blocks: &["block", "constructor_body"],
    ifs: &[("if_statement", "consequence", "alternative")],
    else_wrappers: &[],
    elifs: &[],
    loops: &[
        ("while_statement", "body"),
        ("for_statement", "body"),
        ("enhanced_for_statement", "body"),
        ("do_statement", "body"),
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
        ("enhanced_for_statement", "name"),
        ("update_expression", ""),
    ],
    names: &["identifier"],
    expression_statements: &[],
};

static C_FAMILY: FlowSpec = FlowSpec {
    functions: &["function_definition", "lambda_expression"],
    body: "body",
    parameters: &["parameter_list"],
    blocks: &["compound_statement"],
    ifs: &[("if_statement", "consequence", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &[],
    loops: &[
        ("while_statement", "body"),
        ("for_statement", "body"),
        ("for_range_loop", "body"),
        ("do_statement", "body"),
    ],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &["throw_statement"],
    tries: &[("try_statement", "body")],
    handlers: &["catch_clause"],
    finallys: &[],
    assigns: &[
        ("init_declarator", "declarator"),
        ("assignment_expression", "left"),
        ("update_expression", "argument"),
        ("for_range_loop", "declarator"),
    ],
    names: &["identifier"],
    expression_statements: &[],
};

static CSHARP: FlowSpec = FlowSpec {
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "local_function_statement",
        "lambda_expression",
    ],
    body: "body",
    parameters: &["parameter_list"],
    blocks: &["block"],
    ifs: &[("if_statement", "consequence", "alternative")],
    else_wrappers: &[],
    elifs: &[],
    loops: &[
        ("while_statement", "body"),
        ("for_statement", "body"),
        ("foreach_statement", "body"),
        ("do_statement", "body"),
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
        ("foreach_statement", "left"),
        ("postfix_unary_expression", ""),
        ("prefix_unary_expression", ""),
    ],
    names: &["identifier"],
    expression_statements: &[],
};

/// The flow table of `language`; `None` where quarry has none yet.
pub(crate) fn flow_spec(language: Language) -> Option<&'static FlowSpec> {
    Some(match language {
        Language::Python => &PYTHON,
        Language::Go => &GO,
        Language::JavaScript | Language::TypeScript | Language::Tsx => &JAVASCRIPT,
        Language::Rust => &RUST,
        Language::Java => &JAVA,
        Language::C | Language::Cpp | Language::ObjectiveC => &C_FAMILY,
        Language::CSharp => &CSHARP,
        Language::Ruby => &RUBY,
        Language::Php => &PHP,
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
