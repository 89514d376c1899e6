"""People as they really write, through the console: the conversations of tests/conversations/
played by a simulated person against `intake-bot chat --jsonl` and scored
(tests/conversation_runner.py).

Every conversation: no wrong fact, no fact the person gave lost or asked again, the safety
reply where it belongs and nowhere else, the intake completed. A conversation marked
`known_gap` documents a failure not fixed yet: it is expected to fail (and the test fails once
it passes, so the mark is removed when the gap is closed).
"""

from __future__ import annotations

import os
import shutil

import pytest

from knowledge.kb import KnowledgeBase
from tests.conversation_runner import Score, load, run, totals

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("INTAKE_SKIP_CONVERSATIONS") == "1", reason="INTAKE_SKIP_CONVERSATIONS=1"
    ),
]
CONVERSATIONS = load()


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory, kb: KnowledgeBase) -> dict[str, Score]:
    data = tmp_path_factory.mktemp("conversations") / "data"
    shutil.copytree(kb.index.path, data / "index")  # as after `intake-bot kb build`
    played = run(CONVERSATIONS, data)
    return {s.id: s for s in played}


def failures(conv: dict, s: Score) -> list[str]:
    found = []
    if s.error is not None:
        found.append(f"error: {s.error}")
    found += [f"wrong fact: {w}" for w in s.wrong]
    found += [f"no safety reply to: {m}" for m in s.safety_missed]
    found += [f"safety reply where none was due: {m}" for m in s.safety_false]
    if not s.completed:
        found.append(f"not completed after {s.turns} turns")
    found += [f"fact lost: {k}" for k in s.lost] + [f"asked again: {k}" for k in s.repeated]
    return found


def test_the_set_holds_both_languages_danger_and_near_misses() -> None:
    assert {c["lang"] for c in CONVERSATIONS} == {"ko", "en"}
    in_danger = [
        c
        for c in CONVERSATIONS
        if c.get("danger") or any(i.get("danger") for i in c.get("interject") or [])
    ]
    assert len(in_danger) >= 6
    assert sum(c["id"].split("-")[1] == "nearmiss" for c in CONVERSATIONS) >= 4


def test_the_set_covers_every_sub_type_in_both_languages(knowledge) -> None:
    assert len(CONVERSATIONS) >= 40
    covered = {(c["expect"]["sub_type"], c["lang"]) for c in CONVERSATIONS}
    for _, sub in knowledge.k1.all_sub_types():
        assert (sub.code, "ko") in covered and (sub.code, "en") in covered, sub.code


@pytest.mark.parametrize("conv", CONVERSATIONS, ids=[c["id"] for c in CONVERSATIONS])
def test_conversation(conv: dict, scores: dict[str, Score]) -> None:
    found = failures(conv, scores[conv["id"]])
    summary = totals(list(scores.values()))
    if conv.get("known_gap"):
        assert found, f"known gap closed ({conv['known_gap']}): remove its known_gap mark"
        pytest.xfail(f"known gap: {conv['known_gap']} — {found}")
    assert not found, f"{found} (set: {summary})"
