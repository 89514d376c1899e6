"""Chat tags in logs: a keyed hash with the installation's secret, stable across restarts.

The secret is made once in a fresh data directory (0600, one key even when processes start at
once) or taken from INTAKE_LOG_SECRET; real files, the real engine and its log lines.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.chat_tags import SECRET_FILE, ChatTags, installation_secret
from bot.config import Settings
from bot.engine import Engine, Inbound
from tests.support import NOW

CHAT = 5_123_456_789


def unsalted(chat_id: int) -> str:
    """The tag as it was: anyone could compute it for every plausible chat id."""
    return hashlib.sha256(f"intake-chat:{chat_id}".encode()).hexdigest()[:10]


def settings_in(data: Path, **values: object) -> Settings:
    return Settings(intake_data_dir=data, _env_file=None, **values)


async def test_a_chat_keeps_its_tag_across_restarts_of_one_installation(
    tmp_path: Path, knowledge, brain, kb
) -> None:
    settings = settings_in(tmp_path / "data")
    tags = []
    for _ in range(2):  # start, stop, start again on the same data directory
        engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
        tags.append(engine.chat_tag(CHAT))
        await engine.close()
    assert tags[0] == tags[1] and len(tags[0]) == 10
    key = bytes.fromhex((tmp_path / "data" / SECRET_FILE).read_text().strip())
    keyed = hmac.new(key, f"intake-chat:{CHAT}".encode(), hashlib.sha256).hexdigest()[:10]
    assert tags[0] == keyed != unsalted(CHAT)
    # Another installation (another secret) tags the same chat differently.
    assert ChatTags.of(settings_in(tmp_path / "other"))(CHAT) != tags[0]


def test_the_secret_file_is_made_once_private_whatever_the_umask(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"  # not there yet
    old_umask = os.umask(0)  # files would be world-readable by default
    try:
        key = installation_secret(data)
    finally:
        os.umask(old_umask)
    path = data / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(key) == 32 and installation_secret(data) == key
    assert [p.name for p in data.iterdir()] == [SECRET_FILE]  # no temporary file left


def test_processes_starting_at_once_agree_on_one_secret(tmp_path: Path) -> None:
    data = tmp_path / "data"
    start = threading.Barrier(8)
    keys: list[bytes] = []

    def make() -> None:
        start.wait()
        keys.append(installation_secret(data))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 8 and len(set(keys)) == 1
    assert [p.name for p in data.iterdir()] == [SECRET_FILE]


def test_a_secret_file_readable_by_others_is_made_private_and_a_damaged_one_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    key = installation_secret(data)
    path = data / SECRET_FILE
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="bot.chat_tags"):
        assert installation_secret(data) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "made private" in caplog.text and path.read_text().strip() not in caplog.text

    path.write_text("not a key\n")
    with pytest.raises(RuntimeError, match="damaged"):
        installation_secret(data)


def test_intake_log_secret_keys_the_tags_and_no_file_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "a-long-random-string-set-by-the-operator"
    monkeypatch.setenv("INTAKE_LOG_SECRET", secret)
    first, second = settings_in(tmp_path / "one"), settings_in(tmp_path / "two")
    tag = ChatTags.of(first)(CHAT)
    expected = hmac.new(secret.encode(), f"intake-chat:{CHAT}".encode(), hashlib.sha256)
    assert tag == expected.hexdigest()[:10]
    assert ChatTags.of(second)(CHAT) == tag  # processes given one secret write one tag
    assert not (tmp_path / "one").exists() and not (tmp_path / "two").exists()
    assert secret not in repr(first) and secret not in repr(ChatTags.of(first))

    monkeypatch.setenv("INTAKE_LOG_SECRET", "")  # set but empty: as if unset
    assert settings_in(tmp_path / "three").intake_log_secret is None
    monkeypatch.setenv("INTAKE_LOG_SECRET", "short")
    with pytest.raises(ValidationError, match="at least 16"):
        settings_in(tmp_path / "four")


async def test_the_engine_logs_the_keyed_tag_and_never_the_chat_id(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        await engine.handle(Inbound(chat_id=CHAT, kind="text", text="안녕하세요", at=NOW))
    lines = [r.getMessage() for r in caplog.records if "chat=" in r.getMessage()]
    assert lines and all(f"chat={engine.chat_tag(CHAT)}" in line for line in lines)
    assert str(CHAT) not in caplog.text and unsalted(CHAT) not in caplog.text
