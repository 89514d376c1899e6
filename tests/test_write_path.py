"""One write path for a case: a typed snapshot, the changes between two snapshots, one write.

A turn writes the changes from the snapshot before it to the one after it; a repair
(`repo.sync_case`) writes the changes from what is stored to the snapshot it is given. Both must
leave the very rows the turn-by-turn intake leaves. Real SQLite files, the real graph and engine.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.engine import Engine, Inbound
from db import repo
from graphs.registry import LEGAL
from tests.support import NOW

CHAT = 42
USER = 5
PHOTO = {"kind": "photo", "file_id": "AgAD1", "file_unique_id": "u1", "caption": "차용증 사진"}
# The case tables and the columns that say what a case is (ids and write times left out).
CASE_ROWS = {
    "chatsession": "current_state, status, completion_rate, ended_at is not null",
    "casemaster": "case_type, sub_case_type, confidence, description, emotions_json",
    "casefact": "key, value_json, status, quote, said_at, confirmed",
    "casemissingfield": "key, reason",
    "caseparty": "role, name, party_type",
    "caseevidence": "kind, file_id, file_unique_id, file_name, mime_type, caption, received_at",
    "casesummary": "summary_text, structured_json",
}


def offered(reply: Any) -> list[str]:
    return [c["data"] for m in reply.messages for c in m["choices"]]


def said(value: str, minutes: int, chat: int = CHAT) -> Inbound:
    at = NOW + timedelta(minutes=minutes)
    return Inbound(chat_id=chat, kind="text", text=value, user_id=USER, at=at)


def sent(file: dict[str, Any], minutes: int, chat: int = CHAT) -> Inbound:
    at = NOW + timedelta(minutes=minutes)
    return Inbound(chat_id=chat, kind="file", file=file, user_id=USER, at=at)


async def case_rows(records: AsyncEngine, session_id: str) -> dict[str, list[tuple]]:
    """Every case row of a session, by table, in a stable order."""
    rows = {}
    async with records.connect() as conn:
        for table, columns in CASE_ROWS.items():
            key = "id" if table == "chatsession" else "session_id"
            found = await conn.execute(
                text(f"select {columns} from {table} where {key} = :sid"), {"sid": session_id}
            )
            rows[table] = sorted(tuple(row) for row in found.all())
    return rows


async def snapshot_of(engine: Engine, session_id: str, state: str) -> repo.CaseSnapshot:
    """The case snapshot the engine writes a session's records from."""
    values = await engine.intake_state(session_id)
    return repo.CaseSnapshot.of(LEGAL.snapshot(engine.knowledge, values, state))


async def new_session(engine: Engine, chat: int) -> str:
    session = await repo.create_session(engine=engine.records, chat_id=chat, user_id=USER)
    return session.id


async def run_intake(engine: Engine) -> tuple[str, list[repo.CaseSnapshot]]:
    """A loan intake told turn by turn, with a correction and a photo, to its summary: its
    session and the case snapshot after each turn."""
    lines: list[Inbound] = [
        said("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요", 0),
        said("올해 6월", 1),
        said("300만원 아니고 350만원이에요", 2),
        sent(PHOTO, 3),
    ]
    snapshots = []
    session_id = ""
    for inbound in lines:
        reply = await engine.handle(inbound)
        if "a:changes:confirm" in offered(reply):  # the correction, confirmed
            yes = Inbound(chat_id=CHAT, kind="choice", data="a:changes:confirm", user_id=USER)
            reply = await engine.handle(yes)
        view = await repo.chat_view(engine=engine.records, chat_id=CHAT)
        session_id = view.latest.id
        snapshots.append(await snapshot_of(engine, session_id, reply.state))
    while snapshots[-1].state != "COMPLETED":  # whatever is still asked: not known
        reply = await engine.handle(said("모르겠어요", 10 + len(snapshots)))
        snapshots.append(await snapshot_of(engine, session_id, reply.state))
        assert len(snapshots) < 15, reply.messages
    return session_id, snapshots


class Writes:
    """The INSERT, UPDATE and DELETE statements the records engine runs, by table."""

    def __init__(self, records: AsyncEngine) -> None:
        self.seen: list[str] = []
        for sync in (records.sync_engine, repo.plain_engine(records)):
            if sync is not None:
                event.listen(sync, "before_cursor_execute", self._statement)

    def _statement(self, _conn, _cursor, statement: str, *_args) -> None:
        verb = statement.split(None, 1)[0].upper()
        if verb in ("INSERT", "UPDATE", "DELETE"):
            words = statement.replace("(", " ").split()
            table = words[2] if verb in ("INSERT", "DELETE") else words[1]
            self.seen.append(f"{verb} {table.lower()}")


async def test_a_snapshot_written_whole_leaves_the_rows_the_turns_left(engine: Engine) -> None:
    """One path: the turns' changes, a snapshot written over an empty case, and a snapshot
    written midway then a turn's changes to the end all leave the same case rows."""
    session_id, snapshots = await run_intake(engine)
    final = snapshots[-1]
    assert final.status == "completed" and final.summary is not None
    assert final.evidence and final.evidence[0].file_unique_id == "u1"
    assert final.facts["amount"].value == 3_500_000  # the confirmed correction
    assert final.facts["amount"].quote and final.counterparty.name
    by_turns = await case_rows(engine.records, session_id)
    assert by_turns["casesummary"] and by_turns["caseevidence"] and by_turns["caseparty"]

    whole = await new_session(engine, CHAT + 1)  # a repair from nothing: the whole snapshot
    await repo.sync_case(engine=engine.records, session_id=whole, snapshot=final)
    assert await case_rows(engine.records, whole) == by_turns

    midway = snapshots[1]  # a repair after the second turn, then the turns' changes to the end
    assert midway.state == "FACT_COLLECTION" and midway.facts["amount"].value == 3_000_000
    resumed = await new_session(engine, CHAT + 2)
    await repo.sync_case(engine=engine.records, session_id=resumed, snapshot=midway)
    changes = repo.case_changes(resumed, midway, final, midway.state)
    await repo.write_turn(engine=engine.records, chat_id=CHAT + 2, case=changes)
    assert await case_rows(engine.records, resumed) == by_turns


async def test_a_snapshot_is_written_over_what_is_stored(engine: Engine) -> None:
    """`sync_case` writes the changes from the stored rows, whatever they are: a stale fact is
    dropped, a lost list restored, and the same snapshot again writes only the session row."""
    session_id, snapshots = await run_intake(engine)
    by_turns = await case_rows(engine.records, session_id)
    stale = await new_session(engine, CHAT + 1)
    await repo.sync_case(engine=engine.records, session_id=stale, snapshot=snapshots[1])
    async with engine.records.begin() as conn:  # rows a failed or older write left behind
        await conn.execute(
            text(
                "insert into casefact (session_id, key, value_json, status, updated_at)"
                " values (:sid, 'bogus', '1', 'answered', '2026-01-01')"
            ),
            {"sid": stale},
        )
        await conn.execute(
            text("delete from casemissingfield where session_id = :sid"), {"sid": stale}
        )
        await conn.execute(
            text("update casemaster set description = '' where session_id = :sid"), {"sid": stale}
        )

    await repo.sync_case(engine=engine.records, session_id=stale, snapshot=snapshots[-1])
    assert await case_rows(engine.records, stale) == by_turns

    writes = Writes(engine.records)
    await repo.sync_case(engine=engine.records, session_id=stale, snapshot=snapshots[-1])
    assert writes.seen == ["UPDATE chatsession", "UPDATE chatsession"]  # close (a no-op), state
    assert await case_rows(engine.records, stale) == by_turns
