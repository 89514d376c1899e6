"""How a medical question is steered to the entries that fit it (`medical/answering.yaml`):
the words that name a population, the words that reject an answer, and the descriptions that
lead to an entry (tremor and a cold sweat on a sulfonylurea: low blood sugar). Validated on
load; the corpus entries named must exist."""

from __future__ import annotations

import re
from functools import cache, cached_property
from pathlib import Path

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from knowledge.loader import KnowledgeError, UniqueKeyLoader, validation_problems
from knowledge.medical_corpus import (
    AGE_GROUPS,
    KEBAB_ID,
    AgeGroup,
    ConceptsOrWords,
    Terms,
    load_medical_corpus,
    says,
)
from knowledge.models import Strict

ANSWERING_PATH = Path(__file__).resolve().parent / "medical" / "answering.yaml"


class Sign(ConceptsOrWords):
    """One sign a description must show: a concept named, or one of the words."""

    def shown(self, tags: frozenset[str], lowered: str) -> bool:
        return bool(tags & set(self.concepts)) or (
            self.words is not None and says(self.words, lowered)
        )


class Lead(Strict):
    """A description that points at one entry."""

    id: str = Field(pattern=KEBAB_ID)
    entry: str
    signs: tuple[Sign, ...] = Field(min_length=1)
    need: int | None = None  # how many signs must be shown (all when not given)
    with_: tuple[str, ...] = Field(default=(), alias="with")  # held or named, one of these
    ages: tuple[AgeGroup, ...] = AGE_GROUPS

    @model_validator(mode="after")
    def need_fits(self) -> Lead:
        if self.need is not None and not 1 <= self.need <= len(self.signs):
            raise ValueError(f"need must be between 1 and {len(self.signs)}")
        return self


class Answering(Strict):
    populations: dict[str, Terms]
    relation_ages: dict[str, AgeGroup]
    rejections: tuple[str, ...] = Field(min_length=1)
    leads: tuple[Lead, ...] = ()

    @field_validator("populations")
    @classmethod
    def known_populations(cls, populations: dict[str, Terms]) -> dict[str, Terms]:
        unknown = sorted(set(populations) - {"pregnancy", "postpartum", *AGE_GROUPS})
        if unknown:
            raise ValueError(f"unknown populations {unknown}")
        return populations

    @field_validator("rejections")
    @classmethod
    def compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from exc
        return patterns

    @model_validator(mode="after")
    def entries_exist(self) -> Answering:
        corpus = load_medical_corpus()
        for lead in self.leads:
            try:
                corpus.by_id(lead.entry)
            except KeyError:
                raise ValueError(f"lead {lead.id}: no corpus entry {lead.entry!r}") from None
        return self

    @cached_property
    def rejection_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.I) for p in self.rejections)

    def populations_named(self, lowered: str) -> frozenset[str]:
        """The populations a (lower-cased) text names: "아기" → infant and child."""
        return frozenset(name for name, words in self.populations.items() if says(words, lowered))

    def rejects(self, text: str) -> re.Match[str] | None:
        """The words by which a message says the answer before missed, if it does."""
        for pattern in self.rejection_patterns:
            found = pattern.search(text)
            if found:
                return found
        return None


class AnsweringError(KnowledgeError):
    """answering.yaml is not YAML or does not match its schema."""


def parse_answering(text: str, *, name: str = "answering.yaml") -> Answering:
    try:
        return Answering.model_validate(yaml.load(text, Loader=UniqueKeyLoader))
    except yaml.YAMLError as exc:
        raise AnsweringError(f"{name}: not valid YAML: {exc}") from exc
    except ValidationError as exc:
        raise AnsweringError(f"{name}: {validation_problems(exc)}") from exc


@cache
def load_answering() -> Answering:
    """The file shipped next to this module, loaded once per process."""
    return parse_answering(ANSWERING_PATH.read_text(encoding="utf-8"))
