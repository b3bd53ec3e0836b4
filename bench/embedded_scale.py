#!/usr/bin/env python3
"""Searches on the embedded store at scale, one or two quarry builds side by side, on an index
already built in bench/opensearch_scale.py's layout (TREE hard-linked COPIES times, each copy a
repo of its own, `quarry index --no-embed`), so that a change to search can be timed without
indexing a million chunks again:

    bench/embedded_scale.py --build TREE --copies 28 --index-dir WS     # once (about 11 min here)
    bench/embedded_scale.py --index-dir WS --quarry NEW [--vs OLD]

Each search is a fresh `quarry search --all-repos --mode lexical -k 10 --json` process, as
opensearch_scale.py times them: its short queries x3 and the first 20 sympy issue texts of
swebench_dev x1 (--stdin); p50/p95 in ms. With --vs, the builds alternate query by query (so
the page cache and the machine's load are shared) and every answer is compared byte for byte.
"""
import argparse, json, os, statistics, subprocess, sys, time

from opensearch_scale import percentile
from pg_server import index_copies
from postgres_vs_sqlite import QUERIES


def search(quarry, index_dir, query, stdin):
    args = [quarry, "--index-dir", index_dir, "search", "--all-repos", "--mode", "lexical", "-k", "10", "--json"]
    started = time.perf_counter()
    out = subprocess.run(args + (["--stdin"] if stdin else [query]), input=query if stdin else None,
                         capture_output=True, text=True)
    ms = (time.perf_counter() - started) * 1000
    if out.returncode not in (0, 1):
        sys.exit(f"quarry search failed: {out.stderr}")
    return ms, out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index-dir", required=True)
    ap.add_argument("--quarry", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "quarry"))
    ap.add_argument("--vs", help="a second quarry build to time beside the first")
    ap.add_argument("--build", metavar="TREE", help="index COPIES copies of TREE into --index-dir first")
    ap.add_argument("--copies", type=int, default=28)
    ap.add_argument("--issues", default="/work/shared/eval/swebench_dev.jsonl")
    args = ap.parse_args()
    if args.build:
        seconds = index_copies([os.path.abspath(args.quarry)], ["--index-dir", args.index_dir], args.build, args.copies)
        print(f"indexed {args.copies} copies in {seconds:.0f} s")
    with open(args.issues) as f:
        issues = [r["query"] for r in map(json.loads, f) if r["id"].startswith("sympy")][:20]
    builds = [args.quarry] + ([args.vs] if args.vs else [])
    status = json.loads(subprocess.run([args.quarry, "--index-dir", args.index_dir, "status", "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    chunks = sum(r["chunks"] for r in status["repos"])
    print(f"{chunks:,} chunks in {len(status['repos'])} repos; {os.cpu_count()} cores")
    for b in builds:  # warm the page cache once
        search(b, args.index_dir, QUERIES[0], False)
    differ = 0
    for kind, queries, stdin in (("short", list(QUERIES) * 3, False), ("issue", issues, True)):
        times = {b: [] for b in builds}
        for q in queries:
            answers = []
            for b in builds:
                ms, out = search(b, args.index_dir, q, stdin)
                times[b].append(ms)
                answers.append(out)
            differ += len(set(answers)) > 1
        for b in builds:
            t = times[b]
            print(f"{kind:5} {os.path.basename(os.path.dirname(os.path.dirname(b))) + '/' + os.path.basename(b):40} "
                  f"p50 {statistics.median(t):6.0f} ms  p95 {percentile(t, 0.95):6.0f} ms  ({len(t)} searches)")
    if args.vs:
        print(f"answers that differ: {differ}")


if __name__ == "__main__":
    main()
