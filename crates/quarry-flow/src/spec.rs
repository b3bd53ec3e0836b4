//! Each language's statements as the flow layer reads them: which node kinds are functions,
//! branches, loops, jumps and handlers, which fields hold their parts, and which nodes assign.
//! One table per language, as the chunker keeps its definitions (quarry-chunk's
//! `languages/tables.rs`); the graph builder and the data flow are written once over it.

use quarry_core::Language;

mod later;

use later::{DART, JULIA, KOTLIN, LUA, R, SCALA, SHELL, SWIFT, ZIG};

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
    /// Branches on a value: (kind, field holding the cases or "" for the node itself, whether
    /// `break` leaves it).
    pub switches: &'static [(&'static str, &'static str, bool)],
    /// A switch's cases: (kind, field of its body or "" for its children after its labels,
    /// whether control falls off its end into the next case's body).
    pub cases: &'static [(&'static str, &'static str, bool)],
    /// Statements that pass control into the next case's body (Go's `fallthrough`).
    pub fallthroughs: &'static [&'static str],
    /// Loops that test after their body: (kind, body field).
    pub do_loops: &'static [(&'static str, &'static str)],
    /// The field of a loop's `else` (Python's: it runs when the loop ends without `break`).
    pub loop_else: &'static str,
    /// Statements that run their body once around a resource: (kind, body field), Python's
    /// `with`, C#'s `using` and `lock`.
    pub withs: &'static [(&'static str, &'static str)],
    /// `label: statement` (the target of a labelled `break` or `continue`).
    pub labeled: &'static [&'static str],
    /// Deferred calls (Go's `defer`): they run, last first, on the way out.
    pub defers: &'static [&'static str],
    /// Calls that do not return (`panic`, `os.Exit`, Ruby's `raise`), by the callee's text.
    pub raise_calls: &'static [&'static str],
    /// Expressions that may leave the function in the middle of a statement (Rust's `?`).
    pub early_returns: &'static [&'static str],
    /// Nodes under which every name is bound (match and case patterns), but for their guard.
    pub bindings: &'static [&'static str],
    /// Assignments written as operators: (kind, operator, field assigned), R's `x <- 1`.
    pub assign_operators: &'static [(&'static str, &'static str, &'static str)],
    /// Statements that raise unless their condition holds (`assert`).
    pub asserts: &'static [&'static str],
    /// Statements that jump by the keyword they start with (Swift's `return`, `break`,
    /// `continue` and `throw` are one kind).
    pub keyword_jumps: &'static [&'static str],
    /// Calls that jump (a shell's `return` and `break`, R's `return(x)` and `next`).
    pub jump_calls: &'static [(&'static str, Jump)],
    /// A loop's parts that are no statements of its body, where its body is its children
    /// (Julia's `for_binding`, Kotlin's loop variable).
    pub loop_headers: &'static [&'static str],
    /// Branches and loops whose test is written negated (`unless`, `until`): their true way
    /// is the test failing.
    pub negated: &'static [&'static str],
    /// Whether every handler catches whatever is raised (JavaScript's `catch`, which names
    /// no type); elsewhere a handler that names a type may let a raise pass.
    pub handlers_catch_all: bool,
}

/// The fields every table leaves empty unless it says otherwise.
const NONE: FlowSpec = FlowSpec {
    functions: &[],
    body: "body",
    parameters: &[],
    blocks: &[],
    ifs: &[],
    else_wrappers: &[],
    elifs: &[],
    loops: &[],
    returns: &[],
    breaks: &[],
    continues: &[],
    raises: &[],
    tries: &[],
    handlers: &[],
    finallys: &[],
    assigns: &[],
    names: &["identifier"],
    expression_statements: &[],
    switches: &[],
    cases: &[],
    fallthroughs: &[],
    do_loops: &[],
    loop_else: "",
    withs: &[],
    labeled: &[],
    defers: &[],
    raise_calls: &[],
    early_returns: &[],
    bindings: &[],
    asserts: &[],
    assign_operators: &[],
    keyword_jumps: &[],
    jump_calls: &[],
    loop_headers: &[],
    negated: &[],
    handlers_catch_all: false,
};

/// How a statement leaves the straight line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jump {
    Return,
    Raise,
    Break,
    Continue,
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
        // `with open(p) as f`, `except E as e`.
        ("as_pattern", "alias"),
        ("import_statement", "name"),
        ("import_from_statement", "name"),
    ],
    names: &["identifier"],
    expression_statements: &[],
    switches: &[("match_statement", "body", false)],
    cases: &[("case_clause", "consequence", false)],
    loop_else: "alternative",
    withs: &[("with_statement", "body")],
    bindings: &["case_pattern"],
    asserts: &["assert_statement"],
    ..NONE
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
        ("receive_statement", "left"),
        ("type_switch_statement", "alias"),
    ],
    names: &["identifier"],
    expression_statements: &[],
    switches: &[
        ("expression_switch_statement", "", true),
        ("type_switch_statement", "", true),
        ("select_statement", "", true),
    ],
    cases: &[
        ("expression_case", "", false),
        ("type_case", "", false),
        ("communication_case", "", false),
        ("default_case", "", false),
    ],
    fallthroughs: &["fallthrough_statement"],
    labeled: &["labeled_statement"],
    defers: &["defer_statement"],
    raise_calls: &["panic", "os.Exit", "log.Fatal", "log.Fatalf", "log.Fatalln"],
    ..NONE
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
    switches: &[("switch_statement", "body", true)],
    cases: &[("switch_case", "", true), ("switch_default", "", true)],
    do_loops: &[("do_statement", "body")],
    labeled: &["labeled_statement"],
    handlers_catch_all: true,
    ..NONE
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
    switches: &[("case", "", false), ("case_match", "", false)],
    cases: &[
        ("when", "body", false),
        ("in_clause", "body", false),
        ("else", "", false),
    ],
    raise_calls: &["raise", "fail", "exit", "abort"],
    negated: &["unless", "unless_modifier", "until", "until_modifier"],
    ..NONE
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
    switches: &[("switch_statement", "body", true)],
    cases: &[
        ("case_statement", "", true),
        ("default_statement", "", true),
    ],
    do_loops: &[("do_statement", "body")],
    raise_calls: &["exit", "die"],
    ..NONE
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
        // `if let Some(x) = …`, `while let …`.
        ("let_condition", "pattern"),
    ],
    names: &["identifier"],
    expression_statements: &["expression_statement"],
    switches: &[("match_expression", "body", false)],
    cases: &[("match_arm", "value", false)],
    raise_calls: &[
        "panic",
        "unreachable",
        "todo",
        "unimplemented",
        "std::process::exit",
        "process::exit",
    ],
    early_returns: &["try_expression"],
    bindings: &["match_pattern"],
    ..NONE
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
    ],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &["throw_statement"],
    tries: &[
        ("try_statement", "body"),
        ("try_with_resources_statement", "body"),
    ],
    handlers: &["catch_clause"],
    finallys: &["finally_clause"],
    assigns: &[
        ("variable_declarator", "name"),
        ("resource", "name"),
        ("catch_formal_parameter", "name"),
        ("assignment_expression", "left"),
        ("enhanced_for_statement", "name"),
        ("update_expression", ""),
    ],
    names: &["identifier"],
    expression_statements: &[],
    switches: &[
        ("switch_expression", "body", true),
        ("switch_statement", "body", true),
    ],
    cases: &[
        ("switch_block_statement_group", "", true),
        ("switch_rule", "", false),
    ],
    do_loops: &[("do_statement", "body")],
    labeled: &["labeled_statement"],
    raise_calls: &["System.exit"],
    asserts: &["assert_statement"],
    ..NONE
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
    switches: &[("switch_statement", "body", true)],
    cases: &[("case_statement", "", true)],
    do_loops: &[("do_statement", "body")],
    raise_calls: &["abort", "exit", "_exit"],
    ..NONE
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
    switches: &[("switch_statement", "body", true)],
    cases: &[("switch_section", "", false)],
    do_loops: &[("do_statement", "body")],
    withs: &[
        ("using_statement", "body"),
        ("lock_statement", "body"),
        ("fixed_statement", "body"),
    ],
    labeled: &["labeled_statement"],
    ..NONE
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
        Language::Kotlin => &KOTLIN,
        Language::Swift => &SWIFT,
        Language::Scala => &SCALA,
        Language::Lua => &LUA,
        Language::R => &R,
        Language::Dart => &DART,
        Language::Julia => &JULIA,
        Language::Shell => &SHELL,
        Language::Zig => &ZIG,
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
