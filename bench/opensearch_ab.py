#!/usr/bin/env python3
"""Two (or more) quarry binaries against one OpenSearch index, interleaved: the tree is indexed
once (by the last binary, `--no-embed`), then every query goes through each binary in turn, so
a machine whose load swings (shared cores) weighs on all of them alike. Prints p50/p95 of whole
`quarry search --all-repos --mode lexical -k 10 --json` processes per binary, and how many
queries got byte-identical JSON from every binary.

Usage: bench/opensearch_ab.py TREE OLD_QUARRY NEW_QUARRY [...] [--issue-repo sympy] [--own-index]

--own-index: each binary indexes the tree into an index of its own (binaries of different
schema versions cannot share one); the ingest time of each is printed too.

Queries: bench/postgres_vs_sqlite.py's short queries x 3 and the eval's first 20 issue texts of
--issue-repo (bench/opensearch_scale.py's).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

from os_server import OsCluster
from postgres_vs_sqlite import QUERIES


def comparable(stdout):
    """The answer less when each index was written (`indexed_at`), which differs between own
    indexes."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k != "indexed_at"}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    try:
        return json.dumps(strip(json.loads(stdout)), sort_keys=True)
    except ValueError:
        return stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("quarry", nargs="+")
    ap.add_argument("--issues", default="/work/shared/eval/swebench_dev.jsonl")
    ap.add_argument("--issue-repo", default="sympy")
    ap.add_argument("--own-index", action="store_true")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in args.quarry]
    issues = []
    if os.path.exists(args.issues):
        with open(args.issues) as f:
            issues = [r["query"] for r in map(json.loads, f) if r["id"].startswith(args.issue_repo)][:20]
    with OsCluster(nodes=1, heap="4g") as cluster, tempfile.TemporaryDirectory(prefix="quarry-ab-") as work:
        def ws(b):
            n = bins.index(b) if args.own_index else 0
            folder = os.path.join(work, str(n))
            os.makedirs(folder, exist_ok=True)
            return [b, "--index-dir", folder, "--db-url", cluster.url(f"ab{n}", "")]
        for b in (bins if args.own_index else bins[-1:]):
            started = time.perf_counter()
            subprocess.run(ws(b) + ["index", args.tree, "--no-embed", "--json"], check=True, capture_output=True)
            print(f"index  binary {bins.index(b) + 1} | {time.perf_counter() - started:6.1f} s", flush=True)
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
                    outs.add(comparable(out.stdout))
                same += len(outs) == 1
            for i, b in enumerate(bins):
                t = sorted(times[b])
                print(f"{label:6} binary {i + 1} | p50 {statistics.median(t):6.0f} ms | p95 {t[max(0, int(len(t) * 0.95 + 0.5) - 1)]:6.0f} ms", flush=True)
        print(f"identical JSON from every binary: {same} of {len(QUERIES) * 3 + len(issues)} queries")


if __name__ == "__main__":
    main()
