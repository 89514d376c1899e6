"""Shared fixtures: the packaged knowledge, the rules brain, a fixed clock, an engine on temp files."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.engine import Engine
from graphs.legal.rules_brain import RulesBrain
from knowledge.kb import KnowledgeBase, open_index
from knowledge.loader import Knowledge, default_knowledge


@pytest.fixture(autouse=True)
def no_outside_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection to a host other than loopback fails loudly."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if (
            isinstance(host, str)
            and host not in ("127.0.0.1", "localhost", "::1")
            and self.family != socket.AF_UNIX
        ):
            raise RuntimeError(f"test tried to reach {host!r}: the network is off in tests")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="session")
def knowledge() -> Knowledge:
    return default_knowledge()


@pytest.fixture(scope="session")
def brain(knowledge: Knowledge) -> RulesBrain:
    return RulesBrain(knowledge)


@pytest.fixture(scope="session")
def kb(knowledge: Knowledge, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """One knowledge index (Chroma + BM25 on disk) for the session's engines."""
    return KnowledgeBase(knowledge, open_index(tmp_path_factory.mktemp("kb"), knowledge))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(intake_data_dir=tmp_path / "data", admin_ids="777", _env_file=None)


@pytest.fixture
async def engine(
    settings: Settings, knowledge: Knowledge, brain: RulesBrain, kb: KnowledgeBase
) -> AsyncIterator[Engine]:
    engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    yield engine
    await engine.close()


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for the session (tests/postgres.py). Without PostgreSQL the
    tests that need it are skipped locally, with the reason, and fail in CI (CI=true)."""
    from tests.postgres import PostgresServer, unavailable_reason

    reason = unavailable_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs PostgreSQL: {reason}")
        pytest.skip(reason)
    with PostgresServer() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh database of the session's server, per test."""
    return postgres_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
