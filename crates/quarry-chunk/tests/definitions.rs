//! Definitions that a table of declaration kinds misses: JavaScript/TypeScript functions
//! written as expressions (CommonJS, prototypes, object literals), C++ headers named `.h`,
//! and the C/C++/C#/Java shapes the grammar tables needed help with. Each case is real code
//! of the shape Universal Ctags tags, with the names, kinds, parents and lines quarry gives.

mod common;

use common::{chunk_checked, chunks, owned_symbols, symbols, unmerged};
use quarry_chunk::ChunkOptions;
use quarry_core::Language;

/// CommonJS and prototype code defines its functions by assignment, call argument and object
/// literal; each is a definition named the way Universal Ctags names it, with the object as
/// its parent, and each is a chunk boundary.
#[test]
fn javascript_expression_definitions() {
    let text = r#"'use strict';

var app = exports = module.exports = {};

/**
 * Use a middleware.
 */
app.use = function use(fn) {
  var self = this;
  return self;
};

View.prototype.lookup = function lookup(name) {
  return name;
};

exports.html = function(req, res){
  res.send('<p>html</p>');
};

defineGetter(req, 'host', function host(){
  return this.get('Host');
});

const locale = {
  name: 'bn',
  preparse(string) {
    return string;
  },
  ordinal: n => `${n}`,
};

utils.inherits(AxiosError, Error, {
  toJSON: function toJSON() {
    return {};
  }
});

function createApplication() {
  var app = function(req, res, next) {
    app.handle(req, res, next);
  };
  app.init = function () {};
  const local = () => 1;
  return app;
}

describe('res', function () {
  it('works', function () {
    res.send = () => 'stub';
    server.on('error', function onError(err) {});
  });
});

module.exports = function renderFile(fileName, options, callback) {
  callback(null, fileName);
};
"#;
    let fc = chunk_checked(Language::JavaScript, text, &unmerged(10));
    assert_eq!(
        symbols(&fc),
        owned_symbols(&[
            // `obj.m = function name`: the property, parent `obj`.
            ("app.use", "function", 8, 11),
            // `X.prototype.m = function`: a method of `X`.
            ("View.lookup", "method", 13, 15),
            ("exports.html", "function", 17, 19),
            // A named function expression passed as an argument: its own name.
            ("host", "function", 21, 23),
            // Function members of an object literal bound to a name.
            ("locale.preparse", "method", 27, 29),
            ("locale.ordinal", "method", 30, 30),
            // … and of one passed as an argument, when named.
            ("toJSON", "function", 34, 36),
            ("createApplication", "function", 39, 46),
            // `function` values bound to names are definitions inside functions too; the
            // arrow `local` is a closure and is not.
            ("createApplication.app", "function", 40, 42),
            ("createApplication.app.init", "function", 43, 43),
            // In anonymous test callbacks: the named callback is, the stubbed arrow is not.
            ("onError", "function", 51, 51),
            // `module.exports = function name`: the function's own name.
            ("renderFile", "function", 55, 57),
        ])
    );
    let get = |name: &str| fc.symbols.iter().find(|s| s.name == name).unwrap();
    assert_eq!(get("use").parent.as_deref(), Some("app"));
    assert_eq!(get("lookup").parent.as_deref(), Some("View"));
    assert_eq!(get("preparse").parent.as_deref(), Some("locale"));
    assert_eq!(get("host").parent, None);
    assert_eq!(
        get("use").signature.as_deref(),
        Some("app.use = function use(fn) {")
    );
    assert_eq!(
        chunks(&fc),
        [
            (1, 3, None, "module"),
            // The doc comment joins the definition's chunk.
            (5, 11, Some("app.use"), "function"),
            (13, 15, Some("View.lookup"), "method"),
            (17, 19, Some("exports.html"), "function"),
            (21, 23, Some("host"), "function"),
            (25, 26, None, "module"),
            (27, 29, Some("locale.preparse"), "method"),
            (30, 30, Some("locale.ordinal"), "method"),
            (31, 33, None, "module"),
            (34, 37, Some("toJSON"), "function"),
            (39, 46, Some("createApplication"), "function"),
            (48, 50, None, "module"),
            (51, 53, Some("onError"), "function"),
            (55, 57, Some("renderFile"), "function"),
        ]
    );
    assert_eq!(
        quarry_chunk::file_symbols(Language::JavaScript, text),
        fc.symbols
    );
}

/// Object literals: members of `X.prototype = {…}` are methods of `X`, nested objects name
/// their members by the key path, returned objects' members belong to the function;
/// `this.m = function` in a constructor function is its method; subscripts with a string key
/// name the function, computed ones leave it to its own name.
#[test]
fn javascript_object_literals_prototypes_and_subscripts() {
    let text = r#"function Cache(limit) {
  this.limit = limit;
  this.clear = function () {
    this.map = {};
  };
}

Cache.prototype = {
  get: function (key) {
    return this.map[key];
  },
  set(key, value) {
    this.map[key] = value;
  },
};

module.exports = {
  methods: {
    show(req) {},
  },
  helpers: [function inArray() {}],
};

export function createStore() {
  return {
    dispatch(action) {},
    subscribe: function (listener) {},
  };
}

validators[type] = function validator(value) {};
handlers['not-found'] = function (req, res) {};
routes[name] = function (req, res) {};
app.param = (name, fn) => fn;
"#;
    let fc = chunk_checked(Language::JavaScript, text, &ChunkOptions::default());
    assert_eq!(
        symbols(&fc),
        owned_symbols(&[
            ("Cache", "function", 1, 6),
            ("Cache.clear", "method", 3, 5),
            ("Cache.get", "method", 9, 11),
            ("Cache.set", "method", 12, 14),
            ("module.exports.methods.show", "method", 19, 19),
            ("inArray", "function", 21, 21),
            ("createStore", "function", 24, 29),
            ("createStore.dispatch", "method", 26, 26),
            ("createStore.subscribe", "method", 27, 27),
            ("validator", "function", 31, 31),
            ("handlers.not-found", "function", 32, 32),
            // A module-level arrow bound to a member is a definition.
            ("app.param", "function", 34, 34),
        ])
    );
}

/// TypeScript shares the rules: a class expression assigned to a member is a class, and an
/// object behind `satisfies` or `as` is still bound to its name.
#[test]
fn typescript_expression_definitions() {
    let text = r#"globalThis.Headers = class Headers extends Map<string, string> {
  append(name: string, value: string): void {}
};

export const hooks = {
  beforeRequest(request: Request): void {},
} satisfies Hooks;

api.get = function get(url: string): Promise<Response> {
  return fetch(url);
};
"#;
    let fc = chunk_checked(Language::TypeScript, text, &ChunkOptions::default());
    assert_eq!(
        symbols(&fc),
        owned_symbols(&[
            ("globalThis.Headers", "class", 1, 3),
            ("globalThis.Headers.append", "method", 2, 2),
            ("hooks.beforeRequest", "method", 6, 6),
            ("api.get", "function", 9, 11),
        ])
    );
}

/// A `.h` file is C by its path; when its text is C++ (a C++ project's header) its
/// definitions are C++'s, while the file and its chunks stay C.
#[test]
fn cpp_headers_named_dot_h_get_cpp_definitions() {
    let text = r#"// Formatting library for C++ - dynamic argument lists
#ifndef FMT_ARGS_H_
#define FMT_ARGS_H_

#include <functional>  // std::reference_wrapper
#include "format.h"

namespace fmt {
namespace detail {

template <typename T> struct is_reference_wrapper : std::false_type {};

class dynamic_arg_list {
 public:
  template <typename T, typename Arg> auto push(const Arg& arg) -> const T& {
    return arg;
  }
};
}  // namespace detail

using format_args = basic_format_args<context>;
}  // namespace fmt

#endif  // FMT_ARGS_H_
"#;
    let fc = chunk_checked(Language::C, text, &unmerged(10));
    assert_eq!(
        symbols(&fc),
        owned_symbols(&[
            ("fmt", "namespace", 8, 22),
            ("fmt.detail", "namespace", 9, 19),
            ("fmt.detail.is_reference_wrapper", "struct", 11, 11),
            ("fmt.detail.dynamic_arg_list", "class", 13, 18),
            ("fmt.detail.dynamic_arg_list.push", "method", 15, 17),
            ("fmt.format_args", "type", 21, 21),
        ])
    );
    assert!(fc.chunks.iter().all(|c| c.language == Language::C));
    assert_eq!(quarry_chunk::file_symbols(Language::C, text), fc.symbols);

    // A C header, `extern "C"` guard and all, is still read as C.
    let c = "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\nstruct redisReader {\n    int err;\n};\n\nint redisReaderFeed(struct redisReader *r, const char *buf) {\n    return 0;\n}\n\n#ifdef __cplusplus\n}\n#endif\n";
    assert_eq!(
        symbols(&chunk_checked(Language::C, c, &ChunkOptions::default())),
        owned_symbols(&[
            ("redisReader", "struct", 5, 7),
            ("redisReaderFeed", "function", 9, 11),
        ])
    );
}

/// C++ annotation macros (`FMT_BEGIN_NAMESPACE` on its own line, `FMT_EXPORT`/`FMT_CONSTEXPR`
/// before a declaration, `class GTEST_API_ X`, a lock annotation before a body) no longer
/// swallow or misname the definitions after them, and conversion operators are definitions;
/// the same in a header named `.h`.
#[test]
fn cpp_annotation_macros_and_conversion_operators() {
    let text = r#"#include "base.h"

FMT_BEGIN_NAMESPACE
namespace detail {

FMT_EXPORT template <typename Char> class basic_string_view {
 public:
  FMT_CONSTEXPR basic_string_view(const Char* s) : data_(s) {}
  FMT_CONSTEXPR20 ~basic_string_view() {}
  constexpr explicit operator bool() const noexcept { return data_ != nullptr; }
  operator std::basic_string<Char>() const { return {data_}; }
  FMT_DEPRECATED operator const Char*&() const { return data_; }

 private:
  const Char* data_;
};

class GTEST_API_ AssertHelper {
 public:
  void Run() const GTEST_LOCK_EXCLUDED_(mutex_) {
    if FMT_CONSTEXPR20 (sizeof(int) == 4) {}
  }
};

template <typename T>
FMT_CONSTEXPR20 FMT_INLINE void write2digits(T* out, size_t value) {
  out[0] = value;
}
}  // namespace detail
FMT_END_NAMESPACE

template <typename Context>
basic_format_args<Context>::operator bool() const { return size_ != 0; }
"#;
    let want = owned_symbols(&[
        ("detail", "namespace", 4, 29),
        ("detail.basic_string_view", "class", 6, 16),
        (
            "detail.basic_string_view.basic_string_view",
            "constructor",
            8,
            8,
        ),
        (
            "detail.basic_string_view.~basic_string_view",
            "method",
            9,
            9,
        ),
        ("detail.basic_string_view.operator bool", "method", 10, 10),
        (
            "detail.basic_string_view.operator std::basic_string<Char>",
            "method",
            11,
            11,
        ),
        // A reference result, after a macro.
        (
            "detail.basic_string_view.operator const Char*&",
            "method",
            12,
            12,
        ),
        ("detail.AssertHelper", "class", 18, 23),
        ("detail.AssertHelper.Run", "method", 20, 22),
        ("detail.write2digits", "function", 25, 28),
        ("basic_format_args.operator bool", "method", 32, 33),
    ]);
    for language in [Language::Cpp, Language::C] {
        let fc = chunk_checked(language, text, &unmerged(10));
        assert_eq!(symbols(&fc), want, "{language}");
        // Names and signatures are read from the file's own text.
        let run = fc.symbols.iter().find(|s| s.name == "Run").unwrap();
        assert_eq!(
            run.signature.as_deref(),
            Some("void Run() const GTEST_LOCK_EXCLUDED_(mutex_) {")
        );
        assert!(
            fc.chunks
                .iter()
                .any(|c| c.text.contains("FMT_BEGIN_NAMESPACE")),
            "chunk text is the file's"
        );
    }
}

/// C typedefs of a function type with the name in parentheses.
#[test]
fn c_function_type_typedefs() {
    let text = "typedef void (redisCallbackFn)(struct redisAsyncContext*, void*, void*);\ntypedef void (*redisFreeFn)(void *);\ntypedef int(redisTimerCallback)(void *timer, void *privdata);\n";
    assert_eq!(
        symbols(&chunk_checked(Language::C, text, &ChunkOptions::default())),
        owned_symbols(&[
            ("redisCallbackFn", "type", 1, 1),
            ("redisFreeFn", "type", 2, 2),
            ("redisTimerCallback", "type", 3, 3),
        ])
    );
}

/// C# operators (named `operator+`, and by the converted-to type for conversions) and
/// delegates.
#[test]
fn csharp_operators_and_delegates() {
    let text = r#"namespace Polly;

public partial class PredicateBuilder<TResult>
{
    public static implicit operator Func<RetryPredicateArguments<TResult>, ValueTask<bool>>(PredicateBuilder<TResult> builder)
    {
        return builder.Build<RetryPredicateArguments<TResult>>();
    }

    public static bool operator ==(PredicateBuilder<TResult> a, PredicateBuilder<TResult> b) => a.Equals(b);

    public delegate Exception ExceptionPredicate(Exception ex);
}
"#;
    assert_eq!(
        symbols(&chunk_checked(
            Language::CSharp,
            text,
            &ChunkOptions::default()
        )),
        owned_symbols(&[
            ("Polly", "namespace", 1, 1),
            ("Polly.PredicateBuilder", "class", 3, 13),
            (
                "Polly.PredicateBuilder.operator Func<RetryPredicateArguments<TResult>, ValueTask<bool>>",
                "method",
                5,
                8,
            ),
            ("Polly.PredicateBuilder.operator==", "method", 10, 10),
            ("Polly.PredicateBuilder.ExceptionPredicate", "type", 12, 12),
        ])
    );
}

/// Java annotation type elements are its methods; an enum constant with a body is a class
/// holding its own methods.
#[test]
fn java_annotation_elements_and_enum_constant_bodies() {
    let text = r#"public @interface JsonAdapter {
  Class<?> value();

  boolean nullSafe() default true;
}

enum FieldNamingPolicy implements FieldNamingStrategy {
  IDENTITY() {
    @Override
    public String translateName(Field f) {
      return f.getName();
    }
  },
  PLAIN;

  static String separateCamelCase(String name, char separator) {
    return name;
  }
}
"#;
    assert_eq!(
        symbols(&chunk_checked(
            Language::Java,
            text,
            &ChunkOptions::default()
        )),
        owned_symbols(&[
            ("JsonAdapter", "interface", 1, 5),
            ("JsonAdapter.value", "method", 2, 2),
            ("JsonAdapter.nullSafe", "method", 4, 4),
            ("FieldNamingPolicy", "enum", 7, 19),
            ("FieldNamingPolicy.IDENTITY", "class", 8, 13),
            ("FieldNamingPolicy.IDENTITY.translateName", "method", 9, 12),
            ("FieldNamingPolicy.separateCamelCase", "method", 16, 18),
        ])
    );
}

/// A TypeScript construct signature is the interface's `new`.
#[test]
fn typescript_construct_signatures() {
    let text = "interface Duration {\n  new (input: string | number, unit?: string): Duration\n  clone(): Duration\n}\n";
    assert_eq!(
        symbols(&chunk_checked(
            Language::TypeScript,
            text,
            &ChunkOptions::default()
        )),
        owned_symbols(&[
            ("Duration", "interface", 1, 4),
            ("Duration.new", "method", 2, 2),
            ("Duration.clone", "method", 3, 3),
        ])
    );
}

/// A comment inside a multi-line `#define` (redis ziplist.c: `} else { /* prevlensize == 5 */ \`)
/// ended the macro at that line in tree-sitter-c, and the function after it was lost.
#[test]
fn a_comment_inside_a_continued_define_keeps_what_follows() {
    let text = "#define ZIP_DECODE_PREVLEN(ptr, prevlensize, prevlen) do {   \\\n    if ((prevlensize) == 1) {                                  \\\n        (prevlen) = (ptr)[0];                                  \\\n    } else { /* prevlensize == 5 */                            \\\n        (prevlen) = ((ptr)[4] << 24) |                         \\\n                    ((ptr)[3] << 16);                          \\\n    }                                                          \\\n} while(0)\n\nint zipStorePrevEntryLength(unsigned char *p, unsigned int len) {\n    return 1;\n}\n";
    for language in [Language::C, Language::Cpp] {
        let fc = chunk_checked(language, text, &ChunkOptions::default());
        let found = symbols(&fc);
        assert!(
            found.contains(&("ZIP_DECODE_PREVLEN".to_string(), "macro", 1, 8)),
            "{language:?}: {found:?}"
        );
        assert!(
            found
                .iter()
                .any(|s| s.0 == "zipStorePrevEntryLength" && s.2 == 10),
            "{language:?}: {found:?}"
        );
    }
}

/// A calling convention or export macro between a C function's return type and its name
/// (cJSON's `int CJSON_CDECL main(void)`) left the function unparsed; a macro that is the
/// type (`SIZE_T f(void)`) stays the type.
#[test]
fn c_calling_convention_macros_before_the_name() {
    let text = "#include <stdio.h>\n\nint CJSON_CDECL main(void)\n{\n    return run();\n}\n\nCJSON_PUBLIC(char *) cJSON_Print(const cJSON *item)\n{\n    return print(item);\n}\n\nchar * CJSON_STDCALL cJSON_Version(void)\n{\n    return version;\n}\n\nSIZE_T size_of(void)\n{\n    return 0;\n}\n";
    for language in [Language::C, Language::Cpp] {
        let chunked = chunk_checked(language, text, &ChunkOptions::default());
        let found = symbols(&chunked);
        let names: Vec<&str> = found.iter().map(|(n, _, _, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["main", "cJSON_Print", "cJSON_Version", "size_of"],
            "{language}: {found:?}"
        );
    }
}

/// A statement macro alone on its line (Unity's `EXPECT_ABORT_BEGIN`) made the C grammar read
/// the call below it as a declaration and lose every later function; blanked, the functions
/// after it are found. jemalloc's `TEST_END` before `TEST_BEGIN(test_x) {` was read as the
/// type of a function named `TEST_BEGIN`; blanked, each test is named by its own name, as the
/// first one (with no `TEST_END` above) always was.
#[test]
fn c_statement_macros_alone_on_their_line() {
    let unity = "void testOne(void)\n{\n    EXPECT_ABORT_BEGIN\n    TEST_ASSERT_EQUAL_FLOAT_ARRAY(p0, p1, 4);\n    VERIFY_FAILS_END\n}\n\nvoid testTwo(void)\n{\n    EXPECT_ABORT_BEGIN\n    TEST_ASSERT_EQUAL_INT(1, 2);\n    VERIFY_FAILS_END\n}\n\nvoid testThree(void)\n{\n    run();\n}\n";
    let chunked = chunk_checked(Language::C, unity, &ChunkOptions::default());
    assert_eq!(
        symbols(&chunked),
        owned_symbols(&[
            ("testOne", "function", 1, 6),
            ("testTwo", "function", 8, 13),
            ("testThree", "function", 15, 18),
        ])
    );
    let jemalloc = "TEST_BEGIN(test_ffs_u) {\n\tTEST_FFS(unsigned, u, u, \"u\");\n}\nTEST_END\n\nTEST_BEGIN(test_ffs_lu) {\n\tTEST_FFS(unsigned long, lu, lu, \"lu\");\n}\nTEST_END\n\nTEST_BEGIN(test_ffs_llu) {\n\tTEST_FFS(unsigned long long, llu, llu, \"llu\");\n}\nTEST_END\n";
    let chunked = chunk_checked(Language::C, jemalloc, &ChunkOptions::default());
    assert_eq!(
        symbols(&chunked),
        owned_symbols(&[
            ("test_ffs_u", "function", 1, 3),
            ("test_ffs_lu", "function", 6, 8),
            ("test_ffs_llu", "function", 11, 13),
        ])
    );
}

/// An optional `#if` inside an initialiser list (leveldb's `Limiter`) or a base list
/// (Newtonsoft's `JsonWriter`) made every later class a member of the first; read with its
/// code, each class ends where it does.
#[test]
fn an_optional_conditional_inside_a_construct_keeps_the_classes_apart() {
    let cpp = "class Limiter {\n public:\n  Limiter(int n)\n      :\n#if !defined(NDEBUG)\n        max_(n),\n#endif  // !defined(NDEBUG)\n        allowed_(n) {\n  }\n  bool Acquire() { return true; }\n};\n\nclass PosixFile {\n  void Read() {}\n};\n";
    let chunked = chunk_checked(Language::Cpp, cpp, &ChunkOptions::default());
    let found = symbols(&chunked);
    assert!(
        found.contains(&("Limiter".to_string(), "class", 1, 11)),
        "{found:?}"
    );
    assert!(
        found.contains(&("PosixFile".to_string(), "class", 13, 15)),
        "{found:?}"
    );
    let cs = "namespace N\n{\n    public class JsonWriter\n#if HAVE_ASYNC_DISPOSABLE\n        : IAsyncDisposable\n#endif\n    {\n        public void Close() { }\n    }\n\n    public class Other\n    {\n    }\n}\n";
    let chunked = chunk_checked(Language::CSharp, cs, &ChunkOptions::default());
    let found = symbols(&chunked);
    assert!(
        found.contains(&("N.JsonWriter".to_string(), "class", 3, 9)),
        "{found:?}"
    );
    assert!(
        found.contains(&("N.Other".to_string(), "class", 11, 13)),
        "{found:?}"
    );
}

/// An annotation macro alone on its line under a doc comment whose lines do not start with
/// `*` (nlohmann's `/*!` … `@param[in] x …` … `*/` / `JSON_HEDLEY_NON_NULL(2)`) was taken for
/// code after prose and kept, closing the class early; and a `JSON_CATCH(...) {}` after a
/// `JSON_TRY { … }` block was read as a function. Both are blanked; the class holds all its
/// methods.
#[test]
fn a_macro_under_a_doc_comment_and_a_catch_macro_keep_the_class_whole() {
    let text = "class lexer {\n  public:\n    /*!\n    @param[in] length  the length\n    */\n    JSON_HEDLEY_NON_NULL(2)\n    int scan_literal(const char* text, int length)\n    {\n        JSON_TRY\n        {\n            check();\n        }\n        JSON_CATCH(...) {}\n        return 0;\n    }\n\n    void reset() {}\n};\n\nvoid after() {}\n";
    let chunked = chunk_checked(Language::Cpp, text, &ChunkOptions::default());
    assert_eq!(
        symbols(&chunked),
        owned_symbols(&[
            ("lexer", "class", 1, 18),
            ("lexer.scan_literal", "method", 7, 15),
            ("lexer.reset", "method", 17, 17),
            ("after", "function", 20, 20),
        ])
    );
}

/// A specialization's name that goes on past its first line is named whole, not cut after its
/// first template argument.
#[test]
fn a_template_name_over_two_lines_is_named_whole() {
    let text = "template <typename T, typename Char>\nstruct formatter<std::vector<T>,\n                 Char> {\n  int width;\n};\n";
    let chunked = chunk_checked(Language::Cpp, text, &ChunkOptions::default());
    let found = symbols(&chunked);
    assert_eq!(found[0].0, "formatter<std::vector<T>, Char>", "{found:?}");
}
