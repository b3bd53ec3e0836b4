#!/usr/bin/env bash
# The long fault campaign (the suite runs a few trials of each; this runs hundreds):
#   1. kill -9 of `quarry index` and of `quarry sync` at random moments, each followed by
#      `status --check` (the file must open and pass SQLite's quick check);
#   2. one finishing run, whose file, chunk and commit counts must equal a clean run's
#      (lost or mismatched rows);
#   3. 4 KB of garbage at random offsets of a copy of the index: `status --check` must find it
#      and `index --rebuild` must recover; then 1-16 random bytes (CORRUPTIONS trials): what
#      `--check` and `--check --deep` find, and whether answers changed unseen; then one byte
#      of schema text (refused as damaged or answered as clean); then abuse (sg
#      on 100k nested braces, 600 pipelined MCP calls, 400 concurrent HTTP searches) with the
#      peak memory of each;
#   3d-3g. a healthy index held by another connection, read-only or emptied (never called
#      damaged, never moved aside; the emptied one named); memory of requests asking for many
#      matches (sg -k 10,000 and 100,000, search -k 1000, concurrent HTTP, pipelined MCP);
#      connections that never give their turn back (1,100 idle, 256 trickling bodies) while
#      probes ask; a daemon stopped with SIGSTOP;
#   3h-3i. the server as a door (files the index does not hold, another local user, writes
#      from another origin, a request line naming another host); the daemon killed with -9
#      in the middle of a grep's output (20 trials: a prefix and a failing exit, never twice);
#   3j-3k. a healthy index on a read-only mount (a tmpfs remounted read-only as root, else a
#      chmod-ed folder), as a finished run and a kill -9 leave it: check, deep check (within
#      120 s), search and log answer, never "damaged", no scratch folder left; `index
#      --rebuild` with searches beside it (each answers as before the rebuild) and killed
#      with -9 at random moments (the old index checks sound and answers as before);
#   3l. OpenSearch (a node of the test install on a tmpfs; root): kill -9 of sync (one
#      document per commit), searches beside `index --rebuild` and rebuilds killed midway
#      (answers as before), a disk past its flood stage and a full one (named); OS_KILLS=8;
#   4. writers (index, sync) and readers (search, status) at once: errors other than "another
#      process is writing" are failures;
#   5. the property tests (chunker, planner, MCP guard) with PROPTEST_CASES cases.
# Usage: bench/faults.sh [KILLS=200] [CORRUPTIONS=50] [SECONDS_LOAD=30] [PROPTEST_CASES=20000]
#        [REBUILDS=20]
# Env SEED fixes the random choices (printed either way).
set -euo pipefail
cd "$(dirname "$0")/.."
KILLS=${KILLS:-200}
CORRUPTIONS=${CORRUPTIONS:-50}
SECONDS_LOAD=${SECONDS_LOAD:-30}
REBUILDS=${REBUILDS:-20}
PROPTEST_CASES=${PROPTEST_CASES:-20000}
SEED=${SEED:-$(date +%s)}
RANDOM=$SEED
echo "faults.sh: seed $SEED, $KILLS kills, $CORRUPTIONS corruptions, ${SECONDS_LOAD}s of load"

cargo build --release -q -p quarry-cli
Q="$PWD/target/release/quarry"
WORK=$(mktemp -d /tmp/quarry-faults.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# A generated repo: 1,500 Python files and a history of 1,200 commits (one per file).
REPO="$WORK/repo"
mkdir -p "$REPO/pkg"
git -C "$REPO" init -q
for i in $(seq 1 1200); do
    printf 'def handler_%d(request):\n    """Handle request kind %d."""\n    return request.value * %d\n' "$i" "$i" "$i" >"$REPO/pkg/m$i.py"
    git -C "$REPO" add -A >/dev/null
    GIT_AUTHOR_DATE="2024-01-01T00:00:$((i % 60))Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z" \
        git -C "$REPO" -c user.name=f -c user.email=f@x commit -q -m "Add handler $i"
done
for i in $(seq 1201 1500); do
    printf 'class Store%d:\n    def load(self):\n        return %d\n' "$i" "$i" >"$REPO/pkg/m$i.py"
done

counts() { # files chunks commits of workspace $1
    "$Q" --index-dir "$1" status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
r = s["repos"][0]
print(r["files"], r["chunks"], sum(h["commits"] for h in s["history"]))'
}

CLEAN="$WORK/clean"
"$Q" --index-dir "$CLEAN" index "$REPO" --no-embed >/dev/null 2>&1
"$Q" --index-dir "$CLEAN" sync "$REPO" --no-embed >/dev/null 2>&1
want=$(counts "$CLEAN")
echo "clean run: files chunks commits = $want"

# 1. kills
KILLED="$WORK/killed"
kill_failures=0
for trial in $(seq 1 "$KILLS"); do
    if ((trial % 2)); then
        cmd=(index "$REPO" --no-embed)
        # Start some runs from scratch, so kills land in first runs too.
        ((RANDOM % 4 == 0)) && rm -rf "$KILLED"
    else
        cmd=(sync "$REPO" --no-embed)
    fi
    "$Q" --index-dir "$KILLED" "${cmd[@]}" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf '%03d' $((RANDOM % 600)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if [ -f "$KILLED/index.sqlite" ] && ! "$Q" --index-dir "$KILLED" status --check >/dev/null 2>"$WORK/err"; then
        kill_failures=$((kill_failures + 1))
        echo "  kill trial $trial (${cmd[0]}): $(head -c 300 "$WORK/err")"
    fi
done
"$Q" --index-dir "$KILLED" index "$REPO" --no-embed >/dev/null 2>&1
"$Q" --index-dir "$KILLED" sync "$REPO" --no-embed >/dev/null 2>&1
got=$(counts "$KILLED")
mismatched=0
[ "$got" = "$want" ] || mismatched=1
echo "kills: $KILLS trials, $kill_failures left an index that failed to open or check; after finishing: $got (want $want) -> mismatched: $mismatched"

# 3. corruption
detected=0
recovered=0
size=$(stat -c %s "$CLEAN/index.sqlite")
for trial in $(seq 1 "$CORRUPTIONS"); do
    DAMAGED="$WORK/damaged"
    rm -rf "$DAMAGED" && cp -r "$CLEAN" "$DAMAGED"
    page=$(((RANDOM * 32768 + RANDOM) % (size / 4096)))
    ((page == 0)) && page=1
    head -c 4096 /dev/urandom | dd of="$DAMAGED/index.sqlite" bs=4096 seek="$page" conv=notrunc status=none
    "$Q" --index-dir "$DAMAGED" status --check >/dev/null 2>&1 || detected=$((detected + 1))
    if "$Q" --index-dir "$DAMAGED" index --rebuild "$REPO" --no-embed >/dev/null 2>&1 &&
        "$Q" --index-dir "$DAMAGED" status --check >/dev/null 2>&1 &&
        "$Q" --index-dir "$DAMAGED" search handler_17 --mode lexical -k 1 2>/dev/null | grep -q 'pkg/m17.py'; then
        recovered=$((recovered + 1))
    fi
done
echo "corruption: $CORRUPTIONS trials (4 KB of garbage at a random page of $((size / 4096))), detected by status --check: $detected, recovered by index --rebuild: $recovered"

# 3b. small damage: 1-16 random bytes at a random offset past the header. The quick check
# misses most; --deep must find every one that changes an answer (compared with the clean
# index's answers to a few searches).
small=0; quick=0; deep=0; changed=0; changed_missed=0
answers() { for q in handler_17 "handle request kind" Store1300 load; do
    "$Q" --index-dir "$1" search "$q" --mode lexical -k 3 --json 2>/dev/null | python3 -c 'import json,sys
try: print([r["path"] for r in json.load(sys.stdin)["results"]])
except Exception: print("error")'
done; }
clean_answers=$(answers "$CLEAN")
for trial in $(seq 1 "$CORRUPTIONS"); do
    DAMAGED="$WORK/small"
    rm -rf "$DAMAGED" && cp -r "$CLEAN" "$DAMAGED"
    offset=$((100 + (RANDOM * 32768 + RANDOM) % (size - 100)))
    head -c $((1 + RANDOM % 16)) /dev/urandom | dd of="$DAMAGED/index.sqlite" bs=1 seek="$offset" conv=notrunc status=none
    small=$((small + 1))
    "$Q" --index-dir "$DAMAGED" status --check >/dev/null 2>&1 || quick=$((quick + 1))
    if "$Q" --index-dir "$DAMAGED" status --check --deep >/dev/null 2>&1; then
        [ "$(answers "$DAMAGED")" != "$clean_answers" ] && changed_missed=$((changed_missed + 1))
    else
        deep=$((deep + 1))
    fi
    [ "$(answers "$DAMAGED")" != "$clean_answers" ] && changed=$((changed + 1))
done
echo "small damage: $small trials (1-16 bytes), found by status --check: $quick, by --check --deep: $deep; answers changed: $changed, of those missed by --deep: $changed_missed"

# 3b'. schema damage: one byte inside the text of a CREATE statement (live or left over in a
# free page). Each open must either refuse the file as damaged (SQLite's own parse, or the
# schema digest quarry records when it writes the schema) or answer as the clean index does.
schema_trials=0; schema_sqlite=0; schema_digest=0; schema_same=0; schema_changed=0
mapfile -t creates < <(python3 -c 'import re,sys; b=open(sys.argv[1],"rb").read(); print("\n".join(str(m.start()) for m in re.finditer(rb"CREATE (TABLE|INDEX|VIRTUAL|TRIGGER)", b)))' "$CLEAN/index.sqlite")
for trial in $(seq 1 "$CORRUPTIONS"); do
    DAMAGED="$WORK/schema"
    rm -rf "$DAMAGED" && cp -r "$CLEAN" "$DAMAGED"
    offset=$((${creates[RANDOM % ${#creates[@]}]} + 7 + RANDOM % 200))
    printf "\\x$(printf %02x $((33 + RANDOM % 90)))" | dd of="$DAMAGED/index.sqlite" bs=1 seek="$offset" conv=notrunc status=none
    schema_trials=$((schema_trials + 1))
    message=$("$Q" --index-dir "$DAMAGED" search handler_17 --mode lexical -k 1 2>&1 >/dev/null || true)
    case "$message" in
    *"schema differs"*) schema_digest=$((schema_digest + 1)) ;;
    *damaged*) schema_sqlite=$((schema_sqlite + 1)) ;;
    *)
        if [ "$(answers "$DAMAGED")" = "$clean_answers" ]; then schema_same=$((schema_same + 1)); else schema_changed=$((schema_changed + 1)); fi ;;
    esac
done
echo "schema damage: $schema_trials trials (1 byte in CREATE text), refused as damaged by SQLite: $schema_sqlite, by the schema digest: $schema_digest; answered as clean: $schema_same, answered differently: $schema_changed"

# 3c. abuse: a structure that nests 100k deep for sg, 600 pipelined MCP calls, 400 concurrent
# HTTP searches; peak memory of each (the process must stay under 1 GB and answer).
printf 'fn f() {\n%s\n}\n' "$(python3 -c "print('{'*100000+'}'*100000)" | fold -w 60)" >"$WORK/deep.rs"
/usr/bin/time -f "%M" -o "$WORK/sg.kb" "$Q" --index-dir "$CLEAN" sg '{ $$$A }' --lang rust -k 3 "$WORK/deep.rs" >/dev/null 2>&1 || true
echo "abuse sg (100k nested braces, -k 3): peak $(( $(cat "$WORK/sg.kb") / 1024 )) MiB"
python3 - "$Q" "$CLEAN" <<'PY'
import json, subprocess, sys, time
q, ws = sys.argv[1], sys.argv[2]
lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}}}),
         json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
lines += [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "search_commits", "arguments": {"query": "handler"}}}) for i in range(1, 601)]
p = subprocess.Popen([q, "--index-dir", ws, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
p.stdin.write("\n".join(lines) + "\n"); p.stdin.flush()
answered, peak, started = 0, 0, time.time()
while answered < 601 and time.time() - started < 120:
    line = p.stdout.readline()
    if not line: break
    answered += 1
    with open(f"/proc/{p.pid}/status") as f:
        peak = max(peak, next(int(l.split()[1]) for l in f if l.startswith("VmHWM")))
p.kill()
print(f"abuse MCP (600 pipelined search_commits): {answered - 1} answered, peak {peak // 1024} MiB")
PY
"$Q" --index-dir "$CLEAN" serve --addr 127.0.0.1:7799 2>/dev/null &
server=$!
sleep 1
codes=$(seq 400 | xargs -P 400 -I{} curl -s -o /dev/null -w '%{http_code}\n' 'http://127.0.0.1:7799/api/search/commits?query=handler' | sort | uniq -c | tr '\n' ' ')
echo "abuse HTTP (400 concurrent commit searches): $codes; peak $(( $(awk '/VmHWM/ {print $2}' /proc/$server/status) / 1024 )) MiB"
kill $server

# 3d. a healthy index: held by another connection (a write transaction; exclusive locking),
# read-only, or emptied. Checks must call none of the healthy ones damaged, nothing healthy is
# moved aside, and the emptied one is named as damage.
HEALTHY="$WORK/healthy"
rm -rf "$HEALTHY" && cp -r "$CLEAN" "$HEALTHY"
hold() { # SQL... : a python3 sqlite3 connection holding the index until killed
    python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for s in sys.argv[2:]: c.execute(s)
print("held", flush=True); time.sleep(600)' "$HEALTHY/index.sqlite" "$@" >"$WORK/hold.out" &
    holder=$!
    for _ in $(seq 50); do grep -q held "$WORK/hold.out" 2>/dev/null && break; sleep 0.1; done
}
healthy_damaged=0
hold "BEGIN IMMEDIATE"
"$Q" --index-dir "$HEALTHY" status --check --deep >/dev/null 2>"$WORK/err" || { healthy_damaged=$((healthy_damaged + 1)); echo "  writing connection: $(head -c 200 "$WORK/err")"; }
kill "$holder"; wait "$holder" 2>/dev/null || true
hold "PRAGMA locking_mode=EXCLUSIVE" "BEGIN EXCLUSIVE"
"$Q" --index-dir "$HEALTHY" status --check --deep >/dev/null 2>"$WORK/err" || true
grep -q "not damage" "$WORK/err" || { healthy_damaged=$((healthy_damaged + 1)); echo "  exclusive: $(head -c 200 "$WORK/err")"; }
"$Q" --index-dir "$HEALTHY" index --rebuild "$REPO" --no-embed >/dev/null 2>&1 || true
kill "$holder"; wait "$holder" 2>/dev/null || true
rm -f "$HEALTHY/index.sqlite-wal" "$HEALTHY/index.sqlite-shm"
chmod a-w "$HEALTHY/index.sqlite"
"$Q" --index-dir "$HEALTHY" status --check --deep >/dev/null 2>"$WORK/err" || { healthy_damaged=$((healthy_damaged + 1)); echo "  read-only: $(head -c 200 "$WORK/err")"; }
chmod u+w "$HEALTHY/index.sqlite"
moved=$(find "$HEALTHY" -name 'index.sqlite.damaged-*' ! -name '*-wal' ! -name '*-shm' | wc -l)
kept=$(counts "$HEALTHY")
: >"$HEALTHY/index.sqlite"
"$Q" --index-dir "$HEALTHY" status --check >/dev/null 2>"$WORK/err" || true
empty_named=0; grep -q "empty (0 bytes)" "$WORK/err" && empty_named=1
echo "healthy index: held by a writing connection, held exclusively, read-only: called damaged $healthy_damaged of 3, moved aside $moved; counts after $kept (want $want); emptied file named as damage: $empty_named"

# 3e. memory a request's size cannot grow: sg on 100k nested braces with -k 10,000 and
# 100,000; a structural search of them with -k 1000; 4 concurrent HTTP structural searches with
# limit=200; 8 pipelined MCP ones. Peak resident memory of each.
NESTED="$WORK/nested"
mkdir -p "$NESTED" && cp "$WORK/deep.rs" "$NESTED/"
"$Q" --index-dir "$WORK/nested-ws" index "$NESTED" --no-embed >/dev/null 2>&1
for k in 10000 100000; do
    /usr/bin/time -f "%M %e" -o "$WORK/sg.kb" "$Q" --index-dir "$WORK/nested-ws" sg '{ $$$A }' --lang rust -k "$k" "$NESTED" >/dev/null 2>&1 || true
    read -r kb secs < <(tail -n 1 "$WORK/sg.kb")
    echo "memory sg -k $k (100k nested braces): peak $((kb / 1024)) MiB, $secs s"
done
(cd "$NESTED" && /usr/bin/time -f "%M %e" -o "$WORK/search.kb" "$Q" --index-dir "$WORK/nested-ws" search '{ $$$A }' --lang rust -k 1000 --json >/dev/null 2>&1) || true
read -r kb secs < <(tail -n 1 "$WORK/search.kb")
echo "memory search '{ \$\$\$A }' --lang rust -k 1000: peak $((kb / 1024)) MiB, $secs s"
"$Q" --index-dir "$WORK/nested-ws" serve --addr 127.0.0.1:7798 2>/dev/null &
server=$!
sleep 1
seq 4 | xargs -P 4 -I{} curl -s -o /dev/null 'http://127.0.0.1:7798/api/search/code?query=%7B%20%24%24%24A%20%7D&language=rust&limit=200'
echo "memory HTTP (4 concurrent structural searches, limit=200): peak $(( $(awk '/VmHWM/ {print $2}' /proc/$server/status) / 1024 )) MiB"
kill $server
python3 - "$Q" "$WORK/nested-ws" <<'PY'
import json, subprocess, sys, time
q, ws = sys.argv[1], sys.argv[2]
lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}}}),
         json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
lines += [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "{ $$$A }", "language": "rust", "limit": 200}}}) for i in range(1, 9)]
p = subprocess.Popen([q, "--index-dir", ws, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
p.stdin.write("\n".join(lines) + "\n"); p.stdin.flush()
answered, peak, started = 0, 0, time.time()
while answered < 9 and time.time() - started < 300:
    line = p.stdout.readline()
    if not line: break
    answered += 1
    with open(f"/proc/{p.pid}/status") as f:
        peak = max(peak, next(int(l.split()[1]) for l in f if l.startswith("VmHWM")))
p.kill()
print(f"memory MCP (8 pipelined structural searches, limit 200): {answered - 1} answered, peak {peak // 1024} MiB")
PY

# 3f. connections that never give their turn back: 1,100 idle connections reopened as they
# close, and 256 clients trickling a body at a byte a second, while 22 probes ask /healthz.
ulimit -n 4096 2>/dev/null || true
"$Q" --index-dir "$CLEAN" serve --addr 127.0.0.1:7797 2>/dev/null &
server=$!
sleep 1
python3 - <<'PY'
import socket, threading, time
ADDR = ("127.0.0.1", 7797)
stop = time.time() + 30
def idle():
    held = []
    while time.time() < stop:
        try:
            s = socket.create_connection(ADDR, timeout=2); held.append(s)
        except OSError:
            time.sleep(0.01)
        if len(held) > 1100:
            held.pop(0).close()
def trickle():
    while time.time() < stop:
        try:
            s = socket.create_connection(ADDR, timeout=2)
            s.sendall(b"POST /api/search/code HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n")
            while time.time() < stop:
                s.sendall(b"x"); time.sleep(1)
        except OSError:
            time.sleep(0.1)
threads = [threading.Thread(target=idle, daemon=True)] + [threading.Thread(target=trickle, daemon=True) for _ in range(256)]
for t in threads: t.start()
time.sleep(3)
served = 0
for _ in range(22):
    try:
        s = socket.create_connection(ADDR, timeout=10)
        s.settimeout(10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        answer = s.recv(64)
        served += answer.startswith(b"HTTP/1.1 200") or answer.startswith(b"HTTP/1.1 503")
        s.close()
    except OSError:
        pass
    time.sleep(1)
print(f"connections (1,100 idle reopened, 256 trickling bodies): {served} of 22 probes answered (200 or 503)")
PY
kill $server

# 3g. a daemon stopped with SIGSTOP: a grep answers in-process after the acceptance deadline,
# and `daemon status` names it at once.
"$Q" --index-dir "$CLEAN" daemon start >/dev/null 2>&1
dpid=$("$Q" --index-dir "$CLEAN" daemon status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
kill -STOP "$dpid"
(cd "$REPO" && /usr/bin/time -f %e -o "$WORK/grep.s" "$Q" --index-dir "$CLEAN" grep -l handler_17 >/dev/null 2>&1) || true
grep_s=$(cat "$WORK/grep.s")
/usr/bin/time -f %e -o "$WORK/status.s" "$Q" --index-dir "$CLEAN" daemon status >/dev/null 2>"$WORK/err" || true
status_s=$(tail -n 1 "$WORK/status.s")
kill -CONT "$dpid"; "$Q" --index-dir "$CLEAN" daemon stop >/dev/null 2>&1 || true
echo "stopped daemon: grep answered in ${grep_s} s, daemon status in ${status_s} s ($(head -c 90 "$WORK/err"))"

# 3h. the server as a door: files the index does not hold (.env mode 600, .git/config, an
# ignored file) asked for by path, by another local user, and writes from another origin
# (text/plain, a foreign Origin) or naming a foreign host in the request line.
printf 'SECRET=faults\n' >"$REPO/.env"; chmod 600 "$REPO/.env"
printf 'local.py\n' >"$REPO/.gitignore"; printf 'PASSWORD = 1\n' >"$REPO/local.py"
"$Q" --index-dir "$CLEAN" serve --addr 127.0.0.1:7796 2>/dev/null &
server=$!
sleep 1
door=""
for p in .env .git/config local.py; do
    door="$door $p:$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:7796/api/file?path=$p")"
done
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
    door="$door other-user:$(runuser -u nobody -- curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:7796/api/search/code?q=handler_17')"
fi
door="$door text/plain-sync:$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: text/plain' --data '{}' http://127.0.0.1:7796/api/code-files/sync)"
door="$door foreign-origin-sync:$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H 'Origin: http://evil.example' --data '{}' http://127.0.0.1:7796/api/code-files/sync)"
door="$door absolute-form:$(printf 'GET http://evil.example/api/status HTTP/1.1\r\nHost: 127.0.0.1:7796\r\nConnection: close\r\n\r\n' | python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",7796)); s.sendall(sys.stdin.buffer.read()); print(s.recv(64).split()[1].decode())')"
kill $server
rm -f "$REPO/.env" "$REPO/.gitignore" "$REPO/local.py"
echo "server doors (each must be 400, 403 or 415):$door"

# 3i. the daemon killed with -9 in the middle of a grep's output (a pipe read slowly): the
# output must be a prefix of the whole answer and the exit non-zero; never part of it followed
# by the whole answer (20 trials).
"$Q" --index-dir "$CLEAN" grep -n . "$REPO" >"$WORK/grep.whole"
doubled=0 cut_ok=0
for trial in $(seq 1 20); do
    "$Q" --index-dir "$CLEAN" daemon start >/dev/null 2>&1
    dpid=$("$Q" --index-dir "$CLEAN" daemon status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
    rm -f "$WORK/grep.rc"
    { "$Q" --index-dir "$CLEAN" grep -n . "$REPO" && echo "exit 0" >"$WORK/grep.rc" || echo "exit $?" >"$WORK/grep.rc"; } 2>/dev/null |
        python3 -c 'import sys,time; time.sleep(0.3); sys.stdout.buffer.write(sys.stdin.buffer.read())' >"$WORK/grep.out" &
    sleep 0.$((RANDOM % 3 + 1))
    kill -9 "$dpid" 2>/dev/null || true
    wait
    if cmp -s "$WORK/grep.out" "$WORK/grep.whole"; then
        cut_ok=$((cut_ok + 1))
    elif python3 -c 'import sys; a=open(sys.argv[1],"rb").read(); b=open(sys.argv[2],"rb").read(); sys.exit(0 if b.startswith(a) else 1)' "$WORK/grep.out" "$WORK/grep.whole" &&
        ! grep -q "exit 0" "$WORK/grep.rc"; then
        cut_ok=$((cut_ok + 1))
    else
        doubled=$((doubled + 1))
    fi
done
echo "daemon killed mid-grep: $cut_ok of 20 whole or a prefix with a failing exit, $doubled written twice or cut with exit 0"

# 3j. a healthy index on a read-only mount, as a finished run leaves it (the empty -wal and the
# -shm beside it) and as a kill -9 in the middle of a rebuild leaves it: check, deep check
# (bounded by 120 s: it used to restart its copy forever), search and log must answer, never
# call it damaged, and leave no scratch folder.
RO="$WORK/ro"
ro_failures=0 ro_trials=0 ro_left=0 ro_how=chmod
for state in finished killed; do
    mkdir -p "$RO"
    ro_how=chmod
    if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2g tmpfs "$RO" 2>/dev/null; then ro_how=mount; fi
    cp "$CLEAN"/index.sqlite* "$RO"/
    if [ "$state" = killed ]; then
        "$Q" --index-dir "$RO" index --rebuild "$REPO" --no-embed >/dev/null 2>&1 &
        pid=$!
        sleep "0.$(printf '%03d' $((RANDOM % 800 + 100)))"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    if [ "$ro_how" = mount ]; then mount -o remount,ro "$RO"; else chmod -R a-w "$RO"; fi
    before=$(find /tmp /var/tmp -maxdepth 1 -name 'quarry-check-*' 2>/dev/null | wc -l)
    for cmd in "status --check" "status --check --deep" "search handler_17 --mode lexical -k 1" "log handler"; do
        ro_trials=$((ro_trials + 1))
        # shellcheck disable=SC2086
        if ! timeout 120 "$Q" --index-dir "$RO" $cmd >/dev/null 2>"$WORK/err"; then
            ro_failures=$((ro_failures + 1))
            echo "  read-only ($state, $ro_how) $cmd: $(head -c 200 "$WORK/err")"
        fi
    done
    after=$(find /tmp /var/tmp -maxdepth 1 -name 'quarry-check-*' 2>/dev/null | wc -l)
    ro_left=$((ro_left + after - before + $(find "$RO" -maxdepth 1 -name '.check-*' | wc -l)))
    if [ "$ro_how" = mount ]; then umount -l "$RO"; else chmod -R u+w "$RO"; fi
    rm -rf "$RO"
done
echo "read-only index ($ro_how): $ro_failures of $ro_trials commands failed (check, deep check within 120 s, search, log; after a finished run and a kill -9 mid-rebuild); scratch folders left: $ro_left"

# 3k. index --rebuild beside searches, and killed with -9: every search during REBUILDS
# rebuilds must answer as before the rebuild (its count and first hit: the old index or the
# new one, never a half-built one), and after each of REBUILDS kills mid-rebuild the index must
# check sound and answer as before.
REB="$WORK/rebuild"
mkdir -p "$REB" && cp "$CLEAN"/index.sqlite* "$REB"/
rebuild_queries=(handler_17 "handle request kind 650" Store1300 handler_1200)
first_hits() { # one line per query: the count and the first path of its answer
    for q in "${rebuild_queries[@]}"; do
        "$Q" --index-dir "$REB" search "$q" --mode lexical -k 3 --json 2>/dev/null | python3 -c 'import json,sys
try:
    r = json.load(sys.stdin)["results"]; print(len(r), r[0]["path"] if r else "-")
except Exception: print("error")' || true
    done
}
rebuild_want=$(first_hits)
rebuild_asked=0 rebuild_differ=0
for trial in $(seq 1 "$REBUILDS"); do
    "$Q" --index-dir "$REB" index --rebuild "$REPO" --no-embed >/dev/null 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        got=$(first_hits)
        rebuild_asked=$((rebuild_asked + ${#rebuild_queries[@]}))
        rebuild_differ=$((rebuild_differ + $(diff <(echo "$rebuild_want") <(echo "$got") | grep -c '^>' || true)))
    done
    wait "$pid" || echo "  rebuild $trial failed"
done
rebuild_kill_failures=0
for trial in $(seq 1 "$REBUILDS"); do
    "$Q" --index-dir "$REB" index --rebuild "$REPO" --no-embed >/dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf '%03d' $((RANDOM % 900 + 50)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if ! "$Q" --index-dir "$REB" status --check >/dev/null 2>"$WORK/err" || [ "$(first_hits)" != "$rebuild_want" ]; then
        rebuild_kill_failures=$((rebuild_kill_failures + 1))
        echo "  kill -9 mid-rebuild, trial $trial: $(head -c 200 "$WORK/err")"
    fi
done
echo "rebuild: $rebuild_differ of $rebuild_asked searches during $REBUILDS rebuilds answered otherwise than before; $rebuild_kill_failures of $REBUILDS kill -9 mid-rebuild left an index that failed its check or answered otherwise"

# 3l. OpenSearch, on a node of the test suite's install (scripts/install-test-opensearch.sh)
# whose data is a 1 GB tmpfs (needs root for the mount; skipped otherwise): kill -9 of `sync`
# at random moments, then a finishing sync (each commit one document: a search that missed
# unrefreshed writes synced them again, 5,736 documents for 5,531 commits); searches beside
# `index --rebuild` (each answering as before it: never a half-built repo) and rebuilds killed
# at random moments (searches then answer as before, and after the next writer); a disk past
# its flood-stage watermark and a full one (the error must name the disk).
OS_HOME=${QUARRY_TEST_OPENSEARCH_HOME:-/opt/quarry/test-opensearch}
OS_KILLS=${OS_KILLS:-8}
OS_DIR="$WORK/os"
OS_DATA="$WORK/os-data"
mkdir -p "$OS_DIR/config/jvm.options.d" "$OS_DIR/logs" "$OS_DIR/tmp" "$OS_DATA"
if [ -x "$OS_HOME/opensearch/bin/opensearch" ] && [ "$(id -u)" = 0 ] && id quarry-search >/dev/null 2>&1 &&
    mount -t tmpfs -o size=1g tmpfs "$OS_DATA" 2>/dev/null; then
    cp "$OS_HOME/opensearch/config/opensearch.yml" "$OS_HOME/opensearch/config/log4j2.properties" "$OS_DIR/config/"
    grep -v -e '-Xlog:gc' -e Xloggc -e HeapDumpPath -e ErrorFile -e -Xms -e -Xmx -e G1 -e InitiatingHeapOccupancy \
        "$OS_HOME/opensearch/config/jvm.options" >"$OS_DIR/config/jvm.options"
    chown -R quarry-search "$OS_DIR" "$OS_DATA"
    chmod a+x "$WORK"
    free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
    os_port=$(free_port)
    (cd "$OS_DIR" && exec env OPENSEARCH_JAVA_HOME="$(cat "$OS_HOME/java-home")" OPENSEARCH_PATH_CONF="$OS_DIR/config" \
        OPENSEARCH_TMPDIR="$OS_DIR/tmp" OPENSEARCH_JAVA_OPTS="-Xms512m -Xmx512m -XX:+UseSerialGC" \
        setpriv --reuid=quarry-search --regid=quarry-search --clear-groups -- "$OS_HOME/opensearch/bin/opensearch" \
        -Ecluster.name=faults -Enode.name=faults -Enetwork.host=127.0.0.1 -Ehttp.port="$os_port" \
        -Etransport.port="$(free_port)" -Epath.data="$OS_DATA" -Epath.logs="$OS_DIR/logs" \
        -Ediscovery.type=single-node -Ecluster.info.update.interval=10s >"$OS_DIR/out" 2>&1) &
    os_pid=$!
    OS="http://127.0.0.1:$os_port"
    for _ in $(seq 120); do curl -s "$OS" >/dev/null && break; sleep 1; done
    export QUARRY_DB_URL="opensearch+$OS/faults"
    OSW="$WORK/os-ws"
    "$Q" --index-dir "$OSW" index "$REPO" --no-embed >/dev/null 2>"$WORK/os.err" || echo "  opensearch index failed: $(head -c 200 "$WORK/os.err")"
    # kill -9 of sync
    for trial in $(seq 1 "$OS_KILLS"); do
        "$Q" --index-dir "$OSW" sync "$REPO" --no-embed >/dev/null 2>&1 &
        pid=$!
        sleep "$((RANDOM % 4)).$(printf '%03d' $((RANDOM % 1000)))"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    "$Q" --index-dir "$OSW" sync "$REPO" --no-embed >/dev/null 2>"$WORK/os.err" || echo "  opensearch sync failed: $(head -c 200 "$WORK/os.err")"
    curl -s -XPOST "$OS/faults-commits/_refresh" >/dev/null
    read -r os_docs os_shas < <(curl -s -XPOST "$OS/faults-commits/_search" -H 'Content-Type: application/json' \
        -d '{"size": 0, "track_total_hits": true, "aggs": {"shas": {"cardinality": {"field": "sha", "precision_threshold": 40000}}}}' |
        python3 -c 'import json, sys; a = json.load(sys.stdin); print(a["hits"]["total"]["value"], a["aggregations"]["shas"]["value"])')
    echo "opensearch sync kills: $OS_KILLS syncs killed, then one finished: $os_docs commit documents, $os_shas distinct SHAs (want ${want##* })"

    # searches beside index --rebuild, and rebuilds killed
    # Queries with one answer each (ties would be broken by ids, which a rebuild renews).
    os_answers() { for q in handler_17 handler_203 handler_299 Store1300 Store1499; do
        "$Q" --index-dir "$OSW" search "$q" --mode lexical -k 1 --json 2>/dev/null | python3 -c 'import json,sys
try: print([r["path"] for r in json.load(sys.stdin)["results"]])
except Exception: print("error")'
    done; }
    os_clean=$(os_answers)
    "$Q" --index-dir "$OSW" index --rebuild "$REPO" --no-embed >/dev/null 2>"$WORK/os.err" &
    pid=$!
    rounds=0; differed=0
    while kill -0 "$pid" 2>/dev/null; do
        rounds=$((rounds + 1))
        [ "$(os_answers)" = "$os_clean" ] || differed=$((differed + 1))
    done
    rebuilt=ok; wait "$pid" || rebuilt="failed: $(head -c 200 "$WORK/os.err")"
    [ "$(os_answers)" = "$os_clean" ] || differed=$((differed + 1))
    echo "opensearch rebuild ($rebuilt): $rounds rounds of 5 searches beside index --rebuild, $differed answered differently"
    rebuild_kills=0; rebuild_broken=0
    for trial in $(seq 1 5); do
        "$Q" --index-dir "$OSW" index --rebuild "$REPO" --no-embed >/dev/null 2>&1 &
        pid=$!
        sleep "$((RANDOM % 3)).$(printf '%03d' $((RANDOM % 1000)))"
        kill -9 "$pid" 2>/dev/null && rebuild_kills=$((rebuild_kills + 1))
        wait "$pid" 2>/dev/null || true
        [ "$(os_answers)" = "$os_clean" ] || { rebuild_broken=$((rebuild_broken + 1)); echo "  rebuild killed (trial $trial): answers changed before the next writer"; }
        "$Q" --index-dir "$OSW" index "$REPO" --no-embed >/dev/null 2>&1 || true
        [ "$(os_answers)" = "$os_clean" ] || { rebuild_broken=$((rebuild_broken + 1)); echo "  rebuild killed (trial $trial): answers changed after the next writer"; }
    done
    echo "opensearch rebuild kills: $rebuild_kills rebuilds killed midway, answers changed $rebuild_broken times"

    # the disk: past the flood stage (95%), then full
    fill_to() { # PERCENT of the tmpfs used
        rm -f "$OS_DATA/fill"
        read -r size used < <(df -B1 --output=size,used "$OS_DATA" | tail -n 1)
        dd if=/dev/zero of="$OS_DATA/fill" bs=1M count=$(((size * $1 / 100 - used) / 1048576)) status=none 2>/dev/null || true
    }
    fill_to 97
    sleep 25
    printf 'def flooded():\n    return 1\n' >"$REPO/pkg/flooded.py"
    "$Q" --index-dir "$OSW" index "$REPO" --no-embed >/dev/null 2>"$WORK/os.err" || true
    flood_named=0; grep -q "flood-stage watermark" "$WORK/os.err" && grep -q "free space" "$WORK/os.err" && flood_named=1
    echo "opensearch disk past the flood stage: named $flood_named ($(grep -m1 -o 'answered [0-9]*: [a-z_]*' "$WORK/os.err" || head -c 120 "$WORK/os.err"))"
    fill_to 100
    dd if=/dev/zero of="$OS_DATA/fill2" bs=64k status=none 2>/dev/null || true
    printf 'def full():\n    return 2\n' >"$REPO/pkg/flooded.py"
    "$Q" --index-dir "$OSW" index "$REPO" --no-embed >/dev/null 2>"$WORK/os.err" || true
    full_named=0; grep -q -e "disk of the node" -e "flood-stage" "$WORK/os.err" && full_named=1
    echo "opensearch disk full: named $full_named ($(head -c 300 "$WORK/os.err" | tr '\n' ' '))"
    rm -f "$OS_DATA/fill" "$OS_DATA/fill2" "$REPO/pkg/flooded.py"
    unset QUARRY_DB_URL
    kill "$os_pid" 2>/dev/null || true
    wait "$os_pid" 2>/dev/null || true
    umount "$OS_DATA" || umount -l "$OS_DATA" || true
else
    echo "opensearch: skipped (needs root, a tmpfs mount and scripts/install-test-opensearch.sh)"
fi

# 4. concurrent writers and readers
LOAD="$WORK/load"
cp -r "$CLEAN" "$LOAD"
end=$((SECONDS + SECONDS_LOAD))
: >"$WORK/load.err"
ops=0
(
    while ((SECONDS < end)); do
        printf 'def edited_%d():\n    return %d\n' "$RANDOM" "$RANDOM" >"$REPO/pkg/edited.py"
        "$Q" --index-dir "$LOAD" index "$REPO" --no-embed --lock-wait 30 >/dev/null 2>>"$WORK/load.err" || true
    done
) &
(
    while ((SECONDS < end)); do
        "$Q" --index-dir "$LOAD" sync "$REPO" --no-embed --lock-wait 30 >/dev/null 2>>"$WORK/load.err" || true
    done
) &
while ((SECONDS < end)); do
    for reader in "search handler_$((RANDOM % 1200 + 1)) -k 3" "status" "search load --mode lexical"; do
        # shellcheck disable=SC2086
        if ! "$Q" --index-dir "$LOAD" $reader >/dev/null 2>>"$WORK/load.err"; then
            echo "reader failed: $reader" >>"$WORK/load.err"
        fi
        ops=$((ops + 1))
    done
done
wait
# stderr also holds progress notes; failures are error lines and failed readers.
load_errors=$(grep -e '^quarry: error' -e '^reader failed' "$WORK/load.err" | grep -c -v 'being written by another' || true)
echo "load: ${SECONDS_LOAD}s, $ops reader commands beside a re-indexing writer and a syncing writer; errors other than lock waits: $load_errors"
[ "$load_errors" = 0 ] || grep -e '^quarry: error' -e '^reader failed' "$WORK/load.err" | grep -v 'being written' | head -5

# 5. property tests, long
PROPTEST_CASES=$PROPTEST_CASES cargo test --release -q -p quarry-chunk --test properties 2>&1 | grep -E 'test result' | sed "s/^/chunker properties ($PROPTEST_CASES cases): /"
PROPTEST_CASES=$PROPTEST_CASES cargo test --release -q -p quarry-rank --test properties 2>&1 | grep -E 'test result' | sed "s/^/planner properties ($PROPTEST_CASES cases): /"
PROPTEST_CASES=$PROPTEST_CASES cargo test --release -q -p quarry-mcp --lib every_line 2>&1 | grep -E 'test result' | sed "s/^/MCP guard properties ($PROPTEST_CASES cases): /"

echo "summary: seed $SEED · kills $KILLS, failures $kill_failures, mismatched $mismatched · corruptions $CORRUPTIONS, detected $detected, recovered $recovered · load errors $load_errors · read-only failures $ro_failures · rebuild answers changed $rebuild_differ, kills $rebuild_kill_failures"
