"""One turn of a chat at a time: an in-process lock per chat, and on PostgreSQL an advisory lock.

With SQLite there is one bot process, so an `asyncio.Lock` per chat is enough. With several bot
processes on one PostgreSQL database, a session-level advisory lock keyed by the chat id is
taken as well, on a connection held for the turn: a chat's turns never run in two processes at
once, and a process that dies mid-turn releases its locks with its connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

# Advisory locks share one 64-bit key space per database: chat locks carry this tag in their
# top bits, so nothing else that takes advisory locks collides with them. Telegram chat ids
# fit in 48 bits (two's complement for groups' negative ids).
LOCK_TAG = 0x1A7A
CHAT_BITS = 48


def advisory_key(chat_id: int) -> int:
    """The advisory lock key of a chat (a positive 64-bit integer, distinct per chat)."""
    return (LOCK_TAG << CHAT_BITS) | (chat_id & ((1 << CHAT_BITS) - 1))


class ChatLocks:
    """`async with locks.hold(chat_id):` runs the block while no other turn of the chat runs.

    Waiters are served in the order they asked (asyncio locks are fair), so updates of a chat
    handed over in arrival order are processed in that order.
    """

    def __init__(self, engine: AsyncEngine | None = None) -> None:
        self._engine = (
            engine if engine is not None and engine.dialect.name == "postgresql" else None
        )
        self._local: dict[int, asyncio.Lock] = {}
        self._users: dict[int, int] = {}

    @property
    def shared(self) -> bool:
        """Whether the lock holds across processes (PostgreSQL)."""
        return self._engine is not None

    @asynccontextmanager
    async def hold(self, chat_id: int) -> AsyncIterator[None]:
        lock = self._local.setdefault(chat_id, asyncio.Lock())
        self._users[chat_id] = self._users.get(chat_id, 0) + 1
        try:
            async with lock:
                if self._engine is None:
                    yield
                else:
                    async with self._advisory(chat_id):
                        yield
        finally:
            self._users[chat_id] -= 1
            if not self._users[chat_id]:  # nobody holds or waits: forget the lock
                del self._users[chat_id], self._local[chat_id]

    @asynccontextmanager
    async def _advisory(self, chat_id: int) -> AsyncIterator[None]:
        key = {"key": advisory_key(chat_id)}
        async with self._engine.connect() as conn:
            await conn.execute(text("SELECT pg_advisory_lock(:key)"), key)
            await conn.commit()  # no transaction stays open while the turn runs
            try:
                yield
            finally:
                await conn.execute(text("SELECT pg_advisory_unlock(:key)"), key)
                await conn.commit()
