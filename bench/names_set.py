#!/usr/bin/env python3
"""names_set.py — build a "name lookup" query set mechanically from a git repository.

Why: the commonest query a user types is a bare identifier (`Flask`, `url_for`, `lambdify`,
`BufStream`) and expects the definition the package itself means at rank 1. The shared sets
(/work/shared/eval) measure issue texts and web questions, not this. This script derives such a
set from a repository's own source, with mechanical rules and no hand-picked labels, so it can be
rebuilt for any commit of any Python or Rust repository.

How (the tree is read straight from git: `ls-tree -r` and `cat-file --batch`, no checkout):

Python — every package `__init__.py` outside tests/docs/examples/benchmarks/vendored folders is
parsed with `ast`. Each `from .mod import Name`, `from .sub.mod import (A, B)` (relative) or
`from pkg.mod import Name` (absolute, where `pkg` is a top-level package whose source is in this
repository — e.g. pytest's `pytest/__init__.py` importing from `_pytest`) exports `Name`, unless it
is `*`, starts with `_`, or is renamed (`as Other`; `as Name` is not a rename). The import is then
followed to the module file (`mod.py` or `mod/__init__.py`) and along any further re-exports
(explicit or `*`) until a top-level `def`/`async def`/`class` (kind `function`/`class`) or a
column-0 assignment `Name = ...` is found: kind `alias` when the value is a bare name or
attribute (`Matrix = MutableDenseMatrix`, `Catalan = S.Catalan`: the user probably wants the
aliased class, so the label is doubtful), else `assignment` (`request = LocalProxy(...)`, flask's
signals); both are kept but marked so they can be filtered (--no-assignments drops both). Names that turn out to be modules, or that cannot be followed inside the repository, are
dropped. A name that different imports resolve to different definitions is ambiguous and dropped.

Rust — every `.rs` file outside tests/benches/examples/fuzz folders (also `tests-*`, `*-test`
crates). Comments and string literals are blanked, then items are found per line
(`pub struct|enum|trait|fn|type|union|const|static NAME`, also inside macro invocations such as
`pin_project! { pub struct Name ... }`), with a brace-depth scan so that only module-level items
count (not methods in `impl`/`trait` blocks, not items inside function bodies). A name is kept
when exactly one of its module-level definitions in those files is plain `pub` (`pub(crate)` and
private items of the same name, e.g. loom shims or internal helpers, do not make it ambiguous;
two `pub` definitions — `fs::copy` and `io::copy`, cfg alternatives — do).

Output: JSONL in the format of /work/shared/eval/*.jsonl plus `kind`, sorted by id:
  {"id": "<repo>-name-<Name>", "query": "<Name>", "repo": "owner/name", "commit": "<sha>",
   "relevant": ["path"], "relevant_lines": ["path:start-end"],
   "relevant_symbols": {"path": ["<Name>"]}, "kind": "class|function|assignment|alias|struct|..."}
With --max N, N rows are taken as an even spread over the rows ordered by sha1(name), so the pick
is deterministic and not biased to the start of the alphabet.

Usage:
  names_set.py /work/.mirror/pallets+flask/repo --repo pallets/flask > flask.jsonl
  names_set.py GIT_DIR --repo owner/name [--commit SHA] [--max N] [--lang python|rust|auto]
The output is derived from third-party code: keep it out of this repository.
"""
import argparse
import ast
import bisect
import hashlib
import json
import re
import subprocess
import sys
from collections import defaultdict

# Folder names that are not the package's own source.
SKIP_DIR_RE = re.compile(
    r"^(tests?|testing|docs?|examples?|benchmarks?|benches|bench|asv_bench|fuzz|vendor|vendored|"
    r"_vendor|third_party|thirdparty|externals?|target|node_modules|\..+)([-_].+)?$"
)
SKIP_DIR_SUFFIX_RE = re.compile(r"^.+[-_](tests?|benches|examples?)$")


def skipped_path(path):
    parts = path.split("/")[:-1]
    return any(SKIP_DIR_RE.match(p) or SKIP_DIR_SUFFIX_RE.match(p) for p in parts)


class GitTree:
    """The files of one commit of a (bare) git dir, read without a checkout."""

    def __init__(self, git_dir, commit):
        self.git_dir = git_dir
        self.commit = self._git("rev-parse", "--verify", commit + "^{commit}").decode().strip()
        listing = self._git("ls-tree", "-r", "-z", self.commit)
        self.blobs = {}
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, path = entry.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755"):
                self.blobs[path.decode("utf-8", "surrogateescape")] = sha
        self._cat = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._cache = {}

    def _git(self, *args):
        return subprocess.run(["git", "--git-dir", self.git_dir, *args],
                              capture_output=True, check=True).stdout

    def paths(self):
        return sorted(self.blobs)

    def exists(self, path):
        return path in self.blobs

    def read(self, path):
        """The file's text, or None when the blob is missing from the snapshot."""
        if path in self._cache:
            return self._cache[path]
        text = None
        sha = self.blobs.get(path)
        if sha is not None:
            self._cat.stdin.write(sha + b"\n")
            self._cat.stdin.flush()
            header = self._cat.stdout.readline().split()
            if len(header) >= 3 and header[1] != b"missing":
                data = self._cat.stdout.read(int(header[2]))
                self._cat.stdout.read(1)
                text = data.decode("utf-8", "replace")
        self._cache[path] = text
        return text


# ----------------------------------------------------------------------------------------------
# Python


class PythonRepo:
    def __init__(self, tree, star_all=False):
        self.tree = tree
        self.star_all = star_all
        self._ast = {}
        self.inits = [p for p in tree.paths()
                      if p.endswith(".py") and p.rsplit("/", 1)[-1] == "__init__.py"]
        init_dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in self.inits}
        # Top-level packages: a package folder whose parent is not a package. name -> roots.
        roots = defaultdict(set)
        for d in init_dirs:
            if d == "":
                continue
            parent = d.rsplit("/", 1)[0] if "/" in d else ""
            if parent in init_dirs and parent != "":
                continue
            name = d.rsplit("/", 1)[-1]
            roots[name].add(d)
        self.top_packages = {}
        for name, dirs in roots.items():
            own = [d for d in dirs if not skipped_path(d + "/x")]
            if len(own) == 1:
                self.top_packages[name] = own[0]

    def parse(self, path):
        if path not in self._ast:
            text = self.tree.read(path)
            try:
                self._ast[path] = ast.parse(text, filename=path) if text is not None else None
            except (SyntaxError, ValueError):
                self._ast[path] = None
        return self._ast[path]

    def module_file(self, dotted_dir):
        """'a/b/c' (a module path as folders) -> 'a/b/c.py' or 'a/b/c/__init__.py' or None."""
        for cand in (dotted_dir + ".py", dotted_dir + "/__init__.py"):
            if self.tree.exists(cand):
                return cand
        return None

    def is_package_module(self, dotted_dir):
        return self.tree.exists(dotted_dir + "/__init__.py") or self.tree.exists(dotted_dir + ".py")

    def import_target(self, from_path, node):
        """The folder-path form ('src/flask/app') of an ImportFrom's module, or None if the
        module is not in this repository."""
        if node.level:
            base = from_path.split("/")[:-1]
            up = node.level - 1
            if up > len(base):
                return None
            base = base[:len(base) - up] if up else base
            parts = base + (node.module.split(".") if node.module else [])
            return "/".join(parts)
        if not node.module:
            return None
        top, *rest = node.module.split(".")
        root = self.top_packages.get(top)
        if root is None:
            return None
        return "/".join([root] + rest)

    @staticmethod
    def module_imports(tree_ast):
        """ImportFrom nodes executed at import time: the module body and the bodies of its
        top-level if/try/with blocks (not function or class bodies)."""
        out = []
        stack = list(tree_ast.body)
        while stack:
            node = stack.pop(0)
            if isinstance(node, ast.ImportFrom):
                out.append(node)
            elif isinstance(node, (ast.If, ast.Try, ast.With)) or (
                    hasattr(ast, "TryStar") and isinstance(node, ast.TryStar)):
                for field in ("body", "orelse", "finalbody"):
                    stack.extend(getattr(node, field, []) or [])
                for handler in getattr(node, "handlers", []) or []:
                    stack.extend(handler.body)
        return out

    @staticmethod
    def _is_overload(node):
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if (isinstance(target, ast.Name) and target.id == "overload") or (
                    isinstance(target, ast.Attribute) and target.attr == "overload"):
                return True
        return False

    @classmethod
    def top_definition(cls, tree_ast, name):
        """(kind, start, end) of the module's top-level definition of `name`, or None.
        A def/class wins over an assignment; among defs the last one that is not a
        `@typing.overload` stub (the one in effect at runtime); among assignments the first."""
        defs, assign = [], None
        for node in tree_ast.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name == name:
                defs.append(node)
            elif assign is None and node.col_offset == 0:
                targets = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets = [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id == name:
                        alias = isinstance(node.value, (ast.Name, ast.Attribute))
                        assign = ("alias" if alias else "assignment", node.lineno,
                                  node.end_lineno)
        if defs:
            real = [d for d in defs if not cls._is_overload(d)]
            node = (real or defs)[-1]
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            return kind, start, node.end_lineno
        return assign

    def resolve(self, module_path, name, seen=None, depth=0):
        """Follow `name` from the module at folder-path `module_path` to its definition:
        (path, kind, start, end), or None (not found, a module, or outside the repo)."""
        if depth > 12:
            return None
        seen = seen if seen is not None else set()
        path = self.module_file(module_path)
        if path is None or (path, name) in seen:
            return None
        seen.add((path, name))
        tree_ast = self.parse(path)
        if tree_ast is None:
            return None
        found = self.top_definition(tree_ast, name)
        if found is not None and found[0] not in ("assignment", "alias"):
            return (path, *found)
        # Re-exported from elsewhere (explicitly, without a rename)?
        for node in self.module_imports(tree_ast):
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.name == "*" or bound != name:
                    continue
                if alias.asname and alias.asname != alias.name:
                    return None  # renamed on the way: the label would not be `name`
                target = self.import_target(path, node)
                if target is None:
                    return None
                if self.is_package_module(target + "/" + name) and not self._defines(
                        target, name):
                    return None  # `from pkg import submodule`
                return self.resolve(target, name, seen, depth + 1)
        if found is not None:
            return (path, *found)
        # A star import may bring it.
        for node in self.module_imports(tree_ast):
            if any(a.name == "*" for a in node.names):
                target = self.import_target(path, node)
                if target is None:
                    continue
                hit = self.resolve(target, name, seen, depth + 1)
                if hit is not None:
                    return hit
        return None

    def _reexports(self, module_path, name):
        path = self.module_file(module_path)
        tree_ast = self.parse(path) if path else None
        if tree_ast is None:
            return False
        return any((a.asname or a.name) == name
                   for n in self.module_imports(tree_ast) for a in n.names)

    def package_depth(self, init):
        """0 for a top-level package's __init__.py, 1 for its subpackages', ..."""
        pkg = init.rsplit("/", 1)[0] if "/" in init else ""
        for root in self.top_packages.values():
            if pkg == root or pkg.startswith(root + "/"):
                return pkg.count("/") - root.count("/")
        return pkg.count("/") + 1

    def rows(self):
        """{name: {(path, kind, start, end): depth of the shallowest package exporting it}}
        over every package's exports."""
        found = defaultdict(dict)
        for init in self.inits:
            if skipped_path(init):
                continue
            tree_ast = self.parse(init)
            if tree_ast is None:
                continue
            for node in self.module_imports(tree_ast):
                target = self.import_target(init, node)
                if target is None:
                    continue
                if node.module is None:
                    continue  # `from . import x`: x is a submodule (or an attribute of __init__)
                names = [(a.name, a.asname) for a in node.names]
                if self.star_all and any(a.name == "*" for a in node.names):
                    names = [(n, None) for n in self.literal_all(target)]
                for name, asname in names:
                    if name == "*" or name.startswith("_"):
                        continue
                    if asname and asname != name:
                        continue
                    if self.is_package_module(target + "/" + name) and not self._defines(
                            target, name):
                        continue  # a submodule, not a definition
                    hit = self.resolve(target, name)
                    if hit is not None:
                        depth = self.package_depth(init)
                        found[name][hit] = min(depth, found[name].get(hit, depth))
        return found

    def literal_all(self, module_path):
        """The names of the module's `__all__ = [...]` (or tuple) of string literals; [] when it
        has none, or when it is computed."""
        path = self.module_file(module_path)
        tree_ast = self.parse(path) if path else None
        if tree_ast is None:
            return []
        for node in tree_ast.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                if isinstance(node.value, (ast.List, ast.Tuple)) and all(
                        isinstance(e, ast.Constant) and isinstance(e.value, str)
                        for e in node.value.elts):
                    return [e.value for e in node.value.elts]
                return []
        return []

    def _defines(self, module_path, name):
        path = self.module_file(module_path)
        tree_ast = self.parse(path) if path else None
        return tree_ast is not None and (self.top_definition(tree_ast, name) is not None
                                         or self._reexports(module_path, name))


# ----------------------------------------------------------------------------------------------
# Rust

RUST_ITEM_RE = re.compile(
    r"^[ \t]*(?P<vis>pub(?:[ \t]*\([^)]*\))?[ \t]+)?"
    r"(?:(?:default|const|async|unsafe|extern[ \t]+\"[^\"]*\"|extern)[ \t]+)*"
    r"(?P<kind>struct|enum|trait|fn|type|union|const|static)[ \t]+(?:mut[ \t]+)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)",
    re.M)


def blank_rust(text):
    """Comments, strings and char literals replaced by spaces (newlines kept), so that line
    numbers and offsets stay valid and braces inside them do not count."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.)|[^\\'\n])'", text[i:i + 16])
            if m:
                blank(i, i + len(m.group(0)))
                i += len(m.group(0))
            else:
                i += 1  # a lifetime
        else:
            i += 1
    return "".join(out)


def rust_items(text):
    """Module-level items of a Rust file: [(name, kind, is_pub, start_line, end_line)]."""
    clean = blank_rust(text)
    # Each `{` opens a block whose kind comes from the text before it (since the last `;`,
    # `{` or `}`): `mod x {` and macro invocations (`cfg_rt! {`, `pin_project! {`) are
    # transparent; everything else (fn bodies, impl/trait blocks, struct bodies, macro_rules!
    # templates) hides what is inside it.
    stack = []
    header_start = 0
    depth_transparent = []
    for i, c in enumerate(clean):
        if c == "{":
            h = clean[header_start:i].strip()
            if re.search(r"\bmacro_rules!\s*[A-Za-z_]\w*$", h):
                kind = "other"
            elif h.endswith("!"):
                kind = "macro"
            elif re.search(r"(^|\s)mod\s+[A-Za-z_]\w*$", h):
                kind = "mod"
            else:
                kind = "other"
            stack.append(kind)
            header_start = i + 1
        elif c == "}":
            if stack:
                stack.pop()
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
        depth_transparent.append(all(k in ("mod", "macro") for k in stack))
    # depth_transparent[i]: whether offset i is at module level (inside only mods/macro calls).
    line_starts = [0] + [i + 1 for i, c in enumerate(clean) if c == "\n"]

    def line_of(pos):
        return bisect.bisect_right(line_starts, pos)

    items = []
    for m in RUST_ITEM_RE.finditer(clean):
        pos = m.start("kind")
        if not depth_transparent[pos]:
            continue
        kind = m.group("kind")
        end = item_end(clean, m.end("name"), kind)
        vis = (m.group("vis") or "").strip()
        items.append((m.group("name"), kind, vis == "pub", line_of(m.start("vis") if m.group("vis")
                                                                   else pos), line_of(end)))
    return items


def item_end(clean, pos, kind):
    """Offset of the end of the item whose name ends at `pos`."""
    n = len(clean)
    paren = 0
    i = pos
    while i < n:
        c = clean[i]
        if c in "([":
            paren += 1
        elif c in ")]":
            paren -= 1
        elif c == ";" and paren <= 0:
            return i
        elif c == "{" and paren <= 0:
            if kind in ("const", "static", "type"):
                # an initializer block: skip it and keep looking for the `;`
                i = match_brace(clean, i)
            else:
                return match_brace(clean, i)
        i += 1
    return n - 1


def match_brace(clean, i):
    depth = 0
    n = len(clean)
    while i < n:
        if clean[i] == "{":
            depth += 1
        elif clean[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n - 1


def rust_rows(tree):
    defs = defaultdict(list)  # name -> [(path, kind, is_pub, start, end)]
    for path in tree.paths():
        if not path.endswith(".rs") or skipped_path(path):
            continue
        base = path.rsplit("/", 1)[-1]
        if base in ("tests.rs", "test.rs", "build.rs"):
            continue
        text = tree.read(path)
        if text is None:
            continue
        for name, kind, is_pub, start, end in rust_items(text):
            defs[name].append((path, kind, is_pub, start, end))
    found = {}
    for name, ds in defs.items():
        public = [d for d in ds if d[2]]
        if len(public) == 1 and not name.startswith("_"):
            path, kind, _, start, end = public[0]
            found[name] = {(path, kind, start, end): 0}
    return found


# ----------------------------------------------------------------------------------------------


def detect_lang(tree):
    py = sum(1 for p in tree.blobs if p.endswith(".py") and not skipped_path(p))
    rs = sum(1 for p in tree.blobs if p.endswith(".rs") and not skipped_path(p))
    return "rust" if rs > py else "python"


def spread(rows, n):
    if n is None or n >= len(rows):
        return rows
    ordered = sorted(rows, key=lambda r: hashlib.sha1(r["query"].encode()).hexdigest())
    return [ordered[(i * len(ordered)) // n] for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for the rules.")
    ap.add_argument("git_dir", help="a (bare) git dir, e.g. /work/.mirror/pallets+flask/repo")
    ap.add_argument("--repo", required=True, help="owner/name, written into each row")
    ap.add_argument("--commit", default="HEAD", help="commit to read (default HEAD)")
    ap.add_argument("--max", type=int, default=None, help="at most N rows (deterministic spread)")
    ap.add_argument("--lang", choices=["auto", "python", "rust"], default="auto")
    ap.add_argument("--star-all", action="store_true",
                    help="also export the names of `from .mod import *` when mod has a literal "
                         "__all__ (seaborn's __init__ exports only this way)")
    ap.add_argument("--top-wins", action="store_true",
                    help="Python: when a name is exported to different definitions, keep the one "
                         "exported by the shallowest package if it is alone there (sympy's `sin` "
                         "rather than plotting.intervalmath's)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="list the ambiguous names dropped on stderr")
    ap.add_argument("--no-assignments", action="store_true",
                    help="drop Python names defined by an assignment (kinds assignment and alias)")
    args = ap.parse_args()

    tree = GitTree(args.git_dir, args.commit)
    lang = detect_lang(tree) if args.lang == "auto" else args.lang
    found = PythonRepo(tree, args.star_all).rows() if lang == "python" else rust_rows(tree)
    rows, ambiguous, resolved = [], 0, 0
    for name in sorted(found):
        hits = found[name]
        if len(hits) != 1:
            shallowest = min(hits.values())
            top = [h for h, d in hits.items() if d == shallowest]
            if not (args.top_wins and len(top) == 1):
                ambiguous += 1
                if args.verbose:
                    print(f"ambiguous: {name}: " + ", ".join(
                        f"{p}:{a}-{b} (depth {d})" for (p, _, a, b), d in sorted(hits.items())),
                        file=sys.stderr)
                continue
            hits = {top[0]: shallowest}
            resolved += 1
        path, kind, start, end = next(iter(hits))
        if args.no_assignments and kind in ("assignment", "alias"):
            continue
        rows.append({
            "id": f"{args.repo}-name-{name}",
            "query": name,
            "repo": args.repo,
            "commit": tree.commit,
            "relevant": [path],
            "relevant_lines": [f"{path}:{start}-{end}"],
            "relevant_symbols": {path: [name]},
            "kind": kind,
        })
    total = len(rows)
    rows = sorted(spread(rows, args.max), key=lambda r: r["id"])
    for row in rows:
        sys.stdout.write(json.dumps(row) + "\n")
    kinds = defaultdict(int)
    for r in rows:
        kinds[r["kind"]] += 1
    print(f"names_set: {args.repo}@{tree.commit[:12]} ({lang}): {total} names, "
          f"{ambiguous} ambiguous dropped"
          f"{f' ({resolved} more kept by --top-wins)' if args.top_wins else ''}, wrote {len(rows)} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})", file=sys.stderr)


if __name__ == "__main__":
    main()
