#!/usr/bin/env bash
# bench/gpu_vectors.sh PARTS_DIR [FIRST_OUT_PART] — on a lent GPU machine: join PARTS_DIR/p*
# (xz of a tar of bench/gpu_vectors.py's payload), embed every text on CuPy, keep the vectors
# in PARTS_DIR/out/v* (15 MiB pieces: a call brings back 4) and copy four of them, from
# FIRST_OUT_PART (0), to $OUT. Run again with a later FIRST_OUT_PART (and the payload already
# embedded) it only copies. TF32 matrix products are checked against full float32 on the first
# 2,000 texts before they are used for all.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=$(realpath "${1:?usage: bench/gpu_vectors.sh PARTS_DIR [FIRST_OUT_PART]}")
first=${2:-0}
work=$parts/work
out=${OUT:-/tmp/gpu-vectors-out}
mkdir -p "$work" "$parts/out" "$out"
if [ ! -f "$parts/out/done" ]; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    cat "$parts"/p* | xz -d -T0 | tar -x -C "$work"
    ls -la "$work"
    CUPY_TF32=0 python3 bench/gpu_vectors.py embed "$work" "$work/fp32.i8" --n 2000 --xp "${XP:-cupy}"
    CUPY_TF32=1 python3 bench/gpu_vectors.py embed "$work" "$work/vectors.i8" --xp "${XP:-cupy}"
    python3 - "$work/fp32.i8" "$work/vectors.i8" <<'PY'
import sys, numpy as np
def rows(path, n):
    a = np.fromfile(path, np.uint8, count=n * 772); n = len(a) // 772; a = a.reshape(n, 772)
    v = a[:, :768].view(np.int8).astype(np.float32) * a[:, 768:].copy().view("<f4")
    return v / np.linalg.norm(v, axis=1, keepdims=True)
a = rows(sys.argv[1], 2000); b = rows(sys.argv[2], len(a))
c = (a * b).sum(1)
print(f"TF32 against float32, {len(a)} texts: cosine min {c.min():.5f} mean {c.mean():.6f}")
PY
    split -b 15M -d -a 2 "$work/vectors.i8" "$parts/out/v"
    sha256sum "$work/vectors.i8" | tee "$parts/out/sha256"
    touch "$parts/out/done"
fi
ls "$parts/out"
for n in $(seq "$first" $((first + 3))); do
    f=$(printf '%s/out/v%02d' "$parts" "$n")
    [ -f "$f" ] && cp "$f" "$out/"
done
cp "$parts/out/sha256" "$out/" 2>/dev/null || true
ls -la "$out"
