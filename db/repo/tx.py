"""Writing safely, and the SQL helpers every part of the repository shares.

`writing` gives a write session, one writer at a time per process on SQLite; `in_one_transaction`
runs work in one transaction (with SQLite in one worker-thread call on the plain sqlite3 twin of
the records engine); `dialect_insert` is INSERT with the dialect's ON CONFLICT clauses.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel.ext.asyncio.session import AsyncSession

T = TypeVar("T")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def dialect_insert(engine: AsyncEngine, table: Any) -> Any:
    """INSERT with the dialect's ON CONFLICT clauses (SQLite and PostgreSQL share their form)."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


_WRITE_LOCKS: weakref.WeakKeyDictionary[AsyncEngine, asyncio.Lock] = weakref.WeakKeyDictionary()
# SQLite only: a plain (sqlite3) engine on the same file, for the turn's read and write in one
# worker-thread call each (see `attach_sync_engine`).
_SYNC_ENGINES: weakref.WeakKeyDictionary[AsyncEngine, Engine] = weakref.WeakKeyDictionary()


def attach_sync_engine(engine: AsyncEngine, sync: Engine) -> None:
    """Give a SQLite records engine its plain twin for the hot path (db/engine.py does)."""
    _SYNC_ENGINES[engine] = sync


def plain_engine(engine: AsyncEngine) -> Engine | None:
    """The plain sqlite3 twin of a SQLite records engine (None for PostgreSQL)."""
    return _SYNC_ENGINES.get(engine)


def _write_lock(engine: AsyncEngine) -> asyncio.Lock:
    return _WRITE_LOCKS.setdefault(engine, asyncio.Lock())


@asynccontextmanager
async def writing(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    """A session for a write transaction; one writer at a time per process.

    SQLite has a single writer. A deferred transaction that reads and then writes fails at
    once with "database is locked" when another writer got there first (the busy timeout
    does not apply to that upgrade), so writers of this process queue here instead.
    """
    if engine.dialect.name != "sqlite":  # PostgreSQL takes many writers
        async with AsyncSession(engine) as db:
            yield db
        return
    async with _write_lock(engine), AsyncSession(engine) as db:
        yield db


async def execute_in_one_transaction(engine: AsyncEngine, work: list[tuple[Any, Any]]) -> None:
    """Run (statement, parameters) pairs in one transaction (see `in_one_transaction`)."""
    if not work:
        return

    def run(conn: Any) -> None:
        for stmt, params in work:
            conn.execute(stmt, params)

    await in_one_transaction(engine, run)


async def in_one_transaction(engine: AsyncEngine, work: Callable[[Any], T]) -> T:
    """`work(connection)` in one transaction, its result returned. With SQLite, in one call
    to a worker thread on a plain sqlite3 connection (each statement through aiosqlite would be
    a thread hop of its own), one writer of this process at a time; with PostgreSQL, on the
    async connection (`run_sync`)."""
    sync = _SYNC_ENGINES.get(engine)
    if sync is None:
        async with engine.begin() as conn:
            return await conn.run_sync(work)

    def run() -> T:
        with sync.begin() as conn:
            return work(conn)

    async with _write_lock(engine):
        return await asyncio.to_thread(run)
