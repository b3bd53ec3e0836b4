#!/usr/bin/env bash
# bench/warm.sh REPO [RUNS] — what the workspace daemon saves a short-lived client: every kind
# of call an agent makes, as a fresh process each time, in-process (QUARRY_DAEMON=off) beside
# through the daemon (QUARRY_DAEMON=require), p50/p95 over RUNS calls (default 50), each also as
# a ratio to `quarry search --mode lexical` (the floor: a process that opens the index and
# runs BM25). REPO is indexed with the model into a throwaway workspace first (WS=DIR: into
# DIR, kept, so a second run starts at once).
#
# Kinds: the hook on a question-like Grep (ranked, embeds), the hook on a whole-file Read (an
# outline: no model, no daemon), `quarry search` on a question (hybrid), a name (symbol route:
# never the model), an issue text (--query-file), and the lexical floor.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(realpath "${1:?usage: bench/warm.sh REPO [RUNS]}")
runs=${2:-50}
source bench/lib.sh
# WS=DIR keeps the workspace (a second run re-indexes nothing and embeds nothing).
if [ -n "${WS:-}" ]; then ws=$WS; trap - EXIT; fi
"$bin" --index-dir "$ws" index "$repo" >&2
python3 - "$bin" "$ws" "$repo" "$runs" <<'PY'
import json, os, subprocess, sys, time
bin, ws, repo, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = dict(os.environ, QUARRY_HOOK_STATE=os.path.join(ws, "hook-state"))
# The longest source file of the repo (tests left out) up to 3,000 lines, for the Read outline
# (an agent's usual big file; bench/hook.sh times any file).
def lines(p):
    with open(p, "rb") as f:
        return f.read().count(b"\n")
code = [os.path.join(d, f) for d, _, fs in os.walk(repo) if "/." not in d and "test" not in d
        for f in fs if f.endswith((".py", ".rs", ".go", ".ts", ".js"))]
biggest = max((p for p in code if lines(p) <= 3000), key=lines)
# A name the repo defines: the first top-level definition of that file.
outline = json.loads(subprocess.run([bin, "--index-dir", ws, "summary", biggest, "--json"],
                                    capture_output=True, text=True, check=True).stdout)
name = next(i["name"] for i in outline["items"] if i["depth"] == 0 and i["kind"] != "heading")
issue = os.path.join(ws, "issue.md")
with open(issue, "w") as f:
    f.write("Session cookie is not refreshed\n\nWhen SESSION_REFRESH_EACH_REQUEST is set the cookie should be "
            "sent again on every request, but after upgrading it is only set when the session is modified.\n\n"
            "```python\napp.config['SESSION_REFRESH_EACH_REQUEST'] = True\n```\n\nTraceback: none, the header is missing.\n")
def grep_event(i, policy):
    return json.dumps({"session_id": f"b{i}-{policy}", "hook_event_name": "PreToolUse", "tool_name": "Grep",
                       "tool_input": {"pattern": "where is the session cookie refreshed"}, "cwd": repo})
def read_event(i, policy):
    # A session of its own each time: a second Read of a file in one session is let through.
    return json.dumps({"session_id": f"r{i}-{policy}", "hook_event_name": "PreToolUse", "tool_name": "Read",
                       "tool_input": {"file_path": biggest}, "cwd": repo})
base = [bin, "--index-dir", ws]
kinds = [
    ("search --mode lexical (floor)", base + ["search", "--mode", "lexical", "session cookie refresh"], None),
    ("hook Grep question", base + ["hook", "claude"], grep_event),
    ("hook Read outline", base + ["hook", "claude"], read_event),
    ("search hybrid question", base + ["search", "how is the session cookie refreshed"], None),
    (f"search a name ({name})", base + ["search", name], None),
    ("search issue text", base + ["search", "--query-file", issue], None),
]
def timed(cmd, stdin, policy):
    t = time.perf_counter()
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=dict(env, QUARRY_DAEMON=policy))
    ms = (time.perf_counter() - t) * 1000
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({policy}): {out.stderr}")
    return ms
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs) + 0.999) - 1 if q < 1 else len(xs) - 1)]
subprocess.run(base + ["daemon", "start"], check=True, capture_output=True)
results = {}
for name, cmd, event in kinds:
    for policy in ("off", "require"):
        if name.startswith("hook Read") and policy == "require":
            policy = "auto"  # an outline never asks the daemon
        times = [timed(cmd, event(i, policy) if event else None, policy) for i in range(runs)]
        results[(name, policy)] = (pct(times, 0.5), pct(times, 0.95))
floor = results[("search --mode lexical (floor)", "off")][0]
status = json.loads(subprocess.run(base + ["daemon", "status", "--json"], capture_output=True, text=True).stdout)
subprocess.run(base + ["daemon", "stop"], capture_output=True)
print(f"{repo}: {runs} fresh processes per row; lexical floor p50 {floor:.1f} ms; outline of {os.path.relpath(biggest, repo)} ({lines(biggest)} lines)")
print(f"{'call':32} {'in-process p50/p95':>20} {'daemon p50/p95':>18} {'daemon / lexical':>17}")
for name, _, _ in kinds:
    alone = results[(name, "off")]
    warm = results.get((name, "require")) or results.get((name, "auto"))
    print(f"{name:32} {alone[0]:8.1f} / {alone[1]:6.1f} ms {warm[0]:7.1f} / {warm[1]:6.1f} ms {warm[0] / floor:12.1f}x")
print(f"daemon: {status['requests']} requests, resident {status['rss_kib'] / 1024:.0f} MiB, model {status['model'].split('/')[0]}")
PY
