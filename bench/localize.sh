#!/usr/bin/env bash
# Issue localisation, quarry beside plain BM25: scores a swebench-style query file (issue
# text → files the fix changed) with `quarry eval` in the given modes — file level, function
# level (`relevant_symbols`), per repo — and runs ../shared/eval/bm25_baseline.py (plain BM25
# over each tree's whole .py files) on the same queries. A commit set (commits_dev.jsonl: issue
# text → the commits that fixed it, `relevant` as SHAs) is scored over each repository's whole
# history instead, beside bench/commit_bm25_baseline.py (plain BM25 over every commit's message
# and patch).
#
#   bench/localize.sh MIRRORS_DIR [QUERIES] [MODES]
#
# MIRRORS_DIR holds the fetched repositories (owner+name/repo); QUERIES defaults to
# ../shared/eval/swebench_dev.jsonl, MODES to lexical (e.g. lexical,semantic,hybrid,auto).
# The evaluation workspace (EVAL_DIR, default ~/.cache/quarry-eval/<query file name>) is kept:
# trees re-index incrementally and chunk vectors are keyed by text and model, so a second
# hybrid run embeds only texts it has never seen. Extra `quarry eval` flags go in EVAL_FLAGS
# (e.g. EVAL_FLAGS="--sweep search.title_repeat=0,2").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirrors="${1:?usage: bench/localize.sh MIRRORS_DIR [QUERIES] [MODES]}"
queries="${2:-$here/../../shared/eval/swebench_dev.jsonl}"
modes="${3:-lexical}"
quarry="${QUARRY:-$here/../target/release/quarry}"
[ -x "$quarry" ] || { echo "build first: cargo build --release (or set QUARRY)" >&2; exit 1; }
name="$(basename "$queries" .jsonl)"
work="${EVAL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/quarry-eval/$name}"
mkdir -p "$work"

echo "== quarry ($modes) on $queries, workspace $work"
start=$(date +%s)
# shellcheck disable=SC2086
"$quarry" eval "$queries" --repos "$mirrors" --work-dir "$work" --mode "$modes" ${EVAL_FLAGS:-}
echo "   (whole run, layout and indexing included: $(( $(date +%s) - start )) s)"

if head -n 1 "$queries" | grep -Eq '"relevant": *\["[0-9a-f]{40}"'; then
    echo "== plain BM25 over every commit's message and patch (commit_bm25_baseline.py)"
    python3 "$here/commit_bm25_baseline.py" "$queries" "$mirrors" "$work/commit_bm25_baseline.json"
    exit 0
fi
baseline="$here/../../shared/eval/bm25_baseline.py"
if [ -f "$baseline" ]; then
    echo "== plain BM25 over whole .py files (bm25_baseline.py)"
    python3 "$baseline" "$queries" "$mirrors" "$work/bm25_baseline.json"
fi
