"""Telegram channel: the PTB Application, its handlers, rendering, and a durable poller.

Where a Telegram message goes: `poll_updates` stores it in the inbox (db) before confirming it
to Telegram → the Application dispatches it to one of HANDLERS → the handler turns it into an
`Inbound` and calls `Engine.handle` → `send_reply` renders the `Reply`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from telegram import BotCommand, InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Update
from telegram.constants import ChatAction, MessageLimit
from telegram.error import BadRequest, NetworkError, TelegramError, TimedOut
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.config import Settings
from bot.engine import Engine, Inbound, Reply
from db import repo

log = logging.getLogger(__name__)

COMMANDS = ("start", "help", "new", "cancel", "status", "summary", "lang", "export", "sessions")
COMMAND_HELP = {
    "start": "시작 / start",
    "help": "도움말 / help",
    "new": "새 상담 / start over",
    "cancel": "취소 / cancel",
    "status": "진행 상황 / progress",
    "summary": "요약 / summary",
    "lang": "언어 ko·en / language",
}
POLL_TIMEOUT = 25  # seconds of Telegram long polling


def split_text(text: str, limit: int = MessageLimit.MAX_TEXT_LENGTH) -> list[str]:
    """Split a long reply on paragraph, then line, then word boundaries, each part <= limit."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = max(rest.rfind("\n\n", 0, limit), rest.rfind("\n", 0, limit))
        if cut <= 0:
            cut = rest.rfind(" ", 0, limit)
        if cut <= 0:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip("\n ")
    parts.append(rest)
    return [p for p in parts if p]


def keyboard(choices: list[dict[str, str]]) -> InlineKeyboardMarkup | None:
    """Buttons, two to a row when their labels are short."""
    if not choices:
        return None
    buttons = [InlineKeyboardButton(c["label"], callback_data=c["data"][:64]) for c in choices]
    width = 2 if all(len(c["label"]) <= 12 for c in choices) else 1
    return InlineKeyboardMarkup([buttons[i : i + width] for i in range(0, len(buttons), width)])


async def send_reply(bot: Any, chat_id: int, reply: Reply) -> None:
    """Send every message of a reply in order, the buttons on its last part, then any files."""
    for message in reply.messages:
        parts = split_text(message["text"]) or [" "]
        for index, part in enumerate(parts):
            markup = keyboard(message.get("choices", [])) if index == len(parts) - 1 else None
            await bot.send_message(chat_id=chat_id, text=part, reply_markup=markup)
    for document in reply.documents:
        await bot.send_document(
            chat_id=chat_id,
            document=InputFile(document.content, filename=document.filename),
            caption=document.caption,
        )


def _engine(context: ContextTypes.DEFAULT_TYPE) -> Engine:
    return context.application.bot_data["engine"]


def _inbound(update: Update, **fields: Any) -> Inbound:
    user = update.effective_user
    return Inbound(
        chat_id=update.effective_chat.id,
        user_id=user.id if user else None,
        language_code=user.language_code if user else None,
        input_id=str(update.update_id),
        at=(update.effective_message.date if update.effective_message else None) or _now(),
        **fields,
    )


def _now():
    from datetime import UTC, datetime

    return datetime.now(UTC)


async def _run(update: Update, context: ContextTypes.DEFAULT_TYPE, inbound: Inbound) -> Reply:
    """Typing indicator, engine call, reply."""
    await context.bot.send_chat_action(chat_id=inbound.chat_id, action=ChatAction.TYPING)
    reply = await _engine(context).handle(inbound)
    await send_reply(context.bot, inbound.chat_id, reply)
    return reply


async def mark_processed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """After the handlers of group 0 finished with an update, its inbox row is done."""
    await repo.inbox_mark_processed(engine=_engine(context).records, update_id=update.update_id)


# --- handlers (thin: update -> Inbound -> engine -> reply) ----------------------------------


async def on_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A /command, with its arguments."""
    name = update.effective_message.text.split()[0].lstrip("/").split("@")[0]
    await _run(
        update,
        context,
        _inbound(update, kind="command", command=name, args=tuple(context.args or ())),
    )


async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A text message: an answer or a description."""
    await _run(
        update, context, _inbound(update, kind="text", text=update.effective_message.text or "")
    )


async def on_file(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A photo or document: evidence of the case."""
    message = update.effective_message
    if message.photo:
        best = message.photo[-1]
        file = {"kind": "photo", "file_id": best.file_id, "file_unique_id": best.file_unique_id}
    else:
        doc = message.document
        file = {
            "kind": "document",
            "file_id": doc.file_id,
            "file_unique_id": doc.file_unique_id,
            "file_name": doc.file_name,
            "mime_type": doc.mime_type,
        }
    file["caption"] = message.caption
    await _run(update, context, _inbound(update, kind="file", file=file))


async def on_edited(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """An edited message: edits are not applied; the person is told how to correct instead."""
    await _run(update, context, _inbound(update, kind="edited"))


async def on_unsupported(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A sticker, voice, location, ... where text was asked."""
    await _run(update, context, _inbound(update, kind="unsupported"))


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A pressed inline button: answer the query, mark the choice on its message, handle it."""
    query = update.callback_query
    await query.answer()
    if query.message is not None and getattr(query.message, "reply_markup", None):
        label = next(
            (
                b.text
                for row in query.message.reply_markup.inline_keyboard
                for b in row
                if b.callback_data == query.data
            ),
            None,
        )
        try:
            if label and getattr(query.message, "text", None):
                await query.edit_message_text(f"{query.message.text}\n\n✔ {label}")
            else:
                await query.edit_message_reply_markup(reply_markup=None)
        except BadRequest as exc:  # e.g. "message is not modified" on a second press
            log.debug("could not mark the pressed button: %s", exc)
    await _run(update, context, _inbound(update, kind="choice", data=query.data or ""))


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the failure with its traceback and answer the person politely."""
    log.error("update handling failed", exc_info=context.error)
    if isinstance(update, Update) and update.effective_chat:
        engine = _engine(context)
        # Not retried on restart: a message that fails every time must not block the chat.
        await repo.inbox_mark_processed(engine=engine.records, update_id=update.update_id)
        lang = await repo.get_lang(engine=engine.records, chat_id=update.effective_chat.id) or "ko"
        try:
            await context.bot.send_message(
                update.effective_chat.id, engine.knowledge.message("error", lang)
            )
        except TelegramError:
            log.warning("could not send the error message")


# Registration order matters: edits first, then commands, buttons, files, text, and the rest.
NEW = filters.UpdateType.MESSAGE  # a new message (edits are handled apart)
HANDLERS = [
    MessageHandler(filters.UpdateType.EDITED_MESSAGE, on_edited),  # edits are not applied
    # /start /help /new /cancel /status /summary /lang /export /sessions
    CommandHandler(list(COMMANDS), on_command, filters=NEW),
    CallbackQueryHandler(on_button),  # inline keyboard presses
    MessageHandler(NEW & (filters.PHOTO | filters.Document.ALL), on_file),  # evidence files
    MessageHandler(NEW & filters.TEXT & ~filters.COMMAND, on_text),  # answers and descriptions
    MessageHandler(NEW & filters.COMMAND, on_command),  # unknown /commands: answered politely
    MessageHandler(NEW & filters.ChatType.PRIVATE, on_unsupported),  # stickers, voice, location
]


def build_application(settings: Settings, engine: Engine) -> Application:
    """The PTB Application (no built-in Updater: `poll_updates` stores updates before confirming)."""
    builder = ApplicationBuilder().token(settings.telegram_bot_token or "").updater(None)
    if settings.telegram_api_url:
        builder = builder.base_url(settings.telegram_api_url).base_file_url(
            settings.telegram_file_url
        )
    app = builder.build()
    app.bot_data["engine"] = engine
    app.add_handlers(HANDLERS)
    app.add_handler(TypeHandler(Update, mark_processed), group=1)  # runs after HANDLERS
    app.add_error_handler(on_error)
    return app


async def recover_inbox(app: Application, engine: Engine) -> int:
    """Process updates stored but not finished before a crash, oldest first."""
    pending = await repo.inbox_pending(engine=engine.records)
    for row in pending:
        await app.update_queue.put(Update.de_json(json.loads(row.payload_json), app.bot))
    if pending:
        log.info("recovered %d unprocessed updates from the inbox", len(pending))
    return len(pending)


async def poll_updates(
    app: Application, engine: Engine, stop: asyncio.Event, *, timeout: int = POLL_TIMEOUT
) -> None:
    """Long-poll getUpdates; store each update in the inbox before the next call confirms it."""
    last = await repo.inbox_max_update_id(engine=engine.records)
    offset = last + 1 if last is not None else None
    backoff = 1.0
    while not stop.is_set():
        try:
            updates = await app.bot.get_updates(
                offset=offset, timeout=timeout, allowed_updates=Update.ALL_TYPES
            )
            backoff = 1.0
        except (TimedOut, NetworkError) as exc:
            log.warning("getUpdates failed (%s); retrying in %.0f s", type(exc).__name__, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 30.0)
            continue
        for update in updates:
            chat = update.effective_chat
            stored = await repo.inbox_add(
                engine=engine.records,
                update_id=update.update_id,
                chat_id=chat.id if chat else None,
                payload=update.to_dict(),
            )
            offset = update.update_id + 1
            if stored:
                await app.update_queue.put(update)
            else:
                log.info("update %s delivered twice; dropped", update.update_id)


async def run_bot(settings: Settings, stop: asyncio.Event) -> None:
    """Run the bot until `stop` is set."""
    if not settings.telegram_bot_token:
        raise SystemExit("TELEGRAM_BOT_TOKEN is not set (see README: Configuration)")
    engine = await Engine.open(settings)
    app = build_application(settings, engine)
    try:
        async with app:
            await app.bot.delete_webhook()
            await app.bot.set_my_commands([BotCommand(c, d) for c, d in COMMAND_HELP.items()])
            await app.start()
            await recover_inbox(app, engine)
            log.info("bot started as @%s; polling", app.bot.username)
            poller = asyncio.create_task(poll_updates(app, engine, stop))
            await stop.wait()
            poller.cancel()
            await asyncio.gather(poller, return_exceptions=True)
            await app.stop()
    finally:
        await engine.close()
