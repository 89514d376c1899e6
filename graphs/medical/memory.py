"""The remembered patient profile: storage, time decay, consolidation, reconfirmation.

A profile is plain JSON-able data (it lives in the medical graph's checkpointed state, and the
engine copies it to the records after each turn):

    {"subject": "self" | "father" | ..., "items": [item, ...], "raw": n}

and an item is one thing the person said, merged with every later mention of the same thing:

    {"key": "medications:metformin", "slot", "name", "name_ko", "value", "text",
     "status": current | past | denied | family | removed,
     "first_said", "last_said", "checked_at" (ISO times), "mentions", "importance",
     "unsure", "confirmed" (None until asked), "asked_at", "input_id",
     "history": [{"value", "text", "at"}],     # earlier values, oldest first
     "source": "model"}  # only on an item the model alone read (LLM mode)

Decay follows the seed: freshness = exp(-λ · hours since the item was last said or confirmed),
λ per slot type (vitals 0.1/h, labs 0.05, symptoms 0.02, medications 0.005, conditions 0.001);
an item's weight is its importance × freshness. Consolidation merges every mention of one thing
(the lexicon gives "두통" and "머리 아픔" one canonical name; near-identical names merge too), the
latest value wins with the earlier ones kept in `history`, and each mention raises importance.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from datetime import datetime
from difflib import SequenceMatcher
from typing import Any

from graphs.medical.slots import SlotExtraction, SlotItem
from knowledge.medical_lexicon import load_medical_lexicon

SLOTS = ("demographics", "conditions", "symptoms", "medications", "vitals", "labs")
DECAY_PER_HOUR = {  # the seed's λ
    "vitals": 0.1,
    "labs": 0.05,
    "symptoms": 0.02,
    "medications": 0.005,
    "conditions": 0.001,
    "demographics": 0.0,
}
BASE_IMPORTANCE = {
    "demographics": 1.0,
    "conditions": 0.9,
    "medications": 0.9,
    "symptoms": 0.7,
    "vitals": 0.6,
    "labs": 0.6,
}
MENTION_BONUS = 0.1  # each further mention of an item raises its importance by this
# Below this freshness an item is no longer taken as current: it is asked about again
# (reconfirmation) before it is used. exp(-λh) < 0.2 after about 16 h for vitals, 32 h for
# labs, 3 days for symptoms, 13 days for medications and 67 days for conditions.
FRESH_FLOOR = 0.2
NAME_MERGE_RATIO = (
    0.85  # names this alike (difflib ratio) are one item ("chest pain"/"chest pains")
)
RECONFIRM_SLOTS = ("medications", "conditions", "symptoms", "vitals")
HISTORY_KEPT = 10
# Vitals read as a pair: asked about, shown and exported together.
PAIRS = {"bp_sys": "bp_dia"}


def new_profile() -> dict[str, Any]:
    return {"subject": "self", "items": [], "raw": 0}


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="seconds")


def _hours(since: str, now: datetime) -> float:
    then = datetime.fromisoformat(since)
    if then.tzinfo is None and now.tzinfo is not None:
        then = then.replace(tzinfo=now.tzinfo)
    return max((now - then).total_seconds() / 3600, 0.0)


def status_of(item: SlotItem) -> str:
    """Where a newly said item belongs: the patient's current items, their past, a denial, or
    a relative's (family history)."""
    if item.family:
        return "family"
    if item.history:
        return "past"
    if item.negated:
        return "denied"
    return "current"


def item_key(slot: str, name: str, status: str) -> str:
    """Family items are kept apart from the patient's own: "어머니가 당뇨" is not the patient's."""
    return f"{'family:' if status == 'family' else ''}{slot}:{name}"


def freshness(item: dict[str, Any], now: datetime) -> float:
    """exp(-λ · hours since the item was last said or confirmed), 1.0 for demographics."""
    rate = DECAY_PER_HOUR.get(item["slot"], 0.0)
    latest = max(item["last_said"], item.get("checked_at") or item["last_said"])
    return math.exp(-rate * _hours(latest, now))


def weight(item: dict[str, Any], now: datetime) -> float:
    """Importance × freshness: the order in which the profile is used and shown."""
    return item["importance"] * freshness(item, now)


def is_current(item: dict[str, Any], now: datetime) -> bool:
    """Said of the patient, still holding as far as the bot knows, fresh enough to use, and
    not an unconfirmed reading."""
    return (
        item["status"] == "current"
        and freshness(item, now) >= FRESH_FLOOR
        and not (item["unsure"] and not item.get("confirmed"))
    )


def _same_name(a: str, b: str) -> bool:
    return a == b or SequenceMatcher(None, a, b).ratio() >= NAME_MERGE_RATIO


def _find(items: list[dict[str, Any]], slot: str, name: str, family: bool) -> int | None:
    for i, item in enumerate(items):
        if (
            item["slot"] == slot
            and (item["status"] == "family") == family
            and _same_name(item["name"], name)
        ):
            return i
    return None


def kind_of(name: str) -> str | None:
    """The generic word of a relation ("son" -> "child"), None for most."""
    return next((r.kind_of for r in load_medical_lexicon().relations if r.name == name), None)


def same_person(one: str, other: str) -> bool:
    """Whether two names of the person cared for are one person ("애" then "아들")."""
    return one == other or kind_of(one) == other or kind_of(other) == one


def someone_else(profile: dict[str, Any], extraction: SlotExtraction) -> bool:
    """Whether a message speaks of another person than the one this profile already holds
    ("BP 150/95" of the parent, then "아기가 열이 38도예요"): its items would mix two people.
    One child named two ways ("애", then "아들") is one person."""
    held = profile.get("subject", "self")
    return (
        extraction.subject != "self"
        and not same_person(extraction.subject, held)
        and any(not i.get("unsure") for i in profile.get("items", []))
    )


def _subject_after(held: str, said: str) -> str:
    """Whom the profile is about after a message: the more exact name of one person ("아들"
    over "애"), or whoever the first message named."""
    if said == "self" or (held != "self" and same_person(said, held) and kind_of(said) != held):
        return held
    return said


def remember(
    profile: dict[str, Any],
    extraction: SlotExtraction,
    *,
    at: datetime,
    input_id: str | None = None,
    consolidate: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The profile with what one message said stored in it, and the items it added or changed.

    With `consolidate=False` every mention is kept as an item of its own (the benchmark's
    baseline: what a profile grows to without consolidation).
    """
    items = [dict(i) for i in profile.get("items", [])]
    subject = _subject_after(profile.get("subject", "self"), extraction.subject)
    removed = list(profile.get("removed", []))
    changed: list[dict[str, Any]] = []
    when = _iso(at)
    for said in extraction.items:
        status = status_of(said)
        key = item_key(said.slot, said.name, status)
        if key in removed:
            if said.asked:  # deleted in /profile: back only when the person says it again
                continue
            removed.remove(key)
        found = _find(items, said.slot, said.name, status == "family") if consolidate else None
        if found is None:
            item = {
                "key": item_key(said.slot, said.name, status),
                "slot": said.slot,
                "name": said.name,
                "name_ko": said.name_ko,
                "value": said.value,
                "text": said.text,
                "status": status,
                "first_said": when,
                "last_said": when,
                "checked_at": None,
                "mentions": 1,
                "importance": BASE_IMPORTANCE[said.slot],
                "unsure": said.unsure,
                "confirmed": None,
                "asked_at": None,
                "input_id": input_id,
                "history": [],
                "context": list(said.context),
                "details": list(said.details),
            }
            items.append(item)
            _mark_source(item, said)
        else:
            item = items[found]
            if item["value"] != said.value or item["status"] != status:
                # A new value (BP 140/90, then 120/80) or a new standing ("끊었어요"): the latest
                # wins, the earlier one is kept.
                earlier = {"value": item["value"], "text": item["text"], "at": item["last_said"]}
                if said.corrects:  # said wrong: kept for staff, never shown as a value
                    earlier["wrong"] = True
                item["history"] = (item["history"] + [earlier])[-HISTORY_KEPT:]
            item.update(
                value=said.value,
                text=said.text,
                status=status,
                last_said=when,
                mentions=item["mentions"] + 1,
                importance=min(1.0, item["importance"] + MENTION_BONUS),
                unsure=said.unsure,
                confirmed=None if said.unsure else item.get("confirmed"),
                asked_at=None,
                input_id=input_id,
                context=list(said.context) if said.slot in ("vitals", "labs") else [],
                details=list(dict.fromkeys([*said.details, *item.get("details", [])]))[:4],
            )
            _mark_source(item, said)
        changed.append(item)
    return {
        "subject": subject,
        "items": items,
        "raw": profile.get("raw", 0) + len(extraction.items),
        "removed": removed,
    }, changed


def _mark_source(item: dict[str, Any], said: SlotItem) -> None:
    """An item only the model read (LLM mode) says so until the rules read it again."""
    if said.source == "rules":
        item.pop("source", None)
    else:
        item["source"] = said.source


def current_items(
    profile: dict[str, Any], now: datetime, slots: Iterable[str] = SLOTS
) -> list[dict[str, Any]]:
    """The patient's current items of these slots, by weight (most important first)."""
    wanted = set(slots)
    found = [i for i in profile.get("items", []) if i["slot"] in wanted and is_current(i, now)]
    return sorted(found, key=lambda i: -weight(i, now))


def demographic(profile: dict[str, Any], name: str) -> Any:
    """The latest age or sex said (None when never said)."""
    for item in profile.get("items", []):
        if item["slot"] == "demographics" and item["name"] == name and item["status"] == "current":
            return item["value"]
    return None


def fingerprint(profile: dict[str, Any], keys: Iterable[str], now: datetime) -> str:
    """A digest of the named items as they stand now (value and whether current): an answer
    built on them is reused only while this digest is unchanged."""
    by_key = {i["key"]: i for i in profile.get("items", [])}
    parts = []
    for key in sorted(set(keys)):
        item = by_key.get(key)
        if item is None:
            parts.append(f"{key}=-")
        else:
            parts.append(f"{key}={item['value']!r}:{is_current(item, now)}")
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()[:16]


def to_reconfirm(profile: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    """The most important item that was current but has decayed below FRESH_FLOOR, and was not
    asked about since it was last said: the one thing to ask about before using the profile."""
    stale = [
        i
        for i in profile.get("items", [])
        if i["status"] == "current"
        and i["slot"] in RECONFIRM_SLOTS
        and i["name"] not in PAIRS.values()
        and not (i["unsure"] and not i.get("confirmed"))
        and freshness(i, now) < FRESH_FLOOR
        and not _asked_since_said(i)
    ]
    if not stale:
        return None
    return max(stale, key=lambda i: (i["importance"], i["last_said"]))


def _asked_since_said(item: dict[str, Any]) -> bool:
    """Asked about (and left unanswered) since it was last said or confirmed: not asked again
    until the person mentions it anew."""
    asked = item.get("asked_at")
    return bool(asked) and asked >= max(item["last_said"], item.get("checked_at") or "")


def settle(profile: dict[str, Any], key: str, holds: bool | None, now: datetime) -> dict[str, Any]:
    """Record the person's answer about one item (and its pair): still holds (fresh again),
    no longer holds (moved to the past), or no answer (asked, left as it is)."""
    keys = {key}
    for first, second in PAIRS.items():
        if key.endswith(f":{first}"):
            keys.add(key.removesuffix(first) + second)
    items = []
    for item in profile.get("items", []):
        if item["key"] in keys:
            item = dict(item, asked_at=_iso(now))
            if holds is True:  # fresh again from now; asked again once it decays anew
                item.update(checked_at=_iso(now), confirmed=True, asked_at=None)
            elif holds is False:
                history = item["history"] + [
                    {"value": item["value"], "text": item["text"], "at": item["last_said"]}
                ]
                item.update(status="past", history=history[-HISTORY_KEPT:])
        items.append(item)
    return {**profile, "items": items}


def remove(profile: dict[str, Any], key: str) -> tuple[dict[str, Any], bool]:
    """The profile without one item (the person removed it in /profile); False if absent.
    Its key is remembered, so that a question naming it never brings it back."""
    items = [i for i in profile.get("items", []) if i["key"] != key]
    gone = len(items) != len(profile.get("items", []))
    removed = list(profile.get("removed", []))
    if gone and key not in removed:
        removed.append(key)
    return {**profile, "items": items, "removed": removed}, gone


def withdraw(profile: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """Readings the person said were wrong, with no right value yet: kept for staff, not used
    (to be confirmed) until given again; a pair goes with its first reading."""
    wanted = set(keys)
    wanted |= {
        k.removesuffix(a) + b for k in list(wanted) for a, b in PAIRS.items() if k.endswith(a)
    }
    items = [
        dict(i, unsure=True, confirmed=None) if i["key"] in wanted else i
        for i in profile.get("items", [])
    ]
    return {**profile, "items": items}


def display_value(item: dict[str, Any], profile: dict[str, Any] | None = None) -> str:
    """A vital or lab as a person reads it: "150/95" for a blood pressure pair, "7.1"."""
    value = item["value"]
    if item["name"] in PAIRS and profile is not None:
        pair = next(
            (
                i
                for i in profile.get("items", [])
                if i["name"] == PAIRS[item["name"]] and i["status"] == item["status"]
            ),
            None,
        )
        if pair is not None:
            return f"{_num(value)}/{_num(pair['value'])}"
    return _num(value) if isinstance(value, int | float) else str(value or "")


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
