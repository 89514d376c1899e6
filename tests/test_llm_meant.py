"""A model names what a yes/no or choice answer means (`meant`: "yes", option codes), and
whether a value was given as approximate; the rules check the codes are the field's and ask the
person with both where their own reading of the words differs. Real `openai` client against the
fake OpenAI server on 127.0.0.1, the real rules brain, and the real engine for the buttons."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from bot.engine import Engine
from graphs.common.reading import Role
from graphs.legal.llm_brain import LLMBrain, meant_value
from graphs.legal.rules_brain import RulesBrain
from knowledge.loader import Knowledge
from tests.fakes.openai_api import FakeOpenAI
from tests.test_hardening import choice, offered, session_of, text
from tests.test_llm import client_for, llm_settings

NOW = datetime(2026, 11, 26, 12, 0)


def reading(*values: dict, corrections: tuple[dict, ...] = ()) -> str:
    return json.dumps(
        {"clauses": [], "values": list(values), "corrections": list(corrections)},
        ensure_ascii=False,
    )


def value(said: str, field: str, role: str = "answer", meant: str = "", approx=False) -> dict:
    return {"said": said, "field": field, "role": role, "meant": meant, "approx": approx}


@pytest.fixture
async def fake():
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def brain(fake: FakeOpenAI, knowledge: Knowledge):
    client = client_for(fake)
    yield LLMBrain(knowledge, client, rules=RulesBrain(knowledge), budget=5.0)
    await client.close()


def test_codes_are_the_fields_own_or_nothing(knowledge: Knowledge) -> None:
    evidence = knowledge.k2.field("LOAN", "evidence_type")
    assert meant_value(evidence, "messages, bank_transfer") == ["messages", "bank_transfer"]
    assert meant_value(evidence, "messages, kakao") is None  # not an option of the field
    assert meant_value(evidence, "") is None
    unpaid = knowledge.k2.field("WAGE_ARREARS", "severance_unpaid")
    assert meant_value(unpaid, "yes") is True and meant_value(unpaid, "No") is False
    assert meant_value(unpaid, "maybe") is None and meant_value(unpaid, "yes, no") is None
    amount = knowledge.k2.field("LOAN", "amount")
    assert meant_value(amount, "yes") is None  # only yes/no and choice fields take codes


async def test_words_that_name_no_option_are_answered_by_the_codes_meant(
    fake: FakeOpenAI, brain: LLMBrain
) -> None:
    fake.reply_next(reading(value("둘 다요", "evidence_type", meant="messages,bank_transfer")))
    said = await brain.read("둘 다요", sub_type="LOAN", asked="evidence_type", now=NOW)
    assert said.answer == ["messages", "bank_transfer"]
    fake.reply_next(reading(value("둘 다요", "evidence_type", meant="messages,letters")))
    said = await brain.read("둘 다요", sub_type="LOAN", asked="evidence_type", now=NOW)
    assert said.answer is None and said.invalid == "choice"  # a code the field lacks: no answer


async def test_a_yes_no_the_rules_read_the_other_way_is_asked_with_both(
    fake: FakeOpenAI, brain: LLMBrain
) -> None:
    told = "He never gave me anything when I quit"
    fake.reply_next(reading(value(told, "severance_unpaid", meant="yes")))
    said = await brain.read(told, sub_type="WAGE_ARREARS", asked="severance_unpaid", now=NOW)
    assert said.answer is None  # neither reading is recorded on its own
    choose = said.choices["severance_unpaid"]
    assert (choose.value, *choose.alternatives) == (False, True)
    fake.reply_next(reading(value(told, "severance_unpaid", meant="no")))
    said = await brain.read(told, sub_type="WAGE_ARREARS", asked="severance_unpaid", now=NOW)
    assert said.answer is False and said.choices == {}  # the two agree


async def test_an_option_withdrawn_leaves_the_others(fake: FakeOpenAI, brain: LLMBrain) -> None:
    told = "I didn't call the police, I only told the management office"
    fake.reply_next(
        reading(
            value("I didn't call the police", "steps_taken", "taken_back", meant="police"),
            value("told the management office", "steps_taken", meant="management_office"),
        )
    )
    said = await brain.read(told, sub_type="NEIGHBOR_DISPUTE", asked="steps_taken", now=NOW)
    assert said.answer == ["management_office"]
    fake.reply_next(
        reading(value("I didn't call the police", "steps_taken", "taken_back", meant="police"))
    )
    said = await brain.read(
        "I didn't call the police", sub_type="NEIGHBOR_DISPUTE", asked="steps_taken", now=NOW
    )
    assert said.answer is None  # nothing is left of the rules' reading
    assert ("multi_choice", ["police"], "I didn't call the police") in said.taken_back


async def test_options_the_rules_missed_are_added_and_fewer_are_asked_with_both(
    fake: FakeOpenAI, brain: LLMBrain
) -> None:
    told = "threat to share, filmed secretly, money demanded"
    fake.reply_next(reading(value(told, "image_acts", meant="threatened,filmed,demanded")))
    said = await brain.read(told, sub_type="IMAGE_ABUSE", asked="image_acts", now=NOW)
    assert said.answer == ["threatened", "filmed", "demanded"]
    told = "I told the management office and called the police"
    fake.reply_next(reading(value(told, "steps_taken", meant="management_office")))
    said = await brain.read(told, sub_type="NEIGHBOR_DISPUTE", asked="steps_taken", now=NOW)
    choose = said.choices["steps_taken"]
    assert choose.value == ["management_office", "police"]
    assert choose.alternatives == (["management_office"],)


async def test_an_approximate_value_is_marked(fake: FakeOpenAI, brain: LLMBrain) -> None:
    fake.reply_next(reading(value("한 1500만원 정도", "amount", approx=True)))
    said = await brain.read("한 1500만원 정도", sub_type="LOAN", asked="amount", now=NOW)
    assert said.answer == 15_000_000 and "amount" in said.approx


async def test_a_correction_gives_the_whole_right_value_by_its_codes(
    fake: FakeOpenAI, brain: LLMBrain
) -> None:
    told = "Remove police. It should only be the management office"
    fake.reply_next(
        reading(
            corrections=(
                {"field": "steps_taken", "said": "management office", "meant": "management_office"},
            )
        )
    )
    said = await brain.read(told, sub_type="NEIGHBOR_DISPUTE", asked=None, now=NOW)
    fixes = [v for v in said.values if v.role is Role.SUGGESTED]
    assert [(v.field, v.value) for v in fixes] == [("steps_taken", ["management_office"])]


@pytest.fixture
async def engine(fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb):
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    yield engine
    await engine.close()


async def test_several_options_offered_as_buttons_are_chosen_by_their_place(
    fake: FakeOpenAI, engine: Engine
) -> None:
    told = "윗집 소음 때문에 관리사무소에 말했고 경찰에도 신고했어요"
    classified = json.dumps({"sub_type": "NEIGHBOR_DISPUTE", "confidence": 0.9})
    fake.reply_next(
        classified, reading(value(told, "steps_taken", "fact", meant="management_office"))
    )
    reply = await engine.handle(text(told))
    data = [c for c in offered(reply) if c.startswith("a:steps_taken:on:")]
    assert data == ["a:steps_taken:on:#0", "a:steps_taken:on:#1"]
    assert all(len(d.encode()) <= 64 for d in data)  # Telegram's limit on button data
    await engine.handle(choice(data[1]))
    state = await engine.intake_state((await session_of(engine)).id)
    assert state["facts"]["steps_taken"] == ["management_office"]


async def test_words_a_model_reads_as_a_text_answer_replace_the_whole_message(
    fake: FakeOpenAI, brain: LLMBrain
) -> None:
    """legal_set19 model notes A: the dismissal's reason and a wish were answered in a few
    words of a longer message; the rules kept the whole message (or refused the wish)."""
    told = "아까 말했는데 매출 안좋아서 인원 정리한다고요 그리고 저 4명이서 일했어요"
    fake.reply_next(reading(value("매출 안좋아서 인원 정리한다고요", "dismissal_reason")))
    said = await brain.read(told, sub_type="UNFAIR_DISMISSAL", asked="dismissal_reason", now=NOW)
    assert said.answer == "매출 안좋아서 인원 정리한다고요"
    # words not in the message are no answer: the rules' reading stands
    fake.reply_next(reading(value("매출 감소", "dismissal_reason")))
    said = await brain.read(told, sub_type="UNFAIR_DISMISSAL", asked="dismissal_reason", now=NOW)
    assert said.answer == "매출 안좋아서 인원 정리한다고요 그리고 저 4명이서 일했어요"
