"""Chat tags: the pseudonym a chat goes by in logs, so operators can follow one chat without
being able to name it.

An unsalted hash of a chat id is undone in seconds by hashing every plausible id, so a tag is
an HMAC-SHA256 of the id keyed with a secret of the installation: INTAKE_LOG_SECRET when set
(give several processes the same one so that their logs agree), else a random key made once
with `secrets` and kept in INTAKE_DATA_DIR/log_secret, readable by its owner only (0600). The
same chat keeps its tag across restarts as long as the secret stays.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import re
import secrets
import stat
from pathlib import Path

from bot.config import Settings

log = logging.getLogger(__name__)

SECRET_FILE = "log_secret"
TAG_HEX = 10  # hex characters of a tag: 40 bits, enough to tell the chats of a log apart
_HEX_KEY = re.compile(r"[0-9a-f]{64}")


class ChatTags:
    """`tags(chat_id)` is the chat's tag: 10 hex characters of a keyed hash of its id."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a chat-tag key needs at least 16 bytes")
        self._key = key

    def __call__(self, chat_id: int) -> str:
        digest = hmac.new(self._key, f"intake-chat:{chat_id}".encode(), hashlib.sha256)
        return digest.hexdigest()[:TAG_HEX]

    def __repr__(self) -> str:  # never shows the key
        return "ChatTags(<key>)"

    @classmethod
    def of(cls, settings: Settings) -> ChatTags:
        """The tags of this installation: keyed with INTAKE_LOG_SECRET, else the data
        directory's secret (made on first use)."""
        if settings.intake_log_secret is not None:
            return cls(settings.intake_log_secret.get_secret_value().encode())
        return cls(installation_secret(settings.intake_data_dir))


def installation_secret(data_dir: Path) -> bytes:
    """The key kept in `data_dir`, made on first use.

    It is written whole to a private temporary file and then linked into place, which fails
    if the file exists: two processes starting at once on one directory end up with one key.
    """
    path = data_dir / SECRET_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        _create(path, secrets.token_hex(32))
    return _read(path)


def _create(path: Path, key_hex: str) -> None:
    temporary = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, key_hex.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)
        log.info("made the secret that keys the chat tags of logs (%s)", path)
    except FileExistsError:  # another process made it first: theirs is the key
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _read(path: Path) -> bytes:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("%s was readable by others (mode %o); made private (0600)", path, mode)
        path.chmod(0o600)
    key_hex = path.read_text(encoding="ascii", errors="replace").strip()
    if not _HEX_KEY.fullmatch(key_hex):
        raise RuntimeError(
            f"{path} is damaged (not 64 hex characters): delete it to make a new one (chat "
            "tags in logs then change) or set INTAKE_LOG_SECRET"
        )
    return bytes.fromhex(key_hex)
