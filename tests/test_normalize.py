"""Table-driven tests of the offline normalisers (amounts, dates, yes/no, counts, durations)."""

from __future__ import annotations

from datetime import datetime

import pytest

from graphs.common.normalize import (
    Match,
    find_amounts,
    find_dates,
    is_future,
    parse_amount,
    parse_date,
    parse_duration_months,
    parse_int,
    parse_yes_no,
)
from knowledge.loader import KNOWLEDGE_DIR, load_file
from knowledge.models import Lexicon

NOW = datetime(2026, 11, 22, 10, 0)  # a Sunday
LEXICON = load_file(KNOWLEDGE_DIR / "lexicon.yaml", Lexicon)
YES = [w for words in LEXICON.yes.values() for w in words]
NO = [w for words in LEXICON.no.values() for w in words]


# --- amounts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("300만원", 3_000_000),
        ("3백만 원", 3_000_000),
        ("이천만 원", 20_000_000),
        ("1억 2천만원", 120_000_000),
        ("3,000,000원", 3_000_000),
        ("85만", 850_000),
        ("3 million won", 3_000_000),
        ("50만 원", 500_000),
        ("오십만원", 500_000),
        ("천오백만원", 15_000_000),
        ("2억", 200_000_000),
        ("1.5억", 150_000_000),
        ("500원", 500),
        ("KRW 1,200,000", 1_200_000),
        ("1,200,000 won", 1_200_000),
        ("₩50,000", 50_000),
        ("0원", 0),
        ("-30만원", -300_000),
        ("마이너스 30만원", -300_000),
        ("만원", 10_000),
        ("오천원", 5_000),
        ("5천원", 5_000),
        ("3만 5천원", 35_000),
        ("1,500만 원", 15_000_000),
        ("3억5000만원", 350_000_000),
        ("2.5 million", 2_500_000),
        ("보증금 이천만원이요", 20_000_000),
        ("30만원 정도요", 300_000),
        # A bare thousands group after 억 is read in 만: '2억 5천' is 250,000,000.
        ("2억 5천", 250_000_000),
        ("1억 2천이요", 120_000_000),
        # In a whole answer a Hangul-only numeral needs no 원.
        ("이천만이요", 20_000_000),
        ("2억 이상", 200_000_000),
    ],
)
def test_parse_amount(text: str, expected: int) -> None:
    assert parse_amount(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "300",  # a bare number is ambiguous
        "만",
        "3천",
        "2024년",
        "3월",
        "6/1",
        "2명",
        "3만 명",
        "2 million people",
        "기억이 안 나요",  # 억 inside a word
        "억울해요",
        "사원이에요",  # 사원 is an employee, not 4 won
        "이만큼",
        "천만에요",
        "잘 모르겠어요",
        "보증금 1억에 월세 50만원",  # two different amounts
    ],
)
def test_parse_amount_none(text: str) -> None:
    assert parse_amount(text) is None


def test_find_amounts_in_order_with_spans() -> None:
    text = "금액은 500만원이 아니라 50만원이에요"
    found = find_amounts(text)
    assert [m.value for m in found] == [5_000_000, 500_000]
    assert [text[m.start : m.end] for m in found] == ["500만원", "50만원"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024년 6월 1일에 300만원을 빌려줬어요", [3_000_000]),
        ("친구 2명한테 각각 50만원씩", [500_000]),
        ("6/1에 ₩50,000 보냈어요", [50_000]),
        ("300만 억울하게 잃었어요", [3_000_000]),
        ("300-400만원", [4_000_000]),
        ("이천만", [20_000_000]),  # a run of number words is shaped like an amount
        ("이만 가볼게요", []),  # an everyday word, and no money word in its clause
        ("돈은 이만 빌려줬어요", [20_000]),
        ("만나서 얘기했어요", []),
        ("I won 3 times", []),
        # one amount in two English multipliers (legal_set10 Y1 kept 2,000,000 and 300,000)
        ("every month salary 2 million 300 thousand won", [2_300_000]),
        ("3 million and 200 thousand won", [3_200_000]),
        ("5 million 3 million", [5_000_000, 3_000_000]),
    ],
)
def test_find_amounts(text: str, expected: list[int]) -> None:
    assert [m.value for m in find_amounts(text)] == expected


# --- dates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("어제", "2026-11-21"),
        ("그저께", "2026-11-20"),
        ("그제", "2026-11-20"),
        ("오늘", "2026-11-22"),
        ("내일", "2026-11-23"),
        ("지난주", "2026-11-15"),
        ("지난 주에요", "2026-11-15"),
        ("지난달", "2026-10"),
        ("저번 달 15일", "2026-10-15"),
        ("이번 달", "2026-11"),
        ("작년", "2025"),
        ("재작년", "2024"),
        ("올해 3월", "2026-03"),
        ("작년 3월", "2025-03"),
        ("작년 12월 25일", "2025-12-25"),
        ("3개월 전", "2026-08"),
        ("두 달 전쯤", "2026-09"),
        ("2년 전", "2024"),
        ("이틀 전", "2026-11-20"),
        ("일주일 전", "2026-11-15"),
        ("2024년 6월 1일", "2024-06-01"),
        ("2024년 6월", "2024-06"),
        ("2024년", "2024"),
        ("24년 6월", "2024-06"),
        ("2024.6.1", "2024-06-01"),
        ("2024. 6. 1.", "2024-06-01"),
        ("2024-06-01", "2024-06-01"),
        ("24.6.1", "2024-06-01"),
        ("2024.6", "2024-06"),
        ("6/1", "2026-06-01"),
        ("12/25", "2025-12-25"),  # no year: the most recent 25 December, not one ahead
        ("6월 1일", "2026-06-01"),
        ("3월", "2026-03"),
        ("2024년 2월 29일", "2024-02-29"),
        ("yesterday", "2026-11-21"),
        ("today", "2026-11-22"),
        ("last month", "2026-10"),
        ("last year", "2025"),
        ("2 years ago", "2024"),
        ("last yr", "2025"),  # the chat abbreviation (legal_set12 B4)
        ("2 yrs ago", "2024"),
        ("3 days ago", "2026-11-19"),
        ("a month ago", "2026-10"),
        ("June 1, 2024", "2024-06-01"),
        ("1 June 2024", "2024-06-01"),
        ("i start 2024 march 4", "2024-03-04"),  # year first, as a Korean writer puts it
        ("since 2023 May", "2023-05"),
        ("the 1st of June", "2026-06-01"),
        ("in June", "2026-06"),
        ("in June 2024", "2024-06"),
        ("6.1", "2026-06-01"),
        ("6.1.", "2026-06-01"),
        ("6. 1.", "2026-06-01"),
        ("6.1에 빌려줬어요", "2026-06-01"),
        ("March 2024", "2024-03"),
        ("06/01/2024", "2024-06-01"),
        ("It started on 2024-06-01.", "2024-06-01"),
    ],
)
def test_parse_date(text: str, expected: str) -> None:
    assert parse_date(text, now=NOW) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2024.2.30",  # no such day
        "2025년 2월 29일",
        "13월",
        "300만원",
        "2명",
        "10년",  # a duration
        "3년 6개월",
        "1.5억",
        "2.5년",  # decimal numbers are no month.day
        "4.5점",
        "3.5%",
        "1.5 million",
        "1.5배",
        "v1.2",
        "0.5",
        "6.32",
        "2.30",  # no 30 February in any year
        "010-1234-5678",
        "그제서야 알았어요",
        "오늘날",
        "85년생",
        "2022년식",  # a model year (legal_set16 S6)
        "1/3씩",  # a share (legal_set16 R1)
        "잘 기억이 안 나요",
        "2024년 3월부터 2025년 1월까지",  # two dates
    ],
)
def test_parse_date_none(text: str) -> None:
    assert parse_date(text, now=NOW) is None


MARCH = datetime(2026, 3, 10, 9, 0)


@pytest.mark.parametrize(
    ("now", "text", "expected"),
    [
        # Sent in March: a later month or day of the year is last year's.
        (MARCH, "6/1", "2025-06-01"),
        (MARCH, "6월 1일", "2025-06-01"),
        (MARCH, "6월 1일에 빌려줬어요", "2025-06-01"),
        (MARCH, "6.1", "2025-06-01"),
        (MARCH, "6. 1.", "2025-06-01"),
        (MARCH, "June 1", "2025-06-01"),
        (MARCH, "the 1st of June", "2025-06-01"),
        (MARCH, "6월", "2025-06"),
        (MARCH, "6월에", "2025-06"),
        (MARCH, "지난 6월", "2025-06"),
        (MARCH, "in June", "2025-06"),
        (MARCH, "end of May", "2025-05"),
        (MARCH, "12/25", "2025-12-25"),
        (MARCH, "3/11", "2025-03-11"),  # tomorrow's date is a year back
        # ... and an earlier one, or the message day itself, is this year's.
        (MARCH, "3/10", "2026-03-10"),
        (MARCH, "3월 9일", "2026-03-09"),
        (MARCH, "1/1", "2026-01-01"),
        (MARCH, "3월", "2026-03"),  # the message's own month has begun
        (MARCH, "early March", "2026-03"),
        (MARCH, "2월", "2026-02"),
        (MARCH, "2/29", "2024-02-29"),  # the most recent 29 February
        # Sent in November.
        (NOW, "6/1", "2026-06-01"),
        (NOW, "6월", "2026-06"),
        (NOW, "in June", "2026-06"),
        (NOW, "11/22", "2026-11-22"),
        (NOW, "11/23", "2025-11-23"),
        (NOW, "11월", "2026-11"),
        (NOW, "12월", "2025-12"),
        (NOW, "12월 25일", "2025-12-25"),
        (NOW, "mid-December", "2025-12"),
    ],
)
def test_date_without_year_is_the_most_recent(now: datetime, text: str, expected: str) -> None:
    assert parse_date(text, now=now) == expected
    assert not is_future(expected, now=now)


@pytest.mark.parametrize(
    ("now", "text", "expected"),
    [
        (MARCH, "2026년 6월 1일", "2026-06-01"),
        (MARCH, "올해 6월", "2026-06"),
        (MARCH, "2026.6.1", "2026-06-01"),
        (NOW, "2027년 5월", "2027-05"),
        (NOW, "June 1, 2027", "2027-06-01"),
        (NOW, "내년 3월", "2027-03"),
        (NOW, "다음 달 5일", "2026-12-05"),
    ],
)
def test_written_year_is_kept_even_ahead(now: datetime, text: str, expected: str) -> None:
    assert parse_date(text, now=now) == expected
    assert is_future(expected, now=now)  # the validator flags it for a past-only fact


@pytest.mark.parametrize(
    ("now", "text", "expected"),
    [
        # For a fact that may lie ahead (a lease end, a repayment date): the message's year.
        (MARCH, "6/1", "2026-06-01"),
        (MARCH, "6월 1일", "2026-06-01"),
        (MARCH, "6.1", "2026-06-01"),
        (MARCH, "6월", "2026-06"),
        (MARCH, "in June", "2026-06"),
        (MARCH, "12/25", "2026-12-25"),
        (MARCH, "1/1", "2026-01-01"),
        (NOW, "12월 25일", "2026-12-25"),
        (NOW, "2월", "2026-02"),
        (NOW, "2025년 6월", "2025-06"),
        (NOW, "어제", "2026-11-21"),
    ],
)
def test_date_without_year_when_the_future_is_allowed(
    now: datetime, text: str, expected: str
) -> None:
    assert parse_date(text, now=now, allow_future=True) == expected


def test_find_dates_resolves_each_date_without_year() -> None:
    text = "6월 1일에 빌려주고 2월 3일에 또 빌려줬어요"
    assert [m.value for m in find_dates(text, now=MARCH)] == ["2025-06-01", "2026-02-03"]
    assert [m.value for m in find_dates(text, now=MARCH, allow_future=True)] == [
        "2026-06-01",
        "2026-02-03",
    ]


def test_leap_day_without_year_when_the_future_is_allowed() -> None:
    assert parse_date("2/29", now=MARCH, allow_future=True) is None  # 2026 has none


def test_find_dates_every_date_with_span() -> None:
    text = "2024년 3월에 입사해서 지난달 15일에 퇴사했어요"
    found = find_dates(text, now=NOW)
    assert [m.value for m in found] == ["2024-03", "2026-10-15"]
    assert [text[m.start : m.end] for m in found] == ["2024년 3월", "지난달 15일"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a year told with an age is no date (legal_set12 S1: "2026" in the chronology)
        ("아버지가 올해 80이신데 보이스피싱을 당하셨어요", []),
        ("딸은 작년에 17살이었고", []),
        ("올해 3월에 80세 되셨어요", ["2026-03"]),
    ],
)
def test_a_year_told_with_an_age_is_no_date(text: str, expected: list[str]) -> None:
    assert [m.value for m in find_dates(text, now=NOW)] == expected


def test_find_dates_day_before_ago_is_one_date() -> None:
    assert find_dates("6월 3일 전에 받았어요", now=NOW) == [Match("2026-06-03", 0, 5)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-22", False),
        ("2026-11-23", True),
        ("2026-11", False),  # this month has started
        ("2026-12", True),
        ("2026", False),
        ("2027", True),
        ("2025-12-31", False),
    ],
)
def test_is_future(value: str, expected: bool) -> None:
    assert is_future(value, now=NOW) is expected


def test_is_future_rejects_other_text() -> None:
    with pytest.raises(ValueError):
        is_future("작년", now=NOW)


# --- yes / no -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("네", True),
        ("예", True),
        ("넵", True),
        ("넵넵!", True),
        ("응", True),
        ("있어요", True),
        ("있습니다", True),
        ("네 있어요", True),
        ("yes", True),
        ("Yep", True),
        ("Yes, I do", True),
        ("없어요", False),
        ("아니요", False),
        ("아뇨", False),
        ("없음", False),
        ("아니요 없어요", False),
        ("no", False),
        ("Nope.", False),
        ("No, I don't", False),
        ("안 했어요", False),  # the longer no-cue wins over the yes-cue inside it
        # Korean answers the question's form: a content word overrides a leading particle.
        ("네, 없어요", False),
        ("아니요, 있어요", True),
        ("아니요 사장님이 월급을 3개월째 안 주고 있어요", False),
    ],
)
def test_parse_yes_no(text: str, expected: bool) -> None:
    assert parse_yes_no(text, yes=YES, no=NO) is expected


@pytest.mark.parametrize(
    "text",
    [
        "네가 그랬잖아요",  # 네 as 'you'
        "예전에 일했어요",
        "잘 모르겠어요",
        "I don't know",
        "I have no idea",
        "회사에 사장님이 있어요 근데 연락이 안돼요 진짜 답답해요",  # a story, not an answer
        "",
    ],
)
def test_parse_yes_no_none(text: str) -> None:
    assert parse_yes_no(text, yes=YES, no=NO) is None


def test_parse_yes_no_with_only_no_words() -> None:
    assert parse_yes_no("아이 없어요", yes=[], no=NO) is False
    assert parse_yes_no("네", yes=[], no=NO) is None


# --- counts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2명", 2),
        ("두 명", 2),
        ("두명이요", 2),
        ("셋", 3),
        ("아이 둘", 2),
        ("둘이에요", 2),
        ("3", 3),
        ("0", 0),
        ("three", 3),
        ("Three kids", 3),
        ("열두 명", 12),
        ("스무 살", 20),
        ("서른 살", 30),
        ("삼십 세", 30),
        ("5살", 5),
        ("한 번", 1),
        ("1,000명", 1000),
    ],
)
def test_parse_int(text: str, expected: int) -> None:
    assert parse_int(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "없어요",  # 0 from a no-word is the caller's job
        "하나도 없어요",
        "네",
        "세",
        "열 받아요",
        "열이 나요",
        "한두 명",
        "2~3명",
        "2명 중 1명",
        "2024년",
        "300만원",
        "3개월",
        "2.5명",
        "오명",
        "no one",
    ],
)
def test_parse_int_none(text: str) -> None:
    assert parse_int(text) is None


# --- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10년", 120),
        ("3년 6개월", 42),
        ("1년6개월", 18),
        ("1년 반", 18),
        ("6개월", 6),
        ("2.5년", 30),
        ("반년", 6),
        ("한 달", 1),
        ("석 달", 3),
        ("일 년", 12),
        ("10년 넘게 일했어요", 120),
        ("18 months", 18),
        ("2 years", 24),
        ("1.5 years", 18),
        ("a year and a half", 18),
        ("2 years and 3 months", 27),
    ],
)
def test_parse_duration_months(text: str, expected: int) -> None:
    assert parse_duration_months(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2년 전",
        "2024년",
        "24년 6월",
        "85년생",
        "이 달",
        "3주",
        "15일",
        "3 months ago",
        "3년 또는 4년",
    ],
)
def test_parse_duration_months_none(text: str) -> None:
    assert parse_duration_months(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a written year carries along its sentence's list (legal_set6 tV2)
        (
            "2,000,000 on 2025 June 3, 1,500,000 on July 15 and 1,000,000 on September 20",
            ["2025-06-03", "2025-07-15", "2025-09-20"],
        ),
        ("작년 3월에 빌려줬고 6월에 조금 갚았어요", ["2025-03", "2025-06"]),
        # not to a day before it in that year, nor into the next sentence
        ("작년 12월에 빌려줬고 3월에 갚았어요", ["2025-12", "2026-03"]),
        ("2025년 6월 3일에 빌려줬어요. 11월 20일에 연락왔어요", ["2025-06-03", "2026-11-20"]),
        # the weekday of a day told is that day (tW2)
        ("9월20일 토요일 밤 9시쯤이요", ["2026-09-20"]),
        # a year told beside a day is its year, not a year of its own (legal_set8 R5)
        ("She died on October 20 last year", ["2025-10-20"]),
        ("last year, October 20", ["2025-10-20"]),
        ("march 14 last yr", ["2025-03-14"]),
        ("aug 2 this yr he pushed me into the wall", ["2026-08-02"]),
        # the weekday said of a corrected day is that day's (legal_set13 B1 kept 2026-11-24)
        ("it was october 14 not 13, it was tuesday", ["2026-10-14"]),
        ("october 14, which was a tuesday", ["2026-10-14"]),
        ("it was friday the 18th of september", ["2026-09-18"]),
        # a weekday without its week, beside a day a month back, is of that time: no date of
        # this week (legal_set16 B2: "oct 31 … saying dont come on monday" gave 2026-11-23)
        ("on oct 14 i called and on friday he came", ["2026-10-14"]),
        ("It happened on the Saturday night, 25 October, around 1am", ["2026-10-25"]),
        ("on nov 17 i called and on friday he came", ["2026-11-17", "2026-11-20"]),
        # a weekday right after a day told alone is that day's, no date of its own (legal_set14
        # A1: "16일 금요일" gave the Friday before the message)
        ("아까 17일이라고 했는데 16일 금요일 밤이었어요", []),
        ("4월 3일에 갔고 금요일에 다시 갔어요", ["2026-04-03"]),
        # a day told alone later in the month of a day before it (legal_set17 S4, S6)
        ("10월 5일에 45만원 보냈고 7일에 또 30만원 보냈어요", ["2026-10-05", "2026-10-07"]),
        (
            "11월 10일에 신청했고 17일에 조사받았어요 18일부터 등교",
            ["2026-11-10", "2026-11-17", "2026-11-18"],
        ),
        ("10월 30일에 보냈고 2일에 또", ["2026-10-30"]),  # next month, or another: not guessed
        ("10월 5일에 일했고 3일 동안 쉬었어요 일당 10만원", ["2026-10-05"]),
        ("7일에 보냈어요", []),
        # a year told as 재작년 carries to the days after it only as a choice: both people
        # meant this year's (legal_set16 A3, A4); "작년" and a written year still carry
        ("재작년 5월부터 사귀다가 9월 28일에 헤어졌어요", ["2024-05", "2026-09-28"]),
        ("작년 3월에 빌려줬고 6월에 갚았어요", ["2025-03", "2025-06"]),
        ("2024년 5월 2일부터 8월 31일까지 일했어요", ["2024-05-02", "2024-08-31"]),
        # a weekday of a schedule is no day (legal_set14 R5: two deadlines from a visiting plan)
        ("격주 토요일 10시부터 일요일 6시까지 보기로 했고", []),
        ("every other saturday he takes them, last saturday he did not", ["2026-11-21"]),
        # a day is never the first digits of an amount ("october 2,350,000 not paid")
        ("october 2,350,000 not paid and nov 3, 2026 he fired him", ["2026-11-03"]),
        # a day counted from today in words reported from a day told before it is of that day,
        # no day of the message (a dismissal's date was refused: "내일" read as the 23rd)
        ("11월 20일에 문자로 내일부터 나오지 말라고 했어요", ["2026-11-20"]),
        ("on nov 3 he texted me not to come in tomorrow", ["2026-11-03"]),
        ("이번달 2일 밤에 사장이 문자로 내일부터 나오지 마세요 이렇게 보냈어요", ["2026-11-02"]),
        # a day back is when the words were said; a day in another sentence is the message's
        ("11월 3일에 돈 보냈는데 어제 또 달라고 했어요", ["2026-11-03", "2026-11-21"]),
        ("11월 3일에 보냈고 어제 다시 연락했어요", ["2026-11-03", "2026-11-21"]),
        ("he said on nov 3 to wait. yesterday he blocked me", ["2026-11-03", "2026-11-21"]),
    ],
)
def test_a_year_and_a_weekday_beside_the_dates_of_a_sentence(text, expected) -> None:
    assert [m.value for m in find_dates(text.lower(), now=NOW)] == expected


def test_a_day_after_a_year_two_back_offers_the_carried_year_beside_its_own() -> None:
    found = find_dates("재작년 5월부터 사귀다가 9월 28일에 헤어졌어요", now=NOW)
    assert (found[1].value, found[1].alternatives, found[1].yearless) == (
        "2026-09-28",
        ("2024-09-28",),
        True,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the day first where the first number can be no month (legal_set17 S5's invoices)
        (
            "invoice 1 dated 30/06 for 2,400,000 won, invoice 2 dated 31/07",
            ["2026-06-30", "2026-07-31"],
        ),
        ("paid on 15/04/2025", ["2025-04-15"]),
        ("on 6/1 we met", ["2026-06-01"]),  # both could be months: the month first, as before
        ("04/15/2025", ["2025-04-15"]),
        ("13/13 is nothing", []),
        # a code's number is no date ("INV-2026-07" gave 2026-07)
        ("Invoice 1 (INV-2026-07) and INV-2026-08", []),
        ("contract no. HK-2025-11-03", []),
        ("billed 2026-07 and paid 2026-08-03", ["2026-07", "2026-08-03"]),
    ],
)
def test_slashed_days_and_codes(text: str, expected: list[str]) -> None:
    assert [m.value for m in find_dates(text, now=NOW)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # legal_set19 A2 (both modes): the contract "before that" was this year's August
        (
            "2024년 10월 1일 입주하던 날 확정일자 받았어요. 계약서는 그 전에 8월 20일에 썼고요",
            ["2024-10-01", "2024-08-20"],
        ),
        (
            "I moved in on March 3 2024. Before that, on Feb 10 I signed",
            ["2024-03-03", "2024-02-10"],
        ),
        # before a recent day: the nearest year still (legal_set19 A4)
        (
            "지난달 23일에 신고했어요. 그전에 9월 15일부터 전화가 왔어요",
            ["2026-10-23", "2026-09-15"],
        ),
        # near-miss: no "before that", the nearest year
        (
            "2024년 10월 1일에 입주했어요. 8월 20일에 계약 갱신 얘기를 했어요",
            ["2024-10-01", "2026-08-20"],
        ),
    ],
)
def test_a_day_told_before_that_is_in_the_year_before_the_day_told(
    text: str, expected: list[str]
) -> None:
    assert [m.value for m in find_dates(text, now=NOW)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a month's name opening the answer (legal_set19 B4: kept as told, asked again)
        ("september, after summer vacation", ["2026-09"]),
        ("it was ok. October he came back", ["2026-10"]),
        # near-misses: words of their own, and a month inside a sentence without a preposition
        ("May I ask something", []),
        ("March is when it started?", []),
        ("we went to the september festival", []),
    ],
)
def test_a_month_named_first_is_that_month(text: str, expected: list[str]) -> None:
    assert [m.value for m in find_dates(text, now=NOW)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # m for million beside money's words (legal_set19 S1)
        ("3,300,000 won (1m deposit + 2.3m balance)", [3_300_000, 1_000_000, 2_300_000]),
        ("i paid 2m, then 1.5m", [2_000_000, 1_500_000]),
        # near-misses: distances
        ("100m 접근금지 나왔어요", []),
        ("he was 5m away from me", []),
    ],
)
def test_an_m_for_million_is_read_only_as_money(text: str, expected: list[int]) -> None:
    assert [m.value for m in find_amounts(text)] == expected
