"""Database engine factory: SQLite files under the data directory, WAL and a busy timeout.

Both files delete for real: `secure_delete` overwrites deleted rows with zeros, and
`truncate_wal` folds the write-ahead log into the file and empties it, so what /forget deleted
is gone from the disk while the process runs.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import aiosqlite
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers every table on SQLModel.metadata)

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
# Columns added after a table was first created (create_all makes missing tables, never
# missing columns): table -> [(column, SQL type)].
ADDED_COLUMNS = {
    "inboxupdate": [("failure", "VARCHAR")],
    "chatturn": [("input_id", "VARCHAR")],
    "casefact": [("quote", "VARCHAR"), ("said_at", "VARCHAR"), ("confirmed", "BOOLEAN")],
}
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


def _add_missing_columns(connection) -> None:
    """Add the ADDED_COLUMNS a database made by an earlier version lacks; its rows are kept."""
    for table, columns in ADDED_COLUMNS.items():
        have = {row[1] for row in connection.exec_driver_sql(f"PRAGMA table_info({table})")}
        for name, sql_type in columns:
            if name not in have:
                connection.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")


async def create_records_engine(data_dir: Path) -> AsyncEngine:
    """Open (and create if needed) the records database; one engine per process."""
    data_dir.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(f"sqlite+aiosqlite:///{records_path(data_dir)}")
    event.listen(engine.sync_engine, "connect", _set_pragmas)
    async with engine.begin() as conn:
        await conn.run_sync(SQLModel.metadata.create_all)
        await conn.run_sync(_add_missing_columns)
    return engine


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
    """Move the records' write-ahead log into the file and empty it; False if a reader kept it."""

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
