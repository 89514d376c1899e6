#!/usr/bin/env bash
# One command: install into .venv (with test extras) and PostgreSQL's binaries if missing, lint,
# and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/postgres.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest -q "$@"
