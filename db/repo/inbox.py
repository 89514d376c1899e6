"""The inbox: each Telegram update stored before it is confirmed, then marked processed (its
payload dropped) or set aside with the reason; what is pending is read back after a crash.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, NamedTuple

from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import InboxUpdate, utcnow
from db.repo.tx import dialect_insert, execute_in_one_transaction, in_one_transaction, writing


class InboxEntry(NamedTuple):
    """One update to store. With `failure`, it is stored set aside: processed, with the
    reason, and without its payload (nothing the person wrote is kept for it)."""

    update_id: int
    chat_id: int | None
    payload: dict[str, Any]
    failure: str | None = None
    update_type: str | None = None


async def inbox_add_batch(
    *, engine: AsyncEngine, updates: list[InboxEntry | tuple[Any, ...]]
) -> set[int]:
    """Store a getUpdates batch in one transaction before it is confirmed; return the new ids.

    Each entry is an `InboxEntry` (a plain tuple in its order will do). Payloads are kept as
    ASCII JSON, so any text Telegram sends (a lone surrogate included) can be stored and read
    back as it was.
    """
    if not updates:
        return set()
    entries = [InboxEntry(*entry) for entry in updates]
    ids = [entry.update_id for entry in entries]
    insert = dialect_insert(engine, InboxUpdate)

    def store(conn: Any) -> set[int]:
        query = select(InboxUpdate.update_id).where(col(InboxUpdate.update_id).in_(ids))
        known = set(conn.execute(query).scalars())
        now = utcnow()
        new = {}
        for entry in entries:
            if entry.update_id in known or entry.update_id in new:
                continue
            kept = {} if entry.failure else entry.payload
            new[entry.update_id] = {
                "update_id": entry.update_id,
                "chat_id": entry.chat_id,
                "payload_json": json.dumps(kept, ensure_ascii=True, sort_keys=True),
                "update_type": entry.update_type,
                "received_at": now,
                "processed_at": now if entry.failure else None,
                "failure": entry.failure[:200] if entry.failure else None,
            }
        if new:
            conn.execute(insert, list(new.values()))
        return set(new)

    return await in_one_transaction(engine, store)


async def inbox_add(
    *, engine: AsyncEngine, update_id: int, chat_id: int | None, payload: dict[str, Any]
) -> bool:
    """Store one inbound update before it is confirmed; False when it was stored already."""
    stored = await inbox_add_batch(engine=engine, updates=[InboxEntry(update_id, chat_id, payload)])
    return update_id in stored


async def inbox_is_processed(*, engine: AsyncEngine, update_id: int) -> bool:
    """Whether an update has been processed to the end."""
    async with AsyncSession(engine) as db:
        row = await db.get(InboxUpdate, update_id)
        return row is not None and row.processed_at is not None


async def inbox_mark_processed(*, engine: AsyncEngine, update_id: int) -> None:
    """Mark an update processed (its reply has been produced and its records written).

    The payload (the person's words, name and username) is dropped: only a pending update needs
    it, and the row itself stays to recognise a second delivery of the same update.
    """
    stmt = (
        update(InboxUpdate)
        .where(col(InboxUpdate.update_id) == update_id, col(InboxUpdate.processed_at).is_(None))
        .values(processed_at=utcnow(), payload_json="{}")
    )
    await execute_in_one_transaction(engine, [(stmt, {})])


async def inbox_mark_failed(*, engine: AsyncEngine, update_id: int, reason: str) -> None:
    """Set an update aside: not tried again, the reason kept for an operator and the payload
    (the person's words, name and phone number) dropped."""
    async with writing(engine) as db:
        await db.exec(
            update(InboxUpdate)
            .where(col(InboxUpdate.update_id) == update_id)
            .values(processed_at=utcnow(), failure=reason[:200], payload_json="{}")
        )
        await db.commit()


async def _inbox_rows(engine: AsyncEngine, condition: Any) -> list[InboxUpdate]:
    async with AsyncSession(engine) as db:
        query = select(InboxUpdate).where(condition).order_by(col(InboxUpdate.update_id))
        return list((await db.exec(query)).all())


async def inbox_failed(*, engine: AsyncEngine) -> list[InboxUpdate]:
    """Updates set aside as failed, oldest first."""
    return await _inbox_rows(engine, col(InboxUpdate.failure).is_not(None))


async def inbox_pending(
    *, engine: AsyncEngine, older_than: float | None = None
) -> list[InboxUpdate]:
    """Updates stored but not processed (a crash came between), oldest first; with
    `older_than`, only those stored at least that many seconds ago."""
    condition = col(InboxUpdate.processed_at).is_(None)
    if older_than is not None:
        cutoff = utcnow() - timedelta(seconds=older_than)
        condition = condition & (col(InboxUpdate.received_at) <= cutoff)
    return await _inbox_rows(engine, condition)


async def inbox_pending_for_chat(
    *, engine: AsyncEngine, chat_id: int, up_to: int
) -> list[InboxUpdate]:
    """A chat's stored, unfinished updates up to `up_to` (included), oldest first."""
    return await _inbox_rows(
        engine,
        (col(InboxUpdate.chat_id) == chat_id)
        & (col(InboxUpdate.update_id) <= up_to)
        & col(InboxUpdate.processed_at).is_(None),
    )


async def inbox_max_update_id(*, engine: AsyncEngine) -> int | None:
    """The highest update id ever stored (to resume polling after it)."""
    async with AsyncSession(engine) as db:
        return (await db.exec(select(func.max(InboxUpdate.update_id)))).one()
