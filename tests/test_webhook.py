"""Webhook mode: the real bot (`run_bot(webhook=True)`) serving HTTP, replying through the fake
Bot API. Updates are POSTed here as Telegram would, with its secret-token header."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bot.config import Settings
from bot.raw_updates import MAX_BODY, MAX_DEPTH, chat_id_of, nesting_depth, update_type
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


@dataclass
class Served:
    """The bot serving its webhook: where to POST, and its data directory."""

    url: str
    data: Path
    task: asyncio.Task

    async def post(self, client: httpx.AsyncClient, body: bytes | dict) -> httpx.Response:
        """POST a body as Telegram would, with the secret token."""
        content = json.dumps(body).encode() if isinstance(body, dict) else body
        headers = {SECRET_HEADER: SECRET, "Content-Type": "application/json"}
        return await client.post(self.url, content=content, headers=headers)


@contextlib.asynccontextmanager
async def webhook_bot(
    fake: FakeBotApi, tmp_path: Path, kb: KnowledgeBase | None = None
) -> AsyncIterator[Served]:
    """`run_bot(webhook=True)` on a free port until the block ends; with `kb`, it starts on a
    copy of the session's index (as after `intake-bot kb build`) instead of building one."""
    port = free_port()
    data = tmp_path / "data"
    if kb is not None:
        shutil.copytree(kb.index.path, data / "index")
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
    try:
        # The engine opens (on a copy of the index, or building one), then the bot listens.
        await fake.wait_for(lambda: fake.webhook is not None or task.done(), what="hook")
        assert not task.done(), task.exception()
        assert fake.webhook == {"url": settings.intake_webhook_url, "secret_token": SECRET}
        served = Served(f"http://127.0.0.1:{port}/hook/{port}", data, task)
        fake.webhook_targets = [served.url]  # what the fake pushes is POSTed here
        yield served
    finally:
        stop.set()
        await asyncio.wait_for(task, WAIT)


@pytest.mark.slow
async def test_webhook_checks_the_secret_stores_before_answering_and_replies(
    tmp_path: Path, kb: KnowledgeBase, knowledge
) -> None:
    async with FakeBotApi() as fake, webhook_bot(fake, tmp_path, kb) as served:
        url, data = served.url, served.data
        async with httpx.AsyncClient(timeout=10) as client:
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
            await asyncio.sleep(0.3)
        with sqlite3.connect(data / "records.db") as db:
            turns = db.execute("select count(*) from chatturn where input_id = '12'").fetchone()[0]
        assert turns == 1


def nested(depth: int) -> bytes:
    """A valid update whose one extra field is `depth` arrays deep."""
    return b'{"update_id": 30, "extra": ' + b"[" * depth + b"]" * depth + b"}"


# Bodies Telegram would send again and again on a 5xx: each must be refused with 400.
NO_UPDATES = [
    pytest.param(b'{"update_id": true}', id="a bool is no update id"),
    pytest.param(b'{"update_id": false, "message": {}}', id="false is not update 0"),
    pytest.param(b'{"update_id": 1180591620717411303424}', id="2**70"),
    pytest.param(f'{{"update_id": {2**63}}}'.encode(), id="one over int64"),
    pytest.param(f'{{"update_id": {-(2**63) - 1}}}'.encode(), id="one under int64"),
    pytest.param(b'{"update_id": 7.0}', id="a float"),
    pytest.param(b'{"update_id": "7"}', id="a string"),
    pytest.param(b'{"message": {}}', id="no update id"),
    pytest.param(b"[7]", id="an array"),
    pytest.param(b"null", id="null"),
    pytest.param(b'{"update_id": ' + b"9" * 5000 + b"}", id="5000 digits"),
    pytest.param(b"[" * 100_000, id="100000 arrays deep"),
    pytest.param(b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, id="100000 objects deep"),
    pytest.param(nested(100), id="an update with a field 100 deep"),
    pytest.param(b'{"update_id": 8, "x": "\xff"}', id="not UTF-8"),
    pytest.param(b'{"update_id": 9, "pad": "' + b"a" * MAX_BODY + b'"}', id="over 1 MiB"),
    pytest.param(b"[" + b"0," * 2_000_000 + b"0]", id="4 MB"),
]


@pytest.mark.slow
async def test_a_body_that_is_no_update_gets_400_and_is_never_stored(
    tmp_path: Path, kb: KnowledgeBase, knowledge
) -> None:
    async with FakeBotApi() as fake, webhook_bot(fake, tmp_path, kb) as served:
        async with httpx.AsyncClient(timeout=30) as client:
            answers = {}
            for param in NO_UPDATES:
                body, name = param.values[0], param.id
                answers[name] = (await served.post(client, body)).status_code
            assert answers == dict.fromkeys(answers, 400)
            assert inbox(served.data) == {}

            # The edges of the range, and a real update nested as deep as updates go, are taken.
            edge = await served.post(client, {"update_id": 2**63 - 1})
            deep_enough = await served.post(client, nested(40))
            assert (edge.status_code, deep_enough.status_code) == (200, 200)
            # The bot is still up and answers a person.
            ok = await served.post(client, fake.known(update(31, "안녕하세요")))
            assert ok.status_code == 200
            await fake.wait_for(
                lambda: any(
                    knowledge.message("ask_description", "ko") in (m.get("text") or "")
                    for m in fake.messages(CHAT)
                ),
                what="the greeting",
            )
        assert set(inbox(served.data)) == {2**63 - 1, 30, 31}


def files_holding(folder: Path, needles: list[str]) -> dict[str, list[str]]:
    """Every file under `folder` (write-ahead logs included) that holds one of `needles`,
    as UTF-8 or as the ASCII-escaped JSON the inbox stores."""
    forms = {n: [n.encode(), json.dumps(n).strip('"').encode()] for n in needles}
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        content = path.read_bytes()
        hits = [n for n, ways in forms.items() if any(w in content for w in ways)]
        if hits:
            found[str(path.relative_to(folder))] = hits
    return found


def inbox_row(data: Path, update_id: int) -> dict:
    with sqlite3.connect(data / "records.db") as db:
        db.row_factory = sqlite3.Row
        row = db.execute("select * from inboxupdate where update_id = ?", (update_id,)).fetchone()
    return dict(row) if row else {}


@pytest.mark.slow
async def test_an_update_set_aside_keeps_no_words_and_forget_removes_its_row(
    tmp_path: Path, kb: KnowledgeBase, knowledge
) -> None:
    # A name and a phone number no other test uses: the bot runs in this test process, and
    # Chroma rewrites its HNSW files when the engine opens the index, with bytes of
    # uninitialised memory that may hold an earlier test's words (never this test's, which come
    # after; a production process opens its index before any chat).
    name, phone = "탁민준", "010-4821-7736"
    words = f"제 번호는 {phone}이고 빌려간 사람은 {name}이에요"
    async with FakeBotApi() as fake, webhook_bot(fake, tmp_path, kb) as served:
        assert files_holding(served.data, [words, phone, name]) == {}  # opened: nothing of them
        fake.push_text(CHAT, f"작년 3월에 친구 {name}한테 300만원 빌려줬는데 안 갚아요. {phone}")
        question = knowledge.k2.field("LOAN", "repayment_date").question.ko
        await fake.wait_for(
            lambda: any(question in (m.get("text") or "") for m in fake.messages(CHAT)),
            30,
            what="the next question",
        )
        # Updates python-telegram-bot cannot read (a date that is no timestamp), carrying the
        # person's words and phone number: set aside at once, with nothing of what they say.
        person = {"id": CHAT, "is_bot": False, "first_name": name}
        unreadable = fake.push_update(
            {
                "message": {
                    "message_id": 900,
                    "date": "어제",
                    "chat": {"id": CHAT, "type": "private"},
                    "from": person,
                    "text": words,
                }
            }
        )
        no_chat = fake.push_update({"callback_query": {"id": "1", "from": {"id": CHAT}}})
        await fake.wait_for(
            lambda: inbox_row(served.data, no_chat).get("processed_at"), what="set aside"
        )
        row = inbox_row(served.data, unreadable)
        assert row["failure"].startswith("unreadable")
        assert (row["payload_json"], row["chat_id"], row["update_type"]) == (
            "{}",
            CHAT,
            "message",
        )
        assert row["received_at"] and row["processed_at"]
        other = inbox_row(served.data, no_chat)  # the sender's id, the chat of a private press
        assert (other["payload_json"], other["chat_id"], other["update_type"]) == (
            "{}",
            CHAT,
            "callback_query",
        )
        assert files_holding(served.data, [words, phone, name])  # the recorded intake has them

        fake.push_command(CHAT, "forget")
        confirm = knowledge.message("forget_confirm", "ko")
        await fake.wait_for(
            lambda: any(confirm in (m.get("text") or "") for m in fake.messages(CHAT)),
            what="the confirmation",
        )
        asked = next(m for m in fake.messages(CHAT) if confirm in (m.get("text") or ""))
        fake.push_callback(CHAT, "cmd:forget", message_id=asked["message_id"])
        done = knowledge.message("forgotten", "ko")
        await fake.wait_for(
            lambda: any(done in (m.get("text") or "") for m in fake.messages(CHAT)),
            what="forgotten",
        )
        await asyncio.sleep(0.3)  # the press's inbox row is marked after the reply
        # While the bot runs: no row of the chat, set-aside ones included, and no file with
        # the person's words, name or phone number.
        assert inbox_row(served.data, unreadable) == {}
        assert inbox_row(served.data, no_chat) == {}
        assert files_holding(served.data, [words, phone, name]) == {}


@pytest.mark.parametrize(
    ("raw", "kind", "chat"),
    [
        pytest.param({"update_id": 1, "message": {"chat": {"id": -100123}}}, "message", -100123),
        pytest.param(
            {"update_id": 2, "callback_query": {"from": {"id": 7}, "message": {"chat": {"id": 8}}}},
            "callback_query",
            8,
            id="a press: the chat of its message",
        ),
        pytest.param({"update_id": 3, "callback_query": {"from": {"id": 7}}}, "callback_query", 7),
        pytest.param(
            {"update_id": 4, "my_chat_member": {"chat": {"id": True}}}, "my_chat_member", None
        ),
        pytest.param({"update_id": 5, "message": {"chat": {"id": 2**64}}}, "message", None),
        pytest.param({"update_id": 6, "message": "oops"}, "message", None),
        pytest.param({"update_id": 7, "brand_new_kind": {"user": {"id": 9}}}, "other", 9),
        pytest.param({"update_id": 8}, None, None),
    ],
)
def test_what_an_update_set_aside_keeps_is_read_from_its_raw_json(
    raw: dict, kind: str | None, chat: int | None
) -> None:
    assert (update_type(raw), chat_id_of(raw)) == (kind, chat)


def test_nesting_is_counted_without_recursion() -> None:
    deep: list = []
    for _ in range(100_000):  # far past the interpreter's recursion limit
        deep = [deep]
    assert nesting_depth(deep) == MAX_DEPTH + 1  # counting stops past the limit
    assert nesting_depth({"a": [1, {"b": []}]}) == 4 and nesting_depth(5) == 0
