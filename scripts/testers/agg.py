"""The figures of a round: the sum of the testers' scores over the cards of a folder.

python scripts/testers/agg.py tests/data/personas/legal_set20            (every card)
python scripts/testers/agg.py tests/data/personas/legal_set20/llm        (the LLM plays)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

KEYS = (
    "facts_told",
    "right",
    "wrong",
    "fixed_by_person",
    "no_item",
    "lost",
    "re_asks",
    "refused",
    "questions_back",
    "questions_back_recorded",
    "danger_due",
    "danger_on_time",
    "danger_missed",
    "false_alarms",
)


def main() -> None:
    folder = Path(sys.argv[1])
    cards = sorted(p for p in folder.glob("*.yaml"))
    total = dict.fromkeys(KEYS, 0)
    for path in cards:
        score = yaml.safe_load(path.read_text(encoding="utf-8")).get("score_when_played") or {}
        for key in KEYS:
            total[key] += int(score.get(key) or 0)
    told = total["facts_told"] or 1
    print(f"{len(cards)} cards")
    for key in KEYS:
        print(f"  {key}: {total[key]}")
    print(
        f"  right {100 * total['right'] / told:.0f} %, no item {100 * total['no_item'] / told:.0f} %"
    )
    if cards:
        print(f"  re-asks per conversation {total['re_asks'] / len(cards):.2f}")


if __name__ == "__main__":
    main()
