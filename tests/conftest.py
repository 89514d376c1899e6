"""Shared fixtures: the packaged knowledge, the rules brain, a fixed clock, an engine on temp files.

Which tests are `slow` (`bash scripts/test.sh --fast` leaves them out): every test that starts a
process or a server, and the heavy sets. Tests using a fixture that starts a server are marked
here, by fixture; the others carry the mark in their module. A test without the mark that starts
a process or a server fails.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import NoReturn

import pytest

import clock
from bot.config import Settings
from bot.engine import Engine
from graphs.legal.rules_brain import RulesBrain
from knowledge.kb import KnowledgeBase, open_index
from knowledge.loader import Knowledge, default_knowledge

ROOT = Path(__file__).resolve().parent.parent
# Every test runs on the test clock (clock/__init__.py), never the wall clock: a Thursday
# afternoon in Seoul unless INTAKE_TEST_CLOCK is set already (scripts/any_day.sh sets it to each
# of 14 instants). The anchor is fixed here, so the processes the tests start share the clock.
TEST_INSTANT = "2026-11-26T14:00:00+09:00"
_instant = os.environ.get(clock.ENV) or TEST_INSTANT
if "@" not in _instant:
    os.environ[clock.ENV] = clock.setting(datetime.fromisoformat(_instant))
# Fixtures that start a server, directly or through a fixture they use: PostgreSQL, `fake`,
# the fake Bot API or OpenAI-compatible server on 127.0.0.1 of the modules that have one (the
# index tests call theirs `fake_server`), and the real model's llama.cpp server. A test using
# one is `slow`.
SERVER_FIXTURES = frozenset({"postgres_server", "fake", "fake_server", "llm_server"})


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def no_outside_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection to a host other than loopback fails loudly (except the `llm` tier's, when
    INTAKE_LLM_BASE_URL points it at a server elsewhere)."""
    if request.node.get_closest_marker("llm") and os.environ.get("INTAKE_LLM_BASE_URL"):
        return
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


@pytest.fixture(autouse=True)
def fast_tests_start_nothing(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test not marked slow that starts a process or a server fails, saying so: the fast lane
    (`-m "not slow"`) stays free of them."""
    if request.node.get_closest_marker("slow"):
        return

    def refuse(what: str) -> Callable[..., NoReturn]:
        def refused(*_args: object, **_kwargs: object) -> NoReturn:
            raise RuntimeError(f"this test starts {what}: mark it slow (tests/conftest.py)")

        return refused

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("a process"))
    monkeypatch.setattr(socket.socket, "listen", refuse("a server"))


@pytest.fixture(scope="session")
def knowledge() -> Knowledge:
    return default_knowledge()


@pytest.fixture(scope="session")
def brain(knowledge: Knowledge) -> RulesBrain:
    return RulesBrain(knowledge)


@pytest.fixture(scope="session")
def kb(
    knowledge: Knowledge, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> KnowledgeBase:
    """One knowledge index (Chroma + BM25 on disk) for the session's engines: a copy of the index
    built for this knowledge package and these installed packages, kept in pytest's cache
    (`.pytest_cache/`, inside the repository). A full build embeds every document, about 40 s of
    CPU, which each xdist worker paid at every run; `pytest --cache-clear` builds it afresh.
    (Building itself is tested in test_index.py and test_kb_cli.py.)"""
    data_dir = tmp_path_factory.mktemp("kb")
    cache = getattr(pytestconfig, "cache", None)  # None under -p no:cacheprovider
    if cache is not None:
        copy_built_index(cache.mkdir("knowledge-index"), data_dir / "index")
    return KnowledgeBase(knowledge, open_index(data_dir, knowledge))


def copy_built_index(root: Path, target: Path) -> None:
    """Copy the index built for `index_key()` under `root` to `target`, building it first when
    it is not there. One process at a time: the first xdist worker builds, the other waits.

    It is built by a fresh process, as `intake-bot kb build` or a starting bot builds it: a
    test worker's heap holds the words of earlier tests, and Chroma writes its HNSW files with
    bytes of uninitialised memory (on building and again on every open), so a file built here
    could "hold" a person's name that the privacy tests would then find after /forget."""
    key = index_key()
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = root / key
        if not built.is_dir():
            for old in root.iterdir():  # indexes of earlier code or packages
                if old.is_dir():
                    shutil.rmtree(old)
            partial = root / f"{key}.partial"
            subprocess.run([sys.executable, "-c", BUILD_INDEX, str(partial)], cwd=ROOT, check=True)
            partial.rename(built)  # whole, or not there at all
        shutil.copytree(built / "index", target)


BUILD_INDEX = """
import sys
from pathlib import Path
from knowledge.kb import open_index
from knowledge.loader import default_knowledge
open_index(Path(sys.argv[1]), default_knowledge()).close()
"""


def index_key() -> str:
    """What the packaged index is made from: the knowledge package, code and data (it imports
    nothing else of the project, test_layers.py), and every installed distribution's version."""
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted((ROOT / "knowledge").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    for dist in sorted(
        f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
    ):
        digest.update(dist.encode() + b"\0")
    return digest.hexdigest()[:16]


@pytest.fixture
async def driver(tmp_path: Path, knowledge: Knowledge, brain: RulesBrain):
    """One thread of the legal graph run as the engine runs it, on a real SQLite checkpointer
    (`tests.test_graph.Driver`)."""
    from tests.test_graph import Driver

    d = Driver(tmp_path / "checkpoints.db", knowledge, brain)
    await d.open()
    yield d
    await d.close()


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


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory):
    """The `llm` tier's OpenAI-compatible endpoint: the packaged model served by llama.cpp in a
    process of its own on 127.0.0.1 (tests/llm_model.py), started once for the session and killed
    at its end; or, with INTAKE_LLM_BASE_URL set, that server (INTAKE_LLM_MODEL, and
    INTAKE_LLM_API_KEY or OPENAI_API_KEY). Without the `llm` extra the tests are skipped locally,
    with the reason, and fail in CI (CI=true)."""
    from tests.llm_model import LLMEndpoint, LocalServer, unavailable_reason

    if url := os.environ.get("INTAKE_LLM_BASE_URL"):
        yield LLMEndpoint(
            base_url=url,
            model=os.environ.get("INTAKE_LLM_MODEL") or "local",
            api_key=os.environ.get("INTAKE_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY", ""),
        )
        return
    reason = unavailable_reason()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the real model: {reason}")
        pytest.skip(reason)
    with LocalServer(tmp_path_factory.mktemp("llm") / "server.log") as server:
        yield server.endpoint
