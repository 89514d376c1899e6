"""The turn's one write: everything a turn changed, in one short transaction of Core statements."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from db.models import utcnow
from db.repo.cases import CaseChanges, case_work
from db.repo.profiles import ProfileSnapshot, profile_work
from db.repo.statements import turn_statements
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
    profile: ProfileSnapshot | None = None,
    tokens: tuple[str, int, int] | None = None,
) -> None:
    """Everything a turn changed, in one short transaction of Core statements: the safety
        check's memory (`safety`: the chat's language, should the row be new, and the JSON), the
        chat's new language, its offer; a legal turn's case changes (`case`: the session row, the
        transition, changed facts, the missing list, the party, new evidence, the summary) and its
        question-answer row (`turn`, written once per input id); a medical turn's profile
        (`profile`, written whole); the tokens the turn's model calls cost (`tokens`: the session,
    prompt and completion tokens, added to its counts). All of it or, when any statement fails,
    none."""
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
        work += case_work(the, case, now, turn)
    if profile is not None:
        work += profile_work(the, profile, now)
    if tokens is not None:
        session_id, prompt, completion = tokens
        work.append(
            (the.tokens, {"b_id": session_id, "b_prompt": prompt, "b_completion": completion})
        )
    await execute_in_one_transaction(engine, work)
