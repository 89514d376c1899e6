"""Lengths of time in whole months ('3년 6개월' -> 42, '1년 반' -> 18, 'two years', 'six months').

A point in time is no length: '2년 전' is a date, '2024년' a year and '85년생' a birth year, and
those are left to the date reader.
"""

from __future__ import annotations

import re
from decimal import Decimal

from graphs.common.normalize.numbers import (
    EN_COUNT,
    NATIVE_ATTR,
    SINO_RUN,
    Match,
    any_number,
    single,
    to_int,
)

# 달 takes native numbers and 개월 Sino-Korean ones: '이 달' is 'this month', not two months.
_MONTHS_KO = rf"(?:\d+(?:\.\d+)?\s?(?:개월|달)|{SINO_RUN}\s?개월|{NATIVE_ATTR}\s?달)"
_DURATION_KO = re.compile(
    rf"(?<![가-힣\d.])(?:(?P<y>(?:\d+(?:\.\d+)?|{SINO_RUN})\s?년)(?P<yh>\s?반)?"
    rf"(?:\s?(?:하고\s?)?(?P<m>{_MONTHS_KO})(?P<mh>\s?반)?)?"
    rf"|(?P<m2>{_MONTHS_KO})(?P<mh2>\s?반)?|(?P<half>반\s?년))"
    # '2년 전' is a date, '24년 6월' a month, '2024년' a year, '85년생' a birth year, '5년차부터'
    # (from the fifth year on) a point in the length.
    r"(?!\s?(?:전|前|생|도|\d{1,2}\s?월|[차째]\s?(?:부터|때|무렵|쯤)))"
)
_DURATION_EN = re.compile(
    rf"(?i)\b(?:(?P<y>{EN_COUNT}|\d+\.\d+)(?P<yh>\s+and\s+a\s+half)?\s*-?\s*(?:years?|yrs?)"
    r"(?P<yh2>\s+and\s+a\s+half)?"
    rf"(?:,?\s*(?:and\s+)?(?P<m>{EN_COUNT})\s*(?:months?|mos?)\b)?"
    rf"|(?P<m2>{EN_COUNT}|\d+\.\d+)\s*-?\s*(?:months?|mos?)\b|(?P<half>half\s+a\s+year))"
    r"(?!\s+ago)"
)


def find_durations(text: str) -> list[Match]:
    """Every length of time in free text, in whole months."""
    found: list[Match] = []
    for pattern in (_DURATION_KO, _DURATION_EN):
        for m in pattern.finditer(text):
            months = _duration_value(m)
            if months is not None:
                found.append(Match(to_int(months), m.start(), m.end()))
    return found


def parse_duration_months(text: str) -> int | None:
    """A length of time in whole months ('3년 6개월' -> 42, '1년 반' -> 18), None when none or several."""
    value = single(find_durations(text))
    return value if isinstance(value, int) else None


_UNIT_WORD = re.compile(r"\s?(?:개월|달|년)$")


def _duration_value(m: re.Match[str]) -> Decimal | None:
    """Months in one duration match; None for a calendar year such as '2024년'."""
    if m["half"]:
        return Decimal(6)
    years = any_number(_UNIT_WORD.sub("", m["y"])) if m["y"] else Decimal(0)
    month_text = m["m"] or m["m2"]
    months = any_number(_UNIT_WORD.sub("", month_text)) if month_text else Decimal(0)
    if years is None or months is None or years >= 100:
        return None
    half_year = Decimal(6) if m["yh"] or (m.re is _DURATION_EN and m["yh2"]) else Decimal(0)
    half_month = Decimal("0.5") if m.re is _DURATION_KO and (m["mh"] or m["mh2"]) else Decimal(0)
    return years * 12 + half_year + months + half_month
