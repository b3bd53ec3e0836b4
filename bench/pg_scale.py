#!/usr/bin/env python3
"""PostgreSQL at a million chunks: ingest, HNSW recall and latency, lexical latency.

Usage: bench/pg_scale.py TREE [--copies 50] [--dims 384] [--queries 50] [--quarry PATH] [--lexical-only]
                         [--issues EVAL.jsonl --issue-repo sympy --issue-count 20]
       bench/pg_scale.py --vectors-only 1000000 [--clusters 2000] [--dims 384] [--queries 50]
       bench/pg_scale.py --real-vectors INDEX.sqlite [INDEX.sqlite ...] [--queries 200]
                         [--m 16] [--ef-construction 64]

Builds a synthetic corpus the size of a large monorepo from one real tree: TREE is hard-linked
into COPIES folders and each is indexed by `quarry index --no-embed` into one PostgreSQL database
(quarry's own COPY path, so the ingest time is quarry's). Every stored chunk text then gets a
random vector of DIMS dimensions (no model could embed a million chunks on a laptop in a bench's
time; random vectors are the hard case for HNSW, real embeddings cluster), and the HNSW index is
built with the statement quarry uses (crates/quarry-postgres/src/lib.rs). Then, for QUERIES
random query vectors: the exact top 10 (sequential scan) against HNSW's at several
`hnsw.ef_search` values — recall@10 and p50/p95 — and the sympy lexical queries of
bench/postgres_vs_sqlite.py through `quarry search` (a fresh process each).

Uniform random vectors have no structure at all (every cosine is near 0), the worst case for
any graph index. `--vectors-only N --clusters K` skips the corpus and measures HNSW on N vectors
drawn around K random centres (each coordinate: the centre's plus uniform noise of half its
spread), queries drawn the same way: closer to real embeddings, which cluster by topic.

`--real-vectors` measures HNSW on real embeddings: every chunk vector and commit vector of the
given quarry workspaces (their SQLite files, embedded by quarry's model), each tagged with its
repo. QUERIES of them, drawn at random, are held out of the corpus and serve as the queries (as
ANN benchmarks draw queries from the corpus's distribution); recall@10 is against the exact scan
of the rest, unfiltered and with a one-repo filter (pgvector's iterative index scan against the
exact scan under the filter).

Server settings: maintenance_work_mem 6GB (the graph is built in memory), 2 parallel
maintenance workers, shared_buffers 4GB; everything else default.
"""
import argparse, json, os, random, re, sqlite3, statistics, struct, subprocess, time

from pg_server import PgServer, SCALE_SETTINGS, index_copies
from postgres_vs_sqlite import QUERIES, timed_searches


def percentile(values, p):
    values = sorted(values)
    return values[max(0, int(len(values) * p + 0.5) - 1)]


def timed_top10(server, db, settings, vectors, dims, where=None):
    """Runs each query in one psql session with `settings`; returns (ids per query, ms each).
    `where`, if given, is a condition per query (a filter)."""
    script = ["\\timing on", settings]
    for i, v in enumerate(vectors):
        literal = "[" + ",".join(f"{x:.6f}" for x in v) + "]"
        condition = f"WHERE {where[i]} " if where else ""
        script.append(f"SELECT '#', string_agg(repo_id || ':' || hash, ',') FROM (SELECT repo_id, hash FROM embeddings {condition}"
                      f"ORDER BY (vector::vector({dims})) <=> '{literal}'::vector({dims}) LIMIT 10) t;")
    out = server.psql(db, "\n".join(script) + "\n")
    ids, times = [], []
    for line in out.splitlines():
        if line.startswith("#|"):
            ids.append(set(line[2:].split(",")))
        m = re.match(r"Time: ([\d.]+) ms", line)
        if m:
            times.append(float(m.group(1)))
    # The first timing is the SET.
    return ids, times[-len(vectors):]


def issue_searches(quarry, workspace, args, chunks):
    """Whole issue texts as queries (`--issues FILE` of the eval's JSON lines, those whose id
    starts with `--issue-repo`), a fresh process each, lexical mode."""
    issues = []
    with open(args.issues) as f:
        for line in f:
            row = json.loads(line)
            if row["id"].startswith(args.issue_repo):
                issues.append(row["query"])
    issues = issues[: args.issue_count]
    times = []
    for text in issues:
        started = time.perf_counter()
        subprocess.run(quarry + workspace + ["search", "--stdin", "--mode", "lexical", "-k", "10", "--json"],
                       input=text, capture_output=True, text=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    print(f"issue texts as lexical `quarry search` over {chunks:,} chunks, {len(issues)} issues of "
          f"{args.issue_repo}: p50 {statistics.median(times):.0f} ms, p95 {percentile(times, 0.95):.0f} ms, "
          f"max {max(times):.0f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?")
    ap.add_argument("--vectors-only", type=int, help="no corpus: N clustered vectors, then HNSW")
    ap.add_argument("--clusters", type=int, default=2000)
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--real-vectors", nargs="+", metavar="INDEX", help="quarry SQLite index files whose vectors to measure HNSW on")
    ap.add_argument("--lexical-only", action="store_true", help="ingest and lexical search only (no vectors, no HNSW)")
    ap.add_argument("--issues", help="eval JSON lines whose issue texts to search as well (with --lexical-only)")
    ap.add_argument("--issue-repo", default="sympy", help="the issues whose id starts with this")
    ap.add_argument("--issue-count", type=int, default=20)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=64)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quarry", default=os.path.join(here, "..", "target", "release", "quarry"))
    args = ap.parse_args()
    quarry = [os.path.abspath(args.quarry)]
    with PgServer(SCALE_SETTINGS) as server:
        url = server.create_database("scale")
        if args.vectors_only:
            return clustered(server, args)
        if args.real_vectors:
            return real(server, args)
        workspace = ["--index-dir", os.path.join(server.work, "ws"), "--db-url", url]
        ingest = index_copies(quarry, workspace, args.tree, args.copies)
        chunks = int(server.psql("scale", "SELECT count(*) FROM chunks"))
        size = int(server.psql("scale", "SELECT pg_database_size('scale')")) / 2**30
        print(f"{args.copies} copies of {args.tree}: {chunks:,} chunks; ingest {ingest:.0f} s "
              f"({chunks / ingest:,.0f} chunks/s); lexical index {size:.1f} GiB; {os.cpu_count()} cores")

        tables = server.psql("scale", """SELECT relname, pg_total_relation_size(oid) FROM pg_class
            WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY 2 DESC LIMIT 6""")
        print("largest tables (with their indexes): " + ", ".join(
            f"{name} {int(size) / 2**20:,.0f} MiB" for name, size in (line.split("|") for line in tables.split())))
        print(f"per chunk: {size * 2**30 / chunks:,.0f} bytes")
        if args.lexical_only:
            p50, p95, _ = timed_searches(quarry, workspace, QUERIES, 1)
            print(f"\nlexical `quarry search` over {chunks:,} chunks, {len(QUERIES)} queries x 3: p50 {p50:.0f} ms, p95 {p95:.0f} ms")
            if args.issues:
                issue_searches(quarry, workspace, args, chunks)
            return
        started = time.perf_counter()
        server.psql("scale", f"""
            INSERT INTO embeddings(repo_id, hash, vector)
            SELECT c.repo_id, c.embed_hash,
                   (SELECT array_agg(random() - 0.5)::vector FROM generate_series(1, {args.dims})
                    WHERE c.embed_hash IS NOT NULL)
            FROM (SELECT DISTINCT repo_id, embed_hash FROM chunks) c;""")
        vectors = int(server.psql("scale", "SELECT count(*) FROM embeddings"))
        print(f"random vectors: {vectors:,} x {args.dims} stored in {time.perf_counter() - started:.0f} s")
        hnsw(server, args, [[rng.random() - 0.5 for _ in range(args.dims)] for _ in range(args.queries)])
        p50, p95, _ = timed_searches(quarry, workspace, QUERIES, 1)
        print(f"\nlexical `quarry search` over {chunks:,} chunks, {len(QUERIES)} queries x 3: p50 {p50:.0f} ms, p95 {p95:.0f} ms")


rng = random.Random(7)


def clustered(server, args):
    """N vectors around K centres in a table shaped as quarry's `embeddings` (no chunks), then HNSW."""
    started = time.perf_counter()
    server.psql("scale", f"""
        CREATE EXTENSION vector;
        CREATE TABLE embeddings(repo_id bigint NOT NULL, hash text NOT NULL, vector vector NOT NULL,
                                PRIMARY KEY (repo_id, hash));
        CREATE TEMP TABLE centres AS
            SELECT k, array(SELECT random() - 0.5 FROM generate_series(1, {args.dims}) WHERE k IS NOT NULL) AS c
            FROM generate_series(0, {args.clusters - 1}) k;
        INSERT INTO embeddings(repo_id, hash, vector)
        SELECT 1, 'v' || i, (SELECT array_agg(centres.c[j] + (random() - 0.5) * 0.5 ORDER BY j)
                             FROM generate_series(1, {args.dims}) j)::vector
        FROM generate_series(1, {args.vectors_only}) i JOIN centres ON centres.k = i % {args.clusters};
        CREATE TABLE query_centres AS SELECT * FROM centres ORDER BY random() LIMIT {args.queries};""")
    print(f"{args.vectors_only:,} vectors x {args.dims} around {args.clusters} centres stored in "
          f"{time.perf_counter() - started:.0f} s; {os.cpu_count()} cores")
    centres = [[float(x) for x in line.strip("{}").split(",")]
               for line in server.psql("scale", "SELECT c FROM query_centres").splitlines()]
    queries = [[x + (rng.random() - 0.5) * 0.5 for x in c] for c in centres]
    hnsw(server, args, queries)


def real(server, args):
    """Every chunk and commit vector of the given quarry indexes, QUERIES of them held out."""
    rows = []
    for source, path in enumerate(args.real_vectors):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        # A chunk vector belongs to the repo of (one of) the chunks that share its text; repo
        # ids are told apart per index file.
        rows += [("c", source * 1000 + repo, key, blob) for repo, key, blob in db.execute(
            """SELECT min(f.repo_id), e.hash, e.vector FROM embeddings e
               JOIN chunks c ON c.embed_hash = e.hash JOIN files f ON f.id = c.file_id GROUP BY e.hash""")]
        rows += [("h", source * 1000 + repo, str(key), blob) for repo, key, blob in db.execute(
            "SELECT c.repo_id, v.commit_id, v.vector FROM commit_vectors v JOIN commits c ON c.id = v.commit_id")]
    dims = len(rows[0][3]) // 4
    args.dims = dims
    rng.shuffle(rows)
    # Random queries, and as many again from the small repos (under 2% of the vectors each),
    # where a repo filter is selective.
    share = {}
    for kind, repo, _, _ in rows:
        share[(kind, repo)] = share.get((kind, repo), 0) + 1 / len(rows)
    small = [i for i, (k, r, _, _) in enumerate(rows[args.queries:], args.queries) if share[(k, r)] < 0.02][:args.queries]
    held = rows[:args.queries] + [rows[i] for i in small]
    taken = set(range(args.queries)) | set(small)
    corpus = [row for i, row in enumerate(rows) if i not in taken]
    started = time.perf_counter()
    server.psql("scale", """
        CREATE EXTENSION vector;
        CREATE TABLE embeddings(repo_id bigint NOT NULL, hash text NOT NULL, vector vector NOT NULL,
                                PRIMARY KEY (repo_id, hash));""")
    def text(blob):
        return "[" + ",".join(f"{x:.7g}" for x in struct.unpack(f"<{dims}f", blob)) + "]"
    # Chunk and commit vectors of one repo id are told apart by a repo id per kind.
    repo_of = lambda kind, repo: repo * 2 + (kind == "h")
    copy = "\n".join(f"{repo_of(k, r)}\t{k}{key}\t{text(b)}" for k, r, key, b in corpus)
    server.psql("scale", "COPY embeddings FROM STDIN;\n" + copy + "\n\\.\n")
    counts = server.psql("scale", "SELECT repo_id, count(*) FROM embeddings GROUP BY 1 ORDER BY 2 DESC")
    print(f"{len(corpus):,} real vectors x {dims} ({sum(k == 'c' for k, *_ in corpus):,} chunks, "
          f"{sum(k == 'h' for k, *_ in corpus):,} commits) from {', '.join(args.real_vectors)}; "
          f"{len(held)} held out as queries ({args.queries} at random, the rest from small repos); stored in {time.perf_counter() - started:.0f} s; {os.cpu_count()} cores")
    print("vectors per repo id: " + ", ".join(line.replace("|", ": ") for line in counts.split()))
    vectors = [struct.unpack(f"<{dims}f", b) for _, _, _, b in held]
    hnsw(server, args, vectors[:args.queries])
    # Filtered: each query restricted to its own repo (same kind), as `--repo` does.
    for label, part in (("random queries", held[:args.queries]), (f"queries of repos under 2% of the vectors", held[args.queries:])):
        queries = [struct.unpack(f"<{dims}f", b) for _, _, _, b in part]
        where = [f"repo_id = {repo_of(k, r)}" for k, r, _, _ in part]
        exact, exact_ms = timed_top10(server, "scale", "SET enable_indexscan = off;", queries, dims, where)
        print(f"\nfiltered to the query's repo, {len(part)} {label} — exact: p50 {statistics.median(exact_ms):.1f} ms, "
              f"p95 {percentile(exact_ms, 0.95):.1f} ms")
        print(f"{'ef_search':>9} | {'iterative':>13} | {'recall@10':>9} | {'p50':>8} {'p95':>8}")
        for ef in (40, 100, 200):
            for mode in ("off", "relaxed_order", "strict_order"):
                found, ms = timed_top10(server, "scale", f"SET hnsw.ef_search = {ef}; SET hnsw.iterative_scan = {mode};",
                                        queries, dims, where)
                recall = statistics.mean(len(a & b) / max(1, min(10, len(b))) for a, b in zip(found, exact))
                print(f"{ef:9} | {mode:>13} | {recall:9.3f} | {statistics.median(ms):6.1f}ms {percentile(ms, 0.95):6.1f}ms")


def hnsw(server, args, queries):
    started = time.perf_counter()
    m, ef_construction = getattr(args, "m", 16), getattr(args, "ef_construction", 64)
    server.psql("scale", f"CREATE INDEX embeddings_hnsw ON embeddings USING hnsw ((vector::vector({args.dims})) vector_cosine_ops) "
                         f"WITH (m = {m}, ef_construction = {ef_construction})")
    build = time.perf_counter() - started
    size = int(server.psql("scale", "SELECT pg_relation_size('embeddings_hnsw')")) / 2**30
    print(f"HNSW build (m {m}, ef_construction {ef_construction}): {build:.0f} s; index {size:.2f} GiB")

    exact, exact_ms = timed_top10(server, "scale", "SET enable_indexscan = off;", queries, args.dims)
    print(f"\nexact scan: p50 {statistics.median(exact_ms):.0f} ms, p95 {percentile(exact_ms, 0.95):.0f} ms")
    print(f"{'ef_search':>9} | {'recall@10':>9} | {'p50':>8} {'p95':>8}")
    for ef in (40, 100, 200, 400):
        found, ms = timed_top10(server, "scale", f"SET hnsw.ef_search = {ef};", queries, args.dims)
        recall = statistics.mean(len(a & b) / 10 for a, b in zip(exact, found))
        print(f"{ef:9} | {recall:9.3f} | {statistics.median(ms):6.1f}ms {percentile(ms, 0.95):6.1f}ms")


if __name__ == "__main__":
    main()
