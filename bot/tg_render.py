"""Rendering a reply in Telegram: its messages (split at the limit), keyboards, files, the
typing indicator, staff notices and the mark left on a pressed button.

A failed send is logged, never raised: the turn behind a reply was applied and must not run
again (each send is retried while that can help: bot/sending.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, InputFile
from telegram.constants import ChatAction
from telegram.error import TelegramError

from bot.engine import Reply
from bot.sending import send_retrying
from bot.tg_split import TELEGRAM_TEXT_LIMIT, split_text, utf16_len

log = logging.getLogger(__name__)

TYPING_REPEAT = 4.0  # seconds; Telegram shows a chat action for 5 s or until the next message
DEEP_LINK_PAYLOAD = "intake"  # t.me/<bot>?start=intake opens the private chat with /start


def keyboard(choices: list[dict[str, str]]) -> InlineKeyboardMarkup | None:
    """Buttons, two to a row when their labels are short."""
    if not choices:
        return None
    buttons = [InlineKeyboardButton(c["label"], callback_data=c["data"][:64]) for c in choices]
    width = 2 if all(len(c["label"]) <= 12 for c in choices) else 1
    return InlineKeyboardMarkup([buttons[i : i + width] for i in range(0, len(buttons), width)])


def joined_messages(messages: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, str]]]]:
    """(text, buttons) per Telegram message: consecutive texts without buttons joined into one,
    a blank line between them, as far as the joined text stays within Telegram's limit; a text
    with buttons stays its own message (a text alone over the limit is split when sent)."""
    joined: list[tuple[str, list[dict[str, str]]]] = []
    plain: list[str] = []  # button-less texts waiting to be sent together

    def flush() -> None:
        if plain:
            joined.append(("\n\n".join(plain), []))
            plain.clear()

    for message in messages:
        text, choices = message["text"], message.get("choices") or []
        if choices:
            flush()
            joined.append((text, choices))
        elif text.strip():  # an empty text alone is no message
            if plain and utf16_len("\n\n".join([*plain, text])) > TELEGRAM_TEXT_LIMIT:
                flush()
            plain.append(text)
    flush()
    return joined


async def send_reply(bot: Any, chat_id: int, reply: Reply, *, tag: str = "-") -> bool:
    """Send a reply's messages in order (consecutive ones without buttons as one message,
    `joined_messages`), the buttons on a message's last part, then any files.

    Each send is retried while that can help (bot/sending.py). One that still fails ends the
    reply there (what follows would read out of place) and is logged under the chat's `tag`;
    it is not raised: the turn behind the reply was applied and must not run again. Returns
    whether everything was sent.
    """
    sends = []
    # (messages that went ahead of the turn, the safety reply, are not sent again)
    for text, choices in joined_messages(reply.messages[reply.sent :]):
        parts = split_text(text) or ["…"]  # Telegram refuses an empty text: buttons alone go
        for index, part in enumerate(parts):  # under an ellipsis
            markup = keyboard(choices) if index == len(parts) - 1 else None
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


def private_chat_link(bot: Any, lang: str, knowledge: Any) -> InlineKeyboardMarkup:
    """A URL button that opens the private chat with the bot and starts an intake there."""
    url = f"https://t.me/{bot.username}?start={DEEP_LINK_PAYLOAD}"
    label = knowledge.message("btn_private_chat", lang)
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, url=url)]])


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
