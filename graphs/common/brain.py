"""The brain: every judgement a node needs, behind one protocol (rules now, an LLM later)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

# Confidence at or above which the top candidate may be taken without asking the user.
# With no rival, a keyword plus a phrase gives 0.67 and a lone phrase 0.57, but a lone keyword
# only 0.40; two equal rivals give half the top score, never 0.5. On descriptions written after
# the cues were fixed, 94% of the texts at or above 0.5 were right (about half of them got there).
CONFIDENT = 0.5


@dataclass(frozen=True)
class Candidate:
    """One possible classification and its score (0..1; scores of candidates need not sum to 1)."""

    case_type: str
    sub_type: str
    score: float


@dataclass(frozen=True)
class Classification:
    """Up to three candidates, best first, and the confidence in the first."""

    candidates: tuple[Candidate, ...]
    confidence: float

    @property
    def confident(self) -> bool:
        """True when the top candidate can be used without confirming it with the user."""
        return self.confidence >= CONFIDENT

    @property
    def top(self) -> Candidate | None:
        """The best candidate, or None when nothing matched."""
        return self.candidates[0] if self.candidates else None


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
