#!/usr/bin/env bash
# The date-sensitive tests at 14 instants: each weekday of a week, at 23:50 and at 00:10 in
# Seoul (the clock set by INTAKE_TEST_CLOCK, tests only; README "Tests and benchmarks").
#   bash scripts/any_day.sh                  the conversation set, the date readers, deadlines
#                                            and relative dates through the engine
#   bash scripts/any_day.sh --dated          quicker: only the conversations whose expected
#                                            facts are relative dates (days_ago, last_weekday,
#                                            ...), scored as the set's test scores them, and
#                                            the deadlines
#   bash scripts/any_day.sh tests/test_x.py  other tests instead
# Prints one line an instant and exits non-zero when any instant failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
dated=0
tests=()
for arg in "$@"; do
  if [ "$arg" = "--dated" ]; then dated=1; else tests+=("$arg"); fi
done
if [ ${#tests[@]} -eq 0 ]; then
  tests=(tests/test_conversations.py tests/test_everyday_answers.py tests/test_normalize.py
         tests/test_deadlines.py tests/test_relative_dates.py)
  [ "$dated" = 1 ] && tests=(tests/test_deadlines.py)
fi

play_dated() {  # the dated conversations at INTAKE_TEST_CLOCK; one line: figures or failures
  .venv/bin/python - <<'EOF'
import json, os, shutil, sys, tempfile, time
from pathlib import Path
import clock
from tests.conversation_runner import load, run, totals
from tests.test_conversations import failures

# one clock for this process and the consoles it starts
raw = os.environ[clock.ENV]
if "@" not in raw:
    os.environ[clock.ENV] = f"{raw}@{time.time():.6f}"
dated = [
    c for c in load()
    if any(isinstance(v, dict) for v in ((c.get("expect") or {}).get("facts") or {}).values())
]
data = Path(tempfile.mkdtemp()) / "data"
built = sorted(Path(".pytest_cache/d/knowledge-index").glob("*/index"))
if built:  # the index the tests built (else the first console builds it)
    shutil.copytree(built[-1], data / "index")
scores = run(dated, data)
bad = {s.id: failures(c, s) for c, s in zip(dated, scores) if failures(c, s) and not c.get("known_gap")}
print(json.dumps({"conversations": len(dated), **totals(scores), "failed": bad}, ensure_ascii=False))
sys.exit(1 if bad else 0)
EOF
}

failed=0
for day in 23 24 25 26 27 28 29; do  # Monday 2026-11-23 ... Sunday 2026-11-29
  for at in "$(printf '2026-11-%02dT23:50:00+09:00' $((day - 1)))" \
            "$(printf '2026-11-%02dT00:10:00+09:00' "$day")"; do
    log="$(mktemp)"
    ok=1
    INTAKE_TEST_CLOCK="$at" .venv/bin/python -m pytest -q -n "${INTAKE_TEST_WORKERS:-2}" \
      --dist loadfile "${tests[@]}" >"$log" 2>&1 || ok=0
    line="$(tail -n 1 "$log")"
    if [ "$dated" = 1 ]; then
      INTAKE_TEST_CLOCK="$at" play_dated >"$log" 2>/dev/null || ok=0
      line="$line; $(tail -n 1 "$log")"
    fi
    if [ "$ok" = 1 ]; then
      echo "$at  $line"
    else
      echo "$at  FAILED: $line"
      grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
      failed=1
    fi
    rm -f "$log"
  done
done
exit "$failed"
