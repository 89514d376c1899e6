"""Numerals shared by every reader: digits, Sino-Korean and native Korean numerals, English
number words, and the `Match` every reader returns.

Amounts, dates, counts and durations all read numbers written these ways ('3백만', '두 달',
'three'), so the values and the regex fragments for them live here once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal


@dataclass(frozen=True)
class Match:
    """A value found in a text: int for amounts/ints/durations, str for dates.

    `alternatives`: other readings of the same words on that day ("last Saturday" said on a
    Sunday: yesterday, or the Saturday of last week), for the person to choose from.
    `yearless`: a date written without a year ("3월 12일", "in July"), nor carried one from
    its sentence: the year is the reader's choice, not the person's word."""

    value: object
    start: int
    end: int
    alternatives: tuple[object, ...] = ()
    # a date written without its year, the year chosen by the reader (not part of its value)
    yearless: bool = field(default=False, compare=False)
    # a weekday named without its week ("on Monday"): read from the message's week
    weekday_alone: bool = field(default=False, compare=False)


_SINO_DIGITS = {"영": 0, "공": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "륙": 6}
_SINO_DIGITS |= {"칠": 7, "팔": 8, "구": 9}
SMALL_UNITS = {"십": 10, "백": 100, "천": 1000}
BIG_UNITS = {"만": 10**4, "억": 10**8, "조": 10**12}
_NUMERAL_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|\S")

_NATIVE_TENS = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50}
_NATIVE_TENS |= {"예순": 60, "일흔": 70, "여든": 80, "아흔": 90}
_NATIVE_ONES = {"하나": 1, "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "석": 3, "넷": 4, "네": 4}
_NATIVE_ONES |= {"넉": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_TENS_RE = "열|스물|스무|서른|마흔|쉰|예순|일흔|여든|아흔"
# Attributive forms stand before a counter ("두 명"); standalone forms are whole words ("둘").
NATIVE_ATTR = f"(?:(?:{_TENS_RE})(?:한|두|세|네|다섯|여섯|일곱|여덟|아홉)?|한|두|세|네|석|넉|다섯|여섯|일곱|여덟|아홉)"
NATIVE_STAND = f"(?:(?:{_TENS_RE})(?:하나|둘|셋|넷|다섯|여섯|일곱|여덟|아홉)?|하나|둘|셋|넷|다섯|여섯|일곱|여덟|아홉)"
SINO_RUN = "[일이삼사오육칠팔구십백]+"

_EN_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
EN_NUMBER_RE = "|".join(_EN_NUMBERS)
EN_COUNT = rf"\d+|an?|{EN_NUMBER_RE}"


def korean_number(text: str) -> Decimal | None:
    """Value of a numeral mixing Arabic digits with Sino-Korean digits and units ('3백만', '천오백')."""
    total = Decimal(0)
    section = Decimal(0)  # the part below the next big unit (만/억/조)
    section_seen = False
    digit: Decimal | None = None
    last_big: int | None = None
    for token in _NUMERAL_TOKEN.findall(text):
        if token[0].isdigit() or token in _SINO_DIGITS:
            if digit is not None:
                return None  # two numbers in a row ("삼사십") is a range, not a number
            digit = (
                Decimal(token.replace(",", ""))
                if token[0].isdigit()
                else Decimal(_SINO_DIGITS[token])
            )
        elif token in SMALL_UNITS:
            section += (Decimal(1) if digit is None else digit) * SMALL_UNITS[token]
            section_seen, digit = True, None
        elif token in BIG_UNITS:
            unit = BIG_UNITS[token]
            if last_big is not None and unit >= last_big:
                return None
            if digit is not None:
                section += digit
            total += (section if section_seen or digit is not None else Decimal(1)) * unit
            section, section_seen, digit, last_big = Decimal(0), False, None, unit
        else:
            return None
    return total + section + (digit or 0)


def _native_number(word: str) -> int | None:
    """Value of a native Korean numeral word ('둘', '두', '열두', '스물하나')."""
    tens = next((t for t in _NATIVE_TENS if word.startswith(t)), "")
    ones = word[len(tens) :]
    if (not tens and not ones) or (ones and ones not in _NATIVE_ONES):
        return None
    return _NATIVE_TENS.get(tens, 0) + _NATIVE_ONES.get(ones, 0)


def any_number(word: str) -> Decimal | None:
    """Value of digits, a Sino-Korean numeral, a native Korean numeral or an English number word."""
    word = word.strip().lower()
    if word in ("a", "an"):
        return Decimal(1)
    if word in _EN_NUMBERS:
        return Decimal(_EN_NUMBERS[word])
    native = _native_number(word)
    return Decimal(native) if native is not None else korean_number(word)


def to_int(value: Decimal) -> int:
    """Round half up to an int."""
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def single(matches: list[Match]) -> object | None:
    """The value when all matches agree, None when there are none or they disagree."""
    values = {m.value for m in matches}
    return values.pop() if len(values) == 1 else None
