"""Where records and checkpoints live: SQLite files under the data directory, or PostgreSQL.

`INTAKE_DATABASE_URL` unset: two SQLite files (WAL, a busy timeout) under INTAKE_DATA_DIR.
Both delete for real: `secure_delete` overwrites deleted rows with zeros, and `truncate_wal`
folds the write-ahead log into the file and empties it, so what /forget deleted is gone from
the disk while the process runs. `postgresql://…`: the record tables through SQLAlchemy async
with psycopg 3, the checkpoints in the same database through `AsyncPostgresSaver`. Either way
the schema is brought up to date by the migrations (db/migrate.py) when the engine opens.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from db import repo
from db.migrate import migrate

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
_PLAIN: dict[AsyncEngine, Any] = {}  # SQLite records engine -> its plain sqlite3 twin
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
CHECKPOINT_SETUP_LOCK = 0x1A7A_0000_0001  # advisory lock key while the saver sets up its tables
WAL_TRUNCATE_TRIES = (0.05, 0.1, 0.2, 0.5)  # pauses while a reader keeps the log busy


def records_path(data_dir: Path) -> Path:
    """The SQLite file holding the record tables."""
    return data_dir / "records.db"


def checkpoints_path(data_dir: Path) -> Path:
    """The SQLite file holding LangGraph checkpoints."""
    return data_dir / "checkpoints.db"


def _set_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.close()


def is_postgres(url: str | None) -> bool:
    """Whether a database URL names PostgreSQL (else the SQLite files are used)."""
    return bool(url) and url.split(":", 1)[0] in POSTGRES_SCHEMES


def _psycopg_url(url: str) -> str:
    """A postgresql:// URL for SQLAlchemy's psycopg 3 driver."""
    return "postgresql+psycopg:" + url.split(":", 1)[1]


def _libpq_url(url: str) -> str:
    """The same URL as libpq (psycopg itself) reads it."""
    return "postgresql:" + url.split(":", 1)[1]


async def create_records_engine(
    data_dir: Path, url: str | None = None, *, connections: int = 64
) -> AsyncEngine:
    """Open the records database and apply pending migrations; one engine per process.

    `connections`: how many connections PostgreSQL may be asked for at once (each chat whose
    turn runs holds one for its lock).
    """
    if is_postgres(url):
        engine = create_async_engine(
            _psycopg_url(url),
            pool_size=8,
            max_overflow=connections + 8,
            pool_pre_ping=True,
            connect_args={"options": "-c timezone=UTC"},  # naive UTC, as with SQLite
        )
    else:
        data_dir.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(f"sqlite+aiosqlite:///{records_path(data_dir)}")
        event.listen(engine.sync_engine, "connect", _set_pragmas)
        plain = create_engine(f"sqlite:///{records_path(data_dir)}")
        event.listen(plain, "connect", _set_pragmas)
        repo.attach_sync_engine(engine, plain)
        _PLAIN[engine] = plain
    await migrate(engine)
    return engine


async def dispose_records_engine(engine: AsyncEngine) -> None:
    """Close a records engine (and its plain SQLite twin)."""
    plain = _PLAIN.pop(engine, None)
    if plain is not None:
        plain.dispose()
    await engine.dispose()


@dataclass
class Checkpoints:
    """The LangGraph checkpointer and what the engine does to its storage beyond the saver's API."""

    saver: BaseCheckpointSaver
    close_storage: Any  # async callable
    sqlite: aiosqlite.Connection | None = None

    async def prune(self, thread_id: str) -> None:
        """Keep only the latest checkpoint of a finished thread.

        AsyncPostgresSaver has this (`aprune`); AsyncSqliteSaver does not, so there the older
        checkpoints and their writes are deleted here.
        """
        if self.sqlite is None:
            await self.saver.aprune([thread_id], strategy="keep_latest")
            return
        latest = await self.saver.aget_tuple({"configurable": {"thread_id": thread_id}})
        if latest is None:
            return
        keep = latest.config["configurable"]["checkpoint_id"]
        async with self.saver.lock:
            for table in ("checkpoints", "writes"):
                await self.sqlite.execute(
                    f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id != ?",
                    (thread_id, keep),
                )
            await self.sqlite.commit()

    async def forget(self, thread_ids: list[str]) -> None:
        """Delete threads for good (with SQLite, out of the write-ahead log too)."""
        for thread_id in thread_ids:
            await self.saver.adelete_thread(thread_id)
        if self.sqlite is not None:
            async with self.saver.lock:
                await truncate_checkpoint_wal(self.sqlite)

    async def close(self) -> None:
        await self.close_storage()


async def open_checkpoints(data_dir: Path, url: str | None = None) -> Checkpoints:
    """The checkpointer: AsyncSqliteSaver on checkpoints.db, or AsyncPostgresSaver on `url`."""
    if not is_postgres(url):
        conn = await open_checkpoint_connection(data_dir)
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        return Checkpoints(saver=saver, close_storage=conn.close, sqlite=conn)
    pool = AsyncConnectionPool(
        _libpq_url(url),
        min_size=2,
        max_size=16,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    saver = AsyncPostgresSaver(pool)
    async with pool.connection() as conn:  # one process at a time creates the tables
        # Polled, not waited for: a session waiting inside a statement would hold a snapshot,
        # and the saver's CREATE INDEX CONCURRENTLY in the process holding the lock waits for
        # every such snapshot to go, which would never happen.
        while not (
            await (
                await conn.execute("SELECT pg_try_advisory_lock(%s)", (CHECKPOINT_SETUP_LOCK,))
            ).fetchone()
        )["pg_try_advisory_lock"]:
            await asyncio.sleep(0.1)
        try:
            await saver.setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (CHECKPOINT_SETUP_LOCK,))
    return Checkpoints(saver=saver, close_storage=pool.close)


async def open_checkpoint_connection(data_dir: Path) -> aiosqlite.Connection:
    """One aiosqlite connection for the process's single AsyncSqliteSaver (WAL + busy timeout)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(str(checkpoints_path(data_dir)))
    # The saver sets WAL itself; the busy timeout is ours to set.
    await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA synchronous=NORMAL")
    await conn.execute("PRAGMA secure_delete=ON")
    return conn


async def _truncate(execute) -> bool:
    """Run `PRAGMA wal_checkpoint(TRUNCATE)` until no reader holds the log back."""
    for pause in (*WAL_TRUNCATE_TRIES, None):
        busy, _, _ = await execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if not busy:
            return True
        if pause is None:
            return False
        await asyncio.sleep(pause)
    return False


async def truncate_records_wal(engine: AsyncEngine) -> bool:
    """Move the records' write-ahead log into the file and empty it; False if a reader kept it.

    PostgreSQL has no such file of ours: nothing to do there.
    """
    if engine.dialect.name != "sqlite":
        return True

    async def execute(sql: str):
        async with engine.connect() as conn:
            return (await conn.exec_driver_sql(sql)).one()

    done = await _truncate(execute)
    if not done:
        log.warning("records.db-wal could not be emptied: a reader kept it busy")
    return done


async def truncate_checkpoint_wal(conn: aiosqlite.Connection) -> bool:
    """The same for the checkpoint connection (the caller holds the saver's lock)."""

    async def execute(sql: str):
        cursor = await conn.execute(sql)
        return await cursor.fetchone()

    await conn.commit()  # a checkpoint cannot pass an open transaction of its own connection
    done = await _truncate(execute)
    if not done:
        log.warning("checkpoints.db-wal could not be emptied: a reader kept it busy")
    return done
