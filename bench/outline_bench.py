#!/usr/bin/env python3
"""outline_bench.py — are quarry's text outlines small, complete and quick on real files and on
pathological ones?

Why: the Claude Code hook hands an agent a file's outline instead of the file (docs/HOOK.md); an
outline is worth it only while it is much smaller than the file, names every definition with its
line (an agent asks for exact lines next), and comes back fast (the hook gives up at 3 s).

What it measures, with `quarry summary FILE` (text) and `quarry summary FILE --json` (the items):
  real files   every code file of 3 KB or more (the hook's threshold) under each REPO_DIR:
               - size: outline characters / file characters (p50, p95, max, and how many files
                 pass 10 %);
               - complete: each JSON item's `name` appears in the text on a line that also
                 carries its start line, or is counted in a `… N more` / `(+N)` mark; an item
                 missing from both is a loss (reported with examples), definitions inside
                 functions and test modules included (issue 64: named, no longer counted);
               - time: per-process wall time of the text summary (p50, max).
  pathological generated files (in a temp dir): 1,000 one-line Python functions; ~1 MB of
               one-line functions; a 2.7 MB class of ~48,000 methods; 100,000 nested braces in
               JavaScript: size against the hard bound (the budget, max(600, 8 % of the
               file), or what the names take up to max(1,200, 20 % of the file)), and time.

Usage:
  outline_bench.py [--quarry BIN] [--max-files N] [--json] REPO_DIR...
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CODE = {".py", ".rs", ".go", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".java", ".c", ".h", ".cc",
        ".cpp", ".hpp", ".cs", ".rb", ".php"}
SKIP = {"node_modules", "vendor", "third_party", "dist", "build", ".git", "target"}
MIN_BYTES = 3 * 1024


def files_of(root, limit):
    found = []
    for base, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
        for name in sorted(names):
            path = os.path.join(base, name)
            if os.path.splitext(name)[1] in CODE and ".min." not in name:
                try:
                    if os.path.getsize(path) >= MIN_BYTES:
                        found.append(path)
                except OSError:
                    pass
    if len(found) > limit:
        step = len(found) / limit
        found = [found[int(i * step)] for i in range(limit)]
    return found


def summary(quarry, path, json_out=False):
    args = [quarry, "--index-dir", "/nonexistent-quarry-ws", "summary", path]
    if json_out:
        args.append("--json")
    env = dict(os.environ, QUARRY_DAEMON="off", NO_COLOR="1")
    started = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    return out.stdout, time.perf_counter() - started, out.returncode


def missing_items(text, items):
    """JSON items the text neither shows (name on a line with its start line) nor counts."""
    counted = sum(int(n) for n in re.findall(r"… (\d+) more", text))
    counted += sum(int(n) for n in re.findall(r"\(\+(\d+)(?: nested)?\)", text))
    lines = text.splitlines()
    missing = []
    for item in items:
        name, start = item["name"], str(item["start_line"])
        shown = any(name in line and re.search(rf"(^|[\s:,(]){start}([-\s,)]|$)", line)
                    for line in lines)
        if not shown:
            missing.append(item)
    return missing if len(missing) > counted else []


def pct(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def real_files(quarry, repos, limit):
    report = {}
    for repo in repos:
        ratios, times, losses, over = [], [], [], []
        for path in files_of(repo, limit):
            size = len(open(path, encoding="utf-8", errors="replace").read())
            text, elapsed, code = summary(quarry, path)
            if code != 0 or not text:
                continue
            body = "\n".join(l for l in text.splitlines() if not l.startswith("(shortened"))
            ratio = len(body) / max(size, 1)
            ratios.append(ratio)
            times.append(elapsed)
            if ratio > 0.10:
                over.append((os.path.relpath(path, repo), round(ratio, 3)))
            out, _, _ = summary(quarry, path, json_out=True)
            try:
                items = json.loads(out)["items"]
            except (ValueError, KeyError):
                continue
            for item in missing_items(text, items):
                losses.append(f"{os.path.relpath(path, repo)}:{item['start_line']} {item['name']}")
        report[os.path.basename(repo.rstrip("/"))] = {
            "files": len(ratios),
            "ratio_p50": round(pct(ratios, 0.5), 4),
            "ratio_p95": round(pct(ratios, 0.95), 4),
            "ratio_max": round(max(ratios, default=0), 4),
            "over_10pct": len(over),
            "over_examples": over[:5],
            "lost_definitions": len(losses),
            "lost_examples": losses[:8],
            "time_p50_ms": round(pct(times, 0.5) * 1000, 1),
            "time_max_ms": round(max(times, default=0) * 1000, 1),
        }
    return report


def pathological(quarry):
    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, text):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            return path

        made = {
            "1000 one-line functions (py)": write(
                "thousand.py", "".join(f"def f_{i}(a, b): return a + b + {i}\n" for i in range(1000))),
            "1 MB of one-line functions (py)": write(
                "mega.py", "".join(f"def function_number_{i}(a, b): return a + b + {i}\n"
                                   for i in range(19_000))),
            "2.7 MB class of 48k methods (py)": write(
                "class.py", "class Big:\n" + "".join(
                    f"    def method_{i}(self, a):\n        return a + {i}\n" for i in range(48_600))),
            "100k nested braces (js)": write(
                "braces.js", "function f() " + "{\n" * 100_000 + "}\n" * 100_000),
        }
        for label, path in made.items():
            size = len(open(path).read())
            text, elapsed, code = summary(quarry, path)
            body = "\n".join(l for l in text.splitlines() if not l.startswith("(shortened"))
            bound = max(600, size * 8 // 100, 1200, size * 20 // 100)
            cases[label] = {
                "file_chars": size,
                "outline_chars": len(body),
                "bound": bound,
                "within": len(body) <= bound,
                "seconds": round(elapsed, 3),
                "exit": code,
            }
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="*")
    parser.add_argument("--quarry", default="target/release/quarry")
    parser.add_argument("--max-files", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = {"real": real_files(args.quarry, args.repos, args.max_files),
              "pathological": pathological(args.quarry)}
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return
    print(f"{'repo':<14} {'files':>5} {'p50':>6} {'p95':>6} {'max':>6} {'>10%':>5} "
          f"{'lost':>5} {'ms p50':>7} {'ms max':>7}")
    for repo, r in result["real"].items():
        print(f"{repo:<14} {r['files']:>5} {r['ratio_p50']:>6.3f} {r['ratio_p95']:>6.3f} "
              f"{r['ratio_max']:>6.3f} {r['over_10pct']:>5} {r['lost_definitions']:>5} "
              f"{r['time_p50_ms']:>7} {r['time_max_ms']:>7}")
        for example in r["over_examples"]:
            print(f"    over 10%: {example[0]} {example[1]}")
        for example in r["lost_examples"]:
            print(f"    lost: {example}")
    print()
    for label, c in result["pathological"].items():
        print(f"{label:<34} {c['file_chars']:>9} chars → {c['outline_chars']:>7} "
              f"(bound {c['bound']}, {'within' if c['within'] else 'OVER'}) {c['seconds']} s")


if __name__ == "__main__":
    main()
