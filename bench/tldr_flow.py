#!/usr/bin/env python3
"""Control flow, data flow and slices: quarry beside llm-tldr, function by function.

For each chosen function of a real repository (Python: pallets/click, Go: spf13/cobra,
JavaScript: expressjs/express, each extracted from its bare mirror under /work/.mirror)
this runs

  quarry summary FILE --mode extract --json   (every function's CFG, complexity and def-use pairs)
  quarry summary FILE --mode extract          (text form: one flow line per function)
  quarry slice FILE:LINE [--var V] [--json]   (backward slice)
  tldr cfg FILE FUNC                           (llm-tldr; JSON is its only output form)
  tldr dfg FILE FUNC
  tldr slice FILE FUNC LINE [--var V]

as whole processes (median wall time over --runs runs), and, unless --no-daemon, the same
cfg/dfg/slice requests sent to llm-tldr's warm per-project daemon over its Unix socket,
exactly as its MCP server (tldr-mcp) sends them: the first (uncached) answer's time and the
median of --runs repeats (answered from the daemon's memo cache).

It records the characters an agent reads (text and JSON separately), the times, and
agreement: cyclomatic complexity equal?; slice line sets (Jaccard and exact match, both on
all lines and on statement lines only: blank, comment-only and closing-brace-only lines
dropped, because llm-tldr reports whole block line ranges); def-use triples
(var, def_line, use_line) overlap where llm-tldr reports any (definitions on a function's
header lines are counted as the header's first line, since llm-tldr puts a parameter on
the line where it is written and quarry on the function's first line).

The slice is taken at the function's last `return` line outside nested functions (else its
last statement line), for the returned variable when the return expression is a plain
name or a list of plain names (the first that is not nil/None/true/...), else for every
variable the line reads (no --var given to either tool).

Functions: those in quarry's `flow` list with complexity >= --min-complexity, not
anonymous, whose name occurs once in their file (llm-tldr finds a function by bare name
and takes the first it meets), taken round-robin over the files so that many files are
represented.

Usage:
  python3 bench/tldr_flow.py [--quarry PATH] [--tldr PATH] [--langs python,go,js]
                             [--per-lang 20] [--runs 3] [--json] [--save FILE] [--details]
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

LANGS = {
    "python": {
        "mirror": "pallets+click",
        "name": "click",
        "globs": ["src/click/*.py"],
        "exclude": None,
        "comment": ("#",),
    },
    "go": {
        "mirror": "spf13+cobra",
        "name": "cobra",
        "globs": ["*.go", "doc/*.go"],
        "exclude": re.compile(r"_test\.go$"),
        "comment": ("//", "/*", "*/", "* ", "*\t"),
    },
    "js": {
        "mirror": "expressjs+express",
        "name": "express",
        "globs": ["lib/*.js", "index.js"],
        "exclude": None,
        "comment": ("//", "/*", "*/", "* ", "*\t"),
    },
}

LITERALS = {
    "nil", "None", "True", "False", "true", "false", "null", "undefined", "this",
    "self", "iota", "NaN",
}
IDENT_LIST = re.compile(r"[A-Za-z_$][\w$]*(\s*,\s*[A-Za-z_$][\w$]*)*")
IDENT = re.compile(r"[A-Za-z_$][\w$]*")
BRACE_ONLY = re.compile(r"^[\s\}\)\];,]*$")


# ----------------------------------------------------------------------------- helpers

def run(cmd, cwd, env=None, timeout=120):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.stdout, p.stderr, p.returncode, time.perf_counter() - t0


def timed(cmd, cwd, runs, env=None):
    """Run `cmd` `runs` times; return (stdout of the last run, rc, median seconds)."""
    times, out, rc = [], "", 0
    for _ in range(runs):
        out, _err, rc, dt = run(cmd, cwd, env)
        times.append(dt)
    return out, rc, statistics.median(times)


def parse_json(text):
    i = text.find("{")
    if i < 0:
        return None
    try:
        return json.loads(text[i:])
    except json.JSONDecodeError:
        return None


def jaccard(a, b):
    a, b = set(a), set(b)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ensure_source(lang, mirror_root: Path, src_root: Path):
    spec = LANGS[lang]
    dest = src_root / spec["name"]
    gitdir = mirror_root / spec["mirror"] / "repo"
    if not gitdir.exists():
        gitdir = mirror_root / spec["mirror"]
    sha = subprocess.run(["git", "--git-dir", str(gitdir), "rev-parse", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    if not dest.exists():
        dest.mkdir(parents=True)
        arch = subprocess.Popen(["git", "--git-dir", str(gitdir), "archive", "HEAD"],
                                stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(dest)], stdin=arch.stdout, check=True)
        arch.wait()
    return dest, sha


# ------------------------------------------------------------------- quarry JSON shapes

def q_blocks_edges(f):
    c = f.get("cfg") if isinstance(f.get("cfg"), dict) else f
    return c.get("blocks", []), c.get("edges", [])


def q_complexity(f):
    if f.get("complexity") is not None:
        return f["complexity"]
    c = f.get("cfg") if isinstance(f.get("cfg"), dict) else {}
    return c.get("complexity")


def q_def_use(f):
    d = f.get("dfg")
    if isinstance(d, dict):
        return d.get("edges", [])
    return f.get("def_use", [])


# ----------------------------------------------------------------------- source facts

def is_noncode(text, comment):
    s = text.strip()
    return not s or s.startswith(comment) or bool(BRACE_ONLY.match(s))


def header_end(lang, src_lines, source, f):
    """Last line of the function's header (signature)."""
    start, end = f["start_line"], f["end_line"]
    if lang == "python":
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return start
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if start in (node.lineno, first) and node.body:
                    return max(start, node.body[0].lineno - 1)
        return start
    for ln in range(start, end + 1):
        code = re.sub(r"//.*$", "", src_lines[ln - 1]).rstrip()
        if code.endswith("{"):
            return ln
    return start


def slice_target(lang, src_lines, f, nested, hdr):
    """(line, var or None, how) for the backward slice."""
    comment = LANGS[lang]["comment"]

    def inside_nested(ln):
        return any(a <= ln <= b for a, b in nested)

    body = [ln for ln in range(hdr + 1, f["end_line"] + 1) if not inside_nested(ln)]
    for ln in reversed(body):
        m = re.match(r"\s*return\b(.*)$", src_lines[ln - 1])
        if m:
            expr = re.sub(r"(//|#).*$", "", m.group(1)).strip().rstrip(";").strip()
            var = None
            if expr and IDENT_LIST.fullmatch(expr):
                for name in IDENT.findall(expr):
                    if name not in LITERALS:
                        var = name
                        break
            return ln, var, "return"
    for ln in reversed(body):
        if not is_noncode(src_lines[ln - 1], comment):
            return ln, None, "last statement"
    return f["end_line"], None, "last line"


def flow_text(text, name, start, end):
    """This function's part of the text form's `flow` section: its heading line (two-space
    indent; older builds print only that line) and the deeper-indented block lines under it."""
    lines = text.split("\n")
    try:
        i = lines.index(next(ln for ln in lines if ln.startswith("flow")))
    except StopIteration:
        return ""
    head = re.compile(rf"  {re.escape(name)} {start}-{end}[: ]")
    out = []
    for ln in lines[i + 1:]:
        if out:
            if ln.startswith("    "):
                out.append(ln)
                continue
            break
        if head.match(ln):
            out.append(ln)
    return "\n".join(out)


# ---------------------------------------------------------------------- tldr daemon

class TldrDaemon:
    """llm-tldr's per-project daemon, spoken to as tldr-mcp speaks to it."""

    def __init__(self, tldr, project: Path):
        self.tldr, self.project = tldr, project.resolve()
        h = hashlib.md5(str(self.project).encode()).hexdigest()[:8]
        self.sock = Path(tempfile.gettempdir()) / f"tldr-{h}.sock"
        self.started = False

    def start(self):
        # the daemon inherits the starter's stdout/stderr: keep them off our pipes
        t0 = time.perf_counter()
        subprocess.run([self.tldr, "daemon", "start", "--project", str(self.project)],
                       cwd=self.project, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
        dt = time.perf_counter() - t0
        for _ in range(100):
            if self.sock.exists():
                try:
                    if self.ask({"cmd": "ping"})[0].get("status") == "ok":
                        self.started = True
                        return dt
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"tldr daemon did not start for {self.project}")

    def ask(self, cmd: dict):
        t0 = time.perf_counter()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(60)
        s.connect(str(self.sock))
        s.sendall(json.dumps(cmd).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
        s.close()
        return json.loads(buf.decode()), time.perf_counter() - t0, len(buf.decode())

    def stop(self):
        if self.started:
            subprocess.run([self.tldr, "daemon", "stop", "--project", str(self.project)],
                           cwd=self.project, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            self.started = False


# --------------------------------------------------------------------------- per file

class FileFacts:
    def __init__(self, quarry, root: Path, rel: str, env, runs):
        self.rel = rel
        self.path = root / rel
        self.source = self.path.read_text(encoding="utf-8", errors="replace")
        self.lines = self.source.split("\n")
        out, rc, _ = timed([quarry, "summary", rel, "--mode", "extract", "--json"], root, 1, env)
        self.json_text = out
        self.doc = parse_json(out) or {}
        self.flow = self.doc.get("flow", [])
        txt, _e, _rc, _dt = run([quarry, "summary", rel, "--mode", "extract"], root, env)
        self.text = txt


def choose(files, per_lang, min_cx):
    per_file = []
    for ff in files:
        names = [f["name"] for f in ff.flow]
        cands = [f for f in ff.flow
                 if f["name"] != "<anonymous>" and names.count(f["name"]) == 1
                 and (q_complexity(f) or 0) >= min_cx]
        per_file.append((ff, sorted(cands, key=lambda f: f["start_line"])))
    chosen, i = [], 0
    while len(chosen) < per_lang and any(i < len(c) for _ff, c in per_file):
        for ff, cands in per_file:
            if i < len(cands) and len(chosen) < per_lang:
                chosen.append((ff, cands[i]))
        i += 1
    return chosen


def measure(lang, root, ff: FileFacts, f, a, env, daemon):
    runs = a.runs
    comment = LANGS[lang]["comment"]
    name, start, end = f["name"], f["start_line"], f["end_line"]
    rec = {"lang": lang, "file": ff.rel, "function": name, "start": start, "end": end}
    nested = [(g["start_line"], g["end_line"]) for g in ff.flow
              if g is not f and start <= g["start_line"] and g["end_line"] <= end
              and (g["start_line"], g["end_line"]) != (start, end)]
    hdr = header_end(lang, ff.lines, ff.source, f)

    # ---- quarry cfg + dfg: one whole-file call
    _out, _rc, t = timed([a.quarry, "summary", ff.rel, "--mode", "extract", "--json"],
                         root, runs, env)
    blocks, edges = q_blocks_edges(f)
    # newer builds take `--symbol NAME` with `--mode extract`: only that function's flow
    sym = {}
    if a.symbol_ok:
        out_sj, rc_sj, t_sj = timed([a.quarry, "summary", ff.rel, "--mode", "extract",
                                     "--symbol", name, "--json"], root, runs, env)
        out_st, _e, rc_st, _dt = run([a.quarry, "summary", ff.rel, "--mode", "extract",
                                      "--symbol", name], root, env)
        if rc_sj == 0 and rc_st == 0:
            sym = {"symbol_json_chars": len(out_sj), "symbol_text_chars": len(out_st),
                   "symbol_ms": t_sj * 1000}
    flow_line = flow_text(ff.text, name, start, end)
    rec["quarry"] = {
        "complexity": q_complexity(f), "blocks": len(blocks), "edges": len(edges),
        "def_use": len(q_def_use(f)),
        "summary_json_chars": len(ff.json_text), "flow_entry_json_chars":
            len(json.dumps(f, separators=(",", ":"))),
        "summary_text_chars": len(ff.text), "flow_text_chars": len(flow_line),
        "summary_ms": t * 1000, **sym,
    }

    # ---- tldr cfg / dfg
    out, rc, t_cfg = timed([a.tldr, "cfg", ff.rel, name], root, runs)
    cfg = parse_json(out) or {}
    cfg_lines = [ln for b in cfg.get("blocks", []) for ln in b.get("lines", [])]
    located = bool(cfg_lines) and start <= min(cfg_lines) <= end
    out_d, rc_d, t_dfg = timed([a.tldr, "dfg", ff.rel, name], root, runs)
    dfg = parse_json(out_d) or {}
    rec["tldr"] = {
        "complexity": cfg.get("cyclomatic_complexity"), "blocks": len(cfg.get("blocks", [])),
        "edges": len(cfg.get("edges", [])), "def_use": len(dfg.get("edges", [])),
        "located": located,
        "cfg_json_chars": len(out), "dfg_json_chars": len(out_d),
        "cfg_ms": t_cfg * 1000, "dfg_ms": t_dfg * 1000,
    }
    rec["complexity_equal"] = (located and rec["quarry"]["complexity"] is not None
                               and rec["quarry"]["complexity"] == rec["tldr"]["complexity"])

    # ---- def-use triples
    def norm(d):
        return start if start <= d <= hdr else d

    qt = {(e["var"], norm(e["def_line"]), e["use_line"]) for e in q_def_use(f)}
    tt = {(e["var"], norm(e["def_line"]), e["use_line"]) for e in dfg.get("edges", [])}
    comparable = located and bool(tt) and bool(qt)
    inter = qt & tt
    rec["dfg"] = {
        "comparable": comparable, "quarry": len(qt), "tldr": len(tt), "both": len(inter),
        "jaccard": jaccard(qt, tt) if comparable else None,
        "tldr_in_quarry": len(inter) / len(tt) if comparable else None,
        "quarry_in_tldr": len(inter) / len(qt) if comparable else None,
        "only_quarry": sorted(qt - tt)[:12], "only_tldr": sorted(tt - qt)[:12],
    }

    # ---- slices
    line, var, how = slice_target(lang, ff.lines, f, nested, hdr)
    qcmd = [a.quarry, "slice", f"{ff.rel}:{line}"] + (["--var", var] if var else [])
    out_qj, rc_qj, t_qs = timed(qcmd + ["--json"], root, runs, env)
    qs = parse_json(out_qj) or {}
    out_qt, _e, _rc, _dt = run(qcmd, root, env)
    tcmd = [a.tldr, "slice", ff.rel, name, str(line)] + (["--var", var] if var else [])
    out_ts, rc_ts, t_ts = timed(tcmd, root, runs)
    ts = parse_json(out_ts) or {}
    ql, tl = set(qs.get("lines", [])), set(ts.get("lines", []))

    def stmt(s):
        return {ln for ln in s if 0 < ln <= len(ff.lines)
                and not is_noncode(ff.lines[ln - 1], comment)}

    qst, tst = stmt(ql), stmt(tl)
    rec["slice"] = {
        "line": line, "var": var, "target": how, "quarry_function": qs.get("function"),
        "quarry_lines": sorted(ql), "tldr_lines": sorted(tl),
        "quarry_n": len(ql), "tldr_n": len(tl),
        "jaccard": jaccard(ql, tl), "exact": ql == tl,
        "stmt_jaccard": jaccard(qst, tst), "stmt_exact": qst == tst,
        "only_quarry_stmt": sorted(qst - tst), "only_tldr_stmt": sorted(tst - qst),
        "quarry_text_chars": len(out_qt), "quarry_json_chars": len(out_qj),
        "tldr_json_chars": len(out_ts),
        "quarry_ms": t_qs * 1000, "tldr_ms": t_ts * 1000,
    }

    # ---- tldr warm daemon (as tldr-mcp sends it)
    if daemon is not None:
        tlang = {"python": "python", "go": "go", "js": "javascript"}[lang]
        absf = str((root / ff.rel).resolve())
        d = {}
        reqs = {
            "cfg": {"cmd": "cfg", "file": absf, "function": name, "language": tlang},
            "dfg": {"cmd": "dfg", "file": absf, "function": name, "language": tlang},
            "slice": {"cmd": "slice", "file": absf, "function": name, "line": line,
                      "direction": "backward", "variable": var, "language": tlang},
        }
        for k, req in reqs.items():
            resp, first, chars = daemon.ask(req)
            rep = [daemon.ask(req)[1] for _ in range(runs)]
            d[f"{k}_first_ms"] = first * 1000
            d[f"{k}_cached_ms"] = statistics.median(rep) * 1000
            d[f"{k}_chars"] = chars
            if k == "cfg":
                d["cfg_same_as_cli"] = resp.get("result") == cfg
            elif k == "slice":
                # tldr's daemon drops the request's language and slices as Python
                d["slice_status"] = resp.get("status")
                d["slice_error"] = resp.get("message")
                d["slice_lines"] = resp.get("lines")
                d["slice_same_as_cli"] = (resp.get("status") == "ok"
                                          and set(resp.get("lines") or []) == tl)
        rec["tldr_daemon"] = d
    return rec


# ------------------------------------------------------------------------- summaries

def summarize(recs):
    n = len(recs)
    loc = [r for r in recs if r["tldr"]["located"]]
    dc = [r for r in loc if r["dfg"]["comparable"]]
    s = {
        "functions": n,
        "tldr_located": len(loc),
        "complexity_equal": sum(r["complexity_equal"] for r in loc),
        "slice_exact": sum(r["slice"]["exact"] for r in loc),
        "slice_stmt_exact": sum(r["slice"]["stmt_exact"] for r in loc),
        "slice_jaccard": mean([r["slice"]["jaccard"] for r in loc]),
        "slice_stmt_jaccard": mean([r["slice"]["stmt_jaccard"] for r in loc]),
        "slice_lines_quarry": median([r["slice"]["quarry_n"] for r in loc]),
        "slice_lines_tldr": median([r["slice"]["tldr_n"] for r in loc]),
        "dfg_comparable": len(dc),
        "dfg_jaccard": mean([r["dfg"]["jaccard"] for r in dc]),
        "dfg_tldr_in_quarry": mean([r["dfg"]["tldr_in_quarry"] for r in dc]),
        "dfg_quarry_in_tldr": mean([r["dfg"]["quarry_in_tldr"] for r in dc]),
        "dfg_pairs_quarry": median([r["dfg"]["quarry"] for r in recs]),
        "dfg_pairs_tldr": median([r["dfg"]["tldr"] for r in recs]),
        "chars": {
            "q_summary_json_file": median([r["quarry"]["summary_json_chars"] for r in recs]),
            "q_flow_entry_json": median([r["quarry"]["flow_entry_json_chars"] for r in recs]),
            "q_summary_text_file": median([r["quarry"]["summary_text_chars"] for r in recs]),
            "q_flow_text": median([r["quarry"]["flow_text_chars"] for r in recs]),
            "q_symbol_json": median([r["quarry"].get("symbol_json_chars") for r in recs]),
            "q_symbol_text": median([r["quarry"].get("symbol_text_chars") for r in recs]),
            "t_cfg_json": median([r["tldr"]["cfg_json_chars"] for r in recs]),
            "t_dfg_json": median([r["tldr"]["dfg_json_chars"] for r in recs]),
            "q_slice_text": median([r["slice"]["quarry_text_chars"] for r in recs]),
            "q_slice_json": median([r["slice"]["quarry_json_chars"] for r in recs]),
            "t_slice_json": median([r["slice"]["tldr_json_chars"] for r in recs]),
        },
        "ms": {
            "q_summary": median([r["quarry"]["summary_ms"] for r in recs]),
            "q_symbol": median([r["quarry"].get("symbol_ms") for r in recs]),
            "q_slice": median([r["slice"]["quarry_ms"] for r in recs]),
            "t_cfg": median([r["tldr"]["cfg_ms"] for r in recs]),
            "t_dfg": median([r["tldr"]["dfg_ms"] for r in recs]),
            "t_slice": median([r["slice"]["tldr_ms"] for r in recs]),
        },
    }
    dm = [r["tldr_daemon"] for r in recs if "tldr_daemon" in r]
    if dm:
        for k in ("cfg", "dfg", "slice"):
            s["ms"][f"td_{k}_first"] = median([d[f"{k}_first_ms"] for d in dm])
            s["ms"][f"td_{k}_cached"] = median([d[f"{k}_cached_ms"] for d in dm])
        s["daemon_cfg_same_as_cli"] = sum(d["cfg_same_as_cli"] for d in dm)
        s["daemon_slice_same_as_cli"] = sum(d["slice_same_as_cli"] for d in dm)
        s["daemon_slice_errors"] = sum(d["slice_status"] != "ok" for d in dm)
        s["daemon_n"] = len(dm)
    return s


def fmt(x, nd=2):
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def print_tables(groups):
    rows = list(groups.items())
    print("\n## Agreement (functions llm-tldr located)\n")
    print("| lang | funcs | tldr found | complexity = | slice exact | slice exact (stmt) "
          "| slice Jaccard | slice Jaccard (stmt) | slice lines q/t (median) "
          "| DFG comparable | DFG Jaccard | tldr pairs in quarry | quarry pairs in tldr "
          "| def-use pairs q/t (median) |")
    print("|" + "---|" * 14)
    for lang, s in rows:
        L = s["tldr_located"]
        print(f"| {lang} | {s['functions']} | {L} | {s['complexity_equal']}/{L} "
              f"| {s['slice_exact']}/{L} | {s['slice_stmt_exact']}/{L} "
              f"| {fmt(s['slice_jaccard'])} | {fmt(s['slice_stmt_jaccard'])} "
              f"| {fmt(s['slice_lines_quarry'], 0)}/{fmt(s['slice_lines_tldr'], 0)} "
              f"| {s['dfg_comparable']}/{L} | {fmt(s['dfg_jaccard'])} "
              f"| {fmt(s['dfg_tldr_in_quarry'])} | {fmt(s['dfg_quarry_in_tldr'])} "
              f"| {fmt(s['dfg_pairs_quarry'], 0)}/{fmt(s['dfg_pairs_tldr'], 0)} |")
    print("\n## Characters an agent reads (median per function)\n")
    print("| lang | quarry extract JSON (whole file) | quarry extract --symbol JSON "
          "| quarry flow entry JSON (this fn) "
          "| quarry extract text (whole file) | quarry extract --symbol text "
          "| quarry flow text (this fn) "
          "| tldr cfg JSON | tldr dfg JSON | quarry slice text | quarry slice JSON "
          "| tldr slice JSON |")
    print("|" + "---|" * 12)
    for lang, s in rows:
        c = s["chars"]
        print(f"| {lang} | {fmt(c['q_summary_json_file'], 0)} | {fmt(c['q_symbol_json'], 0)} "
              f"| {fmt(c['q_flow_entry_json'], 0)} "
              f"| {fmt(c['q_summary_text_file'], 0)} | {fmt(c['q_symbol_text'], 0)} "
              f"| {fmt(c['q_flow_text'], 0)} "
              f"| {fmt(c['t_cfg_json'], 0)} | {fmt(c['t_dfg_json'], 0)} "
              f"| {fmt(c['q_slice_text'], 0)} | {fmt(c['q_slice_json'], 0)} "
              f"| {fmt(c['t_slice_json'], 0)} |")
    print("\n## Wall time, ms (median over functions of the median of the runs)\n")
    has_d = any("td_cfg_first" in s["ms"] for _l, s in rows)
    head = ("| lang | quarry extract (cfg+dfg, whole file) | quarry extract --symbol "
            "| quarry slice | tldr cfg | tldr dfg | tldr slice |")
    if has_d:
        head += (" tldr daemon cfg first / cached | dfg first / cached | slice first / cached "
                 "| daemon cfg = CLI | daemon slice = CLI | daemon slice errors |")
    print(head)
    print("|" + "---|" * (7 + (6 if has_d else 0)))
    for lang, s in rows:
        m = s["ms"]
        line = (f"| {lang} | {fmt(m['q_summary'], 0)} | {fmt(m['q_symbol'], 0)} "
                f"| {fmt(m['q_slice'], 0)} "
                f"| {fmt(m['t_cfg'], 0)} | {fmt(m['t_dfg'], 0)} | {fmt(m['t_slice'], 0)} |")
        if has_d and "td_cfg_first" in m:
            line += (f" {fmt(m['td_cfg_first'], 1)} / {fmt(m['td_cfg_cached'], 1)} "
                     f"| {fmt(m['td_dfg_first'], 1)} / {fmt(m['td_dfg_cached'], 1)} "
                     f"| {fmt(m['td_slice_first'], 1)} / {fmt(m['td_slice_cached'], 1)} "
                     f"| {s['daemon_cfg_same_as_cli']}/{s['daemon_n']} "
                     f"| {s['daemon_slice_same_as_cli']}/{s['daemon_n']} "
                     f"| {s['daemon_slice_errors']}/{s['daemon_n']} |")
        print(line)


def print_details(recs):
    print("\n## Per function\n")
    print("| lang | file:start-end | function | cx q/t | slice at (var) | slice lines q/t "
          "| stmt Jaccard | only quarry (stmt) | only tldr (stmt) | def-use q/t/both |")
    print("|" + "---|" * 10)
    for r in recs:
        s, d = r["slice"], r["dfg"]
        loc = "" if r["tldr"]["located"] else " (tldr: not found)"
        print(f"| {r['lang']} | {r['file']}:{r['start']}-{r['end']} | {r['function']}{loc} "
              f"| {r['quarry']['complexity']}/{r['tldr']['complexity']} "
              f"| {s['line']} ({s['var'] or '-'}) | {s['quarry_n']}/{s['tldr_n']} "
              f"| {s['stmt_jaccard']:.2f} | {short(s['only_quarry_stmt'])} "
              f"| {short(s['only_tldr_stmt'])} | {d['quarry']}/{d['tldr']}/{d['both']} |")


def short(xs, k=8):
    return ",".join(map(str, xs[:k])) + ("…" if len(xs) > k else "") if xs else "–"


def binary_facts(quarry):
    p = Path(quarry)
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain",
                            "--untracked-files=no"], capture_output=True, text=True).stdout
    return {
        "quarry_tree_dirty": bool(dirty.strip()),
        "quarry_build": "release" if "release" in p.parts else
                        "debug" if "debug" in p.parts else "unknown",
        "quarry_mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(p.stat().st_mtime)),
        "quarry_sha256": h.hexdigest(), "quarry_head": head,
    }


def machine():
    model = ""
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                model = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores {model}".strip()


# ------------------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    rel = REPO_ROOT / "target" / "release" / "quarry"
    ap.add_argument("--quarry", default=str(rel if rel.exists()
                                            else REPO_ROOT / "target" / "debug" / "quarry"))
    ap.add_argument("--tldr", default=shutil.which("tldr") or "/tmp/tldr-venv/bin/tldr")
    ap.add_argument("--langs", default="python,go,js")
    ap.add_argument("--per-lang", type=int, default=20)
    ap.add_argument("--min-complexity", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mirror-root", default="/work/.mirror")
    ap.add_argument("--src-root", default="/tmp/tldrflow-src",
                    help="where the repositories are extracted (git archive HEAD)")
    ap.add_argument("--no-daemon", action="store_true", help="skip llm-tldr's warm daemon")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run the quarry binary in place instead of a copy taken at the start")
    ap.add_argument("--json", action="store_true", help="print everything as JSON")
    ap.add_argument("--save", help="also write the JSON (records + summaries) to this file")
    ap.add_argument("--details", action="store_true", help="also print a per-function table")
    a = ap.parse_args()
    a.quarry = str(Path(a.quarry).resolve())
    a.tldr = str(Path(a.tldr).resolve()) if Path(a.tldr).exists() else a.tldr

    qhome = tempfile.mkdtemp(prefix="tldrflow-qhome-")
    facts = binary_facts(a.quarry)
    if not a.no_snapshot:
        # run a copy, so that a rebuild of the binary during the run cannot mix two builds
        snap = Path(qhome) / "bin" / "quarry"
        snap.parent.mkdir()
        shutil.copy2(a.quarry, snap)
        a.quarry_original, a.quarry = a.quarry, str(snap)
    env = dict(os.environ, QUARRY_HOME=qhome)  # an empty workspace: no index is used
    langs = [x.strip() for x in a.langs.split(",") if x.strip()]
    helptext = run([a.quarry, "summary", "--help"], ".", env)[0]
    a.symbol_ok = "--mode extract" in " ".join(helptext.split())
    all_recs = []
    meta = {"quarry": getattr(a, "quarry_original", a.quarry), "tldr": a.tldr, "runs": a.runs,
            "repos": {}}
    meta["tldr_version"] = (run([a.tldr, "--version"], ".")[0].strip()
                            or run([a.tldr, "--version"], ".")[1].strip())
    meta.update(facts)
    meta["date"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    meta["machine"] = machine()
    try:
        for lang in langs:
            spec = LANGS[lang]
            root, sha = ensure_source(lang, Path(a.mirror_root), Path(a.src_root))
            meta["repos"][lang] = {"repo": spec["mirror"].replace("+", "/"), "commit": sha}
            paths = sorted({p for g in spec["globs"] for p in root.glob(g)})
            if spec["exclude"]:
                paths = [p for p in paths if not spec["exclude"].search(p.name)]
            files = [FileFacts(a.quarry, root, str(p.relative_to(root)), env, 1) for p in paths]
            chosen = choose(files, a.per_lang, a.min_complexity)
            daemon = None
            if not a.no_daemon:
                daemon = TldrDaemon(a.tldr, root)
                daemon.start()
            try:
                for ff, f in chosen:
                    rec = measure(lang, root, ff, f, a, env, daemon)
                    all_recs.append(rec)
                    print(f"[{lang}] {ff.rel}:{f['start_line']} {f['name']}: cx "
                          f"{rec['quarry']['complexity']}/{rec['tldr']['complexity']} "
                          f"slice J={rec['slice']['stmt_jaccard']:.2f} "
                          f"dfg {rec['dfg']['both']}/{rec['dfg']['quarry']}/{rec['dfg']['tldr']}",
                          file=sys.stderr)
            finally:
                if daemon:
                    daemon.stop()
    finally:
        shutil.rmtree(qhome, ignore_errors=True)

    if a.no_snapshot and binary_facts(a.quarry)["quarry_mtime"] != meta["quarry_mtime"]:
        meta["warning"] = "the quarry binary changed during the run"
        print("WARNING: the quarry binary changed during the run", file=sys.stderr)
    groups = {lang: summarize([r for r in all_recs if r["lang"] == lang]) for lang in langs
              if any(r["lang"] == lang for r in all_recs)}
    if len(groups) > 1:
        groups["all"] = summarize(all_recs)
    result = {"meta": meta, "summary": groups, "functions": all_recs}
    if a.save:
        Path(a.save).write_text(json.dumps(result, indent=1))
    if a.json:
        print(json.dumps(result, indent=1))
        return
    print(f"date: {meta['date']}; machine: {meta['machine']}")
    print(f"quarry: {meta['quarry']} ({meta['quarry_build']} build, modified {meta['quarry_mtime']}, "
          f"sha256 {meta['quarry_sha256'][:12]}, source HEAD {meta['quarry_head'][:12]}"
          f"{' + uncommitted changes' if meta['quarry_tree_dirty'] else ''})")
    print(f"llm-tldr: {a.tldr} ({meta['tldr_version']}); runs per timing: {a.runs}")
    for lang, r in meta["repos"].items():
        print(f"{lang}: {r['repo']} @ {r['commit'][:12]}")
    print_tables(groups)
    if a.details:
        print_details(all_recs)


if __name__ == "__main__":
    main()
