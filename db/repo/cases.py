"""A session's case records, written one way: the changes between two `CaseSnapshot`s
(`case_changes`) as statements (`case_work`) in one transaction. A turn writes the changes from
the snapshot before it to the one after it (`write_turn`); `sync_case` the changes from what is
stored to the snapshot it is given (repairs, replays, amendments).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select

from db.models import (
    CaseEvidence,
    CaseFact,
    CaseMaster,
    CaseMissingField,
    CaseParty,
    CaseSummary,
    ChatSession,
    utcnow,
)
from db.repo.snapshot import CaseSnapshot, EvidenceFile, Fact, Party, Summary
from db.repo.statements import TurnStatements, turn_statements
from db.repo.tx import in_one_transaction


@dataclass
class CaseChanges:
    """What changes in a session's records from one case snapshot to another."""

    session_id: str
    state: str
    completion_rate: float
    transition_from: str | None = None  # set when the state changed
    finished: str | None = None  # "completed" when the intake ended
    master: dict[str, Any] | None = None
    facts: list[dict[str, Any]] = field(default_factory=list)  # rows to upsert
    dropped_facts: list[str] = field(default_factory=list)
    missing: list[dict[str, Any]] | None = None  # the whole new list, when it changed
    party: dict[str, Any] | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    summary: Summary | None = None


def case_changes(
    session_id: str, before: CaseSnapshot, after: CaseSnapshot, recorded_state: str
) -> CaseChanges:
    """The rows to write to take a session's records from `before` to `after`;
    `recorded_state` is the state the session row holds now."""
    changes = CaseChanges(
        session_id=session_id, state=after.state, completion_rate=after.completion_rate
    )
    if recorded_state != after.state:
        changes.transition_from = recorded_state
    if after.status != "open":
        changes.finished = after.status
    if before.master() != after.master():
        changes.master = after.master()
    old = {key: fact.row(session_id, key) for key, fact in before.facts.items()}
    new = {key: fact.row(session_id, key) for key, fact in after.facts.items()}
    changes.facts = [row for key, row in new.items() if old.get(key) != row]
    changes.dropped_facts = [key for key in old if key not in new]
    if before.missing != after.missing:
        changes.missing = [
            {"session_id": session_id, "key": key, "reason": reason}
            for key, reason in after.missing
        ]
    # A counterparty once recorded stays (a later snapshot without one does not remove it).
    if after.counterparty and after.counterparty != before.counterparty:
        party = after.counterparty
        changes.party = {"name": party.name, "party_type": party.party_type}
    known = {item.file_unique_id for item in before.evidence}
    changes.evidence = [
        item.row(session_id) for item in after.evidence if item.file_unique_id not in known
    ]
    if after.summary and (
        before.summary is None or after.summary.values() != before.summary.values()
    ):
        changes.summary = after.summary
    return changes


def case_work(
    the: TurnStatements, case: CaseChanges, now: datetime, turn: dict[str, Any] | None = None
) -> list[tuple[Any, Any]]:
    """The (statement, parameters) pairs that write a session's `CaseChanges`, and its
    question-answer row (`turn`, written once per input id)."""
    sid = case.session_id
    work: list[tuple[Any, Any]] = []
    if case.finished:  # closed once: a finished session's status is never rewritten
        work.append((the.close, {"b_id": sid, "b_status": case.finished, "b_at": now}))
    work.append(
        (
            the.session,
            {"b_id": sid, "b_state": case.state, "b_rate": case.completion_rate, "b_at": now},
        )
    )
    if case.transition_from is not None:
        work.append(
            (
                the.transition,
                {"session_id": sid, "from_state": case.transition_from, "to_state": case.state}
                | {"at": now},
            )
        )
    if case.master is not None:
        work.append(
            (the.master, {f"b_{k}": v for k, v in case.master.items()} | {"b_id": sid, "b_at": now})
        )
    if case.facts:
        work.append((the.facts, [{**row, "updated_at": now} for row in case.facts]))
    if case.dropped_facts:
        work.append((the.drop_facts, {"b_id": sid, "b_keys": case.dropped_facts}))
    if case.missing is not None:
        work.append((the.clear_missing, {"b_id": sid}))
        if case.missing:
            work.append((the.missing, case.missing))
    if case.party is not None:
        work.append((the.party, {"session_id": sid, "role": "counterparty", **case.party}))
    if case.evidence:
        work.append((the.evidence, case.evidence))
    if case.summary is not None:
        work.append((the.summary, {"session_id": sid, "created_at": now, **case.summary.values()}))
    if turn is not None:
        work.append((the.turn, {"session_id": sid, "at": now, **turn}))
    return work


def stored_case(conn: Connection, session_id: str) -> tuple[CaseSnapshot, str] | None:
    """What a session's records hold now, as a snapshot, and the state its row holds (None
    when there is no such session). Read on the connection of the write that follows."""
    session = conn.execute(
        select(ChatSession.current_state, ChatSession.status, ChatSession.completion_rate).where(
            col(ChatSession.id) == session_id
        )
    ).first()
    if session is None:
        return None
    master = conn.execute(
        select(CaseMaster).where(col(CaseMaster.session_id) == session_id)
    ).first()
    facts = conn.execute(select(CaseFact).where(col(CaseFact.session_id) == session_id)).all()
    missing = conn.execute(
        select(CaseMissingField.key, CaseMissingField.reason)
        .where(col(CaseMissingField.session_id) == session_id)
        .order_by(col(CaseMissingField.id))
    ).all()
    party = conn.execute(
        select(CaseParty.name, CaseParty.party_type).where(
            col(CaseParty.session_id) == session_id, col(CaseParty.role) == "counterparty"
        )
    ).first()
    files = conn.execute(
        select(CaseEvidence)
        .where(col(CaseEvidence.session_id) == session_id)
        .order_by(col(CaseEvidence.id))
    ).all()
    summary = conn.execute(
        select(CaseSummary.summary_text, CaseSummary.structured_json).where(
            col(CaseSummary.session_id) == session_id
        )
    ).first()
    snapshot = CaseSnapshot(
        state=session.current_state,
        status=session.status,
        completion_rate=session.completion_rate,
        case_type=master.case_type if master else None,
        sub_type=master.sub_case_type if master else None,
        confidence=master.confidence if master else 0.0,
        description=master.description if master else "",
        emotions=tuple(json.loads(master.emotions_json)) if master else (),
        facts={
            row.key: Fact(
                value=json.loads(row.value_json),
                unknown=row.status == "unknown",
                quote=row.quote,
                said_at=row.said_at,
                confirmed=row.confirmed,
            )
            for row in facts
        },
        missing=tuple((row.key, row.reason) for row in missing),
        counterparty=Party(party.name, party.party_type) if party else Party(),
        evidence=tuple(
            EvidenceFile(
                kind=row.kind,
                file_id=row.file_id,
                file_unique_id=row.file_unique_id,
                received_at=row.received_at,
                file_name=row.file_name,
                mime_type=row.mime_type,
                caption=row.caption,
            )
            for row in files
        ),
        summary=Summary(summary.summary_text, json.loads(summary.structured_json))
        if summary
        else None,
    )
    return snapshot, session.current_state


async def sync_case(
    *,
    engine: AsyncEngine,
    session_id: str,
    snapshot: CaseSnapshot,
    turn: dict[str, Any] | None = None,
) -> None:
    """Write a session's case records from a snapshot of its graph state, in one transaction:
    what is stored is read, and the changes from it to `snapshot` written, as a turn writes
    its own (`case_work`).

    Idempotent: the same snapshot written twice leaves the same rows. `turn`, when given, is
    appended to the conversation history ({"field", "user_text", "bot_text"}, and "input_id":
    a turn of an input already in the history is not written twice).
    """
    the = turn_statements(engine.dialect.name)
    now = utcnow()

    def write(conn: Connection) -> None:
        stored = stored_case(conn, session_id)
        if stored is None:
            raise LookupError(f"no session {session_id}")
        before, recorded_state = stored
        changes = case_changes(session_id, before, snapshot, recorded_state)
        for stmt, params in case_work(the, changes, now, turn):
            conn.execute(stmt, params)

    await in_one_transaction(engine, write)
