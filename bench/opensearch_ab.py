#!/usr/bin/env python3
"""Two (or more) quarry binaries against one OpenSearch index, interleaved: the tree is indexed
once (by the last binary, `--no-embed`), then every query goes through each binary in turn, so
a machine whose load swings (shared cores) weighs on all of them alike. Prints p50/p95 of whole
`quarry search --all-repos --mode lexical -k 10 --json` processes per binary, and how many
queries got byte-identical JSON from every binary.

Usage: bench/opensearch_ab.py TREE OLD_QUARRY NEW_QUARRY [...] [--issue-repo sympy]

Queries: bench/postgres_vs_sqlite.py's short queries x 3 and the eval's first 20 issue texts of
--issue-repo (bench/opensearch_scale.py's).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

from os_server import OsCluster
from postgres_vs_sqlite import QUERIES


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("quarry", nargs="+")
    ap.add_argument("--issues", default="/work/shared/eval/swebench_dev.jsonl")
    ap.add_argument("--issue-repo", default="sympy")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in args.quarry]
    issues = []
    if os.path.exists(args.issues):
        with open(args.issues) as f:
            issues = [r["query"] for r in map(json.loads, f) if r["id"].startswith(args.issue_repo)][:20]
    with OsCluster(nodes=1, heap="4g") as cluster, tempfile.TemporaryDirectory(prefix="quarry-ab-") as work:
        url = cluster.url("ab", "")
        ws = lambda b: [b, "--index-dir", work, "--db-url", url]
        subprocess.run(ws(bins[-1]) + ["index", args.tree, "--no-embed", "--json"], check=True, capture_output=True)
        same = 0
        for label, queries, stdin in [("short", list(QUERIES) * 3, False), ("issue", issues, True)]:
            times = {b: [] for b in bins}
            for q in queries:
                outs = set()
                for b in bins:
                    argv = ws(b) + ["search", "--all-repos", "--mode", "lexical", "-k", "10", "--json"]
                    started = time.perf_counter()
                    out = subprocess.run(argv + (["--stdin"] if stdin else [q]), input=q if stdin else None,
                                         capture_output=True, text=True)
                    times[b].append((time.perf_counter() - started) * 1000)
                    outs.add(out.stdout)
                same += len(outs) == 1
            for i, b in enumerate(bins):
                t = sorted(times[b])
                print(f"{label:6} binary {i + 1} | p50 {statistics.median(t):6.0f} ms | p95 {t[max(0, int(len(t) * 0.95 + 0.5) - 1)]:6.0f} ms", flush=True)
        print(f"identical JSON from every binary: {same} of {len(QUERIES) * 3 + len(issues)} queries")


if __name__ == "__main__":
    main()
