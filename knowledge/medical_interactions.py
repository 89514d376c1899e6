"""Interactions and contraindications a pharmacist would name (`medical/interactions.yaml`):
each rule pairs two sides (a medicine class, a condition, a food or drink) with a plain
warning in both languages and the public page it follows, validated on load."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from knowledge.loader import KnowledgeError, UniqueKeyLoader, validation_problems
from knowledge.medical_corpus import (
    KEBAB_ID,
    Bilingual,
    ConceptsOrWords,
    Source,
    load_medical_corpus,
    says,
)
from knowledge.models import Strict

INTERACTIONS_PATH = Path(__file__).resolve().parent / "medical" / "interactions.yaml"


class Side(ConceptsOrWords):
    """What one side of a rule is: corpus concept tags (a lexicon name, a medicine's class, a
    condition: what `MedicalLexicon.concepts_of` gives) and words for what the lexicon does
    not name (a food, a drink, a medicine it lacks)."""

    def named(self, tags: set[str] | frozenset[str], text: str = "") -> bool:
        """Whether these tags, or this (lower-cased) text, name this side."""
        if tags & set(self.concepts):
            return True
        return bool(text) and self.words is not None and says(self.words, text)


class Interaction(Strict):
    """One pair to warn about: `this` and `that` together, at the level a pharmacist would."""

    id: str = Field(pattern=KEBAB_ID)
    level: Literal["avoid", "caution"]  # avoid: do not combine unless a doctor says so
    this: Side
    that: Side
    warning: Bilingual  # the plain first line of the answer
    source: Source
    # The corpus entry saying the same for questions that name both sides: left out of an
    # answer that already leads with this warning, so that the rest is the rest.
    entry: str | None = None


class Interactions(Strict):
    rules: tuple[Interaction, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def unique_ids(self) -> Interactions:
        ids = [r.id for r in self.rules]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"duplicate ids {repeated}")
        corpus = load_medical_corpus()
        for rule in self.rules:
            try:
                rule.entry and corpus.by_id(rule.entry)
            except KeyError:
                raise ValueError(f"rule {rule.id}: no corpus entry {rule.entry!r}") from None
        return self


class InteractionsError(KnowledgeError):
    """The interaction table is not YAML or does not match its schema."""


def parse_interactions(text: str, *, name: str = "interactions.yaml") -> Interactions:
    """Parse and validate the table; errors name the file, the rule and the problem."""
    try:
        raw = yaml.load(text, Loader=UniqueKeyLoader)
        return Interactions.model_validate({"rules": raw})
    except yaml.YAMLError as exc:
        raise InteractionsError(f"{name}: not valid YAML: {exc}") from exc
    except ValidationError as exc:
        raise InteractionsError(f"{name}: {validation_problems(exc)}") from exc


@cache
def load_interactions() -> Interactions:
    """The table shipped next to this module, loaded once per process."""
    return parse_interactions(INTERACTIONS_PATH.read_text(encoding="utf-8"))
