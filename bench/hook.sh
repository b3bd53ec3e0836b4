#!/usr/bin/env bash
# bench/hook.sh FILE [RUNS] — latency of `quarry hook claude` deciding a whole-file Read of
# FILE (a big code file: the outline path, parser only, no model). Each run is a fresh process
# with a fresh session, as Claude Code runs it; prints p50/p95 and the outline's size.
set -euo pipefail
cd "$(dirname "$0")/.."
file=$(realpath "${1:?usage: bench/hook.sh FILE [RUNS]}")
runs=${2:-50}
source bench/lib.sh
export QUARRY_HOOK_STATE="$ws/hook-state" CLAUDE_PROJECT_DIR=/
times=()
for i in $(seq "$runs"); do
    event=$(printf '{"session_id":"bench-%s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"%s"}}' "$i" "$file")
    s=$(date +%s%N)
    out=$("$bin" --index-dir "$ws" hook claude <<<"$event")
    e=$(date +%s%N)
    times+=($(( (e - s) / 1000 )))
done
echo "file:      $file ($(wc -l <"$file") lines, $(wc -c <"$file") bytes)"
echo "answer:    $(printf '%s' "$out" | wc -c) bytes ($(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["hookSpecificOutput"]["permissionDecision"])'))"
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END{printf "decision:  p50 %.1f ms, p95 %.1f ms (%d runs, fresh process each)\n", a[int((NR+1)/2)]/1000, a[int(NR*0.95+0.999)]/1000, NR}'
