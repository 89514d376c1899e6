"""The PostgreSQL test server itself: separate databases, not root, a reason when missing."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg

from tests.postgres import PostgresServer, unavailable_reason


def test_each_test_gets_its_own_database(postgres_server: PostgresServer) -> None:
    first = postgres_server.create_database("harness_a")
    second = postgres_server.create_database("harness_b")
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
    with psycopg.connect(second) as conn:
        found = conn.execute("SELECT to_regclass('only_here')").fetchone()[0]
    assert found is None


def test_the_server_does_not_run_as_root(postgres_server: PostgresServer) -> None:
    with psycopg.connect(postgres_server.url()) as conn:
        data_dir = conn.execute("SELECT current_setting('data_directory')").fetchone()[0]
    pid = int((Path(data_dir) / "postmaster.pid").read_text().split()[0])
    uid = int(
        next(
            line.split()[1]
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("Uid:")
        )
    )
    assert uid != 0


def test_a_machine_without_postgresql_gets_a_reason(tmp_path: Path) -> None:
    assert unavailable_reason(str(tmp_path)) is not None
    assert unavailable_reason() is None or os.environ.get("CI") != "true"
