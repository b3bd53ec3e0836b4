#!/usr/bin/env python3
"""The four stores side by side in one run: the embedded SQLite file, PostgreSQL, OpenSearch on
one node and on three — ingest, bytes per chunk, search latency as whole `quarry search`
processes, and kNN recall@10 of OpenSearch's HNSW against the exact scan on real embeddings.

Usage: bench/opensearch_scale.py TREE [--copies 3] [--issues EVAL.jsonl --issue-repo sympy]
                                 [--real-vectors INDEX.sqlite ...] [--queries 100] [--vector-copies N]
                                 [--stores embedded,postgres,os1,os3] [--quarry PATH]

The corpus is bench/pg_scale.py's layout: TREE hard-linked into COPIES folders, each indexed by
`quarry index --no-embed` as a repo of its own (pg_server.index_copies: quarry's own write path,
so the ingest time is quarry's), into each store in turn:

- embedded: a workspace's SQLite file;
- postgres: a fresh PostgreSQL 18 + pgvector (bench/pg_server.py, pg_scale's settings);
- os1: one OpenSearch node (bench/os_server.py), 4 GB heap, one shard per index;
- os3: three OpenSearch nodes, 2 GB heap each, 3 shards x 1 replica (`?shards=3&replicas=1`).

Then per store (OpenSearch: once the merges the ingest left running have ended): the short
queries of bench/postgres_vs_sqlite.py (x3) and the eval's issue texts
of `--issue-repo` (x1), each as a fresh `quarry search --mode lexical -k 10` process (--stdin for
issue texts); p50/p95 in ms. Bytes: the SQLite file, pg_database_size, the cluster's store size
(all copies; primaries alone in brackets).

Recall (os1 and os3, `--real-vectors`): every chunk vector of the given quarry workspaces (their
SQLite files, embedded by quarry's model) goes into an index with quarry's vector mapping
(Lucene HNSW, cosine, m 16, ef_construction 128; schema.rs) and QUERIES of them, drawn at random,
are held out as queries. Recall@10 of the kNN search as quarry sends it (k = 100, the ten best
kept: read.rs's `candidates`) and with k = 10, against the exact scan (the k-NN plugin's
`knn_score` script over every vector), unfiltered and filtered to the query's own repo (the
filter inside the kNN search, as quarry sends it).
"""
import argparse, json, os, random, sqlite3, statistics, struct, subprocess, sys, time

from os_server import OsCluster
from pg_server import PgServer, SCALE_SETTINGS, index_copies
from postgres_vs_sqlite import QUERIES


def percentile(values, p):
    values = sorted(values)
    return values[max(0, int(len(values) * p + 0.5) - 1)]


def searches(quarry, workspace, queries, stdin):
    times = []
    for q in queries:
        started = time.perf_counter()
        args = quarry + workspace + ["search", "--all-repos", "--mode", "lexical", "-k", "10", "--json"]
        out = subprocess.run(args + (["--stdin"] if stdin else [q]), input=q if stdin else None,
                             capture_output=True, text=True)
        times.append((time.perf_counter() - started) * 1000)
        if out.returncode not in (0, 1):  # 1: no results
            sys.exit(f"quarry search failed: {out.stderr}")
    return statistics.median(times), percentile(times, 0.95)


def chunk_count(quarry, workspace):
    status = json.loads(subprocess.run(quarry + workspace + ["status", "--json"], capture_output=True,
                                       text=True, check=True).stdout)
    return sum(r["chunks"] for r in status["repos"])


def measure(name, quarry, workspace, args, issues, size_of, settle=None):
    ingest = index_copies(quarry, workspace, args.tree, args.copies)
    chunks = chunk_count(quarry, workspace)
    size, note = size_of()
    if settle:  # searches are timed at rest, not beside the merges the ingest left running
        settle()
    searches(quarry, workspace, QUERIES[:2], False)  # warm the server's caches once
    short = searches(quarry, workspace, list(QUERIES) * 3, False)
    issue = searches(quarry, workspace, issues, True) if issues else (0, 0)
    row = (f"{name:9} | {chunks:>9,} {ingest:>7.0f}s {chunks / ingest:>8,.0f} | {size / chunks:>7,.0f}{note:>10} | "
           f"{short[0]:>6.0f} {short[1]:>6.0f} | {issue[0]:>6.0f} {issue[1]:>6.0f}")
    print(row, flush=True)
    return row


def real_vectors(paths):
    rows = []
    for source, path in enumerate(paths):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows += [(source * 1000 + repo, key, blob) for repo, key, blob in db.execute(
            """SELECT min(f.repo_id), e.hash, e.vector FROM embeddings e
               JOIN chunks c ON c.embed_hash = e.hash JOIN files f ON f.id = c.file_id GROUP BY e.hash""")]
    return rows


def recall(cluster, name, rows, args, copies=1):
    """Recall@10 of HNSW against the exact scan. COPIES > 1: the corpus (the real vectors less
    the held-out queries) is stored COPIES times, each copy a repo of its own, and each query is
    searched filtered to one copy drawn at random: its ten nearest are distinct real vectors,
    found in a graph over every copy (unfiltered, the nearest would be COPIES equal vectors)."""
    cluster.request("DELETE", "/recall*")
    dims = len(rows[0][2]) // 4
    rng = random.Random(7)
    rows = list(rows)
    rng.shuffle(rows)
    held, corpus = rows[:args.queries], rows[args.queries:]
    if copies > 1:
        corpus = [(c, f"{key}-{c}", blob) for c in range(copies) for _, key, blob in corpus]
    shards = {"number_of_shards": 3, "number_of_replicas": 1} if len(cluster.http_ports) > 1 else {"number_of_shards": 1, "number_of_replicas": 0}
    cluster.request("PUT", "/recall", {
        "settings": {"index": dict(shards, knn=True)},
        "mappings": {"properties": {"repo": {"type": "long"}, "vec": {
            "type": "knn_vector", "dimension": dims,
            "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
                       "parameters": {"m": 16, "ef_construction": 128}}}}}})
    started = time.perf_counter()
    for i in range(0, len(corpus), 500):
        lines = []
        for repo, key, blob in corpus[i:i + 500]:
            lines.append(json.dumps({"index": {"_index": "recall", "_id": key}}))
            lines.append(json.dumps({"repo": repo, "vec": [round(x, 7) for x in struct.unpack(f"<{dims}f", blob)]}))
        cluster.request("POST", "/_bulk", ("\n".join(lines) + "\n").encode())
        if i % 100_000 == 0 and copies > 1:
            print(f"  recall: {i:,} of {len(corpus):,} vectors loaded", file=sys.stderr, flush=True)
    cluster.request("POST", "/recall/_refresh")
    loaded = time.perf_counter() - started

    def top(vector, k, repo, exact):
        if exact:
            query = {"script_score": {"query": {"term": {"repo": repo}} if repo is not None else {"match_all": {}},
                                      "script": {"source": "knn_score", "lang": "knn", "params": {
                                          "field": "vec", "query_value": vector, "space_type": "cosinesimil"}}}}
        else:
            knn = {"vector": vector, "k": k}
            if repo is not None:
                knn["filter"] = {"term": {"repo": repo}}
            query = {"knn": {"vec": knn}}
        started = time.perf_counter()
        answer = cluster.request("POST", "/recall/_search", {"size": 10, "_source": False, "query": query})
        return [h["_id"] for h in answer["hits"]["hits"]], (time.perf_counter() - started) * 1000

    queries = [(list(struct.unpack(f"<{dims}f", blob)), rng.randrange(copies) if copies > 1 else repo)
               for repo, _, blob in held]
    repos = {}
    for repo, _, _ in corpus:
        repos[repo] = repos.get(repo, 0) + 1
    print(f"\n{name}: {len(corpus):,} real vectors x {dims} from {len(args.real_vectors)} workspaces "
          f"({len(repos)} {'copies' if copies > 1 else 'repos'}, {min(repos.values()):,}-{max(repos.values()):,} vectors each); "
          f"loaded in {loaded:.0f} s; {len(held)} held out as queries")
    print(f"{'search':28} | {'recall@10':>9} | {'p50':>7} {'p95':>7}")
    for filtered in ((True,) if copies > 1 else (False, True)):
        exact = [top(v, 10, repo if filtered else None, True) for v, repo in queries]
        label = ("filtered to one copy" if copies > 1 else "filtered to its repo") if filtered else "unfiltered"
        print(f"{'exact scan, ' + label:28} | {1:9.3f} | {statistics.median([t for _, t in exact]):5.1f}ms "
              f"{percentile([t for _, t in exact], 0.95):5.1f}ms")
        for k in (10, 100):
            found = [top(v, k, repo if filtered else None, False) for v, repo in queries]
            r = statistics.mean(len(set(a) & set(b)) / max(1, len(b)) for (a, _), (b, _) in zip(found, exact))
            ms = [t for _, t in found]
            print(f"{f'HNSW k={k}, ' + label:28} | {r:9.3f} | {statistics.median(ms):5.1f}ms {percentile(ms, 0.95):5.1f}ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--issues", default="/work/shared/eval/swebench_dev.jsonl")
    ap.add_argument("--issue-repo", default="sympy")
    ap.add_argument("--issue-count", type=int, default=20)
    ap.add_argument("--real-vectors", nargs="*", default=[])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--vector-copies", type=int, default=1,
                    help="also measure recall with the real vectors stored this many times (os1 only)")
    ap.add_argument("--stores", default="embedded,postgres,os1,os3")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quarry", default=os.path.join(here, "..", "target", "release", "quarry"))
    args = ap.parse_args()
    quarry = [os.path.abspath(args.quarry)]
    issues = []
    if args.issues and os.path.exists(args.issues):
        with open(args.issues) as f:
            issues = [r["query"] for r in map(json.loads, f) if r["id"].startswith(args.issue_repo)][:args.issue_count]
    vectors = real_vectors(args.real_vectors) if args.real_vectors else []
    print(f"{args.copies} copies of {args.tree}; {os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; "
          f"lexical `quarry search` processes: {len(QUERIES)} short queries x 3, {len(issues)} {args.issue_repo} issue texts x 1\n")
    print(f"{'store':9} | {'chunks':>9} {'ingest':>8} {'chunks/s':>8} | {'bytes/chunk':>17} | {'short p50':>6} {'p95':>6} | {'issue p50':>6} {'p95':>6}")
    rows = []
    for store in args.stores.split(","):
        if store == "embedded":
            import tempfile
            with tempfile.TemporaryDirectory(prefix="quarry-scale-") as work:
                ws = ["--index-dir", work]
                def size():
                    return sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work)
                               if f.startswith("index.sqlite")), ""
                rows.append(measure("embedded", quarry, ws, args, issues, size))
        elif store == "postgres":
            with PgServer(SCALE_SETTINGS) as server:
                url = server.create_database("scale")
                ws = ["--index-dir", os.path.join(server.work, "ws"), "--db-url", url]
                size = lambda: (int(server.psql("scale", "SELECT pg_database_size('scale')")), "")
                rows.append(measure("postgres", quarry, ws, args, issues, size))
        elif store in ("os1", "os3"):
            three = store == "os3"
            with OsCluster(nodes=3 if three else 1, heap="2g" if three else "4g") as cluster:
                import tempfile
                with tempfile.TemporaryDirectory(prefix="quarry-scale-") as work:
                    url = cluster.url("scale", "?shards=3&replicas=1" if three else "")
                    ws = ["--index-dir", work, "--db-url", url]

                    def size():
                        total = cluster.get("/scale-*/_stats/store")["_all"]
                        primaries = total["primaries"]["store"]["size_in_bytes"]
                        everything = total["total"]["store"]["size_in_bytes"]
                        return everything, f" ({primaries / chunk_count(quarry, ws):,.0f})" if three else ""
                    def settle():
                        started = time.perf_counter()
                        while time.perf_counter() - started < 900:
                            merging = cluster.get("/scale-*/_stats/merge")["_all"]["total"]["merges"]["current"]
                            if merging == 0:
                                break
                            time.sleep(2)
                        print(f"  {store}: merges settled {time.perf_counter() - started:.0f} s after ingest",
                              file=sys.stderr, flush=True)
                    rows.append(measure(store, quarry, ws, args, issues, size, settle))
                if vectors:
                    recall(cluster, store, vectors, args)
                    if args.vector_copies > 1 and not three:
                        recall(cluster, store, vectors, args, args.vector_copies)
        else:
            sys.exit(f"unknown store {store}")


if __name__ == "__main__":
    main()
