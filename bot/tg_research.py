"""`/research DRUG` and `/ask QUESTION` over Telegram, for ADMIN_IDS and CLINICIAN_IDS.

One progress message is sent and edited as the steps run, then the report (split by
bot/tg_split.py) and its Markdown file. The research runs as its own task
(`Application.create_task`, its failures going to the error handler): the handler returns at
once, so the chat's lock is let go and the chat's next messages, like every other chat's, are
not held up by the minute a search can take.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram.error import TelegramError

from bot.engine import Reply
from bot.research import Command, Researcher
from bot.tg_render import send_reply

log = logging.getLogger(__name__)

PROGRESS_LINES = 8  # the progress message shows the last steps


class ProgressMessage:
    """The one message a piece of research edits as it goes."""

    def __init__(self, bot: Any, chat_id: int, title: str) -> None:
        self.bot, self.chat_id, self.title = bot, chat_id, title
        self.message_id: int | None = None
        self.lines: list[str] = []

    async def send(self) -> None:
        message = await self.bot.send_message(self.chat_id, self.title)
        self.message_id = message.message_id

    async def step(self, text: str) -> None:
        """Show one more step (a failed edit is logged: the research goes on)."""
        self.lines.append(text)
        body = "\n".join([self.title, *self.lines[-PROGRESS_LINES:]])
        try:
            await self.bot.edit_message_text(body, chat_id=self.chat_id, message_id=self.message_id)
        except TelegramError as exc:
            log.info("progress message not edited (%s)", type(exc).__name__)


async def research_in_chat(
    bot: Any, researcher: Researcher, chat_id: int, command: Command, query: str, lang: str
) -> None:
    """Run the research with its progress message, then send the report and its file."""
    kn = researcher.knowledge
    refused = researcher.check(command, query, lang)
    if refused is not None:
        await bot.send_message(chat_id, refused.text(kn))
        return
    subject = " ".join(query.split())[:60] or "…"
    progress = ProgressMessage(bot, chat_id, kn.message("research_started", lang, subject=subject))
    await progress.send()
    outcome = await researcher.run(command, query, lang, on_step=progress.step)
    reply = Reply(lang=outcome.lang)
    reply.add(outcome.text(kn))
    document = outcome.document(kn)
    if document is not None:
        reply.documents.append(document)
    await send_reply(bot, chat_id, reply)
