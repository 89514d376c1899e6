#!/usr/bin/env bash
# The date-sensitive tests at 14 instants: each weekday of a week, at 23:50 and at 00:10 in
# Seoul (the clock set by INTAKE_TEST_CLOCK, tests only; README "Tests and benchmarks").
#   bash scripts/any_day.sh                  the conversation set, the date readers, deadlines
#                                            and relative dates through the engine
#   bash scripts/any_day.sh tests/test_x.py  other tests instead
# Prints one line an instant and exits non-zero when any instant failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  tests=(tests/test_conversations.py tests/test_everyday_answers.py tests/test_normalize.py
         tests/test_deadlines.py tests/test_relative_dates.py)
fi
failed=0
for day in 23 24 25 26 27 28 29; do  # Monday 2026-11-23 ... Sunday 2026-11-29
  for at in "$(printf '2026-11-%02dT23:50:00+09:00' $((day - 1)))" \
            "$(printf '2026-11-%02dT00:10:00+09:00' "$day")"; do
    log="$(mktemp)"
    if INTAKE_TEST_CLOCK="$at" .venv/bin/python -m pytest -q -n "${INTAKE_TEST_WORKERS:-2}" \
        --dist loadfile "${tests[@]}" >"$log" 2>&1; then
      echo "$at  $(tail -n 1 "$log")"
    else
      echo "$at  FAILED: $(tail -n 1 "$log")"
      grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
      failed=1
    fi
    rm -f "$log"
  done
done
exit "$failed"
