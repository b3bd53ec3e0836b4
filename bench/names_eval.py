#!/usr/bin/env python3
"""names_eval.py — score "name lookup" through the real quarry CLI, as a user would run it.

Why: a bare identifier (`Flask`, `url_for`, `lambdify`, `BufStream`) is the commonest query, and
the answer a user wants is the definition the package itself means, at rank 1. `quarry eval`
scores files; this scores the definition (path AND lines) and times each search as the separate
process a user or an agent's tool call starts.

How: for each (repo, commit) of the set (JSONL from bench/names_set.py: `query`, `repo`,
`commit`, `relevant`, `relevant_lines`), the commit's tree is laid out with
/work/shared/eval/materialize.py into WORK/trees/, indexed into its own workspace
(`quarry --index-dir WORK/ws/<repo>-<sha> index TREE`, lexically by default: bare names take
the symbol route, which does not read vectors; --embed to embed as a default install would), and
every query is run as `quarry --index-dir WS search NAME --json -k K` with the tree as the
working directory. The binary is copied to WORK/bin/ first so a rebuild during the run cannot
mix two builds; a workspace made by another binary (or with other index options) is rebuilt.

Per query (first K results, K defaults to 5):
  def@1  the first result's path is the labelled file and its lines overlap the labelled
         definition's lines (`relevant_lines`, "path:start-end")
  def@5  any of the first 5 results does
  file@1 the first result's path is the labelled file
  name@1 the first result's symbol ends with the queried name (`Flask.url_for` counts for
         `url_for`): some definition of that name came first, right or not
Reported per repo and overall (micro over queries, and the mean over repos), with p50/p95 of the
per-process wall time of the searches. One unscored warm-up search per repo runs first
(--warmup 0 to count cold starts).

Usage:
  names_eval.py /work/names-dev/all.jsonl [--misses] [--json] [--save FILE]
      [--quarry PATH] [--work DIR] [--mirrors DIR] [--limit N] [--kind K ...] [--jobs 1]
      [--wait-build /tmp/build-release.log]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import OrderedDict, defaultdict

MATERIALIZE = "/work/shared/eval/materialize.py"


def log(msg):
    print(f"names_eval: {msg}", file=sys.stderr, flush=True)


def wait_for_build(build_log, binary, poll=60):
    """Block until the build log's last non-empty line is `done` and the binary exists."""
    while True:
        last = ""
        try:
            with open(build_log, errors="replace") as f:
                lines = [l.strip() for l in f if l.strip()]
            last = lines[-1] if lines else ""
        except OSError:
            pass
        if last == "done" and os.path.exists(binary):
            return
        log(f"waiting for the build ({build_log}: {last[:60]!r}; {binary} "
            f"{'exists' if os.path.exists(binary) else 'missing'}); next look in {poll}s")
        time.sleep(poll)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def parse_lines(spec):
    path, _, rng = spec.rpartition(":")
    a, _, b = rng.partition("-")
    return path, int(a), int(b or a)


def spread(rows, n):
    if n is None or n >= len(rows):
        return rows
    ordered = sorted(rows, key=lambda r: hashlib.sha1(r["id"].encode()).hexdigest())
    picked = {ordered[(i * len(ordered)) // n]["id"] for i in range(n)}
    return [r for r in rows if r["id"] in picked]


def percentile(values, p):
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def last_segment(symbol):
    return re.split(r"::|\.", symbol or "")[-1]


class Repo:
    def __init__(self, args, quarry, binary_sha, repo, commit):
        self.args, self.quarry, self.repo, self.commit = args, quarry, repo, commit
        slug = repo.replace("/", "+")
        self.git_dir = os.path.join(args.mirrors, slug, "repo")
        self.tree = os.path.join(args.work, "trees", f"{slug}-{commit[:12]}")
        self.ws = os.path.join(args.work, "ws", f"{slug}-{commit[:12]}")
        self.stamp = {"binary_sha256": binary_sha, "embed": args.embed}
        self.index_info = {}

    def prepare(self):
        if not os.path.exists(os.path.join(self.tree, ".missing_blobs.txt")):
            if os.path.exists(self.tree):
                shutil.rmtree(self.tree)
            log(f"{self.repo}: laying out {self.commit[:12]} -> {self.tree}")
            subprocess.run([sys.executable, MATERIALIZE, self.git_dir, self.commit, self.tree],
                           check=True, stdout=subprocess.DEVNULL)
        stamp_path = os.path.join(self.ws, "names_eval.stamp.json")
        try:
            with open(stamp_path) as f:
                fresh = json.load(f) == self.stamp
        except (OSError, ValueError):
            fresh = False
        if not fresh and os.path.exists(self.ws):
            log(f"{self.repo}: workspace made by another binary or options; rebuilding")
            shutil.rmtree(self.ws)
        if self.args.reindex and os.path.exists(self.ws):
            shutil.rmtree(self.ws)
        os.makedirs(self.ws, exist_ok=True)
        cmd = [self.quarry, "--index-dir", self.ws, "index", self.tree, "--json"]
        if not self.args.embed:
            cmd.append("--no-embed")
        log(f"{self.repo}: indexing ({' '.join(cmd[3:])})")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"index failed for {self.repo} (rc {proc.returncode}):\n"
                             f"{proc.stderr[-2000:]}")
        try:
            report = json.loads(proc.stdout)
            r = report["repos"][0]
            self.index_info = {"files": r.get("files"), "chunks": r.get("chunks"),
                               "added": r.get("added"), "changed": r.get("changed"),
                               "wall_s": round(elapsed, 2)}
        except (ValueError, KeyError, IndexError):
            self.index_info = {"wall_s": round(elapsed, 2)}
        with open(stamp_path, "w") as f:
            json.dump(self.stamp, f)
        log(f"{self.repo}: indexed {self.index_info}")

    def configure(self, settings):
        """Settings for this run only (`--set KEY=VALUE`, e.g. an ablation); the rest unset."""
        stale = os.path.join(self.ws, "names_eval.settings.json")
        if os.path.exists(stale):
            with open(stale) as f:
                for key in json.load(f):
                    subprocess.run([self.quarry, "--index-dir", self.ws, "config", "unset", key],
                                   capture_output=True)
        self._set_keys = []
        for item in settings:
            key, value = item.split("=", 1)
            subprocess.run([self.quarry, "--index-dir", self.ws, "config", "set", key, value],
                           check=True, capture_output=True)
            self._set_keys.append(key)
        with open(stale, "w") as f:
            json.dump(self._set_keys, f)

    def search(self, query):
        """(results or None, wall ms, error, route)."""
        cmd = [self.quarry, "--index-dir", self.ws, "search", query, "--json",
               "-k", str(self.args.k)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=self.tree, capture_output=True, text=True)
        ms = (time.perf_counter() - t0) * 1000.0
        if proc.returncode not in (0, 1):
            return None, ms, f"rc {proc.returncode}: {proc.stderr.strip()[-300:]}", None
        try:
            doc = json.loads(proc.stdout) if proc.stdout.strip() else {"results": []}
        except ValueError:
            return None, ms, f"bad JSON (rc {proc.returncode}): {proc.stdout[:200]!r}", None
        route = doc.get("route") or {}
        route_s = route.get("route") if isinstance(route, dict) else None
        if isinstance(route, dict) and route.get("note"):
            route_s = f"{route_s} ({route['note']})"
        return doc.get("results") or [], ms, None, route_s


def score(row, results, k):
    labels = [parse_lines(s) for s in row.get("relevant_lines") or []]
    files = set(row.get("relevant") or [p for p, _, _ in labels])

    def is_def(r):
        return any(r.get("path") == p and r.get("start_line", 0) <= b and r.get("end_line", 0) >= a
                   for p, a, b in labels)

    top = results[:k]
    def_rank = next((i + 1 for i, r in enumerate(top) if is_def(r)), None)
    first = top[0] if top else None
    return {
        "def@1": def_rank == 1,
        "def@5": def_rank is not None and def_rank <= 5,
        "file@1": bool(first and first.get("path") in files),
        "name@1": bool(first and last_segment(first.get("symbol")) == row["query"]),
        "def_rank": def_rank,
        "first": None if first is None else {
            "path": first.get("path"), "lines": f"{first.get('start_line')}-{first.get('end_line')}",
            "symbol": first.get("symbol"), "kind": first.get("kind")},
    }


METRICS = ("def@1", "def@5", "file@1", "name@1")


def summarize(per_query):
    n = len(per_query)
    out = {"queries": n}
    for m in METRICS:
        hits = sum(1 for q in per_query if q.get(m))
        out[m] = {"hits": hits, "rate": round(hits / n, 4) if n else None}
    lat = [q["ms"] for q in per_query if q.get("ms") is not None]
    out["ms_p50"] = round(percentile(lat, 50), 1) if lat else None
    out["ms_p95"] = round(percentile(lat, 95), 1) if lat else None
    out["errors"] = sum(1 for q in per_query if q.get("error"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for what is measured.")
    ap.add_argument("sets", nargs="+", help="JSONL query sets (bench/names_set.py output)")
    ap.add_argument("--quarry", default="/work/main/target/release/quarry")
    ap.add_argument("--work", default="/tmp/names-eval", help="trees, workspaces, binary copy")
    ap.add_argument("--mirrors", default="/work/.mirror",
                    help="holds <owner>+<name>/repo git dirs")
    ap.add_argument("--limit", type=int, default=None,
                    help="at most N queries per repo (a deterministic spread)")
    ap.add_argument("--kind", action="append", default=None,
                    help="only rows of this kind (repeatable): class, function, struct, ...")
    ap.add_argument("--exclude-kind", action="append", default=[],
                    help="drop rows of this kind (repeatable), e.g. assignment")
    ap.add_argument("--repo", action="append", default=None, help="only this repo (repeatable)")
    ap.add_argument("-k", type=int, default=5, help="results asked for (default 5)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="parallel searches (default 1: sequential, honest timings)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="unscored searches per repo before timing (default 1)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for this run (repeatable), e.g. search.name_exported=0 for an ablation")
    ap.add_argument("--embed", action="store_true",
                    help="index with embeddings (default: --no-embed)")
    ap.add_argument("--reindex", action="store_true", help="drop the workspaces and index again")
    ap.add_argument("--no-copy", action="store_true",
                    help="run the binary in place instead of a copy under WORK/bin")
    ap.add_argument("--wait-build", metavar="LOG", default=None,
                    help="poll every 60 s until LOG's last line is `done` and the binary exists")
    ap.add_argument("--misses", action="store_true", help="list the def@1 misses")
    ap.add_argument("--max-misses", type=int, default=None, help="list at most N misses")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead")
    ap.add_argument("--save", metavar="FILE", help="also write the JSON document to FILE")
    args = ap.parse_args()

    rows = []
    for path in args.sets:
        with open(path) as f:
            rows.extend(json.loads(l) for l in f if l.strip())
    if args.kind:
        rows = [r for r in rows if r.get("kind") in args.kind]
    rows = [r for r in rows if r.get("kind") not in args.exclude_kind]
    if args.repo:
        rows = [r for r in rows if r["repo"] in args.repo]
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["repo"], r["commit"]), []).append(r)
    for key in groups:
        groups[key] = spread(groups[key], args.limit)

    if args.wait_build:
        wait_for_build(args.wait_build, args.quarry)
    if not os.path.exists(args.quarry):
        raise SystemExit(f"no quarry binary at {args.quarry} (--wait-build LOG to wait for it)")
    binary_sha = sha256_file(args.quarry)
    quarry = args.quarry
    if not args.no_copy:
        os.makedirs(os.path.join(args.work, "bin"), exist_ok=True)
        quarry = os.path.join(args.work, "bin", "quarry")
        shutil.copy2(args.quarry, quarry + ".tmp")
        os.replace(quarry + ".tmp", quarry)
    version = subprocess.run([quarry, "--version"], capture_output=True, text=True).stdout.strip()
    log(f"{version} ({args.quarry}, sha256 {binary_sha[:12]}); {len(rows)} rows, "
        f"{sum(len(g) for g in groups.values())} to run in {len(groups)} repo(s)")

    per_query, repos_out, routes = [], OrderedDict(), defaultdict(int)
    for (repo, commit), group in groups.items():
        rp = Repo(args, quarry, binary_sha, repo, commit)
        rp.prepare()
        rp.configure(args.set)
        for i in range(args.warmup):
            rp.search(group[i % len(group)]["query"])

        def run(row):
            results, ms, error, route = rp.search(row["query"])
            q = {"id": row["id"], "repo": repo, "query": row["query"], "kind": row.get("kind"),
                 "label": (row.get("relevant_lines") or row.get("relevant"))[0],
                 "ms": round(ms, 1), "route": route}
            if error:
                q.update({"error": error, "def_rank": None, "first": None})
                q.update({m: False for m in METRICS})
            else:
                q.update(score(row, results, args.k))
            return q

        done = []
        if args.jobs > 1:
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                done = list(pool.map(run, group))
        else:
            for i, row in enumerate(group, 1):
                done.append(run(row))
                if i % 200 == 0:
                    log(f"{repo}: {i}/{len(group)}")
        for q in done:
            routes[q["route"]] += 1
        per_query.extend(done)
        repos_out[repo] = {"commit": commit, "index": rp.index_info, **summarize(done)}
        s = repos_out[repo]
        log(f"{repo}: def@1 {s['def@1']['rate']} def@5 {s['def@5']['rate']} "
            f"file@1 {s['file@1']['rate']} p50 {s['ms_p50']} ms")

    overall = summarize(per_query)
    macro = {m: round(sum(r[m]["rate"] for r in repos_out.values()) / len(repos_out), 4)
             for m in METRICS} if repos_out else {}
    misses = [q for q in per_query if not q["def@1"]]
    doc = {"quarry": {"path": args.quarry, "version": version, "sha256": binary_sha},
           "sets": args.sets, "k": args.k, "embed": args.embed, "warmup": args.warmup,
           "jobs": args.jobs, "overall": overall, "mean_over_repos": macro,
           "repos": repos_out, "routes": dict(routes), "per_query": per_query}
    if args.save:
        with open(args.save, "w") as f:
            json.dump(doc, f, indent=1)
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return

    def fmt(s):
        return "  ".join(f"{m} {s[m]['hits']:>4}/{s['queries']:<4} {s[m]['rate']:.3f}"
                         for m in METRICS)

    print(f"{version}  sha256 {binary_sha[:12]}  k={args.k}  "
          f"{'embedded' if args.embed else 'lexical index'}  jobs={args.jobs}")
    width = max([len(r) for r in repos_out] + [7])
    for repo, s in repos_out.items():
        print(f"{repo:<{width}}  {fmt(s)}  p50 {s['ms_p50']:>6} ms  p95 {s['ms_p95']:>6} ms"
              + (f"  errors {s['errors']}" if s["errors"] else ""))
    print(f"{'overall':<{width}}  {fmt(overall)}  p50 {overall['ms_p50']:>6} ms  "
          f"p95 {overall['ms_p95']:>6} ms" + (f"  errors {overall['errors']}"
                                               if overall["errors"] else ""))
    if macro:
        print(f"{'mean over repos':<{width}}  " + "  ".join(f"{m} {v:.3f}" for m, v in macro.items()))
    print("routes: " + ", ".join(f"{k}: {v}" for k, v in sorted(routes.items(),
                                                                   key=lambda kv: -kv[1])))
    if args.misses:
        shown = misses[:args.max_misses] if args.max_misses else misses
        print(f"\ndef@1 misses ({len(misses)}{', first ' + str(len(shown)) if len(shown) < len(misses) else ''}):")
        for q in shown:
            f = q["first"]
            got = ("(no results)" if f is None and not q.get("error") else
                   q.get("error") if f is None else
                   f"{f['path']}:{f['lines']} {f['symbol']} ({f['kind']})")
            rank = f"def@{q['def_rank']}" if q.get("def_rank") else "def not in top"
            print(f"  {q['repo']}  {q['query']}  -> {got}   [want {q['label']}; {rank}]")


if __name__ == "__main__":
    main()
