#!/usr/bin/env python3
"""Reference check of quarry's Go control-flow graphs against golang.org/x/tools/go/cfg.

For every function of the Go files given (directories are walked for *.go, skipping
vendor/, testdata/ and directories starting with "." or "_"), runs

  * the reference, bench/go_cfg/main.go (go/cfg), on all files at once, and
  * QUARRY summary FILE --mode extract --json, per file,

matches functions within a file by (start_line, end_line) and compares the two graphs at
the level of lines, robust to where each tool splits its blocks:

  1. Each tool's graph becomes nodes = blocks as line ranges (entry line = the block's
     first line, exit line = its last line), plus a virtual ENTRY and EXIT.
     go/cfg: dead (non-live) blocks are dropped; edges are followed through blocks with no
     lines (empty blocks); a live block without successors (return, panic, the implicit
     return at the closing brace) flows to EXIT. quarry: block 0 (entry) and block 1 (exit)
     become ENTRY and EXIT; go/cfg does not model deferred calls run on the way out, quarry
     sends returns to a chain of deferred-call blocks that leads to the exit by "defer"
     edges: those blocks (a source of a "defer" edge that starts on a `defer` line) are
     followed through, so returns reach EXIT directly (counted); blocks unreachable from
     the entry are dropped and counted.
  2. Normalisation of modelling choices that are not errors (all off with --no-anchor):
     - go/cfg evaluates a range clause (its RangeX/Key/Value nodes) and a for loop's init at
       the end of the block before the loop, and leaves a range loop's head empty: those
       nodes become the head's, which starts on the loop's line, as quarry's header does;
     - go/cfg has no head for a `for {` without a condition (the body is the loop): one is
       added on the `for` line;
     - go/cfg's block for a for loop's post statement (`i++`) is followed through (quarry
       counts it in the loop's header);
     - go/cfg has no node for break/continue/goto/fallthrough (the jump is the block's
       edge), for const and type declarations, nor for a bare `switch {` (its first case is
       tested in the block before): quarry's blocks lose a trailing branch line, leading or
       trailing const/type declarations and a leading bare `switch {` line (a block left
       with nothing is followed through).
  3. Chains are contracted on both sides: an edge A->B where it is A's only out-edge and
     B's only in-edge (ENTRY and EXIT count as nodes) merges A and B into one range.
  4. Compared: the edge sets written as (exit line of source, entry line of target), edges
     whose two lines are equal dropped; the "exit lines" (exit line of each range that flows
     to EXIT, i.e. where the function can be left); and the complexity each tool reports,
     also with the && / || operators of the function's tests (if/for conditions, switch
     tags, cases) added to go/cfg's (go/cfg does not split them; quarry counts each
     short-circuit operand of a test as a decision).

Differences are grouped by a best-effort category guessed from the Go source lines of each
differing edge (a line holding only closing braces is read as the line that opened it).

stdlib only. Usage:
  python3 bench/go_cfg/compare.py [--quarry BIN] [--gocfg BIN] [--json] [--limit N] PATH...
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY, EXIT = "ENTRY", "EXIT"


# ---------------------------------------------------------------- inputs


def go_files(paths):
    out = []
    for p in paths:
        if os.path.isfile(p):
            out.append(os.path.abspath(p))
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(
                d for d in dirs
                if d not in ("vendor", "testdata") and not d.startswith((".", "_"))
            )
            for f in sorted(files):
                if f.endswith(".go"):
                    out.append(os.path.abspath(os.path.join(root, f)))
    return out


def build_gocfg():
    exe = os.path.join(tempfile.gettempdir(), "quarry-bench-gocfg")
    subprocess.run(["go", "build", "-o", exe, "."], cwd=HERE, check=True)
    return exe


def run_gocfg(exe, files):
    funcs = defaultdict(list)
    errors = []
    for i in range(0, len(files), 200):
        p = subprocess.run([exe] + files[i:i + 200], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"gocfg failed ({p.returncode}): {p.stderr}")
        errors += [l for l in p.stderr.splitlines() if l.strip()]
        for line in p.stdout.splitlines():
            f = json.loads(line)
            funcs[f["file"]].append(f)
    return funcs, errors


def run_quarry(exe, files, jobs):
    def one(path):
        p = subprocess.run([exe, "summary", path, "--mode", "extract", "--json"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return path, None, p.stderr.strip().splitlines()[-1:] or ["rc %d" % p.returncode]
        try:
            return path, json.loads(p.stdout).get("flow") or [], None
        except json.JSONDecodeError as e:
            return path, None, [f"bad JSON: {e}"]

    funcs, errors = {}, []
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for path, flow, err in ex.map(one, files):
            if flow is None:
                errors.append(f"{path}: {err[0] if err else ''}")
            else:
                funcs[path] = flow
    return funcs, errors


# ---------------------------------------------------------------- graphs


class Graph:
    """Real nodes as line ranges, successor/predecessor sets with ENTRY and EXIT."""

    def __init__(self):
        self.lines = {}  # node -> (entry_line, exit_line)
        self.succ = defaultdict(set)
        self.pred = defaultdict(set)

    def add_edge(self, a, b):
        self.succ[a].add(b)
        self.pred[b].add(a)

    def contract(self):
        changed = True
        while changed:
            changed = False
            for a in sorted(self.lines, key=str):
                if a not in self.lines:
                    continue
                while len(self.succ[a]) == 1:
                    b = next(iter(self.succ[a]))
                    if b in (EXIT, a) or self.pred[b] != {a}:
                        break
                    self.lines[a] = (self.lines[a][0], self.lines[b][1])
                    self.succ[a] = set()
                    for t in self.succ.pop(b, set()):
                        self.pred[t].discard(b)
                        self.add_edge(a, t if t != b else a)
                    self.pred.pop(b, None)
                    del self.lines[b]
                    changed = True

    def edge_lines(self):
        out = set()
        for a, ts in self.succ.items():
            if a == ENTRY:
                continue
            for b in ts:
                if b == EXIT:
                    continue
                e = (self.lines[a][1], self.lines[b][0])
                if e[0] != e[1]:
                    out.add(e)
        return out

    def exit_lines(self):
        return {self.lines[a][1] for a in self.pred.get(EXIT, ()) if a != ENTRY}


def go_graph(fn, anchor, stats):
    blocks = {b["id"]: b for b in fn["blocks"]}
    live = {i for i, b in blocks.items() if b["live"]}
    lines = {i: (b["start_line"], b["end_line"]) for i, b in blocks.items()}
    succ = defaultdict(list)
    for e in fn["edges"]:
        if e["from"] in live:
            succ[e["from"]].append(e["to"])
    if anchor:
        cond_loops = {b["stmt_line"] for b in blocks.values() if b["kind"] == "ForLoop"}
        heads = {i for i in live if blocks[i]["kind"] in ("RangeLoop", "ForLoop")}
        for i in sorted(live):
            b = blocks[i]
            if b["kind"] == "ForBody" and b["stmt_line"] and b["stmt_line"] not in cond_loops:
                # A `for {` without a condition: its body is its head in go/cfg.
                h = ("for-head", i)
                lines[h] = (b["stmt_line"], b["stmt_line"])
                for s in list(succ):
                    succ[s] = [h if t == i else t for t in succ[s]]
                succ[h] = [i]
                live.add(h)
                heads.add(h)
                stats["go for-heads inserted"] += 1
        for i in live:
            # A for loop's post statement (`i++`) is part of quarry's loop header: follow
            # through it.
            if not isinstance(i, tuple) and blocks[i]["kind"] == "ForPost":
                lines[i] = (0, 0)
                stats["go for-post blocks followed through"] += 1
        for i in sorted(live, key=str):
            # The block that evaluates a range clause or a for loop's init (its trailing
            # RangeX/Key/Value or ForInit nodes) and jumps to the loop's head: those nodes
            # become the head's, which starts on the loop's line.
            nodes = blocks[i].get("nodes") or [] if i in blocks else []
            k = len(nodes)
            while k > 0 and str(nodes[k - 1][2]).startswith(("Range", "ForInit")):
                k -= 1
            if k == len(nodes) or len(succ[i]) != 1 or succ[i][0] not in heads:
                continue
            h = succ[i][0]
            line0 = lines[h][0] if isinstance(h, tuple) else blocks[h]["stmt_line"]
            lines[h] = (line0, max([lines[h][1]] + [n[1] for n in nodes[k:]]))
            lines[i] = (nodes[0][0], nodes[k - 1][1]) if k else (0, 0)
            stats["go loop heads anchored"] += 1
    real = {i for i in live if lines[i][0] > 0}

    def resolve(i, seen):
        if i in real:
            return {i}
        if not succ[i]:
            return {EXIT}
        if i in seen:
            return set()
        seen.add(i)
        out = set()
        for t in succ[i]:
            out |= resolve(t, seen)
        return out

    g = Graph()
    for i in real:
        g.lines[i] = lines[i]
        if not succ[i]:
            g.add_edge(i, EXIT)
        for t in succ[i]:
            for r in resolve(t, set()):
                g.add_edge(i, r)
    for r in resolve(0, set()):
        g.add_edge(ENTRY, r)
    return g


_BRANCH = re.compile(r"\s*(break|continue|goto|fallthrough)\b[\w\s]*(//.*)?$")
_BLANK = re.compile(r"\s*(//.*)?$")


def stmt_end(src, n):
    """The last line of the statement starting on line n (brackets balanced)."""
    depth = 0
    for k in range(n, len(src) + 1):
        code = _code(src[k - 1])
        depth += sum(code.count(c) for c in "({[") - sum(code.count(c) for c in ")}]")
        if depth <= 0:
            return k
    return n


_SWITCH_BARE = re.compile(r"\s*switch\s*\{\s*(//.*)?$")


def trim_switch(src, start, end, stats):
    """go/cfg has no node for a bare `switch {` (its first case is tested in the block before):
    take it off the start of a quarry block's lines."""
    if 1 <= start <= end <= len(src) and _SWITCH_BARE.match(src[start - 1]):
        stats["quarry bare switch lines trimmed"] += 1
        start += 1
        while start <= end and _BLANK.match(src[start - 1]):
            start += 1
        if start > end:
            return 0, 0
    return start, end


def trim_branch(src, start, end, stats):
    """go/cfg has no node for break/continue/goto/fallthrough: take a trailing one off a
    quarry block's lines; (0, 0) when the block held nothing else."""
    if not (1 <= end <= len(src)) or not _BRANCH.match(src[end - 1]):
        return start, end
    stats["quarry branch statements trimmed"] += 1
    k = end - 1
    while k >= start and k >= 1 and _BLANK.match(src[k - 1]):
        k -= 1
    return (start, k) if k >= start else (0, 0)


_DECL = re.compile(r"\s*(const|type)\b")
_DEFER = re.compile(r"\s*defer\b")


def trim_decl(src, start, end, stats):
    """go/cfg has no node for const and type declarations: take leading ones off a quarry
    block's lines; (0, 0) when the block held nothing else."""
    while 1 <= start <= end <= len(src) and _DECL.match(src[start - 1]):
        depth, k = 0, start
        while k <= end:
            code = _code(src[k - 1])
            depth += code.count("(") + code.count("{") - code.count(")") - code.count("}")
            if depth <= 0:
                break
            k += 1
        stats["quarry const/type declarations trimmed"] += 1
        k += 1
        while k <= end and _BLANK.match(src[k - 1]):
            k += 1
        if k > end:
            return 0, 0
        start = k
    # A trailing declaration: one line, or `const (` ... `)` ending the block.
    if 1 <= start <= end <= len(src):
        k = end
        if _CLOSERS.match(src[end - 1]) and ")" in src[end - 1]:
            depth = 0
            for k in range(end, start - 1, -1):
                code = _code(src[k - 1])
                depth += code.count(")") - code.count("(")
                if depth <= 0:
                    break
        if k > start and _DECL.match(src[k - 1]):
            stats["quarry const/type declarations trimmed"] += 1
            k -= 1
            while k >= start and _BLANK.match(src[k - 1]):
                k -= 1
            end = k
    return start, end


def quarry_graph(fn, stats, src=(), trim=True):
    cfgd = fn.get("cfg") or fn
    blocks = {b["id"]: b for b in cfgd.get("blocks", [])}
    succ = defaultdict(list)
    deferred = set()
    for e in cfgd.get("edges", []):
        if e.get("kind") == "defer":
            stats["quarry defer edges"] += 1
            deferred.add(e["from"])
        succ[e["from"]].append(e["to"])
    reach, todo = set(), [0]
    while todo:
        i = todo.pop()
        if i in reach:
            continue
        reach.add(i)
        todo += succ[i]
    stats["quarry unreachable blocks dropped"] += len(set(blocks) - reach - {0, 1})
    name = {0: ENTRY, 1: EXIT}
    lines = {}
    for i in reach - {0, 1}:
        b = blocks.get(i, {})
        lines[i] = (b.get("start_line", 0), b.get("end_line", 0))
        if i in deferred and 1 <= lines[i][0] <= len(src) and _DEFER.match(src[lines[i][0] - 1]) \
                and lines[i][1] == stmt_end(src, lines[i][0]):
            # A deferred call run on the way out (its "defer" edge leads on to the next
            # one or the exit): go/cfg has none, returns go straight to the exit.
            lines[i] = (0, 0)
            stats["quarry deferred-call blocks followed through"] += 1
        elif trim:
            lines[i] = trim_switch(src, *trim_decl(src, *trim_branch(src, *lines[i], stats),
                                                   stats), stats)
    real = {i for i in lines if lines[i][0] > 0}

    def resolve(i, seen):
        if i in (0, 1):
            return {name[i]}
        if i in real:
            return {i}
        if i in seen:
            return set()
        seen.add(i)
        out = set()
        for t in succ[i]:
            out |= resolve(t, seen)
        return out

    g = Graph()
    for i in real:
        g.lines[i] = lines[i]
        if not succ[i]:
            stats["quarry dead-end blocks"] += 1
        for t in succ[i]:
            for r in resolve(t, set()):
                g.add_edge(i, r)
    for t in succ[0]:
        for r in resolve(t, set()):
            if r != EXIT:
                g.add_edge(ENTRY, r)
            else:
                g.add_edge(ENTRY, EXIT)
    return g


# ---------------------------------------------------------------- categories

CATEGORIES = [
    "range ends on a comment line", "goto/label", "select", "switch/case", "labelled break/continue", "defer", "panic",
    "&&/|| operands on separate lines", "multi-line header", "range", "for without condition", "const/type declaration", "&&/||",
    "other",
]
_STR = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|\'(?:[^\'\\]|\\.)*\'')
_CLOSERS = re.compile(r"^[\s})\],;]*$")


def _code(text):
    return _STR.sub('""', text).split("//")[0]


def opener(src, n):
    """The line opening the brace closed first on line n (1-based), or n."""
    depth = 0
    for k in range(n, 0, -1):
        code = _code(src[k - 1])
        chars = reversed(code) if k != n else reversed(code[: code.rfind("}") + 1])
        for ch in chars:
            if ch == "}":
                depth += 1
            elif ch == "{":
                depth -= 1
                if depth == 0:
                    return k
    return n


def classify_line(src, n, headers=()):
    if not (1 <= n <= len(src)):
        return None
    text = src[n - 1]
    if re.match(r"\s*(//|/\*)", text):
        return "range ends on a comment line"
    if _CLOSERS.match(text) and "}" in text:
        n = opener(src, n)
        text = src[n - 1]
    code = _code(text)
    if re.match(r"\s*select\s*\{", code) or re.match(r"\s*case\b.*<-", code):
        return "select"
    if re.match(r"\s*(switch\b|case\b|default\s*:|fallthrough\b)", code):
        return "switch/case"
    prev = _code(src[n - 2]) if n >= 2 else ""
    if re.match(r"\s*goto\s", code) or re.match(r"\s*[A-Za-z_]\w*:\s*$", code) \
            or (re.match(r"\s*[A-Za-z_]\w*:\s*$", prev) and re.match(r"\s*(for|switch|select)\b", code)):
        return "goto/label"
    if re.match(r"\s*(break|continue)\s+[A-Za-z_]\w*", code):
        return "labelled break/continue"
    if re.match(r"\s*defer\b", code):
        return "defer"
    if re.search(r"\bpanic\(|\bos\.Exit\(|\blog\.Fatal", code):
        return "panic"
    if any(a <= n <= b for a, b in headers):
        if code.rstrip().endswith(("&&", "||")) or prev.rstrip().endswith(("&&", "||")):
            return "&&/|| operands on separate lines"
        return "multi-line header"
    if re.search(r"\brange\b", code):
        return "range"
    if re.match(r"\s*for\s*\{", code):
        return "for without condition"
    if re.match(r"\s*(const|type)\b", code):
        return "const/type declaration"
    if "&&" in code or "||" in code:
        return "&&/||"
    return None


def classify(src, lines, headers=()):
    found = [c for c in (classify_line(src, n, headers) for n in lines) if c]
    return min(found, key=CATEGORIES.index) if found else "other"


# ---------------------------------------------------------------- main


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="Go files or directories")
    ap.add_argument("--quarry", default="/work/main/target/debug/quarry")
    ap.add_argument("--gocfg", help="a built bench/go_cfg binary (default: go build it into $TMPDIR)")
    ap.add_argument("--json", action="store_true", help="machine output")
    ap.add_argument("--limit", type=int, default=25, help="differing functions to print (-1: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--no-anchor", action="store_true",
                    help="compare the graphs as they are: follow go/cfg's empty range heads instead of "
                         "anchoring them, add no head to condition-less for loops, keep "
                         "quarry's break/continue/goto lines")
    ap.add_argument("--quiet", action="store_true", help="no per-function lines (text mode)")
    args = ap.parse_args()

    files = go_files(args.paths)
    if not files:
        sys.exit("no Go files")
    root = os.path.commonpath([os.path.dirname(f) for f in files])
    rel = lambda p: os.path.relpath(p, root)
    gocfg = args.gocfg or build_gocfg()
    go_funcs, go_errors = run_gocfg(gocfg, files)
    q_funcs, q_errors = run_quarry(args.quarry, files, args.jobs)

    stats = Counter()
    stats["files"] = len(files)
    rows, diffs = [], []
    cat_funcs, cat_edges = Counter(), Counter()
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                src = fh.read().splitlines()
        except OSError:
            src = []
        gf, qf = go_funcs.get(path, []), q_funcs.get(path)
        stats["functions go/cfg"] += len(gf)
        if qf is None:
            stats["functions in files quarry failed on"] += len(gf)
            continue
        stats["functions quarry"] += len(qf)
        gk = Counter((f["start_line"], f["end_line"]) for f in gf)
        qk = Counter((f["start_line"], f["end_line"]) for f in qf)
        amb = {k for k, c in gk.items() if c > 1} | {k for k, c in qk.items() if c > 1}
        stats["ambiguous keys dropped"] += len(amb)
        stats["only in go/cfg (unmatched)"] += len([k for k in gk if k not in qk and k not in amb])
        stats["only in quarry (unmatched)"] += len([k for k in qk if k not in gk and k not in amb])
        qby = {(f["start_line"], f["end_line"]): f for f in qf}
        for g in gf:
            key = (g["start_line"], g["end_line"])
            if key in amb or key not in qby:
                continue
            q = qby[key]
            gg = go_graph(g, not args.no_anchor, stats)
            qg = quarry_graph(q, stats, src, not args.no_anchor)
            gg.contract()
            qg.contract()
            ge, qe = gg.edge_lines(), qg.edge_lines()
            gx, qx = gg.exit_lines(), qg.exit_lines()
            row = {
                "file": rel(path), "name": g["name"], "start_line": key[0], "end_line": key[1],
                "edges_go": len(ge), "edges_quarry": len(qe), "edges_common": len(ge & qe),
                "edges_equal": ge == qe, "exits_equal": gx == qx,
                "complexity_go": g["complexity"], "complexity_quarry": q.get("complexity"),
            }
            row["complexity_equal"] = row["complexity_go"] == row["complexity_quarry"]
            stats["functions compared"] += 1
            stats["edge sets equal"] += row["edges_equal"]
            stats["exit lines equal"] += row["exits_equal"]
            stats["edges and exits equal"] += row["edges_equal"] and row["exits_equal"]
            stats["complexity equal"] += row["complexity_equal"]
            tsc, csc = g.get("test_short_circuits", 0), g.get("case_short_circuits", 0)
            stats["complexity equal counting go/cfg's tests' && / || as decisions"] += (
                row["complexity_quarry"] == g["complexity"] + tsc)
            stats["complexity equal counting && / || of if/for tests only (not cases)"] += (
                row["complexity_quarry"] == g["complexity"] + tsc - csc)
            stats["edges go/cfg"] += len(ge)
            stats["edges quarry"] += len(qe)
            stats["edges common"] += len(ge & qe)
            rows.append(row)
            if row["edges_equal"] and row["exits_equal"] and row["complexity_equal"]:
                continue
            hdrs = [tuple(h) for h in g.get("multiline_headers") or []]
            items = []
            for side, es in (("go/cfg", ge - qe), ("quarry", qe - ge)):
                for a, b in sorted(es):
                    c = classify(src, [a, b], hdrs)
                    items.append({"only": side, "edge": [a, b], "category": c})
            for side, xs in (("go/cfg", gx - qx), ("quarry", qx - gx)):
                for a in sorted(xs):
                    c = classify(src, [a], hdrs)
                    items.append({"only": side, "exit_line": a, "category": c})
            for it in items:
                cat_edges[it["category"]] += 1
            fcat = classify(src, [n for it in items for n in it.get("edge", [it.get("exit_line")])],
                            hdrs)
            if not items:
                if row["complexity_quarry"] == g["complexity"] + tsc:
                    fcat = "complexity only: quarry counts && / || operands of tests"
                elif row["complexity_quarry"] == g["complexity"] + tsc - csc:
                    fcat = "complexity only: quarry counts && / || of if/for tests, not of cases"
                else:
                    fcat = "complexity only: " + classify(src, range(key[0], key[1] + 1), hdrs)
            row["category"] = fcat
            cat_funcs[fcat] += 1
            diffs.append({**row, "differences": items,
                          "src": {n: src[n - 1].strip() for it in items
                                  for n in it.get("edge", [it.get("exit_line")])
                                  if 1 <= n <= len(src)}})

    report = {
        "totals": dict(stats),
        "errors": {"gocfg": go_errors, "quarry": q_errors},
        "differing_functions_by_category": dict(cat_funcs.most_common()),
        "differing_items_by_category": dict(cat_edges.most_common()),
        "functions": rows,
        "differences": diffs,
    }
    if args.json:
        json.dump(report, sys.stdout, indent=1, default=str)
        print()
        return

    if not args.quiet:
        for r in rows:
            mark = "=" if r["edges_equal"] and r["exits_equal"] else "!"
            print(f"{mark} {r['file']}:{r['start_line']}-{r['end_line']} {r['name']}: edges "
                  f"go/cfg {r['edges_go']} quarry {r['edges_quarry']} common {r['edges_common']}"
                  f"; exits {'same' if r['exits_equal'] else 'differ'}; complexity "
                  f"{r['complexity_go']}/{r['complexity_quarry']}")
        print()
    limit = len(diffs) if args.limit < 0 else args.limit
    order = sorted(diffs, key=lambda d: (CATEGORIES.index(d["category"])
                                         if d["category"] in CATEGORIES else len(CATEGORIES),
                                         d["file"], d["start_line"]))
    # Print round-robin over categories so every category shows up within the limit.
    by_cat = defaultdict(list)
    for d in order:
        by_cat[d["category"]].append(d)
    shown, picked = 0, []
    while shown < limit and any(by_cat.values()):
        for c in list(by_cat):
            if by_cat[c] and shown < limit:
                picked.append(by_cat[c].pop(0))
                shown += 1
    picked.sort(key=lambda d: (CATEGORIES.index(d["category"])
                               if d["category"] in CATEGORIES else len(CATEGORIES),
                               d["file"], d["start_line"]))
    print(f"Differing functions ({len(diffs)}; showing {len(picked)}):")
    for d in picked:
        print(f"\n[{d['category']}] {d['file']}:{d['start_line']} {d['name']}  complexity "
              f"go/cfg {d['complexity_go']} quarry {d['complexity_quarry']}")
        for it in d["differences"]:
            if "edge" in it:
                a, b = it["edge"]
                print(f"  only {it['only']:<6} edge {a}->{b}  [{it['category']}]  "
                      f"{d['src'].get(a, '')!r} -> {d['src'].get(b, '')!r}")
            else:
                a = it["exit_line"]
                print(f"  only {it['only']:<6} exit {a}  [{it['category']}]  {d['src'].get(a, '')!r}")
    print("\nDiffering functions by category:")
    for c, n in cat_funcs.most_common():
        print(f"  {n:5d}  {c}")
    print("Differing edges/exit lines by category:")
    for c, n in cat_edges.most_common():
        print(f"  {n:5d}  {c}")
    if go_errors or q_errors:
        print("\nErrors:")
        for e in go_errors:
            print("  gocfg:", e)
        for e in q_errors:
            print("  quarry:", e)
    print("\nTotals:")
    for k, v in stats.items():
        print(f"  {k}: {v}")
    n = stats["functions compared"] or 1
    print(f"  => edge sets equal {stats['edge sets equal']}/{stats['functions compared']} "
          f"({100 * stats['edge sets equal'] / n:.1f}%), edges+exits equal "
          f"{stats['edges and exits equal']}, complexity equal {stats['complexity equal']}"
          f" ({100 * stats['complexity equal'] / n:.1f}%)")


if __name__ == "__main__":
    main()
