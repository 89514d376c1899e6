"""Amounts of money in Korean and English ('300만원', '1억 2천', '₩50,000', '3.5 million won')
as integer KRW.

A bare number is no amount: only a money unit, 만/억/조, an English multiplier or thousands
written with separators ("300,000", as amounts are written and counts, years and dates are not)
makes one, so counts, years and dates in the same message are not read as money. One rule reads free text and
answers alike: a number that could also be a word or a count — a numeral written in Hangul
without 원 ("이천만", "삼만"), or "thousand" without a currency — is an amount when it is shaped
like one (a run of number words: "이천만", "이억 삼천"; or 억/조: "이억") or something says it is
money: a money word in its clause ("보증금", "빌려줬", "owe"), or the question it answers. Three
such numerals are also everyday words ("이만 가볼게요", "오만하다", "일만 했어요"): the question
vouches for them only when they stand alone as the answer ("이만이요", "오만 정도요").
"""

from __future__ import annotations

import functools
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
from graphs.common.text import clause_spans

_K = "일이삼사오육칠팔구"
_ARABIC = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_DIGIT = rf"(?:\d|[{_K}])"
# A group below 10,000: '300', '3,000', '3백', '천오백', '오십', '3천500'.
_GROUP = rf"(?=[\d{_K}천백십])(?:{_DIGIT}?천)?(?:{_DIGIT}?백)?(?:{_DIGIT}?십)?(?:{_ARABIC}|[{_K}])?"
# The same, ending in a unit ('5천'): only such a group may trail a big unit without 원.
_GROUP_UNIT = rf"(?:{_DIGIT}?천)?(?:{_DIGIT}?백)?(?:{_DIGIT}?십)?(?<=[천백십])"
# A space may stand before the big unit after digits or a unit ('3 만', '삼천 만원', '오십 만원',
# as people space them), not after a lone Hangul digit ('일 만 했어요').
_BEFORE_BIG = r"(?:(?<=[\d천백십])\s)?"
_BIG_PART = rf"(?:{_GROUP}{_BEFORE_BIG})?[만억조]"
_BIG_FORM = (
    rf"{_BIG_PART}(?:\s?{_GROUP}{_BEFORE_BIG}[만억조])*"
    rf"(?P<trail>\s?(?:{_GROUP}(?=\s?원)|{_GROUP_UNIT}))?"
)
# "1m deposit + 2.3m balance" (legal_set19 S1: both unread, the parts summed with the damages):
# an m for million only beside money's words, never a distance ("100m 접근금지", "5m away")
_M_FOR_MILLION = (
    r"m(?=\s?(?:won|krw|deposit|balance|paid|payment|cost|price|fee|refund|loan|total|back"
    r"|each|in\s+total|\+|[,)])|\s*$)"
)
_ENGLISH_FORM = (
    rf"{_ARABIC}\s?(?P<mult>(?i:thousand|million|billion|mil|mn|bn|k)(?![A-Za-z])|{_M_FOR_MILLION})"
)
_AMOUNT = re.compile(
    r"(?<!\d)(?<!\d[.,])(?:(?<![가-힣])|(?![가-힣]))"  # not inside a number or a Korean word
    r"(?P<sign>(?<!\w)[-−]|마이너스\s?)?"
    r"(?P<prefix>(?:[₩￦]|(?i:krw)(?![A-Za-z]))\s?)?"
    rf"(?P<num>{_ENGLISH_FORM}|{_BIG_FORM}|{_GROUP})"
    r"(?P<unit>\s?원(?!룸|래)|\s?(?i:won|krw)(?![A-Za-z']))?"
)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")  # thousands with separators
_LEAST_WRITTEN = 10_000  # below it a bare number with a separator is shorthand ("1,800" 만원)
_MULTIPLIERS = {"thousand": 10**3, "k": 10**3, "million": 10**6, "mil": 10**6, "mn": 10**6}
_MULTIPLIERS |= {"m": 10**6}
_MULTIPLIERS |= {"billion": 10**9, "bn": 10**9}
# A number with 만/million but no currency that counts something else: '3만 명', '2 million people'.
_COUNTED_AFTER = re.compile(
    r"\s?(?:명|개(?!인)|건(?!물)|살|년|개월|달(?!러)|번(?!호)|회(?!사)|평|마리|가구|시간|km|킬로|"
    r"(?i:people|persons|users|times|years|views|km)\b)"
)
# What may follow a numeral written only in Hangul for it to be an amount ("이천만이요"), so
# that words like '이만큼', '천만에요', '천만다행' or '오만하다' are not read as 10,000s.
_ANSWER_TAIL = re.compile(
    r"\s|$|[.,!?~)]|이요|이에요|이예요|예요|요|입니다|이고|이나|이상|이하|정도|쯤|가량|넘게|밖에|"
    r"까지|이|은|는|을|도"
)
# The rest of an answer that is only its amount: particles, a copula, "about", a hedge.
_ANSWER_END = re.compile(
    r"(?:\s*(?:이요|이에요|이예요|예요|에요|요|입니다|이었어요|였어요|이고|이나|이상|이하|정도|쯤|"
    r"가량|넘게|넘어요|밖에|까지|이|은|는|을|도|인데|인가|인\s?것\s?같아요|같아요|같은데|일걸요|"
    r"일\s?거예요|될\s?거예요|됩니다|돼요|되요|였던\s?것\s?같아요|약|대략|정확히|원래|"
    r"[.,!?~)ㅠㅜ]+))*\s*$"
)
# Words that say a number is money: what is lent, owed, paid or lost.
_MONEY_WORD = re.compile(
    r"돈|금액|보증금|월세|전세|대출|빚|채무|빌려|빌린|빌렸|갚|송금|입금|이체|계좌|합의금|위자료|"
    r"손해|피해액|변제|월급|임금|급여|퇴직금|수당|가격|비용|요금|잔금|계약금|대금|벌금|수수료|"
    r"떼였|떼인|떼먹|현금|만원|억원|(?i:\b(?:money|won|krw|pay|paid|owe[sd]?|loan|lent|borrow\w*"
    r"|deposit|rent|salary|wages?|fee|cost|price|debt|refund|fine|compensation|dollars?)\b)"
)
# A numeral of at least this many Hangul syllables is a run of number words ("이천만", "오십만",
# "이억 삼천"), shaped like an amount; a shorter one is a single word ("삼만", "이억").
_RUN_SYLLABLES = 3
# One-word numerals that are also everyday words: 이만 "this much, now", 오만 "arrogance",
# 일만 "only work".
_EVERYDAY_WORDS = frozenset({"이만", "오만", "일만"})


# A bare number in a list after an amount counted in 만 ("2024년 12월10일 오백만원 그다음 2025년
# 3월에 삼백 또 2025년 9월15일 이백": legal_set11 C3 kept the first alone) is counted in 만 too:
# a Hangul numeral ending in 백 or 천, or two to four digits, standing as a word of its own.
_BARE_GROUP = re.compile(
    rf"(?<![\d가-힣.,])(?P<num>(?:[{_K}]?천)?(?:[{_K}]?백)?(?<=[천백])|\d{{2,4}})"
    r"(?=\s|$|[.,!?~)]|(?:은|는|을|를|도|이|요|이요|이네요|이에요|예요|이었어요|였어요|이래요|"
    r"래요|입니다|정도|쯤|씩)(?![가-힣]))"
)
_IN_MAN = re.compile(r"만\s?원?$")


@functools.cache
def _per_month(before: tuple[str, ...], after: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    either = ("|".join(re.escape(w) for w in words) or "(?!x)x" for words in (before, after))
    said_before, said_after = either
    return (
        # "월 300", "한 달에 50만원": the word ends right before the value (not "6월 300만원")
        re.compile(rf"(?:^|[^a-z가-힣0-9])(?:{said_before})\s?$"),
        re.compile(rf"\s?(?:원|won|krw)?(?:씩|each)?\s?(?:{said_after})(?![a-z가-힣])"),
    )


def per_month_at(
    lowered: str, start: int, end: int, *, before: tuple[str, ...], after: tuple[str, ...]
) -> bool:
    """Whether the amount at `start:end` of lower-cased text is a sum per month, by the words
    said right `before` it ("월 300", "매달 50만원") or `after` it ("2,300,000 a month")."""
    said_before, said_after = _per_month(before, after)
    return bool(
        said_before.search(lowered[max(0, start - 12) : start]) or said_after.match(lowered, end)
    )


def find_amounts(text: str, *, asked: bool = False) -> list[Match]:
    """Every amount of money in `text`, in order. `asked`: the text answers a question about an
    amount, which says that the amount it gives is money (see the module's rule)."""
    found: list[Match] = []
    mults: list[str] = []
    for m in _AMOUNT.finditer(text):
        if not _counts(text, m, asked=asked):
            continue
        value = _amount_value(m["num"], m["mult"], m["trail"] if not m["unit"] else None)
        if value is None:
            continue
        if m["sign"]:
            value = -value
        mult = (m["mult"] or "").lower()
        if found and _continues(text, found[-1], mults[-1], m, mult, value):
            # "2 million 300 thousand won" is one amount (legal_set10 Y1 kept two)
            last = found.pop()
            mults.pop()
            value = Decimal(last.value) + value
            m_start = last.start
        else:
            m_start = m.start()
        found.append(Match(to_int(value), m_start, m.end()))
        mults.append(mult)
    return _listed_in_man(text, found)


def _listed_in_man(text: str, found: list[Match]) -> list[Match]:
    """`found` with the bare numbers that follow an amount in 만 counted in 만 (see
    `_BARE_GROUP`)."""
    first = next((f for f in found if _IN_MAN.search(text[f.start : f.end])), None)
    if first is None:
        return found
    more = []
    for m in _BARE_GROUP.finditer(text, first.end):
        if any(f.start < m.end() and m.start() < f.end for f in found):
            continue
        value = korean_number(m["num"])
        if value and not (m["num"].isdigit() and 1900 <= value <= 2100):  # a year ("2025 3월")
            more.append(Match(to_int(value * BIG_UNITS["만"]), m.start(), m.end()))
    return sorted([*found, *more], key=lambda f: f.start) if more else found


_BIGGER = {"billion": 10**9, "bn": 10**9, "million": 10**6, "mil": 10**6, "mn": 10**6}


def _continues(
    text: str, last: Match, last_mult: str, m: re.Match[str], mult: str, value: Decimal
) -> bool:
    """Whether an English amount goes on after a bigger one ("2 million 300 thousand")."""
    unit = _BIGGER.get(last_mult)
    return (
        unit is not None
        and bool(mult)
        and 0 < value < unit
        and re.fullmatch(r"\s*(?:and\s+)?", text[last.end : m.start()]) is not None
    )


def _counts(text: str, m: re.Match[str], *, asked: bool) -> bool:
    """Whether the numeral `m` is an amount of money in `text` (the module's one rule)."""
    num = m["num"]
    currency = bool(m["unit"] or m["prefix"])
    if not currency and _COUNTED_AFTER.match(text, m.end()):
        return False  # '3만 명', '2 million people'
    if currency:
        # '사원' is an employee, not 4 won: a Hangul numeral with 원 needs a unit of its own.
        return any(c.isdigit() or c in SMALL_UNITS or c in BIG_UNITS for c in num) or bool(
            m["mult"]
        )
    if m["mult"]:
        return m["mult"].lower() != "thousand" or asked or _money_word(text, m)
    if _THOUSANDS.fullmatch(num) and int(num.replace(",", "")) >= _LEAST_WRITTEN:
        return True  # '300,000', '4,500,000': written as an amount is ('1,800' may be 만원)
    if not any(c in BIG_UNITS for c in num):
        return False  # a bare '300' or '삼천' is ambiguous
    if any(c.isdigit() for c in num):
        return True  # '300만', '2억 5천'
    syllables = len(num.replace(" ", ""))
    if syllables < 2 or not _ANSWER_TAIL.match(text, m.end()):
        return False  # '만약', '이만큼', '천만에요', '오만하다'
    if syllables >= _RUN_SYLLABLES or not num.endswith("만") or _money_word(text, m):
        return True  # '이천만', '이억 삼천', '이억', '돈은 삼만 빌려줬어요'
    if not asked:
        return False  # '삼만' alone in a story: a count as often as money
    return num not in _EVERYDAY_WORDS or bool(_ANSWER_END.match(text, m.end()))


def _money_word(text: str, m: re.Match[str]) -> bool:
    """Whether a word of money stands next to the numeral, in its clause ("돈은 이만 빌려줬어요";
    not "보증금 얘기는 됐고 | 이만 가볼게요")."""
    clause = next((c for c in clause_spans(text) if c.start <= m.start() < c.end), None)
    start, end = (clause.start, clause.end) if clause else (0, len(text))
    return bool(
        _MONEY_WORD.search(text, start, m.start()) or _MONEY_WORD.search(text, m.end(), end)
    )


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


# A bare number Korean speech counts in 만 ("빌린건 50이요", "보증금 5천에", "총4800"): two to
# five digits, or a group ending in 천 or 백 ("5천", "삼천"), standing as a word.
_BARE_MAN = re.compile(
    rf"(?<![\d.,:/\-])(?P<num>(?:[\d{_K}]?천)?(?:[\d{_K}]?백)?(?<=[천백])|\d{{2,5}})"
    r"(?=\s|$|[.,!?~)]|(?:은|는|을|를|도|이|에|요|이요|이네요|이에요|예요|이었어요|였어요|이래요|"
    r"래요|입니다|정도|쯤|씩|이고|인데)요?(?![가-힣]))"  # "800정도요" (legal_set15 R1)
)


_NOT_MONEY_AFTER = re.compile(r"\s?(?:일|월|시|분|호|층|번|%|세|살)")


# Words naming a total: "합쳐서 3000만원", "총 800정도요", "in total", "altogether".
TOTAL_SAID = re.compile(
    r"합쳐|합해|합치|합하|합계|(?<![가-힣])총|(?i:\bin total\b|\baltogether\b|\badds? up to\b)"
)


def bare_in_man(text: str, *, korean: bool) -> list[Match]:
    """The bare numbers of a Korean answer about money that count in 만 as people say them
    ("빌린건 50이요" is 500,000원, "보증금 5천에 월세 45만원" a deposit of 5천만원): not a year,
    not inside an amount `find_amounts` reads, not a date, a time or a count. A reading to
    confirm with the person, never a value to keep on its own: "50" may also be 50원.
    `korean`: the conversation is in Korean (English speech does not count so)."""
    if not korean:
        return []
    taken = find_amounts(text, asked=True)
    out = []
    for m in _BARE_MAN.finditer(text):
        if any(t.start < m.end() and m.start() < t.end for t in taken):
            continue
        if _COUNTED_AFTER.match(text, m.end()) or _NOT_MONEY_AFTER.match(text, m.end()):
            continue
        value = korean_number(m["num"])
        if not value or (m["num"].isdigit() and 1900 <= value <= 2100):
            continue
        out.append(Match(to_int(value * BIG_UNITS["만"]), m.start(), m.end()))
    return out


def parse_amount(text: str) -> int | None:
    """The single amount of money (integer KRW) in an answer to a question about an amount, or
    None when there is none or the answer gives two."""
    value = single(find_amounts(text, asked=True))
    return value if isinstance(value, int) else None
