#!/usr/bin/env python3
"""quarry's definitions against Universal Ctags', per language, on real repositories.

Usage: python3 bench/ctags_defs.py [--quarry BIN] [--max-files N] [--window W] [--misses K]
                                   [--text] [--json] REPO_DIR...

What it measures: recall of quarry's outline (`quarry summary FILE --json`, the parser-only
path, every item at any depth) against the tags Universal Ctags writes for the same file
(`ctags --output-format=json --fields=+nKzSs`, default extras: `--extras=-F` would drop
file-scoped tags such as C `static` functions). Ctags is the long-standing, hand-tuned answer
to "where is X defined" in every language, so a definition it tags and quarry does not is
mostly a syntax pattern quarry's grammar tables (crates/quarry-chunk/src/languages/tables.rs) miss.

Which tags count: per language, KINDS names the ctags kinds that are definitions quarry means
to list ("def": functions, methods, classes, structs, unions, enums, interfaces, traits, impls,
type aliases and typedefs, modules and namespaces, function-like macros) and those for named
things quarry's outline leaves out by design ("aux": constants, variables, fields, members,
properties, enum members, events, object-like macros, C/C++ prototypes — declarations, not
definitions), matched the same way but reported apart so they do not drown the recall figure.
Other kinds (locals, parameters, imports, packages, labels, ...) are ignored, as are Rust
`mod x;` declarations, ctags' anonymous names (`__anon…`, `Anonymous…`), TypeScript "alias"
tags on import lines (ctags 5.9 tags `import {type X}`) and the class ctags infers from
`C.prototype.m = function` (the method `m` counts); a JS "class" that is an object literal
(`const locale = {`) is aux. One definition tagged under two names on a line (`app.use =
function use`: `use` bare and in scope `app`; `req.onabort = function handleAbort`: both
names) counts once, found if quarry has either name.

Found: quarry has an item of the same name (spaces dropped, `<…>` template arguments cut)
starting on the tag's line, or covering it from at most W lines above (--window, 10: comments,
`export`), or from a decorator/attribute line of any length above (`@click.option(…)` stacks),
or ending on it (C's `typedef struct {…} Name;` is tagged on its last line). A C/C++ function
written through a macro call (`TEST_BEGIN(test_x) {`, tagged `TEST_BEGIN`) is also found under
its first argument, its own name, which quarry gives it. Columns: files;
ctags defs, found, recall; aux, found, recall; quarry's items and those no ctags tag of any
kind matches (q-only, informational); files whose outline came from the heuristic (heur: no
definition found by the parser).

--text: the same tags scored on the TEXT outline (`quarry summary FILE`, what an agent reads)
as well, since the JSON holds every definition whatever the text's budget left out. A
definition is named in the text when its name stands on an item line whose `start-end` (or
single line) range meets the JSON rule above (starts on the tag's line, ±2, covers it from at
most W lines above or from a decorator/attribute above, or ends on it), or as `name LINE` in a
listed run (`12 definitions: f 3, g 4 (h 5)`, `(nested: …)`) with LINE from 2 after the tag's
line to W before it. Names counted only (`… 5 more definitions`, `(+2 nested)`, `mod tests
(9 definitions)`) are misses. Extra columns: named in the text, its recall, and the outline's
size in characters over the file's, median over files over 100 lines (the outline budget's
measure); `--misses` then shows the text's misses.

Files: those quarry detects as a code language (crates/quarry-core/src/language.rs) that ctags
parses (`.tsx` is left out: ctags 5.9 has no TSX parser). Per repository at most --max-files
(150), chosen deterministically: every file in path order (git ls-files, else a walk) less
vendored, generated and fixture folders (SKIP_DIRS) and `.min.` files, then evenly spaced picks
across that list. `.h` files are C to quarry; ctags is told C, or C++ when the repository has
more C++ sources than `.c` ones — those rows read `c (ctags C++)`. Quarry runs with an empty
--index-dir so outlines come from the parser; a file it refuses (minified text) is listed as
failed and not counted. Misses are grouped by syntax pattern (`pattern()`: the line's shape
for JavaScript/TypeScript and C/C++, else ctags' kind and scope kind).
"""
import argparse, json, os, re, signal, statistics, subprocess, sys, tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

EXTENSIONS = {  # quarry's language by extension, and the ctags parser to force
    "rust": (("rs",), "Rust"),
    "python": (("py", "pyi", "pyw"), "Python"),
    "go": (("go",), "Go"),
    "javascript": (("js", "mjs", "cjs", "jsx"), "JavaScript"),
    "typescript": (("ts", "mts", "cts"), "TypeScript"),
    "java": (("java",), "Java"),
    "c": (("c", "h"), "C"),
    "cpp": (("cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp"), "C++"),
    "csharp": (("cs",), "C#"),
    "ruby": (("rb", "rake", "gemspec"), "Ruby"),
    "php": (("php", "phtml"), "PHP"),
    "kotlin": (("kt", "kts"), "Kotlin"),
    "shell": (("sh", "bash", "zsh"), "Sh"),
    "lua": (("lua",), "Lua"),
    "r": (("r",), "R"),
    "objectivec": (("m",), "ObjectiveC"),
    "elixir": (("ex", "exs"), "Elixir"),
    "haskell": (("hs",), "Haskell"),
    "julia": (("jl",), "Julia"),
}
BY_EXT = {ext: (lang, ctags) for lang, (exts, ctags) in EXTENSIONS.items() for ext in exts}
CPP_EXTS = set(EXTENSIONS["cpp"][0])

# ctags kind -> "def" (counted in recall) or "aux" (counted apart); kinds not listed are ignored.
D, A = "def", "aux"
KINDS = {
    "JavaScript": dict(function=D, generator=D, **{"class": D}, method=D, getter=D, setter=D,
                       constant=A, variable=A, property=A, field=A),
    "TypeScript": dict(function=D, generator=D, **{"class": D}, method=D, interface=D, enum=D,
                       namespace=D, alias=D, constant=A, variable=A, property=A, enumerator=A),
    "Python": dict(function=D, **{"class": D}, member=D, variable=A),
    "Rust": dict(function=D, method=D, struct=D, enum=D, interface=D, implementation=D,
                 module=D, typedef=D, macro=D, variable=A, enumerator=A, field=A),
    "Go": dict(func=D, struct=D, interface=D, type=D, talias=D, methodSpec=D,
               const=A, var=A, member=A, anonMember=A),
    "Java": dict(**{"class": D}, interface=D, enum=D, method=D, annotation=D,
                 field=A, enumConstant=A),
    "C": dict(function=D, struct=D, union=D, enum=D, typedef=D, macro=D,
              enumerator=A, variable=A, externvar=A, member=A, prototype=A),
    "C++": dict(function=D, **{"class": D}, struct=D, union=D, enum=D, typedef=D, alias=D,
                namespace=D, macro=D, enumerator=A, variable=A, externvar=A, member=A,
                prototype=A),
    "C#": dict(**{"class": D}, struct=D, interface=D, enum=D, method=D, namespace=D,
               property=A, field=A, event=A, enumerator=A, typedef=A),
    "Ruby": dict(**{"class": D}, module=D, method=D, singletonMethod=D,
                 constant=A, accessor=A, alias=A),
    "PHP": dict(**{"class": D}, interface=D, trait=D, function=D, namespace=D,
                define=A, alias=A, variable=A),
    "Kotlin": dict(**{"class": D}, interface=D, object=D, method=D, typealias=D,
                   constant=A, variable=A),
    "Sh": dict(function=D, alias=A),
    "Lua": dict(function=D),
    "R": dict(function=D, globalVar=A, functionVar=A),
    # ctags' "class" kind in Objective-C is a class method (`+ (id)unit`).
    "ObjectiveC": dict(interface=D, implementation=D, protocol=D, category=D, method=D,
                       **{"class": D}, function=D, struct=D, enum=D, typedef=D, macro=D,
                       property=A, field=A, var=A),
    "Elixir": dict(module=D, function=D, macro=D, protocol=D, implementation=D, delegate=D,
                   guard=D, callback=A, exception=A, record=A, test=A, type=A, operator=A),
    "Haskell": dict(function=D, type=D, constructor=A, module=A),
    "Julia": dict(function=D, macro=D, module=D, struct=D, type=D, constant=A, field=A),
}
SKIP_DIRS = {"node_modules", "vendor", "third_party", "third-party", "thirdparty", "external",
             "fixtures", "fixture", "testdata", "test-data", "__fixtures__", "__snapshots__",
             "dist", "build", "out", "target", "bower_components", ".git"}
JS_ALIAS = re.compile(r"([\w$]+)['\"]?\s*[:=]\s*(?:async\s+)?function\s*\*?\s*([\w$]+)\s*\(")
LUA_DEF = re.compile(r"^\s*((local\s+)?function\b|(local\s+)?[\w.:\[\]\"']+\s*=\s*function\b)")
OBJC_PROPERTY_WORDS = {"readwrite", "readonly", "nonatomic", "atomic", "strong", "weak", "copy",
                       "assign", "retain", "nullable", "nonnull", "class", "getter", "setter"}
RUST_MOD_DECL = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;")

# JavaScript/TypeScript: the shape of a missed definition's line, most specific first.
JS_SHAPES = [
    ("module.exports/exports = function", r"^\s*(module\.)?exports(\.[\w$]+)?\s*=\s*(async\s+)?function\b"),
    ("X.prototype.m = function", r"^\s*[\w$.]+\.prototype\.[\w$]+\s*=\s*(async\s+)?function\b"),
    ("X.prototype = { ... } / member of it", r"^\s*[\w$.]+\.prototype\s*=\s*\{"),
    ("obj.m = function", r"^\s*[\w$]+(\.[\w$]+)+\s*=\s*(async\s+)?function\b"),
    ("obj.m = arrow", r"^\s*[\w$]+(\.[\w$]+)+\s*=\s*(async\s+)?(\([^)]*\)|[\w$]+)\s*=>"),
    ("key: function (object literal)", r"^\s*['\"]?[\w$]+['\"]?\s*:\s*(async\s+)?function\b"),
    ("key: arrow (object literal)", r"^\s*['\"]?[\w$]+['\"]?\s*:\s*(async\s+)?(\([^)]*\)|[\w$]+)\s*=>"),
    ("get/set accessor", r"^\s*(static\s+)?(get|set)\s+[\w$]+\s*\("),
    ("named function expression as argument", r"[(,]\s*(async\s+)?function\s*\*?\s*[\w$]+\s*\("),
    ("var/let/const = function/arrow (nested)", r"^\s*(export\s+)?(var|let|const)\s+[\w$]+\s*(:[^=]+)?=\s*(async\s+)?(function\b|\(|[\w$]+\s*=>)"),
    ("function declaration", r"^\s*(export\s+(default\s+)?)?(async\s+)?function\s*\*?\s*[\w$]+"),
    ("method shorthand (name(...) {)", r"^\s*(static\s+|async\s+|\*\s*|public\s+|private\s+|protected\s+|readonly\s+)*['\"]?[\w$]+['\"]?\s*(<[^>]*>)?\s*\([^)]*\)?"),
    ("class", r"\bclass\b"),
]


# C/C++: (label, test on name and line), most specific first.
C_SHAPES = [
    ("conversion operator (operator T())", lambda n, l: re.match(r"operator\s*[A-Za-z_]", n)),
    ("operator overload", lambda n, l: n.startswith("operator")),
    ("macro call that looks like a function (TEST(a, b) {)",
     lambda n, l: re.match(r"[A-Z][A-Z0-9_]+$", n) and re.match(r"\s*[A-Z][A-Z0-9_]+\s*\(", l)),
    ("#define", lambda n, l: re.match(r"\s*#\s*define", l)),
    ("after an ALL_CAPS macro (FMT_CONSTEXPR f(), FMT_EXPORT class)",
     lambda n, l: re.match(r"\s*(template\s*<.*>\s*)?[A-Z][A-Z0-9_]{2,}\b(?!\s*\()", l)),
    ("out-of-class definition (A::f)", lambda n, l: re.search(r"\w::~?" + re.escape(n) + r"\s*\(", l)),
    ("template or specialization", lambda n, l: re.search(r"\btemplate\b|" + re.escape(n) + r"\s*<", l)),
    ("using X = …", lambda n, l: re.match(r"\s*using\s+\w+\s*=", l)),
    ("typedef", lambda n, l: "typedef" in l),
    ("one-line body ({ … } on the line)", lambda n, l: re.search(r"\{.*\}", l)),
]


def pattern(ctags_lang, tag, line):
    """A label for the syntax a ctags definition was written in."""
    where = tag.get("scopeKind") or "top level"
    label = f"{tag['kind']} in {where}"
    if ctags_lang in ("C", "C++"):
        shape = next((name for name, test in C_SHAPES if test(tag["name"], line)), None)
        label = f"{shape} ({tag['kind']})" if shape else label
    if ctags_lang in ("JavaScript", "TypeScript"):
        shape = next((name for name, rx in JS_SHAPES if re.search(rx, line)), "other")
        label = f"{shape}, {'indented' if line[:1].isspace() else 'column 0'}"
    return label


def list_files(repo, max_files):
    """Code files of a repo, deterministic: path order, skipping SKIP_DIRS, evenly spaced."""
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True, check=True)
        paths = [p for p in out.stdout.decode().split("\0") if p]
    except (subprocess.CalledProcessError, FileNotFoundError):
        paths = [os.path.relpath(os.path.join(d, f), repo)
                 for d, _, fs in os.walk(repo) for f in fs]
    keep = []
    for p in sorted(paths):
        parts = p.split("/")
        ext = parts[-1].rsplit(".", 1)[-1].lower() if "." in parts[-1] else ""
        if ext not in BY_EXT or any(d.lower() in SKIP_DIRS for d in parts[:-1]):
            continue
        if ".min." in parts[-1] or not os.path.isfile(os.path.join(repo, p)):
            continue
        if os.path.getsize(os.path.join(repo, p)) > 1 << 20:
            continue
        keep.append(p)
    exts = Counter(p.rsplit(".", 1)[-1].lower() for p in keep)
    has_cpp = sum(exts[e] for e in CPP_EXTS) > exts["c"]  # then `.h` files are C++ headers
    if len(keep) > max_files:
        keep = [keep[i * len(keep) // max_files] for i in range(max_files)]
    return keep, has_cpp


def ctags_tags(path, ctags_lang):
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+nKzSs",
                          f"--language-force={ctags_lang}", "-o", "-", path],
                         capture_output=True, text=True, errors="replace")
    tags = []
    for line in out.stdout.splitlines():
        try:
            t = json.loads(line)
        except ValueError:
            continue
        if t.get("_type") == "tag" and "line" in t:
            tags.append(t)
    return tags


def quarry_items(quarry, index_dir, path):
    out = subprocess.run([quarry, "--index-dir", index_dir, "summary", path, "--json"],
                         capture_output=True, text=True, errors="replace")
    if out.returncode != 0:
        return None, out.stderr.strip()[:200]
    data = json.loads(out.stdout)
    return data.get("items", []), ("heuristic" if data.get("heuristic") else None)


ITEM_LINE = re.compile(r"^\s*(?:cell \d+:|p\.\d+ )?(\d+)(?:-(\d+))? (.*)$")


def quarry_text(quarry, index_dir, path):
    """The text outline as (start, end, rest of the line) item lines and (name, line) listed
    entries; None when quarry refused the file."""
    out = subprocess.run([quarry, "--index-dir", index_dir, "summary", path],
                         capture_output=True, text=True, errors="replace")
    if out.returncode != 0:
        return None
    rows = []
    body = out.stdout.split("\n", 1)[1] if "\n" in out.stdout else ""  # the header names the file
    for text in body.splitlines():
        m = ITEM_LINE.match(text)
        if m and not m.group(3).startswith(("imports (", "definition")):  # not `12 definitions: …`
            start = int(m.group(1))
            rows.append((start, int(m.group(2) or start), m.group(3)))
    return rows, body, len(out.stdout)


def named_in_text(outline, name, line, lines, window):
    """The text outline shows `name` with `line` (see --text in the module doc)."""
    rows, body, _ = outline
    want = norm(name)
    if want.startswith("operator"):
        has = lambda rest: want in re.sub(r"\s+", "", rest)
    else:
        rx = re.compile(r"(?<![\w$])" + re.escape(want) + r"(?![\w$])")
        # a namespace is shown as written (`namespace A\B;`), its name compared with dots
        has = lambda rest: rx.search(re.sub(r"::|\\", ".", rest)) is not None
    for start, end, rest in rows:
        near = abs(start - line) <= 2 or end == line and start < line
        if start < line <= end:
            above = lines[start - 1].lstrip() if start <= len(lines) else ""
            near = near or line - start <= window or above.startswith(("@", "#[", "["))
        if near and has(rest):
            return True
    # `name LINE` in a listed run; a C++ name may carry template arguments (`buffer<T*, T> 12`).
    spelled = r"\s*".join(map(re.escape, want)) if want.startswith("operator") else re.escape(want)
    listed = re.compile(r"(?<![\w$~])" + spelled + r"(?:<[^\n]*?>)? (\d+)(?=[,)\s]|$)")
    return any(line - window <= int(m.group(1)) <= line + 2
               for m in listed.finditer(re.sub(r"::|\\", ".", body)))


def category(ctags_lang, tag, lines):
    name, kind = tag["name"], tag["kind"]
    cat = KINDS[ctags_lang].get(kind)
    line = lines[tag["line"] - 1] if tag["line"] <= len(lines) else ""
    if cat is None or name.startswith(("__anon", "Anonymous", "<lambda>")):
        return None
    if ctags_lang == "Lua" and not LUA_DEF.match(line):
        return None  # ctags' Lua parser tags any line with a name before `function`: an
                     # argument (`x = f(function()`), a string (`msg = "… functions"`)
    if ctags_lang == "ObjectiveC":
        # ctags' Objective-C parser: `@property (readwrite, …)` and `#if (defined(__X…` read
        # as categories, a block typedef's parameter as the typedef, an enumerator as an enum,
        # a `static` variable in an `@implementation` as a method.
        if kind == "category" and (name in OBJC_PROPERTY_WORDS or name.startswith("__")):
            return None
        if kind == "typedef" and "(^" in line and not re.search(r"\(\^\s*" + re.escape(name) + r"\s*\)", line):
            return None
        if kind == "enum" and re.match(r"^\s*\w+\s*(=[^;{]*)?,?\s*$", line):
            return A
        if kind == "method" and line.lstrip().startswith("static "):
            return None
    if ctags_lang == "Haskell" and (name == "class" or re.match(r"\s*deriving\b", line)):
        return None  # ctags' Haskell parser tags `class C a where` as a function named `class`
    if ctags_lang == "Haskell" and re.match(r"^\s*[{,]?\s*[\w']+(\s*,\s*[\w']+)*\s*::", line) \
            and (line.lstrip().startswith(("{", ",")) or "(" not in line.split("::")[0]):
        # a record's field (`, issueBody :: !(Maybe Text)`) or a type signature line: ctags
        # calls both functions; quarry lists the record with its type and the function at its
        # equations (the signature above them belongs to it)
        return A if line.lstrip().startswith(("{", ",")) else None
    if ctags_lang == "Haskell" and (
            name in ("family", "instance", "infix", "infixl", "infixr")
            or line.lstrip().startswith("$(") or "''" in line.split("--")[0]):
        # ctags' Haskell parser: `data family F` / `data instance F` named `family` /
        # `instance`, a fixity declaration named `infixr`, a Template Haskell splice
        # (`$(deriveJSON opts ''T)`, `deriveJSON opts ''T`) named as a function
        return None
    if ctags_lang == "Haskell" and line.lstrip().startswith("::"):
        return None  # the second line of a signature (`foo\n  :: Int -> Int`)
    if ctags_lang == "Haskell" and re.search(r"[{,|]\s*" + re.escape(name) + r"\s*::", line):
        return A  # a record field written inline (`data C = C { x :: Double, y :: Double }`)
    if ctags_lang == "R" and name.startswith("anonFunc"):
        return None  # an anonymous function passed as an argument
    if ctags_lang == "Elixir" and in_heredoc(lines, tag["line"]):
        return None  # code in a `"""` documentation string (a @moduledoc example)
    if ctags_lang == "Kotlin" and "<lambda>" in tag.get("scope", ""):
        return None  # ctags' Kotlin parser tags a lambda's parameters (`{ handle -> }`) as methods
    if ctags_lang == "TypeScript" and re.match(r"\s*(import\b|export\s+as\s+namespace\b)", line):
        return None  # ctags 5.9 tags `import {type X}` as an alias of X
    if ctags_lang == "TypeScript" and kind == "alias" and "=" not in line:
        return None  # … and `type X,` on a line of a multi-line import
    if kind == "macro" and "signature" not in tag:
        return A  # object-like #define: quarry lists function-like macros only
    if ctags_lang == "Rust" and kind == "module" and RUST_MOD_DECL.match(line):
        return None
    if ctags_lang in ("JavaScript", "TypeScript") and kind == "class" \
            and not re.search(r"\b(class|function)\b", line):
        return A  # ctags' JS parser calls an object literal `var x = {` a class
    if ctags_lang == "JavaScript" and kind == "class" and re.match(rf"\s*{re.escape(name)}\.prototype\b", line):
        return None  # … and `C.prototype.m = function` a class `C` as well as the method `m`
    return cat


def in_cpp_alternative(lines, line):
    """Whether `line` (1-based) is in an `#else`/`#elif` branch of a preprocessor `#if`."""
    depth_else = []
    for text in lines[:line - 1]:
        t = text.strip()
        if t.startswith("#if"):
            depth_else.append(False)
        elif t.startswith(("#else", "#elif")) and depth_else:
            depth_else[-1] = True
        elif t.startswith("#endif") and depth_else:
            depth_else.pop()
    return any(depth_else)


def in_heredoc(lines, line):
    """Whether `line` (1-based) is inside a `\"\"\"` string: an odd number of them above."""
    return sum(l.count('"""') for l in lines[:line - 1]) % 2 == 1


def norm(name):
    """`operator >=` (ctags) is `operator>=` (quarry); `formatter<int>` (quarry's name for a
    specialization) is `formatter` (ctags)."""
    name = re.sub(r"\s+", "", name)
    if not name.startswith("operator"):
        # A namespace's segments: `a::b` (C++), `A\B` (PHP) are quarry's `a.b`, `A.B`.
        name = re.sub(r"::|\\", ".", name)
    return name if name.startswith("operator") else re.sub(r"<.*", "", name)


def own_names(ctags_lang, tag, lines):
    """The names a definition goes by: ctags' name, and for a C/C++ function written through a
    macro call (jemalloc's `TEST_BEGIN(test_ffs_lu) {`, tagged `TEST_BEGIN`) also its first
    argument, the definition's own name, which quarry gives it; for a C# explicit interface
    implementation (`IList.Clear`) also its own name (`Clear`)."""
    names = [tag["name"]]
    if ctags_lang in ("C", "C++") and tag["kind"] == "function" and tag["line"] <= len(lines):
        m = re.match(rf"\s*{re.escape(tag['name'])}\s*\(\s*([A-Za-z_]\w*)\s*[,)]",
                     lines[tag["line"] - 1])
        if m:
            names.append(m.group(1))
    if ctags_lang == "C#" and tag["kind"] == "method" and "." in tag["name"]:
        # an explicit interface implementation (`void IList.Clear()`): quarry names it `Clear`
        names.append(tag["name"].rsplit(".", 1)[1])
    return names


def found(items, name, line, lines, window):
    """Quarry has `name` at `line`: starting there, or covering it from at most `window` lines
    above (or from a decorator/attribute of any length above), or ending there (C's
    `typedef struct {…} Name;` is tagged on its last line)."""
    def covers(i):
        start, end = i["start_line"], i["end_line"]
        if start == line or end == line and start < line:
            return True
        if not start < line <= end:
            return False
        above = lines[start - 1].lstrip() if start <= len(lines) else ""
        return line - start <= window or above.startswith(("@", "#[", "["))
    return any(norm(i["name"]) == norm(name) and covers(i) for i in items)


def analyse(job):
    """One file: its tags by category, which quarry found, and quarry's items ctags lacks."""
    repo, rel, lang, ctags_lang, args, index_dir = job
    path = os.path.join(repo, rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    items, note = quarry_items(args.quarry, index_dir, path)
    tags = ctags_tags(path, ctags_lang)
    if ctags_lang == "Lua":
        # ctags names `function M.f` and `M.f = function` as `M.f`; quarry names it `f` in `M`.
        for tag in tags:
            tag["name"] = re.split(r"[.:]", tag["name"])[-1]
    if ctags_lang == "R":
        for tag in tags:  # `"%+%" <- function`: ctags keeps the quotes, quarry the name
            tag["name"] = tag["name"].strip("\"'`")
    if ctags_lang == "Elixir" and items is not None:
        # ctags names `defmodule MyApp.Accounts` by its last segment; quarry by all of it.
        items = [dict(i, name=i["name"].rsplit(".", 1)[-1]) for i in items]
    result = {"repo": os.path.basename(repo.rstrip("/")), "path": rel, "lang": lang,
              "ctags_lang": ctags_lang, "note": note, "def": 0, "def_found": 0, "aux": 0,
              "aux_found": 0, "quarry": 0, "quarry_only": [], "misses": [], "def_text": 0,
              "text_misses": [], "size": None}
    if items is None:
        return result  # quarry refused it (minified, generated, too large): not counted
    outline = quarry_text(args.quarry, index_dir, path) if args.text else None
    if outline is not None and len(lines) > 100:
        with open(path, encoding="utf-8", errors="replace") as f:
            result["size"] = outline[2] / max(1, len(f.read()))
    # One definition, however many tags: ctags tags `app.use = function use` as `use` twice
    # (bare and in scope `app`) and `req.onabort = function handleAbort` as both names.
    aliases = {}
    if ctags_lang in ("JavaScript", "TypeScript"):
        for n, text in enumerate(lines, 1):
            m = JS_ALIAS.search(text)
            if m:
                aliases[n] = frozenset(m.groups())
    groups = {}  # key -> [category, tags]
    for t in tags:
        cat = category(ctags_lang, t, lines)
        if cat is None:
            continue
        names = aliases.get(t["line"], ())
        g = groups.setdefault((t["line"], names if t["name"] in names else t["name"]), [cat, []])
        g[0] = D if D in (g[0], cat) else A
        g[1].append(t)
    for cat, ts in groups.values():
        t = next(t for t in ts if category(ctags_lang, t, lines) == cat)
        if ctags_lang == "Haskell" and in_cpp_alternative(lines, t["line"]) \
                and any(norm(i["name"]) == norm(t["name"]) for i in items):
            continue  # a `#else` branch's copy of a definition quarry has from the first branch
        hit = any(found(items, n, u["line"], lines, args.window)
                  for u in ts for n in own_names(ctags_lang, u, lines))
        result[cat] += 1
        result[cat + "_found"] += hit
        if cat == D and outline is not None:
            shown = any(named_in_text(outline, n, u["line"], lines, args.window)
                        for u in ts for n in own_names(ctags_lang, u, lines))
            result["def_text"] += shown
            if not shown:
                src = lines[t["line"] - 1].strip() if t["line"] <= len(lines) else ""
                result["text_misses"].append({
                    "file": f"{result['repo']}/{rel}", "line": t["line"], "name": t["name"],
                    "kind": t["kind"], "scope": t.get("scope"), "scopeKind": t.get("scopeKind"),
                    "source": src[:160],
                    "pattern": f"{t['kind']} in {t.get('scopeKind') or 'top level'}"
                               + ("" if hit else " (not in the JSON either)")})
        if cat == D and not hit:
            src = lines[t["line"] - 1].strip() if t["line"] <= len(lines) else ""
            result["misses"].append({
                "file": f"{result['repo']}/{rel}", "line": t["line"],
                "name": "/".join(dict.fromkeys(u["name"] for u in ts)),
                "kind": t["kind"], "scope": t.get("scope"), "scopeKind": t.get("scopeKind"),
                "source": src[:160], "pattern": pattern(ctags_lang, t, lines[t["line"] - 1]
                                                        if t["line"] <= len(lines) else "")})
    for i in items:
        result["quarry"] += 1
        if not any(found([i], t["name"], t["line"], lines, args.window) for t in tags):
            result["quarry_only"].append(f"{rel}:{i['start_line']} {i['name']} ({i['kind']})")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repos", nargs="+", metavar="REPO_DIR")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quarry", default=os.path.join(here, "..", "target", "debug", "quarry"))
    ap.add_argument("--max-files", type=int, default=150)
    ap.add_argument("--window", type=int, default=10,
                    help="lines a quarry item may start before the ctags line (decorators, comments)")
    ap.add_argument("--misses", type=int, default=0, metavar="K",
                    help="print K example misses per language")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--text", action="store_true",
                    help="score the text outline too (named in the text, median size)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = ap.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    args.quarry = os.path.abspath(args.quarry)
    if not os.access(args.quarry, os.X_OK):  # a build relinking it: pass a copy with --quarry
        sys.exit(f"no quarry binary at {args.quarry} (cargo build, or --quarry BIN)")
    if subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout.find("Universal Ctags") < 0:
        sys.exit("Universal Ctags not found (apt-get install universal-ctags)")
    index_dir = tempfile.mkdtemp(prefix="quarry-ctags-bench-")
    jobs = []
    for repo in args.repos:
        repo = os.path.abspath(repo)
        files, has_cpp = list_files(repo, args.max_files)
        for rel in files:
            ext = rel.rsplit(".", 1)[-1].lower()
            lang, ctags_lang = BY_EXT[ext]
            if ext == "h" and has_cpp:
                ctags_lang = "C++"
            jobs.append((repo, rel, lang, ctags_lang, args, index_dir))
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(analyse, jobs))

    sizes = defaultdict(list)

    def group(key):
        out = defaultdict(lambda: Counter(files=0))
        for r in results:
            c = out[key(r)]
            c["files"] += 1
            for k in ("def", "def_found", "aux", "aux_found", "quarry", "def_text"):
                c[k] += r[k]
            if r["size"] is not None:
                sizes[key(r)].append(r["size"])
            c["quarry_only"] += len(r["quarry_only"])
            c["failed"] += r["note"] not in (None, "heuristic")
            c["heuristic"] += r["note"] == "heuristic"
        return out

    def lang_key(r):
        default = EXTENSIONS[r["lang"]][1]
        return r["lang"] if r["ctags_lang"] == default else f"{r['lang']} (ctags {r['ctags_lang']})"

    by_lang, by_repo = group(lang_key), group(lambda r: f"{r['repo']} [{lang_key(r)}]")
    misses = defaultdict(list)
    for r in results:
        misses[lang_key(r)].extend(r["text_misses"] if args.text else r["misses"])
    ratio = lambda a, b: round(a / b, 3) if b else None
    median = lambda xs: round(statistics.median(xs), 3) if xs else None
    rows = lambda g: {k: dict(v, recall=ratio(v["def_found"], v["def"]),
                              aux_recall=ratio(v["aux_found"], v["aux"]),
                              **({"text_recall": ratio(v["def_text"], v["def"]),
                                  "median_size": median(sizes[k]), "sized_files": len(sizes[k])}
                                 if args.text else {}))
                      for k, v in sorted(g.items())}
    if args.json:
        json.dump({"window": args.window, "max_files": args.max_files, "text": args.text,
                   "languages": rows(by_lang), "repos": rows(by_repo),
                   "patterns": {k: Counter(m["pattern"] for m in v).most_common() for k, v in misses.items()},
                   "misses": misses,
                   "failed": {f"{r['repo']}/{r['path']}": r["note"] for r in results
                              if r["note"] not in (None, "heuristic")},
                   "quarry_only": {f"{r['repo']}/{q}": 1 for r in results for q in r["quarry_only"]}},
                  sys.stdout, indent=1)
        print()
        return
    for title, table in (("language", rows(by_lang)), ("repository", rows(by_repo))):
        print(f"{title:<34} {'files':>5} {'ctags':>6} {'found':>6} {'recall':>6}   "
              f"{'aux':>5} {'found':>5} {'recall':>6}   {'quarry':>6} {'q-only':>6} {'heur':>5}"
              + (f"   {'text':>6} {'recall':>6} {'size':>5} ({'n':>3})" if args.text else ""))
        for k, v in table.items():
            fmt = lambda x: "-" if x is None else f"{x:.3f}"
            print(f"{k:<34} {v['files']:>5} {v['def']:>6} {v['def_found']:>6} {fmt(v['recall']):>6}   "
                  f"{v['aux']:>5} {v['aux_found']:>5} {fmt(v['aux_recall']):>6}   {v['quarry']:>6} "
                  f"{v['quarry_only']:>6} {v['heuristic']:>5}"
                  + (f"   {v['def_text']:>6} {fmt(v['text_recall']):>6} {fmt(v['median_size']):>5}"
                     f" ({v['sized_files']:>3})" if args.text else "")
                  + (f"  ({v['failed']} failed)" if v["failed"] else ""))
        print()
    if args.misses:
        for lang, ms in sorted(misses.items()):
            if not ms:
                continue
            counts = Counter(m["pattern"] for m in ms)
            print(f"== {lang}: {len(ms)} definitions missed{' by the text' if args.text else ''}")
            for p, n in counts.most_common():
                print(f"  {n:>5}  {p}")
            # K examples, round-robin over the patterns, most frequent first.
            queues = {p: [m for m in ms if m["pattern"] == p] for p, _ in counts.most_common()}
            shown = 0
            while shown < args.misses and any(queues.values()):
                for p in list(queues):
                    if queues[p] and shown < args.misses:
                        m = queues[p].pop(0)
                        scope = f" scope={m['scopeKind']}:{m['scope']}" if m["scope"] else ""
                        print(f"    {m['file']}:{m['line']} {m['name']} ({m['kind']}{scope})  | {m['source']}")
                        shown += 1
            print()


if __name__ == "__main__":
    main()
