"""What the engine's parts are given: the shared services, built once per engine, and the
handling of one inbound message, passed along the calls of that handling.

`Services` replaces the attributes the engine's mixins used to share on `self`; `Handling`
replaces the context variable that carried a handling through them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from sqlalchemy.ext.asyncio import AsyncEngine

import clock
from bot import messages
from bot.alerts import SafetyDesk
from bot.chat_tags import ChatTags
from bot.config import Settings
from bot.messages import Inbound, Reply
from db import repo
from db.engine import Checkpoints
from db.locks import ChatLocks
from graphs.common.brain import Brain
from graphs.common.context import Context
from graphs.common.usage import Meter, turn_deadline
from graphs.registry import IntakeSpec
from graphs.safety.rules import Recent
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge

log = logging.getLogger("bot.engine")


@dataclass(frozen=True)
class Services:
    """The long-lived dependencies every part of the engine shares."""

    settings: Settings
    knowledge: Knowledge
    brain: Brain
    kb: KnowledgeBase  # retrieval over the knowledge (exact lookups when no index is open)
    records: AsyncEngine  # the records database
    checkpoints: Checkpoints  # the one checkpointer of this process, and its pruning
    legal: IntakeSpec  # the legal intake: how to read and render its state
    legal_graph: CompiledStateGraph  # the legal intake, compiled on the checkpointer
    medical_graph: CompiledStateGraph  # the medical assistant, on the same checkpointer
    safety: SafetyDesk  # red flags, what to do now, and the staff notices
    chat_locks: ChatLocks  # a chat's turns one at a time, across processes
    chat_tag: ChatTags  # how logs name a chat: a keyed hash (bot/chat_tags.py)

    def now(self) -> datetime:
        """The time on the staff's calendar (the installation's zone)."""
        return clock.now(self.settings.zone)

    def context(self, inbound: Inbound, lang: str) -> Context:
        """A graph's run context. Relative dates (어제, 지난달, 6/1) are read on the person's
        calendar, not UTC's: 05:00 in Seoul is still "yesterday" in UTC."""
        now = inbound.at.astimezone(self.settings.zone)
        llm = getattr(self.brain, "client", None)  # LLM mode: the brain's model client
        deadline = None
        if llm is not None:  # the turn's (see Engine.handle), else this run's own budget
            deadline = turn_deadline() or (
                asyncio.get_running_loop().time() + self.settings.intake_llm_budget
            )
        return Context(
            knowledge=self.knowledge,
            brain=self.brain,
            lang=lang,
            now=now,
            kb=self.kb,
            llm=llm,
            llm_deadline=deadline,
        )

    async def retrying(self, write: Callable[[], Awaitable[None]], label: str) -> bool:
        """Run a records write, retried with back-off; False (logged) when it never went in."""
        for attempt, pause in enumerate((*messages.RECORD_RETRIES, None), start=1):
            try:
                await write()
                return True
            except Exception as exc:  # noqa: BLE001 - any storage failure is retried, then logged
                if pause is None:
                    log.error(
                        "%s records not written after %d attempts: %s",
                        label,
                        attempt,
                        type(exc).__name__,
                    )
                    return False
                log.warning("%s records write failed (%s), retrying", label, type(exc).__name__)
                await asyncio.sleep(pause)
        return False


def thread_config(thread_id: str) -> dict[str, Any]:
    """The LangGraph config of a thread."""
    return {"configurable": {"thread_id": thread_id}}


@dataclass
class Handling:
    """One `Engine.handle` call: the message, the reply being built, what was read of the chat,
    and what the handling will write at its end (in one transaction)."""

    inbound: Inbound
    reply: Reply
    view: repo.ChatView
    lang: str | None = None  # a language to remember for the chat
    case: repo.CaseChanges | None = None  # what the turn changed in its session's records
    row: dict[str, Any] | None = None  # the turn's question-answer row
    profile: repo.ProfileSnapshot | None = None  # the medical profile as the handling leaves it
    after: list[Callable[[], Awaitable[None]]] = field(default_factory=list)  # once written
    fresh: bool = True  # False once sessions were opened or closed after the read
    forgotten: bool = False  # the chat was erased (/forget): nothing of it is written back
    safety: Recent | None = None  # the safety check's memory, written back when it changed
    sub_type: str | None = None  # the legal intake's sub-type as the turn left it
    ahead: int = 0  # the reply's first messages that go out whatever the turn does (safety)
    # Delivers messages at once, ahead of the turn (a channel that can: Telegram), or None
    first: Callable[[Reply], Awaitable[bool]] | None = None
    meter: Meter = field(default_factory=Meter)  # the tokens of the model's calls (LLM mode)

    @property
    def at(self) -> datetime:
        """When the message came."""
        return self.inbound.at

    def sessions_changed(self, *, forgotten: bool = False) -> None:
        """Sessions were opened, closed or deleted: what the handling read of them is stale
        (and after /forget, no language is written back for the chat)."""
        self.fresh = False
        if forgotten:
            self.lang = None
            self.forgotten = True
