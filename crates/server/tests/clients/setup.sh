#!/usr/bin/env bash
# Installs the client drivers the client-matrix tests run (tests/client_matrix.rs,
# tests/psycopg.rs) under target/clients/, and Debian's JDBC driver:
#   target/clients/venv        psycopg 3 and psycopg2 (pip)
#   target/clients/node        node-postgres (npm, versions from package.json)
#   /usr/share/java/postgresql.jar   pgJDBC (apt: libpostgresql-jdbc-java)
# Each step that fails (no network, no apt) is reported and skipped; the test
# of that driver then says it skipped. Run by .ci/run before the tests.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
out=target/clients
mkdir -p "$out"

if [ ! -x "$out/venv/bin/python" ] || ! "$out/venv/bin/python" -c "import psycopg, psycopg2" 2>/dev/null; then
  echo "client setup: python venv with psycopg 3 and psycopg2 ..."
  python3 -m venv "$out/venv" &&
    "$out/venv/bin/pip" install -q --disable-pip-version-check \
      "psycopg[binary]==3.2.*" "psycopg2-binary==2.9.*" ||
    echo "client setup: pip install failed; the psycopg tests will skip" >&2
fi

if command -v npm >/dev/null 2>&1; then
  if [ ! -d "$out/node/node_modules/pg" ]; then
    echo "client setup: node-postgres ..."
    mkdir -p "$out/node"
    cp crates/server/tests/clients/node/package.json "$out/node/"
    (cd "$out/node" && npm install --silent --no-audit --no-fund >/dev/null) ||
      echo "client setup: npm install failed; the node-postgres test will skip" >&2
  fi
else
  echo "client setup: no npm; the node-postgres test will skip" >&2
fi

if [ ! -f /usr/share/java/postgresql.jar ] || ! command -v javac >/dev/null 2>&1; then
  echo "client setup: pgJDBC ..."
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
    SUDO="sudo -n"
  fi
  pkgs="libpostgresql-jdbc-java"
  command -v javac >/dev/null 2>&1 || pkgs="$pkgs default-jdk-headless"
  export DEBIAN_FRONTEND=noninteractive
  { $SUDO apt-get install -y -qq --no-install-recommends $pkgs </dev/null >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq </dev/null >/dev/null 2>&1 &&
      $SUDO apt-get install -y -qq --no-install-recommends $pkgs </dev/null >/dev/null 2>&1; }; } ||
    echo "client setup: apt-get install $pkgs failed; the JDBC test will skip" >&2
fi
exit 0
