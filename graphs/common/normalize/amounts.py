"""Amounts of money in Korean and English ('300만원', '1억 2천', '₩50,000', '3.5 million won')
as integer KRW.

A bare number is no amount: only a money unit, 만/억/조 or an English multiplier makes one, so
counts, years and dates in the same message are not read as money.
"""

from __future__ import annotations

import re
from decimal import Decimal

from graphs.common.normalize.numbers import (
    BIG_UNITS,
    SMALL_UNITS,
    Match,
    korean_number,
    single,
    to_int,
)

_K = "일이삼사오육칠팔구"
_ARABIC = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_DIGIT = rf"(?:\d|[{_K}])"
# A group below 10,000: '300', '3,000', '3백', '천오백', '오십', '3천500'.
_GROUP = rf"(?=[\d{_K}천백십])(?:{_DIGIT}?천)?(?:{_DIGIT}?백)?(?:{_DIGIT}?십)?(?:{_ARABIC}|[{_K}])?"
# The same, ending in a unit ('5천'): only such a group may trail a big unit without 원.
_GROUP_UNIT = rf"(?:{_DIGIT}?천)?(?:{_DIGIT}?백)?(?:{_DIGIT}?십)?(?<=[천백십])"
_BIG_PART = rf"(?:{_GROUP}(?:(?<=\d)\s)?)?[만억조]"
_BIG_FORM = (
    rf"{_BIG_PART}(?:\s?{_GROUP}(?:(?<=\d)\s)?[만억조])*"
    rf"(?P<trail>\s?(?:{_GROUP}(?=\s?원)|{_GROUP_UNIT}))?"
)
_ENGLISH_FORM = rf"{_ARABIC}\s?(?P<mult>(?i:thousand|million|billion|mil|mn|bn|k))(?![A-Za-z])"
_AMOUNT = re.compile(
    r"(?<!\d)(?<!\d[.,])(?:(?<![가-힣])|(?![가-힣]))"  # not inside a number or a Korean word
    r"(?P<sign>(?<!\w)[-−]|마이너스\s?)?"
    r"(?P<prefix>(?:[₩￦]|(?i:krw)(?![A-Za-z]))\s?)?"
    rf"(?P<num>{_ENGLISH_FORM}|{_BIG_FORM}|{_GROUP})"
    r"(?P<unit>\s?원(?!룸|래)|\s?(?i:won|krw)(?![A-Za-z']))?"
)
_MULTIPLIERS = {"thousand": 10**3, "k": 10**3, "million": 10**6, "mil": 10**6, "mn": 10**6}
_MULTIPLIERS |= {"billion": 10**9, "bn": 10**9}
# A number with 만/million but no currency that counts something else: '3만 명', '2 million people'.
_COUNTED_AFTER = re.compile(
    r"\s?(?:명|개(?!인)|건(?!물)|살|년|개월|달(?!러)|번(?!호)|회(?!사)|평|마리|가구|시간|km|킬로|"
    r"(?i:people|persons|users|times|years|views|km)\b)"
)
# What may follow a numeral written only in Hangul for it to be an amount in an answer
# ("이천만이요"), so that words like '이만큼' or '오만하다' are not read as 20,000 / 50,000.
_ANSWER_TAIL = re.compile(
    r"\s|$|[.,!?~)]|이요|이에요|이예요|예요|요|입니다|이고|이나|이상|이하|정도|쯤|가량|넘게|밖에|"
    r"까지|이|은|는|을|도"
)


def _amounts(text: str, *, lenient: bool) -> list[Match]:
    """Amounts in `text`; `lenient` also accepts Hangul-only numerals like '이천만' without 원."""
    found: list[Match] = []
    for m in _AMOUNT.finditer(text):
        num, trail = m["num"], m["trail"]
        currency = bool(m["unit"] or m["prefix"])
        korean_only = not any(c.isdigit() for c in num)
        if m["mult"]:
            if m["mult"].lower() == "thousand" and not (currency or lenient):
                continue
        elif not any(c in BIG_UNITS for c in num):
            if not currency or (korean_only and not any(c in SMALL_UNITS for c in num)):
                continue  # a bare '300' is ambiguous; '사원' is an employee, not 4 won
        elif korean_only and not currency:
            if (
                not lenient
                or len(num.replace(" ", "")) < 2
                or not _ANSWER_TAIL.match(text, m.end())
            ):
                continue
        if not currency and _COUNTED_AFTER.match(text, m.end()):
            continue
        value = _amount_value(num, m["mult"], trail if not m["unit"] else None)
        if value is None:
            continue
        if m["sign"]:
            value = -value
        found.append(Match(to_int(value), m.start(), m.end()))
    return found


def _amount_value(num: str, mult: str | None, trail: str | None) -> Decimal | None:
    """Value of the numeral part of an amount match."""
    if mult:
        return Decimal(re.sub(r"[^\d.]", "", num)) * _MULTIPLIERS[mult.lower()]
    if trail:
        head = korean_number(num[: len(num) - len(trail)])
        tail = korean_number(trail)
        if head is None or tail is None:
            return None
        # '2억 5천' means 2억 5천만: a bare thousands group after 억 counts in 만.
        if num[: len(num) - len(trail)].rstrip().endswith("억"):
            return head + tail * BIG_UNITS["만"]
        return head + tail
    return korean_number(num)


def find_amounts(text: str) -> list[Match]:
    """Every amount of money in free text that carries a money unit (원/만/억/천만/won/KRW/million ...)."""
    return _amounts(text, lenient=False)


def parse_amount(text: str) -> int | None:
    """The single amount of money (integer KRW) in an answer, or None when there is none."""
    value = single(_amounts(text, lenient=True))
    return value if isinstance(value, int) else None
