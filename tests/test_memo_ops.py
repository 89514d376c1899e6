"""What a person may do to the record besides answering (legal_set13's model notes): a bare
number said as Korean speech counts it ("빌린건 50이요" is 50만원, read and confirmed first); a
value that refines a recorded one (the model's, shown old → new); an item of the memo asked to
be deleted ("지워주세요": the rules' reading or the model's, confirmed first); an event the
model read with no date; a question the model cut otherwise than the rules. Real engine,
graph and records; the model is the fake OpenAI server on 127.0.0.1 behind the real client."""

from __future__ import annotations

import json

import pytest

from bot.engine import Engine
from graphs.common.normalize.amounts import bare_in_man
from graphs.common.reading import Reading, Role, Value
from graphs.legal import memo
from graphs.legal.llm_brain import LLMBrain, LLMItem, _answer_checked, checked_items
from graphs.legal.nodes import refined, suggestions
from graphs.legal.summary import memo_lines
from knowledge.loader import Knowledge
from tests.fakes.openai_api import FakeOpenAI
from tests.test_hardening import choice, joined, session_of, text
from tests.test_llm import llm_settings
from tests.test_llm_context import CLASSIFIED, LOAN, NOW, completed_by_model

LEASE = "전세 보증금을 집주인이 안 돌려줘요. 계약은 끝났어요"


def reading(**parts) -> str:
    body = {"clauses": [], "values": [], "items": [], "corrections": [], "remove": []}
    return json.dumps(body | parts, ensure_ascii=False)


@pytest.fixture
async def fake():
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def llm_engine(fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb):
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    yield engine
    await engine.close()


async def state_of(engine: Engine) -> dict:
    return await engine.intake_state((await session_of(engine)).id)


# --- a bare number counted in 만 ---------------------------------------------------------------


def test_bare_numbers_count_in_man_where_korean_speech_does() -> None:
    def read(said: str) -> list[tuple[int, str]]:
        return [(m.value, said[m.start : m.end]) for m in bare_in_man(said, korean=True)]

    assert read("빌린건 50이요") == [(500_000, "50")]
    assert read("보증금 5천에 월세 45만원") == [(50_000_000, "5천")]  # the 45만원 is written
    assert read("총4800 계약금 1000") == [(48_000_000, "4800"), (10_000_000, "1000")]
    assert read("3천이요") == [(30_000_000, "3천")]
    # a year, a day, a time, a count or an age is no amount
    for said in ("2024년에 빌려줬어요", "12월 5일", "10시에 만났어요", "3명이요", "40세예요"):
        assert read(said) == []
    assert bare_in_man("i lent him 50", korean=False) == []  # English speech does not count so


async def test_a_bare_number_answer_is_read_in_man_and_confirmed_before_it_is_kept(
    engine: Engine, knowledge: Knowledge
) -> None:
    first = await engine.handle(text(LEASE))
    assert first.field == "deposit"
    # the rent's amount is the rent's, never the deposit asked; the bare 5천 is 5천만원
    shown = await engine.handle(text("보증금 5천에 월세 45만원", minutes=1))
    assert "'5천'" in joined(shown) and "50,000,000원" in joined(shown)
    assert "a:deposit:confirm" in [c["data"] for m in shown.messages for c in m["choices"]]
    state = await state_of(engine)
    assert "deposit" not in state["facts"] and state["facts"]["monthly_rent"] == 450_000
    await engine.handle(text("네", minutes=2))
    state = await state_of(engine)
    assert state["facts"]["deposit"] == 50_000_000
    assert state["provenance"]["deposit"]["confirmed"] is True


async def test_a_bare_number_read_wrong_is_refused_and_nothing_is_kept(engine: Engine) -> None:
    await engine.handle(text(LEASE))
    await engine.handle(text("보증금은 3천이요", minutes=1))
    refused = await engine.handle(choice("a:deposit:deny"))
    assert refused.field == "deposit"
    assert "deposit" not in (await state_of(engine))["facts"]


# --- a value that refines a recorded one -------------------------------------------------------


def test_a_refinement_adds_options_joins_a_description_and_replaces_a_value(
    knowledge: Knowledge,
) -> None:
    fields = knowledge.k2.fields
    evidence = fields["evidence_type"]
    assert refined(evidence, ["messages"], ["photo"], corrects=False) == ["messages", "photo"]
    assert refined(evidence, ["messages"], ["messages"], corrects=False) is None
    # a correction's codes are the whole right value ("not photos, only the messages")
    assert refined(evidence, ["messages", "photo"], ["messages"], corrects=True) == ["messages"]
    injury = fields["injury_detail"]
    assert refined(injury, "손가락 다침", "수술 2번", corrects=False) == "손가락 다침 / 수술 2번"
    assert refined(injury, "손가락 다침 / 수술 2번", "수술 2번", corrects=False) is None
    # a name or an amount is replaced, shown old → new
    assert refined(fields["counterparty"], "공장", "대성정밀", corrects=False) == "대성정밀"
    assert refined(fields["amount"], 5_000_000, 5_850_000, corrects=False, approx=True) == 5_850_000
    # another amount for an exact one is another fact, not a refinement (legal_set15 B1)
    assert refined(fields["amount"], 9_400_000, 8_000_000, corrects=False) is None
    assert refined(fields["amount"], 9_400_000, 7_400_000, corrects=True) == 7_400_000


def test_only_the_models_values_are_suggested_and_never_the_account(knowledge: Knowledge) -> None:
    def said(field: str, value, kind: str) -> Value:
        return Value(kind=kind, value=value, span=None, field=field, role=Role.SUGGESTED)

    read = Reading(
        text="회사 이름은 대성정밀이고 사진도 있어요",
        values=(
            said("counterparty", "대성정밀", "text"),
            said("evidence_type", ["photo"], "multi_choice"),
            said("action_description", "다른 이야기", "text"),
            said("incident_date", "2026-10-01", "date"),
        ),
    )
    facts = {
        "counterparty": "공장",
        "evidence_type": ["messages"],
        "action_description": "공장에서 다쳤어요",
    }
    shown = {c["field"]: (c["old"], c["new"]) for c in suggestions(knowledge, read, facts)}
    assert shown == {
        "counterparty": ("공장", "대성정밀"),
        "evidence_type": (["messages"], ["messages", "photo"]),
        "incident_date": (None, "2026-10-01"),  # an empty field: asked as an addition
    }
    asked = suggestions(knowledge, read, facts, asked="counterparty", named={"incident_date"})
    assert [c["field"] for c in asked] == ["evidence_type"]


async def test_after_the_summary_a_models_refinement_is_shown_old_to_new(
    fake: FakeOpenAI, llm_engine: Engine
) -> None:
    await completed_by_model(fake, llm_engine)
    said = "참고로 김민수는 회사 동료고 풀네임은 김민수 대리님이에요"
    fake.reply_next(
        reading(values=[{"said": "김민수 대리", "field": "counterparty", "role": "fact"}])
    )
    shown = await llm_engine.handle(text(said, minutes=3))
    assert "김민수 → 김민수 대리" in joined(shown)
    assert (await state_of(llm_engine))["facts"]["counterparty"] == "김민수"  # not before the yes
    await llm_engine.handle(text("네", minutes=4))
    assert (await state_of(llm_engine))["facts"]["counterparty"] == "김민수 대리"


# --- an item asked to be deleted ---------------------------------------------------------------


async def completed_loan(engine: Engine) -> dict:
    await engine.handle(text(LOAN))
    await engine.handle(text("올해 12월까지요", minutes=1))
    done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"
    return await state_of(engine)


async def test_an_item_asked_to_be_deleted_is_shown_and_struck_once_confirmed(
    engine: Engine, knowledge: Knowledge
) -> None:
    state = await completed_loan(engine)
    (lent,) = [i for i in state["memo"] if i["section"] == "chronology" and not i["planned"]]
    assert lent["date"] == "2025-03"
    shown = await engine.handle(text("경위에 2025-03 그거 지워주세요 날짜 틀렸어요", minutes=3))
    assert "2025-03 → 삭제" in joined(shown)
    assert any(i["id"] == lent["id"] for i in (await state_of(engine))["memo"])
    await engine.handle(text("네", minutes=4))
    state = await state_of(engine)
    struck = next(i for i in state["memo"] if i["id"] == lent["id"])
    assert struck["section"] == memo.REMOVED and struck["held"]["date"] == "2025-03"
    assert "2025-03 «" not in state["summary"]["text"]
    # an item told after it gets the next id: an id is never given twice
    await engine.handle(text("작년 3월에 500만원 빌려줬어요", minutes=5))
    state = await state_of(engine)
    assert len({i["id"] for i in state["memo"]}) == len(state["memo"])


def test_a_deletion_names_exactly_one_item_or_none(knowledge: Knowledge) -> None:
    items = [
        {"id": "m1", "section": "chronology", "date": "2026-11-23", "quote": "23일에"},
        {"id": "m2", "section": "money", "amount": 3_400_000, "role": "unclear", "quote": "340"},
        {"id": "m3", "section": "parties", "name": "Hyundai Avante", "quote": "Hyundai Avante"},
        {"id": "m4", "section": "chronology", "date": "2026-11-24", "quote": "24일에"},
    ]
    gone = memo.removals
    assert [c["field"] for c in gone(knowledge, items, "2026-11-23 지워주세요", "ko")] == [
        "memo:m1"
    ]
    assert gone(knowledge, items, "3,400,000원 빼 주세요", "ko")[0]["old"] == "3,400,000원"
    assert gone(knowledge, items, "Hyundai Avante is a car, remove it", "en")[0]["field"] == (
        "memo:m3"
    )
    assert gone(knowledge, items, "2026-11-23 이랑 2026-11-24 지워주세요", "ko") == []  # two
    assert gone(knowledge, items, "2026-11-23 맞아요", "ko") == []  # no word of removal
    assert gone(knowledge, items, "다 지워주세요", "ko") == []  # no item named


async def test_a_deletion_the_model_reads_is_confirmed_first(
    fake: FakeOpenAI, llm_engine: Engine
) -> None:
    state = await completed_by_model(fake, llm_engine)
    (party,) = [i for i in state["memo"] if i["section"] == "parties"]
    said = "관련 인물에 있는 그 사람 이름 항목은 없애 주세요"
    fake.reply_next(
        reading(remove=[{"item": party["id"], "said": "없애 주세요"}, {"item": "m99", "said": "x"}])
    )
    shown = await llm_engine.handle(text(said, minutes=3))
    assert f"{party['name']} → 삭제" in joined(shown)
    await llm_engine.handle(text("아니요", minutes=4))
    state = await state_of(llm_engine)
    assert next(i for i in state["memo"] if i["id"] == party["id"])["section"] == "parties"


# --- an event with no date, a question cut otherwise ---------------------------------------------


async def test_an_event_the_model_reads_without_a_date_is_kept_undated(
    fake: FakeOpenAI, llm_engine: Engine
) -> None:
    said = "그 뒤로 차가 수리 중이라며 계속 미뤘어요"
    fake.reply_next(CLASSIFIED, reading())
    await llm_engine.handle(text(LOAN))
    fake.reply_next(
        reading(
            items=[{"section": "chronology", "said": "차가 수리 중이라며 계속 미뤘어요"}],
            clauses=[{"text": "계속 미뤘어요?", "acts": ["question"]}],
        )
    )
    await llm_engine.handle(text(said, minutes=1))
    state = await state_of(llm_engine)
    undated = [i for i in state["memo"] if i["section"] == "chronology" and i["date"] is None]
    assert [i["quote"] for i in undated] == ["차가 수리 중이라며 계속 미뤘어요"]
    lines = memo.ordered(state["memo"], "chronology")
    assert lines[-1]["date"] is None  # after the dated ones
    fake.reply_next(reading())
    await llm_engine.handle(text("올해 12월까지요", minutes=2))
    fake.reply_next(reading())
    await llm_engine.handle(choice("a:evidence:no"))
    summary = (await state_of(llm_engine))["summary"]["text"]
    assert "날짜 미상 «차가 수리 중이라며 계속 미뤘어요»" in summary


async def test_a_question_the_model_cut_inside_a_sentence_is_listed(
    fake: FakeOpenAI, llm_engine: Engine
) -> None:
    fake.reply_next(CLASSIFIED, reading())
    await llm_engine.handle(text(LOAN))
    said = "올해 12월까지요 지급명령이 소송보다 빠른지도 궁금하네요"
    fake.reply_next(
        reading(clauses=[{"text": "지급명령이 소송보다 빠른지도 궁금하네요", "acts": ["question"]}])
    )
    await llm_engine.handle(text(said, minutes=1))
    questions = (await state_of(llm_engine)).get("questions", [])
    assert any("지급명령" in q["text"] for q in questions)


# --- what the rules let through of the model's items (legal_set13's dropped ones) --------------


def test_a_models_money_item_of_a_bare_number_is_kept_in_man_and_marked(
    knowledge: Knowledge,
) -> None:
    told = "10월 2일에 50 빌렸는데 벌써 80 갚았어요"
    items = [
        LLMItem(section="money", said="10월 2일에 50 빌렸는데", kind="borrowed"),
        LLMItem(section="money", said="벌써 80 갚았어요", kind="repaid"),
    ]
    kept = checked_items(knowledge, told, items, now=NOW)
    assert [(i["amount"], i["role"], i.get("in_man")) for i in kept] == [
        (500_000, "borrowed", True),
        (800_000, "repaid", True),
    ]
    # an English message counts no bare number in 만, whatever Korean names it holds
    english = "I paid 30 at 분당경찰서 for the copy"
    paid = [LLMItem(section="money", said="I paid 30", kind="paid")]
    assert checked_items(knowledge, english, paid, now=NOW) == []


def test_a_record_its_kinds_words_do_not_name_is_kept_as_another_kind(
    knowledge: Knowledge,
) -> None:
    told = "달력에 출근한날 다 적어놨고 bank statements showing his transfers too"
    items = [
        LLMItem(section="evidence", said="달력에 출근한날 다 적어놨고", kind="other"),
        LLMItem(
            section="evidence", said="bank statements showing his transfers", kind="bank_transfer"
        ),
        LLMItem(section="evidence", said="달력에 출근한날", kind="recording"),  # not its words
        LLMItem(section="evidence", said="bank statements", kind="bribe"),  # no such kind
    ]
    kept = checked_items(knowledge, told, items, now=NOW)
    assert [(i["kind"], i["quote"]) for i in kept] == [
        ("other", "달력에 출근한날 다 적어놨고"),
        ("bank_transfer", "bank statements showing his transfers"),
        ("other", "달력에 출근한날"),
    ]


def test_a_name_given_in_a_clause_is_the_one_name_in_it(knowledge: Knowledge, brain) -> None:
    """A short field (a name, a label) never takes the model's clause; the one name the rules'
    name reader finds in it is the value (legal_set13 A: "텔레그램 광고보고 연락한 김실장이라는
    사람" was dropped whole, and the lender's name never recorded)."""
    reader = LLMBrain(knowledge, None, rules=brain, budget=1.0)  # type: ignore[arg-type]
    assert reader._name_in("텔레그램 광고보고 연락한 김실장이라는 사람") == "김실장"
    assert reader._name_in("서울중앙지검 수사관이라고 사칭한 사기꾼") is None


# --- the person's circumstances and what each side says (LLM mode) -----------------------------


async def test_circumstances_and_positions_the_model_reads_are_kept_with_their_words(
    fake: FakeOpenAI, llm_engine: Engine, knowledge: Knowledge
) -> None:
    said = (
        "저는 대신 써요 어머니가 77세시고 전화를 무서워하세요. "
        "집주인은 새 세입자가 들어와야 보증금을 준다고 해요"
    )
    fake.reply_next(CLASSIFIED, reading())
    await llm_engine.handle(text(LOAN))
    fake.reply_next(
        reading(
            items=[
                {"section": "circumstances", "said": "저는 대신 써요", "kind": "writer"},
                {"section": "circumstances", "said": "어머니가 77세시고", "kind": "age"},
                {"section": "circumstances", "said": "전화를 무서워하세요", "kind": "fear"},
                {
                    "section": "positions",
                    "said": "집주인은 새 세입자가 들어와야 보증금을 준다고 해요",
                    "kind": "other_side",
                },
                {"section": "positions", "said": "보증금을 준다고", "kind": "rumour"},  # no kind
                {"section": "circumstances", "said": "서울에 살아요", "kind": "residence"},
            ]
        ),
    )
    await llm_engine.handle(text(said, minutes=1))
    state = await state_of(llm_engine)
    noted = [
        (i["section"], i["kind"], i["quote"]) for i in state["memo"] if i["section"] in memo.NOTED
    ]
    assert noted == [
        ("circumstances", "writer", "저는 대신 써요"),
        ("circumstances", "age", "어머니가 77세시고"),
        ("circumstances", "other", "전화를 무서워하세요"),  # a kind not listed: "other"
        ("positions", "other_side", "집주인은 새 세입자가 들어와야 보증금을 준다고 해요"),
    ]  # not in the message: "서울에 살아요"; a position of no listed kind: none
    lines = "\n".join(memo_lines(knowledge, {"memo": state["memo"]}, "ko"))
    assert "[당사자 사정]" in lines and "· 나이 «어머니가 77세시고»" in lines
    assert "· 상대방 주장 «집주인은 새 세입자가 들어와야 보증금을 준다고 해요»" in lines


def test_a_day_the_model_reads_ahead_is_one_event_not_a_second_in_a_past_year() -> None:
    said = "감독관이 12월4일 오전10시에 출석하래요"
    ruled = [{"section": "chronology", "date": "2025-12-04", "planned": False, "quote": said}]
    ahead = {"section": "chronology", "date": "2026-12-04", "planned": True, "quote": said}
    assert [i["date"] for i in memo.merged(ruled, [ahead], at="t", text=said)] == ["2026-12-04"]
    # another day of the same words stays beside the model's
    other = [{"section": "chronology", "date": "2025-11-04", "planned": False, "quote": said}]
    dates = [i["date"] for i in memo.merged(other, [ahead], at="t", text=said)]
    assert sorted(dates) == ["2025-11-04", "2026-12-04"]


def test_the_options_both_readers_found_are_kept_together() -> None:
    """legal_set13 A4: the rules read "threats" and the model "threats, visit, workplace" in
    part otherwise; the person got neither the visit nor the workplace calls."""

    def answer(codes: list[str], **more) -> Value:
        return Value(
            kind="multi_choice",
            value=codes,
            span=None,
            field="collection_kind",
            role=Role.ANSWER,
            **more,
        )

    ruled = answer(["threat", "night_calls"])
    model = answer(["threat", "visit", "workplace"])
    (kept,) = _answer_checked([ruled], [ruled], model)
    assert kept.value == ["threat", "night_calls", "visit", "workplace"]
    # a reading the model itself leaves open is asked, never joined
    open_ = answer(["visit"], alternatives=(["workplace"],))
    (asked,) = _answer_checked([ruled], [ruled], open_)
    assert asked.value == ["threat", "night_calls"] and asked.alternatives


def test_the_writer_told_as_a_party_is_no_party(knowledge: Knowledge) -> None:
    told = "저는 딸이에요 어머니 대신 써요"
    items = [
        LLMItem(section="parties", said="저는 딸이에요", kind="family"),
        LLMItem(section="parties", said="어머니", kind="family"),
    ]
    kept = checked_items(knowledge, told, items, now=NOW)
    assert [i["name"] for i in kept] == ["어머니"]


async def test_a_date_no_word_placed_in_another_answer_stays_in_the_memo(engine: Engine) -> None:
    """legal_set15 A4: "사고는없어요 동탄 음주단속에 걸린거에요 11월1일 밤에" to "was there an
    accident?" became the notice date, and the appeal deadline came 17 days early."""
    await engine.handle(
        text("음주운전으로 면허취소 통지서 받았는데요 트럭 운전 못하면 장사 접어야돼요")
    )
    await engine.handle(text("0.084요 불어서 나온거", minutes=1))
    await engine.handle(text("사고는없어요 동탄 음주단속에 걸린거에요 11월1일 밤에", minutes=2))
    state = await state_of(engine)
    assert "notice_date" not in state["facts"]
    days = {i["date"] for i in state["memo"] if i["section"] == "chronology"}
    assert any(str(d).endswith("-11-01") for d in days)


def test_a_models_party_role_said_of_other_matters_is_no_role_here(knowledge: Knowledge) -> None:
    # legal_set19 B1 (LLM mode): the shop's assistant manager as "employer's staff" in a refund
    told = "i talked to Ms Han (한 대리) at the shop"
    said = [LLMItem(section="parties", said="Ms Han", kind="staff")]
    refund = checked_items(knowledge, told, said, now=NOW, sub_type="CONSUMER_REFUND")
    assert [(i["name"], i["role"]) for i in refund] == [("Ms Han", None)]
    wages = checked_items(knowledge, told, said, now=NOW, sub_type="WAGE_ARREARS")
    assert [(i["name"], i["role"]) for i in wages] == [("Ms Han", "staff")]
