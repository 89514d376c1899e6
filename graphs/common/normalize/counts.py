"""Counts and plain numbers: how many ('2명', '두 명', '셋', 'three'), how many days ('60일',
'2주', '2개월' as 60) and a decimal ('0.08%').

A count needs a counter or a numeral word standing alone, so that dates, amounts and ordinary
words that look like numerals ('열 받아요', '사명') are not counted.
"""

from __future__ import annotations

import re

from graphs.common.normalize.numbers import (
    EN_NUMBER_RE,
    NATIVE_ATTR,
    NATIVE_STAND,
    Match,
    any_number,
    single,
)

_COUNTER = r"(?:명|개(?!월)|살|세(?!요|상|금|대|입)|번|회(?!사)|건(?!물|강)|마리|곳|군데|가지|채|사람|식구)"
# What may follow a standalone native numeral ("둘이에요"); "열 받아요" and "하나도" are no counts.
_STAND_END = (
    r"(?=\s*$|\s*[.,!?~]|(?:이요|이에요|예요|요|입니다|뿐|밖에|정도|쯤)(?![가-힣])|"
    r"(?:이라고|라고|이라니까|이라구|이라니깐|이거든|이잖아|이야|이다)|\s(?:있|이에요|입니다|뿐))"
)
_INT_RULES = [
    re.compile(
        r"(?<![\d.,/\-₩$])(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?!\d|[.,:/\-]\d)"
        r"(?!\s?(?:년|개월|월|일(?!곱)|주|달|시|분|초|원|만|억|천|백|십|%|퍼센트)|"
        r"(?:st|nd|rd|th)\b|\s?(?i:years?|months?|weeks?|days?|hours?|won|krw|thousand|million|"
        r"billion|percent|am|pm)\b)"
    ),
    re.compile(rf"(?<![가-힣])(?P<native>{NATIVE_ATTR})\s?(?={_COUNTER})"),
    re.compile(rf"(?<![가-힣])(?P<native>{NATIVE_STAND}){_STAND_END}"),
    # Sino-Korean numbers count only before a counter and with two syllables or more ('삼십 세'):
    # one syllable plus a counter is usually a word ('오명' stigma, '사명' mission, '이 개' this one).
    re.compile(rf"(?<![가-힣])(?P<sino>[일이삼사오육칠팔구십백]{{2,}})\s?(?={_COUNTER})"),
    re.compile(rf"(?i)(?<!no )(?<!any )\b(?P<en>{EN_NUMBER_RE})\b"),
]


def find_ints(text: str) -> list[Match]:
    """Every count in free text ('2명', '두 명', '셋', 'three')."""
    found: list[Match] = []
    for pattern in _INT_RULES:
        for m in pattern.finditer(text):
            word = next(g for g in m.groups() if g is not None)
            number = any_number(word.replace(",", ""))
            if number is not None and number == int(number):
                found.append(Match(int(number), m.start(), m.end()))
    return found


def parse_int(text: str) -> int | None:
    """The single count in an answer ('2명', '두 명', '셋', 'three'), None when none or several."""
    value = single(find_ints(text))
    return value if isinstance(value, int) else None


_DAY_COUNT = re.compile(
    r"(?<![\d.])(?P<n>\d{1,4})\s?(?P<u>일|주|개월|달|(?i:days?|weeks?|months?))(?!\s?(?:전|前|ago))"
)
_DAYS_PER = {"일": 1, "day": 1, "주": 7, "week": 7, "개월": 30, "달": 30, "month": 30}


def find_days(text: str) -> list[Match]:
    """Every number of days in free text ('60일', '2주' as 14, '2개월' as 60, '15 days')."""
    found = []
    for m in _DAY_COUNT.finditer(text):
        unit = m["u"].lower().rstrip("s") if m["u"].isascii() else m["u"]
        found.append(Match(int(m["n"]) * _DAYS_PER[unit], m.start(), m.end()))
    return found


def parse_days(text: str) -> int | None:
    """A number of days ('60일', '2주', '2개월' as 60, '15 days'), or a bare count ('60'); None
    when there is none or several."""
    found = find_days(text)
    if not found:
        return parse_int(text)
    value = single(found)
    return value if isinstance(value, int) else None


# --- decimals -------------------------------------------------------------------------------

_DECIMAL = re.compile(r"(?<![\d.,])(\d{0,3}\.\d{1,4})(?![\d.])\s?(?:%|퍼센트|프로)?")


def parse_decimal(text: str) -> float | None:
    """The single decimal number in an answer ('0.08%', '혈중알코올농도 0.125요', '.09'), None
    when there is none or several."""
    values = {float(m[1]) for m in _DECIMAL.finditer(text)}
    return values.pop() if len(values) == 1 else None
