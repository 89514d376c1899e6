"""The legal intake graph over many turns, on a real AsyncSqliteSaver file, with a restart."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from graphs.common.context import Context
from graphs.legal.graph import build_graph
from graphs.legal.routing import RoutingError, route_after_classification, route_after_collection
from tests.support import NOW


class Driver:
    """Runs one thread of the graph the way the engine does, and returns the waiting payload."""

    def __init__(self, path: Path, knowledge, brain, lang: str = "ko") -> None:
        self.path, self.knowledge, self.brain, self.lang = path, knowledge, brain, lang
        self.config = {"configurable": {"thread_id": "t1"}}
        self.turns = 0
        self.kb = None

    async def open(self) -> None:
        self.conn = await aiosqlite.connect(str(self.path))
        self.saver = AsyncSqliteSaver(self.conn)
        await self.saver.setup()
        self.graph = build_graph().compile(checkpointer=self.saver)

    async def close(self) -> None:
        await self.conn.close()

    async def send(
        self, text: str | None = None, *, choice: str | None = None, file: dict | None = None
    ) -> dict[str, Any]:
        self.turns += 1
        if choice is not None:
            answer = {"kind": "choice", "data": choice, "id": str(self.turns)}
        elif file is not None:
            answer = {"kind": "file", "file": file, "id": str(self.turns)}
        else:
            answer = {"kind": "text", "text": text or "", "id": str(self.turns)}
        ctx = Context(
            knowledge=self.knowledge,
            brain=self.brain,
            lang=self.lang,
            now=NOW + timedelta(minutes=self.turns),
            kb=self.kb,
        )
        state = await self.graph.aget_state(self.config)
        payload: Any = Command(resume=answer) if state.next else {"answer": answer}
        result = await self.graph.ainvoke(payload, self.config, context=ctx, durability="exit")
        if result.get("__interrupt__"):
            return result["__interrupt__"][0].value
        return {"messages": result["outbox"], "field": None, "state": "COMPLETED", "progress": 100}

    async def values(self) -> dict[str, Any]:
        return (await self.graph.aget_state(self.config)).values


def texts(payload: dict[str, Any]) -> str:
    return "\n".join(m["text"] for m in payload["messages"])


async def test_loan_intake_skips_given_facts_and_survives_a_restart(
    driver: Driver, knowledge
) -> None:
    first = await driver.send(
        "작년 3월에 친구 김철수한테 300만원 빌려줬는데 아직도 안 갚아요. 너무 억울해요"
    )
    assert first["state"] == "FACT_COLLECTION"
    values = await driver.values()
    assert (values["case_type"], values["sub_type"]) == ("CIVIL", "LOAN")
    facts = values["facts"]
    assert facts["amount"] == 3_000_000
    assert facts["incident_date"] == "2025-03"
    assert facts["counterparty_type"] == "acquaintance"
    assert "김철수" in facts["counterparty"]
    assert {"kind": "anger", "cue": "억울"} in values["emotions"]
    # Given facts are not asked again: the first question is the repayment date.
    assert first["field"] == "repayment_date"
    assert knowledge.message("privacy_notice", "ko") in texts(first)

    # Restart: close the saver and open a new one on the same file.
    await driver.close()
    await driver.open()
    second = await driver.send("올해 6월 말까지 갚기로 했어요")
    assert (await driver.values())["facts"]["repayment_date"] == "2026-06"
    assert second["field"] == "evidence"
    assert [c["data"] for c in second["messages"][-1]["choices"]][:2] == [
        "a:evidence:yes",
        "a:evidence:no",
    ]

    third = await driver.send(choice="a:evidence:yes")
    assert third["field"] == "evidence_type"  # evidence = yes requires its kind
    wish = await driver.send("카톡이랑 계좌이체 내역 있어요")
    assert wish["field"] == "desired_outcome"  # asked of every case before it closes
    done = await driver.send("돈만 돌려받으면 돼요")
    assert done["state"] == "COMPLETED"
    final = await driver.values()
    assert final["status"] == "completed"
    assert set(final["facts"]["evidence_type"]) == {"messages", "bank_transfer"}
    summary = final["summary"]
    assert summary["structured"]["sub_case_type"] == "LOAN"
    assert summary["structured"]["completion_rate"] == 1.0
    assert "3,000,000원" in summary["text"]
    assert knowledge.k3.info["LOAN"].limitation.ko in summary["text"]
    assert knowledge.message("emotion_anger", "ko") in summary["text"]


async def test_correction_in_free_text_updates_the_fact_and_keeps_history(driver: Driver) -> None:
    await driver.send("친구한테 500만원 빌려줬는데 안 갚아요")
    values = await driver.values()
    assert values["facts"]["amount"] == 5_000_000
    asked = (await driver.graph.aget_state(driver.config)).tasks[0].interrupts[0].value["field"]
    shown = await driver.send("아 금액은 500만원이 아니라 50만원이에요")
    values = await driver.values()
    # Read from free text, the change is shown old -> new and made only on a yes.
    assert values["facts"]["amount"] == 5_000_000
    assert "5,000,000" in texts(shown) and "500,000" in texts(shown)
    assert [c["data"] for c in shown["messages"][-1]["choices"]] == [
        "a:changes:confirm",
        "a:changes:deny",
    ]
    # It did not answer that question: one miss, so corrections alone cannot hold the intake.
    assert values["attempts"][asked] == 1 and asked not in values.get("unknown", [])
    reply = await driver.send(choice="a:changes:confirm")
    values = await driver.values()
    assert values["facts"]["amount"] == 500_000
    assert values["corrections"][-1] == {"field": "amount", "old": 5_000_000, "new": 500_000}
    assert values["provenance"]["amount"]["confirmed"] is True
    assert reply["field"] == asked  # the question that was open is asked again


async def test_a_correction_refused_is_not_applied_and_its_words_stay(driver: Driver) -> None:
    await driver.send("친구한테 500만원 빌려줬는데 안 갚아요")
    await driver.send("아 금액은 500만원이 아니라 50만원이에요")
    reply = await driver.send(choice="a:changes:deny")
    values = await driver.values()
    assert values["facts"]["amount"] == 5_000_000
    assert not values.get("asides")  # refused: no second value for the lawyer to weigh
    assert "50만원이에요" in values["facts"]["action_description"]  # their words, kept
    assert reply["field"] is not None  # the intake goes on


async def test_a_date_of_another_event_never_replaces_a_recorded_date(driver: Driver) -> None:
    """A date said of something else (a wedding, the day the bank was called) is kept aside
    and said so; the recorded date stays."""
    await driver.send("작년 3월 5일에 친구 김민수한테 300만원 빌려줬는데 안 갚아요")
    values = await driver.values()
    assert values["facts"]["incident_date"] == "2025-03-05"
    await driver.send("그 친구 결혼식이 10월 18일이었는데 그날 빌려준 걸로 생각했나봐요")
    values = await driver.values()
    assert values["facts"]["incident_date"] == "2025-03-05"
    assert "repayment_date" not in values["facts"]  # the date asked is not the wedding's
    assert not values.get("proposed")
    assert "결혼식" in values["facts"]["action_description"]  # the story keeps it
    # Said of the field itself (빌려준), another date is a correction: shown, not yet made.
    await driver.send("빌려준 건 작년 4월이었던 것 같기도 하고요")
    values = await driver.values()
    assert values["facts"]["incident_date"] == "2025-03-05"
    assert [p["field"] for p in values["proposed"]] == ["incident_date"]


async def test_a_date_taken_back_corrects_the_field_that_held_it(driver: Driver) -> None:
    """'3월 아니고 4월 5일' while another date is asked corrects the date that was March."""
    await driver.send("작년 3월 5일에 친구 김민수한테 300만원 빌려줬는데 안 갚아요")
    asked = (await driver.graph.aget_state(driver.config)).tasks[0].interrupts[0].value["field"]
    assert asked == "repayment_date"
    shown = await driver.send("아 3월 아니고 4월 5일이에요")
    assert "2025-03-05" in texts(shown) and "2025-04-05" in texts(shown)  # the year kept
    await driver.send(choice="a:changes:confirm")
    values = await driver.values()
    assert values["facts"]["incident_date"] == "2025-04-05"
    assert "repayment_date" not in values["facts"]


async def test_invalid_answers_are_reasked_twice_then_recorded_unknown(
    driver: Driver, knowledge
) -> None:
    await driver.send("사장님이 석 달째 월급을 안 줘요")
    values = await driver.values()
    assert values["sub_type"] == "WAGE_ARREARS"
    # Walk to the amount question, answering what comes first.
    answers = {
        "counterparty": "OO식당 사장 박민수",
        "employment_start": "2023년 1월",
        "employment_end": "올해 9월",
    }
    payload = await driver.send(answers["counterparty"])
    while payload["field"] != "amount":
        payload = await driver.send(answers[payload["field"]])
    bad = await driver.send("0원")
    assert bad["state"] == "RE_QUESTION" and bad["field"] == "amount"
    assert knowledge.message("invalid_amount_nonpositive", "ko") in texts(bad)
    bad2 = await driver.send("음...")
    assert bad2["state"] == "RE_QUESTION"
    moved_on = await driver.send("흠...")
    values = await driver.values()
    assert "amount" in values["unknown"]
    assert "amount" not in values["facts"]
    assert moved_on["field"] != "amount"
    assert knowledge.message(
        "recorded_unknown", "ko", field=knowledge.k2.field("WAGE_ARREARS", "amount").label.ko
    ) in texts(moved_on)


async def test_future_date_is_reasked_with_the_reason(driver: Driver, knowledge) -> None:
    await driver.send("인터넷 중고거래에서 사기를 당했어요. 돈만 받고 물건을 안 보내요")
    values = await driver.values()
    assert values["sub_type"] == "FRAUD"
    payload = await driver.send(choice="a:party_role:victim")
    assert payload["field"] == "incident_date"
    again = await driver.send("2027년 5월 1일")
    assert again["state"] == "RE_QUESTION"
    assert "2027" in texts(again)
    ok = await driver.send("지난달")
    assert (await driver.values())["facts"]["incident_date"] == "2026-10"
    assert ok["field"] != "incident_date"


async def test_unclear_description_offers_buttons_then_a_pick_continues(driver: Driver) -> None:
    first = await driver.send("문제가 좀 있어서 상담받고 싶어요")
    assert first["state"] == "CONFIRM_CASE_TYPE"
    data = [c["data"] for c in first["messages"][-1]["choices"]]
    assert "ct:CIVIL" in data or any(d.startswith("st:") for d in data)
    browse = await driver.send(choice="ct:FAMILY")
    subs = [c["data"] for c in browse["messages"][-1]["choices"]]
    assert "st:DIVORCE" in subs
    picked = await driver.send(choice="st:DIVORCE")
    values = await driver.values()
    assert (values["case_type"], values["sub_type"], values["confidence"]) == (
        "FAMILY",
        "DIVORCE",
        1.0,
    )
    assert picked["state"] == "FACT_COLLECTION"


async def test_greeting_first_then_description(driver: Driver, knowledge) -> None:
    first = await driver.send("안녕하세요")
    assert first["state"] == "INIT"
    assert knowledge.message("ask_description", "ko") in texts(first)
    second = await driver.send("집주인이 전세 보증금 2억을 안 돌려줘요")
    assert second["state"] in ("FACT_COLLECTION", "CONFIRM_CASE_TYPE")
    values = await driver.values()
    assert values["sub_type"] == "LEASE_DEPOSIT"
    assert values["facts"]["deposit"] == 200_000_000
    assert values["facts"]["lease_type"] == "jeonse"


async def test_photo_during_evidence_question_is_recorded(driver: Driver) -> None:
    await driver.send("친구가 때려서 다쳤어요. 어제 일이에요")
    values = await driver.values()
    assert values["sub_type"] == "ASSAULT"
    payload = await driver.send(choice="a:party_role:victim")
    while payload["field"] not in ("evidence", None):
        field = payload["field"]
        payload = await driver.send(choice=f"a:{field}:unknown")
    photo = {"kind": "photo", "file_id": "AgAD1", "file_unique_id": "u1", "caption": "멍 사진"}
    after = await driver.send(file=photo)
    values = await driver.values()
    assert values["facts"]["evidence"] is True
    assert "photo" in values["facts"]["evidence_type"]
    assert values["evidence_files"][0]["file_id"] == "AgAD1"
    assert after["field"] == "desired_outcome"  # the photo answered; the closing question


def test_routers_raise_on_impossible_states() -> None:
    with pytest.raises(RoutingError):
        route_after_classification({"candidates": None})
    with pytest.raises(RoutingError):  # an answer found invalid while nothing was asked
        route_after_collection({"asking": None, "invalid": {"field": "amount", "reason": "x"}})
    assert route_after_collection({"asking": None}) == "SUMMARY"
    assert route_after_collection({"asking": "amount", "invalid": None}) == "FACT_COLLECTION"
    assert route_after_collection({"asking": "amount", "invalid": {"field": "amount"}}) == (
        "RE_QUESTION"
    )


async def test_an_answer_and_the_next_question_are_two_graph_steps(driver: Driver) -> None:
    """The node that asked reads the answer when it resumes; the next question is one step."""
    await driver.send("인터넷 중고거래에서 사기를 당했어요. 돈만 받고 물건을 안 보내요")
    ctx = Context(knowledge=driver.knowledge, brain=driver.brain, lang="ko", now=NOW)

    async def steps(answer: dict[str, str]) -> list[str]:
        driver.turns += 1
        resume = Command(resume={**answer, "id": str(driver.turns)})
        ran = []
        async for event in driver.graph.astream(
            resume, driver.config, context=ctx, stream_mode="tasks", durability="exit"
        ):
            if "input" in event:  # a task started
                ran.append(event["name"])
        return ran

    async def asked() -> tuple[str, str]:
        waiting = (await driver.graph.aget_state(driver.config)).tasks[0].interrupts[0].value
        return waiting["state"], waiting["field"]

    pressed = {"kind": "choice", "data": "a:party_role:victim"}
    assert await steps(pressed) == ["FACT_COLLECTION", "FACT_COLLECTION"]  # read, next asked
    assert await asked() == ("FACT_COLLECTION", "incident_date")
    future = {"kind": "text", "text": "2027년 5월 1일"}
    assert await steps(future) == ["FACT_COLLECTION", "RE_QUESTION"]  # invalid: asked again
    assert await asked() == ("RE_QUESTION", "incident_date")
    assert await steps({**future, "text": "2028년 1월"}) == ["RE_QUESTION", "RE_QUESTION"]
    assert await steps({"kind": "text", "text": "지난달"}) == ["RE_QUESTION", "FACT_COLLECTION"]
    values = await driver.values()
    assert values["facts"]["party_role"] == "victim"
    assert values["facts"]["incident_date"] == "2026-10"
    assert values["attempts"]["incident_date"] == 2
    assert (await asked())[0] == "FACT_COLLECTION"


async def test_unsure_rules_get_retrieved_candidates_from_the_knowledge_base(
    tmp_path: Path, knowledge, brain, kb
) -> None:
    d = Driver(tmp_path / "kb.db", knowledge, brain)
    d.kb = kb
    await d.open()
    try:
        first = await d.send("회사 그만뒀는데 돈을 못 받았어요")
        assert first["state"] == "CONFIRM_CASE_TYPE"
        offered = [c["data"] for c in first["messages"][-1]["choices"]]
        rules = [
            c.sub_type
            for c in (await brain.classify_case("회사 그만뒀는데 돈을 못 받았어요")).candidates
        ]
        assert offered[: len(rules)] == [f"st:{code}" for code in rules]  # rules first
        assert len([o for o in offered if o.startswith("st:")]) == 3  # retrieval filled the rest
        assert "st:WAGE_ARREARS" in offered
        vague = Driver(tmp_path / "vague.db", knowledge, brain)
        vague.kb = kb
        await vague.open()
        reply = await vague.send("문제가 좀 있어서 상담받고 싶어요")
        assert [c["data"] for c in reply["messages"][-1]["choices"]] == [
            "ct:CIVIL",
            "ct:CRIMINAL",
            "ct:FAMILY",
            "ct:ADMINISTRATIVE",
            "st:OTHER",  # 기타: the free-form intake, taken as told
        ]
        await vague.close()
    finally:
        await d.close()


async def test_a_file_before_the_case_type_is_picked_is_asked_for_again_later(
    driver: Driver, knowledge
) -> None:
    first = await driver.send("문제가 좀 있어서 상담받고 싶어요")
    assert first["state"] == "CONFIRM_CASE_TYPE"
    photo = {"kind": "photo", "file_id": "AgAD9", "file_unique_id": "u9", "caption": ""}
    again = await driver.send(file=photo)
    assert again["state"] == "CONFIRM_CASE_TYPE"
    assert knowledge.message("evidence_before_type", "ko") in texts(again)
    assert again["messages"][-1]["choices"] == first["messages"][-1]["choices"]
    assert not (await driver.values()).get("evidence_files")


async def test_a_date_given_for_the_counterparty_is_kept_and_the_question_asked_again(
    driver: Driver, knowledge
) -> None:
    first = await driver.send("작년 3월에 300만원 빌려줬는데 안 갚아요")
    assert first["field"] == "counterparty"
    again = await driver.send("다음달 말까지 갚기로 했어요")
    values = await driver.values()
    assert "counterparty" not in values["facts"]
    assert values["facts"]["repayment_date"] == "2026-12"  # the date is kept
    assert again["field"] == "counterparty"
    assert knowledge.message("invalid_text_other", "ko") in texts(again)
    named = await driver.send("고등학교 동창 김민수요")
    assert "김민수" in (await driver.values())["facts"]["counterparty"]
    assert named["field"] != "counterparty"


async def test_dates_instead_of_a_name_end_in_unknown_not_a_loop(driver: Driver) -> None:
    await driver.send("작년 3월에 300만원 빌려줬는데 안 갚아요")
    for month in (5, 6, 7):
        reply = await driver.send(f"올해 {month}월까지 갚기로 했어요")
    values = await driver.values()
    assert "counterparty" in values["unknown"]
    assert reply["field"] != "counterparty"


async def test_evidence_kinds_are_picked_with_several_presses_then_done(
    driver: Driver, knowledge
) -> None:
    await driver.send("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요")
    await driver.send("올해 6월 말까지 갚기로 했어요")
    kinds_q = await driver.send(choice="a:evidence:yes")
    assert kinds_q["field"] == "evidence_type"
    first = [c["data"] for c in kinds_q["messages"][-1]["choices"]]
    assert "a:evidence_type:messages" in first and first[-1] == "a:evidence_type:unknown"

    one = await driver.send(choice="a:evidence_type:messages")
    assert one["field"] == "evidence_type"
    offered = [c["data"] for c in one["messages"][-1]["choices"]]
    assert "a:evidence_type:messages" not in offered  # picked: not offered again
    assert offered[-1] == "a:evidence_type:done" and "a:evidence_type:unknown" not in offered
    label = knowledge.k2.field("LOAN", "evidence_type").options[1].label.ko
    assert "지금까지 고른 것" in texts(one) and label in texts(one)
    assert "evidence_type" not in (await driver.values())["facts"]

    await driver.close()  # the picks so far survive a restart
    await driver.open()
    await driver.send(choice="a:evidence_type:messages")  # an old button pressed again
    two = await driver.send(choice="a:evidence_type:recording")
    assert (await driver.values())["picked"] == ["messages", "recording"]
    assert two["field"] == "evidence_type"
    done = await driver.send(choice="a:evidence_type:done")
    values = await driver.values()
    assert values["facts"]["evidence_type"] == ["messages", "recording"]
    assert values["picked"] == []
    assert done["field"] != "evidence_type"


async def test_typed_kinds_join_the_pressed_ones(driver: Driver) -> None:
    await driver.send("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요")
    await driver.send("올해 6월 말까지 갚기로 했어요")
    await driver.send(choice="a:evidence:yes")
    await driver.send(choice="a:evidence_type:contract")
    await driver.send("그리고 녹음도 있어요")
    assert (await driver.values())["facts"]["evidence_type"] == ["contract", "recording"]


async def test_picking_every_evidence_kind_answers_without_done(driver: Driver, knowledge) -> None:
    await driver.send("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요")
    await driver.send("올해 6월 말까지 갚기로 했어요")
    await driver.send(choice="a:evidence:yes")
    options = [o.value for o in knowledge.k2.field("LOAN", "evidence_type").options]
    for value in options:
        reply = await driver.send(choice=f"a:evidence_type:{value}")
    assert (await driver.values())["facts"]["evidence_type"] == options
    assert reply["field"] != "evidence_type"


async def test_a_question_back_stays_the_lawyers_to_answer(driver: Driver, knowledge) -> None:
    """General information from K3 is no answer: the question is listed unanswered, marked as
    given general information (legal_set17 R3, R4, R6 read "answered: true" as nothing left
    for the lawyer, where a generic limitation note met a question about another deadline)."""
    await driver.send("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요")
    reply = await driver.send("소멸시효가 언제까지인가요?")
    await driver.send("이 사람 처벌도 받을 수 있나요? 변호사 비용은 얼마나 들어요?")
    [limit, *others] = (await driver.values())["questions"]
    assert limit == {"text": "소멸시효가 언제까지인가요?", "answered": False, "general_info": True}
    assert knowledge.k3.info["LOAN"].limitation.get("ko") in texts(reply)
    assert others and all(q["answered"] is False for q in others)
