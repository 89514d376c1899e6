"""Benchmark: what the medical profile keeps of the first persona set, against a hand-made gold.

    .venv/bin/python bench/profile_recall.py [--index-dir DIR] [--show]

Each card of tests/data/personas/medical_set1 is played message by message through the real
engine (as tests/test_persona_sets.py does), and its profile at the end is held against
tests/data/personas/medical_set1_gold.yaml: an item wanted and present (with its value) is
right, wanted and absent is missed, present with another value or listed under `never` is
wrong, and a profile about someone else than the card's patient is one more wrong. `--show`
prints every card's items and what was missed or wrong. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.config import Settings  # noqa: E402
from bot.engine import Engine, Inbound  # noqa: E402
from graphs.legal.rules_brain import RulesBrain  # noqa: E402
from knowledge.kb import KnowledgeBase, open_index  # noqa: E402
from knowledge.loader import default_knowledge  # noqa: E402
from tests.support import NOW  # noqa: E402

CARDS = ROOT / "tests" / "data" / "personas" / "medical_set1"
GOLD = ROOT / "tests" / "data" / "personas" / "medical_set1_gold.yaml"


def _matches(item: dict[str, Any], want: dict[str, Any], *, any_status: bool) -> bool:
    """Whether a profile item is the gold entry (its key, status and value)."""
    status = want.get("status")
    if status is None and not any_status:
        status = "current"
    if status is not None and item["status"] != status:
        return False
    return "value" not in want or _same_value(item["value"], want["value"])


def _same_value(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, int | float) and isinstance(value, int | float):
        return abs(float(value) - float(wanted)) <= max(0.04, abs(float(wanted)) * 0.02)
    return str(value).lower() == str(wanted).lower()


def score(profile: dict[str, Any], gold: dict[str, Any]) -> dict[str, list[str]]:
    """right / wrong / missed of one card's profile against its gold."""
    items = [i for i in profile.get("items", []) if i["status"] != "removed"]
    by_key: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_key.setdefault(item["key"], []).append(item)
    right, wrong, missed = [], [], []
    for want in gold.get("want", []):
        found = by_key.get(want["key"], [])
        label = f"{want['key']}={want.get('value', '')}"
        if any(_matches(i, want, any_status=False) for i in found):
            right.append(label)
        elif "value" in want and any(i["status"] == "current" for i in found):
            wrong.append(f"{label} (holds {[i['value'] for i in found]})")
        else:
            missed.append(label)
    for never in gold.get("never", []):
        if any(_matches(i, never, any_status=True) for i in by_key.get(never["key"], [])):
            wrong.append(f"never {never['key']}={never.get('value', never.get('status', ''))}")
    subject = profile.get("subject", "self")
    if subject not in gold.get("subject", ["self"]):
        wrong.append(f"subject {subject}")
    return {"right": right, "wrong": wrong, "missed": missed}


async def play(engine: Engine, chat: int, card: dict[str, Any]) -> dict[str, Any]:
    """Send a card's messages to the engine; the medical profile at the end."""
    await engine.use_domain(chat, "medical")
    for step, turn in enumerate(card["turns"]):
        text = str(turn["say"])
        at = NOW + timedelta(minutes=3 * step)
        if text.startswith("--choice"):
            continue
        if text.startswith("/"):
            inbound = Inbound(chat_id=chat, kind="command", command=text[1:], user_id=1, at=at)
        else:
            inbound = Inbound(chat_id=chat, kind="text", text=text, user_id=1, at=at)
        await engine.handle(inbound)
    _, values = await engine.medical.values_of(chat)
    return values.get("profile") or {}


async def main(index_dir: Path | None, show: bool) -> None:
    gold = yaml.safe_load(GOLD.read_text(encoding="utf-8"))
    knowledge = default_knowledge()
    with tempfile.TemporaryDirectory() as scratch:
        where = index_dir or Path(scratch) / "kb"
        kb = KnowledgeBase(knowledge, open_index(where, knowledge))
        settings = Settings(intake_data_dir=Path(scratch) / "data", admin_ids="777", _env_file=None)
        engine = await Engine.open(
            settings, knowledge=knowledge, brain=RulesBrain(knowledge), kb=kb
        )
        totals = {"right": 0, "wrong": 0, "missed": 0}
        try:
            for number, path in enumerate(sorted(CARDS.glob("*.yaml"))):
                card = yaml.safe_load(path.read_text(encoding="utf-8"))
                profile = await play(engine, 91000 + number, card)
                result = score(profile, gold[card["id"]])
                for kind, found in result.items():
                    totals[kind] += len(found)
                print(f"{card['id']}: " + "  ".join(f"{k} {len(v)}" for k, v in result.items()))
                if show:
                    held = [
                        f"{i['key']}={i['value']}({i['status']})" for i in profile.get("items", [])
                    ]
                    print(f"    subject {profile.get('subject')}; holds {', '.join(held)}")
                    for kind in ("wrong", "missed"):
                        if result[kind]:
                            print(f"    {kind}: {'; '.join(result[kind])}")
        finally:
            await engine.close()
    said = totals["right"] + totals["missed"]
    print(
        f"TOTAL right {totals['right']}  wrong {totals['wrong']}  missed {totals['missed']}"
        f"  (kept {totals['right'] / max(said, 1):.0%} of {said} wanted)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.index_dir, args.show))
