"""The reader seam: a message as a typed Reading (graphs/common/reading.py) read by the rules
reader. Clauses carry what they do; every value found keeps its span and the role that decides
whether it is recorded: a supposition, a value taken back or another event's value is in the
Reading, never in the facts."""

from __future__ import annotations

from datetime import datetime

import pytest

from graphs.common.reading import ASKED, CUED, About, Act, Role
from graphs.legal.extract import FactExtractor
from knowledge.loader import Knowledge
from tests.test_graph import Driver

NOW = datetime(2026, 11, 26, 12, 0)


@pytest.fixture(scope="module")
def reader(knowledge: Knowledge) -> FactExtractor:
    return FactExtractor(knowledge)


def roles(reading, kind: str) -> list[tuple[object, Role]]:
    return [(v.value, v.role) for v in reading.values if v.kind == kind]


@pytest.mark.parametrize(
    ("text", "supposed"),
    [
        ("만약 1000만원이 넘으면 소송할 수 있나요?", 10_000_000),
        ("만일 500만원만 돌려받는다면 합의해도 될까요", 5_000_000),
        ("What if he only pays back 1,000,000 won?", 1_000_000),
        ("If I claim 2,000,000 won, would I win?", 2_000_000),
    ],
)
def test_a_value_said_in_a_supposition_is_no_fact(
    reader: FactExtractor, text: str, supposed: int
) -> None:
    reading = reader.read(text, sub_type="LOAN", asked=None, now=NOW)
    assert roles(reading, "amount") == [(supposed, Role.SUPPOSED)]
    assert "amount" not in reading.facts
    assert reading.supposed[0].field == "amount"  # which field it would have been, for staff
    (clause,) = reading.clauses
    assert Act.HYPOTHETICAL in clause.acts


def test_a_stated_value_beside_a_supposition_is_kept(reader: FactExtractor) -> None:
    reading = reader.read(
        "친구한테 300만원 빌려줬어요. 만약 500만원이었으면 형사고소도 되나요?",
        sub_type="LOAN",
        asked=None,
        now=NOW,
    )
    assert reading.facts["amount"] == 3_000_000
    assert roles(reading, "amount") == [(3_000_000, Role.FACT), (5_000_000, Role.SUPPOSED)]
    first, second = reading.clauses
    assert first.acts == {Act.STATEMENT}
    assert {Act.HYPOTHETICAL, Act.QUESTION} <= second.acts
    assert [c.text for c in reading.questions()] == [second.text]


def test_a_supposed_answer_is_no_answer(reader: FactExtractor) -> None:
    # "차용증 있냐고요? 만약 없으면 어떻게 돼요?" does not say there is no evidence.
    reading = reader.read(
        "만약 차용증이 없으면 어떻게 되나요?", sub_type="LOAN", asked="evidence", now=NOW
    )
    assert reading.answer is None
    assert "evidence" not in reading.facts


def test_values_taken_back_and_of_another_event_keep_their_roles(
    reader: FactExtractor,
) -> None:
    reading = reader.read("300만원 아니고 400만원이요", sub_type="LOAN", asked=None, now=NOW)
    assert roles(reading, "amount") == [(3_000_000, Role.TAKEN_BACK), (4_000_000, Role.FACT)]
    assert reading.facts == {"amount": 4_000_000}
    assert reading.correction and Act.CORRECTION in reading.clauses[0].acts
    assert reading.taken_back == (("amount", 3_000_000, "300만원"),)

    other = reader.read("보험사가 80만원 준대요", sub_type="DAMAGES", asked=None, now=NOW)
    assert (800_000, Role.OTHER_EVENT) in roles(other, "amount")
    assert other.other_values == 1 and not other.correction


def test_every_value_with_a_span_is_the_words_at_that_span(reader: FactExtractor) -> None:
    text = "작년 3월 5일에 친구 김민수한테 약 300만원을 빌려줬고 올해 6월 말까지 갚기로 했어요"
    reading = reader.read(text, sub_type="LOAN", asked=None, now=NOW)
    spanned = [v for v in reading.values if v.span is not None]
    assert {v.kind for v in spanned} == {"amount", "date"}
    for value in spanned:
        assert text[value.span[0] : value.span[1]] == value.said
        assert reading.clause_of(value) is reading.clauses[0]
    assert reading.facts["incident_date"] == "2025-03-05"
    assert reading.facts["repayment_date"] == "2026-06"
    assert "repayment_date" in reading.cued  # by its word, 갚기로
    date = next(v for v in reading.values if v.field == "repayment_date")
    assert date.cued and date.confidence == CUED
    assert reading.approx == {"amount"}  # 약 300만원
    answered = reader.read("6월이요", sub_type="LOAN", asked="incident_date", now=NOW)
    (answer,) = [v for v in answered.values if v.role is Role.ANSWER]
    assert (answer.role, answer.confidence, answer.cued) == (Role.ANSWER, ASKED, False)


@pytest.mark.parametrize(
    ("text", "approx"),
    [
        ("약 300만원이요", True),
        ("300만원 정도요", True),
        ("about 3,000,000 won", True),
        ("300만원이요", False),
        ("300만원 경찰에 신고했어요", False),  # 경 of 경찰 is no "around"
    ],
)
def test_an_approximate_answer_is_marked(reader: FactExtractor, text: str, approx: bool) -> None:
    reading = reader.read(text, sub_type="LOAN", asked="amount", now=NOW)
    assert reading.answer == 3_000_000
    assert ("amount" in reading.approx) is approx


@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("제가 친구한테 빌려줬어요", About.SELF),
        ("I lent him the money", About.SELF),
        ("엄마가 보증을 섰어요", About.OTHER),
        ("돈을 안 갚아요", About.UNSAID),
    ],
)
def test_whom_a_clause_is_about(reader: FactExtractor, text: str, about: About) -> None:
    (clause,) = reader.read(text, sub_type="LOAN", asked=None, now=NOW).clauses
    assert clause.about is about


def test_requests_and_contrasts_are_read(reader: FactExtractor) -> None:
    reading = reader.read(
        "빌려준 건 맞지만 증거는 없어요. 어떻게 해야 할지 알려주세요",
        sub_type="LOAN",
        asked=None,
        now=NOW,
    )
    first, second = reading.clauses
    assert Act.CONTRAST in first.acts and Act.REQUEST in second.acts
    assert reading.facts.get("evidence") is False


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("돈 돌려받고 싶음 돌려받을수있음?", True),  # legal_set16 R5: a clipped question
        ("이거 사기임? 신고 가능함?", True),
        ("한 20? 에어팟프로2", False),  # a number told unsure
    ],
)
def test_a_question_typed_with_a_clipped_ending_asks(
    reader: FactExtractor, text: str, asks: bool
) -> None:
    reading = reader.read(text, sub_type="FRAUD", asked=None, now=NOW)
    assert any(c.asks for c in reading.clauses) is asks


async def test_a_supposition_in_the_first_message_is_listed_not_recorded(driver: Driver) -> None:
    await driver.send(
        "친구한테 2024년 3월에 돈을 빌려줬는데 안 갚아요. 만약 1000만원이 넘으면 소송할 수 있나요?"
    )
    values = await driver.values()
    assert values["sub_type"] == "LOAN"
    assert "amount" not in values["facts"]
    assert values["facts"]["incident_date"] == "2024-03"
    assert any("1000만원이 넘으면" in q["text"] for q in values["questions"])


async def test_an_approximate_amount_is_shown_as_approximate(driver: Driver) -> None:
    await driver.send("친구한테 돈을 빌려줬는데 안 갚아요")
    values = await driver.values()
    assert values["sub_type"] == "LOAN"
    while (await driver.values()).get("asking") != "amount":
        await driver.send("모르겠어요")
    await driver.send("한 300만원 정도요")
    values = await driver.values()
    assert values["facts"]["amount"] == 3_000_000
    assert "amount" in values["approx"]


# --- the medical reader: the same Reading, the slot items as its values ----------------------


def test_the_medical_reader_gives_each_item_its_clauses_role() -> None:
    from graphs.medical import reader
    from graphs.medical.about import extractor

    text = "What is gout? I take metformin. 이부프로펜 말고 타이레놀 먹어요"
    reading = reader.read(extractor(), text).reading
    roles_of = {v.value.name: v.role for v in reading.values}
    assert roles_of == {
        "gout": Role.UNPLACED,  # only asked about
        "metformin": Role.FACT,
        "ibuprofen": Role.TAKEN_BACK,  # the set-aside side of a contrast
        "acetaminophen": Role.FACT,
    }
    assert [c.text for c in reading.questions()] == ["What is gout?"]
    assert reading.clauses[0].about is About.UNSAID  # it tells nothing of the person
    assert reading.clauses[1].about is About.SELF
    assert any(Act.CONTRAST in c.acts for c in reading.clauses)
    for value in reading.values:
        assert reading.clause_of(value) is not None


def test_a_reading_inside_a_question_is_a_fact_to_confirm_and_a_relatives_is_theirs() -> None:
    from graphs.medical import reader
    from graphs.medical.about import extractor

    (value,) = reader.read(extractor(), "A1c 7.1 괜찮은 건가요?").reading.values
    assert (value.role, value.value.asked, value.value.unsure) == (Role.FACT, True, True)
    assert value.confidence < reader.DEFAULT
    (clause,) = reader.read(extractor(), "아버지가 당뇨가 있으세요").reading.clauses
    assert clause.about is About.OTHER
    (aside,) = reader.read(extractor(), "술 얘기 안 했는데요").reading.values
    assert aside.role is Role.TAKEN_BACK


def test_a_value_its_field_word_placed_outranks_a_default_placement(
    reader: FactExtractor,
) -> None:
    """The notice date is the day told with the notice, not a later day the date field would
    take by default (legal_set14 R4 got the hearing proposed as the notice date)."""
    reading = reader.read(
        "사전통지서는 11월 20일에 구청에서 받았고, 청문은 12월 11일 오후 2시로 잡혀 있습니다.",
        sub_type="BUSINESS_SUSPENSION",
        asked="objection_filed",
        now=NOW,
    )
    assert reading.facts.get("notice_date") == "2026-11-20"
