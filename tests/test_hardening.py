"""Hardening of the engine against what attackers and clumsy users send (issue #6).

Broken Unicode, replays, forged or foreign button presses, an intake held in place by answers
that say something else, a crash between the graph and the records, and deletion that must reach
the disk while the process runs. Real SQLite files, the real graph, the rules brain.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from bot.engine import Engine, Inbound
from db import repo
from db.engine import checkpoints_path, create_records_engine, records_path
from db.models import ChatSession, ChatTurn, InboxUpdate
from tests.support import NOW

CHAT = 42
USER = 5
ADMIN = 777  # in the settings fixture's ADMIN_IDS
LOAN = "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"
JEONSE = "전세 보증금 1억 2000만원을 집주인이 안 돌려줘요"


def text(
    value: str, *, input_id: str | None = None, minutes: int = 0, user: int = USER, chat: int = CHAT
) -> Inbound:
    at = NOW + timedelta(minutes=minutes)
    return Inbound(chat_id=chat, kind="text", text=value, input_id=input_id, user_id=user, at=at)


def choice(data: str, *, user: int = USER, chat: int = CHAT) -> Inbound:
    return Inbound(chat_id=chat, kind="choice", data=data, user_id=user, at=NOW)


def command(name: str, *args: str, user: int = USER, chat: int = CHAT) -> Inbound:
    return Inbound(chat_id=chat, kind="command", command=name, args=args, user_id=user, at=NOW)


def joined(reply) -> str:
    return "\n".join(m["text"] for m in reply.messages)


def offered(reply) -> list[str]:
    return [c["data"] for m in reply.messages for c in m["choices"]]


async def session_of(engine: Engine, chat: int = CHAT) -> ChatSession:
    async with AsyncSession(engine.records) as db:
        query = select(ChatSession).where(ChatSession.chat_id == chat)
        return (await db.exec(query.order_by(ChatSession.started_at.desc()))).first()


async def facts_of(engine: Engine, chat: int = CHAT) -> dict:
    record = await repo.case_record(engine=engine.records, session=await session_of(engine, chat))
    return record["facts"]


async def turns_of(engine: Engine) -> list[ChatTurn]:
    async with AsyncSession(engine.records) as db:
        return list((await db.exec(select(ChatTurn).order_by(ChatTurn.id))).all())


async def graph_values(engine: Engine) -> dict:
    session = await session_of(engine)
    state = await engine.graph.aget_state({"configurable": {"thread_id": session.id}})
    return state.values


# --- broken Unicode ------------------------------------------------------------------------


async def test_lone_surrogates_in_the_first_a_middle_and_the_last_message(engine: Engine) -> None:
    first = await engine.handle(text("\udc00" + LOAN))  # crashed Kiwi before
    assert first.field == "repayment_date"
    assert (await facts_of(engine))["amount"] == 3_000_000

    middle = await engine.handle(text("올해 6월\ud800", minutes=1))
    assert middle.field == "evidence"
    turns = await turns_of(engine)
    assert len(turns) == 2  # the turn's history row was written, not lost to four failures
    assert turns[1].user_text == "올해 6월\ufffd"

    last = await engine.handle(text("없어요 \udfff", minutes=2))
    assert last.state == "COMPLETED"
    for message in last.messages:
        message["text"].encode("utf-8")  # what the channel prints or sends is valid
    session = await session_of(engine)
    assert session.status == "completed"
    assert await repo.get_summary(engine=engine.records, session_id=session.id) is not None


async def test_a_split_emoji_is_joined_and_a_surrogate_in_button_data_is_harmless(
    engine: Engine, knowledge
) -> None:
    reply = await engine.handle(text("\ud83d\ude00 " + LOAN))
    assert reply.field == "repayment_date"
    assert "😀" in (await turns_of(engine))[0].user_text
    pressed = await engine.handle(choice("a:evidence:\udc00"))
    assert joined(pressed).startswith(knowledge.message("already_answered", "ko"))
    assert pressed.field == "repayment_date"


# --- replays ---------------------------------------------------------------------------------


async def test_a_replayed_input_changes_nothing(engine: Engine) -> None:
    await engine.handle(text(LOAN, input_id="99"))
    await engine.handle(text("올해 6월", input_id="100", minutes=1))
    facts, values, turns = (
        await facts_of(engine),
        await graph_values(engine),
        await turns_of(engine),
    )

    replay = await engine.handle(text("올해 6월", input_id="100", minutes=2))

    assert replay.field == "evidence"  # where the intake stands, asked again
    assert await facts_of(engine) == facts  # incident date still 2025-03, not 2026-06
    assert facts["incident_date"] == "2025-03"
    assert await graph_values(engine) == values
    assert len(await turns_of(engine)) == len(turns)


async def test_a_replay_after_a_crash_before_the_records_writes_them_once(
    engine: Engine, monkeypatch
) -> None:
    await engine.handle(text(LOAN, input_id="99"))

    async def broken(**kwargs):
        raise RuntimeError("killed before the records write")

    with monkeypatch.context() as patch:  # every records write fails
        patch.setattr(repo, "sync_case", broken)
        patch.setattr(repo, "write_turn", broken)
        await engine.handle(text("올해 6월", input_id="100", minutes=1))  # the graph took it
    assert "repayment_date" not in await facts_of(engine)

    for minutes in (2, 3):  # recovered from the inbox, then delivered once more
        replay = await engine.handle(text("올해 6월", input_id="100", minutes=minutes))
        assert replay.field == "evidence"
    assert (await facts_of(engine))["repayment_date"] == "2026-06"
    rows = [(t.input_id, t.field, t.user_text) for t in await turns_of(engine)]
    assert rows == [("99", None, LOAN), ("100", "repayment_date", "올해 6월")]


# --- buttons ---------------------------------------------------------------------------------


async def test_buttons_count_only_for_the_person_shown_and_while_offered(
    engine: Engine, knowledge
) -> None:
    asked = await engine.handle(text(LOAN))
    await engine.handle(text("올해 6월", minutes=1))
    facts = await facts_of(engine)

    # A forged delete button (never shown) deletes nothing.
    forged = await engine.handle(choice("cmd:forget"))
    assert knowledge.message("forgotten", "ko") not in joined(forged)
    assert joined(forged).startswith(knowledge.message("stale_button", "ko"))
    # A button shown to this person, pressed by another, is refused.
    foreign = await engine.handle(choice("a:evidence:yes", user=6))
    assert joined(foreign).startswith(knowledge.message("stale_button", "ko"))
    # A button of an earlier question (shown before, no longer offered) changes nothing.
    assert "a:repayment_date:unknown" in offered(asked)
    old = await engine.handle(choice("a:repayment_date:unknown"))
    assert joined(old).startswith(knowledge.message("already_answered", "ko"))
    assert await facts_of(engine) == facts

    # The person it was shown to still can, once.
    yes = await engine.handle(choice("a:evidence:yes"))
    assert yes.field == "evidence_type" and (await facts_of(engine))["evidence"] is True
    again = await engine.handle(choice("a:evidence:yes"))
    assert joined(again).startswith(knowledge.message("already_answered", "ko"))


async def test_a_forged_press_carrying_the_id_of_the_last_input_is_still_refused(
    engine: Engine, knowledge
) -> None:
    """Found by the property tests: a refused delete button passed as a 'replay' of the text
    whose input id it carried, and deleted everything."""
    await engine.handle(text(LOAN, input_id="in-1"))
    forged = Inbound(chat_id=CHAT, kind="choice", data="cmd:forget", input_id="in-1", user_id=USER)
    reply = await engine.handle(forged)
    assert knowledge.message("forgotten", "ko") not in joined(reply)
    assert (await facts_of(engine))["amount"] == 3_000_000


async def test_forget_button_works_only_right_after_forget_and_only_for_its_person(
    engine: Engine, knowledge
) -> None:
    await engine.handle(text(LOAN))
    confirm = await engine.handle(command("forget"))
    assert offered(confirm) == ["cmd:forget", "cmd:keep"]
    other = await engine.handle(choice("cmd:forget", user=6))
    assert knowledge.message("forgotten", "ko") not in joined(other)
    # Anything else in between withdraws the offer.
    await engine.handle(command("status"))
    late = await engine.handle(choice("cmd:forget"))
    assert knowledge.message("forgotten", "ko") not in joined(late)
    assert (await facts_of(engine))["amount"] == 3_000_000
    await engine.handle(command("forget"))
    done = await engine.handle(choice("cmd:forget"))
    assert knowledge.message("forgotten", "ko") in joined(done)
    assert await session_of(engine) is None


# --- an intake held in place -----------------------------------------------------------------


async def start_jeonse(engine: Engine, knowledge):
    await engine.handle(text(JEONSE))
    reply = await engine.handle(text("작년 5월에 계약 끝났어요", minutes=1))
    assert reply.field == "still_occupying"
    return reply


async def test_restating_a_recorded_fact_is_said_so_and_cannot_hold_the_intake(
    engine: Engine, knowledge
) -> None:
    await start_jeonse(engine, knowledge)
    label = knowledge.k2.field("LEASE_DEPOSIT", "deposit").label.ko
    note = knowledge.message("already_recorded", "ko", facts=f"{label} 120,000,000원")
    replies = [await engine.handle(text("1억 2000만원", minutes=2 + n)) for n in range(3)]

    assert [r.field for r in replies[:2]] == ["still_occupying", "still_occupying"]
    assert all(note in joined(r) for r in replies[:2])  # each says why it asks again
    still = knowledge.k2.field("LEASE_DEPOSIT", "still_occupying").label.ko
    assert knowledge.message("recorded_unknown", "ko", field=still) in joined(replies[2])
    assert replies[2].field not in (None, "still_occupying")  # the intake moved on
    values = await graph_values(engine)
    assert "still_occupying" in values["unknown"] and values["facts"]["deposit"] == 120_000_000


async def test_a_correction_every_time_cannot_hold_the_intake(engine: Engine, knowledge) -> None:
    await start_jeonse(engine, knowledge)
    fields = []
    for n, amount in enumerate(["1억", "1억 2000만원", "1억"]):
        shown = await engine.handle(text(f"아 보증금은 {amount}이에요", minutes=2 + n))
        assert "a:changes:confirm" in offered(shown)  # old -> new, to confirm
        reply = await engine.handle(choice("a:changes:confirm"))
        fields.append(reply.field)
    assert fields[:2] == ["still_occupying", "still_occupying"]
    assert fields[2] != "still_occupying"  # each correction counted a miss: no loop
    values = await graph_values(engine)
    assert values["facts"]["deposit"] == 100_000_000  # the latest confirmed correction
    assert [c["new"] for c in values["corrections"]] == [100_000_000, 120_000_000, 100_000_000]


async def test_old_buttons_and_commands_explain_and_change_nothing(
    engine: Engine, knowledge
) -> None:
    first = await engine.handle(text(JEONSE))
    old = next(d for d in offered(first) if d.startswith("a:lease_end_date:"))
    now = await engine.handle(text("작년 5월에 계약 끝났어요", minutes=1))
    assert now.field == "still_occupying"
    facts = await facts_of(engine)
    for _ in range(5):  # the old question's button, pressed again and again
        reply = await engine.handle(choice(old))
        assert joined(reply).startswith(knowledge.message("already_answered", "ko"))
        assert reply.field == "still_occupying"  # and the question now open comes with it
    for name in ("status", "help", "summary", "lang"):
        reply = await engine.handle(command(name))
        assert reply.messages and joined(reply)
    values = await graph_values(engine)
    assert await facts_of(engine) == facts and not values.get("attempts")
    moved = await engine.handle(choice("a:still_occupying:yes"))
    assert moved.field not in (None, "still_occupying")


# --- killed between the graph and the records ------------------------------------------------


async def finish_with_records_failing(engine: Engine, monkeypatch) -> ChatSession:
    """Complete a loan intake whose last records write fails, as a kill at that point leaves it."""
    await engine.handle(text(LOAN))
    await engine.handle(text("올해 6월", minutes=1))

    async def broken(**kwargs):
        raise RuntimeError("disk I/O error")

    with monkeypatch.context() as patch:  # every records write fails
        patch.setattr(repo, "sync_case", broken)
        patch.setattr(repo, "write_turn", broken)
        done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"
    session = await session_of(engine)
    assert session.status == "open"  # the records did not follow
    return session


async def test_a_finished_intake_is_repaired_on_any_read_of_its_chat(
    engine: Engine, knowledge, monkeypatch
) -> None:
    session = await finish_with_records_failing(engine, monkeypatch)
    summary = await engine.handle(command("summary"))
    assert knowledge.message("no_summary_yet", "ko") not in joined(summary)
    assert "3,000,000" in joined(summary)
    assert (await session_of(engine)).status == "completed"
    assert (await repo.get_summary(engine=engine.records, session_id=session.id)) is not None


async def test_a_finished_intake_is_repaired_before_staff_read_it(
    engine: Engine, monkeypatch
) -> None:
    session = await finish_with_records_failing(engine, monkeypatch)
    listing = await engine.handle(command("sessions", user=ADMIN, chat=ADMIN))
    assert session.id not in joined(listing) and "LOAN" not in joined(listing)
    exported = await engine.handle(command("export", "json", user=ADMIN, chat=ADMIN))
    [row] = json.loads(exported.documents[0].content)
    assert row["status"] == "completed" and row["summary_text"]


async def test_a_finished_intake_is_repaired_at_start_up(
    engine: Engine, settings, knowledge, brain, kb, monkeypatch
) -> None:
    session = await finish_with_records_failing(engine, monkeypatch)
    await engine.close()
    reopened = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    try:
        with sqlite3.connect(records_path(settings.intake_data_dir)) as db:
            status = db.execute("select status from chatsession where id = ?", (session.id,))
            assert status.fetchone() == ("completed",)
            summaries = db.execute("select count(*) from casesummary").fetchone()
            assert summaries == (1,)
    finally:
        await reopened.close()


async def test_the_answer_that_finished_an_intake_delivered_again_gets_the_summary_again(
    engine: Engine, settings, knowledge, brain, kb, monkeypatch
) -> None:
    await engine.handle(text(LOAN, input_id="1"))
    await engine.handle(text("올해 6월", input_id="2", minutes=1))
    real = repo.sync_case

    async def broken(**kwargs):
        raise RuntimeError("killed before the records write")

    monkeypatch.setattr(repo, "sync_case", broken)
    final = Inbound(chat_id=CHAT, kind="text", text="없어요", input_id="3", user_id=USER, at=NOW)
    await engine.handle(final)
    monkeypatch.setattr(repo, "sync_case", real)
    await engine.close()
    engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)  # repairs
    try:
        for _ in range(2):  # recovered from the inbox, then once more
            again = await engine.handle(final)
            assert again.state == "COMPLETED"
            assert "3,000,000" in joined(again)
            assert knowledge.message("completed", "ko") in joined(again)
            assert knowledge.message("session_completed", "ko") not in joined(again)
        assert [t.input_id for t in await turns_of(engine)] == ["1", "2", "3"]
        other = await engine.handle(text("감사합니다", input_id="4", minutes=5))
        assert joined(other) == knowledge.message("amend_nothing", "ko")
    finally:
        await engine.close()


# --- a medical turn is written whole or not at all ------------------------------------------


def medical_rows(settings) -> dict[str, list[tuple]]:
    """What the records hold of the chat's medical side: the chat's row (language, domain,
    safety memory), its offer, the profile's items and questions."""
    with sqlite3.connect(records_path(settings.intake_data_dir)) as db:
        return {
            "chat": db.execute("select lang, domain, safety_json from chatpreference").fetchall(),
            "offer": db.execute(
                "select user_id, choices_json, offered_at from chatoffer"
            ).fetchall(),
            "items": db.execute(
                "select key, text, mentions from profileitem order by key"
            ).fetchall(),
            "questions": db.execute(
                "select question, input_id from medicalquestion order by id"
            ).fetchall(),
        }


async def test_a_medical_turn_whose_write_fails_midway_stores_none_of_it(
    engine: Engine, settings, knowledge
) -> None:
    """The database refuses the turn's question row, after the profile's items were replaced
    in the same transaction: nothing of the turn is stored (not the items, not the safety
    memory's new terms, not the offer), the person still gets the answer, and the update
    delivered again writes the turn once."""
    first = await engine.handle(text("고혈압이 있어요", input_id="1"))
    assert first.state == "MEDICAL"
    before = medical_rows(settings)
    assert [key for key, _, _ in before["items"]] == ["conditions:hypertension"]
    assert before["chat"][0][2] is None  # the safety memory holds nothing yet
    question = "당뇨가 있고 메트포르민 먹어요. 운동은 어떤 게 좋아요?"
    with sqlite3.connect(records_path(settings.intake_data_dir)) as db:  # a real failure
        db.execute(
            "create trigger refuse before insert on medicalquestion"
            " begin select raise(abort, 'disk I/O error'); end"
        )

    answered = await engine.handle(text(question, input_id="2", minutes=1))

    assert answered.state == "MEDICAL" and "출처:" in joined(answered)
    assert medical_rows(settings) == before  # none of the turn: all of the write rolled back
    with sqlite3.connect(records_path(settings.intake_data_dir)) as db:
        db.execute("drop trigger refuse")

    again = await engine.handle(text(question, input_id="2", minutes=2))  # from the inbox
    assert joined(again) == joined(answered)
    after = medical_rows(settings)
    assert after["questions"] == [*before["questions"], (question, None)]  # counted once
    assert {key for key, _, _ in after["items"]} == {
        "conditions:hypertension",
        "conditions:diabetes",
        "medications:metformin",
    }
    assert "diabetes" in after["chat"][0][2]  # the safety memory knows the profile now
    assert after["offer"] != before["offer"]
    status = await engine.handle(command("status"))
    counted = len(after["questions"])
    assert joined(status) == knowledge.message("med_status", "ko", count=3, questions=counted)


async def test_a_turn_that_breaks_after_its_safety_rules_fired_still_answers_and_alerts(
    engine: Engine, settings, knowledge
) -> None:
    """The intake's checkpoint write fails in the turn of a danger message (a real failure of
    the checkpoint file): the safety reply still goes out, first and ahead of the turn, the
    alert is recorded and staff are told; the person is told the rest failed, and the intake
    goes on from where it was once the file is writable again (legal_set11 A2: a turn that
    broke every time answered her danger messages with an error alone)."""
    await engine.handle(text(LOAN, input_id="1"))
    asked = await engine.handle(text("올해 6월", input_id="2", minutes=1))
    facts = await facts_of(engine)
    with sqlite3.connect(checkpoints_path(settings.intake_data_dir)) as db:  # a real failure
        db.execute(
            "create trigger refuse before insert on checkpoints"
            " begin select raise(abort, 'disk I/O error'); end"
        )
    ahead: list[str] = []

    async def first(reply) -> bool:
        ahead.extend(m["text"] for m in reply.messages)
        return True

    danger = text("지금 남편이 칼을 들고 문 앞에 있어요 무서워요", input_id="3", minutes=2)
    reply = await engine.handle(danger, first=first)

    assert [hit.code for hit in reply.alerts][:1] == ["WEAPON_THREAT"]
    assert ahead and "112" in ahead[0]  # sent the moment the rules fired
    assert reply.sent == len(ahead) and reply.messages[: reply.sent] == [
        {"text": t, "choices": []} for t in ahead
    ]
    assert reply.messages[-1]["text"] == knowledge.message("error", "ko")
    assert reply.notices and all("WEAPON_THREAT" in n.text for n in reply.notices)
    with sqlite3.connect(records_path(settings.intake_data_dir)) as db:
        alerts = db.execute("select code, input_id from safetyalert").fetchall()
    assert ("WEAPON_THREAT", "3") in alerts
    assert await facts_of(engine) == facts  # nothing of the broken turn was written
    with sqlite3.connect(checkpoints_path(settings.intake_data_dir)) as db:
        db.execute("drop trigger refuse")

    again = await engine.handle(text("친구 김철수요", input_id="4", minutes=3))
    assert again.state == asked.state == "FACT_COLLECTION"
    assert knowledge.message("error", "ko") not in joined(again)


# --- deletion reaches the disk ---------------------------------------------------------------


def files_holding(folder: Path, needles: list[bytes]) -> dict[str, list[str]]:
    """Every file under `folder` (the WAL and its index included) that holds one of `needles`."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits = [n.decode() for n in needles if n in data]
        if hits:
            found[str(path.relative_to(folder))] = hits
    return found


async def test_forget_leaves_nothing_of_the_chat_in_any_file_while_running(
    engine: Engine, settings
) -> None:
    name, phone = "김철수", "010-9876-5432"
    await engine.handle(text(f"작년 3월에 친구 {name}한테 300만원 빌려줬는데 안 갚아요. {phone}"))
    await engine.handle(text("올해 6월 말까지 갚기로 했어요", minutes=1))
    await engine.handle(text("다른 채팅이에요: 전세 보증금 2억을 못 받았어요", user=8, chat=8))
    needles = [name.encode(), phone.encode(), "올해 6월 말까지".encode()]
    assert files_holding(settings.intake_data_dir, needles)  # the words are on disk now

    await engine.handle(command("forget"))
    await engine.handle(choice("cmd:forget"))

    # The engine is still open: its connections, WAL files and all.
    assert files_holding(settings.intake_data_dir, needles) == {}
    assert files_holding(settings.intake_data_dir, ["전세 보증금 2억".encode()])  # others kept


# --- the inbox ---------------------------------------------------------------------------------


async def test_a_database_made_by_the_previous_version_gains_the_new_columns(
    tmp_path: Path,
) -> None:
    path = records_path(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE inboxupdate (update_id INTEGER PRIMARY KEY, chat_id INTEGER, "
            "payload_json VARCHAR NOT NULL, received_at DATETIME NOT NULL, processed_at DATETIME)"
        )
        db.execute(
            "INSERT INTO inboxupdate VALUES (7, 1, '{\"update_id\": 7}', '2026-11-01', NULL)"
        )
        db.execute(
            "CREATE TABLE chatturn (id INTEGER PRIMARY KEY, session_id VARCHAR NOT NULL, "
            "field VARCHAR, user_text VARCHAR NOT NULL, bot_text VARCHAR NOT NULL, "
            "at DATETIME NOT NULL)"
        )
    records = await create_records_engine(tmp_path)
    try:
        assert [r.update_id for r in await repo.inbox_pending(engine=records)] == [7]
        await repo.inbox_mark_failed(engine=records, update_id=7, reason="unreadable: KeyError")
        async with AsyncSession(records) as db:
            row = await db.get(InboxUpdate, 7)
        assert row.failure == "unreadable: KeyError" and row.processed_at is not None
        assert await repo.inbox_pending(engine=records) == []
        with sqlite3.connect(path) as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(chatturn)")}
        assert "input_id" in columns
    finally:
        await records.dispose()


async def test_an_update_with_a_lone_surrogate_is_stored_and_read_back_as_sent(
    engine: Engine,
) -> None:
    payload = {"update_id": 5, "message": {"text": "\udc00 전세", "chat": {"id": 1}}}
    stored = await repo.inbox_add_batch(
        engine=engine.records,
        updates=[(5, 1, payload, None), (6, None, {"update_id": 6}, "unreadable: KeyError")],
    )
    assert stored == {5, 6}
    [pending] = await repo.inbox_pending(engine=engine.records)
    assert json.loads(pending.payload_json) == payload
    [failed] = await repo.inbox_failed(engine=engine.records)
    assert (failed.update_id, failed.failure) == (6, "unreadable: KeyError")
    assert failed.payload_json == "{}"  # set aside: nothing the person sent is kept


async def test_an_update_set_aside_after_a_failed_turn_keeps_its_ids_not_its_words(
    engine: Engine,
) -> None:
    words = "제 번호는 010-9876-5432예요"
    payload = {"update_id": 11, "message": {"text": words, "chat": {"id": CHAT}}}
    entry = repo.InboxEntry(11, CHAT, payload, update_type="message")
    assert await repo.inbox_add_batch(engine=engine.records, updates=[entry]) == {11}
    [pending] = await repo.inbox_pending(engine=engine.records)
    assert json.loads(pending.payload_json) == payload  # kept while it may still be handled

    await repo.inbox_mark_failed(engine=engine.records, update_id=11, reason="KeyError")

    [failed] = await repo.inbox_failed(engine=engine.records)
    assert (failed.chat_id, failed.update_type, failed.failure) == (CHAT, "message", "KeyError")
    assert failed.payload_json == "{}" and failed.processed_at is not None
    await repo.forget_chat(engine=engine.records, chat_id=CHAT)
    assert await repo.inbox_failed(engine=engine.records) == []


async def test_a_step_cut_short_between_its_checkpoint_and_its_question_is_finished(
    engine: Engine,
) -> None:
    """A kill can land after a step's checkpoint and before its interrupt (the question) is
    stored: the redelivered input finds the step pending with no question; the step is run
    again, the question asked, and the records written with a state."""
    await engine.handle(text(LOAN, input_id="199"))
    asked = await engine.handle(text("올해 6월", input_id="200", minutes=1))
    assert asked.field == "evidence"
    session = await session_of(engine)
    conn = engine.checkpointer.conn
    await conn.execute(
        "DELETE FROM writes WHERE thread_id = ? AND channel = '__interrupt__'", (session.id,)
    )
    await conn.commit()
    state = await engine.graph.aget_state({"configurable": {"thread_id": session.id}})
    assert state.next and not any(t.interrupts for t in state.tasks)  # as a kill leaves it

    again = await engine.handle(text("올해 6월", input_id="200", minutes=2))
    assert again.field == "evidence" and again.messages
    session = await session_of(engine)
    assert session.current_state == "FACT_COLLECTION"
    record = await repo.case_record(engine=engine.records, session=session)
    assert record["facts"]["repayment_date"] == "2026-06"
