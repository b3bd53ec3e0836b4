#!/usr/bin/env python3
"""Where OpenSearch ingest time goes: TREE indexed into a fresh store on one node (bench/os_server.py),
ROUNDS times, each by each of the given quarry binaries in turn (A/B on one warm node), with the
wall time, the CPU the `quarry index` process used, and the CPU the node used meanwhile.

Usage: bench/opensearch_ingest.py TREE QUARRY [QUARRY ...] [--rounds 3] [--heap 2g]

On a machine with two cores, quarry (parsing, tokenising, building the `_bulk` bodies) and the
node (parsing them, inverting, merging) share the cores: ingest is bound by their CPU together,
and by how well the two overlap. The first round warms the node's JIT; compare the later ones.
"""
import argparse, json, os, resource, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from os_server import OsCluster


def node_cpu(pids):
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def node_pids(cluster):
    found = []
    for proc in cluster.procs:
        out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        found += [proc.pid] + [int(p) for p in out]
    return [p for p in found if "java" in open(f"/proc/{p}/cmdline").read()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("quarry", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--heap", default="2g")
    args = ap.parse_args()
    with OsCluster(nodes=1, heap=args.heap) as cluster:
        pids = node_pids(cluster)
        trees = tempfile.mkdtemp(prefix="quarry-bench-trees-")
        copy = os.path.join(trees, os.path.basename(os.path.abspath(args.tree)))
        subprocess.run(["cp", "-al", os.path.abspath(args.tree), copy], check=True)
        print(f"{os.cpu_count()} cores; {args.tree}; one node, {args.heap} heap")
        print(f"{'round':5} {'quarry':30} | {'wall':>6} {'quarry CPU':>10} {'node CPU':>9} | {'chunks/s':>8}")
        n = 0
        try:
            for r in range(args.rounds):
                for binary in args.quarry:
                    n += 1
                    with tempfile.TemporaryDirectory() as ws:
                        cmd = [binary, "--index-dir", ws, "--db-url", cluster.url(f"ingest{n}"),
                               "index", copy, "--no-embed", "--json"]
                        node0, own0 = node_cpu(pids), resource.getrusage(resource.RUSAGE_CHILDREN)
                        started = time.perf_counter()
                        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                        wall = time.perf_counter() - started
                        own1, node1 = resource.getrusage(resource.RUSAGE_CHILDREN), node_cpu(pids)
                        chunks = sum(r["chunks"] for r in json.loads(out.stdout)["repos"])
                        cpu = own1.ru_utime - own0.ru_utime + own1.ru_stime - own0.ru_stime
                        print(f"{r + 1:5} {binary[-30:]:30} | {wall:5.1f}s {cpu:9.1f}s {node1 - node0:8.1f}s | "
                              f"{chunks / wall:8,.0f}", flush=True)
        finally:
            shutil.rmtree(trees, ignore_errors=True)


if __name__ == "__main__":
    main()
