; Syntax colours for Julia: tree-sitter-julia ships no highlight query, so quarry keeps this
; short one (keywords, literals, comments, names at their definitions and calls).

[
  "function" "end" "if" "elseif" "else" "for" "while" "return" "module" "struct" "mutable"
  "abstract" "primitive" "type" "macro" "begin" "let" "quote" "try" "catch" "finally" "do"
  "import" "using" "export" "const" "global" "local" "where"
] @keyword

[(break_statement) (continue_statement)] @keyword

[(line_comment) (block_comment)] @comment
[(string_literal) (character_literal) (command_literal)] @string
[(integer_literal) (float_literal)] @number
(boolean_literal) @constant.builtin

(signature (call_expression . (identifier) @function))
(call_expression . (identifier) @function)
(macro_identifier) @function.builtin
(struct_definition (type_head (identifier) @type))
(module_definition name: (identifier) @module)
