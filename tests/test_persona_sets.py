"""The testers' persona sets played again through the engine: every message the tester marked
as completing a red flag raises it (or it was raised earlier in the same episode), and no
near-miss raises anything. Both sets stay here so they never fall back."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from bot import export
from bot.engine import Engine, Inbound
from graphs.legal import names
from tests.support import NOW

SETS = Path(__file__).parent / "data" / "personas"
# Each card replays a whole conversation through the engine: 100 cards, several minutes.
REPLAY = pytest.mark.slow
CARDS = sorted(SETS.glob("medical_*/*.yaml"))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_sets_are_here() -> None:
    assert len([p for p in CARDS if p.parent.name == "medical_set1"]) >= 20


@REPLAY
@pytest.mark.parametrize("path", CARDS, ids=[f"{p.parent.name}/{p.stem}" for p in CARDS])
async def test_red_flags_fire_when_due_and_never_on_a_near_miss(engine: Engine, path: Path) -> None:
    card = load(path)
    chat = 90000 + CARDS.index(path)
    await engine.use_domain(chat, "medical")
    raised: set[str] = set()
    for step, turn in enumerate(card["turns"]):
        text = str(turn["say"])
        at = NOW + timedelta(minutes=3 * step)
        if text.startswith("/"):
            inbound = Inbound(chat_id=chat, kind="command", command=text[1:], user_id=1, at=at)
        elif text.startswith("--choice"):
            continue  # a button of the reply as it was then; the reply may differ now
        else:
            inbound = Inbound(chat_id=chat, kind="text", text=text, user_id=1, at=at)
        reply = await engine.handle(inbound)
        codes = {hit.code for hit in reply.alerts}
        where = f"{card['id']} n{turn.get('n')}: {text[:60]}"
        if turn.get("flag_due"):  # raised now, or earlier (a rule is raised once an episode,
            # and a sign can complete it a message before the tester expected)
            assert codes or raised, f"red flag due, none raised: {where}"
        if turn.get("near_miss"):
            assert not codes, f"near-miss raised {sorted(codes)}: {where}"
        raised |= codes


# --- the legal sets ----------------------------------------------------------------------------

LEGAL_CARDS = sorted(SETS.glob("legal_*/*.yaml"))


def _legal_inbound(chat: int, text: str, at, *, presses: bool) -> Inbound | None:
    if text.startswith("/"):
        name, *args = text[1:].split()
        return Inbound(chat_id=chat, kind="command", command=name, args=args, user_id=1, at=at)
    if text.startswith("choice"):
        if not presses:
            return None  # a button of the reply as it was then; the reply may differ now
        # pressed again: a button no longer offered is refused, as a stale press would be
        data = text.removeprefix("choice").strip()
        return Inbound(chat_id=chat, kind="choice", data=data, user_id=1, at=at)
    return Inbound(chat_id=chat, kind="text", text=text, user_id=1, at=at)


# Sets recorded with their presses and held to the stricter mark: a danger is answered on the
# very message that tells it (again when it is told again), not only somewhere before.
ON_ITS_MESSAGE = {
    "legal_set3",
    "legal_set4",
    "legal_set6",
    "legal_set7",
    "legal_set8",
    "legal_set9",
    "legal_set10",
    "legal_set11",
    "legal_set12",
    "legal_set13",
    "legal_set14",
    "legal_set15",
    "legal_set16",
    "legal_set17",
    "legal_set18",
    "legal_set19",
}


@REPLAY
@pytest.mark.parametrize(
    "path", LEGAL_CARDS, ids=[f"{p.parent.name}/{p.stem}" for p in LEGAL_CARDS]
)
async def test_legal_cards_danger_names_and_questions(engine: Engine, path: Path) -> None:
    card = load(path)
    chat = 95000 + LEGAL_CARDS.index(path)
    strict = path.parent.name in ON_ITS_MESSAGE
    await engine.use_domain(chat, "legal")
    raised: set[str] = set()
    for step, turn in enumerate(card["turns"]):
        text = str(turn["say"])
        at = NOW + timedelta(minutes=3 * step)
        inbound = _legal_inbound(chat, text, at, presses=strict)
        if inbound is None or text.startswith(("/forget", "/cancel", "/new")):
            continue
        reply = await engine.handle(inbound)
        codes = {hit.code for hit in reply.alerts}
        where = f"{card['id']} n{turn['n']}: {text[:60]}"
        if turn.get("danger_due"):
            assert codes or (raised and not strict), f"danger told, no alert: {where}"
        if turn.get("near_miss"):
            assert not codes, f"near-miss raised {sorted(codes)}: {where}"
        if not card["danger_card"]:
            assert not codes, f"alert {sorted(codes)} in a card with no danger: {where}"
        raised |= codes
    rows = await export.collect(
        engine=engine.records, include_open=True, intake_state=engine.intake_state
    )
    mine = [r for r in rows if r["chat_id"] == chat and r["domain"] == "legal"]
    for row in mine:
        party = (row["facts"] or {}).get("counterparty")
        if isinstance(party, str) and " " not in party:
            assert names.plausible_name(party), f"{card['id']}: counterparty {party!r}"
    asked = (card.get("score_when_played") or {}).get("questions_back") or 0
    if asked:
        listed = [q for r in mine for q in r["questions"] or []]
        assert listed, f"{card['id']}: {asked} questions asked back, none listed"
