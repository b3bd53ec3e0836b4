#!/usr/bin/env python3
"""The PostgreSQL store beside the embedded one, on one tree, in one run.

Usage: bench/postgres_vs_sqlite.py TREE [--embed] [--queries N] [--quarry PATH]

Starts a PostgreSQL 18 server with pgvector from the test install
(scripts/install-test-postgres.sh; as root it runs as the user `quarry-pg`) on a free loopback
port, indexes TREE into a fresh embedded workspace and into a fresh database, then runs the
same lexical searches against both: one client at a time and 8 at once (a fresh `quarry`
process per search, as an agent's tool call is). Prints ingest time and chunks/s, index size,
search p50/p95, and how often both stores put the same chunk path first. Stops the server.
"""
import argparse, json, os, statistics, subprocess, threading, time

from pg_server import PgServer

QUERIES = [
    "matrix determinant", "simplify trigonometric expression", "parse_expr evaluate",
    "latex printer for integrals", "solve linear system", "series expansion at infinity",
    "Heaviside function", "lambdify numpy module", "polynomial greatest common divisor",
    "assumptions positive integer", "derivative of a function", "plot a curve",
]


def timed_searches(quarry, extra, queries, clients):
    times, tops, lock = [], {}, threading.Lock()
    work = list(queries) * 3

    def client():
        while True:
            with lock:
                if not work:
                    return
                q = work.pop()
            started = time.perf_counter()
            out = subprocess.run(quarry + extra + ["search", q, "--mode", "lexical", "-k", "10", "--json"],
                                 capture_output=True, text=True)
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                times.append(elapsed)
                if out.returncode == 0:
                    tops[q] = [r["path"] for r in json.loads(out.stdout)["results"]]
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)], tops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--embed", action="store_true", help="embed too (default: lexical index only)")
    ap.add_argument("--queries", type=int, default=len(QUERIES))
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quarry", default=os.path.join(here, "..", "target", "release", "quarry"))
    args = ap.parse_args()
    queries = QUERIES[: args.queries]
    with PgServer() as server:
        work = server.work
        url = server.create_database("bench")
        quarry = [os.path.abspath(args.quarry)]
        embed = [] if args.embed else ["--no-embed"]
        stores = {"embedded": ["--index-dir", os.path.join(work, "ws-sqlite")],
                  "postgres": ["--index-dir", os.path.join(work, "ws-pg"), "--db-url", url]}
        print(f"{args.tree}: {os.cpu_count()} cores; {'hybrid' if args.embed else 'lexical'} index; {len(queries)} queries x 3\n")
        print(f"{'store':9} | {'ingest':>8} {'chunks/s':>9} {'size':>8} | {'p50 1c':>7} {'p95 1c':>7} | {'p50 8c':>7} {'p95 8c':>7}")
        tops = {}
        for name, extra in stores.items():
            started = time.perf_counter()
            out = subprocess.run(quarry + extra + ["index", os.path.abspath(args.tree), "--json"] + embed,
                                 capture_output=True, text=True, check=True)
            ingest = time.perf_counter() - started
            chunks = json.loads(out.stdout)["repos"][0]["chunks"]
            status = json.loads(subprocess.run(quarry + extra + ["status", "--json"], capture_output=True, text=True, check=True).stdout)
            size = status["store_bytes"] / 2**20
            p50_1, p95_1, tops[name] = timed_searches(quarry, extra, queries, 1)
            p50_8, p95_8, _ = timed_searches(quarry, extra, queries, 8)
            print(f"{name:9} | {ingest:7.1f}s {chunks / ingest:9.0f} {size:6.0f}MB | {p50_1:5.1f}ms {p95_1:5.1f}ms | {p50_8:5.1f}ms {p95_8:5.1f}ms")
        same = sum(1 for q in queries if tops["embedded"].get(q, [None])[:1] == tops["postgres"].get(q, [None])[:1])
        overlap = statistics.mean(
            len(set(tops["embedded"].get(q, [])) & set(tops["postgres"].get(q, []))) / max(1, len(set(tops["embedded"].get(q, []))))
            for q in queries)
        print(f"\nsame first chunk path: {same} of {len(queries)}; mean overlap@10 of result paths: {overlap:.2f}")


if __name__ == "__main__":
    main()
