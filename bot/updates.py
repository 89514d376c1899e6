"""Updates of different chats side by side, each chat's strictly in order.

python-telegram-bot hands every update to the Application's update processor
(`ApplicationBuilder.concurrent_updates`). `ChatOrderedProcessor` runs up to
`INTAKE_CONCURRENT_UPDATES` of them at once, but the updates of one chat one after another in
the order they arrived: a turn, its typing indicator and its replies hold up only their own
chat.

With several bot processes on one PostgreSQL database the chat lock is also an advisory lock,
and the inbox is the order: whoever holds a chat's lock first finishes the chat's earlier
stored updates, oldest first, and an update another process finished already is skipped. So a
chat's turns stay in order and run once even when its updates reach different processes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from db import repo
from db.locks import ChatLocks

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 64


def chat_key(update: object) -> int | None:
    """The chat whose order an update belongs to (its chat, else its sender), or None."""
    if not isinstance(update, Update):
        return None
    if update.effective_chat is not None:
        return update.effective_chat.id
    return update.effective_user.id if update.effective_user is not None else None


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Concurrent across chats (bounded), one at a time and in arrival order within a chat."""

    def __init__(self, max_concurrent_updates: int, locks: ChatLocks) -> None:
        super().__init__(max_concurrent_updates)
        self.locks = locks
        self._catch_up: Callable[[int, int], Awaitable[bool]] | None = None

    def catch_up_with(self, catch_up: Callable[[int, int], Awaitable[bool]]) -> None:
        """Set how a chat's earlier stored updates are finished first (several processes):
        `catch_up(chat_id, update_id)` returns whether the update itself is still to be done."""
        self._catch_up = catch_up

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat_id = chat_key(update)
        if chat_id is None:
            await coroutine
            return
        async with self.locks.hold(chat_id):
            if (
                self.locks.shared
                and self._catch_up is not None
                and not await self._catch_up(chat_id, update.update_id)
            ):
                log.info("update %s was finished by another process; skipped", update.update_id)
                coroutine.close()  # never awaited: nothing of it runs
                return
            await coroutine

    async def initialize(self) -> None:
        """Nothing to set up: the locks belong to the engine."""

    async def shutdown(self) -> None:
        """Nothing to free."""


def inbox_catch_up(app: Any, records: Any, parse: Callable[[dict], Update | None]):
    """The `catch_up` of a process on a shared database: under the chat's lock, process the
    chat's stored, unfinished updates older than `update_id` in order; say whether
    `update_id` itself is still unfinished."""

    async def catch_up(chat_id: int, update_id: int) -> bool:
        pending = await repo.inbox_pending_for_chat(
            engine=records, chat_id=chat_id, up_to=update_id
        )
        for row in pending:
            if row.update_id == update_id:
                continue
            earlier = parse(json.loads(row.payload_json))
            if earlier is None:
                await repo.inbox_mark_failed(
                    engine=records, update_id=row.update_id, reason="unreadable"
                )
                continue
            log.info(
                "update %s of the chat came first; processed before %s", row.update_id, update_id
            )
            await app.process_update(earlier)
        return any(row.update_id == update_id for row in pending)

    return catch_up
