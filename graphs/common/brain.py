"""The brain: every judgement a node needs, behind one protocol (rules now, an LLM later)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from graphs.common.reading import Reading

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
class ReadContext:
    """What a reader in context sees besides the message: the record so far (compact lines),
    the bot's last message (the question asked, or the summary), and the options of the field
    asked. The rules read the message alone; a model reads it in this context."""

    record: str = ""
    last_message: str = ""
    options: tuple[str, ...] = ()
    finished: bool = False  # the intake is summarised: a message may correct or add to it


class Brain(Protocol):
    """Judgements the intake graphs need; nodes never know which implementation they got."""

    name: str

    async def classify_case(self, text: str) -> Classification:
        """Rank case types and sub-types for a problem description."""
        ...

    def cues(self, text: str) -> Classification:
        """The case types the words themselves point to (the rules' cues, never a model): for
        checking what a few words name, not for classifying a description."""
        ...

    async def read(
        self,
        text: str,
        *,
        sub_type: str,
        asked: str | None,
        now: datetime,
        context: ReadContext | None = None,
    ) -> Reading:
        """A message as a Reading of the sub-type's fields, `asked` being the field just asked,
        in `context` where the reader can use it."""
        ...
