"""Offline normalisers: amounts, dates, yes/no, counts and durations in Korean and English text."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal


@dataclass(frozen=True)
class Match:
    """A value found in a text: int for amounts/ints/durations, str for dates."""

    value: object
    start: int
    end: int


# --- numerals -------------------------------------------------------------------------------

_SINO_DIGITS = {"영": 0, "공": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "륙": 6}
_SINO_DIGITS |= {"칠": 7, "팔": 8, "구": 9}
_SMALL_UNITS = {"십": 10, "백": 100, "천": 1000}
_BIG_UNITS = {"만": 10**4, "억": 10**8, "조": 10**12}
_NUMERAL_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|\S")

_NATIVE_TENS = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50}
_NATIVE_TENS |= {"예순": 60, "일흔": 70, "여든": 80, "아흔": 90}
_NATIVE_ONES = {"하나": 1, "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "석": 3, "넷": 4, "네": 4}
_NATIVE_ONES |= {"넉": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_TENS_RE = "열|스물|스무|서른|마흔|쉰|예순|일흔|여든|아흔"
# Attributive forms stand before a counter ("두 명"); standalone forms are whole words ("둘").
_NATIVE_ATTR = f"(?:(?:{_TENS_RE})(?:한|두|세|네|다섯|여섯|일곱|여덟|아홉)?|한|두|세|네|석|넉|다섯|여섯|일곱|여덟|아홉)"
_NATIVE_STAND = f"(?:(?:{_TENS_RE})(?:하나|둘|셋|넷|다섯|여섯|일곱|여덟|아홉)?|하나|둘|셋|넷|다섯|여섯|일곱|여덟|아홉)"
_SINO_RUN = "[일이삼사오육칠팔구십백]+"

_EN_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_EN_NUMBER_RE = "|".join(_EN_NUMBERS)


def _korean_number(text: str) -> Decimal | None:
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
        elif token in _SMALL_UNITS:
            section += (Decimal(1) if digit is None else digit) * _SMALL_UNITS[token]
            section_seen, digit = True, None
        elif token in _BIG_UNITS:
            unit = _BIG_UNITS[token]
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


def _any_number(word: str) -> Decimal | None:
    """Value of digits, a Sino-Korean numeral, a native Korean numeral or an English number word."""
    word = word.strip().lower()
    if word in ("a", "an"):
        return Decimal(1)
    if word in _EN_NUMBERS:
        return Decimal(_EN_NUMBERS[word])
    native = _native_number(word)
    return Decimal(native) if native is not None else _korean_number(word)


def _to_int(value: Decimal) -> int:
    """Round half up to an int."""
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _single(matches: list[Match]) -> object | None:
    """The value when all matches agree, None when there are none or they disagree."""
    values = {m.value for m in matches}
    return values.pop() if len(values) == 1 else None


# --- amounts --------------------------------------------------------------------------------

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
        elif not any(c in _BIG_UNITS for c in num):
            if not currency or (korean_only and not any(c in _SMALL_UNITS for c in num)):
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
        found.append(Match(_to_int(value), m.start(), m.end()))
    return found


def _amount_value(num: str, mult: str | None, trail: str | None) -> Decimal | None:
    """Value of the numeral part of an amount match."""
    if mult:
        return Decimal(re.sub(r"[^\d.]", "", num)) * _MULTIPLIERS[mult.lower()]
    if trail:
        head = _korean_number(num[: len(num) - len(trail)])
        tail = _korean_number(trail)
        if head is None or tail is None:
            return None
        # '2억 5천' means 2억 5천만: a bare thousands group after 억 counts in 만.
        if num[: len(num) - len(trail)].rstrip().endswith("억"):
            return head + tail * _BIG_UNITS["만"]
        return head + tail
    return _korean_number(num)


def find_amounts(text: str) -> list[Match]:
    """Every amount of money in free text that carries a money unit (원/만/억/천만/won/KRW/million ...)."""
    return _amounts(text, lenient=False)


def parse_amount(text: str) -> int | None:
    """The single amount of money (integer KRW) in an answer, or None when there is none."""
    value = _single(_amounts(text, lenient=True))
    return value if isinstance(value, int) else None


# --- dates ----------------------------------------------------------------------------------

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
    """'06/01/2024' (month first)."""
    return _iso(int(m["y"]), int(m["m"]), int(m["d"]))


def _days_from(now: datetime, days: int) -> str:
    """The ISO date `days` days from `now`'s date."""
    return (now.date() + timedelta(days=days)).isoformat()


def _relative_day(m: re.Match[str], now: datetime) -> str | None:
    """어제, 그저께, 오늘, 내일, 지난주, yesterday, last week ..."""
    word = re.sub(r"\s+", " ", m["word"].lower())
    offsets = {"그저께": -2, "그제": -2, "어제": -1, "어저께": -1, "오늘": 0, "내일": 1, "모레": 2}
    offsets |= {"day before yesterday": -2, "yesterday": -1, "today": 0, "tomorrow": 1}
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
    word = re.sub(r"\s+", "", (m["word"] or m["en"]).lower())
    offsets = {"재작년": -2, "지지난해": -2, "작년": -1, "지난해": -1, "올해": 0, "금년": 0}
    offsets |= {"내년": 1, "lastyear": -1, "thisyear": 0, "nextyear": 1}
    return _iso(now.year + offsets[word], _opt_int(m["m"]), _opt_int(m["d"]))


def _ago(m: re.Match[str], now: datetime) -> str | None:
    """'3일 전', '두 달 전', '2년 전', 'a month ago': days/weeks give a date, months yyyy-mm, years yyyy."""
    amount = _any_number(m["n"])
    if amount is None or amount != int(amount):
        return _NOT_A_DATE
    count, unit = int(amount), m["u"].strip().lower()
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
    """A weekday: in a named week (`week` weeks from this Monday-Sunday week), or the nearest
    one (`before_today`: strictly before today, as in "지난 금요일" / "last Friday"; otherwise on
    or before today, or on or after it for a field that may lie ahead)."""

    weekday: int  # Monday 0 ... Sunday 6
    week: int | None = None
    before_today: bool = False
    ahead: bool = False


_KO_WEEKDAYS = "월화수목금토일"
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEK_OFFSETS = {"지지난": -2, "지난": -1, "저번": -1, "이번": 0, "요번": 0, "다음": 1}


def _weekday_ko(m: re.Match[str], now: datetime) -> _Weekday:
    """'지난주 금요일' (Friday of last week), '이번 주 월요일', '지난 금요일', '금요일'."""
    weekday = _KO_WEEKDAYS.index(m["wd"])
    rel = m["rel"]
    if rel and m["wk"]:
        return _Weekday(weekday, week=_WEEK_OFFSETS[rel])
    if rel:
        return _Weekday(
            weekday, before_today=rel in ("지난", "저번", "지지난"), ahead=rel == "다음"
        )
    return _Weekday(weekday)


def _weekday_en(m: re.Match[str], now: datetime) -> _Weekday:
    """'last Saturday' (the latest before today), 'this Monday' (of this week), 'on Friday'."""
    weekday = _EN_WEEKDAYS.index(m["wd"].lower())
    rel = (m["rel"] or "").lower()
    if rel == "this":
        return _Weekday(weekday, week=0)
    if rel in ("last", "past"):
        return _Weekday(weekday, before_today=True)
    return _Weekday(weekday, ahead=rel == "next")


def _resolve_weekday(value: _Weekday, now: datetime, *, allow_future: bool) -> str:
    """The date of a weekday phrase relative to `now`."""
    today = now.date()
    if value.week is not None:
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=value.week)
        return (monday + timedelta(days=value.weekday)).isoformat()
    if value.ahead or (allow_future and not value.before_today):
        days = (value.weekday - today.weekday()) % 7 or (7 if value.ahead else 0)
        return (today + timedelta(days=days)).isoformat()
    days = (today.weekday() - value.weekday) % 7
    if days == 0 and value.before_today:
        days = 7
    return (today - timedelta(days=days)).isoformat()


def _english_month_rel_year(m: re.Match[str], now: datetime) -> str | None:
    """'in May this year', 'May last year', 'March of next year'."""
    offset = {"last": -1, "this": 0, "next": 1}[m["rel"].lower()]
    return _iso(now.year + offset, _MONTHS[m["mon"].lower()])


_DAY_KO = r"(?:\s?(?P<d>\d{1,2})\s?일)?"
_MONTH_DAY_KO = rf"(?:\s?(?P<m>\d{{1,2}})\s?월{_DAY_KO})?"
_EN_COUNT = rf"\d+|an?|{_EN_NUMBER_RE}"
_FULL_MONTHS = "|".join(list(_MONTHS)[:12])  # 'in may', not 'in mar'
# A decimal number is no month.day: '1.5억', '2.5년', '4.5점', '1.5 million', 'v1.2'.
_NOT_A_DECIMAL = (
    r"(?![\d,A-Za-z])(?!\s?(?:[억만천백십원배%일년개월달주시분초명개점평살세층호번회차등위대도부푼할리]|"
    r"퍼센트|프로|리터|킬로|키로|미터|인치))"
    r"(?!\s(?i:million|thousand|billion|mil|mn|bn|percent|times|points?|years?|months?|weeks?|"
    r"days?|hours?|km|kg)\b)"
)
_DateRule = tuple[
    re.Pattern[str], Callable[[re.Match[str], datetime], str | _NoYear | _Weekday | None]
]
_EN_MONTH_LEAD = (
    r"(?:(?:in|since|during|around|from|until|till|early|mid|late|"
    r"(?:the\s+)?(?:end|beginning|start|middle)\s+of)[\s-]+)?"
)
_DATE_RULES: list[_DateRule] = [
    (re.compile(rf"(?<![\d.])(?P<y>\d{{4}}|\d{{2}})\s?년도?{_MONTH_DAY_KO}"), _ymd),
    (re.compile(rf"(?<![\d.])(?P<m>\d{{1,2}})\s?월{_DAY_KO}"), _month_day),
    (
        re.compile(
            r"(?<![\d.])(?P<y>\d{4}|\d{2})\s?(?P<sep>[.\-/])\s?(?P<m>\d{1,2})\s?(?P=sep)\s?"
            r"(?P<d>\d{1,2})(?!\d)\.?"
        ),
        _numeric_full,
    ),
    (re.compile(r"(?<![\d.])(?P<y>\d{4})\s?[.\-/]\s?(?P<m>\d{1,2})(?![\d,])"), _numeric_month),
    (re.compile(r"(?<![\d/])(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})(?!\d)"), _us_numeric),
    (re.compile(r"(?<![\d/.])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])"), _month_day),
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
            r"(?i:(?:the\s+)?day\s+before\s+yesterday|yesterday|today|tomorrow|last\s+week)\b)"
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
            rf"(?<![가-힣])(?P<word>재작년|지지난\s?해|작년|지난\s?해|올해|금년|내년){_MONTH_DAY_KO}"
            r"|\b(?P<en>(?i:(?:last|this|next)\s+year))\b"
        ),
        _relative_year,
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
            r"(?P<rel>last|this|next)\s+year\b"
        ),
        _english_month_rel_year,
    ),
    (re.compile(r"(?<![\d.])(?P<n>\d+)\s?(?P<u>일|주일|주|개월|달|년)\s?(?:전|前)"), _ago),
    # Sino-Korean counts take 년/개월/주일, or 일 written solid ('삼일 전'; '이 일' is 'this work').
    (re.compile(rf"(?<![가-힣])(?P<n>{_SINO_RUN})(?P<u>\s?(?:주일|개월|년)|일)\s?전"), _ago),
    (re.compile(rf"(?<![가-힣])(?P<n>{_NATIVE_ATTR})\s?(?P<u>달|해)\s?전"), _ago),
    (
        re.compile(
            r"(?<![가-힣])(?P<word>하루|이틀|사흘|나흘|닷새|엿새|이레|열흘|보름|일주일|반년)\s?전"
        ),
        _ko_days_ago,
    ),
    (
        re.compile(rf"(?i)\b(?P<n>{_EN_COUNT})\s+(?P<u>day|week|month|year)s?\s+ago\b"),
        _ago,
    ),
    (
        re.compile(
            rf"(?i)\b{_MONTH_RE}\s+(?P<d>\d{{1,2}}){_ORDINAL}(?![\d:])(?:,?\s+(?P<y>\d{{4}})\b)?"
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
    (
        re.compile(
            r"(?i)\b(?:in|since|during|around|from|until|till|early|mid|late|"
            r"(?:the\s+)?(?:end|beginning|start|middle)\s+of)[\s-]+"
            rf"(?P<mon>{_FULL_MONTHS})\b(?![\s,]*\d)"
        ),
        _english_month,
    ),
]


def find_dates(text: str, *, now: datetime, allow_future: bool = False) -> list[Match]:
    """Every date in free text relative to `now`, as 'yyyy-mm-dd', 'yyyy-mm' or 'yyyy', in order.

    A date without a year ('6/1', '6월', 'in June') is the most recent one on or before `now`;
    with `allow_future` (for facts that may lie ahead) it is in `now`'s year. A written year is
    kept as it is, in the future or not.
    """
    candidates: list[tuple[int, int, str | None]] = []
    for pattern, rule in _DATE_RULES:
        for m in pattern.finditer(text):
            value = rule(m, now)
            if isinstance(value, _NoYear):
                value = _resolve_no_year(value, now, allow_future=allow_future)
            elif isinstance(value, _Weekday):
                value = _resolve_weekday(value, now, allow_future=allow_future)
            if value != _NOT_A_DATE:
                candidates.append((m.start(), m.end(), value))
    # Earliest, then longest, claims its span; an impossible date (2024.2.30) claims it and is dropped.
    candidates.sort(key=lambda c: (c[0], c[0] - c[1]))
    found: list[Match] = []
    claimed_until = -1
    for start, end, value in candidates:
        if start < claimed_until:
            continue
        claimed_until = end
        if value is not None:
            found.append(Match(value, start, end))
    return found


def parse_date(text: str, *, now: datetime, allow_future: bool = False) -> str | None:
    """The single date in an answer ('yyyy-mm-dd', 'yyyy-mm' or 'yyyy'), None when none or several.

    `allow_future` places a date without a year as `find_dates` does.
    """
    value = _single(find_dates(text, now=now, allow_future=allow_future))
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


# --- yes / no -------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# "I don't know" / "모르" answers are unknown, not a no.
_NOT_A_NO_AFTER = {"know", "remember", "recall", "understand", "idea"}
_SHORT_ANSWER = 4  # words; in a short answer a later content word overrides a leading 네/아니요
_SHORT_SENTENCE = 6  # words; a longer text is an answer only when it leads with a cue


def _words(text: str) -> list[str]:
    """Lower-cased words, apostrophes kept ("don't")."""
    return _WORD.findall(text.lower().replace("’", "'"))


# Emphatic and quoting endings people add when they repeat themselves: "있다니까요", "없다고요",
# "했거든요", "맞잖아요", "아니라니까요". The stem with a plain ending is looked up instead.
_EMPHATIC = re.compile(
    r"^(?P<stem>[가-힣]+?)(?:다니까는요|다니까요|다니까|다니깐요|다니깐|다고요|다구요|다고|다구|"
    r"거든요|거든|잖아요|잖아|라니까요|라니까|라고요|라구요)$"
)
_PLAIN_ENDINGS = ("어요", "아요", "요", "습니다", "어", "아")


def _plain(word: str, single: set[str]) -> str:
    """An emphatic form ("있다니까요") as its plain form among the one-word cues ("있어요")."""
    if word in single:
        return word
    m = _EMPHATIC.match(word)
    if m is None:
        return word
    return next((m["stem"] + e for e in _PLAIN_ENDINGS if m["stem"] + e in single), word)


def parse_yes_no(text: str, *, yes: Iterable[str], no: Iterable[str]) -> bool | None:
    """True/False when the answer says yes/no with the given cue words, None when unclear."""
    yes, no = list(yes), list(no)
    single = {cue[0] for phrase in (*yes, *no) if len(cue := _words(phrase)) == 1}
    words = [_plain(word, single) for word in _words(text)]
    cues: list[tuple[int, int, bool]] = []  # (first word, word count, is yes)
    for answer, phrases in ((True, yes), (False, no)):
        for phrase in phrases:
            cue = _words(phrase)
            n = len(cue)
            for i in range(len(words) - n + 1):
                window = words[i : i + n]
                # A one-word cue also matches itself repeated ("네네", "넵넵").
                if window == cue or (
                    n == 1 and re.fullmatch(f"(?:{re.escape(cue[0])})+", words[i])
                ):
                    if not answer and i + n < len(words) and words[i + n] in _NOT_A_NO_AFTER:
                        continue
                    cues.append((i, n, answer))
    # Longer cues win over the cues inside them ("안 했어요" over "했어요").
    chosen: list[tuple[int, int, bool]] = []
    for cue in sorted(cues, key=lambda c: (-c[1], c[0])):
        if all(cue[0] >= o[0] + o[1] or o[0] >= cue[0] + cue[1] for o in chosen):
            chosen.append(cue)
    chosen.sort()
    leads = bool(chosen) and chosen[0][0] <= 1
    if not chosen or (len(words) > _SHORT_SENTENCE and not leads):
        return None
    answers = {c[2] for c in chosen}
    if len(answers) == 1:
        return answers.pop()
    # Korean answers the form of the question: "네, 없어요" to "없으세요?" means there is none.
    if len(words) <= _SHORT_ANSWER:
        return chosen[-1][2]
    return chosen[0][2] if leads else None


_KO_NEGATED_BEFORE = ("안", "못")
_KO_NEGATED_AFTER = re.compile(r"^(?:지\s?(?:도|는|가)?\s?(?:않|못)|진\s?(?:않|못))")
_EN_NEGATED_BEFORE = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:\w+\s+)?$")


@functools.cache
def _phrase_form(phrase: str) -> tuple[re.Pattern[str] | None, str]:
    """(whole-word pattern, None) for an English phrase, (None, the phrase without spaces) for a
    Korean one: made once per phrase of the knowledge."""
    phrase = phrase.lower()
    if _LATIN_WORD.search(phrase):
        return re.compile(rf"(?<![a-z']){re.escape(phrase)}(?![a-z])"), phrase
    return None, _SPACES.sub("", phrase)


@functools.lru_cache(maxsize=64)
def _squeezed(text: str) -> str:
    """The text without spaces (one message is searched for many phrases)."""
    return _SPACES.sub("", text)


_SPACES = re.compile(r"\s+")


def _phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where a phrase is said, not negated: Korean ignoring spaces ("못 받았" = "못받았") and not
    after 안/못 or before 지 않/지 못; English as whole words, not after not/n't/never/no."""
    pattern, target = _phrase_form(phrase)
    if pattern is not None:
        return [
            m.span()
            for m in pattern.finditer(text)
            if not _EN_NEGATED_BEFORE.search(text[: m.start()])
        ]
    squeezed = _squeezed(text)
    spans, pos = [], squeezed.find(target)
    while pos >= 0:
        end = pos + len(target)
        negated = (
            not target.startswith(_KO_NEGATED_BEFORE)
            and squeezed[:pos].endswith(_KO_NEGATED_BEFORE)
        ) or bool(_KO_NEGATED_AFTER.match(squeezed[end:]))
        if not negated:
            spans.append((pos + 10**6, end + 10**6))  # apart from the English positions
        pos = squeezed.find(target, pos + 1)
    return spans


_LATIN_WORD = re.compile(r"[a-z]")


def phrase_polarity(text: str, *, true: Iterable[str], false: Iterable[str]) -> bool | None:
    """True or False when the text says one of a fact's phrases ("이사 나왔", "moved out"), None
    when it says none, or says both. A longer phrase wins over one inside it ("못 받았" over
    "받았"), and a negated phrase does not count ("안 다쳤어요" is not "다쳤")."""
    lowered = text.lower()
    found = [
        (start, end, polarity)
        for polarity, phrases in ((True, true), (False, false))
        for phrase in phrases
        for start, end in _phrase_spans(lowered, phrase)
    ]
    chosen: list[tuple[int, int, bool]] = []
    for cue in sorted(found, key=lambda c: c[0] - c[1]):
        if all(cue[0] >= o[1] or o[0] >= cue[1] for o in chosen):
            chosen.append(cue)
    polarities = {c[2] for c in chosen}
    return polarities.pop() if len(polarities) == 1 else None


# --- counts ---------------------------------------------------------------------------------

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
    re.compile(rf"(?<![가-힣])(?P<native>{_NATIVE_ATTR})\s?(?={_COUNTER})"),
    re.compile(rf"(?<![가-힣])(?P<native>{_NATIVE_STAND}){_STAND_END}"),
    # Sino-Korean numbers count only before a counter and with two syllables or more ('삼십 세'):
    # one syllable plus a counter is usually a word ('오명' stigma, '사명' mission, '이 개' this one).
    re.compile(rf"(?<![가-힣])(?P<sino>[일이삼사오육칠팔구십백]{{2,}})\s?(?={_COUNTER})"),
    re.compile(rf"(?i)(?<!no )(?<!any )\b(?P<en>{_EN_NUMBER_RE})\b"),
]


def find_ints(text: str) -> list[Match]:
    """Every count in free text ('2명', '두 명', '셋', 'three')."""
    found: list[Match] = []
    for pattern in _INT_RULES:
        for m in pattern.finditer(text):
            word = next(g for g in m.groups() if g is not None)
            number = _any_number(word.replace(",", ""))
            if number is not None and number == int(number):
                found.append(Match(int(number), m.start(), m.end()))
    return found


def parse_int(text: str) -> int | None:
    """The single count in an answer ('2명', '두 명', '셋', 'three'), None when none or several."""
    value = _single(find_ints(text))
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
    value = _single(found)
    return value if isinstance(value, int) else None


# --- decimals -------------------------------------------------------------------------------

_DECIMAL = re.compile(r"(?<![\d.,])(\d{0,3}\.\d{1,4})(?![\d.])\s?(?:%|퍼센트|프로)?")


def parse_decimal(text: str) -> float | None:
    """The single decimal number in an answer ('0.08%', '혈중알코올농도 0.125요', '.09'), None
    when there is none or several."""
    values = {float(m[1]) for m in _DECIMAL.finditer(text)}
    return values.pop() if len(values) == 1 else None


# --- durations ------------------------------------------------------------------------------

# 달 takes native numbers and 개월 Sino-Korean ones: '이 달' is 'this month', not two months.
_MONTHS_KO = rf"(?:\d+(?:\.\d+)?\s?(?:개월|달)|{_SINO_RUN}\s?개월|{_NATIVE_ATTR}\s?달)"
_DURATION_KO = re.compile(
    rf"(?<![가-힣\d.])(?:(?P<y>(?:\d+(?:\.\d+)?|{_SINO_RUN})\s?년)(?P<yh>\s?반)?"
    rf"(?:\s?(?:하고\s?)?(?P<m>{_MONTHS_KO})(?P<mh>\s?반)?)?"
    rf"|(?P<m2>{_MONTHS_KO})(?P<mh2>\s?반)?|(?P<half>반\s?년))"
    # '2년 전' is a date, '24년 6월' a month, '2024년' a year, '85년생' a birth year.
    r"(?!\s?(?:전|前|생|도|\d{1,2}\s?월))"
)
_DURATION_EN = re.compile(
    rf"(?i)\b(?:(?P<y>{_EN_COUNT}|\d+\.\d+)(?P<yh>\s+and\s+a\s+half)?\s*-?\s*(?:years?|yrs?)"
    r"(?P<yh2>\s+and\s+a\s+half)?"
    rf"(?:,?\s*(?:and\s+)?(?P<m>{_EN_COUNT})\s*(?:months?|mos?)\b)?"
    rf"|(?P<m2>{_EN_COUNT}|\d+\.\d+)\s*-?\s*(?:months?|mos?)\b|(?P<half>half\s+a\s+year))"
    r"(?!\s+ago)"
)


def find_durations(text: str) -> list[Match]:
    """Every length of time in free text, in whole months."""
    found: list[Match] = []
    for pattern in (_DURATION_KO, _DURATION_EN):
        for m in pattern.finditer(text):
            months = _duration_value(m)
            if months is not None:
                found.append(Match(_to_int(months), m.start(), m.end()))
    return found


def parse_duration_months(text: str) -> int | None:
    """A length of time in whole months ('3년 6개월' -> 42, '1년 반' -> 18), None when none or several."""
    value = _single(find_durations(text))
    return value if isinstance(value, int) else None


_UNIT_WORD = re.compile(r"\s?(?:개월|달|년)$")


def _duration_value(m: re.Match[str]) -> Decimal | None:
    """Months in one duration match; None for a calendar year such as '2024년'."""
    if m["half"]:
        return Decimal(6)
    years = _any_number(_UNIT_WORD.sub("", m["y"])) if m["y"] else Decimal(0)
    month_text = m["m"] or m["m2"]
    months = _any_number(_UNIT_WORD.sub("", month_text)) if month_text else Decimal(0)
    if years is None or months is None or years >= 100:
        return None
    half_year = Decimal(6) if m["yh"] or (m.re is _DURATION_EN and m["yh2"]) else Decimal(0)
    half_month = Decimal("0.5") if m.re is _DURATION_KO and (m["mh"] or m["mh2"]) else Decimal(0)
    return years * 12 + half_year + months + half_month
