#!/usr/bin/env bash
# One command: install into .venv (with test extras) and PostgreSQL's binaries if missing, lint,
# and run the whole test suite on two workers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/postgres.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# Two workers (INTAKE_TEST_WORKERS); a file's tests stay on one worker, so a module fixture (the
# conversation set, a PostgreSQL server) runs once.
exec .venv/bin/python -m pytest -q -n "${INTAKE_TEST_WORKERS:-2}" --dist loadfile "$@"
