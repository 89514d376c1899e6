"""A session's case records, written from the graph's record snapshots: whole (`sync_case`), or
as the rows one turn changed (`case_changes`, which `write_turn` writes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, update
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
    ChatTurn,
    StateTransition,
    utcnow,
)
from db.repo.tx import dialect_insert, dumps, writing


async def sync_case(
    *,
    engine: AsyncEngine,
    session_id: str,
    snapshot: dict[str, Any],
    turn: dict[str, Any] | None = None,
) -> None:
    """Write a session's case records from a snapshot of its graph state, in one transaction.

    Idempotent: the same snapshot written twice leaves the same rows. The snapshot is plain
    JSON data: state, status, completion_rate, case_type, sub_type, confidence, description,
    emotions, facts, unknown, missing, counterparty, evidence_files, summary. `turn`, when
    given, is appended to the conversation history ({"field", "user_text", "bot_text"}, and
    "input_id": a turn of an input already in the history is not written twice).
    """
    now = utcnow()
    async with writing(engine) as db:
        session = await db.get(ChatSession, session_id)
        if session is None:
            raise LookupError(f"no session {session_id}")
        if session.current_state != snapshot["state"]:
            await db.exec(
                dialect_insert(engine, StateTransition).values(
                    session_id=session_id,
                    from_state=session.current_state,
                    to_state=snapshot["state"],
                    at=now,
                )
            )
        changes: dict[str, Any] = {
            "current_state": snapshot["state"],
            "completion_rate": snapshot["completion_rate"],
            "updated_at": now,
        }
        if snapshot["status"] != "open" and session.status == "open":
            changes.update(status=snapshot["status"], ended_at=now)
        await db.exec(
            update(ChatSession).where(col(ChatSession.id) == session_id).values(**changes)
        )
        await db.exec(
            update(CaseMaster)
            .where(col(CaseMaster.session_id) == session_id)
            .values(
                case_type=snapshot.get("case_type"),
                sub_case_type=snapshot.get("sub_type"),
                confidence=snapshot.get("confidence") or 0.0,
                description=snapshot.get("description") or "",
                emotions_json=dumps(snapshot.get("emotions") or []),
                updated_at=now,
            )
        )

        facts: dict[str, Any] = snapshot.get("facts") or {}
        unknown = set(snapshot.get("unknown") or [])
        if facts:
            detail = snapshot.get("facts_detail") or {}
            rows = [
                {
                    "session_id": session_id,
                    "key": key,
                    "value_json": dumps(value),
                    "status": "unknown" if key in unknown else "answered",
                    "quote": (detail.get(key) or {}).get("quote"),
                    "said_at": (detail.get(key) or {}).get("at"),
                    "confirmed": (detail.get(key) or {}).get("confirmed"),
                    "updated_at": now,
                }
                for key, value in facts.items()
            ]
            stmt = dialect_insert(engine, CaseFact).values(rows)
            await db.exec(
                stmt.on_conflict_do_update(
                    index_elements=["session_id", "key"],
                    set_={
                        "value_json": stmt.excluded.value_json,
                        "status": stmt.excluded.status,
                        "quote": stmt.excluded.quote,
                        "said_at": stmt.excluded.said_at,
                        "confirmed": stmt.excluded.confirmed,
                        "updated_at": stmt.excluded.updated_at,
                    },
                    where=(CaseFact.value_json != stmt.excluded.value_json)
                    | (CaseFact.status != stmt.excluded.status)
                    | (CaseFact.quote.is_distinct_from(stmt.excluded.quote))
                    | (CaseFact.confirmed.is_distinct_from(stmt.excluded.confirmed)),
                )
            )
        await db.exec(
            delete(CaseFact).where(
                col(CaseFact.session_id) == session_id, col(CaseFact.key).not_in(list(facts))
            )
        )

        await db.exec(
            delete(CaseMissingField).where(col(CaseMissingField.session_id) == session_id)
        )
        missing = snapshot.get("missing") or []
        if missing:
            await db.exec(
                dialect_insert(engine, CaseMissingField).values(
                    [
                        {
                            "session_id": session_id,
                            "key": key,
                            "reason": "unknown" if key in unknown else "not_answered",
                        }
                        for key in missing
                    ]
                )
            )

        party = snapshot.get("counterparty") or {}
        if party.get("name") or party.get("party_type"):
            values = {"name": party.get("name"), "party_type": party.get("party_type")}
            stmt = dialect_insert(engine, CaseParty).values(
                session_id=session_id, role="counterparty", **values
            )
            await db.exec(
                stmt.on_conflict_do_update(index_elements=["session_id", "role"], set_=values)
            )

        files = snapshot.get("evidence_files") or []
        if files:
            rows = [_evidence_row(session_id, item) for item in files]
            stmt = dialect_insert(engine, CaseEvidence).values(rows)
            await db.exec(
                stmt.on_conflict_do_nothing(index_elements=["session_id", "file_unique_id"])
            )

        summary = snapshot.get("summary")
        if summary:
            values = {
                "summary_text": summary["text"],
                "structured_json": dumps(summary["structured"]),
            }
            stmt = dialect_insert(engine, CaseSummary).values(
                session_id=session_id, created_at=now, **values
            )
            await db.exec(stmt.on_conflict_do_update(index_elements=["session_id"], set_=values))

        if turn is not None and not (
            turn.get("input_id")
            and (
                await db.exec(
                    select(ChatTurn.id).where(
                        ChatTurn.session_id == session_id, ChatTurn.input_id == turn["input_id"]
                    )
                )
            ).first()
        ):
            await db.exec(
                dialect_insert(engine, ChatTurn).values(session_id=session_id, at=now, **turn)
            )
        await db.commit()


@dataclass
class CaseChanges:
    """What a turn changed in a session's records (from its record snapshots before and after)."""

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
    summary: dict[str, Any] | None = None


def _fact_rows(session_id: str, snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    unknown = set(snapshot.get("unknown") or [])
    detail = snapshot.get("facts_detail") or {}
    return {
        key: {
            "session_id": session_id,
            "key": key,
            "value_json": dumps(value),
            "status": "unknown" if key in unknown else "answered",
            "quote": (detail.get(key) or {}).get("quote"),
            "said_at": (detail.get(key) or {}).get("at"),
            "confirmed": (detail.get(key) or {}).get("confirmed"),
        }
        for key, value in (snapshot.get("facts") or {}).items()
    }


def _evidence_row(session_id: str, item: dict[str, Any]) -> dict[str, Any]:
    """The CaseEvidence row of one evidence file of a record snapshot."""
    return {
        "session_id": session_id,
        "kind": item["kind"],
        "file_id": item["file_id"],
        "file_unique_id": item["file_unique_id"],
        "file_name": item.get("file_name"),
        "mime_type": item.get("mime_type"),
        "caption": item.get("caption"),
        "received_at": datetime.fromisoformat(item["at"]),
    }


def _master(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        "case_type": snapshot.get("case_type"),
        "sub_case_type": snapshot.get("sub_type"),
        "confidence": snapshot.get("confidence") or 0.0,
        "description": snapshot.get("description") or "",
        "emotions_json": dumps(snapshot.get("emotions") or []),
    }


def _missing(snapshot: dict[str, Any]) -> list[tuple[str, str]]:
    unknown = set(snapshot.get("unknown") or [])
    return [
        (key, "unknown" if key in unknown else "not_answered")
        for key in snapshot.get("missing") or []
    ]


def case_changes(
    session_id: str, before: dict[str, Any], after: dict[str, Any], recorded_state: str
) -> CaseChanges:
    """The rows a turn must write, from the record snapshots (see `sync_case`) before and
    after it; `recorded_state` is the state the session row holds now."""
    changes = CaseChanges(
        session_id=session_id, state=after["state"], completion_rate=after["completion_rate"]
    )
    if recorded_state != after["state"]:
        changes.transition_from = recorded_state
    if after["status"] != "open":
        changes.finished = after["status"]
    if _master(before) != _master(after):
        changes.master = _master(after)
    old, new = _fact_rows(session_id, before), _fact_rows(session_id, after)
    changes.facts = [row for key, row in new.items() if old.get(key) != row]
    changes.dropped_facts = [key for key in old if key not in new]
    if _missing(before) != _missing(after):
        changes.missing = [
            {"session_id": session_id, "key": key, "reason": reason}
            for key, reason in _missing(after)
        ]
    party = after.get("counterparty") or {}
    if party != (before.get("counterparty") or {}) and (
        party.get("name") or party.get("party_type")
    ):
        changes.party = {"name": party.get("name"), "party_type": party.get("party_type")}
    known = {f["file_unique_id"] for f in before.get("evidence_files") or []}
    changes.evidence = [
        _evidence_row(session_id, item)
        for item in after.get("evidence_files") or []
        if item["file_unique_id"] not in known
    ]
    if after.get("summary") and after.get("summary") != before.get("summary"):
        changes.summary = after["summary"]
    return changes
