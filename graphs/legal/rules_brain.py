"""The default brain: deterministic rules over the knowledge files, no network, no model."""

from __future__ import annotations

from datetime import datetime

from graphs.common.brain import Classification, ReadContext
from graphs.common.reading import Reading
from graphs.legal.classify import CaseClassifier
from graphs.legal.extract import FactExtractor
from knowledge.loader import Knowledge


class RulesBrain:
    """Classification from K1 cues with Korean morphemes; the reading of messages from K2 and normalisers."""

    name = "rules"

    def __init__(self, knowledge: Knowledge) -> None:
        self.classifier = CaseClassifier(knowledge.k1)
        self.extractor = FactExtractor(knowledge)

    async def classify_case(self, text: str) -> Classification:
        """Rank case types for a description."""
        return self.classifier.classify(text)

    def cues(self, text: str) -> Classification:
        """The case types the words point to, by the K1 cues."""
        return self.classifier.classify(text)

    async def read(
        self,
        text: str,
        *,
        sub_type: str,
        asked: str | None,
        now: datetime,
        context: ReadContext | None = None,
    ) -> Reading:
        """The message as a Reading: the asked field's answer, other facts, clauses, feelings
        (the message alone: `context` is for a model)."""
        return self.extractor.read(text, sub_type=sub_type, asked=asked, now=now)
