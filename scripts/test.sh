#!/usr/bin/env bash
# One command: install into .venv (with test extras) and PostgreSQL's binaries if missing, lint,
# and run the whole test suite on two workers.
#   bash scripts/test.sh           every test (what CI runs, through .ci/run)
#   bash scripts/test.sh --fast    lint and every test not marked `slow` (no process, no server,
#                                  no whole conversation set): the edit loop, about two minutes
# Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done
bash scripts/setup.sh test
if [ "$fast" = 0 ]; then
  bash scripts/postgres.sh  # the fast lane starts no PostgreSQL
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
if [ "$fast" = 1 ]; then
  args=(-m "not slow" "${args[@]}")
fi
# Two workers (INTAKE_TEST_WORKERS); a file's tests stay on one worker, so a module fixture (the
# conversation set, a PostgreSQL server) runs once.
exec .venv/bin/python -m pytest -q -n "${INTAKE_TEST_WORKERS:-2}" --dist loadfile "${args[@]}"
