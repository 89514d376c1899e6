"""LLM mode reads each message in context (graphs/legal/llm_brain.py): the record so far, the
question just asked with its options and the message go in one request; the model answers memo
items, corrections and whether it is another matter, and the rules check each. Real `openai`
client against the fake OpenAI server on 127.0.0.1; the real engine, graph and records."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

import pytest

from bot.engine import Engine
from db.engine import records_path
from graphs.legal import memo
from graphs.legal.llm_brain import LLMItem, checked_items
from graphs.legal.nodes import RECORD_CHARS, read_context
from knowledge.loader import Knowledge
from tests.fakes.openai_api import FakeOpenAI
from tests.test_hardening import choice, joined, offered, session_of, text
from tests.test_llm import llm_settings

NOW = datetime(2026, 11, 28, 12, 0)
LOAN = "작년 3월에 친구 김민수한테 500만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"


def reading(
    values=(), items=(), corrections=(), new_matter=False, danger_now=False, wrong_type=False
) -> str:
    return json.dumps(
        {
            "danger_now": danger_now,
            "clauses": [],
            "values": [{"said": s, "field": f, "role": r} for s, f, r in values],
            "items": [
                {"section": sec, "said": said, "kind": kind, "planned": planned}
                for sec, said, kind, planned in items
            ],
            "corrections": [{"field": f, "said": s} for f, s in corrections],
            "new_matter": new_matter,
            "wrong_case_type": wrong_type,
        },
        ensure_ascii=False,
    )


CLASSIFIED = json.dumps({"sub_type": "LOAN", "confidence": 0.9})


@pytest.fixture
async def fake():
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def engine(fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb):
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    yield engine
    await engine.close()


async def completed_by_model(fake: FakeOpenAI, engine: Engine) -> dict:
    """The loan intake played to its summary in LLM mode, the model reading nothing more; the
    intake's state."""
    fake.reply_next(CLASSIFIED, reading())
    await engine.handle(text(LOAN))
    fake.reply_next(reading())
    await engine.handle(text("올해 12월까지요", minutes=1))
    fake.reply_next(reading())
    done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"
    return await engine.intake_state((await session_of(engine)).id)


def user_content(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


async def test_a_message_is_read_with_the_record_the_question_and_its_options(
    fake: FakeOpenAI, engine: Engine
) -> None:
    fake.reply_next(CLASSIFIED, reading())
    first = await engine.handle(text(LOAN))
    asked = first.field
    fake.reply_next(reading())
    await engine.handle(text("올해 12월까지요", minutes=1))
    sent = fake.chat_requests()
    assert len(sent) == 3  # a first description classified and read, then one call a message
    content = user_content(sent[-1])
    assert content.startswith("Today: 2026-11-22 (Sunday)")  # a past from a coming date
    assert "Record so far:" in content
    assert "amount (Amount lent): KRW 5,000,000" in content  # the record, as the rules kept it
    assert "money: 5000000 lent" in content  # and its memo items
    assert "The bot's last message:" in content and asked is not None
    assert content.rstrip().endswith("Message:\n올해 12월까지요")
    fake.reply_next(reading())
    reply = await engine.handle(text("카톡 있어요", minutes=2))
    if reply.field == "evidence_type" or "a:evidence_type" in " ".join(offered(reply)):
        content = user_content(fake.chat_requests()[-1])
        assert "Options of the field asked" in content


async def test_the_models_items_are_kept_with_the_rules_reading_beside_them(
    fake: FakeOpenAI, engine: Engine
) -> None:
    told = "보험사가 80만원 준대요 그리고 작년 3월에 500만원 빌려줬어요"
    fake.reply_next(
        CLASSIFIED,
        reading(
            items=[
                ("money", "500만원", "lent", False),
                ("money", "80만원", "offered", False),
                ("parties", "보험사", "insurer", False),  # not a role of the list: no role
                ("money", "900만원", "lost", False),  # not in the message
                ("chronology", "작년 3월에 500만원 빌려줬어요", "", False),
            ]
        ),
    )
    await engine.handle(text(told))
    state = await engine.intake_state((await session_of(engine)).id)
    money = {
        (i["amount"], i["role"], i.get("by")) for i in state["memo"] if i["section"] == "money"
    }
    assert (5_000_000, "lent", "model") in money and (800_000, "offered", "model") in money
    assert all(amount != 9_000_000 for amount, _, _ in money)
    (party,) = [i for i in state["memo"] if i["section"] == "parties"]
    assert party["name"] == "보험사" and party["role"] is None


def test_model_items_the_rules_refuse_are_dropped(knowledge: Knowledge) -> None:
    message = "I lent 3 million last March and he says he will pay back next month"
    items = [
        LLMItem(section="money", said="3 million", kind="lent"),
        LLMItem(section="money", said="lent 3 million last March and 2", kind="lent"),
        LLMItem(section="chronology", said="next month", planned=False),  # ahead, not a plan?
        LLMItem(section="chronology", said="will pay back next month", planned=True),
        LLMItem(section="steps", said="he says", kind="court"),
        LLMItem(section="evidence", said="3 million", kind="contract"),
        LLMItem(section="parties", said="he says he will pay back next month", kind="family"),
        LLMItem(section="money", said="3 million", kind="bribe"),
    ]
    kept = checked_items(knowledge, message, items, now=NOW)
    assert [
        (i["section"], i.get("amount"), i.get("role")) for i in kept if i["section"] == "money"
    ] == [
        ("money", 3_000_000, "lent"),
        ("money", 3_000_000, "unclear"),
    ]
    dated = [i for i in kept if i["section"] == "chronology"]
    assert [(i["date"], i["planned"]) for i in dated] == [("2026-12", True)]
    # a step or a record needs its own words in the quote; a clause is no party
    assert [i for i in kept if i["section"] in ("parties", "steps", "evidence")] == []
    sued = checked_items(
        knowledge,
        "I filed a payment order at the court and I still have the texts",
        [
            LLMItem(section="steps", said="filed a payment order at the court", kind="court"),
            LLMItem(section="evidence", said="I still have the texts", kind="messages"),
        ],
        now=NOW,
    )
    assert [(i["section"], i.get("body") or i.get("kind")) for i in sued] == [
        ("steps", "court"),
        ("evidence", "messages"),
    ]


def test_merged_keeps_the_models_role_and_the_rules_beside_it() -> None:
    ruled = [
        {
            "section": "money",
            "amount": 1,
            "role": "owed",
            "quote": "b",
            "at": "t",
            "confirmed": False,
        },
        {
            "section": "money",
            "amount": 2,
            "role": "paid",
            "quote": "a",
            "at": "t",
            "confirmed": False,
        },
    ]
    model = [{"section": "money", "amount": 1, "role": "repaid", "quote": "b", "by": "model"}]
    out = memo.merged(ruled, model, at="t", text="a b")
    assert [(i["amount"], i["role"], i.get("rules_role")) for i in out] == [
        (2, "paid", None),
        (1, "repaid", "owed"),
    ]
    assert memo.merged(ruled, [], at="t", text="a b") == ruled


async def test_after_the_summary_a_models_correction_is_confirmed_and_no_classification_is_asked(
    fake: FakeOpenAI, engine: Engine
) -> None:
    await completed_by_model(fake, engine)
    before = len(fake.chat_requests())
    # the rules read no name here; the model reads the correction in the record's context
    fake.reply_next(reading(corrections=[("counterparty", "김민호")]))
    shown = await engine.handle(text("그 사람 말고 김민호라고 적어 주세요", minutes=3))
    assert len(fake.chat_requests()) == before + 1  # one call: no classification after it
    content = user_content(fake.chat_requests()[-1])
    assert "The intake is finished" in content and "counterparty" in content
    assert "→ 김민호" in joined(shown)
    await engine.handle(text("네", minutes=4))
    state = await engine.intake_state((await session_of(engine)).id)
    assert state["facts"]["counterparty"] == "김민호"
    assert state["provenance"]["counterparty"]["confirmed"] is True


async def test_another_matter_is_the_models_word_in_context(
    fake: FakeOpenAI, engine: Engine, knowledge: Knowledge
) -> None:
    await completed_by_model(fake, engine)
    before = len(fake.chat_requests())
    fake.reply_next(reading(new_matter=True))
    reply = await engine.handle(text("그리고 회사에서 월급도 석 달째 못 받았어요", minutes=3))
    assert len(fake.chat_requests()) == before + 1
    assert knowledge.message("addendum_new_matter", "ko") in joined(reply)
    state = await engine.intake_state((await session_of(engine)).id)
    assert not any("석 달" in i["quote"] for i in state.get("memo", []))


async def test_a_type_the_model_reads_as_wrong_is_offered_to_change(
    fake: FakeOpenAI, engine: Engine
) -> None:
    """Words the rules read no type complaint in ("제 얘기는 그게 아닌데요, 돈 빌려준 게 아니고
    투자하라고 해서 넣은 거예요"): the model, reading it in context, says the type is wrong, and
    the change is offered before the question; the types its classification names come first,
    the one being taken never; the pick is the rules' and the person's, no model call."""
    fake.reply_next(CLASSIFIED, reading())
    first = await engine.handle(text(LOAN))
    said = "제 얘기는 그게 아닌데요, 돈 빌려준 게 아니고 투자하라고 해서 넣은 거예요"
    fake.reply_next(reading(wrong_type=True), json.dumps({"sub_type": "FRAUD", "confidence": 0.8}))
    offer = await engine.handle(text(said, minutes=1))
    assert "Case type: LOAN (Loan repayment)" in fake.chat_requests()[-2]["messages"][0]["content"]
    buttons = offered(offer)
    assert buttons[0] == "rt:st:FRAUD" and "rt:st:LOAN" not in buttons and "rt:keep" in buttons
    state = await engine.intake_state((await session_of(engine)).id)
    assert first.field not in state["facts"] and state["sub_type"] == "LOAN"
    before = len(fake.chat_requests())
    fake.reply_next(reading())  # the account read again for the new type's fields
    changed = await engine.handle(choice("rt:st:FRAUD"))
    assert changed.state == "FACT_COLLECTION"
    state = await engine.intake_state((await session_of(engine)).id)
    assert state["sub_type"] == "FRAUD" and state["facts"]["amount"] == 5_000_000
    assert len(fake.chat_requests()) == before + 1


async def test_danger_the_model_reads_where_the_rules_read_none_is_answered_first(
    fake: FakeOpenAI, engine: Engine
) -> None:
    """A message whose danger only the reading in context shows (the rules fire on none of
    its words): the safety reply with 112 and 1366 comes first in the same turn, the alert is
    recorded for staff; a later message the model reads as no danger raises nothing."""
    fake.reply_next(CLASSIFIED, reading())
    await engine.handle(text(LOAN))
    said = "아까 그 사람한테서 오늘 밤에 보자는 문자가 왔어요. 혼자 있는데 어떡하죠"
    assert engine.services.safety.check(said) == []  # the rules let it through
    fake.reply_next(reading(danger_now=True))
    reply = await engine.handle(text(said, minutes=1))
    assert [hit.code for hit in reply.alerts] == ["DANGER_READ"]
    first = reply.messages[0]["text"]
    assert "112" in first and "1366" in first and reply.field is not None
    with sqlite3.connect(records_path(engine.settings.intake_data_dir)) as db:
        recorded = db.execute("select code from safetyalert").fetchall()
    assert recorded == [("DANGER_READ",)]
    assert len(fake.chat_requests()) == 3  # the same one reading: no call of its own
    fake.reply_next(reading())
    calm = await engine.handle(text("올해 12월까지요", minutes=2))
    assert calm.alerts == [] and "112" not in joined(calm)


async def test_a_memo_item_corrected_in_context_is_confirmed_old_to_new(
    fake: FakeOpenAI, engine: Engine
) -> None:
    state = await completed_by_model(fake, engine)
    (lent,) = [i for i in state["memo"] if i["section"] == "chronology" and not i["planned"]]
    assert lent["date"] == "2025-03"
    content_before = len(fake.chat_requests())
    fake.reply_next(reading(corrections=[(lent["id"], "재작년"), ("m99", "재작년")]))
    shown = await engine.handle(text("아 빌려준 건 재작년이에요", minutes=3))
    assert len(fake.chat_requests()) == content_before + 1
    assert "2025-03 → 2024-03" in joined(shown)
    await engine.handle(text("네", minutes=4))
    state = await engine.intake_state((await session_of(engine)).id)
    fixed = next(i for i in state["memo"] if i["id"] == lent["id"])
    assert (fixed["date"], fixed["was"], fixed["confirmed"]) == ("2024-03", "2025-03", True)
    assert "2024-03 «" in state["summary"]["text"]


def test_an_item_fix_reads_the_value_with_the_items_own_reader(knowledge: Knowledge) -> None:
    items = [
        {"id": "m1", "section": "chronology", "date": "2026-06-10", "quote": "6월 10일에"},
        {"id": "m2", "section": "money", "amount": 300_000, "quote": "30만원 받았어요"},
        {"id": "m3", "section": "parties", "name": "박정우", "quote": "박정우"},
        {"id": "m4", "section": "steps", "body": "police", "quote": "신고"},
    ]
    fix = memo.item_fix
    assert fix(knowledge, items, "m1", "작년이고요", now=NOW)["new"] == "2025-06-10"
    assert fix(knowledge, items, "m1", "6월 12일", now=NOW)["new"] == "2026-06-12"
    assert fix(knowledge, items, "m2", "50만원이었어요", now=NOW)["new"] == 500_000
    assert fix(knowledge, items, "m3", "박정훈이에요", now=NOW)["new"] == "박정훈"
    assert fix(knowledge, items, "m2", "30만원", now=NOW) is None  # the same value
    assert fix(knowledge, items, "m4", "경찰", now=NOW) is None  # no value to correct
    assert fix(knowledge, items, "m9", "작년", now=NOW) is None
    assert fix(knowledge, items, "m2", "잘 모르겠어요", now=NOW) is None


async def test_where_the_rules_and_the_model_disagree_the_person_is_asked_with_both(
    fake: FakeOpenAI, engine: Engine
) -> None:
    told = "친구한테 300만원 빌려줬는데 이자까지 400만원 갚으래요"
    fake.reply_next(CLASSIFIED, reading(values=[("400만원", "amount", "fact")]))
    reply = await engine.handle(text(told))
    offered_now = [c for c in offered(reply) if c.startswith("a:amount:on:")]
    assert offered_now == ["a:amount:on:3000000", "a:amount:on:4000000"]
    labels = [c["label"] for m in reply.messages for c in m["choices"] if ":on:" in c["data"]]
    assert labels == ["3,000,000원", "4,000,000원"]
    state = await engine.intake_state((await session_of(engine)).id)
    assert "amount" not in state["facts"]  # nothing recorded before the person chooses
    await engine.handle(choice("a:amount:on:3000000"))
    state = await engine.intake_state((await session_of(engine)).id)
    assert state["facts"]["amount"] == 3_000_000
    assert state["provenance"]["amount"]["confirmed"] is True


def test_a_long_record_shows_whole_items_the_latest_ones(knowledge: Knowledge) -> None:
    """legal_set9 T3: the record was cut mid-item ("- m15 parties: S"), so the id of the item
    a correction was about never reached the model. Whole lines, the latest items, and a line
    saying how many earlier ones are left out."""
    items = [
        {
            "id": f"m{n}",
            "section": "chronology",
            "date": f"2026-{n % 12 + 1:02d}-01",
            "quote": f"그날 일이 있었어요 {n}번째 이야기를 길게 적어 둡니다 " * 3,
        }
        for n in range(1, 80)
    ]
    state = {"sub_type": "LOAN", "facts": {"amount": 5_000_000}, "memo": items}
    record = read_context(knowledge, state, "counterparty", "ko").record
    lines = record.split("\n")
    assert len(record) <= RECORD_CHARS
    assert lines[0].startswith("- amount (")
    assert lines[-1].startswith("- m79 chronology: ")  # the latest item, whole
    assert lines[-1].endswith("»")
    left = int(lines[1].removeprefix("- (").split()[0])
    assert lines[2].startswith(f"- m{left + 1} chronology")
    assert all(line.endswith(("»", ")")) or line.startswith("- amount") for line in lines)
