#!/usr/bin/env python3
"""Two quarry builds on PostgreSQL, the same day: ingest, latency and answers.

Usage: bench/pg_builds.py TREE COPIES QUARRY_A QUARRY_B [...]

For each build in turn: a fresh server (pg_scale.py's settings), COPIES hard-linked copies of
TREE indexed by `quarry index --no-embed` (timed), then the 12 short queries of
postgres_vs_sqlite.py three times and the first 20 sympy issue texts of
../shared/eval/swebench_dev.jsonl, each a fresh `quarry search --mode lexical` process. The
top-10 lists (paths, lines, scores to 1e-9) of the first and last build are compared: a
change to how rows are written must not change an answer.
"""
import json, os, sys, subprocess, time, statistics
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pg_server import PgServer, SCALE_SETTINGS, index_copies
from postgres_vs_sqlite import QUERIES
tree, copies, bins = os.path.abspath(sys.argv[1]), int(sys.argv[2]), [os.path.abspath(b) for b in sys.argv[3:]]
eval_set = os.path.join(here, "..", "..", "shared", "eval", "swebench_dev.jsonl")
issues = [json.loads(l)['query'] for l in open(eval_set) if json.loads(l)['id'].startswith('sympy')][:20]
answers = {}
for b in bins:
    with PgServer(SCALE_SETTINGS) as server:
        url = server.create_database("scale")
        ws = ["--index-dir", os.path.join(server.work, "ws"), "--db-url", url]
        ingest = index_copies([b], ws, tree, copies)
        chunks = int(server.psql("scale", "SELECT count(*) FROM chunks"))
        size = int(server.psql("scale", "SELECT pg_database_size('scale')"))
        def run(text, stdin):
            t = time.perf_counter()
            args = [b] + ws + ["search"] + (["--stdin"] if stdin else [text]) + ["--mode", "lexical", "-k", "10", "--json"]
            out = subprocess.run(args, input=text if stdin else None, capture_output=True, text=True, check=True)
            return (time.perf_counter() - t) * 1000, [(r['path'], r.get('start_line'), round(r['score'], 9)) for r in json.loads(out.stdout)['results']]
        run("warm up", False)
        st, it, tops = [], [], {}
        for rep in range(3):
            for q in QUERIES:
                ms, top = run(q, False); st.append(ms); tops[q] = top
        for i, q in enumerate(issues):
            ms, top = run(q, True); it.append(ms); tops[f"issue{i}"] = top
        st.sort(); it.sort()
        print(f"{b}: {chunks:,} chunks ingest {ingest:.0f} s ({chunks/ingest:,.0f} chunks/s), {size/chunks:,.0f} bytes/chunk; "
              f"short p50 {statistics.median(st):.0f} p95 {st[int(len(st)*0.95)-1]:.0f} ms; issues p50 {statistics.median(it):.0f} "
              f"p95 {it[int(len(it)*0.95)-1]:.0f} max {max(it):.0f} ms", flush=True)
        answers[b] = tops
a, c = answers[bins[0]], answers[bins[-1]]
print("same answers", sum(1 for k in a if a[k] == c[k]), "of", len(a))
for k in a:
    if a[k] != c[k]: print("DIFF", k[:40], a[k][:2], c[k][:2])
