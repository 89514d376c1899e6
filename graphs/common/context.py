"""The run context every graph node receives as `runtime.context`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from graphs.common.brain import Brain
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge

if TYPE_CHECKING:  # the openai package is imported only in LLM mode
    from graphs.common.llm import LLMClient


@dataclass(frozen=True, kw_only=True)
class Context:
    """Dependencies of one graph run: knowledge, brain, the user's language and the message time."""

    knowledge: Knowledge
    brain: Brain
    lang: str  # "ko" | "en": language of every text a node writes in this run
    now: datetime  # time of the message being handled (relative dates resolve against it)
    kb: KnowledgeBase | None = None  # retrieval over the knowledge; None = exact lookups only
    llm: LLMClient | None = None  # the model in LLM mode; None = the rules alone
    llm_deadline: float | None = None  # event-loop time by which this run's model calls end
    danger: bool = False  # the message raised a safety alert (its reply went out first)

    def llm_left(self) -> float:
        """Seconds left of this run's model budget (0 without a model or once it is spent)."""
        if self.llm is None or self.llm_deadline is None:
            return 0.0
        return max(0.0, self.llm_deadline - asyncio.get_running_loop().time())

    @property
    def knowledge_base(self) -> KnowledgeBase:
        """The knowledge base (exact lookups even when no index was opened)."""
        return self.kb or KnowledgeBase(self.knowledge)
