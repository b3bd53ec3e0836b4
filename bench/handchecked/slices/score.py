#!/usr/bin/env python3
"""Score `quarry slice FILE:LINE --var V --json` against hand-checked backward slices.

Each item of python_click.json names a function of pallets/click, a criterion
(line L, variable V) and the slice written by hand under the rules in README.md.
For every item this runs quarry, compares its "lines" with the hand answer and
prints precision/recall per item, the exact-match count, the means, and every
disagreement (missing and extra lines, with their source text and a kind).

Two scorings are reported:
  strict    - the hand "slice" (mutations through obj.m(...), obj.attr = x,
              d[k] = x are not definitions, as the rules say);
  mutation  - the hand "slice" plus "mutation_lines" (what a slicer that does
              track those mutations would add).

Nothing is skipped: an item quarry fails on counts as precision 0, recall 0
and is listed.  Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from datetime import date

HERE = os.path.dirname(os.path.abspath(__file__))

JUMP = re.compile(r"^(return|raise|break|continue|pass)\b")
CLAUSE = re.compile(r"^(else|finally|try|except)\b")


def function_node(tree: ast.AST, def_line: int, name: str):
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno == def_line:
            if n.name != name:
                raise SystemExit(f"def at line {def_line} is {n.name}, expected {name}")
            return n
    raise SystemExit(f"no def of {name} at line {def_line}")


def classify(line: int, src: list[str], fn, item: dict) -> str:
    """A coarse kind for a disagreeing line, to group the report."""
    text = src[line - 1].strip() if 0 < line <= len(src) else ""
    if line < fn.lineno or line > fn.end_lineno:
        deco = [d.lineno for d in fn.decorator_list]
        return "decorator" if line in deco else "outside-function"
    if line == fn.lineno:
        return "def-line"
    body_start = fn.body[0].lineno
    if fn.lineno < line < body_start:
        return "signature-continuation"
    if not text or text.startswith("#"):
        return "blank/comment"
    for sub in ast.walk(fn):
        if (sub is not fn and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
                and sub.lineno < line <= sub.end_lineno):
            return "nested-function-body"
    if text.startswith(("def ", "async def ")):
        return "nested-def"
    if line in item.get("mutation_lines", []):
        return "mutation"
    if JUMP.match(text):
        return "jump"
    if CLAUSE.match(text):
        return "try/except/else clause"
    if text.startswith("assert"):
        return "assert"
    if text.startswith(("import ", "from ")):
        return "import"
    if re.match(r"^(if|elif|while|for)\b", text):
        return "control-header"
    return "other"


def run_quarry(quarry: str, repo: str, item: dict, index_dir: str | None):
    cmd = [quarry, "slice", f"{item['file']}:{item['line']}", "--var", item["var"], "--json"]
    if index_dir:
        cmd[2:2] = ["--index-dir", index_dir]
    try:
        p = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{type(e).__name__}: {e}"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return None, f"bad JSON ({e}): {p.stdout[:200]!r}"
    lines = data.get("lines") if isinstance(data, dict) else None
    if lines is None:
        return None, f"no 'lines' in output: {p.stdout[:200]!r}"
    return sorted(set(int(x) for x in lines)), None


def pr(got: set[int], want: set[int]) -> tuple[float, float]:
    tp = len(got & want)
    p = tp / len(got) if got else 0.0
    r = tp / len(want) if want else 1.0
    return p, r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quarry", default="/work/main/target/debug/quarry")
    ap.add_argument("--repo", default="/tmp/src-click", help="checkout of pallets/click at the recorded commit")
    ap.add_argument("--answers", default=os.path.join(HERE, "python_click.json"))
    ap.add_argument("--index-dir", default=None,
                    help="passed to quarry as --index-dir (default: a fresh empty temporary folder)")
    ap.add_argument("--json", action="store_true", help="print per-item results as JSON")
    ap.add_argument("--quiet", action="store_true", help="no per-item disagreement listing")
    args = ap.parse_args()

    items = json.load(open(args.answers))
    tmp = None if args.index_dir else tempfile.TemporaryDirectory(prefix="quarry-slices-")
    index_dir = args.index_dir or tmp.name
    results = []
    kinds = {"strict": {"missing": {}, "extra": {}}}

    for n, it in enumerate(items):
        path = os.path.join(args.repo, it["file"])
        text = open(path, encoding="utf-8").read()
        src = text.splitlines()
        fn = function_node(ast.parse(text), it["def_line"], it["function"])
        want = set(it["slice"])
        want_mut = want | set(it.get("mutation_lines", []))
        got, err = run_quarry(args.quarry, args.repo, it, index_dir)
        res = {"n": n, "file": it["file"], "function": it["function"], "def_line": it["def_line"],
               "line": it["line"], "var": it["var"], "error": err}
        if err is None:
            g = set(got)
            p, r = pr(g, want)
            pm, rm = pr(g, want_mut)
            res.update(got=got, precision=p, recall=r, exact=g == want,
                       precision_mut=pm, recall_mut=rm, exact_mut=g == want_mut,
                       missing=[(l, classify(l, src, fn, it), src[l - 1].strip()) for l in sorted(want - g)],
                       extra=[(l, classify(l, src, fn, it), src[l - 1].strip() if 0 < l <= len(src) else "")
                              for l in sorted(g - want)])
            for side in ("missing", "extra"):
                for _, k, _t in res[side]:
                    kinds["strict"][side][k] = kinds["strict"][side].get(k, 0) + 1
        else:
            res.update(got=None, precision=0.0, recall=0.0, exact=False,
                       precision_mut=0.0, recall_mut=0.0, exact_mut=False, missing=[], extra=[])
        results.append(res)

    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return 0

    N = len(results)
    errors = [r for r in results if r["error"]]
    mean = lambda key: sum(r[key] for r in results) / N if N else 0.0

    print(f"quarry slice vs hand-checked slices: {N} items, {os.path.basename(args.answers)}, {date.today()}")
    print(f"{'#':>2} {'function':28} {'L':>5} {'var':16} {'P':>5} {'R':>5} {'Pm':>5} {'Rm':>5}  ok")
    for r in results:
        loc = f"{os.path.basename(r['file'])}"
        if r["error"]:
            print(f"{r['n']:>2} {r['function'][:28]:28} {r['line']:>5} {r['var'][:16]:16}  ERROR {r['error']}")
            continue
        ok = "=" if r["exact"] else ("m" if r["exact_mut"] else "")
        print(f"{r['n']:>2} {r['function'][:28]:28} {r['line']:>5} {r['var'][:16]:16} "
              f"{r['precision']:5.2f} {r['recall']:5.2f} {r['precision_mut']:5.2f} {r['recall_mut']:5.2f}  {ok}  {loc}")

    print()
    print(f"strict   (slice):                exact {sum(r['exact'] for r in results)}/{N}, "
          f"mean precision {mean('precision'):.3f}, mean recall {mean('recall'):.3f}")
    print(f"mutation (slice+mutation_lines): exact {sum(r['exact_mut'] for r in results)}/{N}, "
          f"mean precision {mean('precision_mut'):.3f}, mean recall {mean('recall_mut'):.3f}")
    tot_tp = sum(len(set(r["got"]) & set(items[r["n"]]["slice"])) for r in results if r["got"] is not None)
    tot_got = sum(len(r["got"]) for r in results if r["got"] is not None)
    tot_want = sum(len(items[r["n"]]["slice"]) for r in results)
    print(f"strict, pooled over lines:       precision {tot_tp / tot_got if tot_got else 0:.3f} "
          f"({tot_tp}/{tot_got}), recall {tot_tp / tot_want if tot_want else 0:.3f} ({tot_tp}/{tot_want})")
    # The same strict scoring with blank and comment lines dropped from quarry's answer (they are
    # never statements, so the hand answers never list them); reported beside, not instead.
    nc = []
    for r in results:
        if r["got"] is None:
            nc.append((0.0, 0.0, False))
            continue
        src = open(os.path.join(args.repo, r["file"]), encoding="utf-8").read().splitlines()
        g = {l for l in r["got"] if 0 < l <= len(src) and src[l - 1].strip()
             and not src[l - 1].strip().startswith("#")}
        w = set(items[r["n"]]["slice"])
        p, rc = pr(g, w)
        nc.append((p, rc, g == w))
    print(f"strict, blank/comment lines of quarry's answer dropped: exact {sum(x[2] for x in nc)}/{N}, "
          f"mean precision {sum(x[0] for x in nc) / N:.3f}, mean recall {sum(x[1] for x in nc) / N:.3f}")
    print(f"quarry errors: {len(errors)}" + ("" if not errors else " -> " + ", ".join(str(e['n']) for e in errors)))
    for side in ("missing", "extra"):
        ks = kinds["strict"][side]
        print(f"strict {side} lines by kind: " + (", ".join(f"{k} {v}" for k, v in sorted(ks.items(), key=lambda x: -x[1])) or "none"))

    if not args.quiet:
        print("\nDisagreements (strict; 'mutation' = line is in the item's mutation_lines):")
        for r in results:
            if r["error"] or r["exact"]:
                continue
            print(f"\n#{r['n']} {r['file']}:{r['line']} {r['function']} (def {r['def_line']}) --var {r['var']}"
                  f"  P={r['precision']:.2f} R={r['recall']:.2f}")
            for l, k, t in r["missing"]:
                print(f"   missing {l:5} [{k}] {t[:100]}")
            for l, k, t in r["extra"]:
                print(f"   extra   {l:5} [{k}] {t[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
