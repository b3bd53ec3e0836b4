#!/usr/bin/env bash
# bench/serve.sh DIR — the servers under load, with a watcher re-indexing underneath.
#
# Copies DIR to a throwaway folder and indexes it lexically; then
#   1. edit → searchable: `quarry watch` runs, a new function is appended to a file, and the
#      time until `GET /api/search/code` returns it is measured (EDITS times): p50 / max;
#   2. load: CLIENTS clients (default 8) search for SECONDS (default 20) over
#      bench/queries.txt while a writer appends a new function to a file every 300 ms and the
#      watcher re-indexes: requests/s, p50/p99, errors; then every function written must be
#      searchable (no lost update);
#   3. kill: a re-index of every file is started through `POST /api/code-files/sync` and the
#      server is killed (SIGKILL) in the middle; the index must still open and answer.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: bench/serve.sh DIR}
clients=${CLIENTS:-8}
seconds=${SECONDS_LOAD:-20}
edits=${EDITS:-20}
source bench/lib.sh
cargo build --release --locked -p quarry-http --example load >&2
load=target/release/examples/load

tree="$ws/tree"
cp -r "$src" "$tree"
"$bin" --index-dir "$ws" index "$tree" --no-embed --json >/dev/null
"$bin" --index-dir "$ws" config set embed.provider none >/dev/null

"$bin" --index-dir "$ws" serve --addr 127.0.0.1:0 2>"$ws/serve.err" &
server=$!
"$bin" --index-dir "$ws" watch --json >"$ws/watch.out" 2>/dev/null &
watcher=$!
trap 'kill $server $watcher 2>/dev/null; rm -rf "$ws"' EXIT
for _ in $(seq 100); do grep -q serving "$ws/serve.err" 2>/dev/null && break; sleep 0.1; done
base=$(sed -n 's/^quarry: serving //p' "$ws/serve.err")
for _ in $(seq 100); do [ -s "$ws/watch.out" ] && break; sleep 0.1; done

# Python files of the tree, to append functions to.
mapfile -t files < <(cd "$tree" && find . -name '*.py' -size -20k | sort | head -200)
# A function is found when a top result's text defines it (small functions share a chunk).
found() { curl -s "$base/api/search/code?mode=lexical&limit=3&query=$1" | grep -q "def $1("; }

# 1. edit → searchable
lat=()
for i in $(seq "$edits"); do
    name="quarry_probe_edit_$i"
    f="$tree/${files[$((i % ${#files[@]}))]}"
    s=$(date +%s%N)
    printf '\n\ndef %s():\n    return %d\n' "$name" "$i" >>"$f"
    for _ in $(seq 1000); do found "$name" && break; sleep 0.01; done
    e=$(date +%s%N)
    lat+=($(( (e - s) / 1000000 )))
    sleep 0.3
done
edit_stats=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{a[NR]=$1} END{printf "p50 %d ms, max %d ms (%d edits)", a[int((NR+1)/2)], a[NR], NR}')

# 2. load while a writer edits and the watcher re-indexes
(
    i=0
    while true; do
        i=$((i + 1))
        printf '\n\ndef quarry_probe_load_%d():\n    return %d\n' "$i" "$i" >>"$tree/${files[$((i % ${#files[@]}))]}"
        echo "$i" >"$ws/written"
        sleep 0.3
    done
) &
writer=$!
result=$("$load" "$base" bench/queries.txt "$clients" "$seconds" lexical)
kill $writer; wait $writer 2>/dev/null || true
written=$(cat "$ws/written")
sleep 2
lost=0
for i in $(seq "$written"); do found "quarry_probe_load_$i" || lost=$((lost + 1)); done
passes=$(wc -l <"$ws/watch.out")
kill $watcher; wait $watcher 2>/dev/null || true

# 3. kill the server in the middle of a sync
find "$tree" -name '*.py' -exec touch {} +
(curl -s -X POST -H "Content-Type: application/json" "$base/api/code-files/sync" >/dev/null 2>&1 || true) &
sleep 0.5
kill -9 $server; wait $server 2>/dev/null || true
opens=$("$bin" --index-dir "$ws" status --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["repos"]))')
answers=$("$bin" --index-dir "$ws" search "integrate" --mode lexical --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["results"]))')

echo "repo:            $src ($(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB)"
echo "edit→searchable: $edit_stats"
echo "load:            $result"
echo "during load:     $written functions written, $lost not searchable afterwards, $passes watch passes"
echo "killed mid-sync: index opens ($opens repo), search answers ($answers results)"
