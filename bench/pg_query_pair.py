#!/usr/bin/env python3
"""Two quarry builds' lexical search on one PostgreSQL database, query by query in turn.

Usage: bench/pg_query_pair.py TREE COPIES QUARRY_A QUARRY_B [--bulk-wal]
       bench/pg_query_pair.py --db-url URL --index-dir DIR QUARRY_A QUARRY_B

The first form starts a server (pg_scale.py's settings; with --bulk-wal also max_wal_size 8GB
and checkpoint_timeout 15min, docs/POSTGRES.md) and indexes COPIES hard-linked copies of TREE
with QUARRY_A (`quarry index --no-embed`, timed); the second uses a database already built.
Then the 12 short queries of postgres_vs_sqlite.py three times and the first 20 sympy issue
texts of ../shared/eval/swebench_dev.jsonl, each a fresh `quarry search --mode lexical`
process, A then B for every query (so that both see the same cache and the same machine),
and the top-10 lists of A and B compared (paths, lines, scores to 1e-9): a change to how
ranking reads must not change an answer. Only for builds whose schema is the same.
"""
import argparse, json, os, statistics, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pg_scale import percentile
from pg_server import BULK_WAL_SETTINGS, PgServer, SCALE_SETTINGS, index_copies
from postgres_vs_sqlite import QUERIES


def pairs(bins, ws):
    eval_set = os.path.join(here, "..", "..", "shared", "eval", "swebench_dev.jsonl")
    issues = [json.loads(l)["query"] for l in open(eval_set) if json.loads(l)["id"].startswith("sympy")][:20]

    def run(b, text, stdin):
        started = time.perf_counter()
        args = [b] + ws + ["search"] + (["--stdin"] if stdin else [text]) + ["--mode", "lexical", "-k", "10", "--json"]
        out = subprocess.run(args, input=text if stdin else None, capture_output=True, text=True, check=True)
        top = [(r["path"], r.get("start_line"), round(r["score"], 9)) for r in json.loads(out.stdout)["results"]]
        return (time.perf_counter() - started) * 1000, top

    short, long = {b: [] for b in bins}, {b: [] for b in bins}
    tops = {b: {} for b in bins}
    for b in bins:
        run(b, "warm up", False)
    for _ in range(3):
        for q in QUERIES:
            for b in bins:
                ms, top = run(b, q, False)
                short[b].append(ms)
                tops[b][q] = top
    for i, q in enumerate(issues):
        for b in bins:
            ms, top = run(b, q, True)
            long[b].append(ms)
            tops[b][f"issue {i}"] = top
    for b in bins:
        print(f"{b}: short queries p50 {statistics.median(short[b]):.0f} p95 {percentile(short[b], 0.95):.0f} ms; "
              f"issue texts p50 {statistics.median(long[b]):.0f} p95 {percentile(long[b], 0.95):.0f} "
              f"max {max(long[b]):.0f} ms", flush=True)
    a, c = tops[bins[0]], tops[bins[1]]
    print("same answers", sum(1 for k in a if a[k] == c[k]), "of", len(a))
    for k in a:
        if a[k] != c[k]:
            print("DIFF", k[:40], a[k][:2], c[k][:2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("args", nargs="+", help="TREE COPIES QUARRY_A QUARRY_B, or QUARRY_A QUARRY_B with --db-url")
    ap.add_argument("--db-url")
    ap.add_argument("--index-dir")
    ap.add_argument("--bulk-wal", action="store_true")
    args = ap.parse_args()
    if args.db_url:
        bins = [os.path.abspath(b) for b in args.args]
        pairs(bins, ["--index-dir", args.index_dir, "--db-url", args.db_url])
        return
    tree, copies, bins = args.args[0], int(args.args[1]), [os.path.abspath(b) for b in args.args[2:]]
    settings = dict(SCALE_SETTINGS, **(BULK_WAL_SETTINGS if args.bulk_wal else {}))
    with PgServer(settings) as server:
        url = server.create_database("scale")
        ws = ["--index-dir", os.path.join(server.work, "ws"), "--db-url", url]
        ingest = index_copies([bins[0]], ws, tree, copies)
        chunks = int(server.psql("scale", "SELECT count(*) FROM chunks"))
        print(f"{bins[0]}: {chunks:,} chunks in {ingest:.0f} s ({chunks / ingest:,.0f} chunks/s)", flush=True)
        pairs(bins, ws)


if __name__ == "__main__":
    main()
