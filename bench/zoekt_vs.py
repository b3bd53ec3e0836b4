#!/usr/bin/env python3
"""quarry beside zoekt (sourcegraph/zoekt) on zoekt's home ground: indexing, exact search over
HTTP and on the command line, and whether the two answer alike.

Usage: bench/zoekt_vs.py --quarry BIN --zoekt-bin DIR [options] REPO...
(bench/zoekt_vs.sh finds the binaries, checks ctags and calls this; see bench/zoekt_vs.md.)

For each REPO (a folder; its name is the folder's name less a `src-` prefix):
  1. index it both ways into fresh folders under --work, as child processes whose rusage
     (os.wait4: the process and every descendant it waited for, ctags included) gives the CPU
     time: `zoekt-index -require_ctags -index W/zoekt-idx/NAME REPO` and
     `quarry --index-dir W/quarry-idx/NAME index --no-embed --name NAME REPO`; size = blocks on
     disk of the whole index folder.
  2. start `zoekt-webserver` and `quarry serve` on loopback ports; per query 3 warm-up and 30
     timed requests over one keep-alive connection (start to last byte), server CPU per request
     from /proc/PID/stat (utime+stime of all threads) before and after the 30.
  3. stop the servers; per query the median of 10 whole processes (after one untimed run):
     `quarry search --engine E --json` without a daemon (QUARRY_DAEMON=off), the same through a
     running `quarry daemon` (QUARRY_DAEMON=require), and `zoekt -index_dir D QUERY`.
  4. agreement from the HTTP answers: top-10 distinct files of each, their overlap, whether the
     first file is the same, and (exact kinds) the overlap of the complete matching file sets
     (quarry's literal and regex sets from `quarry grep -l`, its answers stopping at 200 lines).

Queries: a built-in set for sympy and tokio (the name decides), or --queries FILE (JSON list of
{"kind", "query", "engine", ["mode"], ["zoekt"]}). zoekt's query is derived from quarry's
unless given: quarry's exact engines are case-sensitive, so zoekt gets `case:yes` (zoekt folds
case whenever the pattern is all lower case); zoekt treats every term as a regular expression, so
literal text is regex-escaped and quoted (inside quotes a backslash escapes, so it is doubled).
"""
import argparse, http.client, json, os, re, shutil, signal, socket, statistics, subprocess, sys, time, urllib.parse

CLK = os.sysconf("SC_CLK_TCK")

QUERIES = {
    "sympy": [
        {"kind": "literal", "query": "def simplify", "engine": "literal"},
        {"kind": "literal", "query": "Rational(1, 2)", "engine": "literal"},
        {"kind": "regex", "query": r"def \w+_eval", "engine": "grep"},
        {"kind": "symbol", "query": "simplify", "engine": "symbol"},
        {"kind": "definitions", "query": "simplify", "engine": "symbol", "mentions": False},
        {"kind": "path", "query": "core/numbers.py", "engine": "path"},
        {"kind": "question", "query": "how are rational numbers simplified", "engine": "ranked", "mode": "lexical"},
    ],
    "tokio": [
        {"kind": "literal", "query": "pub fn spawn", "engine": "literal"},
        {"kind": "literal", "query": "Poll::Pending", "engine": "literal"},
        {"kind": "regex", "query": r"fn poll_\w+\(", "engine": "grep"},
        {"kind": "symbol", "query": "spawn_blocking", "engine": "symbol"},
        {"kind": "definitions", "query": "spawn_blocking", "engine": "symbol", "mentions": False},
        {"kind": "path", "query": "runtime/builder.rs", "engine": "path"},
        {"kind": "question", "query": "how does the scheduler steal work from other workers", "engine": "ranked", "mode": "lexical"},
    ],
}

# "symbol" is quarry's default answer to a name: its definitions, then the places that mention
# it (a ranked search); "definitions" (mentions=false) is the definitions alone, what zoekt's
# sym: answers. Both are timed against the same zoekt query.
EXACT = {"literal", "regex", "path", "symbol", "definitions"}


def re2_escape(text):
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def zoekt_quote(pattern):
    return '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'


def zoekt_query(q):
    """zoekt's query meaning what quarry's engine does with q['query']."""
    if q.get("zoekt"):
        return q["zoekt"]
    text, kind = q["query"], q["kind"]
    if kind == "literal":
        return "case:yes " + zoekt_quote(re2_escape(text))
    if kind == "regex":
        return "case:yes " + zoekt_quote(text)
    if kind in ("symbol", "definitions"):
        return "case:yes sym:" + zoekt_quote("^" + re2_escape(text) + "$")
    if kind == "path":
        return "case:yes file:" + zoekt_quote(re2_escape(text))
    return text  # a question: zoekt ANDs the words (substrings, case-folded)


# ---------------------------------------------------------------- processes

def run_measured(cmd, env, log):
    """Run cmd to completion; wall, user+sys CPU (with waited-for descendants), max RSS."""
    with open(log, "wb") as out:
        started = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - started
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n" + open(log, errors="replace").read()[-3000:])
    return {"wall_s": wall, "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
            "cpu_s": ru.ru_utime + ru.ru_stime, "max_rss_mib": ru.ru_maxrss / 1024}


def disk_bytes(folder):
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def proc_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


class Server:
    def __init__(self, name, cmd, port, env, log):
        self.name, self.port = name, port
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 180
        while True:
            if self.proc.poll() is not None:
                sys.exit(f"{name} exited ({self.proc.returncode}): {' '.join(cmd)}\n" + open(log, errors="replace").read()[-3000:])
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/healthz")
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                sys.exit(f"{name} did not answer /healthz on port {port} within 180 s")
            time.sleep(0.2)
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.connects = 0

    def get(self, path):
        """One request on the kept-alive connection: (ms start to last byte, status, body)."""
        started = time.perf_counter()
        if self.conn.sock is None:
            self.connects += 1
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        body = r.read()
        ms = (time.perf_counter() - started) * 1000
        return ms, r.status, body

    def stop(self):
        try:
            self.conn.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def quarry_path(q, limit):
    p = {"query": q["query"], "engine": q["engine"], "limit": limit}
    if q.get("mode"):
        p["mode"] = q["mode"]
    if q.get("mentions") is False:
        p["mentions"] = "false"
    return "/api/search/code?" + urllib.parse.urlencode(p)


def zoekt_path(zq, num):
    return "/search?" + urllib.parse.urlencode({"q": zq, "format": "json", "num": num})


def quarry_files(body):
    d = json.loads(body)
    files, seen = [], set()
    for r in d.get("results", []):
        if r["path"] not in seen:
            seen.add(r["path"])
            files.append(r["path"])
    route = d.get("route") or {}
    return files, d, route.get("note")


def zoekt_files(body):
    d = json.loads(body)
    res = d.get("result") or {}
    return [f["FileName"] for f in (res.get("FileMatches") or [])], d


def pct(values, p):
    s = sorted(values)
    return s[max(0, -(-len(s) * p // 100) - 1)]


def time_http(server, path, warmup, runs):
    for _ in range(warmup):
        _, status, body = server.get(path)
        if status != 200:
            return {"error": f"HTTP {status}: {body[:300].decode(errors='replace')}"}
    before = proc_cpu_ticks(server.proc.pid)
    times, body, reconnects = [], b"", server.connects
    for _ in range(runs):
        ms, status, body = server.get(path)
        if status != 200:
            return {"error": f"HTTP {status}: {body[:300].decode(errors='replace')}"}
        times.append(ms)
    after = proc_cpu_ticks(server.proc.pid)
    return {"p50_ms": statistics.median(times), "p95_ms": pct(times, 95), "min_ms": min(times),
            "cpu_ms_per_req": (after - before) * 1000 / CLK / runs, "bytes": len(body),
            "reconnects": server.connects - reconnects, "body": body}


def time_cli(cmd, env, runs):
    def once():
        started = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return (time.perf_counter() - started) * 1000, p
    _, p = once()
    if p.returncode != 0:
        return {"error": f"rc {p.returncode}: {p.stderr[-300:].decode(errors='replace').strip()}"}
    times = [once()[0] for _ in range(runs)]
    return {"median_ms": statistics.median(times), "min_ms": min(times), "stdout_bytes": len(p.stdout)}


# ---------------------------------------------------------------- one repo

def bench_repo(repo, args, queries, log):
    name = os.path.basename(os.path.abspath(repo).rstrip("/"))
    name = name[4:] if name.startswith("src-") else name
    zdir = os.path.join(args.work, "zoekt-idx", name)
    qdir = os.path.join(args.work, "quarry-idx", name)
    zbin = lambda b: os.path.join(args.zoekt_bin, b)
    env_q = dict(os.environ, QUARRY_DAEMON="off")
    env_z = dict(os.environ)
    out = {"name": name, "repo": os.path.abspath(repo), "queries": []}

    # 1. index
    if not args.reuse_index or not (os.path.isdir(zdir) and os.path.isdir(qdir)):
        for d in (zdir, qdir):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.dirname(d), exist_ok=True)
        log(f"[{name}] zoekt-index …")
        zflag = ["-require_ctags"] if args.zoekt_ctags == "require" else ["-disable_ctags"]
        zlog = os.path.join(args.work, f"zoekt-index-{name}.log")
        zi = run_measured([zbin("zoekt-index")] + zflag + ["-index", zdir, repo], env_z, zlog)
        m = re.findall(r"(\d+) files processed", open(zlog, errors="replace").read())
        zi["files"] = sum(int(x) for x in m) if m else None
        log(f"[{name}] quarry index --no-embed …")
        qlog = os.path.join(args.work, f"quarry-index-{name}.log")
        qi = run_measured(args.quarry_cmd + ["--index-dir", qdir, "index", "--no-embed", "--name", name, repo], env_q, qlog)
        m = re.search(r"(\d+) files, (\d+) chunks", open(qlog, errors="replace").read())
        qi["files"], qi["chunks"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        zi["size_mib"], qi["size_mib"] = disk_bytes(zdir) / 2**20, disk_bytes(qdir) / 2**20
        out["index"] = {"quarry": qi, "zoekt": zi}
    else:
        out["index"] = {"quarry": {"size_mib": disk_bytes(qdir) / 2**20, "reused": True},
                        "zoekt": {"size_mib": disk_bytes(zdir) / 2**20, "reused": True}}

    # 2. HTTP
    zport, qport = free_port(), free_port()
    log(f"[{name}] servers: zoekt-webserver :{zport}, quarry serve :{qport}")
    zs = Server("zoekt-webserver", [zbin("zoekt-webserver"), "-index", zdir, "-listen", f"127.0.0.1:{zport}"],
                zport, env_z, os.path.join(args.work, f"zoekt-webserver-{name}.log"))
    try:
        qs = Server("quarry serve", args.quarry_cmd + ["--index-dir", qdir, "serve", "--addr", f"127.0.0.1:{qport}"],
                    qport, env_q, os.path.join(args.work, f"quarry-serve-{name}.log"))
    except SystemExit:
        zs.stop()
        raise
    try:
        for q in queries:
            zq = zoekt_query(q)
            row = {"kind": q["kind"], "query": q["query"], "engine": q["engine"], "mode": q.get("mode"), "zoekt_query": zq}
            log(f"[{name}] HTTP {q['kind']}: {q['query']!r}  |  zoekt {zq!r}")
            hq = time_http(qs, quarry_path(q, args.limit), args.warmup, args.runs)
            hz = time_http(zs, zoekt_path(zq, args.num), args.warmup, args.runs)
            agree = {}
            if "body" in hq and "body" in hz:
                qf, qd, note = quarry_files(hq["body"])
                zf, zd = zoekt_files(hz["body"])
                q10, z10 = qf[:10], zf[:10]
                n = min(10, max(len(q10), len(z10)))
                agree = {"quarry_top10": q10, "zoekt_top10": z10, "overlap": len(set(q10) & set(z10)),
                         "of": n, "first_same": bool(q10 and z10 and q10[0] == z10[0]),
                         "quarry_note": note, "quarry_results": len(qd.get("results", [])),
                         "zoekt_files_total": ((zd.get("result") or {}).get("Stats") or {}).get("FileCount"),
                         "zoekt_query_parsed": (zd.get("result") or {}).get("Query")}
                if q["kind"] in EXACT:
                    # complete matching file sets. quarry: literal and regex from `quarry grep -l`
                    # (the API answers at most 200 lines), path and symbol (its definitions) from
                    # the API at its largest limit; zoekt: its API without a file limit.
                    capped = False
                    if q["kind"] in ("literal", "regex"):
                        g = subprocess.run(args.quarry_cmd + ["--index-dir", qdir, "grep", "-l"]
                                           + (["-F"] if q["kind"] == "literal" else []) + ["-e", q["query"], "."],
                                           cwd=repo, env=env_q, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                        qall = {l[2:] if l.startswith("./") else l for l in g.stdout.decode(errors="replace").splitlines() if l}
                    else:
                        _, st, body = qs.get(quarry_path(q, 200))
                        res = json.loads(body).get("results", [])
                        full = len(res) >= 200
                        if q["kind"] in ("symbol", "definitions"):
                            res = [r for r in res if (r.get("reason") or "").startswith("definition")]
                        capped = full and len(res) >= 200  # symbol: definitions come first
                        qall = {r["path"] for r in res}
                    _, st, body = zs.get(zoekt_path(zq, 100000))
                    zall = set(zoekt_files(body)[0])
                    union = qall | zall
                    agree["full_set"] = {"quarry": len(qall), "zoekt": len(zall), "both": len(qall & zall),
                                         "jaccard": len(qall & zall) / len(union) if union else 1.0,
                                         "quarry_capped": capped,
                                         "only_quarry": sorted(qall - zall)[:5], "only_zoekt": sorted(zall - qall)[:5]}
            for h in (hq, hz):
                h.pop("body", None)
            row["http"] = {"quarry": hq, "zoekt": hz}
            row["agreement"] = agree
            out["queries"].append(row)
        out["server_rss_mib"] = {"quarry": proc_rss_mib(qs.proc.pid), "zoekt": proc_rss_mib(zs.proc.pid)}
    finally:
        qs.stop()
        zs.stop()

    # 3. CLI
    log(f"[{name}] CLI: quarry (no daemon), quarry daemon, zoekt; median of {args.cli_runs}")
    env_d = dict(os.environ, QUARRY_DAEMON="require")
    daemon = subprocess.run(args.quarry_cmd + ["--index-dir", qdir, "daemon", "start"],
                            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    daemon_err = None if daemon.returncode == 0 else daemon.stdout[-300:].decode(errors="replace")
    try:
        for row, q in zip(out["queries"], queries):
            qcmd = args.quarry_cmd + ["--index-dir", qdir, "search", "--engine", q["engine"]]
            qcmd += (["--mode", q["mode"]] if q.get("mode") else [])
            qcmd += (["--definitions-only"] if q.get("mentions") is False else []) + ["--json", "-k", str(args.limit), q["query"]]
            zcmd = [zbin("zoekt"), "-index_dir", zdir, row["zoekt_query"]]
            row["cli"] = {"quarry": time_cli(qcmd, env_q, args.cli_runs),
                          "quarry_daemon": time_cli(qcmd, env_d, args.cli_runs) if not daemon_err else {"error": daemon_err},
                          "zoekt": time_cli(zcmd, env_z, args.cli_runs)}
    finally:
        subprocess.run(args.quarry_cmd + ["--index-dir", qdir, "daemon", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


# ---------------------------------------------------------------- report

def ratio(a, b):
    return f"{a / b:.1f}x" if a is not None and b else "-"


def fmt(v, nd=1):
    return "-" if v is None else f"{v:.{nd}f}"


def table(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def report(res, meta):
    o = []
    for r in res:
        qi, zi = r["index"]["quarry"], r["index"]["zoekt"]
        o.append(f"\n=== {r['name']} ({r['repo']}): quarry {qi.get('files', '?')} files / {qi.get('chunks', '?')} chunks, "
                 f"zoekt {zi.get('files', '?')} files ===\n")
        rows = []
        for label, key, nd in (("wall s", "wall_s", 1), ("CPU s (user+sys)", "cpu_s", 1),
                               ("size MiB", "size_mib", 1), ("peak RSS MiB", "max_rss_mib", 0)):
            rows.append([label, "", fmt(qi.get(key), nd), fmt(zi.get(key), nd), ratio(qi.get(key), zi.get(key))])
        rss = r.get("server_rss_mib", {})
        rows.append(["server RSS MiB (after)", "", fmt(rss.get("quarry"), 0), fmt(rss.get("zoekt"), 0), ratio(rss.get("quarry"), rss.get("zoekt"))])
        o.append(table(rows, ["index", "", "quarry", "zoekt", "q/z"]))
        o.append(f"\nHTTP: {meta['warmup']} warm-up + {meta['runs']} timed requests each, one keep-alive connection; "
                 f"ms start to last byte; CPU = server ms per request (quarry limit={meta['limit']} chunks, zoekt num={meta['num']} files)\n")
        rows = []
        for q in r["queries"]:
            hq, hz = q["http"]["quarry"], q["http"]["zoekt"]
            if "error" in hq or "error" in hz:
                rows.append([q["kind"], q["query"][:32], hq.get("error", "")[:40], hz.get("error", "")[:40], "", "", "", "", "", "", ""])
                continue
            rows.append([q["kind"], q["query"][:32], fmt(hq["p50_ms"]), fmt(hq["p95_ms"]), fmt(hz["p50_ms"]), fmt(hz["p95_ms"]),
                         ratio(hq["p50_ms"], hz["p50_ms"]), fmt(hq["cpu_ms_per_req"]), fmt(hz["cpu_ms_per_req"]),
                         ratio(hq["cpu_ms_per_req"], hz["cpu_ms_per_req"]), f"{hq['bytes'] // 1024}/{hz['bytes'] // 1024}"])
        o.append(table(rows, ["kind", "query", "q p50", "q p95", "z p50", "z p95", "p50 q/z", "q CPU", "z CPU", "CPU q/z", "KiB q/z"]))
        o.append(f"\nCLI: whole process, median of {meta['cli_runs']} (after 1 untimed), ms\n")
        rows = []
        for q in r["queries"]:
            c = q.get("cli", {})
            g = lambda k: c.get(k, {}).get("median_ms")
            e = lambda k: c.get(k, {}).get("error")
            rows.append([q["kind"], q["query"][:32], e("quarry") or fmt(g("quarry")), e("quarry_daemon") or fmt(g("quarry_daemon")),
                         e("zoekt") or fmt(g("zoekt")), ratio(g("quarry"), g("zoekt")), ratio(g("quarry_daemon"), g("zoekt"))])
        o.append(table(rows, ["kind", "query", "quarry", "q daemon", "zoekt", "q/z", "daemon/z"]))
        o.append("\nAgreement (HTTP answers): top-10 distinct files in answer order; full = complete matching file sets (exact kinds)\n")
        rows = []
        for q in r["queries"]:
            a = q["agreement"]
            if not a:
                rows.append([q["kind"], q["query"][:32], "-", "-", "-", "-", "-"])
                continue
            fs = a.get("full_set")
            full = (f"{fs['both']}/{fs['quarry']}{'+' if fs['quarry_capped'] else ''}/{fs['zoekt']} J={fs['jaccard']:.2f}" if fs else "-")
            rows.append([q["kind"], q["query"][:32], f"{a['overlap']}/{a['of']}", "yes" if a["first_same"] else "no",
                         (a["quarry_top10"] or ["(none)"])[0], (a["zoekt_top10"] or ["(none)"])[0], full])
        o.append(table(rows, ["kind", "query", "top10", "1st same", "quarry 1st", "zoekt 1st", "full both/q/z"]))
        notes = [f"  {q['kind']} {q['query']!r}: quarry: {q['agreement']['quarry_note']}" for q in r["queries"]
                 if q["agreement"].get("quarry_note")]
        if notes:
            o.append("\nquarry fell back:\n" + "\n".join(notes))
        o.append("\nzoekt queries: " + "; ".join(f"{q['kind']}: {q['zoekt_query']}" for q in r["queries"]))
    return "\n".join(o)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--quarry", required=True)
    ap.add_argument("--zoekt-bin", required=True)
    ap.add_argument("--zoekt-ctags", choices=["require", "disable"], default="require")
    ap.add_argument("--work", default="/tmp/zoekt-vs")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cli-runs", type=int, default=10)
    ap.add_argument("--limit", type=int, default=50, help="quarry chunks per answer (enough for 10 distinct files)")
    ap.add_argument("--num", type=int, default=10, help="zoekt files per answer")
    ap.add_argument("--queries", help="JSON file: a list of queries (or {NAME: [...]})")
    ap.add_argument("--reuse-index", action="store_true", help="keep indexes already in --work (no index timing)")
    ap.add_argument("--json", metavar="FILE", help="write every number as JSON to FILE ('-': stdout, tables to stderr)")
    ap.add_argument("--meta", default="{}", help="JSON object recorded with the results (commits, machine)")
    args = ap.parse_args()
    args.quarry_cmd = [os.path.abspath(args.quarry)]
    os.makedirs(args.work, exist_ok=True)
    tables_to = sys.stderr if args.json == "-" else sys.stdout
    log = lambda m: print(m, file=sys.stderr, flush=True)

    custom = json.load(open(args.queries)) if args.queries else None
    results = []
    for repo in args.repos:
        name = os.path.basename(os.path.abspath(repo).rstrip("/"))
        name = name[4:] if name.startswith("src-") else name
        if isinstance(custom, dict):
            queries = custom.get(name)
        elif isinstance(custom, list):
            queries = custom
        else:
            queries = next((v for k, v in QUERIES.items() if k in name.lower()), None)
        if not queries:
            sys.exit(f"no queries for {name}: built-in sets are {', '.join(QUERIES)}; pass --queries FILE")
        results.append(bench_repo(repo, args, queries, log))

    meta = dict(json.loads(args.meta), runs=args.runs, warmup=args.warmup, cli_runs=args.cli_runs,
                limit=args.limit, num=args.num, loadavg_end=open("/proc/loadavg").read().split()[:3])
    print(report(results, meta), file=tables_to)
    print(f"\nload average at the end: {' '.join(meta['loadavg_end'])}", file=tables_to)
    if args.json:
        doc = json.dumps({"meta": meta, "repos": results}, indent=1)
        if args.json == "-":
            print(doc)
        else:
            with open(args.json, "w") as f:
                f.write(doc + "\n")


if __name__ == "__main__":
    main()
