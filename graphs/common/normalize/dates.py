"""Dates in Korean and English: written ('2024년 6월 1일', '6/1', 'June 1st'), relative ('어제',
'지난달', 'last year', '3일 전', 'two weeks ago') and weekdays ('지난주 금요일', 'last Saturday'),
as 'yyyy-mm-dd', 'yyyy-mm' or 'yyyy' relative to the message time.

A date without a year is placed in the past by default, because the facts an intake asks for
mostly lie behind the person; fields that may lie ahead say so with `allow_future`.

Weekdays follow one rule (README, "Relative dates"), on the chat's calendar, weeks Monday to
Sunday:
- a named week ("지난주 금요일", "저번 주 토요일", "이번 주 월요일", "이번 월요일", "this Monday",
  "다음 주 수요일") is that weekday of that week;
- "last Friday", "지난 금요일", "저번 금요일" is the nearest Friday before today. When that
  Friday is in this week (said on a Saturday or a Sunday, "last Monday" on a Wednesday), the
  words may mean it or the Friday a week before: both are readings, and the person chooses.
  "next Friday", "다음 금요일" likewise ahead;
- a bare weekday ("금요일에", "on Friday") is the nearest one before today, or today as the
  other reading when today is that weekday (on or after today for a date that may lie ahead);
- a weekend ("지난 주말", "저번 주말", "last weekend", "이번 주말") is the Saturday or the Sunday
  of that week: two readings;
- for a date that cannot lie ahead, a reading after today is dropped while another remains.
A match's first value is the nearer reading, the others are its `alternatives`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from graphs.common.normalize.numbers import (
    EN_COUNT,
    NATIVE_ATTR,
    SINO_RUN,
    Match,
    any_number,
    single,
)
from graphs.common.text import sentence_spans

_NOT_A_DATE = ""  # a rule's verdict for a match that is no date at all (it claims no span)
_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sept": 9, "sep": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH_RE = rf"(?P<mon>{'|'.join(sorted(_MONTHS, key=len, reverse=True))})(?![a-z])\.?"
_ORDINAL = r"(?:st|nd|rd|th)?"
_KO_DAYS_AGO = {"하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7}
_KO_DAYS_AGO |= {"열흘": 10, "보름": 15, "일주일": 7}
_TWO_DIGIT_YEAR_LEAD = 10  # '35.1.1' is 2035 only while that is at most this many years ahead


def _shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    """The (year, month) `delta` months away."""
    index = year * 12 + month - 1 + delta
    return index // 12, index % 12 + 1


def _iso(year: int | None, month: int | None = None, day: int | None = None) -> str | None:
    """'yyyy-mm-dd', 'yyyy-mm' or 'yyyy', or None for an impossible date."""
    if year is None or not 1900 <= year <= 2100:
        return None
    if day is not None and month is not None:
        try:
            return date(year, month, day).isoformat()
        except ValueError:
            return None
    if month is not None:
        return f"{year:04d}-{month:02d}" if 1 <= month <= 12 else None
    return f"{year:04d}"


def _year(text: str, now: datetime) -> int:
    """A written year; a two-digit year is 20yy unless that is too far ahead, then 19yy."""
    year = int(text)
    if len(text) == 2:
        year += 2000 if 2000 + year <= now.year + _TWO_DIGIT_YEAR_LEAD else 1900
    return year


def _opt_int(text: str | None) -> int | None:
    """An optional captured number."""
    return int(text) if text else None


def _ymd(m: re.Match[str], now: datetime) -> str | None:
    """'2024년 6월 1일', '24년 6월', '2024년' (a bare two-digit '10년' is a duration)."""
    if len(m["y"]) == 2 and not m["m"]:
        return _NOT_A_DATE
    return _iso(_year(m["y"], now), _opt_int(m["m"]), _opt_int(m["d"]))


@dataclass(frozen=True)
class _NoYear:
    """A month, or a month and day, written without a year: `find_dates` chooses the year."""

    month: int
    day: int | None = None


_LEAP_CYCLE = 8  # years back within which a 29 February always recurs (1900 and 2100 skip one)


def _resolve_no_year(value: _NoYear, now: datetime, *, allow_future: bool) -> str | None:
    """The year of a date written without one.

    By default the most recent such day (or month) on or before `now`'s day (month): facts
    are mostly past events, so '6/1' said in March is last June. With `allow_future` (a lease
    end date, a repayment date) it is `now`'s year, ahead or not.
    """
    if allow_future:
        return _iso(now.year, value.month, value.day)
    if value.day is None:
        return _iso(now.year if value.month <= now.month else now.year - 1, value.month)
    today = now.date().isoformat()
    for year in range(now.year, now.year - _LEAP_CYCLE - 1, -1):
        iso = _iso(year, value.month, value.day)
        if iso is not None and iso <= today:
            return iso
    return None


# A day said as a time limit ("12월 5일까지 의견 제출", "1월 4일 전에", "due by 10 December",
# "deadline: 3 January") or as the start of a period to one ("12월 7일부터 내년 2월 4일까지"):
# without its year it is the next such day when that is near, unless the limit is told as over
# ("6월까지 일했어요").
_LIMIT_AFTER = re.compile(
    r"\s?(?:부터[^.!?\n,]{1,20}?)?(?:까지|전까지|전에|이내|안에|마감)(?P<rest>[^.!?\n,]{0,12})"
)
_LIMIT_PAST = re.compile(r"^\s?\S*(?:었|았|했|였|켰|췄|웠|쳤|셨|갔|왔|냈|줬)")
_LIMIT_BEFORE = re.compile(
    r"(?:\bdue|\bdeadline|\bby|\bno later than|\bexpires?|\buntil|\btill|기한은?|마감은?)"
    r"\s*(?:is\s*|on\s*|:\s*)?(?:the\s*)?$",
    re.I,
)
_LIMIT_AHEAD_DAYS = 183


def _limit_ahead(value: _NoYear, text: str, start: int, end: int, now: datetime) -> str | None:
    """The day a yearless time limit at `text[start:end]` falls on when it lies ahead (see
    `_LIMIT_AFTER`), else None."""
    after = _LIMIT_AFTER.match(text, end)
    limit = (after is not None and not _LIMIT_PAST.match(after["rest"])) or bool(
        _LIMIT_BEFORE.search(text[max(0, start - 20) : start])
    )
    if not limit:
        return None
    today = now.date()
    for year in (now.year, now.year + 1):
        day = _iso(year, value.month, value.day or _last_day(year, value.month))
        if day is not None and day >= today.isoformat():
            ahead = date.fromisoformat(day) - today
            if ahead.days <= _LIMIT_AHEAD_DAYS:
                return _iso(year, value.month, value.day)
            return None
    return None


# A day said without its year in words told not as past ("청문 날짜는 12월 10일입니다", "they
# say come meeting december 8", said in November): the coming one when it is this near, not the
# one almost a year back (legal_set14 R4, B1: a hearing and a labour-office meeting dated last year).
_NEAR_AHEAD_DAYS = 62


def near_ahead(m: Match, now: datetime) -> Match:
    """`m` (a date `find_dates` placed in the past for want of a year) a year later when that
    falls within the next two months; `m` itself otherwise."""
    value = str(m.value)
    if not m.yearless or len(value) < 7:
        return m
    later = _iso(
        int(value[:4]) + 1, int(value[5:7]), int(value[8:10]) if len(value) == 10 else None
    )
    today = now.date()
    if later is None:
        return m
    first = date.fromisoformat(later if len(later) == 10 else f"{later}-01")
    if first <= today and len(later) == 10:
        return m
    if len(later) == 7 and later < today.isoformat()[:7]:
        return m
    if (first - today).days > _NEAR_AHEAD_DAYS:
        return m
    return Match(later, m.start, m.end, (), yearless=True)


def _last_day(year: int, month: int) -> int:
    following = date(year + month // 12, month % 12 + 1, 1)
    return (following - timedelta(days=1)).day


def _month_day(m: re.Match[str], now: datetime) -> _NoYear:
    """'6월 1일', '3월', '6/1', '6.1', '6. 1.': a month (and day) without a year."""
    return _NoYear(int(m["m"]), _opt_int(m["d"]))


def _numeric_full(m: re.Match[str], now: datetime) -> str | None:
    """'2024.6.1', '2024. 6. 1.', '2024-06-01', '24.6.1'."""
    return _iso(_year(m["y"], now), int(m["m"]), int(m["d"]))


def _numeric_month(m: re.Match[str], now: datetime) -> str | None:
    """'2024.6', '2024-06'."""
    return _iso(int(m["y"]), int(m["m"]))


def _us_numeric(m: re.Match[str], now: datetime) -> str | None:
    """'06/01/2024' (month first), or '30/06/2024' where the first number can be no month."""
    first, second = int(m["m"]), int(m["d"])
    if first > 12 >= second:  # the day first, as most of the world writes it
        first, second = second, first
    return _iso(int(m["y"]), first, second)


def _slashed_day(m: re.Match[str], now: datetime) -> _NoYear:
    """'6/1' (month first), or '30/06' where the first number can be no month (legal_set17
    S5's invoices "dated 30/06, 31/07, 31/08" were dropped)."""
    first, second = int(m["m"]), int(m["d"])
    if first > 12 >= second:
        return _NoYear(second, first)
    return _NoYear(first, second)


def _days_from(now: datetime, days: int) -> str:
    """The ISO date `days` days from `now`'s date."""
    return (now.date() + timedelta(days=days)).isoformat()


def _relative_day(m: re.Match[str], now: datetime) -> str | None:
    """어제, 그저께, 오늘, 내일, 지난주, yesterday, last week ..."""
    word = re.sub(r"\s+", " ", m["word"].lower())
    offsets = {"그저께": -2, "그제": -2, "어제": -1, "어저께": -1, "오늘": 0, "내일": 1, "모레": 2}
    offsets |= {"day before yesterday": -2, "yesterday": -1, "today": 0, "tonight": 0}
    offsets |= {"tomorrow": 1}
    if word in offsets:
        return _days_from(now, offsets[word])
    # 지난주 / last week: the same weekday a week ago; 지지난주 two weeks ago.
    return _days_from(now, -14 if word.startswith("지지난") else -7)


def _relative_month(m: re.Match[str], now: datetime) -> str | None:
    """지난달, 이번 달, 다음 달 (optionally with a day), last/this/next month."""
    word = (m["word"] or m["en"]).lower()
    delta = -1 if word[:2] in ("지난", "저번", "la") else 1 if word[:2] in ("다음", "ne") else 0
    if word.startswith("지지난"):
        delta = -2
    year, month = _shift_month(now.year, now.month, delta)
    return _iso(year, month, _opt_int(m["d"]))


def _relative_year(m: re.Match[str], now: datetime) -> str | None:
    """작년, 재작년, 올해, 내년 (optionally with month and day), last/this/next year."""
    word = re.sub(r"\s+", "", (m["word"] or m["en"]).lower()).replace("yr", "year")
    offsets = {"재작년": -2, "지지난해": -2, "작년": -1, "지난해": -1, "올해": 0, "금년": 0}
    offsets |= {"내년": 1, "lastyear": -1, "thisyear": 0, "nextyear": 1}
    return _iso(now.year + offsets[word], _opt_int(m["m"]), _opt_int(m["d"]))


def _ago(m: re.Match[str], now: datetime) -> str | None:
    """'3일 전', '두 달 전', '2년 전', 'a month ago': days/weeks give a date, months yyyy-mm, years yyyy."""
    amount = any_number(m["n"])
    if amount is None or amount != int(amount):
        return _NOT_A_DATE
    count, unit = int(amount), m["u"].strip().lower().replace("yr", "year")
    if unit in ("일", "day"):
        return _days_from(now, -count)
    if unit in ("주", "주일", "week"):
        return _days_from(now, -7 * count)
    if unit in ("개월", "달", "month"):
        return _iso(*_shift_month(now.year, now.month, -count))
    return _iso(now.year - count)


def _ko_days_ago(m: re.Match[str], now: datetime) -> str | None:
    """'이틀 전', '보름 전', '일주일 전'; '반년 전' gives the month six months back."""
    if m["word"] == "반년":
        return _iso(*_shift_month(now.year, now.month, -6))
    return _days_from(now, -_KO_DAYS_AGO[m["word"]])


def _english_mdy(m: re.Match[str], now: datetime) -> str | _NoYear | None:
    """'June 1, 2024', '1 June 2024', '1st of June', 'June 1' (no year)."""
    month, day = _MONTHS[m["mon"].lower()], int(m["d"])
    return _iso(int(m["y"]), month, day) if m["y"] else _NoYear(month, day)


def _english_my(m: re.Match[str], now: datetime) -> str | None:
    """'March 2024'."""
    return _iso(int(m["y"]), _MONTHS[m["mon"].lower()])


def _english_month(m: re.Match[str], now: datetime) -> _NoYear:
    """'in June', 'since March', 'early May': a month without a year."""
    return _NoYear(_MONTHS[m["mon"].lower()])


@dataclass(frozen=True)
class _Weekday:
    """A weekday phrase, read by the rule in the module's docstring (weeks run Monday to Sunday).

    `week`: in a named week, weeks from this one ("지난주 금요일": -1). Else `step` says which
    nearest one: -1 the nearest before today ("last Friday", "지난 금요일"), +1 the nearest after
    ("next Friday"), 0 a bare weekday (on or before today; on or after for a field that may lie
    ahead)."""

    weekday: int  # Monday 0 ... Sunday 6
    week: int | None = None
    step: int = 0


@dataclass(frozen=True)
class _Weekend:
    """A weekend (`week` weeks from this one): its Saturday or its Sunday, the person says which."""

    week: int


_KO_WEEKDAYS = "월화수목금토일"
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEK_OFFSETS = {"지지난": -2, "지난": -1, "저번": -1, "이번": 0, "요번": 0, "다음": 1}
_SATURDAY = 5


def _weekday_ko(m: re.Match[str], now: datetime) -> _Weekday:
    """'지난주 금요일' (Friday of last week), '이번 (주) 월요일' (of this week), '지난 금요일'
    (the nearest Friday before today), '다음 금요일', '금요일'."""
    weekday = _KO_WEEKDAYS.index(m["wd"])
    rel = m["rel"]
    if rel and (m["wk"] or rel in ("이번", "요번")):
        return _Weekday(weekday, week=_WEEK_OFFSETS[rel])
    if rel:
        return _Weekday(weekday, step=1 if rel == "다음" else -1)
    return _Weekday(weekday)


def _weekday_en(m: re.Match[str], now: datetime) -> _Weekday:
    """'last Saturday' (the nearest before today), 'this Monday' (of this week), 'on Friday'."""
    weekday = _EN_WEEKDAYS.index(m["wd"].lower())
    rel = (m["rel"] or "").lower()
    if rel == "this":
        return _Weekday(weekday, week=0)
    if rel in ("last", "past"):
        return _Weekday(weekday, step=-1)
    return _Weekday(weekday, step=1 if rel == "next" else 0)


def _weekend(m: re.Match[str], now: datetime) -> _Weekend:
    """'지난 주말', '저번 주말', 'last weekend' (of last week), '이번 주말', 'this weekend'."""
    rel = (m["rel"] or m["en"] or "").lower()
    return _Weekend({"last": -1, "this": 0, "next": 1}.get(rel, _WEEK_OFFSETS.get(rel, 0)))


def _monday(today: date, weeks: int = 0) -> date:
    """The Monday of the week `weeks` weeks from `today`'s."""
    return today - timedelta(days=today.weekday()) + timedelta(weeks=weeks)


def _weekday_readings(
    value: _Weekday | _Weekend, now: datetime, *, allow_future: bool
) -> list[date]:
    """Every date a weekday phrase can mean said at `now`, the nearer first: one, or two where
    the words fit two days (the person is asked which)."""
    today = now.date()
    if isinstance(value, _Weekend):
        saturday = _monday(today, value.week) + timedelta(days=_SATURDAY)
        return [saturday, saturday + timedelta(days=1)]
    if value.week is not None:
        return [_monday(today, value.week) + timedelta(days=value.weekday)]
    if value.step == 0:
        if allow_future:
            return [today + timedelta(days=(value.weekday - today.weekday()) % 7)]
        back = (today.weekday() - value.weekday) % 7
        if back == 0:  # today is named "오늘" / "today": its weekday is most often last week's
            return [today - timedelta(weeks=1), today]
        return [today - timedelta(days=back)]
    if value.step < 0:  # the nearest before today; in this week, it may mean last week's too
        nearest = today - timedelta(days=(today.weekday() - value.weekday - 1) % 7 + 1)
    else:  # the nearest after today; in this week, it may mean next week's too
        nearest = today + timedelta(days=(value.weekday - today.weekday() - 1) % 7 + 1)
    if _monday(nearest) == _monday(today):
        return [nearest, nearest + timedelta(weeks=value.step)]
    return [nearest]


def _resolve_weekday(
    value: _Weekday | _Weekend, now: datetime, *, allow_future: bool
) -> tuple[str, tuple[str, ...]]:
    """A weekday phrase's reading and its alternatives. For a date that cannot lie ahead, a
    reading after today is dropped while another remains."""
    readings = _weekday_readings(value, now, allow_future=allow_future)
    if not allow_future:
        past = [d for d in readings if d <= now.date()]
        readings = past or readings[:1]
    first, *others = (d.isoformat() for d in readings)
    return first, tuple(others)


def _english_month_rel_year(m: re.Match[str], now: datetime) -> str | None:
    """'in May this year', 'May last year', 'March of next year'."""
    offset = {"last": -1, "this": 0, "next": 1}[m["rel"].lower()]
    return _iso(now.year + offset, _MONTHS[m["mon"].lower()])


_DAY_KO = r"(?:\s?(?P<d>\d{1,2})\s?일)?"
# "올해 80이신데", "작년에 17살이었고": a year told with an age is no date of its own
_AGE_NOT = (
    r"(?!\s?(?:에\s?)?\d{1,3}\s?(?:살|세|이신|이세|이셨|이었|이에요|이고|인데|이야|이시|이던))"
)
_MONTH_DAY_KO = rf"(?:\s?(?P<m>\d{{1,2}})\s?월{_DAY_KO})?"
_FULL_MONTHS = "|".join(list(_MONTHS)[:12])  # 'in may', not 'in mar'
# A decimal number is no month.day: '1.5억', '2.5년', '4.5점', '1.5 million', 'v1.2'.
_NOT_A_DECIMAL = (
    r"(?![\d,A-Za-z])(?!\s?(?:[억만천백십원배%일년개월달주시분초명개점평살세층호번회차등위대도부푼할리]|"
    r"퍼센트|프로|리터|킬로|키로|미터|인치))"
    r"(?!\s(?i:million|thousand|billion|mil|mn|bn|percent|times|points?|years?|months?|weeks?|"
    r"days?|hours?|km|kg)\b)"
)
_DateRule = tuple[
    re.Pattern[str],
    Callable[[re.Match[str], datetime], str | _NoYear | _Weekday | _Weekend | None],
]
_EN_MONTH_LEAD = (
    r"(?:(?:in|since|during|around|from|until|till|early|mid|late|"
    r"(?:the\s+)?(?:end|beginning|start|middle)\s+of)[\s-]+)?"
)
_DATE_RULES: list[_DateRule] = [
    # not a model year ("2022년식 쏘나타": legal_set16 S6 had the car as an event ahead)
    (re.compile(rf"(?<![\d.])(?P<y>\d{{4}}|\d{{2}})\s?년(?!식)도?{_MONTH_DAY_KO}"), _ymd),
    (re.compile(rf"(?<![\d.])(?P<m>\d{{1,2}})\s?월{_DAY_KO}"), _month_day),
    (
        re.compile(
            r"(?<![\d.])(?<![A-Za-z]-)(?P<y>\d{4}|\d{2})\s?(?P<sep>[.\-/])\s?(?P<m>\d{1,2})\s?(?P=sep)\s?"
            r"(?P<d>\d{1,2})(?!\d)\.?"
        ),
        _numeric_full,
    ),
    # not a code's number ("INV-2026-07": legal_set17 S5 had three invoices as months)
    (
        re.compile(r"(?<![\d.])(?<![A-Za-z]-)(?P<y>\d{4})\s?[.\-/]\s?(?P<m>\d{1,2})(?![\d,])"),
        _numeric_month,
    ),
    (re.compile(r"(?<![\d/])(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})(?!\d)"), _us_numeric),
    # not a share ("1/3씩 나누기로": legal_set16 R1 had 2026-01-03)
    (re.compile(r"(?<![\d/.])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/]|\s?씩)"), _slashed_day),
    # '6.1', '6.1.' and '6. 1.' (a space only with the closing dot), but no decimal number.
    (
        re.compile(
            r"(?<![\w.,])(?P<m>1[0-2]|0?[1-9])\.(?P<d>3[01]|[12]\d|0?[1-9])(?:\.(?!\d))?"
            + _NOT_A_DECIMAL
        ),
        _month_day,
    ),
    (
        re.compile(r"(?<![\w.,])(?P<m>1[0-2]|0?[1-9])\.\s(?P<d>3[01]|[12]\d|0?[1-9])\.(?!\d)"),
        _month_day,
    ),
    (
        re.compile(
            r"(?<![가-힣])(?P<word>그저께|그제(?!서야|야)|어저께|어제|오늘(?!날)|내일(?!모레)|모레|"
            r"(?:지지난|지난|저번)\s?주(?!인|말|일|\s?[월화수목금토일]요일)|"
            r"(?i:(?:the\s+)?day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|last\s+week)\b)"
        ),
        _relative_day,
    ),
    (
        re.compile(
            rf"(?<![가-힣])(?P<word>(?:지지난|지난|저번|이번|다음)\s?달){_DAY_KO}"
            r"|\b(?P<en>(?i:(?:last|this|next)\s+month))\b"
        ),
        _relative_month,
    ),
    (
        re.compile(
            rf"(?<![가-힣])(?P<word>재작년|지지난\s?해|작년|지난\s?해|올해|금년|내년){_AGE_NOT}"
            rf"{_MONTH_DAY_KO}"
            r"|\b(?P<en>(?i:(?:last|this|next)\s+(?:year|yr)))\b"
        ),
        _relative_year,
    ),
    (
        re.compile(
            r"(?<![가-힣])(?P<rel>지지난|지난|저번|이번|요번|다음)\s?(?:주\s?)?주말"
            r"|(?i:\b(?P<en>last|this|next)\s+weekend\b)"
        ),
        _weekend,
    ),
    (
        re.compile(
            r"(?<![가-힣])(?:(?P<rel>지지난|지난|저번|이번|요번|다음)\s?(?P<wk>주)?\s?)?"
            r"(?P<wd>[월화수목금토일])요일"
        ),
        _weekday_ko,
    ),
    (
        re.compile(
            r"(?i)\b(?:(?P<rel>last|this|next|past)\s+|on\s+)?"
            rf"(?P<wd>{'|'.join(_EN_WEEKDAYS)})\b"
        ),
        _weekday_en,
    ),
    (
        re.compile(
            rf"(?i)\b{_EN_MONTH_LEAD}(?P<mon>{_FULL_MONTHS})\s+(?:of\s+)?"
            r"(?P<rel>last|this|next)\s+(?:year|yr)\b"
        ),
        _english_month_rel_year,
    ),
    (re.compile(r"(?<![\d.])(?P<n>\d+)\s?(?P<u>일|주일|주|개월|달|년)\s?(?:전|前)"), _ago),
    # Sino-Korean counts take 년/개월/주일, or 일 written solid ('삼일 전'; '이 일' is 'this work').
    (re.compile(rf"(?<![가-힣])(?P<n>{SINO_RUN})(?P<u>\s?(?:주일|개월|년)|일)\s?전"), _ago),
    (re.compile(rf"(?<![가-힣])(?P<n>{NATIVE_ATTR})\s?(?P<u>달|해)\s?전"), _ago),
    (
        re.compile(
            r"(?<![가-힣])(?P<word>하루|이틀|사흘|나흘|닷새|엿새|이레|열흘|보름|일주일|반년)\s?전"
        ),
        _ko_days_ago,
    ),
    (
        re.compile(rf"(?i)\b(?P<n>{EN_COUNT})\s+(?P<u>day|week|month|year|yr)s?\s+ago\b"),
        _ago,
    ),
    (
        re.compile(
            rf"(?i)\b{_MONTH_RE}\s+(?P<d>\d{{1,2}}){_ORDINAL}(?![\d:]|,\d{{3}})"
            r"(?:,?\s+(?P<y>\d{4})\b)?"
        ),
        _english_mdy,
    ),
    (
        re.compile(
            rf"(?i)\b(?P<d>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?{_MONTH_RE}(?:,?\s+(?P<y>\d{{4}})\b)?"
        ),
        _english_mdy,
    ),
    (re.compile(rf"(?i)\b{_MONTH_RE},?\s+(?P<y>\d{{4}})\b"), _english_my),
    # Year first, as Korean writers put it in English: "2024 march 4", "2024 March".
    (
        re.compile(
            rf"(?i)(?<![\d.])(?P<y>\d{{4}})\s+{_MONTH_RE}\s+(?P<d>\d{{1,2}}){_ORDINAL}(?![\d:])"
        ),
        _english_mdy,
    ),
    (re.compile(rf"(?i)(?<![\d.])(?P<y>\d{{4}})\s+{_MONTH_RE}(?!\s+\d)"), _english_my),
    (
        re.compile(
            r"(?i)\b(?:in|since|during|around|from|until|till|early|mid|late|"
            r"(?:the\s+)?(?:end|beginning|start|middle)\s+of)[\s-]+"
            rf"(?P<mon>{_FULL_MONTHS})\b(?![\s,]*\d)"
        ),
        _english_month,
    ),
    # a month's name opening what is said ("september, after summer vacation" to "when did it
    # start?": legal_set19 B4 was kept as told); not "may" nor "march", words of their own
    (
        re.compile(
            r"(?i)(?:^\s*|(?<=[.!?]\s))(?!may\b|march\b)"
            rf"(?P<mon>{_FULL_MONTHS})\b(?![\s,]*\d)"
        ),
        _english_month,
    ),
]


def find_dates(text: str, *, now: datetime, allow_future: bool = False) -> list[Match]:
    """Every date in free text relative to `now`, as 'yyyy-mm-dd', 'yyyy-mm' or 'yyyy', in order.

    A date without a year ('6/1', '6월', 'in June') is the most recent one on or before `now`;
    with `allow_future` (for facts that may lie ahead) it is in `now`'s year. A written year is
    kept as it is, in the future or not, and carries to the dates after it in its sentence that
    follow it in that year ("2,000,000 on 2025 June 3, 1,500,000 on July 15": 2025-07-15;
    "작년 3월에 빌려줬고 6월에 조금 갚았어요": last year's June).
    """
    candidates: list[tuple[int, int, str | None, tuple[str, ...], _NoYear | None]] = []
    weekdays: set[int] = set()  # starts of the weekdays named
    bare: set[int] = set()  # starts of the weekdays named without a week ("on Monday")
    no_year: dict[int, _NoYear] = {}  # starts of the dates written without a year
    for pattern, rule in _DATE_RULES:
        for m in pattern.finditer(text):
            value, others = rule(m, now), ()
            said = value if isinstance(value, _NoYear) else None
            if said is not None:
                value = (
                    None if allow_future else _limit_ahead(value, text, m.start(), m.end(), now)
                ) or _resolve_no_year(value, now, allow_future=allow_future)
            elif isinstance(value, _Weekday | _Weekend):
                if _RECURRING.search(text, max(0, m.start() - _RECURRING_NEAR), m.start()):
                    continue  # "격주 토요일 10시부터 일요일 6시까지": a schedule, no day
                if isinstance(value, _Weekday) and value.week is None and value.step == 0:
                    bare.add(m.start())  # "on Monday", "금요일에"
                value, others = _resolve_weekday(value, now, allow_future=allow_future)
                weekdays.add(m.start())
            if value != _NOT_A_DATE:
                candidates.append((m.start(), m.end(), value, others, said))
    # Earliest, then longest, claims its span; an impossible date (2024.2.30) claims it and is dropped.
    candidates.sort(key=lambda c: (c[0], c[0] - c[1]))
    found: list[Match] = []
    claimed_until = -1
    for start, end, value, others, said in candidates:
        if start < claimed_until:
            continue
        claimed_until = end
        if said is not None:  # "august" alone, not "august this year" at the same start
            no_year[start] = said
        if value is not None:
            found.append(Match(value, start, end, others, yearless=start in no_year))
    # "9월20일 토요일", "Saturday, September 20": the weekday of a day told names that day;
    # so does one right after a day told alone ("16일 금요일 밤이었어요": legal_set14 A1 got
    # an invented Friday, 2026-11-27)
    told = [
        m
        for n, m in enumerate(found)
        if m.start not in weekdays
        or not (
            _DAY_BEFORE.search(text, 0, m.start)
            or any(
                len(str(o.value)) == 10
                and _BESIDE.fullmatch(text[min(o.end, m.end) : max(o.start, m.start)])
                for o in found[max(n - 1, 0) : n + 2]
                if o is not m and o.start not in weekdays
            )
        )
    ]
    told = [dataclasses.replace(m, weekday_alone=True) if m.start in bare else m for m in told]
    told = weekdays_of_then(told, told, now)
    told = _years_carried(text, _years_beside(text, told, no_year), no_year, weekdays, now)
    told = _before_that(text, told, no_year, allow_future=allow_future)
    return _months_carried(text, _relative_days_of_then(text, told))


# A day told as before the one told just before it ("2024년 10월 1일 입주하던 날 … 계약서는 그
# 전에 8월 20일에 썼고요": legal_set19 A2 got this year's August in both modes).
_BEFORE_THAT = re.compile(
    r"(?:그\s?전에(?:는)?|그보다\s?전에|그\s?이전에|(?i:before\s+that|prior\s+to\s+that|earlier))"
    r"[\s,]*(?:은|는|(?i:on|in))?\s*$"
)


def _before_that(
    text: str, found: list[Match], no_year: dict[int, _NoYear], *, allow_future: bool
) -> list[Match]:
    """The dates written without a year right after "그 전에" / "before that", in the year that
    puts them last before the day told before them."""
    out: list[Match] = []
    for m in found:
        said = no_year.get(m.start)
        before = next((o for o in reversed(out) if len(str(o.value)) == 10), None)
        if (
            said is not None
            and before is not None
            and not allow_future
            and _BEFORE_THAT.search(text[max(before.end, m.start - 20) : m.start])
        ):
            then = datetime.fromisoformat(str(before.value))
            value = _resolve_no_year(said, then, allow_future=False)
            if value is not None and value != m.value:
                m = dataclasses.replace(m, value=value, alternatives=(), yearless=before.yearless)
        out.append(m)
    return out


# A day counted ahead from today ("내일", "tomorrow") said in words reported from a day told
# before it in the sentence is counted from that day, not from the message: "11월 20일에 문자로
# 내일부터 나오지 말라고 했어요" tells 20 November, not tomorrow (a dismissal's date was refused,
# and a day ahead would have dated the memo wrongly). A day back ("어제 또 달라고 했어요") is
# when the words were said, the message's.
_RELATIVE_WORD = re.compile(r"(?:오늘|내일|모레|(?i:today|tonight|tomorrow))")
_REPORTED_AFTER = re.compile(
    r"[^.!?\n]{0,30}?(?:라고|다고|자고|냐고|래요|랬|란다|라며|다며|라는|다는|이렇게|이런 ?(?:문자|카톡|말))"
)
# the words of a message or a call told ("사장이 문자로 내일부터 나오지 마세요 … 이렇게 보냈어요":
# legal_set18 A3's chronology got an invented day ahead)
_REPORTED_BEFORE = re.compile(
    r"(?i:\b(?:told|said|texted|messaged|wrote|saying)\b)|(?:문자|카톡|메시지|메세지|톡|전화)(?:으로|로)\s"
)


def _relative_days_of_then(text: str, found: list[Match]) -> list[Match]:
    """`found` without the days counted from a day told before them in reported words."""
    spans = sentence_spans(text)
    kept: list[Match] = []
    for m in found:
        told_before = [
            o
            for o in kept
            if isinstance(o.value, str)
            and len(o.value) == 10
            and not _RELATIVE_WORD.fullmatch(text[o.start : o.end].strip())
            and any(s.start <= o.start and m.end <= s.end for s in spans)
        ]
        if (
            told_before
            and _RELATIVE_WORD.fullmatch(text[m.start : m.end].strip())
            and (
                _REPORTED_AFTER.match(text, m.end)
                or _REPORTED_BEFORE.search(text, told_before[-1].end, m.start)
            )
        ):
            continue
        kept.append(m)
    return kept


# A day of the month told alone ("7일에", "17일 조사받았어요"), not a count of days ("3일 전",
# "5일 동안", "3일치", "일당").
_DAY_ALONE = re.compile(
    r"(?<![\d.\-/월])(?P<d>[1-9]|[12]\d|3[01])\s?일(?!\s?(?:전|간|동안|째|치|분|씩|당|이내|안에|뒤|후|만에))"
    # "I said Oct 28 but it was actually the 27th" (legal_set18 B2)
    r"|(?i:\bthe\s+(?P<en>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b(?!\s+(?:of|day|time|floor|week|month)\b))"
)


# A day of the month put right ("oct 28 but it was actually the 27th", "dec 4, not … the 3rd"):
# the same month's, even before the day told.
_PUT_RIGHT = re.compile(r"(?i)\b(?:actually|not|i mean|i meant|sorry|correction)\b")


def _months_carried(text: str, found: list[Match]) -> list[Match]:
    """With the days told alone after a day of a month earlier in the message, later in that
    month ("10월 5일에 45만원 보냈고 7일에 또 30만원", "11월 10일에 신청했고 17일에 조사받았어요
    18일부터 등교": legal_set17 S4, S6 lost every such day)."""
    taken = [(m.start, m.end) for m in found]
    days = sorted(
        (m for m in found if isinstance(m.value, str) and len(m.value) == 10),
        key=lambda m: m.start,
    )
    added: list[Match] = []
    for d in _DAY_ALONE.finditer(text):
        if any(s <= d.start() < e for s, e in taken):
            continue
        before = [m for m in [*days, *added] if m.start < d.start()]
        if not before:
            continue
        last = max(before, key=lambda m: m.start)
        day = int(d["d"] or d["en"])
        fixed = d["en"] and _PUT_RIGHT.search(text, last.end, d.start())
        if day <= int(last.value[8:]) and not fixed:
            continue  # "10월 30일 … 2일에": next month or another; not guessed
        value = _iso(int(last.value[:4]), int(last.value[5:7]), day)
        if value is not None:
            added.append(Match(value, d.start(), d.end(), (), yearless=last.yearless))
    return sorted([*found, *added], key=lambda m: m.start) if added else found


_WEEK = timedelta(days=7)


def weekdays_of_then(found: list[Match], message: list[Match], now: datetime) -> list[Match]:
    """`found` without a weekday named without its week ("Saturday night, 25 October", "oct 31
    … he said dont come on monday") where the `message` tells a day more than a week before
    it: that weekday is of that time, not of this week (legal_set16 B2, B3 got 2026-11-23,
    2026-11-28 beside those days)."""
    today = now.date()
    then = any(
        not m.weekday_alone and (day := _day(m.value)) is not None and today - day > _WEEK
        for m in message
    )
    return [m for m in found if not (then and m.weekday_alone)]


def _day(value: object) -> date | None:
    if not (isinstance(value, str) and len(value) == 10):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _years_beside(text: str, found: list[Match], no_year: dict[int, _NoYear]) -> list[Match]:
    """A year told right beside a date written without one is that date's ("October 20 last
    year", "last year, October 20", "3월 5일 작년"): one date, not a day of this year and a
    year of its own."""
    out = list(found)
    for n, m in enumerate(found):
        said = no_year.get(m.start)
        if said is None:
            continue
        for other in (found[n - 1] if n else None, found[n + 1] if n + 1 < len(found) else None):
            if other is None or other not in out or not _YEAR_ONLY.fullmatch(str(other.value)):
                continue
            gap = text[min(m.end, other.end) : max(m.start, other.start)]
            dated = _iso(int(str(other.value)), said.month, said.day)
            if _BESIDE.fullmatch(gap) and dated is not None:
                out[out.index(m)] = Match(dated, min(m.start, other.start), max(m.end, other.end))
                out.remove(other)
                break
    return out


_YEAR_ONLY = re.compile(r"\d{4}")


def _years_carried(
    text: str,
    found: list[Match],
    no_year: dict[int, _NoYear],
    weekdays: set[int],
    now: datetime,
) -> list[Match]:
    """The dates with the year of a dated one before them in the same sentence carried to those
    written without one that follow it in that year (see `find_dates`). A year told by a word
    two or more back carries as a choice only: "재작년 5월부터 사귀다가 9월 28일에 헤어졌어요", "재작년
    5월2일부터요 8월31일까지 했어요" meant this year's September and August (legal_set16 A3, A4,
    both modes), so the day keeps its nearest reading, the year unsaid, and the carried one is
    offered beside it."""
    sentences = sentence_spans(text)
    out: list[Match] = []
    anchor: tuple[int, str, bool] | None = None  # (sentence, value, year told by a word)
    for m in found:
        sentence = next((s.sentence for s in sentences if s.start <= m.start < s.end), -1)
        said = no_year.get(m.start)
        if said is None:
            if m.start not in weekdays and isinstance(m.value, str) and len(m.value) >= 7:
                worded = not _YEAR_WRITTEN.search(text, m.start, m.end)
                anchor = (sentence, m.value, worded)
        elif anchor is not None and anchor[0] == sentence:
            carried = _iso(int(anchor[1][:4]), said.month, said.day)
            if carried is not None and carried >= anchor[1][: len(carried)]:
                if not anchor[2] or int(anchor[1][:4]) > now.year - _FAR_YEARS:
                    m = Match(carried, m.start, m.end, m.alternatives)  # its year is said
                elif carried != m.value:
                    m = Match(m.value, m.start, m.end, (*m.alternatives, carried), yearless=True)
        out.append(m)
    return out


_FAR_YEARS = 2  # a year told by a word this far back ("재작년") carries only as a choice
_YEAR_WRITTEN = re.compile(r"\d{4}|\d{2}\s?년|'\d{2}\b")

# A weekday of a schedule, not a day: after "격주", "매주", "every (other)" within a few words
# (legal_set14 R5: "격주 토요일 10시부터 일요일 6시까지 보기로 했고" became two deadlines).
_RECURRING = re.compile(r"격주|매주|주말마다|(?i:\bevery\b|\beach\b|\bon\s+alternate\b)")
_RECURRING_NEAR = 20


# A day of the month told alone right before a weekday ("16일 금요일", "the 16th, a Friday").
_DAY_BEFORE = re.compile(
    r"(?<![\d.\-/월])\d{1,2}\s?일[\s,(]*$|(?i:\bthe\s+\d{1,2}(?:st|nd|rd|th)[\s,(]*(?:a\s+)?)$"
)


# What may stand between a day and its weekday: "9월20일 토요일", "October 14 (Tuesday)",
# "october 14 not 13, it was tuesday" (legal_set13 B1 kept 2026-11-24 for the Tuesday),
# "friday the 18th of september" (legal_set14 B4: the Friday before the message as well).
_BESIDE = re.compile(
    r"[\s,()\[\]]*(?:(?i:the)\s+)?(?:(?i:not)\s+\d{1,2}(?i:st|nd|rd|th)?[\s,]*)?"
    r"(?:(?i:it|that|which)\s+(?i:was|is)\s+(?:(?i:a)\s+)?)?"
)


def parse_date(text: str, *, now: datetime, allow_future: bool = False) -> str | None:
    """The single date in an answer ('yyyy-mm-dd', 'yyyy-mm' or 'yyyy'), None when none or several.

    `allow_future` places a date without a year as `find_dates` does.
    """
    value = single(find_dates(text, now=now, allow_future=allow_future))
    return value if isinstance(value, str) else None


_ISO_VALUE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def is_future(value: str, *, now: datetime) -> bool:
    """Whether a 'yyyy-mm-dd', 'yyyy-mm' or 'yyyy' value starts after `now`'s day, month or year."""
    m = _ISO_VALUE.fullmatch(value)
    if m is None:
        raise ValueError(f"not a normalised date: {value!r}")
    year, month, day = int(m[1]), _opt_int(m[2]), _opt_int(m[3])
    if day is not None and month is not None:
        return date(year, month, day) > now.date()
    if month is not None:
        return (year, month) > (now.year, now.month)
    return year > now.year
