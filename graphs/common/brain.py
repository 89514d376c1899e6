"""The brain: every judgement a node needs, behind one protocol (rules now, an LLM later)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from graphs.common.classify import Classification


@dataclass(frozen=True)
class Extraction:
    """What one message says: the asked field's value (or why not), other facts, feelings."""

    answer: Any = None  # normalised value for the asked field, None when not given
    invalid: str | None = None  # reason code when an answer was given but cannot be used
    unknown: bool = False  # the person said they do not know
    facts: dict[str, Any] = field(default_factory=dict)  # other fields found, latest last
    emotions: tuple[dict[str, str], ...] = ()  # {"kind": ..., "cue": ...}
    correction: bool = False  # the message says an earlier statement was wrong
    # Fields whose value a word of theirs placed ("보증금 2억", "6월 1일에 빌려줬"), not the
    # default of its kind: a value said of the field itself.
    cued: frozenset[str] = frozenset()
    # Values the message takes back ("4월 아니고", "not 3 million"): (kind, value, as written).
    taken_back: tuple[tuple[str, Any, str], ...] = ()
    other_values: int = 0  # dates and amounts said of another event or role (kept in the story)


class Brain(Protocol):
    """Judgements the intake graphs need; nodes never know which implementation they got."""

    name: str

    async def classify_case(self, text: str) -> Classification:
        """Rank case types and sub-types for a problem description."""
        ...

    async def extract_facts(
        self, text: str, *, sub_type: str, asked: str | None, now: datetime
    ) -> Extraction:
        """Extract and normalise facts from a message, `asked` being the field just asked."""
        ...
