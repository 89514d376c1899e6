"""Scoreboard: the people-as-they-write conversations (tests/conversations/) through the console.

    .venv/bin/python bench/conversations.py [--only ID ...] [--json] [--code DIR]

Each conversation is played by a simulated person against `intake-bot chat --jsonl` (one
process per conversation, real SQLite files in a temporary directory) and scored: facts right,
wrong (the target is 0), lost, asked again, answers refused, safety replies where due, missed
and where not due, case-type pickers shown, completed. `--code DIR` runs the same set against
another checkout of the product (e.g. a worktree of an earlier commit), so a before/after pair
is measured the same way in the same run. The console inherits the environment, so
`INTAKE_LLM=on INTAKE_LLM_BASE_URL=… INTAKE_LLM_MODEL=…` plays the set in LLM mode (raise
`INTAKE_LLM_BUDGET`, `INTAKE_LLM_TIMEOUT` and `INTAKE_TEST_WAIT` for a slow local model). Not a test: nothing is asserted here
(tests/test_conversations.py asserts).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conversation_runner import load, run, totals  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a conversation id (repeatable)")
    parser.add_argument("--json", action="store_true", help="totals as JSON")
    parser.add_argument("--code", type=Path, help="run against the product in this checkout")
    args = parser.parse_args()
    conversations = [c for c in load() if not args.only or c["id"] in args.only]
    missing = set(args.only or ()) - {c["id"] for c in conversations}
    if missing:
        parser.error(f"no conversation {', '.join(sorted(missing))}")
    command = [sys.executable, "-m", "bot.cli"] if args.code else None
    cwd = args.code.resolve() if args.code else None
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        scores = run(conversations, Path(tmp) / "data", command=command, cwd=cwd)
        elapsed = time.monotonic() - start
    figures = totals(scores)
    if args.json:
        print(json.dumps({**figures, "seconds": round(elapsed, 1)}))
        return 0
    print(f"{'conversation':<34} right wrong lost again refused safety(miss/false) done")
    for s in scores:
        safety = f"{s.safety_due}({len(s.safety_missed)}/{len(s.safety_false)})"
        print(
            f"{s.id:<34} {s.right:>5} {len(s.wrong):>5} {len(s.lost):>4} {len(s.repeated):>5}"
            f" {s.refused:>7} {safety:>18} {'yes' if s.completed else 'NO'}"
            + (f"  error: {s.error}" if s.error else "")
        )
        for what in s.wrong:
            print(f"{'':<36}wrong: {what}")
        for what in s.lost:
            print(f"{'':<36}lost: {what}")
        for what in s.repeated:
            print(f"{'':<36}asked again: {what}")
        for what in s.safety_missed:
            print(f"{'':<36}safety reply missing: {what}")
        for what in s.safety_false:
            print(f"{'':<36}safety reply not due: {what}")
    print()
    for key, value in figures.items():
        print(f"{key:<22} {value}")
    print(f"{'seconds':<22} {elapsed:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
