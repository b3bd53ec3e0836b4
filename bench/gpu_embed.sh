#!/usr/bin/env bash
# bench/gpu_embed.sh PAYLOAD_DIR — EmbeddingGemma on onnxruntime's CUDA provider beside the same
# machine's CPU, in one run: texts/s (crates/quarry-embed/examples/embed_bench.rs), the cosine of
# GPU to CPU vectors of the same graph, flask and sympy indexed with vectors, and a `quarry
# search` process cold and through the resident daemon.
#
# PAYLOAD_DIR holds part.* (cat | xz -d | tar -x): bin/{quarry,embed_bench}, ort/ (the PyPI
# onnxruntime-gpu wheel's libonnxruntime.so, _providers_shared and _providers_cuda), data/quarry/
# models/embeddinggemma-300m/ (config.json, tokenizer.json, model_int8.onnx) and src/{flask,sympy}.
# bench/gemma_fp32_from_int8.py rebuilds the fp32 graph there (the real one is too big to carry;
# its arithmetic is the same). The CUDA libraries (cuBLAS, cudart, cuRAND of CUDA 13) are taken
# from wherever the machine has them (a PyTorch install's nvidia packages, say).
#
# DRY=1 runs every step on the CPU (cuda-* runtimes become onnx-*, embed.device cpu) with fewer
# texts and flask only: a check of the script before a GPU machine's minutes are spent.
set -uo pipefail
cd "$(dirname "$0")/.."
payload=$(realpath "${1:?usage: bench/gpu_embed.sh PAYLOAD_DIR}")
root=${GPU_WORK:-/tmp/quarry-gpu}
out=${OUT:-$root/out}
mkdir -p "$root" "$out"
exec > >(tee "$out/log") 2>&1
dry=${DRY:-}
gpu=cuda; device=cuda; n=4000; big=sympy
if [ -n "$dry" ]; then gpu=onnx; device=cpu; n=200; big=flask; fi
ms() { echo $(( $(date +%s%N) / 1000000 )); }
step() { echo; echo "== $* ($(date +%T))"; }

step unpack
if [ ! -x "$root/bin/quarry" ]; then
    cat "$payload"/part.* | python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer, 1 << 20)' | tar -x -C "$root" || exit 1
fi
model=$root/data/quarry/models/embeddinggemma-300m
if [ ! -f "$model/model_fp32.onnx" ]; then
    "${PYTHON:-python3}" bench/gemma_fp32_from_int8.py "$model/model_int8.onnx" "$model/model_fp32.onnx" || exit 1
fi
bin=$root/bin/quarry
export XDG_DATA_HOME=$root/data QUARRY_ORT_LIB=$root/ort/libonnxruntime.so QUARRY_DAEMON=off
libs=$root/ort
for lib in libcublasLt.so.13 libcublas.so.13 libcurand.so.10 libcudart.so.13; do
    found=$(find / -name "$lib" -not -path '/proc/*' 2>/dev/null | head -1)
    [ -n "$found" ] && libs=$libs:$(dirname "$found")
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null
nproc

step "lexical index of $big (texts for embed_bench)"
t0=$(ms); "$bin" --index-dir "$root/lex" index "$root/src/$big" --no-embed --json | head -c 300; echo
echo "lexical index: $(( $(ms) - t0 )) ms"
bench() { "$root/bin/embed_bench" --index "$root/lex/index.sqlite" --model embeddinggemma --max-tokens 128 "$@"; }

step "same graph (fp32), CPU then GPU: speed and cosine"
bench --n 500 --runtimes onnx-fp32,$gpu-fp32
step "GPU fp32 by batch size"
for b in 16 64 128; do bench --n "$n" --batch "$b" --runtimes $gpu-fp32 | tail -1; done
step "CPU int8 (quarry's CPU default), 16 per batch"
bench --n 1000 --runtimes onnx-int8 | tail -1

index() {  # index WS DIR DEVICE PRECISION
    "$bin" --index-dir "$1" model use embeddinggemma >/dev/null
    "$bin" --index-dir "$1" config set embed.device "$3" >/dev/null
    "$bin" --index-dir "$1" config set embed.precision "$4" >/dev/null
    local t=$(ms)
    "$bin" --index-dir "$1" index "$2" --json > "$1.json" || { echo "index failed"; return 1; }
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); e=j["embedding"]; print("  chunks", sum(r["chunks"] for r in j["repos"]), "| embedded", e["embedded"], "texts in", e["elapsed_ms"], "ms =", round(e["embedded"]*1000/max(e["elapsed_ms"],1),1), "texts/s")' "$1.json"
    echo "  whole index command: $(( $(ms) - t )) ms; peak RSS of a search: $( { /usr/bin/time -f %M "$bin" --index-dir "$1" search "parse config file" --mode semantic >/dev/null; } 2>&1 | tail -1) KB"
}
cold() {  # cold WS: p50 of fresh `quarry search` processes, semantic and hybrid
    for mode in semantic hybrid; do
        local times=()
        while IFS= read -r q; do
            local s=$(date +%s%N); "$bin" --index-dir "$1" search "$q" --mode $mode >/dev/null 2>&1; local e=$(date +%s%N)
            times+=($(( (e - s) / 1000000 )))
        done < <(head -8 bench/queries.txt)
        echo "  cold $mode: $(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ') ms"
    done
}

step "flask: GPU fp32"
index "$root/flask-gpu" "$root/src/flask" "$device" fp32
step "flask: CPU int8"
index "$root/flask-cpu" "$root/src/flask" cpu int8
cold "$root/flask-cpu"
if [ -z "$dry" ]; then
    step "sympy: GPU fp32"
    index "$root/sympy-gpu" "$root/src/sympy" cuda fp32
    cold "$root/sympy-gpu"
    step "sympy: the same index, queries embedded on the CPU (fp32)"
    "$bin" --index-dir "$root/sympy-gpu" config set embed.device cpu >/dev/null
    cold "$root/sympy-gpu"
    "$bin" --index-dir "$root/sympy-gpu" config set embed.device cuda >/dev/null
    ws=$root/sympy-gpu
else
    ws=$root/flask-gpu
fi

step "through the resident daemon ($ws, device $device)"
t=$(ms); QUARRY_DAEMON=auto "$bin" --index-dir "$ws" daemon start >/dev/null || echo "daemon start failed"
echo "  daemon start: $(( $(ms) - t )) ms"
export QUARRY_DAEMON=require
times=()
while IFS= read -r q; do
    s=$(date +%s%N); "$bin" --index-dir "$ws" search "$q" --mode semantic >/dev/null 2>&1 || echo "daemon search failed: $q"; e=$(date +%s%N)
    times+=($(( (e - s) / 1000000 )))
done < <(head -12 bench/queries.txt)
echo "  daemon semantic: ${times[*]} ms"
"$bin" --index-dir "$ws" daemon status --json | head -c 800; echo
"$bin" --index-dir "$ws" search "matrix determinant" --mode semantic --json | head -c 600; echo
nvidia-smi --query-compute-apps=pid,used_memory --format=csv 2>/dev/null
"$bin" --index-dir "$ws" daemon stop >/dev/null 2>&1
step done
