#!/usr/bin/env bash
# bench/page.sh INDEX_DIR [QUERIES] — the search page's keystroke-to-paint time through a warm
# `quarry serve` on an existing workspace (e.g. sympy indexed with `quarry index`), measured
# in chromium by bench/page_latency.mjs. Needs scripts/install-test-clients.sh (chromium,
# playwright-core) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/page.sh INDEX_DIR [QUERIES]}
bin=${QUARRY_BIN:-target/release/quarry}
log=$(mktemp)
QUARRY_DAEMON=off "$bin" --index-dir "$dir" serve --addr 127.0.0.1:0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q "serving" "$log" && break; sleep 0.1; done
base=$(sed -n 's/^quarry: serving //p' "$log" | head -1)
node bench/page_latency.mjs "$base" "${2:-bench/queries.txt}"
