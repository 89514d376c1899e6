"""Database engine factory: SQLite files under the data directory, WAL and a busy timeout."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers every table on SQLModel.metadata)

BUSY_TIMEOUT_MS = 5000


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
    cursor.close()


async def create_records_engine(data_dir: Path) -> AsyncEngine:
    """Open (and create if needed) the records database; one engine per process."""
    data_dir.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(f"sqlite+aiosqlite:///{records_path(data_dir)}")
    event.listen(engine.sync_engine, "connect", _set_pragmas)
    async with engine.begin() as conn:
        await conn.run_sync(SQLModel.metadata.create_all)
    return engine


async def open_checkpoint_connection(data_dir: Path) -> aiosqlite.Connection:
    """One aiosqlite connection for the process's single AsyncSqliteSaver (WAL + busy timeout)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(str(checkpoints_path(data_dir)))
    # The saver sets WAL itself; the busy timeout is ours to set.
    await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA synchronous=NORMAL")
    return conn
