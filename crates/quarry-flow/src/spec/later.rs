//! The flow tables of the languages quarry parses since [29] (Kotlin, Swift, Scala, Lua, R,
//! Dart, Julia, Shell, Zig): grammars that often name a statement's parts by position, not by
//! field (`""` fields below, read by `Builder::body_of` and `if_parts`), and jump by keyword
//! (Swift) or by call (a shell's `return`, R's `return(x)`).

use super::{FlowSpec, Jump, NONE};

pub(super) static KOTLIN: FlowSpec = FlowSpec {
    functions: &[
        "function_declaration",
        "anonymous_function",
        "lambda_literal",
        "secondary_constructor",
        "getter",
        "setter",
    ],
    body: "",
    parameters: &["function_value_parameters", "lambda_parameters"],
    blocks: &[
        "block",
        "function_body",
        "statements",
        "control_structure_body",
    ],
    ifs: &[("if_expression", "", "")],
    loops: &[("for_statement", ""), ("while_statement", "")],
    do_loops: &[("do_while_statement", "")],
    returns: &["return_expression"],
    raises: &["throw_expression"],
    keyword_jumps: &["jump_expression"],
    // `if (done) break` reads its jump as a name.
    jump_calls: &[("break", Jump::Break), ("continue", Jump::Continue)],
    tries: &[("try_expression", "")],
    handlers: &["catch_block"],
    finallys: &["finally_block"],
    switches: &[("when_expression", "", false)],
    cases: &[("when_entry", "", false)],
    assigns: &[
        ("assignment", "left"),
        ("variable_declaration", "@first"),
        ("property_declaration", "@first"),
    ],
    loop_headers: &["variable_declaration", "multi_variable_declaration"],
    labeled: &["labeled_expression"],
    raise_calls: &["error", "TODO", "exitProcess"],
    ..NONE
};

pub(super) static SWIFT: FlowSpec = FlowSpec {
    functions: &[
        "function_declaration",
        "lambda_literal",
        "init_declaration",
        "deinit_declaration",
    ],
    parameters: &["parameter", "lambda_function_type_parameters"],
    blocks: &["function_body", "statements"],
    ifs: &[("if_statement", "", ""), ("guard_statement", "", "")],
    loops: &[("for_statement", ""), ("while_statement", "")],
    do_loops: &[("repeat_while_statement", "")],
    keyword_jumps: &["control_transfer_statement"],
    tries: &[("do_statement", "")],
    handlers: &["catch_block"],
    switches: &[("switch_statement", "", true)],
    cases: &[("switch_entry", "", false)],
    assigns: &[
        ("assignment", "target"),
        ("property_declaration", "name"),
        ("for_statement", "item"),
    ],
    names: &["simple_identifier"],
    labeled: &["labeled_statement"],
    raise_calls: &["fatalError", "preconditionFailure", "exit", "abort"],
    ..NONE
};

pub(super) static SCALA: FlowSpec = FlowSpec {
    functions: &["function_definition", "lambda_expression"],
    parameters: &["parameters", "bindings"],
    blocks: &["block", "indented_block"],
    ifs: &[("if_expression", "consequence", "alternative")],
    loops: &[("while_expression", "body"), ("for_expression", "body")],
    do_loops: &[("do_while_expression", "body")],
    returns: &["return_expression"],
    raises: &["throw_expression"],
    tries: &[("try_expression", "body")],
    handlers: &["catch_clause"],
    finallys: &["finally_clause"],
    switches: &[("match_expression", "body", false)],
    cases: &[("case_clause", "body", false)],
    assigns: &[
        ("val_definition", "pattern"),
        ("var_definition", "pattern"),
        ("assignment_expression", "left"),
        ("enumerator", "@first"),
    ],
    raise_calls: &["sys.exit", "???"],
    ..NONE
};

pub(super) static LUA: FlowSpec = FlowSpec {
    functions: &["function_declaration", "function_definition"],
    parameters: &["parameters"],
    blocks: &["block", "chunk"],
    ifs: &[("if_statement", "consequence", "alternative")],
    else_wrappers: &["else_statement"],
    elifs: &[("elseif_statement", "consequence")],
    loops: &[("while_statement", "body"), ("for_statement", "body")],
    do_loops: &[("repeat_statement", "body")],
    negated: &["repeat_statement"],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    raise_calls: &["error", "os.exit"],
    assigns: &[
        ("variable_list", "name"),
        ("for_numeric_clause", "name"),
        ("for_generic_clause", "@first"),
    ],
    ..NONE
};

pub(super) static R: FlowSpec = FlowSpec {
    functions: &["function_definition"],
    parameters: &["parameters"],
    blocks: &["braced_expression", "program"],
    ifs: &[("if_statement", "consequence", "alternative")],
    loops: &[
        ("for_statement", "body"),
        ("while_statement", "body"),
        ("repeat_statement", "body"),
    ],
    breaks: &["break"],
    continues: &["next"],
    raise_calls: &["stop", "quit", "q"],
    jump_calls: &[("return", Jump::Return), ("invisible", Jump::Return)],
    assigns: &[("for_statement", "variable")],
    assign_operators: &[
        ("binary_operator", "<-", "lhs"),
        ("binary_operator", "<<-", "lhs"),
        ("binary_operator", "=", "lhs"),
        ("binary_operator", "->", "rhs"),
    ],
    ..NONE
};

pub(super) static DART: FlowSpec = FlowSpec {
    functions: &[
        "function_declaration",
        "method_declaration",
        "function_expression",
        "local_function_declaration",
    ],
    parameters: &[
        "formal_parameter_list",
        "function_signature",
        "method_signature",
    ],
    blocks: &["block", "function_body", "function_expression_body"],
    ifs: &[("if_statement", "consequence", "alternative")],
    loops: &[("while_statement", "body"), ("for_statement", "body")],
    do_loops: &[("do_statement", "body")],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    raises: &["throw_expression", "rethrow_expression"],
    expression_statements: &["expression_statement"],
    tries: &[("try_statement", "body")],
    handlers: &["catch_clause"],
    finallys: &["finally_clause"],
    switches: &[("switch_statement", "body", true)],
    cases: &[
        ("switch_statement_case", "", false),
        ("switch_statement_default", "", false),
    ],
    assigns: &[
        ("initialized_variable_declaration", "name"),
        ("assignment_expression", "left"),
    ],
    labeled: &["labeled_statement"],
    ..NONE
};

pub(super) static JULIA: FlowSpec = FlowSpec {
    functions: &[
        "function_definition",
        "do_clause",
        "arrow_function_expression",
    ],
    body: "",
    parameters: &["signature", "argument_list"],
    blocks: &["block", "compound_statement"],
    ifs: &[("if_statement", "", "alternative")],
    else_wrappers: &["else_clause"],
    elifs: &[("elseif_clause", "")],
    loops: &[("for_statement", ""), ("while_statement", "")],
    loop_headers: &["for_binding"],
    returns: &["return_statement"],
    breaks: &["break_statement"],
    continues: &["continue_statement"],
    tries: &[("try_statement", "")],
    handlers: &["catch_clause"],
    finallys: &["finally_clause"],
    raise_calls: &["throw", "error", "rethrow", "exit"],
    assigns: &[
        ("assignment", "@first"),
        ("compound_assignment_expression", "@first"),
        ("for_binding", "@first"),
    ],
    ..NONE
};

pub(super) static SHELL: FlowSpec = FlowSpec {
    functions: &["function_definition"],
    blocks: &["compound_statement", "do_group", "program", "subshell"],
    ifs: &[("if_statement", "", "")],
    else_wrappers: &["else_clause"],
    elifs: &[("elif_clause", "")],
    loops: &[
        ("while_statement", "body"),
        ("for_statement", "body"),
        ("c_style_for_statement", "body"),
    ],
    switches: &[("case_statement", "", false)],
    cases: &[("case_item", "", false)],
    raise_calls: &["exit"],
    jump_calls: &[
        ("return", Jump::Return),
        ("break", Jump::Break),
        ("continue", Jump::Continue),
    ],
    assigns: &[
        ("variable_assignment", "name"),
        ("for_statement", "variable"),
    ],
    names: &["variable_name"],
    ..NONE
};

pub(super) static ZIG: FlowSpec = FlowSpec {
    functions: &["function_declaration"],
    parameters: &["parameters"],
    blocks: &["block", "block_expression"],
    ifs: &[("if_statement", "body", "")],
    else_wrappers: &["else_clause"],
    loops: &[("while_statement", "body"), ("for_statement", "body")],
    labeled: &["labeled_statement"],
    returns: &["return_expression"],
    breaks: &["break_expression"],
    continues: &["continue_expression"],
    expression_statements: &["expression_statement"],
    early_returns: &["try_expression"],
    raise_calls: &["@panic", "unreachable"],
    assigns: &[
        ("assignment_expression", "left"),
        ("variable_declaration", "@first"),
        ("payload", ""),
    ],
    ..NONE
};
