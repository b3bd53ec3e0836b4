#!/usr/bin/env bash
# Bounds of the flow layer (issue [30]): a 5,000-line function and 100 nested ifs, each
# answered by a whole `quarry slice` and `quarry summary --mode extract` process; wall time
# and peak memory from /usr/bin/time. QUARRY_BIN=path skips the release build (say which
# build the figures come from).
#   bench/flow.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${QUARRY_BIN:-}" ]; then
    cargo build --release --locked -p quarry-cli >&2
    QUARRY_BIN=target/release/quarry
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" <<'PY'
import sys, os
d = sys.argv[1]
with open(os.path.join(d, "long.py"), "w") as f:
    f.write("def big(x, limit):\n")
    for i in range(5000):
        if i % 50 == 0:
            f.write(f"    if x > limit + {i}:\n        x = x - {i}\n")
        else:
            f.write(f"    x = x + {i}\n")
    f.write("    return x\n")
with open(os.path.join(d, "deep.py"), "w") as f:
    f.write("def deep(x):\n    y = 0\n")
    for i in range(100):
        f.write("    " * (i + 1) + f"if x > {i}:\n")
    f.write("    " * 101 + "y = x\n")
    f.write("    return y\n")
with open(os.path.join(d, "Deep.go"), "w") as f:
    f.write("package main\n\nfunc deep(x int) int {\n\ty := 0\n")
    for i in range(100):
        f.write("\t" * (i + 1) + f"if x > {i} {{\n")
    f.write("\t" * 101 + "y = x\n")
    for i in reversed(range(100)):
        f.write("\t" * (i + 1) + "}\n")
    f.write("\treturn y\n}\n")
PY

run() {
    local label=$1; shift
    local out
    out=$( { /usr/bin/time -f '%e %M' "$QUARRY_BIN" "$@" >/dev/null; } 2>&1 | tail -1)
    printf '%-44s %6.2f s  %7d KB peak\n' "$label" "${out% *}" "${out#* }"
}
long_lines=$(wc -l < "$dir/long.py")
run "slice, 5,000-line function (last line)" slice "$dir/long.py:$long_lines" --var x
run "slice --forward, 5,000-line function" slice "$dir/long.py:2" --forward
run "summary --mode extract, 5,000-line function" summary "$dir/long.py" --mode extract --json
run "slice, 100 nested ifs (Python)" slice "$dir/deep.py:103" --var y
run "summary --mode extract, 100 nested ifs (Go)" summary "$dir/Deep.go" --mode extract --json
run "slice, 100 nested ifs (Go)" slice "$dir/Deep.go:206" --var y
