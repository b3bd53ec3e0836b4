#!/usr/bin/env bash
# Installs the third-party clients the test suite drives quarry with — today the official MCP
# Inspector CLI (npm @modelcontextprotocol/inspector) — into tests/clients/node_modules, at the
# versions tests/clients/package-lock.json pins (npm checks each package's integrity hash).
# Needs Node.js and npm, from the npm registry only; no package install scripts are run.
set -euo pipefail
cd "$(dirname "$0")/../tests/clients"

if ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update && apt-get install -y nodejs npm
    else
        echo "install-test-clients.sh: npm is needed for the MCP Inspector test (e.g. 'sudo apt-get install nodejs npm'), then run again." >&2
        exit 1
    fi
fi
# Installed from this very lock file already: nothing to do.
if [ -x node_modules/.bin/mcp-inspector ] && cmp -s package-lock.json node_modules/.installed-lock.json; then
    exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
cp package-lock.json node_modules/.installed-lock.json
echo "test clients installed: MCP Inspector $(node_modules/.bin/mcp-inspector --version 2>/dev/null || echo '?')" >&2
