#!/usr/bin/env bash
# bench/embed.sh DIR — semantic indexing and hybrid search for one repository.
#
# Reports: lexical index time, embedding backfill time and throughput (chunk texts/s), warm
# hybrid search p50/p95 (in-process, bench/queries.txt) and cold `quarry search` process
# p50/p95 including model load. Needs the model (scripts/install-model.sh) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/embed.sh DIR}
source bench/lib.sh

t0=$(ms)
"$bin" --index-dir "$ws" index "$dir" --no-embed --json >/dev/null
t1=$(ms)
embed=$("$bin" --index-dir "$ws" index "$dir" --json | python3 -c 'import json,sys; e=json.load(sys.stdin)["embedding"]; print(e["embedded"], e["elapsed_ms"])')
t2=$(ms)
read -r texts embed_ms <<<"$embed"

warm=$(MODE=hybrid target/release/examples/search_latency "$ws" bench/queries.txt "${ROUNDS:-5}")
cold_stats=$(cold_search --mode hybrid < bench/queries.txt)

echo "repo:            $dir"
echo "lexical index:   $(( t1 - t0 )) ms"
echo "embedding:       $texts chunk texts in $(( embed_ms / 1000 )) s ($(awk "BEGIN{printf \"%.1f\", $texts*1000/($embed_ms+1)}") texts/s); whole run $(( t2 - t1 )) ms"
echo "warm hybrid:     $warm"
echo "cold hybrid:     $cold_stats"
