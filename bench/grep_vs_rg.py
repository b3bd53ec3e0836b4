#!/usr/bin/env python3
"""quarry grep vs ripgrep, and quarry sg vs the ast-grep CLI, side by side on one tree.

Usage: bench/grep_vs_rg.py TREE [--runs N] [--quarry PATH] [--ast-grep PATH]

Indexes TREE into a fresh workspace (lexical only), then for each pattern runs both tools in
TREE with stdout to a pipe (their non-terminal output): the first run after indexing ("cold":
the files are in the page cache from indexing, quarry's index is not yet) and the median of N
more ("warm"). Then the same greps through the workspace daemon (`quarry daemon start`: file
lists, file states and the index kept in memory), warm. Checks that all print the same thing
(rg with --sort path; quarry's order is path order) and, for sg, the same (file, line)
matches. Every quarry process is a fresh one, as an agent's are.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

LITERALS = [  # different selectivity in sympy
    "_print_Heaviside", "import numpy", "ZeroDivisionError", "class Matrix", "lambdify",
    "parse_expr", "MatrixSymbol", "xreplace", "evaluate=False", "TODO",
]
REGEXES = [
    r"def _eval_\w+\(self\)", r"raise (ValueError|TypeError)\(", r"\bSymbol\('x'\)",
    r"^from sympy\.core import", r"[A-Z][a-z]+Error",
]
# Patterns whose output is most of the tree (sympy's `self`, tokio's `let`: the printing is
# the work), and globs that narrow the files (`-g`, as rg reads it), each literal.
HIGH_OUTPUT = ["self", "let", "return"]
GLOBS = [("sympy/core/*.py", "def "), ("tokio/src/**/*.rs", "fn "), ("*.md", "the")]
SG_PATTERNS = [
    "$X.xreplace($$$)", "raise NotImplementedError($$$)", "isinstance($A, Symbol)",
    "def _eval_is_positive(self): $$$", "lambdify($$$)",
]


def run(cmd, cwd, env=None):
    started = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return (time.perf_counter() - started) * 1000, out.stdout, out.returncode


def timed(cmd, cwd, runs, env=None):
    cold, first, code = run(cmd, cwd, env)
    warm = [run(cmd, cwd, env)[0] for _ in range(runs)]
    return cold, statistics.median(warm), first, code


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--runs", type=int, default=10)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quarry", default=os.path.join(here, "..", "target", "release", "quarry"))
    ap.add_argument("--ast-grep", default=os.path.join(
        here, "..", "tests", "clients", "node_modules", "@ast-grep", "cli-linux-x64-gnu", "ast-grep"))
    args = ap.parse_args()
    tree = os.path.abspath(args.tree)
    rg = shutil.which("rg") or sys.exit("ripgrep not found: scripts/install-test-clients.sh installs it")
    ws = tempfile.mkdtemp(prefix="quarry-grep-bench-")
    quarry = [os.path.abspath(args.quarry), "--index-dir", ws]
    started = time.perf_counter()
    subprocess.run(quarry + ["index", tree, "--no-embed"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"indexed {tree} (lexical) in {time.perf_counter() - started:.1f} s; {os.cpu_count()} cores; {args.runs} warm runs each\n")

    # In-process first (the daemon off), then through the daemon, each a fresh process.
    alone = dict(os.environ, QUARRY_DAEMON="off")
    daemon = dict(os.environ, QUARRY_DAEMON="require")
    subprocess.run(quarry + ["daemon", "start"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"{'pattern':34} {'lines':>6} | {'rg cold':>8} {'rg warm':>8} | {'quarry cold':>11} {'quarry warm':>11} {'daemon warm':>11} | {'speed-up':>8} {'daemon':>7} | same")
    cases = [("literal", p, ["-F"]) for p in LITERALS + HIGH_OUTPUT]
    cases += [("regex", p, []) for p in REGEXES]
    cases += [("glob", p, ["-F", "-g", glob]) for glob, p in GLOBS]
    for kind, p, extra in cases:
        shown = f"{p} -g {extra[-1]}" if kind == "glob" else p
        rc, rw, rout, _ = timed([rg, "--sort", "path"] + extra + [p], tree, args.runs)
        qc, qw, qout, _ = timed(quarry + ["grep"] + extra + [p], tree, args.runs, alone)
        _, dw, dout, _ = timed(quarry + ["grep"] + extra + [p], tree, args.runs, daemon)
        # rg --sort path is single-threaded; time rg's own default (parallel) too, and
        # report the faster of the two as rg's figure.
        rc2, rw2, _, _ = timed([rg] + extra + [p], tree, args.runs)
        rc, rw = min(rc, rc2), min(rw, rw2)
        same = "yes" if rout == qout == dout else "NO"
        lines = rout.count(b"\n")
        print(f"{kind[:3]} {shown[:30]:30} {lines:>6} | {rc:7.1f}ms {rw:7.1f}ms | {qc:10.1f}ms {qw:10.1f}ms {dw:10.1f}ms | {rw / qw:7.2f}x {rw / dw:6.2f}x | {same}")

    if os.path.exists(args.ast_grep):
        print(f"\n{'sg pattern':34} {'hits':>6} | {'ast-grep warm':>13} | {'quarry sg warm':>14} | same")
        for p in SG_PATTERNS:
            _, aw, aout, _ = timed([args.ast_grep, "run", "--pattern", p, "--lang", "python", "--json=compact"], tree, args.runs)
            _, qw, qout, _ = timed(quarry + ["sg", p, "--lang", "python", "--json", "-k", "100000"], tree, args.runs, alone)
            theirs = sorted((m["file"], m["range"]["start"]["line"] + 1) for m in json.loads(aout or b"[]"))
            ours = sorted((m["path"], m["start_line"]) for m in json.loads(qout)["matches"]) if qout else []
            print(f"{p[:34]:34} {len(theirs):>6} | {aw:11.1f}ms | {qw:12.1f}ms | {'yes' if theirs == ours else 'NO (%d vs %d)' % (len(ours), len(theirs))}")
    subprocess.run(quarry + ["daemon", "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
