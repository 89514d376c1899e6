"""An amount told in parts (legal_set10 Z1): "세번에 나눠서 보냈어요. 2023년 3월 10일에
1000만원, 5월 20일에 500만원, 8월 2일에 1500만원이요" to "얼마를 빌려주셨나요?" kept only the
last part (15,000,000) as the amount lent. The parts' sum is offered to confirm; each part stays in
the memo."""

from __future__ import annotations

import pytest

from bot.engine import Engine
from graphs.legal.extract import FactExtractor
from knowledge.loader import Knowledge
from tests.support import NOW
from tests.test_hardening import choice, graph_values, joined, offered, text

PARTS = (
    "세번에 나눠서 보냈어요. 2023년 3월 10일에 1000만원, 5월 20일에 500만원, 8월 2일에 1500만원이요"
)


async def asked_amount(engine: Engine) -> None:
    first = await engine.handle(text("친구 김민수한테 돈을 빌려줬는데 안 갚아요"))
    assert first.field == "amount"


async def test_parts_are_summed_and_kept_once_confirmed(engine: Engine) -> None:
    await asked_amount(engine)
    shown = await engine.handle(text(PARTS, minutes=1))
    assert "30,000,000" in joined(shown)
    assert "a:amount:confirm" in offered(shown)
    values = await graph_values(engine)
    assert "amount" not in values["facts"]  # nothing kept before the yes
    parts = sorted(i["amount"] for i in values["memo"] if i["section"] == "money")
    assert parts == [5_000_000, 10_000_000, 15_000_000]
    await engine.handle(choice("a:amount:confirm"))
    assert (await graph_values(engine))["facts"]["amount"] == 30_000_000


async def test_a_no_to_the_sum_keeps_no_amount(engine: Engine) -> None:
    await asked_amount(engine)
    await engine.handle(text(PARTS, minutes=1))
    await engine.handle(choice("a:amount:deny"))
    assert "amount" not in (await graph_values(engine))["facts"]


async def test_a_total_named_is_the_answer_not_a_sum(engine: Engine) -> None:
    await asked_amount(engine)
    await engine.handle(
        text("합쳐서 3000만원이요. 1000만원이랑 2000만원 두 번 보냈어요", minutes=1)
    )
    assert (await graph_values(engine))["facts"]["amount"] == 30_000_000


@pytest.fixture
def extractor(knowledge: Knowledge) -> FactExtractor:
    return FactExtractor(knowledge)


@pytest.mark.parametrize(
    ("sub_type", "text", "summed"),
    [
        # items of one loss, named by what each paid for (legal_set10 Z2 kept the last alone)
        (
            "NEIGHBOR_DISPUTE",
            "천장 석고보드하고 페인트 180만원 견적 나왔고, 도배는 95만원 이요. "
            "그리고 누수탐지 부른거 15만원 내가 냇어요",
            2_900_000,
        ),
        ("FRAUD", "I sent 2 million on May 3 and 1.5 million on May 10", 3_500_000),
        # no sum: the answer opens with its amount, names its total, or tells kinds apart
        ("LOAN", "300만원이요 갚은건 440 넘게", None),
        ("LOAN", "합쳐서 3000만원이요 1000만원 2000만원", None),
        # legal_set12 S1: the total named, then a part of it (51,000,000 was offered)
        (
            "FRAUD",
            "다 합치면 4300만원이요. 그중에 은행에서 지급정지해서 800만원은 묶였다고 들었어요",
            None,
        ),
        ("WAGE_ARREARS", "월급 250만원인데 3달치 750만원 못받았어요", None),
        # an amount set against the other (legal_set15 B1 was offered their sum)
        ("WAGE_ARREARS", "4 month so 9,400,000. but he pay one time 1,500,000 in september", None),
        ("LOAN", "두 번 빌려줬는데 500만원은 갚았고 1000만원 남았어요", None),
        # legal_set13 A1: a total, what was paid of it and what is left (17,480,000 offered)
        (
            "WAGE_ARREARS",
            "38일 일했으니까 874만원인데 9월10일에 200 받았고 10월15일에 100 아니 150 받았어요 "
            "그래서 524만원 남았어요",
            None,
        ),
        # the last, undated, is the others together: their total told (legal_set18 S1 was
        # offered 3,560,000, B2 10,000,000), not one more part; a dated last one is a part
        (
            "GOODS_PAYMENT",
            "10 months of membership is 800,000 and the 14 PT sessions are 980,000, "
            "so about 1,780,000 total",
            1_780_000,
        ),
        (
            "WAGE_ARREARS",
            "the October salary is 2.5 million, plus I worked Nov 1-15 so 1,250,000 for that, "
            "3.75 million in all",
            3_750_000,
        ),
        (
            "FRAUD",
            "세번에 나눠서 보냈어요. 3월 10일에 1000만원, 5월 20일에 500만원, 8월 2일에 1500만원이요",
            30_000_000,
        ),
    ],
)
def test_which_answers_add_up_parts(extractor, sub_type, text, summed) -> None:
    reading = extractor.read(text, sub_type=sub_type, asked="amount", now=NOW)
    assert (reading.answer if reading.answer_summed else None) == summed


@pytest.mark.parametrize(
    ("sub_type", "text"),
    [
        # amounts of different kinds, none opening the answer nor named its total (legal_set14
        # A1 kept the detection fee, the last amount, as the whole loss)
        (
            "DAMAGES",
            "인테리어 업체에서 견적 340만원 나왔고요 맥북은 작년 2월에 289만원 주고 산건데 "
            "수리비 168만원 이래요. 누수탐지 업체도 제가 불러서 22만원 냈어요",
        ),
        ("LOAN", "두 번 빌려줬는데 500만원은 갚았고 1000만원 남았어요"),
    ],
)
def test_several_amounts_of_different_kinds_are_no_answer(extractor, sub_type, text) -> None:
    reading = extractor.read(text, sub_type=sub_type, asked="amount", now=NOW)
    assert reading.answer is None
    assert reading.invalid == "amount_several"


async def test_several_amounts_are_listed_back_and_each_kept_in_the_memo(engine: Engine) -> None:
    await asked_amount(engine)
    shown = await engine.handle(
        text("두 번 빌려줬는데 500만원은 갚았고 1000만원 남았어요", minutes=1)
    )
    said = joined(shown)
    assert "5,000,000" in said and "10,000,000" in said
    values = await graph_values(engine)
    assert "amount" not in values["facts"]
    kept = sorted(i["amount"] for i in values["memo"] if i["section"] == "money")
    assert kept == [5_000_000, 10_000_000]
    await engine.handle(text("합계 1500만원이요", minutes=2))
    assert (await graph_values(engine))["facts"]["amount"] == 15_000_000


async def test_a_bare_total_named_among_written_parts_is_the_answer_to_confirm(
    engine: Engine,
) -> None:
    """ "총 800정도요" before the parts (legal_set15 R1 kept the last part, 1,000,000, as the
    amount lent): the total, read in 만, confirmed."""
    await asked_amount(engine)
    shown = await engine.handle(
        text(
            "총 800정도요 여러번 나눠서 빌려줬어요 작년 3월 12일에 300만원 보내줬고 "
            "6월 5일에 150 9월 20일에 200 그리고 올해 1월 8일에 100만원",
            minutes=1,
        )
    )
    assert "8,000,000" in joined(shown)
    assert "a:amount:confirm" in offered(shown)
    await engine.handle(choice("a:amount:confirm"))
    assert (await graph_values(engine))["facts"]["amount"] == 8_000_000
