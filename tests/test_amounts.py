"""One rule for amounts in free text and in answers (graphs/common/normalize/amounts.py).

A numeral in Hangul without 원 is money when it is shaped like an amount (a run of number
words: "이억 삼천", "이천만"; or 억: "이억") or a money word or the question says so; everyday
words made of number syllables ("이만 가볼게요", "오만하다", "삼천포") never are. Answers to an amount question
read every amount as before; free text reads runs of number words and amounts with units.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphs.common.normalize import find_amounts, parse_amount

_DIGITS = "일이삼사오육칠팔구"


def _hangul(n: int) -> str:
    """A number below 10,000 in Sino-Korean ('3500' -> '삼천오백', '1' -> '일')."""
    if n == 1:
        return "일"
    out = ""
    for value, unit in ((1000, "천"), (100, "백"), (10, "십")):
        digit = n // value % 10
        if digit:
            out += ("" if digit == 1 else _DIGITS[digit - 1]) + unit
    return out + (_DIGITS[n % 10 - 1] if n % 10 else "")


@st.composite
def spoken_amounts(draw: st.DrawFn) -> tuple[str, int, bool]:
    """(an amount as people write it, its value, whether it may take 원 after it)."""
    eok = draw(st.integers(0, 99))
    man = draw(st.integers(0, 9999).filter(lambda m: eok or m))
    style = draw(st.sampled_from(["hangul", "digits", "commas", "thousands", "won"]))
    space = draw(st.sampled_from([" ", ""]))
    value = eok * 10**8 + man * 10**4
    if style == "won":
        return f"{value:,}원", value, False
    if style == "thousands" and eok and man and man % 1000 == 0:
        # '2억 3천', '이억 삼천': a thousands group after 억 counts in 만
        k = man // 1000
        head, tail = (
            (f"{eok}억", f"{k}천")
            if draw(st.booleans())
            else (
                f"{_hangul(eok)}억",
                f"{_hangul(k)}천",
            )
        )
        return f"{head}{space}{tail}", value, False
    spell = _hangul if style == "hangul" else (lambda n: f"{n:,}" if style == "commas" else str(n))
    parts = ([f"{spell(eok)}억"] if eok else []) + ([f"{spell(man)}만"] if man else [])
    return space.join(parts), value, True


ANSWER_TAILS = [
    "",
    "이요",
    "이에요",
    " 정도요",
    " 정도",
    "쯤",
    "쯤이요",
    " 이상",
    " 넘게요",
    " 같아요",
]
WON_TAILS = [" 원", "원", "원이요", "원 정도요", " 원이에요"]
ANSWER_HEADS = ["", "음 ", "대략 ", "약 ", "총 ", "보증금은 ", "아마 "]


@given(spoken_amounts(), st.sampled_from(ANSWER_HEADS), st.data())
def test_every_amount_answer_is_read(amount: tuple[str, int, bool], head: str, data) -> None:
    """Each amount the answer reader took before (digits, Hangul numerals, runs, 억 then 천, with
    or without 원 and an answer's ending) is still read, with its value."""
    words, value, takes_won = amount
    tail = data.draw(st.sampled_from(ANSWER_TAILS + (WON_TAILS if takes_won else [])))
    assert parse_amount(f"{head}{words}{tail}") == value


@given(spoken_amounts(), st.sampled_from(["작년에 {} 날렸어요", "{}", "그때 {} 들었어요"]))
def test_free_text_reads_runs_and_units(amount: tuple[str, int, bool], frame: str) -> None:
    """In free text an amount with digits, 원, or a run of number words is read."""
    words, value, _ = amount
    if not any(c.isdigit() for c in words) and "원" not in words:
        spelled = words.replace(" ", "")
        if len(spelled) < 3 and spelled.endswith("만"):  # "삼만", "오만": only with a money word
            words, spelled = words + "원", spelled + "원"
    assert [m.value for m in find_amounts(frame.format(words))] == [value]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("이억 삼천만원", 230_000_000),
        ("이억 삼천만 원 빌려줬어요", 230_000_000),
        ("2억 3천", 230_000_000),
        ("이억 삼천", 230_000_000),
        ("그때 이억 삼천 정도 들었어요", 230_000_000),
        ("그때 이억 날렸어요", 200_000_000),  # 억 is shaped like an amount
        ("보증금이 삼만이에요", 30_000),  # a one-word numeral with a money word
        ("돈은 오만 빌려줬어요", 50_000),
    ],
)
def test_free_text_amounts(text: str, expected: int) -> None:
    assert [m.value for m in find_amounts(text)] == [expected]
    assert parse_amount(text) == expected


@pytest.mark.parametrize(
    ("text", "free", "answer"),
    [
        # a one-word 만 numeral alone in a story is a count as often as money; as the answer to
        # an amount question it is money, and so are the everyday words when they stand alone
        ("삼만 받아야 해요", [], 30_000),
        ("백만 정도", [], 1_000_000),
        ("이만이요", [], 20_000),
        ("오만 정도요", [], 50_000),
        ("일만 원이요", [10_000], 10_000),
        ("이만 가볼게요", [], None),
        ("일만 했어요", [], None),
    ],
)
def test_one_word_numerals(text: str, free: list[int], answer: int | None) -> None:
    assert [m.value for m in find_amounts(text)] == free
    assert parse_amount(text) == answer


NEVER = [
    "이만 가볼게요",
    "오늘은 이만 할게요",
    "이만하면 됐어요",
    "이제 그만",
    "이제 그만할게요",
    "일단 기다려볼게요",
    "오만하다고 하더라고요",
    "너무 오만해요",
    "삼천포로 빠졌네요",
    "만약에 못 받으면요",
    "만약",
    "천만에요",
    "천만다행이에요",
    "일만 했어요",
]
# Money words in another clause or sentence do not make these words money.
NEVER_BEFORE = ["", "돈은 다 받았고 ", "보증금 얘기는 끝났어요. ", "네 "]


@given(st.sampled_from(NEVER), st.sampled_from(NEVER_BEFORE))
def test_everyday_words_are_never_amounts(words: str, before: str) -> None:
    text = before + words
    assert find_amounts(text) == []
    assert parse_amount(text) is None  # not even as the answer to an amount question


_PIECES = st.sampled_from(
    ["이", "오", "삼", "천", "백", "십", "만", "억", "원", "2", "30", ",000", ".5", " ", "요",
     "이요", "정도", "돈", "보증금", "빌려줬어요", "가볼게요", "하다", "thousand", "won", "명"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_an_answer_reads_whatever_free_text_reads(text: str) -> None:
    """The question only adds what it vouches for: every amount read in free text is read
    in the answer too, at the same place."""
    free = {(m.start, m.end, m.value) for m in find_amounts(text)}
    asked = {(m.start, m.end, m.value) for m in find_amounts(text, asked=True)}
    assert free <= asked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # thousands written with separators are an amount (legal_set6 tV1, tV2)
        ("He wants to deduct 300,000 for cleaning and 450,000 for the fridge", [300_000, 450_000]),
        ("i lend 4,500,000 not 5,000,000", [4_500_000, 5_000_000]),
        # a count with separators, a year, a bare number are not
        ("1,200 people signed it in 2025", []),
        ("300 받았으니", []),
        ("통장 다시 보니까 1,800 보냈어요", []),  # below 10,000: shorthand for 1,800만원 (tW6)
    ],
)
def test_thousands_with_separators(text: str, expected: list[int]) -> None:
    assert [m.value for m in find_amounts(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # legal_set11 C3: four loans in one breath, the first alone was kept
        (
            "처음에 2024년 12월10일 오백만원 그다음 2025년 3월에 삼백 또 2025년 9월15일 이백 "
            "올해 6월20일 사백 빌려줫어",
            [5_000_000, 3_000_000, 2_000_000, 4_000_000],
        ),
        ("500만원 중에 200 갚았어요", [5_000_000, 2_000_000]),
        ("천오백만원 빌려줬는데 천삼백은 아직이에요", [15_000_000, 13_000_000]),
        # counts, days and years beside it are not money; nor a bare number before it
        ("300만원 빌려줬고 2명이 15일에 왔어요", [3_000_000]),
        ("500만원 빌려주고 2025 3월에 또", [5_000_000]),
        ("천만원 빌려줬고 천천히 갚는대요", [10_000_000]),
        ("삼백 빌려줬어요 나중에 500만원 더", [5_000_000]),
        ("300,000 won then 200 more", [300_000]),
    ],
)
def test_bare_numbers_listed_after_an_amount_in_man_count_in_man(
    text: str, expected: list[int]
) -> None:
    assert [m.value for m in find_amounts(text)] == expected
