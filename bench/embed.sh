#!/usr/bin/env bash
# bench/embed.sh DIR — embedding speed and semantic indexing for one repository.
#
# 1. Lexical index of DIR (no vectors).
# 2. The runtimes side by side on the same texts: N (default 1000) of DIR's chunk embedding
#    texts, drawn with a fixed seed, through candle fp32, onnxruntime fp32 and onnxruntime int8
#    (crates/quarry-embed/examples/embed_bench.rs): texts/s, speed-up and cosine to candle.
# 3. The full hybrid index with the default runtime: every chunk embedded (texts/s), then warm
#    hybrid search p50/p95 (in-process, bench/queries.txt) and cold `quarry search` process
#    p50/p95 including model load. With COMPARE_CANDLE=1, the same backfill again on candle.
#
# Needs the model and onnxruntime (scripts/install-model.sh) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/embed.sh DIR}
source bench/lib.sh
cargo build --release --locked -p quarry-embed --example embed_bench >&2

t0=$(ms)
"$bin" --index-dir "$ws" index "$dir" --no-embed --json >/dev/null
t1=$(ms)
echo "repo:            $dir"
echo "lexical index:   $(( t1 - t0 )) ms"
echo "runtimes, same texts:"
target/release/examples/embed_bench --index "$ws/index.sqlite" --n "${N:-1000}" | sed 's/^/  /'

backfill() {  # prints "TEXTS MS" of an embedding backfill with the workspace's settings
    "$bin" --index-dir "$ws" index "$dir" --json | python3 -c 'import json,sys; e=json.load(sys.stdin)["embedding"]; print(e["embedded"], e["elapsed_ms"])'
}
rate() { awk "BEGIN{printf \"%.1f\", $1*1000/($2+1)}"; }

t2=$(ms)
read -r texts embed_ms <<<"$(backfill)"
t3=$(ms)
echo "full hybrid index ($(grep -o 'runs on: .*' <("$bin" --index-dir "$ws" model 2>/dev/null) | head -1)):"
echo "  embedding:     $texts chunk texts in $(( embed_ms / 1000 )) s ($(rate "$texts" "$embed_ms") texts/s); lexical + embedding $(( (t1 - t0 + t3 - t2) / 1000 )) s"
echo "  warm hybrid:   $(MODE=hybrid target/release/examples/search_latency "$ws" bench/queries.txt "${ROUNDS:-5}")"
echo "  cold hybrid:   $(cold_search --mode hybrid < bench/queries.txt)"

if [ "${COMPARE_CANDLE:-}" = 1 ]; then
    "$bin" --index-dir "$ws" config set embed.runtime candle >/dev/null 2>&1
    read -r texts embed_ms <<<"$(backfill)"
    echo "candle backfill: $texts chunk texts in $(( embed_ms / 1000 )) s ($(rate "$texts" "$embed_ms") texts/s)"
fi
