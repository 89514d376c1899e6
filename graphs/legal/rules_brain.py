"""The default brain: deterministic rules over the knowledge files, no network, no model."""

from __future__ import annotations

from datetime import datetime

from graphs.common.brain import Classification, Extraction
from graphs.legal.classify import CaseClassifier
from graphs.legal.extract import FactExtractor
from knowledge.loader import Knowledge


class RulesBrain:
    """Classification from K1 cues with Korean morphemes; fact extraction from K2 and normalisers."""

    name = "rules"

    def __init__(self, knowledge: Knowledge) -> None:
        self.classifier = CaseClassifier(knowledge.k1)
        self.extractor = FactExtractor(knowledge)

    async def classify_case(self, text: str) -> Classification:
        """Rank case types for a description."""
        return self.classifier.classify(text)

    async def extract_facts(
        self, text: str, *, sub_type: str, asked: str | None, now: datetime
    ) -> Extraction:
        """Extract the asked field and any other stated facts from a message."""
        return self.extractor.extract(text, sub_type=sub_type, asked=asked, now=now)
