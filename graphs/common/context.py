"""The run context every graph node receives as `runtime.context`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from graphs.common.brain import Brain
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge


@dataclass(frozen=True, kw_only=True)
class Context:
    """Dependencies of one graph run: knowledge, brain, the user's language and the message time."""

    knowledge: Knowledge
    brain: Brain
    lang: str  # "ko" | "en": language of every text a node writes in this run
    now: datetime  # time of the message being handled (relative dates resolve against it)
    kb: KnowledgeBase | None = None  # retrieval over the knowledge; None = exact lookups only

    @property
    def knowledge_base(self) -> KnowledgeBase:
        """The knowledge base (exact lookups even when no index was opened)."""
        return self.kb or KnowledgeBase(self.knowledge)
