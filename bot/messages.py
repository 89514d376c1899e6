"""What goes in and out of the engine, in channel-neutral form: an Inbound, a Reply."""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from datetime import UTC, datetime
from typing import Any, Literal

import clock
from bot.alerts import Notice
from graphs.common.text import valid_unicode

MAX_INPUT_CHARS = 4000  # longer messages are cut, and the person is told
RECORD_RETRIES = (0.05, 0.2, 0.5)  # back-off between attempts to write the records
EXPORT_FORMATS = ("json", "csv", "md")
CONTROL_PREFIXES = ("cmd:", "lang:", "domain:")  # buttons that steer the conversation, not answers

InboundKind = Literal["text", "choice", "command", "file", "unsupported", "edited", "start"]


@dataclass(frozen=True, kw_only=True)
class Inbound:
    """What a person sent, in channel-neutral form."""

    chat_id: int
    kind: InboundKind
    text: str = ""
    data: str = ""  # button data
    command: str = ""  # command name without the slash
    args: tuple[str, ...] = ()
    file: dict[str, Any] | None = None
    user_id: int | None = None
    input_id: str | None = None  # e.g. the Telegram update id; a replay is recognised by it
    language_code: str | None = None
    at: datetime = dc_field(default_factory=lambda: clock.now(UTC))


def clean_inbound(inbound: Inbound) -> Inbound:
    """The inbound with every text in it valid Unicode, so no layer behind the edge trips on it."""
    file = inbound.file
    if file:
        file = {k: valid_unicode(v) if isinstance(v, str) else v for k, v in file.items()}
    return replace(
        inbound,
        text=valid_unicode(inbound.text),
        data=valid_unicode(inbound.data),
        command=valid_unicode(inbound.command),
        args=tuple(valid_unicode(a) for a in inbound.args),
        file=file,
    )


@dataclass
class Document:
    """A file to send back (an export)."""

    filename: str
    content: bytes
    caption: str = ""


@dataclass
class Reply:
    """What the channel renders: messages with buttons, and where the intake stands."""

    messages: list[dict[str, Any]] = dc_field(default_factory=list)
    field: str | None = None
    progress: int = 0
    state: str | None = None
    documents: list[Document] = dc_field(default_factory=list)
    lang: str = "ko"
    # The intake stays where it was and its question is not shown again (/summary, /forget's
    # confirmation, ...): the buttons of that question keep counting beside any new ones.
    keeps_question: bool = False
    refused: bool = False  # a button press that did not count
    alerts: list[Any] = dc_field(default_factory=list)  # safety rules that fired on the input
    notices: list[Notice] = dc_field(default_factory=list)  # messages for staff (ADMIN_IDS)
    level_again: bool = False  # "can I wait?" was answered with the level of a red flag
    # Messages at the head of `messages` the channel delivered already, ahead of the turn (the
    # safety reply, sent the moment the rules fired): the channel sends the rest.
    sent: int = 0
    help_coming: bool = False  # a 119-now alert was raised in the last FIRST_AID_HOLDS before it

    def add(self, text: str, choices: list[dict[str, str]] | None = None) -> None:
        """Append a message."""
        self.messages.append({"text": text, "choices": choices or []})
