"""A reading corrected in a later message ("아 잘못 말했어요 138/88이에요", "sorry, it was 130/85
not 150/95", "아까 혈압 잘못 말했어요").

The message says a number was wrong but often not which measure: a pair is a blood pressure,
a single number the latest single reading it fits. The new value replaces the latest reading
of that measure (memory keeps the wrong one marked as such); a correction naming a measure
without a new number withdraws its reading until the person gives it again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from graphs.medical import clauses
from graphs.medical.slots import SlotExtraction, SlotExtractor

# a blood pressure as written: "148/94", "148에 94", "148 over 94"
_PAIR = re.compile(r"(?<![\d.])(\d{2,3})\s*(?:/|에|over)\s*(\d{2,3})(?!\d|\.\d)", re.I)
_NUMBER = re.compile(r"(?<![\d./])\d{1,3}(?:\.\d)?(?![\d/])")
_READINGS = ("vitals", "labs")
# After a number: not the new value but a count, an age, a change or the old value ("4살이라니까요",
# "1키로가 아니라 2키로 늘었어요 62에서 64요").
_NOT_A_VALUE_AFTER = re.compile(
    r"\s*(?:키로|킬로|kg|kilos?|lbs?)?\s*(?:이|가|나|은|는)?\s*(?:아니라|아니고|늘었|늘어|줄었|줄어|빠졌|빠져|쪘"
    r"|올랐|떨어졌|에서|살|세(?!요)|개월|달|주|일|번|시|분|잔|알|ml|미리|up\b|down\b|more\b|less\b"
    r"|years?\b|times\b|days?\b)",
    re.I,
)


def correct(
    extractor: SlotExtractor, profile: dict[str, Any], text: str, said: SlotExtraction
) -> tuple[SlotExtraction, list[str]]:
    """The message's items with a correction applied, and the keys of readings withdrawn."""
    if not extractor.corrects(text):
        return said, []
    readings = [i for i in said.items if i.slot in _READINGS]
    if readings:  # the measure was named with its new number ("아까 혈압 138/88이었어요")
        items = tuple(replace(i, corrects=True) if i in readings else i for i in said.items)
        return replace(said, items=items), []
    named = extractor.measures_named(text)
    latest = _latest_readings(profile)
    found = _new_value(text, latest)
    if found is not None:
        measure, numbers = found
        ko = next((m.ko for m in extractor.lexicon.measures if m.key == measure), measure)
        fixed = extractor.extract(f"{ko} {numbers}").items
        fixed = tuple(replace(i, corrects=True) for i in fixed if i.slot in _READINGS)
        return replace(said, items=said.items + fixed), []
    withdrawn = [i["key"] for i in latest if _measure_of(i) in named]
    return said, withdrawn


def _latest_readings(profile: dict[str, Any]) -> list[dict[str, Any]]:
    """The person's current readings, the latest first."""
    items = [
        i for i in profile.get("items", []) if i["slot"] in _READINGS and i["status"] == "current"
    ]
    return sorted(items, key=lambda i: i["last_said"], reverse=True)


def _measure_of(item: dict[str, Any]) -> str:
    return "bp" if item["name"] in ("bp_sys", "bp_dia") else item["name"]


def _new_value(text: str, latest: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(measure, the numbers as written) of the value that replaces the latest reading of its
    shape; a value set aside ("not 150/95", "150/95 말고") or equal to the stored one is the
    wrong one, not the new one."""
    aside = [stretch for clause in clauses.reader().read(text) for stretch in clause.set_aside]
    stored = {(i["name"], float(i["value"])) for i in latest if isinstance(i["value"], int | float)}
    for pair in _PAIR.finditer(text):
        if any(a <= pair.start() < b for a, b in aside):
            continue
        if ("bp_sys", float(pair[1])) in stored and ("bp_dia", float(pair[2])) in stored:
            continue
        if any(_measure_of(i) == "bp" for i in latest):
            return "bp", f"{pair[1]}/{pair[2]}"
    singles = [i for i in latest if _measure_of(i) != "bp"]
    for number in _NUMBER.finditer(text):
        if _PAIR.search(text[max(0, number.start() - 4) : number.end() + 4]):
            continue
        if any(a <= number.start() < b for a, b in aside) or not singles:
            continue
        if _NOT_A_VALUE_AFTER.match(text, number.end()):
            continue
        fits = _nearest(singles, float(number.group()))
        if fits is None or (fits["name"], float(number.group())) in stored:
            continue
        return fits["name"], number.group()
    return None


def _nearest(singles: list[dict[str, Any]], value: float) -> dict[str, Any] | None:
    """The latest reading a corrected number is near (within half as much again either way):
    "39.0" corrects a temperature of 39.2, not a weight of 16."""
    near = [
        i
        for i in singles
        if isinstance(i["value"], int | float)
        and i["value"] > 0
        and 2 / 3 <= value / i["value"] <= 1.5
    ]
    return near[0] if near else None
