; Syntax colours for Kotlin: tree-sitter-kotlin-ng ships no highlight query, so quarry keeps
; this short one (keywords, literals, comments, names at their definitions and calls).

[
  "abstract" "actual" "annotation" "as" "by" "catch" "class" "companion" "const" "constructor"
  "crossinline" "data" "do" "else" "enum" "expect" "external" "final" "finally" "for" "fun"
  "get" "if" "import" "in" "infix" "init" "inline" "inner" "interface" "internal" "is"
  "lateinit" "noinline" "object" "open" "operator" "out" "override" "package" "private"
  "protected" "public" "return" "sealed" "set" "super" "suspend" "tailrec" "this" "throw"
  "try" "typealias" "val" "value" "var" "vararg" "when" "where" "while"
] @keyword

[(line_comment) (block_comment)] @comment
[(string_literal) (multiline_string_literal) (character_literal)] @string
[(number_literal) (float_literal)] @number
(annotation) @attribute

(class_declaration name: (identifier) @type)
(object_declaration name: (identifier) @type)
(type_alias type: (identifier) @type)
(user_type (identifier) @type)
(function_declaration name: (identifier) @function)
(call_expression (identifier) @function)
(call_expression (navigation_expression (identifier) @function.method .))
