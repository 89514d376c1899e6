#!/usr/bin/env bash
# Create .venv at the repo root and install the project into it (editable), with extras "$@".
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
extras="${1:-}"
target="."
[ -n "$extras" ] && target=".[$extras]"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24" >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target"
