"""The research assistant's response cache in the records database (table ResearchResponse).

`RecordsCache` has the two methods of graphs/research/types.py's `ResponseCache` (`get`,
`put`); db/ imports nothing above it, so it matches the protocol without importing it. Keys are
stored as their sha256: a request's URL and parameters never sit in the table as text.

Nothing here belongs to a chat: the rows are public services' answers to searches, so `/forget`
(db/repo/forget.py) leaves this table alone; `prune()` deletes the expired rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import ResearchResponse, utcnow
from db.repo.tx import dialect_insert, writing


def cache_key(key: str) -> str:
    """The stored form of a request key: its sha256 in hex."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class RecordsCache:
    """A ResponseCache on the records engine (SQLite or PostgreSQL); `clock` for tests."""

    def __init__(self, engine: AsyncEngine, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.engine = engine
        self.clock = clock

    async def get(self, key: str) -> str | None:
        """The body stored under `key` while it is fresh, else None."""
        async with AsyncSession(self.engine) as db:
            found = await db.exec(
                select(ResearchResponse.body).where(
                    ResearchResponse.key == cache_key(key),
                    col(ResearchResponse.expires_at) > self.clock(),
                )
            )
            return found.first()

    async def put(self, key: str, body: str, ttl: float) -> None:
        """Keep `body` under `key` for `ttl` seconds, replacing what was there."""
        now = self.clock()
        values = {"body": body, "stored_at": now, "expires_at": now + timedelta(seconds=ttl)}
        stmt = dialect_insert(self.engine, ResearchResponse.__table__).values(
            key=cache_key(key), **values
        )
        stmt = stmt.on_conflict_do_update(index_elements=["key"], set_=values)
        async with writing(self.engine) as db:
            await db.exec(stmt)
            await db.commit()

    async def prune(self) -> int:
        """Delete the expired rows; how many went."""
        async with writing(self.engine) as db:
            result = await db.exec(
                delete(ResearchResponse).where(col(ResearchResponse.expires_at) <= self.clock())
            )
            await db.commit()
            return result.rowcount or 0
