"""All record tables (sqlmodel). Graph state lives in the checkpointer; these are the staff's records."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, Index, UniqueConstraint, false
from sqlmodel import Field, SQLModel

import clock

# Telegram ids (chats, users, updates) need 64 bits: user ids pass 2**31, and supergroups'
# chat ids are below -10**12. SQLite integers are 64-bit whatever the declared type.
ID64 = BigInteger


def utcnow() -> datetime:
    """Timezone-aware now in UTC (stored as naive UTC by SQLite), on the product's clock."""
    return clock.now(UTC)


class ChatSession(SQLModel, table=True):
    """One intake conversation of one chat; its id is also the LangGraph thread id."""

    __table_args__ = (Index("ix_chatsession_chat_started", "chat_id", "started_at"),)
    id: str = Field(primary_key=True)
    chat_id: int = Field(index=True, sa_type=ID64)
    user_id: int | None = Field(default=None, sa_type=ID64)
    domain: str = "legal"
    status: str = Field(default="open", index=True)  # open | completed | cancelled
    current_state: str = "INIT"  # graph node the conversation waits in
    completion_rate: float = 0.0  # answered required fields / required fields
    started_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    # What the model's calls of this intake cost (LLM mode), from each response's `usage`
    llm_prompt_tokens: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    llm_completion_tokens: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class CaseMaster(SQLModel, table=True):
    """The case of a session: its type, sub-type and the person's own description."""

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", unique=True)
    case_type: str | None = None
    sub_case_type: str | None = None
    confidence: float = 0.0
    description: str = ""
    emotions_json: str = "[]"  # feelings expressed, kept apart from the facts
    updated_at: datetime = Field(default_factory=utcnow)


class CaseFact(SQLModel, table=True):
    """One normalised fact (canonical key) of a case; `status` unknown when it could not be had."""

    __table_args__ = (UniqueConstraint("session_id", "key"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", index=True)
    key: str
    value_json: str  # JSON of the normalised value (null when unknown)
    status: str = "answered"  # answered | unknown
    # Provenance: the person's own words the value was read from, when they were said, and
    # whether the person confirmed the reading (a button, or a yes to "…, 맞나요?").
    quote: str | None = None
    said_at: str | None = None  # ISO time of the message
    confirmed: bool | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class CaseParty(SQLModel, table=True):
    """A party of the case other than the person (the counterparty)."""

    __table_args__ = (UniqueConstraint("session_id", "role"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", index=True)
    role: str = "counterparty"
    name: str | None = None
    party_type: str | None = None


class CaseEvidence(SQLModel, table=True):
    """A file the person sent as evidence (Telegram file id, kind, caption, time)."""

    __table_args__ = (UniqueConstraint("session_id", "file_unique_id"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", index=True)
    kind: str  # photo | document
    file_id: str
    file_unique_id: str
    file_name: str | None = None
    mime_type: str | None = None
    caption: str | None = None
    received_at: datetime = Field(default_factory=utcnow)


class CaseMissingField(SQLModel, table=True):
    """A required field still missing, or recorded as unknown."""

    __table_args__ = (UniqueConstraint("session_id", "key"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", index=True)
    key: str
    reason: str  # not_answered | unknown


class CaseSummary(SQLModel, table=True):
    """The summary handed to staff: text in the K4 format and structured JSON."""

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", unique=True)
    summary_text: str
    structured_json: str
    created_at: datetime = Field(default_factory=utcnow)


class StateTransition(SQLModel, table=True):
    """A move of a session from one graph node to another."""

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", index=True)
    from_state: str | None
    to_state: str
    at: datetime = Field(default_factory=utcnow)


class ChatTurn(SQLModel, table=True):
    """Conversation history: what was asked, what the person answered, what the bot replied."""

    __table_args__ = (Index("ux_chatturn_session_input", "session_id", "input_id", unique=True),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chatsession.id", index=True)
    field: str | None = None  # the fact that was being asked when the person answered
    input_id: str | None = Field(default=None, index=True)  # the update it answers: one row each
    user_text: str = ""
    bot_text: str = ""
    at: datetime = Field(default_factory=utcnow)


class InboxUpdate(SQLModel, table=True):
    """Every inbound Telegram update, stored before it is confirmed; drops duplicates.

    The payload is kept only while the update is pending. An update that could not be read or
    handled is set aside: `processed_at` is set (it is not tried again), `failure` says why,
    and only what diagnosis needs stays (its id, chat, type, reason and times), never the
    person's words: `/forget` deletes every row of the chat, set-aside ones included.
    """

    __table_args__ = (Index("ix_inboxupdate_chat_pending", "chat_id", "processed_at"),)
    update_id: int = Field(primary_key=True, sa_type=ID64)
    chat_id: int | None = Field(default=None, index=True, sa_type=ID64)
    payload_json: str  # pending: the update as sent (ASCII JSON: any text can be stored); "{}"
    update_type: str | None = None  # message, callback_query, ... ("other": a kind unknown)
    received_at: datetime = Field(default_factory=utcnow)
    processed_at: datetime | None = Field(default=None, index=True)
    failure: str | None = None  # why it was set aside (unreadable, or the handler's error type)


class ChatOffer(SQLModel, table=True):
    """The buttons a chat was shown last, and whom to: the only presses that count.

    A press is taken only from the person the buttons were shown to, and only while they are
    the latest ones offered in the chat (the state that showed them); anything else, a forged
    `cmd:forget` included, is refused.
    """

    chat_id: int = Field(primary_key=True, sa_type=ID64)
    user_id: int | None = Field(default=None, sa_type=ID64)
    choices_json: str = "[]"  # the callback data of every button offered
    offered_at: datetime = Field(default_factory=utcnow)


class SafetyAlert(SQLModel, table=True):
    """A safety rule that fired on a message: what, when, which message; staff were notified.

    The text itself is not copied here (the conversation history holds it for staff).
    """

    id: int | None = Field(default=None, primary_key=True)
    chat_id: int = Field(index=True, sa_type=ID64)
    session_id: str | None = Field(default=None, index=True)
    code: str  # rule code in knowledge/safety.yaml, e.g. SUICIDE
    category: str  # danger | suicide | medical
    input_id: str | None = None  # the update it fired on
    at: datetime = Field(default_factory=utcnow)


class ChatPreference(SQLModel, table=True):
    """Per-chat settings that outlive sessions (the language, the domain in use)."""

    chat_id: int = Field(primary_key=True, sa_type=ID64)
    lang: str = "ko"
    # True once the person picked the language (/lang): it then stays; until then the chat
    # follows the language the person clearly writes in.
    lang_chosen: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    domain: str | None = None  # legal | medical: what the chat's messages go to; None = not chosen
    # The safety check's memory of the last day (graphs/safety/rules.py Recent): term names of
    # recent signs, the profile's standing terms, the rules raised, a crisis. Never any words.
    safety_json: str | None = None


class MedicalProfile(SQLModel, table=True):
    """A chat's medical assistant: one per chat; its id is also the LangGraph thread id."""

    id: str = Field(primary_key=True)
    chat_id: int = Field(index=True, unique=True, sa_type=ID64)
    user_id: int | None = Field(default=None, sa_type=ID64)
    subject: str = "self"  # whom the profile is about: self, or the relation a carer speaks for
    summary_text: str | None = None  # the latest pre-visit summary
    started_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ProfileItem(SQLModel, table=True):
    """One remembered item of a profile, consolidated over every mention (graphs/medical/memory)."""

    __table_args__ = (UniqueConstraint("profile_id", "key"),)
    id: int | None = Field(default=None, primary_key=True)
    profile_id: str = Field(foreign_key="medicalprofile.id", index=True)
    key: str  # slot:name, family:slot:name for a relative's
    slot: str  # demographics | conditions | symptoms | medications | vitals | labs
    name: str  # canonical English
    name_ko: str
    value_json: str = "null"
    text: str = ""  # as the person wrote it
    status: str = "current"  # current | past | denied | family
    current: bool = True  # current and fresh enough to use, at the last write
    unsure: bool = False  # an unconfirmed reading
    first_said: str  # ISO times
    last_said: str
    mentions: int = 1
    importance: float = 0.0
    history_json: str = "[]"  # earlier values: [{"value", "text", "at"}]


class MedicalQuestion(SQLModel, table=True):
    """A question the person asked the medical assistant, with the sources of its answer."""

    id: int | None = Field(default=None, primary_key=True)
    profile_id: str = Field(foreign_key="medicalprofile.id", index=True)
    question: str
    sources_json: str = "[]"
    answered: bool = False  # False: no source was good enough, and the bot said so
    uncertainty: float = 1.0
    cached: bool = False
    urgent: bool = False  # the message raised a red flag: recorded, not answered
    input_id: str | None = None  # the update it came in (ties a red flag to its alert)
    at: str  # ISO time


class ResearchResponse(SQLModel, table=True):
    """A public search service's answer kept for a while (PubMed, ClinicalTrials.gov), so the
    same research asked again sends nothing (db/repo/research_cache.py).

    Only what the public services answered to a search, under a hash of the request: no chat,
    no person, nothing anyone said, so `/forget` has nothing to delete here.
    """

    key: str = Field(primary_key=True)  # sha256 (hex) of the request: method, URL, parameters
    body: str  # the answer as the service sent it
    stored_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime = Field(index=True)  # fresh until then; prune() deletes rows past it
