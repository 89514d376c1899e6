"""Offline normalisers, one reader per kind of value in Korean and English text.

numbers.py holds the numerals they share and `Match`; amounts.py reads money, dates.py dates,
durations.py lengths of time, counts.py counts, days and decimals, yesno.py yes/no and a
fact's phrases. The public API is re-exported here: `from graphs.common.normalize import X`.
"""

from graphs.common.normalize.amounts import find_amounts, parse_amount, per_month_at
from graphs.common.normalize.counts import (
    find_days,
    find_ints,
    parse_days,
    parse_decimal,
    parse_int,
)
from graphs.common.normalize.dates import find_dates, is_future, near_ahead, parse_date
from graphs.common.normalize.durations import find_durations, parse_duration_months
from graphs.common.normalize.numbers import Match
from graphs.common.normalize.yesno import parse_yes_no, phrase_polarity

__all__ = [
    "Match",
    "find_amounts",
    "per_month_at",
    "find_dates",
    "find_days",
    "find_durations",
    "find_ints",
    "is_future",
    "near_ahead",
    "parse_amount",
    "parse_date",
    "parse_days",
    "parse_decimal",
    "parse_duration_months",
    "parse_int",
    "parse_yes_no",
    "phrase_polarity",
]
