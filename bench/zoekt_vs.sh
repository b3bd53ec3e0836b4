#!/usr/bin/env bash
# quarry beside zoekt (sourcegraph/zoekt): index time/CPU/size, HTTP p50/p95 and server CPU per
# request, whole-process CLI latency, and agreement of the answers, one table per repository.
#
#   bench/zoekt_vs.sh [zoekt_vs.py options] REPO...      e.g. bench/zoekt_vs.sh /tmp/src-sympy /tmp/src-tokio
#
# Builds nothing of quarry: run `cargo build --release -p quarry-cli` first (or point QUARRY_BIN
# at a binary). zoekt comes from $ZOEKT_BIN (default /tmp/zoekt-bin); bench/zoekt_vs.md says how
# to build it. Indexes, logs and servers' files go under $ZOEKT_VS_WORK (default /tmp/zoekt-vs).
# Options worth knowing: --json FILE (every number), --reuse-index, --runs N, --queries FILE.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
work=${ZOEKT_VS_WORK:-/tmp/zoekt-vs}

if [ $# -eq 0 ]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi

ZOEKT_BIN=${ZOEKT_BIN:-/tmp/zoekt-bin}
for b in zoekt-index zoekt-webserver zoekt; do
    if [ ! -x "$ZOEKT_BIN/$b" ]; then
        cat >&2 <<EOF
zoekt_vs: $ZOEKT_BIN/$b not found. Build zoekt from source (its go.mod asks for Go 1.25.9 or newer), e.g.:
    git clone https://github.com/sourcegraph/zoekt /tmp/zoekt-src
    cd /tmp/zoekt-src && GOTOOLCHAIN=local GOFLAGS=-mod=mod \\
        go build -o /tmp/zoekt-bin/ ./cmd/zoekt-index ./cmd/zoekt-webserver ./cmd/zoekt
    git -C /tmp/zoekt-src log -1 --format='%H %cs' > /tmp/zoekt-bin/COMMIT
or set ZOEKT_BIN to the folder holding zoekt-index, zoekt-webserver and zoekt (bench/zoekt_vs.md).
EOF
        exit 2
    fi
done

# quarry: $QUARRY_BIN, else the release build (in $CARGO_TARGET_DIR when set), else the debug build.
if [ -n "${QUARRY_BIN:-}" ]; then
    quarry=$QUARRY_BIN
elif [ -n "${CARGO_TARGET_DIR:-}" ] && [ -x "$CARGO_TARGET_DIR/release/quarry" ]; then
    quarry=$CARGO_TARGET_DIR/release/quarry
elif [ -x "$root/target/release/quarry" ]; then
    quarry=$root/target/release/quarry
elif [ -x "$root/target/debug/quarry" ]; then
    quarry=$root/target/debug/quarry
else
    echo "zoekt_vs: no quarry binary: run \`cargo build --release -p quarry-cli\` first (or set QUARRY_BIN)" >&2
    exit 2
fi
[ -x "$quarry" ] || { echo "zoekt_vs: $quarry is not executable" >&2; exit 2; }
build=release
case "$quarry" in
    */debug/*) build=debug
        echo "zoekt_vs: WARNING: $quarry is a DEBUG build: expect quarry ~10x slower than release (\`cargo build --release -p quarry-cli\`)" >&2 ;;
esac
# A copy, so that a cargo build running meanwhile cannot swap the binary in the middle.
mkdir -p "$work"
cp -f "$quarry" "$work/quarry"
echo "quarry: $quarry ($build build, $(stat -c %y "$quarry" | cut -d. -f1)), copied to $work/quarry" >&2

# Symbols: zoekt runs universal-ctags (with +interactive) when CTAGS_COMMAND or `universal-ctags`
# names it; plain `ctags` on PATH is not looked at, so it is exported here when it qualifies.
ctags_mode=disable
if [ -z "${CTAGS_COMMAND:-}" ]; then
    if command -v universal-ctags >/dev/null; then
        CTAGS_COMMAND=$(command -v universal-ctags)
    elif command -v ctags >/dev/null && [[ $(ctags --version 2>/dev/null) == *"Universal Ctags"* ]]; then
        CTAGS_COMMAND=$(command -v ctags)
    fi
fi
if [ -n "${CTAGS_COMMAND:-}" ] && [[ $("$CTAGS_COMMAND" --help 2>/dev/null) == *"+interactive"* ]]; then
    export CTAGS_COMMAND
    ctags_mode=require
    ctags_version=$("$CTAGS_COMMAND" --version 2>/dev/null); ctags_version=${ctags_version%%$'\n'*}
    echo "ctags: $CTAGS_COMMAND ($ctags_version); zoekt-index -require_ctags" >&2
else
    echo "zoekt_vs: WARNING: no universal-ctags with +interactive: zoekt-index -disable_ctags, so zoekt's sym: queries find nothing" >&2
fi

zoekt_commit=$(cat "$ZOEKT_BIN/COMMIT" 2>/dev/null || git -C "${ZOEKT_SRC:-/tmp/zoekt-src}" log -1 --format='%H %cs' 2>/dev/null || echo unknown)
quarry_commit=$(git -C "$root" rev-parse --short HEAD)
dirty=$(git -C "$root" status --porcelain --untracked-files=no | wc -l)
load=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)
echo "zoekt $zoekt_commit; quarry $quarry_commit ($dirty tracked files changed in the tree); $(nproc) cores $cpu, $mem; load $load; $(date -u '+%Y-%m-%d %H:%M UTC')"

meta=$(python3 -c 'import json,sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
    quarry_bin "$quarry" quarry_build "$build" quarry_bin_mtime "$(stat -c %y "$quarry" | cut -d. -f1)" quarry_commit "$quarry_commit" quarry_tree_changes "$dirty" \
    zoekt_commit "$zoekt_commit" zoekt_ctags "$ctags_mode" cores "$(nproc)" cpu "$cpu" memory "$mem" \
    loadavg_start "$load" date "$(date -u '+%Y-%m-%d %H:%M UTC')")
exec python3 "$here/zoekt_vs.py" --quarry "$work/quarry" --zoekt-bin "$ZOEKT_BIN" --zoekt-ctags "$ctags_mode" \
    --work "$work" --meta "$meta" "$@"
