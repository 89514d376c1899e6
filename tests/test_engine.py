"""The engine: bad input, commands, buttons, replays, records and admin, on real SQLite files."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from datetime import datetime, timedelta

import pytest
from pydantic import ValidationError
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from bot.config import Settings
from bot.engine import Engine, Inbound
from db import repo
from db.engine import BUSY_TIMEOUT_MS, checkpoints_path, records_path
from db.models import CaseFact, CaseMaster, ChatSession, ChatTurn, InboxUpdate, StateTransition
from tests.support import NOW

CHAT = 42
ADMIN = 777  # in the settings fixture's ADMIN_IDS
EXPORT_KEYS = [
    "session_id",
    "chat_id",
    "domain",
    "status",
    "case_type",
    "sub_case_type",
    "alerts",
    "urgent",
    "deadlines",
    "facts",
    "facts_detail",
    "missing_fields",
    "summary_text",
    "structured",
    "created_at",
    "completed_at",
]


def text(value: str, *, input_id: str | None = None, chat: int = CHAT, minutes: int = 0) -> Inbound:
    return Inbound(
        chat_id=chat,
        kind="text",
        text=value,
        input_id=input_id,
        user_id=5,
        at=NOW + timedelta(minutes=minutes),
    )


def choice(data: str, chat: int = CHAT) -> Inbound:
    return Inbound(chat_id=chat, kind="choice", data=data, user_id=5, at=NOW)


def command(name: str, *args: str, user_id: int = 5, chat: int = CHAT) -> Inbound:
    return Inbound(chat_id=chat, kind="command", command=name, args=args, user_id=user_id, at=NOW)


def joined(reply) -> str:
    return "\n".join(m["text"] for m in reply.messages)


async def start_loan(engine: Engine):
    return await engine.handle(
        text("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요")
    )


async def facts_of(engine: Engine, chat: int = CHAT) -> dict:
    async with AsyncSession(engine.records) as db:
        session = (await db.exec(select(ChatSession).where(ChatSession.chat_id == chat))).first()
        rows = (await db.exec(select(CaseFact).where(CaseFact.session_id == session.id))).all()
        return {r.key: json.loads(r.value_json) for r in rows}


async def test_records_follow_the_graph(engine: Engine) -> None:
    reply = await start_loan(engine)
    assert reply.state == "FACT_COLLECTION" and reply.field == "repayment_date"
    assert 0 < reply.progress < 100
    facts = await facts_of(engine)
    assert facts["amount"] == 3_000_000 and facts["incident_date"] == "2025-03"
    async with AsyncSession(engine.records) as db:
        case = (await db.exec(select(CaseMaster))).one()
        assert (case.case_type, case.sub_case_type) == ("CIVIL", "LOAN")
        moves = [(t.from_state, t.to_state) for t in (await db.exec(select(StateTransition))).all()]
        assert ("INIT", "FACT_COLLECTION") in moves
        turn = (await db.exec(select(ChatTurn))).one()
        assert "300만원" in turn.user_text


@pytest.mark.parametrize(
    ("inbound", "key"),
    [
        (Inbound(chat_id=CHAT, kind="text", text="   "), "empty"),
        (Inbound(chat_id=CHAT, kind="unsupported"), "not_text"),
    ],
)
async def test_bad_input_is_answered_and_nothing_is_lost(
    engine: Engine, knowledge, inbound, key
) -> None:
    await start_loan(engine)
    before = await facts_of(engine)
    reply = await engine.handle(inbound)
    assert joined(reply).startswith(knowledge.message(key, "ko"))
    assert reply.field == "repayment_date"  # the same question is asked again
    assert await facts_of(engine) == before


async def test_huge_emoji_and_english_inputs(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    huge = await engine.handle(text("가" * 10_000))
    assert knowledge.message("too_long", "ko", limit=4000) in joined(huge)
    assert huge.state == "RE_QUESTION"  # 10,000 Hangul letters are no date: re-asked, not a crash
    emoji = await engine.handle(text("🙂🙂🙂"))
    assert emoji.field == "repayment_date"
    english = await engine.handle(text("by June this year"))
    assert english.lang == "en"  # a chat follows the language its writer plainly uses
    assert (await facts_of(engine))["amount"] == 3_000_000


async def test_the_chat_follows_the_language_written_until_lang_picks_one(
    engine: Engine, knowledge
) -> None:
    await engine.use_domain(CHAT, "legal")  # the console's --domain stores a language: not chosen
    first = await engine.handle(text("My landlord won't return my jeonse deposit of 100 million"))
    assert first.lang == "en"
    assert knowledge.message("greeting", "en") in joined(first)
    # a Korean term or a short word in an English chat is no change of language
    for said in ("보증금", "ok", "네"):
        assert (await engine.handle(text(said))).lang == "en"
    # plain Korean is followed, and remembered for commands
    korean = await engine.handle(text("계약은 올해 3월에 끝났어요 집주인이 연락을 안 받아요"))
    assert korean.lang == "ko"
    assert (await engine.handle(command("help"))).lang == "ko"
    # once /lang picks a language it stays, and writing in the other one only gets the hint
    await engine.handle(command("lang", "ko"))
    english = await engine.handle(text("sorry I meant the lease ended in April"))
    assert english.lang == "ko"
    assert knowledge.message("other_language_hint", "ko") in joined(english)


async def test_stale_and_double_pressed_buttons(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    await engine.handle(text("올해 6월"))  # repayment date -> now asking evidence
    first = await engine.handle(choice("a:evidence:no"))
    assert first.state == "COMPLETED"
    again = await engine.handle(choice("a:evidence:no"))
    assert knowledge.message("session_completed", "ko") in joined(again)
    assert (await facts_of(engine))["evidence"] is False


async def test_button_for_an_old_question_is_refused_politely(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    reply = await engine.handle(choice("a:counterparty_type:company"))
    assert joined(reply).startswith(knowledge.message("already_answered", "ko"))
    assert reply.field == "repayment_date"
    assert (await facts_of(engine))["counterparty_type"] == "acquaintance"


async def test_replayed_input_is_not_fed_twice(engine: Engine) -> None:
    await start_loan(engine)
    await engine.handle(text("올해 6월", input_id="100"))
    replay = await engine.handle(text("올해 6월", input_id="100"))
    assert replay.field == "evidence"  # not taken as the answer to the evidence question
    assert "evidence" not in await facts_of(engine)


async def test_start_during_an_intake_offers_continue_or_restart(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    offer = await engine.handle(command("start"))
    assert [c["data"] for c in offer.messages[0]["choices"]] == ["cmd:continue", "cmd:restart"]
    cont = await engine.handle(choice("cmd:continue"))
    assert cont.field == "repayment_date"
    # The offer was answered: its other button no longer counts, and nothing is dropped.
    late = await engine.handle(choice("cmd:restart"))
    assert joined(late).startswith(knowledge.message("stale_button", "ko"))
    assert late.field == "repayment_date" and (await facts_of(engine))["amount"] == 3_000_000
    await engine.handle(command("start"))
    restart = await engine.handle(choice("cmd:restart"))
    assert restart.state == "INIT"
    assert knowledge.message("privacy_notice", "ko") in joined(restart)
    async with AsyncSession(engine.records) as db:
        statuses = sorted(s.status for s in (await db.exec(select(ChatSession))).all())
    assert statuses == ["cancelled", "open"]


async def test_lang_switch_repeats_the_question_in_english(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    reply = await engine.handle(command("lang", "en"))
    assert reply.lang == "en"
    assert knowledge.k2.field("LOAN", "repayment_date").question.en in joined(reply)
    status = await engine.handle(command("status"))
    assert "%" in status.messages[0]["text"] and status.lang == "en"


async def test_english_intake_end_to_end(engine: Engine) -> None:
    chat = 7
    first = await engine.handle(
        text(
            "My landlord won't return my deposit of 5 million won. The lease ended last month.",
            chat=chat,
        )
    )
    assert first.lang == "en"
    assert first.state in ("FACT_COLLECTION", "CONFIRM_CASE_TYPE")
    facts = await facts_of(engine, chat)
    assert facts.get("deposit") == 5_000_000


async def test_admin_commands_are_refused_to_others_and_export_for_admins(
    engine: Engine, knowledge
) -> None:
    await start_loan(engine)
    await engine.handle(text("올해 6월"))
    await engine.handle(choice("a:evidence:no"))
    refused = await engine.handle(command("export", "json", user_id=5))
    assert joined(refused) == knowledge.message("admin_only", "ko") and not refused.documents
    sessions_refused = await engine.handle(command("sessions", user_id=5))
    assert joined(sessions_refused) == knowledge.message("admin_only", "ko")
    exported = await engine.handle(command("export", "json", user_id=777))
    rows = json.loads(exported.documents[0].content)
    assert rows[0]["sub_case_type"] == "LOAN" and rows[0]["status"] == "completed"
    assert rows[0]["facts"]["amount"] == 3_000_000
    assert rows[0]["summary_text"] and rows[0]["structured"]["case_type"] == "CIVIL"
    csv_export = await engine.handle(command("export", "csv", "all", user_id=777))
    assert csv_export.documents[0].filename.endswith(".csv")
    assert b"session_id" in csv_export.documents[0].content


async def test_summary_and_cancel_commands(engine: Engine, knowledge) -> None:
    not_yet = await engine.handle(command("summary"))
    assert joined(not_yet) == knowledge.message("no_summary_yet", "ko")
    await start_loan(engine)
    draft = await engine.handle(command("summary"))
    assert "3,000,000" in joined(draft)
    cancelled = await engine.handle(command("cancel"))
    assert joined(cancelled) == knowledge.message("cancelled_undo", "ko")
    fresh = await engine.handle(text("회사에서 퇴직금을 안 줘요"))
    assert fresh.state in ("FACT_COLLECTION", "CONFIRM_CASE_TYPE")


async def test_records_write_failure_is_retried_and_the_conversation_goes_on(
    engine: Engine, monkeypatch
) -> None:
    calls = {"n": 0}
    real = repo.write_turn  # the turn's one write

    async def flaky(**kwargs):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise RuntimeError("database is locked")
        return await real(**kwargs)

    monkeypatch.setattr(repo, "write_turn", flaky)
    reply = await start_loan(engine)
    assert reply.field == "repayment_date"
    assert calls["n"] == 3
    assert (await facts_of(engine))["amount"] == 3_000_000


async def test_a_finished_intake_whose_records_failed_is_repaired_not_restarted(
    engine: Engine, knowledge, monkeypatch
) -> None:
    await start_loan(engine)
    await engine.handle(text("올해 6월"))

    async def broken(**kwargs):
        raise RuntimeError("disk I/O error")

    with monkeypatch.context() as patch:  # every records write fails
        patch.setattr(repo, "sync_case", broken)
        patch.setattr(repo, "write_turn", broken)
        done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"  # the person got the summary; the records did not follow
    (session,) = await sessions_of(engine)
    assert session.status == "open"

    later = await engine.handle(text("혹시 진행 상황이 어떻게 되나요?", minutes=30))
    # kept for the lawyer, and more may follow: not "already complete, type /new" alone
    assert knowledge.message("after_summary_more", "ko") in joined(later)
    assert knowledge.message("session_completed", "ko") not in joined(later)
    assert later.state == "COMPLETED"
    (session,) = await sessions_of(engine)
    assert session.status == "completed" and session.ended_at is not None
    facts = await facts_of(engine)
    assert facts["amount"] == 3_000_000 and facts["evidence"] is False
    assert await repo.get_summary(engine=engine.records, session_id=session.id) is not None
    again = await engine.handle(text("감사합니다", minutes=31))  # now the ordinary path
    assert knowledge.message("amend_nothing", "ko") in joined(again)


async def test_finished_thread_keeps_only_its_last_checkpoint(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    await engine.handle(text("올해 6월"))
    conn = engine.checkpointer.conn
    count = "select count(*) from checkpoints"
    assert (await (await conn.execute(count)).fetchone())[0] >= 2
    done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"
    assert (await (await conn.execute(count)).fetchone())[0] == 1
    async with AsyncSession(engine.records) as db:
        session = (await db.exec(select(ChatSession))).one()
    state = await engine.graph.aget_state({"configurable": {"thread_id": session.id}})
    assert state.values["status"] == "completed" and state.values["facts"]["amount"] == 3_000_000
    summary = await engine.handle(command("summary"))
    assert "3,000,000" in joined(summary)


async def test_logs_carry_no_message_text_and_no_chat_id(engine: Engine, caplog) -> None:
    caplog.set_level("DEBUG")
    await engine.handle(
        text(
            "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요",
            chat=987654321,
        )
    )
    await engine.handle(command("export", user_id=5, chat=987654321))
    ours = "\n".join(
        r.getMessage() for r in caplog.records if r.name.split(".")[0] in ("bot", "graphs", "db")
    )
    assert "kind=text state=FACT_COLLECTION" in ours  # the engine logs its turns
    assert "987654321" not in ours
    assert "김철수" not in ours and "300만원" not in ours


def test_debug_logs_keep_what_people_wrote_and_the_token_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import logging

    from bot.cli import setup_logging

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    root.handlers = []  # let setup_logging install its own stderr handler, as in production
    try:
        setup_logging("DEBUG")
        logging.getLogger("bot.engine").debug("operator detail kept")
        # What these libraries log at DEBUG/INFO (request bodies, updates, URLs with the token):
        logging.getLogger("telegram.ext.ExtBot").debug("Calling Bot API endpoint 전세 보증금 2억")
        logging.getLogger("telegram.ext.Updater").info("Set Bot API URL: /bot123:SECRET")
        logging.getLogger("openai._base_client").debug("Request options: 보증금 이야기")
        logging.getLogger("httpx").info("HTTP Request: POST /bot123:SECRET/sendMessage")
        logging.getLogger("aiosqlite").debug("executing INSERT ... ('김철수',)")
        logging.getLogger("sqlalchemy.engine.Engine").info("[generated] ('김철수',)")
        err = capsys.readouterr().err
    finally:
        for handler in root.handlers:
            root.removeHandler(handler)
        root.handlers, root.level = saved
    assert "operator detail kept" in err
    for secret in ("보증금", "SECRET", "김철수"):
        assert secret not in err


async def test_sessions_lists_open_intakes_with_progress_for_admins(
    engine: Engine, knowledge
) -> None:
    await start_loan(engine)
    await engine.handle(text("안녕하세요", chat=43))
    listing = await engine.handle(command("sessions", user_id=777))
    body = joined(listing)
    assert body.startswith(knowledge.message("sessions_header", "ko", count=2))
    assert "LOAN" in body and "FACT_COLLECTION" in body and "INIT" in body


# --- exports ---------------------------------------------------------------------------------


async def finish_loan(engine: Engine, chat: int = CHAT) -> None:
    await engine.handle(
        text("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요", chat=chat)
    )
    await engine.handle(text("올해 6월", chat=chat))
    done = await engine.handle(choice("a:evidence:no", chat=chat))
    assert done.state == "COMPLETED"


async def start_loan_in(engine: Engine, chat: int):
    return await engine.handle(
        text("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요", chat=chat)
    )


async def sessions_of(engine: Engine, chat: int = CHAT) -> list[ChatSession]:
    async with AsyncSession(engine.records) as db:
        query = select(ChatSession).where(ChatSession.chat_id == chat)
        return list((await db.exec(query)).all())


async def session_facts(engine: Engine, session_id: str) -> dict:
    async with AsyncSession(engine.records) as db:
        rows = (await db.exec(select(CaseFact).where(CaseFact.session_id == session_id))).all()
        return {r.key: json.loads(r.value_json) for r in rows}


async def export(engine: Engine, *args: str) -> str:
    reply = await engine.handle(command("export", *args, user_id=ADMIN, chat=ADMIN))
    [document] = reply.documents
    return document.content.decode("utf-8")


async def test_json_export_row_has_every_column_of_a_completed_intake(
    engine: Engine, knowledge
) -> None:
    await finish_loan(engine)
    await start_loan_in(engine, 43)  # open: not in an export without `all`
    [session] = await sessions_of(engine)
    summary = joined(await engine.handle(command("summary")))

    [row] = json.loads(await export(engine, "json"))

    assert set(EXPORT_KEYS) <= set(row), set(EXPORT_KEYS) - set(row)
    assert row["session_id"] == session.id and row["chat_id"] == CHAT
    assert (row["domain"], row["status"]) == ("legal", "completed")
    assert (row["case_type"], row["sub_case_type"]) == ("CIVIL", "LOAN")
    assert set(row["facts"]) <= set(knowledge.k2.fields)  # canonical keys only
    facts = dict(row["facts"])
    assert "300만원" in facts.pop("action_description")  # the person's own words
    assert facts == {
        "amount": 3_000_000,
        "incident_date": "2025-03",
        "repayment_date": "2026-06",
        "counterparty": "김철수",
        "counterparty_type": "acquaintance",
        "evidence": False,
        "desired_outcome": "돌려받고 싶어요",  # said in the first message: not asked again
    }
    assert row["missing_fields"] == []
    assert row["summary_text"] == summary and "3,000,000" in summary
    assert row["structured"]["sub_case_type"] == "LOAN"
    assert row["structured"]["facts"] == row["facts"]
    created = datetime.fromisoformat(row["created_at"])
    completed = datetime.fromisoformat(row["completed_at"])
    assert created.tzinfo is not None and created <= completed


async def test_export_all_includes_open_intakes_with_what_is_missing(
    engine: Engine, knowledge
) -> None:
    await finish_loan(engine)
    stopped = await start_loan_in(engine, 43)
    assert stopped.field == "repayment_date"

    rows = {r["chat_id"]: r for r in json.loads(await export(engine, "json", "all"))}

    assert sorted(rows) == [CHAT, 43]
    open_row = rows[43]
    assert set(EXPORT_KEYS) <= set(open_row)
    assert (open_row["status"], open_row["sub_case_type"]) == ("open", "LOAN")
    assert open_row["completed_at"] is None and open_row["summary_text"] is None
    # Stopped at the repayment date: that and the evidence question are still to come
    # (evidence_type only if there is evidence), exactly the required fields not yet answered.
    required = [
        r.key for r in knowledge.k2.sub_types["LOAN"].required_fields() if not r.required_if
    ]
    assert open_row["missing_fields"] == sorted(set(required) - set(open_row["facts"]))
    assert open_row["missing_fields"] == ["evidence", "repayment_date"]
    assert rows[CHAT]["missing_fields"] == []


async def test_csv_and_markdown_exports(engine: Engine, knowledge) -> None:
    await finish_loan(engine)
    await start_loan_in(engine, 43)
    summary = joined(await engine.handle(command("summary")))
    label = knowledge.k1.sub_type("LOAN")[1].label.ko

    table = list(csv.DictReader(io.StringIO(await export(engine, "csv", "all"))))
    header = list(table[0])
    assert header[: len(EXPORT_KEYS)] == EXPORT_KEYS
    by_chat = {int(r["chat_id"]): r for r in table}
    assert sorted(by_chat) == [CHAT, 43]
    assert by_chat[CHAT]["summary_text"] == summary
    assert json.loads(by_chat[CHAT]["facts"])["amount"] == 3_000_000
    assert json.loads(by_chat[43]["missing_fields"]) == ["evidence", "repayment_date"]
    assert by_chat[43]["status"] == "open" and by_chat[43]["completed_at"] == ""

    markdown = await export(engine, "md", "all")
    assert f"## {label} (LOAN) · completed · chat {CHAT}" in markdown.splitlines()
    assert summary in markdown
    assert "## LOAN · open · chat 43" in markdown.splitlines()
    assert "- missing: evidence, repayment_date" in markdown.splitlines()


async def test_new_during_an_intake_starts_a_fresh_one(engine: Engine, knowledge) -> None:
    await start_loan(engine)
    [old] = await sessions_of(engine)

    asked = await engine.handle(command("new"))
    assert "cmd:restart" in [c["data"] for m in asked.messages for c in m["choices"]]
    fresh = await engine.handle(choice("cmd:restart"))

    assert joined(fresh).startswith(knowledge.message("restarted", "ko"))
    assert knowledge.message("privacy_notice", "ko") in joined(fresh)
    statuses = {s.id: s.status for s in await sessions_of(engine)}
    [new_id] = set(statuses) - {old.id}
    assert (statuses[old.id], statuses[new_id]) == ("cancelled", "open")
    assert await session_facts(engine, new_id) == {}
    state = await engine.graph.aget_state({"configurable": {"thread_id": new_id}})
    assert not state.values.get("facts")

    story = await engine.handle(text("회사에서 석 달째 월급을 안 줘요"))
    assert story.state in ("FACT_COLLECTION", "CONFIRM_CASE_TYPE")
    facts = await session_facts(engine, new_id)
    assert "amount" not in facts and "counterparty" not in facts  # nothing of the loan
    assert "월급" in facts["action_description"]
    assert (await session_facts(engine, old.id))["amount"] == 3_000_000  # kept, not moved
    # Both are in the export with `all`: the new one open, the dropped one cancelled.
    rows = json.loads(await export(engine, "json", "all"))
    assert {r["session_id"]: r["status"] for r in rows} == {new_id: "open", old.id: "cancelled"}


async def test_sqlite_files_use_wal_and_a_busy_timeout(engine: Engine, settings) -> None:
    await start_loan(engine)  # both files written
    for path in (
        records_path(settings.intake_data_dir),
        checkpoints_path(settings.intake_data_dir),
    ):
        conn = sqlite3.connect(path)  # WAL is a property of the file, seen by any connection
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",), path.name
        finally:
            conn.close()
    # The busy timeout belongs to each connection: the engine's own ones must have it.
    async with engine.records.connect() as conn:
        timeout = (await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar()
    assert timeout == BUSY_TIMEOUT_MS > 0
    cursor = await engine.checkpointer.conn.execute("PRAGMA busy_timeout")
    assert (await cursor.fetchone())[0] == BUSY_TIMEOUT_MS


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("Asia/Seoul", "2026-11-22"),  # 05:00 on the 23rd in Seoul: yesterday is the 22nd
        ("UTC", "2026-11-21"),  # 20:00 on the 22nd in UTC: yesterday is the 21st
    ],
)
async def test_relative_dates_are_read_on_the_configured_calendar(
    tmp_path, knowledge, brain, kb, zone: str, expected: str
) -> None:
    settings = Settings(intake_data_dir=tmp_path / "d", intake_timezone=zone, _env_file=None)
    engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    try:
        at = datetime(2026, 11, 22, 20, 0, tzinfo=NOW.tzinfo)
        message = Inbound(
            chat_id=CHAT, kind="text", text="어제 친구한테 300만원 빌려줬는데 안 갚아요", at=at
        )
        await engine.handle(message)
        assert (await facts_of(engine))["incident_date"] == expected
    finally:
        await engine.close()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("intake_timezone", "Mars/Olympus", "unknown time zone"),
        ("admin_ids", "777,boss", "numeric Telegram user ids"),
    ],
)
def test_bad_settings_fail_at_start_with_the_reason(
    tmp_path, variable: str, value: str, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(intake_data_dir=tmp_path, _env_file=None, **{variable: value})


async def test_a_processed_update_keeps_no_payload_but_still_drops_a_redelivery(
    engine: Engine,
) -> None:
    payload = {"update_id": 901, "message": {"text": "전세 보증금 2억을 못 받았어요"}}
    assert await repo.inbox_add(engine=engine.records, update_id=901, chat_id=CHAT, payload=payload)
    pending = await repo.inbox_pending(engine=engine.records)
    assert [json.loads(r.payload_json) for r in pending] == [payload]  # kept until processed
    await repo.inbox_mark_processed(engine=engine.records, update_id=901)
    async with AsyncSession(engine.records) as db:
        row = await db.get(InboxUpdate, 901)
        assert row.processed_at is not None and json.loads(row.payload_json) == {}
    again = await repo.inbox_add(
        engine=engine.records, update_id=901, chat_id=CHAT, payload=payload
    )
    assert again is False
    assert await repo.inbox_is_processed(engine=engine.records, update_id=901)


async def test_forget_deletes_the_chat_records_and_checkpoints_after_a_confirmation(
    engine: Engine, knowledge
) -> None:
    await start_loan(engine)
    await engine.handle(text("올해 6월 말까지 갚기로 했어요", minutes=1))
    await engine.handle(text("다른 채팅의 상담이에요: 전세 보증금을 못 받았어요", chat=99))
    asked = await engine.handle(command("forget"))
    assert [c["data"] for c in asked.messages[-1]["choices"]] == ["cmd:forget", "cmd:keep"]
    kept = await engine.handle(choice("cmd:keep"))
    assert knowledge.message("forget_kept", "ko") in joined(kept)
    assert (await facts_of(engine))["amount"] == 3_000_000  # "keep" deleted nothing
    session = (await repo.latest_session(engine=engine.records, chat_id=CHAT)).id
    checkpoints = checkpoints_path(engine.settings.intake_data_dir)
    count = "select count(*) from checkpoints where thread_id = ?"
    with sqlite3.connect(checkpoints) as db:
        assert db.execute(count, (session,)).fetchone()[0] > 0

    # The delete button counts only right after /forget showed it.
    forged = await engine.handle(choice("cmd:forget"))
    assert knowledge.message("forgotten", "ko") not in joined(forged)
    assert (await facts_of(engine))["amount"] == 3_000_000
    await engine.handle(command("forget"))
    done = await engine.handle(choice("cmd:forget"))
    assert knowledge.message("forgotten", "ko") in joined(done)
    async with AsyncSession(engine.records) as db:
        for table in (ChatSession, *repo.SESSION_TABLES):
            rows = (await db.exec(select(table))).all()
            assert all(getattr(r, "chat_id", 99) == 99 for r in rows), table.__name__
            if table is not ChatSession:
                other = (await db.exec(select(ChatSession).where(ChatSession.chat_id == 99))).one()
                assert all(r.session_id == other.id for r in rows), table.__name__
    with sqlite3.connect(checkpoints) as db:
        assert db.execute(count, (session,)).fetchone()[0] == 0
    # The other chat is untouched, and this one starts afresh.
    assert await facts_of(engine, chat=99)
    again = await engine.handle(text("친구가 돈을 안 갚아요", minutes=5))
    assert again.state in ("FACT_COLLECTION", "CONFIRM_CASE_TYPE")
    assert "repayment_date" not in await facts_of(engine)
