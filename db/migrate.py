"""Schema migrations (Alembic, db/migrations): run at start-up and by `intake-bot migrate`.

A database made before migrations existed (tables made by `create_all`, columns added by hand)
is first brought to the first migration's schema the way it always was, then stamped with it,
so the migrations after it apply to it like to any other. Only one of several starting processes
migrates at a time: on PostgreSQL under an advisory lock, on SQLite under a lock file beside the
database (two processes starting on a fresh data directory both created the tables).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from filelock import FileLock
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers every table on SQLModel.metadata)

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
FIRST = "0001"  # the schema as it was when migrations began
MIGRATION_LOCK = 0x1A7A_0000_0000  # advisory lock key held while migrating (PostgreSQL)
# Columns added by hand before migrations existed: table -> [(column, SQL type)].
PRE_MIGRATION_COLUMNS = {
    "inboxupdate": [("failure", "VARCHAR")],
    "chatturn": [("input_id", "VARCHAR")],
    "casefact": [("quote", "VARCHAR"), ("said_at", "VARCHAR"), ("confirmed", "BOOLEAN")],
}


def config(connection: Connection | None = None) -> Config:
    """The Alembic configuration of the project (no ini file: the scripts live in db/)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    """The newest migration."""
    return ScriptDirectory.from_config(config()).get_current_head()


def current(connection: Connection) -> str | None:
    """The migration a database is at (None: none applied)."""
    return MigrationContext.configure(connection).get_current_revision()


def _bring_legacy_to_first(connection: Connection) -> None:
    """A database made before migrations: complete it the old way, then stamp FIRST."""
    tables = set(inspect(connection).get_table_names())
    if "alembic_version" in tables or "chatsession" not in tables and "inboxupdate" not in tables:
        return
    log.warning("records database predates migrations; bringing it to %s", FIRST)
    first_tables = [t for name, t in SQLModel.metadata.tables.items() if name in _FIRST_TABLES]
    SQLModel.metadata.create_all(connection, tables=first_tables)
    for table, columns in PRE_MIGRATION_COLUMNS.items():
        have = {c["name"] for c in inspect(connection).get_columns(table)}
        for name, sql_type in columns:
            if name not in have:
                connection.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")
    command.stamp(config(connection), FIRST)


_FIRST_TABLES = (
    "chatsession casemaster casefact caseparty caseevidence casemissingfield casesummary "
    "statetransition chatturn inboxupdate chatoffer safetyalert chatpreference"
).split()


def _upgrade(connection: Connection, revision: str) -> None:
    _bring_legacy_to_first(connection)
    before = current(connection)
    command.upgrade(config(connection), revision)
    after = current(connection)
    if before != after:
        log.info("records database migrated from %s to %s", before or "empty", after)


async def migrate(engine: AsyncEngine, revision: str = "head") -> str | None:
    """Apply the pending migrations up to `revision`; return where the database is now."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return await _migrate(engine, revision)
    lock = FileLock(f"{database}.migrate.lock", thread_local=False)
    await asyncio.to_thread(lock.acquire)
    try:
        return await _migrate(engine, revision)
    finally:
        lock.release()


async def _migrate(engine: AsyncEngine, revision: str) -> str | None:
    async with engine.begin() as conn:
        if engine.dialect.name == "postgresql":  # released at the end of the transaction
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
        await conn.run_sync(_upgrade, revision)
        return await conn.run_sync(current)
