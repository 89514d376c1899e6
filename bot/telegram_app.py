"""Telegram channel: the PTB Application, its handlers, rendering, and a durable poller.

Where a Telegram message goes: `poll_updates` stores each getUpdates batch in the inbox (db)
before confirming it to Telegram (an update that cannot be read is set aside there) → the
Application dispatches it to one of HANDLERS → the handler turns it into an `Inbound` and calls
`Engine.handle` → `send_reply` renders the `Reply` (each send retried, never the turn:
bot/sending.py). Intakes happen in private chats only: in a group the bot explains that and
links to a private chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import re
import unicodedata
import warnings
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from telegram import (
    BotCommand,
    CallbackQuery,
    ChatMember,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    Update,
    User,
)
from telegram.constants import ChatAction, ChatType, MessageLimit
from telegram.error import (
    EndPointNotFound,
    InvalidToken,
    NetworkError,
    TelegramError,
)
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)
from telegram.warnings import PTBUserWarning

from bot import failpoints
from bot.config import Settings
from bot.engine import Engine, Inbound, Reply
from bot.raw_updates import chat_id_of, update_id_of, update_type
from bot.sending import send_retrying
from bot.updates import ChatOrderedProcessor, inbox_catch_up
from bot.webhook import make_app, serve, webhook_path
from db import repo

log = logging.getLogger(__name__)

TYPING_REPEAT = 4.0  # seconds; Telegram shows a chat action for 5 s or until the next message

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
POLL_TIMEOUT = 25  # seconds of Telegram long polling
POLL_READ_MARGIN = 10  # seconds a long poll may take beyond its timeout before it is abandoned
MAX_BACKOFF = 30.0
SWEEP_EVERY = 10.0  # seconds between looks for updates a dead process left (shared database)
SWEEP_AGE = 20.0  # an update stored this long ago and still unfinished is taken over
DEEP_LINK_PAYLOAD = "intake"  # t.me/<bot>?start=intake opens the private chat with /start


TELEGRAM_TEXT_LIMIT = int(MessageLimit.MAX_TEXT_LENGTH)  # 4096, counted in UTF-16 code units
_WHITESPACE_RUN = re.compile(r"\s+")
# Punctuation that ends a sentence, and closers that may follow it (`다.” 그리고` ends after `”`).
_SENTENCE_END = frozenset(".!?…。！？")
_CLOSERS = frozenset("\"')]}”’」』》〉）")
_ZWJ = "\u200d"
# Preferred cuts are searched in the last half of the window only, so a break near the start
# of a long message does not leave a tiny part.
_LATE_FRACTION = 0.5


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units (astral characters such as emoji are 2)."""
    return len(text.encode("utf-16-le")) // 2


def _fitting_prefix(text: str, limit: int) -> int:
    """The largest n such that text[:n] is at most `limit` UTF-16 code units."""
    if utf16_len(text[:limit]) <= limit:  # no astral character in the first `limit`
        return min(len(text), limit)
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return index
    return len(text)


def _joins_previous(char: str) -> bool:
    """A character that belongs to the one before it (accents, ZWJ, variation selectors, ...)."""
    code = ord(char)
    return (
        unicodedata.combining(char) != 0
        or char == _ZWJ
        or 0xFE00 <= code <= 0xFE0F  # variation selectors (emoji presentation)
        or 0x1F3FB <= code <= 0x1F3FF  # skin-tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
        or 0xE0100 <= code <= 0xE01EF  # variation selectors supplement
    )


def _is_regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _hard_cut(text: str, end: int) -> int:
    """`end`, moved back so the cut does not split an emoji sequence, a flag or an accent."""
    cut = end
    while 0 < cut < len(text) and (_joins_previous(text[cut]) or text[cut - 1] == _ZWJ):
        cut -= 1
    if 0 < cut < len(text) and _is_regional_indicator(text[cut]):
        run = cut
        while run > 0 and _is_regional_indicator(text[run - 1]):
            run -= 1
        if (cut - run) % 2:  # the cut falls between the two halves of a flag
            cut -= 1
    return cut if cut > 0 else end


def _cut_level(text: str, start: int, end: int) -> int:
    """How good a cut at the whitespace run text[start:end] is: 0 paragraph ... 3 plain space."""
    gap = text[start:end]
    if gap.count("\n") >= 2:
        return 0
    if "\n" in gap:
        return 1
    before = start
    while before > 0 and text[before - 1] in _CLOSERS:
        before -= 1
    if before > 0 and text[before - 1] in _SENTENCE_END:
        return 2
    return 3


def _split_point(text: str, limit: int) -> tuple[int, int]:
    """(end of the first part, start of the rest) for text longer than `limit`."""
    window = _fitting_prefix(text, limit)
    late = int(window * _LATE_FRACTION)
    best: dict[int, tuple[int, int]] = {}  # level -> the last run of that level in the window
    latest: tuple[int, int] | None = None
    for run in _WHITESPACE_RUN.finditer(text, 1, window + 1):
        start = run.start()
        if start > window:
            break
        end = _WHITESPACE_RUN.match(text, start).end()  # the whole run, past the window too
        latest = (start, end)
        if start >= late:
            best[_cut_level(text, start, end)] = (start, end)
    if best:
        return best[min(best)]
    if latest is not None:  # only early breaks: a short part beats a word cut in two
        return latest
    cut = _hard_cut(text, window)
    return cut, cut


def split_text(text: str, limit: int = TELEGRAM_TEXT_LIMIT) -> list[str]:
    """Split a reply into Telegram messages of at most `limit` UTF-16 code units each.

    A text that fits is returned as it is. A longer one is cut at the best break in the last
    half of each window: a blank line, then a line break, then the end of a sentence, then a
    space; with none there, at the last space anywhere in the window; only a text with no
    space at all (long Korean without spaces, emoji runs) is cut hard, and never inside an emoji
    sequence or a flag. The whitespace at a cut is dropped, as are the text's outer blanks, so
    no part starts or ends with whitespace and none is empty: the parts, joined with the
    dropped whitespace put back, are ``text.strip()``. A text with nothing but whitespace
    gives no parts.
    """
    if limit < 2:
        raise ValueError("limit must be at least 2 (an emoji takes 2 UTF-16 code units)")
    if not text.strip():
        return []
    if utf16_len(text) <= limit:
        return [text]
    parts: list[str] = []
    rest = text.strip()
    while utf16_len(rest) > limit:
        end, start = _split_point(rest, limit)
        parts.append(rest[:end])
        rest = rest[start:]
    parts.append(rest)
    return parts


def keyboard(choices: list[dict[str, str]]) -> InlineKeyboardMarkup | None:
    """Buttons, two to a row when their labels are short."""
    if not choices:
        return None
    buttons = [InlineKeyboardButton(c["label"], callback_data=c["data"][:64]) for c in choices]
    width = 2 if all(len(c["label"]) <= 12 for c in choices) else 1
    return InlineKeyboardMarkup([buttons[i : i + width] for i in range(0, len(buttons), width)])


async def send_reply(bot: Any, chat_id: int, reply: Reply, *, tag: str = "-") -> bool:
    """Send every message of a reply in order, the buttons on its last part, then any files.

    Each send is retried while that can help (bot/sending.py). One that still fails ends the
    reply there (what follows would read out of place) and is logged under the chat's `tag`;
    it is not raised: the turn behind the reply was applied and must not run again. Returns
    whether everything was sent.
    """
    sends = []
    for message in reply.messages:
        parts = split_text(message["text"])
        if not parts:  # Telegram refuses an empty text: buttons alone go under an ellipsis
            if not message.get("choices"):
                continue
            parts = ["…"]
        for index, part in enumerate(parts):
            markup = keyboard(message.get("choices", [])) if index == len(parts) - 1 else None
            sends.append(
                ("sendMessage", partial(bot.send_message, chat_id, part, reply_markup=markup))
            )
    for document in reply.documents:
        upload = InputFile(document.content, filename=document.filename)
        sends.append(
            (
                "sendDocument",
                partial(bot.send_document, chat_id, upload, caption=document.caption),
            )
        )
    for done, (method, send) in enumerate(sends):
        try:
            await send_retrying(send, method=method)
        except TelegramError as error:
            log.error(
                "chat=%s reply not delivered: %s failed for good (%s); %d of %d sent; the turn "
                "stays applied and is not run again",
                tag,
                method,
                type(error).__name__,
                done,
                len(sends),
            )
            return False
    return True


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


def private_chat_link(bot: Any, lang: str, knowledge: Any) -> InlineKeyboardMarkup:
    """A URL button that opens the private chat with the bot and starts an intake there."""
    url = f"https://t.me/{bot.username}?start={DEEP_LINK_PAYLOAD}"
    label = knowledge.message("btn_private_chat", lang)
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, url=url)]])


async def _run(update: Update, context: ContextTypes.DEFAULT_TYPE, inbound: Inbound) -> Reply:
    """Engine call (typing shown while it takes long), reply."""
    engine = _engine(context)
    async with typing_while(context.bot, inbound.chat_id, engine.settings.intake_typing_delay):
        reply = await engine.handle(inbound)
    await send_reply(context.bot, inbound.chat_id, reply, tag=engine.chat_tag(inbound.chat_id))
    await notify_staff(context.bot, reply)
    failpoints.reach("after_reply")
    return reply


@contextlib.asynccontextmanager
async def typing_while(
    bot: Any, chat_id: int, delay: float, repeat: float = TYPING_REPEAT
) -> AsyncIterator[None]:
    """Show "typing" in the chat while the body runs, once it has taken `delay` seconds.

    Telegram asks bots to send a chat action only when a response will take a noticeable time:
    a reply quicker than `delay` shows none (and does not wait for one); a long one (an export,
    a slow model) keeps it shown, renewed every `repeat` seconds until the body ends.
    """

    async def keep_typing() -> None:
        await asyncio.sleep(delay)
        while True:
            try:
                await bot.send_chat_action(chat_id=chat_id, action=ChatAction.TYPING)
            except TelegramError as exc:  # cosmetic: the reply still comes
                log.info("typing indicator not shown (%s)", type(exc).__name__)
            await asyncio.sleep(repeat)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def notify_staff(bot: Any, reply: Reply) -> None:
    """Deliver the reply's staff notices (safety alerts); a failed one is logged, not raised."""
    for notice in reply.notices:
        try:
            send = partial(bot.send_message, notice.chat_id, notice.text)
            await send_retrying(send, method="sendMessage")
        except TelegramError as exc:
            log.error("staff notice not delivered (%s)", type(exc).__name__)


async def mark_processed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """After the handlers of group 0 finished with an update, its inbox row is done."""
    await repo.inbox_mark_processed(engine=_engine(context).records, update_id=update.update_id)


async def _tell_group(bot: Any, chat_id: int, lang: str, engine: Engine) -> None:
    """Say in a group that intakes happen in a private chat, with a link to one."""
    await bot.send_message(
        chat_id=chat_id,
        text=engine.knowledge.message("private_only", lang),
        reply_markup=private_chat_link(bot, lang, engine.knowledge),
    )


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


async def on_group(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A message in a group: no intake there; the person is pointed to a private chat."""
    lang = _lang_of(update.effective_user)
    await _tell_group(context.bot, update.effective_chat.id, lang, _engine(context))


async def on_added_to_group(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot was added to a group: it says at once that intakes happen in private."""
    change = update.my_chat_member
    joined = change.new_chat_member.status in (ChatMember.MEMBER, ChatMember.ADMINISTRATOR)
    if joined and change.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP):
        lang = _lang_of(change.from_user)
        await _tell_group(context.bot, change.chat.id, lang, _engine(context))


async def settle_pressed(query: CallbackQuery, *, counted: bool) -> None:
    """Mark the pressed choice on its message ("✔ label"), or only take its buttons away when
    the press did not count (the reply shows the question that is open now)."""
    if not getattr(query.message, "reply_markup", None):
        return
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
        text = getattr(query.message, "text", None)
        marked = f"{text}\n\n✔ {label}" if counted and label and text else ""
        if marked and utf16_len(marked) <= TELEGRAM_TEXT_LIMIT:
            await query.edit_message_text(marked)
        else:  # not counted, no text to mark, or a question so long the mark would not fit
            await query.edit_message_reply_markup(reply_markup=None)
    except TelegramError as exc:  # "message is not modified", a time-out: only cosmetic
        log.info("could not mark the pressed button (%s)", type(exc).__name__)


async def answer_query(query: CallbackQuery, text: str | None = None, **kwargs: Any) -> None:
    """Stop the button's spinner. A press recovered after a restart is too old to answer
    (Telegram refuses it); it is handled all the same."""
    try:
        await query.answer(text, **kwargs)
    except TelegramError as exc:
        log.info("callback query not answered (%s); handling the press anyway", type(exc).__name__)


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A pressed inline button: answer the query, handle it, mark it on its message."""
    query = update.callback_query
    refusal = button_refusal(query)
    if refusal is not None:
        log.warning("button press refused (%s)", refusal)
        text = _engine(context).knowledge.message(refusal, _lang_of(query.from_user))
        await answer_query(query, text, show_alert=True)
        return
    await answer_query(query)
    reply = await _run(update, context, _inbound(update, kind="choice", data=query.data or ""))
    await settle_pressed(query, counted=not reply.refused)


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the failure with its traceback, set the update aside and answer the person politely."""
    log.error("update handling failed", exc_info=context.error)
    if isinstance(update, Update):
        engine = _engine(context)
        # Set aside, not retried on restart: a message that fails every time must not block
        # the chat. Its inbox row keeps the reason, its type and chat, not the person's words.
        await repo.inbox_mark_failed(
            engine=engine.records, update_id=update.update_id, reason=type(context.error).__name__
        )
    if isinstance(update, Update) and update.effective_chat:
        engine = _engine(context)
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
    processor = ChatOrderedProcessor(settings.intake_concurrent_updates, engine.chat_locks)
    builder = (
        ApplicationBuilder()
        .token(settings.telegram_bot_token or "")
        .updater(None)
        .concurrent_updates(processor)
    )
    if settings.telegram_api_url:
        builder = builder.base_url(settings.telegram_api_url).base_file_url(
            settings.telegram_file_url
        )
    app = builder.build()
    app.bot_data["engine"] = engine
    processor.catch_up_with(
        inbox_catch_up(app, engine.records, lambda raw: read_update(raw, app.bot)[0])
    )
    app.add_handlers(HANDLERS)
    app.add_handler(TypeHandler(Update, mark_processed), group=1)  # runs after HANDLERS
    app.add_error_handler(on_error)
    return app


def read_update(raw: dict[str, Any], bot: Any) -> tuple[Update | None, str | None]:
    """(the update, None), or (None, why not) for an update python-telegram-bot cannot read."""
    try:
        return Update.de_json(copy.deepcopy(raw), bot), None
    except Exception as exc:  # noqa: BLE001 - whatever the payload, it is set aside, not fatal
        return None, f"unreadable: {type(exc).__name__}"


async def recover_inbox(app: Application, engine: Engine) -> int:
    """Process updates stored but not finished before a crash, oldest first."""
    pending = await repo.inbox_pending(engine=engine.records)
    for row in pending:
        update, failure = read_update(json.loads(row.payload_json), app.bot)
        if update is None:
            log.error("stored update %s %s; set aside", row.update_id, failure)
            await repo.inbox_mark_failed(
                engine=engine.records, update_id=row.update_id, reason=failure or ""
            )
            continue
        await app.update_queue.put(update)
    if pending:
        log.info("recovered %d unprocessed updates from the inbox", len(pending))
    return len(pending)


async def fetch_updates(bot: Any, offset: int | None, timeout: int) -> list[Any]:
    """One long poll of getUpdates, as the raw JSON Telegram sent.

    Raw, so that an update is stored exactly as sent and one that python-telegram-bot cannot
    read is set aside alone (`Bot.get_updates` would fail the whole batch, again and again).
    """
    params: dict[str, Any] = {"timeout": timeout, "allowed_updates": Update.ALL_TYPES}
    if offset is not None:
        params["offset"] = offset
    with warnings.catch_warnings():  # PTB suggests get_updates, which parses: see above
        warnings.simplefilter("ignore", PTBUserWarning)
        result = await bot.do_api_request(
            "getUpdates", api_kwargs=params, read_timeout=timeout + POLL_READ_MARGIN
        )
    return result if isinstance(result, list) else []


async def store_batch(app: Application, engine: Engine, raw_updates: list[Any]) -> int | None:
    """Store a batch in the inbox (one transaction), queue the new readable updates.

    An update python-telegram-bot cannot read is stored set aside, without its payload.

    Returns the offset that confirms the batch, or None when it held no update id at all.
    """
    entries, read = [], []
    for raw in raw_updates:
        update_id = update_id_of(raw)
        if update_id is None:
            log.error("an item without a storable update_id; skipped")
            continue
        update, failure = read_update(raw, app.bot)
        if update is None:  # set aside: its chat as far as the raw JSON tells, for /forget
            chat_id = chat_id_of(raw)
        else:
            chat_id = update.effective_chat.id if update.effective_chat else None
        entries.append(repo.InboxEntry(update_id, chat_id, raw, failure, update_type(raw)))
        read.append((update_id, update, failure))
    stored = await repo.inbox_add_batch(engine=engine.records, updates=entries)
    failpoints.reach("inbox_stored")
    shared = engine.chat_locks.shared
    for update_id, update, failure in read:
        if update_id not in stored:  # stored before, or twice in this batch
            if (
                shared
                and update is not None
                and not await repo.inbox_is_processed(engine=engine.records, update_id=update_id)
            ):  # delivered again after the process that stored it died: taken over here (the
                await app.update_queue.put(update)  # chat lock and the inbox run it once)
                continue
            log.info("update %s delivered twice; dropped", update_id)
            continue
        stored.discard(update_id)
        if update is None:
            log.error("update %s %s; set aside in the inbox", update_id, failure)
        else:
            await app.update_queue.put(update)
    return max((e[0] for e in entries), default=-1) + 1 if entries else None


async def poll_updates(
    app: Application, engine: Engine, stop: asyncio.Event, *, timeout: int = POLL_TIMEOUT
) -> None:
    """Long-poll getUpdates; store each batch in the inbox before the next call confirms it.

    No update and no failure ends the loop: network and storage errors are logged and retried
    with back-off (an unstored batch is simply not confirmed, so Telegram sends it again). Only
    a rejected token ends it, and `run_bot` then takes the process down.
    """
    last = await repo.inbox_max_update_id(engine=engine.records)
    offset = last + 1 if last is not None else None
    backoff = 1.0
    while not stop.is_set():
        try:
            raw_updates = await fetch_updates(app.bot, offset, timeout)
            offset = await store_batch(app, engine, raw_updates) or offset
            backoff = 1.0
            continue
        except (InvalidToken, EndPointNotFound):  # the token was rejected (do_api_request's
            raise  # word for a 401/404 once the bot is initialised): nothing to retry
        except NetworkError as exc:  # TimedOut included
            log.warning("getUpdates failed (%s); retrying in %.0f s", type(exc).__name__, backoff)
        except Exception:  # noqa: BLE001 - storage or anything else: logged, never fatal
            log.exception("polling step failed; the batch stays unconfirmed; retrying")
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF)


async def sweep_inbox(app: Application, engine: Engine, stop: asyncio.Event) -> None:
    """Several processes: take over stored updates left unfinished by a process that died.

    Each is queued here; the chat lock and the inbox order process it once, in its place.
    """
    queued: dict[int, float] = {}
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        await asyncio.sleep(SWEEP_EVERY)
        try:
            stale = await repo.inbox_pending(engine=engine.records, older_than=SWEEP_AGE)
        except Exception:  # noqa: BLE001 - storage trouble: logged, tried again later
            log.exception("inbox sweep failed; trying again")
            continue
        now = loop.time()
        queued = {k: at for k, at in queued.items() if now - at < 6 * SWEEP_EVERY}
        for row in stale:
            if row.update_id in queued:
                continue
            update, _ = read_update(json.loads(row.payload_json), app.bot)
            if update is not None:
                queued[row.update_id] = now
                log.info("update %s left unfinished; taken over", row.update_id)
                await app.update_queue.put(update)


class PollingStopped(RuntimeError):
    """Polling ended by itself (the token was rejected): the process must exit and be restarted."""


async def run_bot(settings: Settings, stop: asyncio.Event, *, webhook: bool = False) -> None:
    """Run the bot until `stop` is set; raise PollingStopped should polling end by itself.

    `webhook`: serve INTAKE_WEBHOOK_URL instead of polling (see bot/webhook.py).
    """
    if not settings.telegram_bot_token:
        raise SystemExit("TELEGRAM_BOT_TOKEN is not set (see README: Configuration)")
    if webhook and not (settings.intake_webhook_url and settings.intake_webhook_secret):
        raise SystemExit(
            "webhook mode needs INTAKE_WEBHOOK_URL and INTAKE_WEBHOOK_SECRET (see README)"
        )
    engine = await Engine.open(settings)
    app = build_application(settings, engine)
    died, cause, runner = False, None, None
    try:
        async with app:
            try:
                await app.bot.set_my_commands([BotCommand(c, d) for c, d in COMMAND_HELP.items()])
                await app.start()
                await recover_inbox(app, engine)
                tasks = {asyncio.create_task(stop.wait())}
                if engine.chat_locks.shared:
                    tasks.add(asyncio.create_task(sweep_inbox(app, engine, stop)))
                if webhook:
                    url = settings.intake_webhook_url
                    server = make_app(
                        webhook_path(url),
                        settings.intake_webhook_secret,
                        lambda raws: store_batch(app, engine, raws),
                    )
                    runner = await serve(
                        server, settings.intake_webhook_listen, settings.intake_webhook_port
                    )
                    await app.bot.set_webhook(
                        url,
                        secret_token=settings.intake_webhook_secret,
                        allowed_updates=Update.ALL_TYPES,
                    )
                    log.info(
                        "bot started as @%s; webhook on %s:%s",
                        app.bot.username,
                        settings.intake_webhook_listen,
                        settings.intake_webhook_port,
                    )
                    poller = None
                else:
                    await app.bot.delete_webhook()
                    log.info("bot started as @%s; polling", app.bot.username)
                    poller = asyncio.create_task(poll_updates(app, engine, stop))
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
                if runner is not None:  # no new update is taken while the queued ones finish
                    await runner.cleanup()
                    runner = None
            finally:  # whatever failed above, the Application is stopped first
                if app.running:
                    await app.stop()

    finally:
        if runner is not None:
            await runner.cleanup()
        await engine.close()
    if died:
        raise PollingStopped("polling stopped") from cause
