"""The engine with people as they really write: danger, questions back, second thoughts,
drafts, corrections after the summary, and where each fact came from (real SQLite files)."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from bot.engine import Engine, Inbound
from db.models import CaseFact, ChatSession, SafetyAlert
from tests.support import NOW

CHAT = 4242
ADMIN = 777  # in the settings fixture's ADMIN_IDS
LOAN_STORY = "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"


def text(value: str, *, input_id: str | None = None, minutes: int = 0) -> Inbound:
    return Inbound(
        chat_id=CHAT,
        kind="text",
        text=value,
        input_id=input_id,
        user_id=5,
        at=NOW + timedelta(minutes=minutes),
    )


def choice(data: str, *, minutes: int = 0) -> Inbound:
    return Inbound(
        chat_id=CHAT, kind="choice", data=data, user_id=5, at=NOW + timedelta(minutes=minutes)
    )


def command(name: str, *args: str, user_id: int = 5, chat: int = CHAT) -> Inbound:
    return Inbound(chat_id=chat, kind="command", command=name, args=args, user_id=user_id, at=NOW)


def joined(reply) -> str:
    return "\n".join(m["text"] for m in reply.messages)


def offered(reply) -> list[str]:
    return [c["data"] for m in reply.messages for c in m.get("choices") or []]


async def sessions(engine: Engine) -> list[ChatSession]:
    async with AsyncSession(engine.records) as db:
        query = select(ChatSession).where(ChatSession.chat_id == CHAT)
        return list((await db.exec(query)).all())


async def fact_rows(engine: Engine) -> dict[str, CaseFact]:
    [session] = [s for s in await sessions(engine) if s.status != "cancelled"][-1:]
    async with AsyncSession(engine.records) as db:
        rows = (await db.exec(select(CaseFact).where(CaseFact.session_id == session.id))).all()
        return {r.key: r for r in rows}


async def alerts(engine: Engine) -> list[SafetyAlert]:
    async with AsyncSession(engine.records) as db:
        return list((await db.exec(select(SafetyAlert))).all())


async def export_rows(engine: Engine, *args: str) -> list[dict]:
    reply = await engine.handle(command("export", "json", *args, user_id=ADMIN, chat=ADMIN))
    [document] = reply.documents
    return json.loads(document.content.decode("utf-8"))


async def finish_loan(engine: Engine) -> None:
    await engine.handle(text(LOAN_STORY))
    await engine.handle(text("올해 6월"))
    done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"


# --- safety first ----------------------------------------------------------------------------


async def test_danger_in_the_first_message_is_answered_first_recorded_and_sent_to_staff(
    engine: Engine,
) -> None:
    reply = await engine.handle(text("남편이 지금 칼을 들고 위협해요 무서워요", input_id="u1"))
    assert "112" in reply.messages[0]["text"]  # what to do now, before any greeting
    assert [a.code for a in await alerts(engine)]
    [notice] = reply.notices
    assert notice.chat_id == ADMIN and "112" in notice.text
    # The intake goes on: the story was taken as the description.
    assert reply.state in ("FACT_COLLECTION", "CONFIRM_CASE_TYPE")


async def test_a_redelivered_danger_message_alerts_staff_once(engine: Engine) -> None:
    await engine.handle(text("너무 힘들어서 죽고 싶어요", input_id="u7"))
    again = await engine.handle(text("너무 힘들어서 죽고 싶어요", input_id="u7"))
    assert "109" in again.messages[0]["text"]  # the person still gets the numbers
    assert again.notices == []
    assert len({a.input_id for a in await alerts(engine)}) == 1


async def test_suicidal_words_mid_intake_get_109_and_the_intake_waits_for_the_person(
    engine: Engine,
) -> None:
    first = await engine.handle(text(LOAN_STORY))
    asked = first.field
    reply = await engine.handle(text("너무 힘들어서 죽고 싶어요"))
    assert "109" in reply.messages[0]["text"]
    assert reply.field is None  # no intake question in the crisis reply
    assert "알아듣지 못했" not in joined(reply)  # never read as a wrong answer
    held = await engine.handle(text("올해 6월"))
    assert held.field is None and "109" in joined(held)  # stays with the person
    back = await engine.handle(choice("cmd:resume"))
    assert back.field == asked and back.state == "FACT_COLLECTION"  # where it was
    after = await engine.handle(text("올해 6월"))
    assert after.field != asked  # the intake goes on where it was


async def test_english_suicidal_words_get_the_crisis_line_in_english(engine: Engine) -> None:
    reply = await engine.handle(text("I want to kill myself"))
    assert "109" in reply.messages[0]["text"]
    assert any(ch.isascii() and ch.isalpha() for ch in reply.messages[0]["text"])


async def test_past_violence_is_an_intake_not_an_alert(engine: Engine) -> None:
    reply = await engine.handle(text("예전에 폭행당한 적 있어요 그때 일로 상담하고 싶어요"))
    assert not reply.notices and not await alerts(engine)
    assert not any(n in reply.messages[0]["text"] for n in ("112", "109", "1366"))


async def test_the_risk_heads_the_staff_summary_and_flags_sessions_and_export(
    engine: Engine,
) -> None:
    await engine.handle(text(LOAN_STORY))
    await engine.handle(text("그 사람이 지금 우리 집 앞에 와서 문을 두드려요 무서워요"))
    listing = joined(await engine.handle(command("sessions", user_id=ADMIN, chat=ADMIN)))
    assert "⚠️" in listing.splitlines()[1]  # the flagged intake is listed first
    await engine.handle(text("올해 6월"))
    await engine.handle(choice("a:evidence:no"))
    [row] = await export_rows(engine)
    assert row["alerts"] and row["alerts"][0]["code"]
    assert row["summary_text"].startswith("⚠️")


# --- commands people use mid-intake -------------------------------------------------------


async def test_new_asks_before_dropping_and_the_dropped_intake_stays_in_the_export(
    engine: Engine,
) -> None:
    await engine.handle(text(LOAN_STORY))
    ask = await engine.handle(command("new"))
    assert "cmd:restart" in offered(ask) and "cmd:continue" in offered(ask)
    assert [s.status for s in await sessions(engine)] == ["open"]  # nothing dropped yet
    await engine.handle(choice("cmd:restart"))
    rows = await export_rows(engine, "all")
    statuses = sorted(r["status"] for r in rows if r["chat_id"] == CHAT)
    assert statuses == ["cancelled", "open"]
    cancelled = next(r for r in rows if r["status"] == "cancelled")
    assert cancelled["facts"]["amount"] == 3_000_000


async def test_new_keeps_the_intake_when_the_person_says_so(engine: Engine) -> None:
    first = await engine.handle(text(LOAN_STORY))
    await engine.handle(command("new"))
    kept = await engine.handle(choice("cmd:continue"))
    assert kept.field == first.field


async def test_cancel_can_be_undone(engine: Engine) -> None:
    first = await engine.handle(text(LOAN_STORY))
    cancelled = await engine.handle(command("cancel"))
    assert offered(cancelled) == ["cmd:undo_cancel"]
    undone = await engine.handle(choice("cmd:undo_cancel"))
    assert undone.field == first.field and undone.state == "FACT_COLLECTION"
    assert [s.status for s in await sessions(engine)] == ["open"]


async def test_help_shows_staff_commands_only_to_staff(engine: Engine) -> None:
    person = joined(await engine.handle(command("help")))
    staff = joined(await engine.handle(command("help", user_id=ADMIN, chat=ADMIN)))
    assert "/export" not in person and "/sessions" not in person
    assert "/export" in staff and "/sessions" in staff


async def test_summary_mid_intake_shows_the_draft_and_keeps_the_question(engine: Engine) -> None:
    first = await engine.handle(text(LOAN_STORY))
    draft = await engine.handle(command("summary"))
    body = joined(draft)
    assert "3,000,000" in body and "김철수" in body
    assert draft.field == first.field


async def test_asking_to_delete_everything_in_words_leads_to_the_forget_confirmation(
    engine: Engine,
) -> None:
    first = await engine.handle(text(LOAN_STORY))
    ask = await engine.handle(text("제 정보 다 삭제해 주세요"))
    assert "cmd:forget" in offered(ask)
    kept = await engine.handle(choice("cmd:keep"))
    assert kept.field == first.field  # back to the question it waited on
    assert (await fact_rows(engine))["amount"].value_json == "3000000"


# --- a conversation, not a form ---------------------------------------------------------------


async def test_a_question_back_is_answered_or_noted_and_not_counted_as_a_miss(
    engine: Engine,
) -> None:
    first = await engine.handle(text(LOAN_STORY))
    reply = await engine.handle(text("이거 소송하면 이길 수 있어요?"))
    assert reply.field == first.field and reply.state == "FACT_COLLECTION"
    assert "알아듣지 못했" not in joined(reply)
    await engine.handle(text("올해 6월"))
    await engine.handle(choice("a:evidence:no"))
    [row] = await export_rows(engine)
    assert any("이길 수 있어요" in q["text"] for q in row["structured"]["questions"])


async def test_a_medical_question_first_gets_a_clear_word_not_the_case_picker(
    engine: Engine,
) -> None:
    reply = await engine.handle(text("머리가 너무 아픈데 무슨 약을 먹어야 해요?"))
    # a headache however it is put ("너무" inside) is health: the medical assistant answers
    assert reply.state == "MEDICAL"
    assert not any(d.startswith(("st:", "ct:")) for d in offered(reply))
    assert "출처:" in joined(reply)


async def test_a_correction_after_the_summary_amends_it_and_staff_see_the_change(
    engine: Engine,
) -> None:
    await finish_loan(engine)
    shown = await engine.handle(text("아 금액이 300만원이 아니라 350만원이에요"))
    assert "3,000,000" in joined(shown) and "3,500,000" in joined(shown)  # old -> new
    [row] = await export_rows(engine)
    assert row["facts"]["amount"] == 3_000_000  # not before the person says yes
    reply = await engine.handle(choice("a:changes:confirm"))
    assert "3,500,000" in joined(reply)
    [row] = await export_rows(engine)
    assert row["facts"]["amount"] == 3_500_000
    assert row["structured"]["amendments"][0]["new"] == 3_500_000
    assert "✏️" in row["summary_text"]


async def test_after_the_summary_two_corrections_in_one_message_are_confirmed_together(
    engine: Engine,
) -> None:
    await finish_loan(engine)
    shown = await engine.handle(
        text("금액 300 아니고 350이에요 그리고 갚기로 한 날은 6월 아니라 7월이요")
    )
    assert "3,500,000" in joined(shown) and "2026-07" in joined(shown)
    await engine.handle(choice("a:changes:confirm"))
    [row] = await export_rows(engine)
    assert row["facts"]["amount"] == 3_500_000
    assert row["facts"]["repayment_date"] == "2026-07"


async def test_after_the_summary_a_bare_value_or_another_matter_changes_no_field(
    engine: Engine,
) -> None:
    """A completed intake is never rewritten by whatever comes next (a reliability probe):
    a bare date, '어제요', another matter — each kept for the lawyer, no field changed."""
    await finish_loan(engine)
    [before] = await export_rows(engine)
    for said in ("3.14", "어제요", "전세 보증금 1억을 못 돌려받고 있습니다", "~/.ssh/id_rsa"):
        await engine.handle(text(said))
    [row] = await export_rows(engine)
    assert row["facts"] == before["facts"]
    addenda = [a["text"] for a in row["structured"]["addenda"]]
    assert "전세 보증금 1억을 못 돌려받고 있습니다" in addenda
    assert "요약 후 덧붙인 말씀" in row["summary_text"]


async def test_another_matter_after_the_summary_is_offered_as_a_new_intake(
    engine: Engine,
) -> None:
    await finish_loan(engine)
    reply = await engine.handle(text("그리고 전 남편이 양육비를 1년째 안 주고 있어요"))
    assert "cmd:restart" in [c["data"] for m in reply.messages for c in m["choices"]]
    # the button starts the new intake (legal_set15 R5 was told it no longer worked)
    fresh = await engine.handle(choice("cmd:restart"))
    assert fresh.state == "INIT"
    assert "이 버튼은 이제" not in joined(fresh)


async def test_small_talk_after_the_summary_changes_nothing(engine: Engine) -> None:
    await finish_loan(engine)
    reply = await engine.handle(text("ㅋㅋㅋ"))
    assert reply.state == "COMPLETED"
    [row] = await export_rows(engine)
    assert not row["structured"]["amendments"]


# --- where each fact came from --------------------------------------------------------------


async def test_every_fact_keeps_the_words_it_came_from_and_whether_it_was_confirmed(
    engine: Engine,
) -> None:
    await finish_loan(engine)
    rows = await fact_rows(engine)
    assert rows["amount"].quote == LOAN_STORY and not rows["amount"].confirmed
    assert rows["evidence"].confirmed  # a pressed button is the person's own choice
    [row] = await export_rows(engine)
    detail = row["facts_detail"]["repayment_date"]
    assert detail["quote"] == "올해 6월" and detail["said_at"]


async def test_a_value_said_unsure_is_confirmed_with_a_button_before_it_is_kept(
    engine: Engine,
) -> None:
    await engine.handle(text("친구한테 돈을 빌려줬는데 안 갚아요"))
    for _ in range(4):  # answer until the amount is asked
        reply = await engine.handle(text("김철수요"))
        if reply.field == "amount":
            break
    assert reply.field == "amount"
    ask = await engine.handle(text("한 300만원?"))
    assert f"a:{ask.field}:confirm" in offered(ask) and ask.field == "amount"
    assert "amount" not in await fact_rows(engine)
    await engine.handle(choice("a:amount:confirm"))
    row = (await fact_rows(engine))["amount"]
    assert json.loads(row.value_json) == 3_000_000 and row.confirmed


async def test_a_plain_answer_that_cannot_be_read_is_kept_as_told_not_refused(
    engine: Engine,
) -> None:
    """A plain answer the field's reader cannot normalise is kept in the person's words on its
    first telling and the intake goes on; a sound too short to be an answer is asked again."""
    first = await engine.handle(text(LOAN_STORY))
    assert first.field == "repayment_date"
    again = await engine.handle(text("음.."))
    assert again.field == "repayment_date" and again.state == "RE_QUESTION"
    wish = await engine.handle(text("이자까지 다 받고 싶어요"))  # a wish: no answer to keep
    assert wish.field == "repayment_date" and wish.state == "RE_QUESTION"
    kept = await engine.handle(text("그 사람 말로는 형편 될 때 준대요"))
    assert kept.field == "evidence" and "형편 될 때" in joined(kept)
    await engine.handle(choice("a:evidence:no"))
    [row] = await export_rows(engine)
    assert "형편 될 때" in row["summary_text"]
    assert row["facts_detail"]["repayment_date"]["quote"] == "그 사람 말로는 형편 될 때 준대요"
    assert row["facts"]["repayment_date"] is None, row["facts"]  # the words, not a date


async def test_a_word_in_passing_does_not_overwrite_a_fact_but_a_restated_value_does(
    engine: Engine,
) -> None:
    reply = await engine.handle(text("당근에서 아이폰 사려고 50만원 보냈는데 판매자가 잠수탔어요"))
    rows = await fact_rows(engine)
    assert json.loads(rows["fraud_channel"].value_json) == "secondhand"
    # Answering the question about the side with a mention of KakaoTalk (an SNS/messenger
    # option word) leaves the channel as it was...
    assert reply.field == "party_role"
    await engine.handle(text("제가 당했죠 카톡으로만 얘기했어요", minutes=1))
    rows = await fact_rows(engine)
    assert json.loads(rows["fraud_channel"].value_json) == "secondhand"
    assert json.loads(rows["party_role"].value_json) == "victim"
    # ...while an amount stated again by its own words is a correction, made on a yes.
    shown = await engine.handle(text("아 보낸 돈은 55만원이에요", minutes=2))
    assert "550,000" in joined(shown)
    await engine.handle(choice("a:changes:confirm", minutes=3))
    rows = await fact_rows(engine)
    assert json.loads(rows["amount"].value_json) == 550_000


async def test_a_correction_written_as_the_summary_shows_the_value_is_read(
    engine: Engine,
) -> None:
    """The bot's own hint ("'<recorded> 아니고 <new>'처럼") works with the value as shown."""
    await finish_loan(engine)
    [row] = await export_rows(engine)
    recorded = row["facts"]["repayment_date"]
    shown = await engine.handle(text(f"{recorded} 아니고 2026-08-31이에요"))
    assert "2026-08-31" in joined(shown) and "a:changes:confirm" in str(shown.messages)
    await engine.handle(choice("a:changes:confirm"))
    [row] = await export_rows(engine)
    assert row["facts"]["repayment_date"] == "2026-08-31"
    assert row["facts"]["amount"] == 3_000_000  # no number of the date read as an amount


async def test_a_number_put_right_is_not_kept_as_the_answer_to_another_question(
    engine: Engine,
) -> None:
    """ "5년 아니고 23년" said again while a yes/no is asked (legal_set6 tW5) puts a number right;
    it is no answer in the person's words to the question asked, which comes again."""
    first = await engine.handle(
        text("이혼하고 싶어요 결혼한지 23년 됐고 남편이 때려요. 아이는 없어요")
    )
    asked = first.field
    assert asked is not None
    spec = engine.knowledge.k2.field("DIVORCE", asked)
    assert spec.kind in ("yesno", "choice"), asked
    again = await engine.handle(text("5년 아니고 23년", minutes=1))
    assert again.field == asked and "5년 아니고 23년" not in joined(again)
    [row] = await export_rows(engine, "all")
    assert row["facts"]["marriage_duration"] == 23 * 12
    assert asked not in (row.get("unclear") or {})
