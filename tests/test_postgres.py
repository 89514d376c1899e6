"""The same engine on PostgreSQL: records through SQLAlchemy + psycopg 3, checkpoints through
AsyncPostgresSaver, the schema through the migrations; chat locks across processes.

Runs against a real server started by the `postgres_url` fixture (tests/postgres.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import create_engine, inspect, text
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from bot.config import Settings
from bot.engine import Engine, Inbound
from db import repo
from db.engine import create_records_engine
from db.locks import ChatLocks
from db.migrate import config, head
from db.models import CaseFact, ChatSession
from knowledge.kb import KnowledgeBase
from tests.support import WAIT

NOW = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
USER = 8_123_456_789  # past 2**31, as Telegram user ids are now
GROUPISH = -1_001_234_567_890


def said(chat: int, value: str, kind: str = "text", **more) -> Inbound:
    return Inbound(chat_id=chat, kind=kind, text=value, user_id=chat, at=NOW, **more)


@pytest.fixture
async def pg_engine(postgres_url: str, tmp_path: Path, knowledge, brain, kb):
    settings = Settings(
        intake_data_dir=tmp_path, intake_database_url=postgres_url, admin_ids="777", _env_file=None
    )
    engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    yield engine
    await engine.close()


async def test_an_intake_runs_to_its_summary_on_postgres(pg_engine: Engine, postgres_url: str):
    engine = pg_engine
    assert engine.records.dialect.name == "postgresql" and engine.chat_locks.shared
    first = await engine.handle(
        said(USER, "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요")
    )
    assert first.field == "repayment_date"
    # Another process may move the thread on: where it stands is always read from PostgreSQL.
    assert not engine.legal.standings
    await engine.handle(said(USER, "올해 6월", input_id="2"))
    done = await engine.handle(
        Inbound(chat_id=USER, kind="choice", data="a:evidence:no", user_id=USER, at=NOW)
    )
    assert done.state == "COMPLETED"
    async with AsyncSession(engine.records) as db:
        session = (await db.exec(select(ChatSession))).one()
        facts = {
            f.key: json.loads(f.value_json)
            for f in (await db.exec(select(CaseFact).where(CaseFact.session_id == session.id)))
        }
    assert session.chat_id == USER and session.status == "completed"
    assert facts["amount"] == 3_000_000 and facts["evidence"] is False
    summary = await repo.get_summary(engine=engine.records, session_id=session.id)
    assert summary is not None and "3,000,000" in summary.summary_text
    with psycopg.connect(postgres_url) as conn:  # the finished thread keeps one checkpoint
        count = conn.execute(
            "select count(*) from checkpoints where thread_id = %s", (session.id,)
        ).fetchone()[0]
    assert count == 1

    # /forget: records and checkpoint threads gone.
    await engine.handle(Inbound(chat_id=USER, kind="command", command="forget", user_id=USER))
    await engine.handle(Inbound(chat_id=USER, kind="choice", data="cmd:forget", user_id=USER))
    with psycopg.connect(postgres_url) as conn:
        left = {
            table: conn.execute(f"select count(*) from {table}").fetchone()[0]
            for table in ("chatsession", "casefact", "chatturn", "checkpoints", "checkpoint_writes")
        }
    assert left == dict.fromkeys(left, 0)


async def test_the_medical_assistant_on_postgres(pg_engine: Engine, postgres_url: str):
    """A medical profile, its alert, its export row and its deletion on PostgreSQL."""
    engine, chat = pg_engine, USER + 1
    await engine.handle(
        Inbound(
            chat_id=chat, kind="command", command="start", args=("medical",), user_id=chat, at=NOW
        )
    )
    first = await engine.handle(said(chat, "고혈압이 있고 암로디핀 먹어요. 혈압 150/95 나왔어요"))
    assert first.state == "MEDICAL" and "혈압 150/95" in first.messages[0]["text"]
    danger = await engine.handle(said(chat, "가슴이 너무 아프고 식은땀이 나요", input_id="m2"))
    assert [a.code for a in danger.alerts] == ["CHEST_PAIN"]
    export = await engine.handle(
        Inbound(chat_id=777, kind="command", command="export", args=("json",), user_id=777, at=NOW)
    )
    row = next(r for r in json.loads(export.documents[0].content) if r["chat_id"] == chat)
    assert row["profile"]["vitals"] == {"bp_sys": 150, "bp_dia": 95}
    assert [m["name"] for m in row["profile"]["medications"]] == ["amlodipine"]
    assert [a["code"] for a in row["alerts"]] == ["CHEST_PAIN"]
    await engine.handle(
        Inbound(chat_id=chat, kind="command", command="forget", user_id=chat, at=NOW)
    )
    await engine.handle(
        Inbound(chat_id=chat, kind="choice", data="cmd:forget", user_id=chat, at=NOW)
    )
    async with await psycopg.AsyncConnection.connect(postgres_url) as conn:
        for table in ("medicalprofile", "safetyalert"):
            found = await (
                await conn.execute(f"select count(*) from {table} where chat_id = %s", (chat,))
            ).fetchone()
            assert found[0] == 0, table
        kept = await (
            await conn.execute(
                "select lang, domain from chatpreference where chat_id = %s", (chat,)
            )
        ).fetchall()
        assert kept == [("ko", "medical")]  # only the chat's settings stay
        left = await (await conn.execute("select count(*) from profileitem")).fetchone()
        assert left[0] == 0


async def test_ids_past_32_bits_are_stored(pg_engine: Engine) -> None:
    reply = await pg_engine.handle(said(GROUPISH, "안녕하세요", input_id="3000000001"))
    assert reply.messages
    await repo.inbox_add(
        engine=pg_engine.records, update_id=3_000_000_001, chat_id=GROUPISH, payload={}
    )
    assert await repo.inbox_pending(engine=pg_engine.records)


def _upgrade_to(url: str, revision: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        from alembic import command

        command.upgrade(config(conn), revision)
    engine.dispose()


def _database_urls(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[str | None, str]:
    """(the product's database URL, None for its default SQLite file; a synchronous URL of the
    same database for Alembic and raw SQL)."""
    if backend == "sqlite":
        return None, f"sqlite:///{tmp_path / 'records.db'}"
    url = request.getfixturevalue("postgres_url")
    return url, "postgresql+psycopg:" + url.split(":", 1)[1]


@pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)],  # starts a server
)
async def test_a_database_of_the_previous_migration_is_upgraded_with_nothing_lost(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url, sync_url = _database_urls(backend, request, tmp_path)
    _upgrade_to(sync_url, "0001")
    sync = create_engine(sync_url)
    with sync.begin() as conn:
        conn.execute(
            text(
                "insert into chatsession (id, chat_id, user_id, domain, status, current_state,"
                " completion_rate, started_at, updated_at) values ('s1', 42, 7, 'legal', 'open',"
                " 'FACT_COLLECTION', 0.5, '2026-11-01', '2026-11-01')"
            )
        )
        conn.execute(
            text(
                "insert into casefact (session_id, key, value_json, status, updated_at)"
                " values ('s1', 'amount', '3000000', 'answered', '2026-11-01')"
            )
        )
        conn.execute(text("insert into chatpreference (chat_id, lang) values (42, 'en')"))
    sync.dispose()

    records = await create_records_engine(tmp_path, url)  # start-up: pending migrations run
    try:
        async with records.connect() as conn:
            version = (await conn.execute(text("select version_num from alembic_version"))).one()
        assert version[0] == head()
        session = await repo.open_session(engine=records, chat_id=42)
        assert session is not None and session.completion_rate == 0.5
        assert await repo.get_lang(engine=records, chat_id=42) == "en"
        record = await repo.case_record(engine=records, session=session)
        assert record["facts"] == {"amount": 3_000_000}
        # What the new migration brought: ids past 32 bits fit.
        await repo.set_lang(engine=records, chat_id=GROUPISH, lang="ko")
        assert await repo.get_lang(engine=records, chat_id=GROUPISH) == "ko"
        # 0006: an old chat's language was never picked with /lang; picking it is remembered
        assert not (await repo.chat_view(engine=records, chat_id=42)).lang_chosen
        await repo.set_lang(engine=records, chat_id=42, lang="ko", chosen=True)
        view = await repo.chat_view(engine=records, chat_id=42)
        assert view.lang == "ko" and view.lang_chosen
        # 0008: an old session has spent no model tokens, and new ones are added to it
        await repo.write_turn(engine=records, chat_id=42, tokens=("s1", 120, 30))
        session = await repo.open_session(engine=records, chat_id=42)
        assert (session.llm_prompt_tokens, session.llm_completion_tokens) == (120, 30)
    finally:
        await records.dispose()


@pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)],  # starts a server
)
async def test_0007_drops_the_words_of_updates_set_aside_and_gives_them_their_chat(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url, sync_url = _database_urls(backend, request, tmp_path)
    _upgrade_to(sync_url, "0006")
    words = "제 번호는 010-9876-5432예요"
    unreadable = {"update_id": 1, "message": {"date": "x", "chat": {"id": 42}, "text": words}}
    pending = {"update_id": 3, "callback_query": {"from": {"id": 43}, "data": "a:x"}}
    sync = create_engine(sync_url)
    with sync.begin() as conn:
        insert = text(
            "insert into inboxupdate (update_id, chat_id, payload_json, received_at,"
            " processed_at, failure) values (:id, :chat, :payload, '2026-11-01', :done, :why)"
        )
        for update_id, chat, payload, done, why in [
            (1, None, unreadable, "2026-11-01", "unreadable: TypeError"),  # no chat column
            (2, 42, {"update_id": 2, "message": {"text": words}}, "2026-11-01", "KeyError"),
            (3, 43, pending, None, None),
            (4, 42, {}, "2026-11-01", None),  # processed: its payload went already
        ]:
            values = {"id": update_id, "chat": chat, "payload": json.dumps(payload)}
            conn.execute(insert, {**values, "done": done, "why": why})
    sync.dispose()

    records = await create_records_engine(tmp_path, url)  # start-up: 0007 runs
    try:
        async with records.connect() as conn:
            rows = await conn.execute(
                text("select update_id, chat_id, update_type, payload_json from inboxupdate")
            )
            found = {r[0]: r[1:] for r in rows}
        assert found == {
            1: (42, "message", "{}"),
            2: (42, "message", "{}"),
            3: (43, "callback_query", json.dumps(pending)),  # pending: still to be handled
            4: (42, None, "{}"),
        }
        await repo.forget_chat(engine=records, chat_id=42)
        assert [r.update_id for r in await repo.inbox_pending(engine=records)] == [3]
        assert await repo.inbox_failed(engine=records) == []
    finally:
        await records.dispose()


@pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)],  # starts a server
)
async def test_0009_the_research_cache_table_keeps_answers_for_their_time(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url, sync_url = _database_urls(backend, request, tmp_path)
    _upgrade_to(sync_url, "0008")
    records = await create_records_engine(tmp_path, url)  # start-up: 0009 runs
    now = datetime(2026, 11, 27, 1, 0, tzinfo=UTC)
    cache = repo.RecordsCache(records, clock=lambda: now)
    try:
        key = "GET https://clinicaltrials.gov/api/v2/studies?query.cond=%EB%8B%B9%EB%87%A8"
        await cache.put(key, '{"studies": []}', 60)
        await cache.put(key, '{"studies": ["새 답"]}', 3600)  # an upsert, on either database
        await cache.put("expiring", "{}", 30)
        assert await cache.get(key) == '{"studies": ["새 답"]}'
        now += timedelta(seconds=31)
        assert await cache.get("expiring") is None
        assert await cache.prune() == 1
        assert await cache.get(key) == '{"studies": ["새 답"]}'
        now += timedelta(seconds=3600)
        assert await cache.get(key) is None
    finally:
        await records.dispose()
    engine = create_engine(sync_url)
    with engine.begin() as conn:
        from alembic import command

        command.downgrade(config(conn), "0008")  # and back: the table goes
        version = conn.execute(text("select version_num from alembic_version")).scalar()
        assert version == "0008"
    assert "researchresponse" not in inspect(engine).get_table_names()
    engine.dispose()


async def test_a_chat_lock_holds_across_engines_and_only_for_its_chat(postgres_url: str, tmp_path):
    first = await create_records_engine(tmp_path, postgres_url)
    second = await create_records_engine(tmp_path, postgres_url)
    a, b = ChatLocks(first), ChatLocks(second)
    try:
        async with a.hold(1):
            other_chat = asyncio.create_task(_hold(b, 2))
            same_chat = asyncio.create_task(_hold(b, 1))
            await asyncio.wait_for(other_chat, WAIT)  # another chat: not held up
            await asyncio.sleep(0.5)
            assert not same_chat.done()  # the same chat: waits for the other "process"
        await asyncio.wait_for(same_chat, WAIT)
    finally:
        await first.dispose()
        await second.dispose()


async def _hold(locks: ChatLocks, chat: int) -> None:
    async with locks.hold(chat):
        pass


HOLDER = """
import asyncio, sys
from pathlib import Path
from db.engine import create_records_engine
from db.locks import ChatLocks

async def main():
    records = await create_records_engine(Path(sys.argv[2]), sys.argv[1])
    async with ChatLocks(records).hold(77):
        print("held", flush=True)
        await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_process_killed_mid_turn_releases_its_chat(postgres_url: str, tmp_path: Path):
    root = Path(__file__).resolve().parent.parent
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, postgres_url, str(tmp_path)],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    records = await create_records_engine(tmp_path, postgres_url)
    try:
        held = await asyncio.wait_for(asyncio.to_thread(holder.stdout.readline), WAIT)
        assert held == "held\n"
        waiting = asyncio.create_task(_hold(ChatLocks(records), 77))
        await asyncio.sleep(0.5)
        assert not waiting.done()  # held by the other process
        holder.send_signal(signal.SIGKILL)
        await asyncio.wait_for(waiting, WAIT)  # its connection died: the chat is free
    finally:
        holder.kill()
        holder.wait()
        await records.dispose()


# --- several bot processes behind one webhook URL, on one database ---------------------------

INTAKE_BOT = Path(sys.executable).parent / "intake-bot"
SECRET = "two-processes"
CHAT = 7007


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _message(update_id: int, text_: str) -> dict:
    user = {"id": CHAT, "is_bot": False, "first_name": "T", "language_code": "ko"}
    chat = {"id": CHAT, "type": "private", "first_name": "T"}
    return {
        "update_id": update_id,
        "message": {
            "message_id": 10_000 * update_id,  # clear of the ids of the bot's own messages
            "date": 1_790_000_000 + update_id,
            "from": user,
            "chat": chat,
            "text": text_,
        },
    }


def _webhook_process(
    fake, kb: KnowledgeBase, data_dir: Path, url: str, port: int, **extra: str
) -> subprocess.Popen:
    """`intake-bot run --webhook` on a copy of the session's index (start-up only checks it)."""
    env = {
        **os.environ,
        "INTAKE_DATA_DIR": str(data_dir),
        "INTAKE_DATABASE_URL": url,
        "TELEGRAM_BOT_TOKEN": fake.token,
        "TELEGRAM_API_URL": f"{fake.url}/bot",
        "INTAKE_WEBHOOK_URL": "https://bot.example.org/telegram",
        "INTAKE_WEBHOOK_LISTEN": "127.0.0.1",
        "INTAKE_WEBHOOK_PORT": str(port),
        "INTAKE_WEBHOOK_SECRET": SECRET,
        "NO_PROXY": "127.0.0.1,localhost",
        **extra,
    }
    shutil.copytree(kb.index.path, data_dir / "index")
    with (data_dir / "bot.log").open("ab") as log:
        return subprocess.Popen(
            [str(INTAKE_BOT), "run", "--webhook"], env=env, stdout=subprocess.DEVNULL, stderr=log
        )


@pytest.mark.slow
async def test_two_processes_keep_a_chat_in_order_and_finish_what_a_killed_one_left(
    postgres_url: str, tmp_path: Path, knowledge, kb: KnowledgeBase
) -> None:
    """A chat's messages reach two webhook processes on one database. The first process dies
    (SIGKILL, INTAKE_FAILPOINT) mid-turn on an update it had acknowledged; the chat's next
    message goes to the second, which finishes the left update first, then its own: every
    answer recorded once, in order, and the intake completes."""
    import httpx

    from tests.fakes.bot_api import FakeBotApi

    ports = [_free_port(), _free_port()]
    async with FakeBotApi() as fake:
        first = _webhook_process(
            fake, kb, tmp_path / "a", postgres_url, ports[0], INTAKE_FAILPOINT="after_graph:2"
        )
        second = _webhook_process(fake, kb, tmp_path / "b", postgres_url, ports[1])
        try:
            async with httpx.AsyncClient(timeout=WAIT) as client:

                async def post(port: int, update: dict) -> int:
                    """POST once the process accepts connections (it opens its engine first)."""
                    fake.known(update)
                    url = f"http://127.0.0.1:{port}/telegram"
                    deadline = asyncio.get_running_loop().time() + WAIT
                    while True:
                        try:
                            response = await client.post(
                                url,
                                json=update,
                                headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
                            )
                            return response.status_code
                        except httpx.TransportError:
                            if asyncio.get_running_loop().time() > deadline:
                                raise AssertionError(
                                    f"no process on {port} after {WAIT}s"
                                ) from None
                            await asyncio.sleep(0.1)

                def said(needle: str) -> bool:
                    return any(needle in (m.get("text") or "") for m in fake.messages(CHAT))

                assert (
                    await post(
                        ports[0],
                        _message(
                            1,
                            "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요",
                        ),
                    )
                    == 200
                )
                question = knowledge.k2.field("LOAN", "repayment_date").question.ko
                await fake.wait_for(lambda: said(question), what="first question")
                # Acknowledged by the first process, which dies in the middle of its turn.
                assert await post(ports[0], _message(2, "올해 6월")) == 200
                assert await asyncio.to_thread(first.wait, WAIT) == -signal.SIGKILL
                await post(ports[1], _message(3, "아니요 없어요"))  # the answer to the next one
                await fake.wait_for(
                    lambda: said(knowledge.message("summary_intro", "ko")), what="the summary"
                )
        finally:
            for proc in (first, second):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        await asyncio.to_thread(proc.wait, WAIT)
                    except subprocess.TimeoutExpired:
                        proc.kill()

    with psycopg.connect(postgres_url) as conn:
        turns = [
            row[0]
            for row in conn.execute(
                "select t.input_id from chatturn t join chatsession s on s.id = t.session_id"
                " where s.chat_id = %s order by t.id",
                (CHAT,),
            )
        ]
        pending = conn.execute(
            "select count(*) from inboxupdate where processed_at is null"
        ).fetchone()[0]
        status, facts = conn.execute(
            "select s.status, json_object_agg(f.key, f.value_json) from chatsession s"
            " join casefact f on f.session_id = s.id where s.chat_id = %s group by s.status",
            (CHAT,),
        ).fetchone()
    assert turns == ["1", "2", "3"]  # each answer once, in the order sent
    assert pending == 0
    assert status == "completed"
    assert facts["repayment_date"] == '"2026-06"' and facts["evidence"] == "false"
