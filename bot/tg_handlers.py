"""The Telegram handlers, thin: an update becomes an `Inbound`, the engine handles it, and the
`Reply` is rendered (bot/tg_render.py). HANDLERS is their registration, in order.

Intakes happen in private chats only: in a group the bot explains that and links to a private
chat. The handlers share the engine through the Application's typed `bot_data` (`BotData`).
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import CallbackQuery, ChatMember, Update, User
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import (
    CallbackContext,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    ExtBot,
    MessageHandler,
    filters,
)

from bot import failpoints
from bot.engine import Engine, Inbound, Reply
from bot.research import Researcher
from bot.tg_render import notify_staff, private_chat_link, send_reply, settle_pressed, typing_while
from bot.tg_research import research_in_chat
from db import repo

log = logging.getLogger(__name__)

COMMANDS = (
    "start",
    "help",
    "new",
    "cancel",
    "status",
    "summary",
    "profile",
    "lang",
    "forget",
    "export",
    "sessions",
)
RESEARCH_COMMANDS = ("research", "ask")  # staff's research assistant (bot/tg_research.py)
COMMAND_HELP = {
    "start": "시작 / start",
    "help": "도움말 / help",
    "new": "새 상담 / start over",
    "cancel": "취소 / cancel",
    "status": "진행 상황 / progress",
    "summary": "요약 / summary",
    "profile": "내 건강 정보 / my health profile",
    "lang": "언어 ko·en / language",
    "forget": "내 정보 삭제 / delete my data",
}


class BotData:
    """What the handlers share, as the Application's `bot_data`: the engine they call."""

    engine: Engine  # set by `build_application` before the first update
    research: Researcher  # likewise; its clients are closed when the bot stops


# The handlers' context: `context.bot_data` is a BotData (user and chat data stay unused dicts).
BotContext = CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], BotData]
CONTEXT_TYPES = ContextTypes(bot_data=BotData)


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
    import clock

    return clock.now()


def _lang_of(user: User | None) -> str:
    """A language for a person the engine has not met (groups, refused presses)."""
    code = (user.language_code or "") if user else ""
    return "en" if code.lower().startswith("en") else "ko"


def button_refusal(query: CallbackQuery) -> str | None:
    """The K0 key of why a press is refused before the engine sees it, or None.

    A press counts only on a message in the private chat of the person pressing: not on an
    inline-mode message (no chat to act on), not in a group, not on someone else's chat.
    """
    message = query.message
    if message is None:
        return "button_gone"
    if message.chat.type != ChatType.PRIVATE:
        return "button_gone"
    if message.chat.id != query.from_user.id:
        return "button_not_yours"
    return None


async def _run(update: Update, context: BotContext, inbound: Inbound) -> Reply:
    """Engine call (typing shown while it takes long), reply."""
    engine = context.bot_data.engine
    tag = engine.chat_tag(inbound.chat_id)

    async def first(ahead: Reply) -> bool:  # the safety reply, sent before the turn runs
        return await send_reply(context.bot, inbound.chat_id, ahead, tag=tag)

    async with typing_while(context.bot, inbound.chat_id, engine.settings.intake_typing_delay):
        reply = await engine.handle(inbound, first=first)
    await send_reply(context.bot, inbound.chat_id, reply, tag=tag)
    await notify_staff(context.bot, reply)
    failpoints.reach("after_reply")
    return reply


async def mark_processed(update: Update, context: BotContext) -> None:
    """After the handlers of group 0 finished with an update, its inbox row is done."""
    await repo.inbox_mark_processed(
        engine=context.bot_data.engine.records, update_id=update.update_id
    )


async def _tell_group(bot: Any, chat_id: int, lang: str, engine: Engine) -> None:
    """Say in a group that intakes happen in a private chat, with a link to one."""
    await bot.send_message(
        chat_id=chat_id,
        text=engine.knowledge.message("private_only", lang),
        reply_markup=private_chat_link(bot, lang, engine.knowledge),
    )


# --- handlers (thin: update -> Inbound -> engine -> reply) ----------------------------------


async def on_command(update: Update, context: BotContext) -> None:
    """A /command, with its arguments."""
    name = update.effective_message.text.split()[0].lstrip("/").split("@")[0]
    await _run(
        update,
        context,
        _inbound(update, kind="command", command=name, args=tuple(context.args or ())),
    )


async def on_research(update: Update, context: BotContext) -> None:
    """/research DRUG, /ask QUESTION: staff only; run as its own task (the chat is not held)."""
    engine, researcher = context.bot_data.engine, context.bot_data.research
    chat_id, user = update.effective_chat.id, update.effective_user
    lang = await repo.get_lang(engine=engine.records, chat_id=chat_id) or _lang_of(user)
    if not researcher.allowed(user.id if user else None):
        log.warning("chat=%s refused research command", engine.chat_tag(chat_id))
        await context.bot.send_message(
            chat_id, engine.knowledge.message("research_staff_only", lang)
        )
        return
    name = update.effective_message.text.split()[0].lstrip("/").split("@")[0].lower()
    query = " ".join(context.args or ())
    job = research_in_chat(context.bot, researcher, chat_id, name, query, lang)
    context.application.create_task(job, update=update, name=f"research-{update.update_id}")


async def on_text(update: Update, context: BotContext) -> None:
    """A text message: an answer or a description."""
    await _run(
        update, context, _inbound(update, kind="text", text=update.effective_message.text or "")
    )


async def on_file(update: Update, context: BotContext) -> None:
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


async def on_edited(update: Update, context: BotContext) -> None:
    """An edited message: edits are not applied; the person is told how to correct instead."""
    await _run(update, context, _inbound(update, kind="edited"))


async def on_unsupported(update: Update, context: BotContext) -> None:
    """A sticker, voice, location, ... where text was asked."""
    await _run(update, context, _inbound(update, kind="unsupported"))


async def on_group(update: Update, context: BotContext) -> None:
    """A message in a group: no intake there; the person is pointed to a private chat."""
    lang = _lang_of(update.effective_user)
    await _tell_group(context.bot, update.effective_chat.id, lang, context.bot_data.engine)


async def on_added_to_group(update: Update, context: BotContext) -> None:
    """The bot was added to a group: it says at once that intakes happen in private."""
    change = update.my_chat_member
    joined = change.new_chat_member.status in (ChatMember.MEMBER, ChatMember.ADMINISTRATOR)
    if joined and change.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP):
        lang = _lang_of(change.from_user)
        await _tell_group(context.bot, change.chat.id, lang, context.bot_data.engine)


async def answer_query(query: CallbackQuery, text: str | None = None, **kwargs: Any) -> None:
    """Stop the button's spinner. A press recovered after a restart is too old to answer
    (Telegram refuses it); it is handled all the same."""
    try:
        await query.answer(text, **kwargs)
    except TelegramError as exc:
        log.info("callback query not answered (%s); handling the press anyway", type(exc).__name__)


async def on_button(update: Update, context: BotContext) -> None:
    """A pressed inline button: answer the query, handle it, mark it on its message."""
    query = update.callback_query
    refusal = button_refusal(query)
    if refusal is not None:
        log.warning("button press refused (%s)", refusal)
        text = context.bot_data.engine.knowledge.message(refusal, _lang_of(query.from_user))
        await answer_query(query, text, show_alert=True)
        return
    await answer_query(query)
    reply = await _run(update, context, _inbound(update, kind="choice", data=query.data or ""))
    await settle_pressed(query, counted=not reply.refused)


async def on_error(update: object, context: BotContext) -> None:
    """Log the failure with its traceback, set the update aside and answer the person politely."""
    log.error("update handling failed", exc_info=context.error)
    if isinstance(update, Update):
        engine = context.bot_data.engine
        # Set aside, not retried on restart: a message that fails every time must not block
        # the chat. Its inbox row keeps the reason, its type and chat, not the person's words.
        await repo.inbox_mark_failed(
            engine=engine.records, update_id=update.update_id, reason=type(context.error).__name__
        )
    if isinstance(update, Update) and update.effective_chat:
        engine = context.bot_data.engine
        lang = await repo.get_lang(engine=engine.records, chat_id=update.effective_chat.id) or "ko"
        try:
            await context.bot.send_message(
                update.effective_chat.id, engine.knowledge.message("error", lang)
            )
        except TelegramError:
            log.warning("could not send the error message")


# Registration order matters: groups first, then edits, commands, buttons, files, text, the rest.
NEW = filters.UpdateType.MESSAGE  # a new message (edits are handled apart)
PRIVATE = filters.ChatType.PRIVATE
HANDLERS = [
    MessageHandler(NEW & ~PRIVATE, on_group),  # no intake in a group: a link to a private chat
    ChatMemberHandler(on_added_to_group, ChatMemberHandler.MY_CHAT_MEMBER),  # added to a group
    MessageHandler(filters.UpdateType.EDITED_MESSAGE & PRIVATE, on_edited),  # edits not applied
    # /research /ask: staff's research assistant, run beside the chat's turns
    CommandHandler(list(RESEARCH_COMMANDS), on_research, filters=NEW & PRIVATE),
    # /start /help /new /cancel /status /summary /lang /export /sessions
    CommandHandler(list(COMMANDS), on_command, filters=NEW),
    CallbackQueryHandler(on_button),  # inline keyboard presses
    MessageHandler(NEW & (filters.PHOTO | filters.Document.ALL), on_file),  # evidence files
    MessageHandler(NEW & filters.TEXT & ~filters.COMMAND, on_text),  # answers and descriptions
    MessageHandler(NEW & filters.COMMAND, on_command),  # unknown /commands: answered politely
    MessageHandler(NEW & filters.ChatType.PRIVATE, on_unsupported),  # stickers, voice, location
]
