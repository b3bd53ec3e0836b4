#!/usr/bin/env bash
# bench/index.sh DIR — lexical index speed, index size and search latency for one repository.
# (Embedding is benchmarked by bench/embed.sh.)
#
# Reports: files/s and chunks/s of a fresh index, the index size, a no-change re-index, warm
# search latency p50/p95 (in-process, bench/queries.txt) and cold `quarry search` process
# latency p50/p95 (start to last byte). Uses a throwaway index dir; needs a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/index.sh DIR}
rounds=${ROUNDS:-20}
source bench/lib.sh

t0=$(ms)
report=$("$bin" --index-dir "$ws" index "$dir" --no-embed --json)
t1=$(ms)
files=$(echo "$report" | python3 -c 'import json,sys; r=json.load(sys.stdin)["repos"][0]; print(r["files"])')
chunks=$(echo "$report" | python3 -c 'import json,sys; r=json.load(sys.stdin)["repos"][0]; print(r["chunks"])')
secs=$(awk "BEGIN{print ($t1-$t0)/1000}")
size=$(du -k "$ws/index.sqlite" | cut -f1)
t2=$(ms); "$bin" --index-dir "$ws" index "$dir" --no-embed --json >/dev/null; t3=$(ms)

warm=$(target/release/examples/search_latency "$ws" bench/queries.txt "$rounds")

cold_stats=$(for _ in 1 2 3; do cat bench/queries.txt; done | cold_search)

echo "repo:          $dir"
echo "machine:       $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
echo "fresh index:   $files files, $chunks chunks in ${secs} s ($(awk "BEGIN{printf \"%.0f\", $files/$secs}") files/s, $(awk "BEGIN{printf \"%.0f\", $chunks/$secs}") chunks/s)"
echo "index size:    $((size / 1024)) MiB"
echo "no-op reindex: $(( t3 - t2 )) ms"
echo "warm search:   $warm"
echo "cold search:   $cold_stats"
