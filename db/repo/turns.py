"""The turn's one write: everything a turn changed, in one short transaction of Core statements."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from db.models import utcnow
from db.repo.cases import CaseChanges
from db.repo.statements import TurnStatements, turn_statements
from db.repo.tx import dumps, execute_in_one_transaction


async def write_turn(
    *,
    engine: AsyncEngine,
    chat_id: int,
    lang: str | None = None,
    offer: tuple[int | None, list[str]] | None = None,
    case: CaseChanges | None = None,
    turn: dict[str, Any] | None = None,
    safety: tuple[str, str] | None = None,
) -> None:
    """Everything a turn changed, in one short transaction of Core statements: the safety
    check's memory (`safety`: the chat's language, should the row be new, and the JSON), the
    chat's new language, its offer, the session row, the transition, changed facts, the missing list, the
    party, new evidence, the summary, and the question-answer row (`turn`, written once per
    input id)."""
    now = utcnow()
    the = turn_statements(engine.dialect.name)
    work: list[tuple[Any, Any]] = []  # (statement, parameters)
    if safety is not None:  # before the language, which it never overwrites
        row_lang, safety_json = safety
        work.append(
            (the.safety, {"chat_id": chat_id, "lang": row_lang, "safety_json": safety_json})
        )
    if lang is not None:
        work.append((the.lang, {"chat_id": chat_id, "lang": lang}))
    if offer is not None:
        work.append(
            (
                the.offer,
                {
                    "chat_id": chat_id,
                    "user_id": offer[0],
                    "choices_json": dumps(offer[1]),
                    "offered_at": now,
                },
            )
        )
    if case is not None:
        work += _case_work(the, case, now)
        if turn is not None:
            work.append((the.turn, {"session_id": case.session_id, "at": now, **turn}))
    await execute_in_one_transaction(engine, work)


def _case_work(the: TurnStatements, case: CaseChanges, now: datetime) -> list[tuple[Any, Any]]:
    """The (statement, parameters) pairs that write a turn's CaseChanges (see `write_turn`)."""
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
        work.append(
            (
                the.summary,
                {
                    "session_id": sid,
                    "summary_text": case.summary["text"],
                    "structured_json": dumps(case.summary["structured"]),
                    "created_at": now,
                },
            )
        )
    return work
