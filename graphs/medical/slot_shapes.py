"""Readings known by their shape rather than by a cue word: a baby's age in weeks, months or
days ("태어난지 7주", "4개월 딸", "20개월", "6 weeks old", "leo (2.5)", "2 and a half"), and a
thermometer's reading with no word for temperature ("귀체온계로 재니까 38.4 나와요", "39.2까지
올라갔어요").

Pure functions: each returns (start, end, value) spans of the text; the slot extractor
(`graphs/medical/slots.py`) turns them into items. Ages are in years (7 weeks = 0.13), so that
everything that compares ages (an older adult from 65, an infant under 0.25) reads one unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Native Korean numbers of months and weeks ("두 달", "세 주"); digits are read as they are.
_NATIVE = {
    "한": 1,
    "두": 2,
    "세": 3,
    "네": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
}
_EN_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
_YEARS_PER = {"주": 7 / 365.25, "개월": 1 / 12, "달": 1 / 12, "일": 1 / 365.25, "week": 7 / 365.25,
              "wk": 7 / 365.25, "month": 1 / 12, "mo": 1 / 12, "day": 1 / 365.25}  # fmt: skip
_MOST = {"주": 104, "week": 104, "wk": 104, "개월": 36, "달": 36, "month": 36, "mo": 36, "일": 90,
         "day": 90}  # fmt: skip
_KO_N = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NATIVE, key=len, reverse=True)) + r")"
_EN_N = r"(?P<n>\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")"
_KO_UNIT = r"\s*(?P<u>개월|달|주|일)"
# Not an age: a pregnancy's week, a duration of something else ("먹은 지 3개월"), a time ago.
_NOT_BEFORE = re.compile(r"(?:임신|임산부?|임신부|[은는ㄴ한던]\s?지|약|복용)\s*(?:한\s?지\s*)?$")
_NOT_AFTER = re.compile(r"^\s*(?:째|동안|전|후|만에|마다|간|이내|넘게\s?(?:계속|동안))")


def young_ages(text: str, child_words: Iterable[str]) -> list[tuple[int, int, float]]:
    """A young child's age in years, from weeks, months or days, or a decimal of years."""
    child = "|".join(sorted((re.escape(w) for w in child_words), key=len, reverse=True))
    patterns = [
        # "생후 4개월", "태어난지 7주", "낳은 지 50일"
        rf"(?:생후|태어난\s?지|낳은\s?지|출생\s?후)\s*{_KO_N}{_KO_UNIT}",
        # "4개월 딸", "20개월 된 아기", "7주 된 아들" (a child word follows)
        rf"(?<![\d.]){_KO_N}{_KO_UNIT}\s*(?:된|짜리|차|정도\s?된|밖에\s?안\s?된)?\s*(?:{child})",
        # "두달됐는데", "7주됐어요", "50일 된"
        rf"(?<![\d.가-힣]){_KO_N}{_KO_UNIT}\s*(?:됐|되었|된|밖에\s?안\s?됐)",
        rf"(?<![\d.])(?<![a-z]){_EN_N}[\s-]*(?P<u>weeks?|wks?|months?|mos?|days?)[\s-]*old\b",
        rf"\b(?:my|our)\s+(?:{child})\s+is\s+(?:only\s+|just\s+)?{_EN_N}\s+(?P<u>weeks?|months?|days?)\b",
    ]
    found: list[tuple[int, int, float]] = []
    for pattern in patterns:
        for match in re.finditer(pattern, text, re.I):
            if _NOT_BEFORE.search(text[max(0, match.start() - 8) : match.start()]):
                continue
            unit = match["u"].lower().rstrip("s")
            if _NOT_AFTER.match(text, match.end("u")):
                continue
            number = _number(match["n"])
            if not 0 < number <= _MOST[unit]:
                continue
            found.append((match.start(), match.end(), round(number * _YEARS_PER[unit], 2)))
    for match in re.finditer(
        rf"\b(?:{child})(?:\s+[a-z]+)?\s*\(\s*(?P<n>\d{{1,2}}(?:\.\d)?)\s*(?:y|yo|yrs?)?\s*\)"
        r"|(?<![\d.])(?P<d>\d{1,2}\.\d)\s*[- ]?(?:years?|yrs?)[\s-]*old\b"
        r"|\b(?:he'?s|she'?s|he is|she is|is)\s+(?P<h>\d{1,2})\s+and\s+a\s+half\b",
        text,
        re.I,
    ):
        if match["h"]:
            value = int(match["h"]) + 0.5
        else:
            value = float(match["n"] or match["d"])
        found.append((match.start(), match.end(), value))
    return _apart(found)


# A thermometer's reading: one decimal between 34.0 and 42.9, with no unit of another measure.
_TEMPERATURE = re.compile(
    r"(?<![\d./])(?P<t>3[4-9]\.\d|4[0-2]\.\d)(?![\d/])"
    r"(?!\s*(?:kg|kgs|킬로|키로|%|프로|mg|mmol|ml|미리|cm|센티|lbs?|pounds?|kilos?))",
    re.I,
)


def bare_temperatures(text: str, context: re.Pattern[str]) -> list[tuple[int, int, float]]:
    """Readings of a thermometer in a message that speaks of fever or a thermometer."""
    if not context.search(text):
        return []
    return [(m.start(), m.end(), float(m["t"])) for m in _TEMPERATURE.finditer(text)]


def _number(word: str) -> int:
    if word.isdigit():
        return int(word)
    return _NATIVE.get(word, 0) or _EN_NUMBERS.get(word.lower(), 0)


def _apart(found: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The spans that do not overlap an earlier one (the first pattern wins)."""
    kept: list[tuple[int, int, float]] = []
    for span in found:
        if not any(s < span[1] and span[0] < e for s, e, _ in kept):
            kept.append(span)
    return sorted(kept)
