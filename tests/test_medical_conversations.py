"""The labelled medical conversations (tests/data/medical_conversations.yaml) through the real
engine: each turn raises exactly its expected red flags (none on the near-misses), every
answer is sourced or says it found nothing, and the profile the export gives matches the gold
profiles overall."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from bot.engine import Engine, Inbound
from tests.support import NOW

CONVERSATIONS = yaml.safe_load(
    (Path(__file__).parent / "data" / "medical_conversations.yaml").read_text(encoding="utf-8")
)
STAFF = 777
# Measured on this set when it was written: recall 0.967, precision 0.989 (gold items the export
# holds / export items in the gold). The floors leave room for a few lexicon changes only.
RECALL_FLOOR = 0.93
PRECISION_FLOOR = 0.95


def test_the_set_is_large_and_mixed() -> None:
    assert len(CONVERSATIONS) >= 30
    langs = {c["lang"] for c in CONVERSATIONS}
    assert langs == {"ko", "en"}
    assert sum(1 for c in CONVERSATIONS if c.get("alerts")) >= 8


def _gold_pairs(gold: dict) -> set[tuple[str, str]]:
    pairs = {
        (slot, name) for slot in ("conditions", "symptoms", "medications") for name in gold[slot]
    }
    pairs |= {("vitals", f"{k}={v}") for k, v in (gold.get("vitals") or {}).items()}
    pairs |= {("labs", f"{k}={v}") for k, v in (gold.get("labs") or {}).items()}
    return pairs


def _found_pairs(profile: dict) -> set[tuple[str, str]]:
    pairs = {
        (slot, item["name"])
        for slot in ("conditions", "symptoms", "medications")
        for item in profile[slot]
        if item["current"]
    }
    pairs |= {("vitals", f"{k}={v}") for k, v in profile["vitals"].items()}
    pairs |= {("labs", f"{k}={v}") for k, v in profile["labs"].items()}
    return pairs


async def _play(engine: Engine) -> dict[str, dict]:
    """Every conversation played in its own chat; the alerts of each turn and the export."""
    fired: dict[str, dict[int, list[str]]] = {}
    replies: dict[str, list[str]] = {}
    chats: dict[int, str] = {}
    for n, conv in enumerate(CONVERSATIONS):
        chat = 90_000 + n
        chats[chat] = conv["id"]
        await engine.handle(
            Inbound(
                chat_id=chat,
                kind="command",
                command="start",
                args=("medical",),
                user_id=chat,
                at=NOW,
            )
        )
        fired[conv["id"]] = {}
        replies[conv["id"]] = []
        for i, text in enumerate(conv["turns"]):
            reply = await engine.handle(
                Inbound(
                    chat_id=chat,
                    kind="text",
                    text=text,
                    user_id=chat,
                    at=NOW + timedelta(minutes=5 * (i + 1)),
                )
            )
            fired[conv["id"]][i] = sorted(a.code for a in reply.alerts)
            replies[conv["id"]].append("\n".join(m["text"] for m in reply.messages))
    export = await engine.handle(
        Inbound(
            chat_id=STAFF,
            kind="command",
            command="export",
            args=("json",),
            user_id=STAFF,
            at=NOW + timedelta(hours=2),
        )
    )
    rows = {
        chats[r["chat_id"]]: r
        for r in json.loads(export.documents[0].content)
        if r["domain"] == "medical"
    }
    return {"fired": fired, "replies": replies, "rows": rows}


@pytest.mark.slow  # the whole set of 36 conversations through the engine, about half a minute
async def test_the_labelled_conversations(engine: Engine) -> None:
    """One play of the whole set (about 130 turns), checked three ways below."""
    played = await _play(engine)
    _red_flags_fire_on_their_turns_and_near_misses_stay_quiet(played)
    _every_answer_is_sourced_or_says_it_found_nothing(played)
    _profiles_match_the_gold_overall(played)


def _red_flags_fire_on_their_turns_and_near_misses_stay_quiet(played) -> None:
    wrong = []
    for conv in CONVERSATIONS:
        expected = {int(k): sorted(v) for k, v in (conv.get("alerts") or {}).items()}
        for i, codes in played["fired"][conv["id"]].items():
            if codes != expected.get(i, []):
                wrong.append((conv["id"], i, codes, expected.get(i, [])))
    assert not wrong


def _every_answer_is_sourced_or_says_it_found_nothing(played) -> None:
    for conv in CONVERSATIONS:
        for text in played["replies"][conv["id"]]:
            for line in text.split("\n"):  # a source is a line of its own (first aid's too)
                assert "출처:" not in line or line.startswith("출처:")
    answered = sum(
        1
        for conv in CONVERSATIONS
        for text in played["replies"][conv["id"]]
        if "출처:" in text or "Sources:" in text
    )
    assert answered >= len(CONVERSATIONS)


def _profiles_match_the_gold_overall(played) -> None:
    gold_total = found_total = hits = 0
    for conv in CONVERSATIONS:
        row = played["rows"][conv["id"]]
        gold, found = _gold_pairs(conv["gold"]), _found_pairs(row["profile"])
        gold_total += len(gold)
        found_total += len(found)
        hits += len(gold & found)
        if conv["gold"].get("age") is not None:
            gold_total += 1
            found_total += row["profile"]["age"] is not None
            hits += row["profile"]["age"] == conv["gold"]["age"]
    recall, precision = hits / gold_total, hits / max(found_total, 1)
    print(f"profile recall {recall:.3f} precision {precision:.3f}")
    assert recall >= RECALL_FLOOR, (recall, precision)
    assert precision >= PRECISION_FLOOR, (recall, precision)
