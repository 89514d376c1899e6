"""A turn costs what it must: one read of the chat, one write transaction with what changed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import event

from bot.engine import Engine, Inbound
from bot.services import thread_config
from bot.turn import Standing
from db import repo

NOW = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
CHAT = 4242


def said(value: str, minutes: int) -> Inbound:
    return Inbound(
        chat_id=CHAT,
        kind="text",
        text=value,
        user_id=CHAT,
        input_id=str(100 + minutes),
        at=NOW + timedelta(minutes=minutes),
    )


class Statements:
    """Every SQL statement and commit the records engine sends, by kind."""

    def __init__(self, engine: Engine) -> None:
        self.sql: list[str] = []
        self.commits = 0
        # The async engine, and for SQLite its plain twin that runs the turn's read and write.
        for sync in (engine.records.sync_engine, repo.plain_engine(engine.records)):
            if sync is not None:
                event.listen(sync, "before_cursor_execute", self._statement)
                event.listen(sync, "commit", self._commit)

    def _statement(self, _conn, _cursor, statement, *_args) -> None:
        self.sql.append(statement.split(None, 1)[0].upper())

    def _commit(self, _conn) -> None:
        self.commits += 1

    def reset(self) -> None:
        self.sql, self.commits = [], 0


async def test_an_answer_is_one_read_and_one_write_of_what_changed(engine: Engine) -> None:
    await engine.handle(said("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요", 0))
    seen = Statements(engine)
    reply = await engine.handle(said("올해 6월", 1))
    assert reply.field == "evidence"
    reads = [s for s in seen.sql if s == "SELECT"]
    writes = [s for s in seen.sql if s in ("INSERT", "UPDATE", "DELETE")]
    assert len(reads) == 1  # the chat view
    assert seen.commits == 1  # one write transaction
    # The session row, the changed fact, the missing list, the offer, the question-answer row:
    # no rewrite of facts that did not change, no second look at the session.
    assert 0 < len(writes) <= 7, seen.sql
    facts = await repo.case_record(
        engine=engine.records,
        session=(await repo.chat_view(engine=engine.records, chat_id=CHAT)).open,
    )
    assert facts["facts"]["repayment_date"] == "2026-06"
    assert facts["facts"]["amount"] == 3_000_000


def test_case_changes_carry_only_what_changed() -> None:
    before = {
        "state": "FACT_COLLECTION",
        "status": "open",
        "completion_rate": 0.5,
        "facts": {"amount": 3_000_000, "counterparty": "김철수"},
        "unknown": [],
        "missing": ["repayment_date", "evidence"],
        "description": "돈을 빌려줬어요",
        "case_type": "CIVIL",
        "sub_type": "LOAN",
    }
    after = {
        **before,
        "completion_rate": 0.75,
        "facts": {"amount": 3_500_000, "repayment_date": "2026-06"},
        "missing": ["evidence"],
    }
    of = repo.CaseSnapshot.of
    changes = repo.case_changes("s1", of(before), of(after), "FACT_COLLECTION")
    assert {row["key"] for row in changes.facts} == {"amount", "repayment_date"}
    assert changes.dropped_facts == ["counterparty"]
    assert changes.missing == [{"session_id": "s1", "key": "evidence", "reason": "not_answered"}]
    assert changes.master is None and changes.summary is None
    assert changes.transition_from is None and changes.finished is None
    moved = repo.case_changes(
        "s1", of(before), of({**after, "state": "RE_QUESTION"}), "FACT_COLLECTION"
    )
    assert moved.transition_from == "FACT_COLLECTION"


async def test_an_answer_reads_its_checkpoint_once(engine: Engine) -> None:
    """Where the intake waits is kept from the turn before: only the graph's own run loads
    the checkpoint (a look before it read it a second time)."""
    statements: list[str] = []
    await engine.handle(said("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요", 0))
    await engine.checkpointer.conn.set_trace_callback(statements.append)
    reply = await engine.handle(said("올해 6월", 1))
    await engine.checkpointer.conn.set_trace_callback(None)
    assert reply.field == "evidence"
    loads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert sum("from checkpoints" in s.lower() for s in loads) == 1, loads


async def test_the_kept_standing_is_what_the_checkpoint_says(engine: Engine) -> None:
    """After every kind of turn, the standing kept in memory equals a fresh read."""
    lines = [
        "도와주세요",  # too vague: the case type is asked for
        "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요",
        "네",  # not a date: asked again
        "올해 6월",
        "아 금액은 350만원이에요",  # a correction while another question waits
        "카톡 있어요",
        "돌려받고 싶어요",  # the last answer (what they want): the intake is complete
        "아 금액은 400만원이었어요",  # after the summary: an amendment
    ]
    kept_after = []
    for minute, line in enumerate(lines):
        reply = await engine.handle(said(line, minute))
        thread = (await repo.chat_view(engine=engine.records, chat_id=CHAT)).latest.id
        kept = engine.legal.standings.get(thread)
        fresh = Standing.of(await engine.graph.aget_state(thread_config(thread)))
        if kept is not None:
            assert kept == fresh, line
            kept_after.append(reply.state)
    # Kept after every turn of the open intake; a finished thread is pruned and read again.
    assert kept_after == [
        "CONFIRM_CASE_TYPE",
        "FACT_COLLECTION",
        "RE_QUESTION",
        "FACT_COLLECTION",
        "FACT_COLLECTION",
        "FACT_COLLECTION",
    ]
