"""Telegram channel: the PTB Application assembled, and `run_bot`, which runs it.

Where a Telegram message goes: `poll_updates` stores each getUpdates batch in the inbox (db)
before confirming it to Telegram (an update that cannot be read is set aside there:
bot/tg_polling.py) → the Application dispatches it to one of HANDLERS → the handler turns it
into an `Inbound` and calls `Engine.handle` (bot/tg_handlers.py) → `send_reply` renders the
`Reply` (bot/tg_render.py; long texts split by bot/tg_split.py; each send retried, never the
turn: bot/sending.py). Intakes happen in private chats only: in a group the bot explains that
and links to a private chat. `run_bot` chooses how updates come in: polling
(bot/tg_polling.py) or the webhook (bot/tg_webhook.py).

The names callers and tests use are importable from here as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import BotCommand, Update
from telegram.ext import Application, ApplicationBuilder, TypeHandler

from bot.config import Settings
from bot.engine import Engine
from bot.research import Researcher
from bot.tg_handlers import (
    COMMAND_HELP,
    COMMANDS,
    CONTEXT_TYPES,
    HANDLERS,
    BotContext,
    BotData,
    button_refusal,
    mark_processed,
    on_button,
    on_error,
)
from bot.tg_polling import (
    fetch_updates,
    poll_updates,
    read_update,
    recover_inbox,
    start_polling,
    store_batch,
    sweep_inbox,
)
from bot.tg_render import keyboard, notify_staff, private_chat_link, send_reply, typing_while
from bot.tg_split import TELEGRAM_TEXT_LIMIT, split_text, utf16_len
from bot.tg_webhook import check_webhook_settings, webhook_served
from bot.updates import ChatOrderedProcessor, inbox_catch_up
from db import repo

__all__ = [
    "COMMAND_HELP",
    "COMMANDS",
    "CONTEXT_TYPES",
    "HANDLERS",
    "TELEGRAM_TEXT_LIMIT",
    "BotContext",
    "BotData",
    "PollingStopped",
    "build_application",
    "button_refusal",
    "fetch_updates",
    "keyboard",
    "notify_staff",
    "on_button",
    "poll_updates",
    "private_chat_link",
    "read_update",
    "recover_inbox",
    "run_bot",
    "send_reply",
    "split_text",
    "store_batch",
    "sweep_inbox",
    "typing_while",
    "utf16_len",
]

log = logging.getLogger(__name__)


def build_application(settings: Settings, engine: Engine) -> Application:
    """The PTB Application (no built-in Updater: `poll_updates` stores updates before confirming)."""
    processor = ChatOrderedProcessor(settings.intake_concurrent_updates, engine.chat_locks)
    builder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token or "")
        .updater(None)
        .concurrent_updates(processor)
        .context_types(CONTEXT_TYPES)
    )
    if settings.telegram_api_url:
        builder = builder.base_url(settings.telegram_api_url).base_file_url(
            settings.telegram_file_url
        )
    app = builder.build()
    app.bot_data.engine = engine
    app.bot_data.research = Researcher(
        settings,
        engine.knowledge,
        llm=getattr(engine.services.brain, "client", None),
        cache=repo.RecordsCache(engine.records),  # responses kept a while, for every process
    )
    processor.catch_up_with(
        inbox_catch_up(app, engine.records, lambda raw: read_update(raw, app.bot)[0])
    )
    app.add_handlers(HANDLERS)
    app.add_handler(TypeHandler(Update, mark_processed), group=1)  # runs after HANDLERS
    app.add_error_handler(on_error)
    return app


class PollingStopped(RuntimeError):
    """Polling ended by itself (the token was rejected): the process must exit and be restarted."""


async def run_bot(settings: Settings, stop: asyncio.Event, *, webhook: bool = False) -> None:
    """Run the bot until `stop` is set; raise PollingStopped should polling end by itself.

    `webhook`: serve INTAKE_WEBHOOK_URL instead of polling (bot/tg_webhook.py).
    """
    if not settings.telegram_bot_token:
        raise SystemExit("TELEGRAM_BOT_TOKEN is not set (see README: Configuration)")
    if webhook:
        check_webhook_settings(settings)
    engine = await Engine.open(settings)
    app = build_application(settings, engine)
    died, cause = False, None
    try:
        async with app:
            try:
                await app.bot.set_my_commands([BotCommand(c, d) for c, d in COMMAND_HELP.items()])
                await app.start()
                await recover_inbox(app, engine)
                tasks = {asyncio.create_task(stop.wait())}
                if engine.chat_locks.shared:
                    tasks.add(asyncio.create_task(sweep_inbox(app, engine, stop)))
                async with contextlib.AsyncExitStack() as serving:
                    poller = None
                    if webhook:  # left before the Application stops: no new update is taken
                        await serving.enter_async_context(webhook_served(app, engine, settings))
                    else:  # while the queued ones finish
                        poller = await start_polling(app, engine, stop)
                        tasks.add(poller)
                    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                    died = poller is not None and poller.done() and not poller.cancelled()
                    cause = poller.exception() if died else None
                    if died:
                        log.critical(
                            "polling stopped (%s); exiting so that a supervisor restarts the bot",
                            type(cause).__name__ if cause else "returned",
                        )
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
            finally:  # whatever failed above, the Application is stopped
                if app.running:
                    await app.stop()
    finally:
        await app.bot_data.research.aclose()
        await engine.close()
    if died:
        raise PollingStopped("polling stopped") from cause
