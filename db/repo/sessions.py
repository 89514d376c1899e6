"""A chat's intake sessions: opened (with their case and first transition), found, closed,
reopened after a cancel, and listed for staff.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import CaseMaster, ChatSession, StateTransition, utcnow
from db.repo.tx import dialect_insert, execute_in_one_transaction, writing


async def open_session(*, engine: AsyncEngine, chat_id: int) -> ChatSession | None:
    """The chat's open session, if any."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(ChatSession)
            .where(ChatSession.chat_id == chat_id, ChatSession.status == "open")
            .order_by(col(ChatSession.started_at).desc())
        )
        return rows.first()


async def latest_session(*, engine: AsyncEngine, chat_id: int) -> ChatSession | None:
    """The chat's most recent session, whatever its status."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(ChatSession)
            .where(ChatSession.chat_id == chat_id)
            .order_by(col(ChatSession.started_at).desc())
        )
        return rows.first()


async def create_session(
    *, engine: AsyncEngine, chat_id: int, user_id: int | None, domain: str = "legal"
) -> ChatSession:
    """Start a new session for the chat: its row, its case and its first transition, in one
    transaction of Core statements (the ORM's flush and refresh cost more than the writes)."""
    session = ChatSession(id=uuid.uuid4().hex, chat_id=chat_id, user_id=user_id, domain=domain)
    master = CaseMaster(session_id=session.id)
    start = StateTransition(session_id=session.id, from_state=None, to_state="INIT")
    work = [  # the session row first: the others refer to it
        (dialect_insert(engine, ChatSession), session.model_dump()),
        (dialect_insert(engine, CaseMaster), master.model_dump(exclude={"id"})),
        (dialect_insert(engine, StateTransition), start.model_dump(exclude={"id"})),
    ]
    await execute_in_one_transaction(engine, work)
    return session


async def close_session(*, engine: AsyncEngine, session_id: str, status: str) -> None:
    """Mark a session completed or cancelled."""
    async with writing(engine) as db:
        session = await db.get(ChatSession, session_id)
        if session is None or session.status != "open":
            return
        session.status = status
        session.ended_at = session.updated_at = utcnow()
        db.add(session)
        await db.commit()


async def reopen_session(*, engine: AsyncEngine, session_id: str) -> bool:
    """Undo a cancel: the cancelled session is open again. False if it was not cancelled."""
    async with writing(engine) as db:
        session = await db.get(ChatSession, session_id)
        if session is None or session.status != "cancelled":
            return False
        session.status, session.ended_at, session.updated_at = "open", None, utcnow()
        db.add(session)
        await db.commit()
    return True


async def list_sessions(*, engine: AsyncEngine, statuses: Iterable[str]) -> list[ChatSession]:
    """Sessions with one of `statuses`, most recently updated first."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(ChatSession)
            .where(col(ChatSession.status).in_(list(statuses)))
            .order_by(col(ChatSession.updated_at).desc())
        )
        return list(rows.all())
