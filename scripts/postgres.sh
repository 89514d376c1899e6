#!/usr/bin/env bash
# Make sure PostgreSQL's server binaries are here for the tests that start their own server
# (tests/postgres.py): Debian's `postgresql` package, installed when missing and we are root.
# Nothing is started here, and the system service is not needed.
set -euo pipefail
if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing PostgreSQL (Debian package postgresql) for the tests..." >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
else
  echo "note: PostgreSQL is not installed; its tests are skipped (they fail when CI=true)" >&2
fi
