"""Webhook mode: the real bot (`run_bot(webhook=True)`) serving HTTP, replying through the fake
Bot API. Updates are POSTed here as Telegram would, with its secret-token header."""

from __future__ import annotations

import asyncio
import shutil
import socket
import sqlite3
from pathlib import Path

import httpx
import pytest

from bot.config import Settings
from bot.telegram_app import run_bot
from bot.webhook import SECRET_HEADER
from knowledge.kb import KnowledgeBase
from tests.fakes.bot_api import FakeBotApi
from tests.support import WAIT

SECRET = "s3cret_token-1"
CHAT = 6001


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def update(update_id: int, text: str, chat: int = CHAT) -> dict:
    user = {"id": chat, "is_bot": False, "first_name": "T", "language_code": "ko"}
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 1_790_000_000,
            "from": user,
            "chat": {"id": chat, "type": "private", "first_name": "T"},
            "text": text,
        },
    }


def inbox(data: Path) -> dict[int, tuple]:
    path = data / "records.db"
    if not path.exists():
        return {}
    with sqlite3.connect(path) as db:
        rows = db.execute("select update_id, processed_at, failure from inboxupdate").fetchall()
    return {row[0]: row[1:] for row in rows}


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.slow
async def test_webhook_checks_the_secret_stores_before_answering_and_replies(
    tmp_path: Path, knowledge, kb: KnowledgeBase
) -> None:
    port = free_port()
    data = tmp_path / "data"
    shutil.copytree(kb.index.path, data / "index")  # as after `intake-bot kb build`
    async with FakeBotApi() as fake:
        settings = Settings(
            intake_data_dir=data,
            telegram_bot_token=fake.token,
            telegram_api_url=f"{fake.url}/bot",
            intake_webhook_url=f"https://bot.example.org/hook/{port}",
            intake_webhook_listen="127.0.0.1",
            intake_webhook_port=port,
            intake_webhook_secret=SECRET,
            _env_file=None,
        )
        stop = asyncio.Event()
        task = asyncio.create_task(run_bot(settings, stop, webhook=True))
        url = f"http://127.0.0.1:{port}/hook/{port}"
        try:
            async with httpx.AsyncClient(timeout=WAIT) as client:
                # The engine opens, then the bot listens and sets its webhook.
                await fake.wait_for(lambda: fake.webhook is not None or task.done(), what="hook")
                assert not task.done(), task.exception()
                assert fake.webhook == {"url": settings.intake_webhook_url, "secret_token": SECRET}

                # No secret, or a wrong one: refused, nothing stored.
                bad = await client.post(url, json=update(10, "안녕하세요"))
                assert bad.status_code == 403
                wrong = await client.post(
                    url, json=update(10, "안녕하세요"), headers={SECRET_HEADER: "nope"}
                )
                assert wrong.status_code == 403
                assert 10 not in inbox(data)
                # Not an update: 400.
                junk = await client.post(url, content=b"{]", headers={SECRET_HEADER: SECRET})
                assert junk.status_code == 400

                # A real update: stored by the time the answer comes, then replied to.
                ok = await client.post(
                    url, json=fake.known(update(11, "안녕하세요")), headers={SECRET_HEADER: SECRET}
                )
                assert ok.status_code == 200
                assert 11 in inbox(data)
                await fake.wait_for(
                    lambda: any(
                        knowledge.message("ask_description", "ko") in (m.get("text") or "")
                        for m in fake.messages(CHAT)
                    ),
                    what="the greeting",
                )
                # The same update delivered twice: processed once.
                description = "작년 3월에 친구한테 300만원 빌려줬는데 안 갚아요"
                for _ in range(2):
                    again = await client.post(
                        url, json=update(12, description), headers={SECRET_HEADER: SECRET}
                    )
                    assert again.status_code == 200
                await fake.wait_for(
                    lambda: (inbox(data).get(12) or (None,))[0] is not None, what="processed"
                )
                await asyncio.sleep(0.3)  # time for a second turn, were the duplicate taken
            with sqlite3.connect(data / "records.db") as db:
                turns = db.execute(
                    "select count(*) from chatturn where input_id = '12'"
                ).fetchone()[0]
            assert turns == 1
        finally:
            stop.set()
            await asyncio.wait_for(task, WAIT)
