"""Migrations when several processes start at once on a fresh SQLite data directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from db.engine import records_path
from db.migrate import head

pytestmark = pytest.mark.slow  # starts processes

OPEN = (
    "import asyncio, sys; from pathlib import Path; "
    "from db.engine import create_records_engine, dispose_records_engine\n"
    "async def main():\n"
    "    engine = await create_records_engine(Path(sys.argv[1]))\n"
    "    await dispose_records_engine(engine)\n"
    "asyncio.run(main())"
)


def test_processes_starting_together_on_a_fresh_directory_all_open_it(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    for round_ in range(3):
        data = tmp_path / f"data{round_}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN, str(data)],
                cwd=root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
        engine = create_engine(f"sqlite:///{records_path(data)}")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head()
        engine.dispose()
