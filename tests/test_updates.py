"""Chats side by side, each in order: the update processor inside the real PTB Application."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from telegram import Update
from telegram.ext import MessageHandler, filters

from bot.updates import ChatOrderedProcessor, chat_key
from db.locks import ChatLocks, advisory_key
from tests.fakes.bot_api import FakeBotApi
from tests.support import WAIT


def text_update(update_id: int, chat_id: int, text: str, bot: Any) -> Update:
    user = {"id": chat_id, "is_bot": False, "first_name": "T"}
    raw = {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 1_790_000_000,
            "from": user,
            "chat": {"id": chat_id, "type": "private", "first_name": "T"},
            "text": text,
        },
    }
    return Update.de_json(raw, bot)


@pytest.fixture
async def fake():
    async with FakeBotApi() as server:
        yield server


async def run_updates(fake: FakeBotApi, updates: list[tuple[int, str]], pause: dict[int, float]):
    """Feed (chat, text) updates to an Application using the processor; return the events."""
    events: list[tuple[str, int, str, float]] = []
    loop = asyncio.get_running_loop()
    all_ended = asyncio.Event()

    async def handler(update: Update, _context: Any) -> None:
        chat, text = update.effective_chat.id, update.effective_message.text
        events.append(("start", chat, text, loop.time()))
        await asyncio.sleep(pause.get(chat, 0.0))
        events.append(("end", chat, text, loop.time()))
        if sum(e[0] == "end" for e in events) == len(updates):
            all_ended.set()

    processor = ChatOrderedProcessor(8, ChatLocks())
    app = fake.application_builder().updater(None).concurrent_updates(processor).build()
    app.add_handler(MessageHandler(filters.TEXT, handler))
    async with app:
        await app.start()
        for index, (chat, text) in enumerate(updates, start=1):
            await app.update_queue.put(text_update(index, chat, text, app.bot))
        try:
            await asyncio.wait_for(all_ended.wait(), WAIT)
        finally:
            await app.stop()
    return events


async def test_a_slow_chat_does_not_hold_up_another(fake: FakeBotApi) -> None:
    events = await run_updates(fake, [(1, "slow"), (2, "quick")], pause={1: 0.5})
    ends = {chat: at for kind, chat, _, at in events if kind == "end"}
    assert ends[2] < ends[1]  # one update at a time would have ended chat 1 first


async def test_updates_of_one_chat_run_one_after_another_in_arrival_order(
    fake: FakeBotApi,
) -> None:
    updates = [(1, f"m{i}") for i in range(6)] + [(2, "other")]
    events = await run_updates(fake, updates, pause={1: 0.05})
    mine = [(kind, text) for kind, chat, text, _ in events if chat == 1]
    expected = [(kind, f"m{i}") for i in range(6) for kind in ("start", "end")]
    assert mine == expected  # never two at once, never out of order
    other_end = next(at for kind, chat, _, at in events if chat == 2 and kind == "end")
    last_end = max(at for kind, chat, _, at in events if chat == 1)
    assert other_end < last_end


def test_chat_key_and_advisory_keys() -> None:
    assert chat_key(object()) is None
    assert len({advisory_key(c) for c in (1, 2, -1001234567890, 2**40)}) == 4
    assert all(0 < advisory_key(c) < 2**63 for c in (1, -1, -1001234567890))


async def test_locks_are_forgotten_when_nobody_waits() -> None:
    locks = ChatLocks()
    async with locks.hold(5):
        assert 5 in locks._local
    assert locks._local == {}


async def test_a_press_without_a_chat_is_stored_under_its_sender_for_the_catch_up(
    fake: FakeBotApi, engine
) -> None:
    """An inline button's press carries a sender but no chat: the inbox keeps it under the key
    the chat lock and the shared-database catch-up look it up by (its sender), not under none."""
    from bot.tg_polling import store_batch
    from db import repo

    press = {
        "update_id": 5,
        "callback_query": {
            "id": "1",
            "from": {"id": 42, "is_bot": False, "first_name": "T"},
            "chat_instance": "c",
            "data": "cmd:help",
        },
    }
    app = fake.application_builder().updater(None).build()
    async with app:
        await store_batch(app, engine, [press])
    pending = await repo.inbox_pending_for_chat(engine=engine.records, chat_id=42, up_to=5)
    assert [row.update_id for row in pending] == [5]
