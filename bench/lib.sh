# Shared by the bench scripts: release build, a throwaway workspace, timing helpers.
# Sourced from the repository root.
cargo build --release --locked -p quarry-cli >&2
cargo build --release --locked -p quarry-engine --example search_latency >&2
bin=target/release/quarry
# Cold means cold: no workspace daemon answers these scripts' searches (bench/warm.sh asks
# for one per call).
export QUARRY_DAEMON=off
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT

# Milliseconds since the epoch.
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# cold_search ARGS... — runs `quarry search QUERY ARGS` once per line of stdin as a fresh
# process and prints p50/p95 of the wall time, start to last byte.
cold_search() {
    local cold=() q s e
    while IFS= read -r q; do
        [ -z "$q" ] && continue
        s=$(date +%s%N); "$bin" --index-dir "$ws" search "$q" "$@" >/dev/null 2>&1; e=$(date +%s%N)
        cold+=($(( (e - s) / 1000 )))
    done
    printf '%s\n' "${cold[@]}" | sort -n | awk '{a[NR]=$1} END{p50=a[int((NR+1)/2)]; p95=a[int(NR*0.95+0.999)]; printf "p50 %.1f ms, p95 %.1f ms (%d runs)", p50/1000, p95/1000, NR}'
}
