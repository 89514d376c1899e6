"""The medical assistant's own corpus (`medical/corpus.yaml`): short bilingual entries in the
team's words, each naming the public source it follows, validated on load."""

from __future__ import annotations

import re
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from knowledge.loader import KnowledgeError, UniqueKeyLoader
from knowledge.models import Strict

CORPUS_PATH = Path(__file__).resolve().parent / "medical" / "corpus.yaml"

Topic = Literal[
    "condition", "symptom", "medicine", "test", "lifestyle", "pregnancy_children", "emergency"
]
TOPICS: tuple[Topic, ...] = get_args(Topic)
# Whom an entry speaks to, by age: under 1, 1 to 17, 18 to 64, 65 and over.
AgeGroup = Literal["infant", "child", "adult", "older"]
AGE_GROUPS: tuple[AgeGroup, ...] = get_args(AgeGroup)
HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
KEBAB_ID = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
CONCEPT = r"^[a-z0-9]+(?:[ -][a-z0-9]+)*$"  # "atrial fibrillation", "ldl", "sglt2-inhibitor"


class MedicalCorpusError(KnowledgeError):
    """The medical corpus is missing, is not YAML, or does not match its schema."""


class Bilingual(Strict):
    """One text in Korean and English: the Korean has Hangul, the English has none, so a
    swapped or untranslated pair is an error."""

    ko: str = Field(min_length=1)
    en: str = Field(min_length=1)

    @field_validator("ko", "en")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @model_validator(mode="after")
    def languages_match(self) -> Bilingual:
        if not HANGUL.search(self.ko):
            raise ValueError("ko has no Korean (Hangul) in it")
        if HANGUL.search(self.en):
            raise ValueError("en has Korean (Hangul) in it")
        return self

    def get(self, lang: str) -> str:
        """The text in `lang`, Korean when the language is unknown."""
        return self.en if lang == "en" else self.ko


class Terms(Strict):
    """Words in each language (keywords people use, or red flags); neither list may be empty.
    Korean lists may hold Latin terms people type as they are ("HbA1c", "LDL")."""

    ko: list[str] = Field(min_length=1)
    en: list[str] = Field(min_length=1)

    @field_validator("ko", "en")
    @classmethod
    def distinct_and_filled(cls, terms: list[str]) -> list[str]:
        cleaned = [term.strip() for term in terms]
        if any(not term for term in cleaned):
            raise ValueError("has a blank term")
        repeated = sorted({term for term in cleaned if cleaned.count(term) > 1})
        if repeated:
            raise ValueError(f"repeats {', '.join(repeated)}")
        return cleaned

    @field_validator("en")
    @classmethod
    def english_only(cls, terms: list[str]) -> list[str]:
        korean = [term for term in terms if HANGUL.search(term)]
        if korean:
            raise ValueError(f"has Korean terms {korean}")
        return terms


def says(words: Terms, lowered: str) -> bool:
    """Whether a lower-cased text holds one of the words: Korean anywhere (it takes endings),
    English at the start of a word ("stairs" is not in "upstairs'", "kid" is in "kids")."""
    for word in (*words.ko, *words.en):
        word = word.lower()
        if word.isascii():
            if re.search(rf"(?<![\w]){re.escape(word)}", lowered):
                return True
        elif word in lowered:
            return True
    return False


def concept_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """`names` if they are written as the corpus tags concepts (lowercase English), else why not."""
    wrong = [n for n in names if not re.fullmatch(CONCEPT, n)]
    if wrong:
        raise ValueError(f"must be lowercase English concept names, not {wrong}")
    return names


class ConceptsOrWords(Strict):
    """Something said by corpus concept tags (a lexicon name, a medicine's class, a condition)
    or by words for what the lexicon does not name; at least one of the two."""

    concepts: tuple[str, ...] = ()
    words: Terms | None = None

    @field_validator("concepts")
    @classmethod
    def canonical(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return concept_names(names)

    @model_validator(mode="after")
    def says_something(self) -> ConceptsOrWords:
        if not self.concepts and self.words is None:
            raise ValueError("needs concepts or words")
        return self


class Source(Strict):
    """The public page whose guidance an entry follows (KDCA, MedlinePlus, NHS, ...)."""

    name: str = Field(min_length=1)
    url: str

    @field_validator("url")
    @classmethod
    def https_page(cls, url: str) -> str:
        if not url.startswith("https://") or len(url) <= len("https://") or " " in url:
            raise ValueError(f"must be an https:// address, not {url!r}")
        return url


class AppliesTo(Strict):
    """Whom an entry is for; `graphs/medical/fit.py` reads it against what is known of the
    person. Unknown fits, except an entry only for a population the person writing is not by
    default (pregnancy, infants, children): that population must be said or asked about.
    `everyone` in the YAML stands for the defaults."""

    sex: Literal["any", "female", "male"] = "any"
    ages: tuple[AgeGroup, ...] = AGE_GROUPS
    pregnancy: bool | Literal["any"] = "any"  # true: only in pregnancy; false: never in it
    conditions: tuple[str, ...] = ()  # for people with one of these: not for one denying all
    medicines: tuple[str, ...] = ()  # likewise, for people taking one of these
    asked: tuple[str, ...] = ()  # an event's entry: only when one of these is asked or held

    @model_validator(mode="before")
    @classmethod
    def everyone(cls, value: Any) -> Any:
        return {} if value == "everyone" else value

    @field_validator("ages")
    @classmethod
    def known_groups_once(cls, ages: tuple[AgeGroup, ...]) -> tuple[AgeGroup, ...]:
        if not ages or len(set(ages)) != len(ages):
            raise ValueError("ages must name each group at most once, and at least one")
        return tuple(g for g in AGE_GROUPS if g in ages)

    @field_validator("conditions", "medicines", "asked")
    @classmethod
    def canonical(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return concept_names(names)

    @model_validator(mode="after")
    def coherent(self) -> AppliesTo:
        if self.pregnancy is True and (self.sex == "male" or "older" in self.ages):
            raise ValueError("a pregnancy entry cannot be for men or older adults")
        return self

    @property
    def restricted(self) -> tuple[str, ...]:
        """The populations this entry is only for, which must be said or asked about."""
        out = ("pregnancy",) if self.pregnancy is True else ()
        if not {"adult", "older"} & set(self.ages):
            out += tuple(g for g in self.ages)
        return out


class MedicalEntry(Strict):
    """One general-information entry on a topic, in both languages."""

    id: str = Field(pattern=KEBAB_ID)
    topic: Topic
    title: Bilingual
    text: Bilingual  # 3-8 sentences each; the Korean written for Korean readers, 해요체
    keywords: Terms  # what people type, lay words included (당뇨, blood sugar)
    concepts: list[str] = Field(min_length=1)  # canonical English names, lowercase
    applies_to: AppliesTo  # whom it is for (`everyone` when anyone may be served it)
    source: Source
    red_flags: Terms | None = None  # signs that need urgent care, where the topic has them

    @field_validator("concepts")
    @classmethod
    def canonical_concepts(cls, concepts: list[str]) -> list[str]:
        wrong = [c for c in concepts if not re.fullmatch(CONCEPT, c)]
        if wrong:
            raise ValueError(f"concepts must be lowercase English names, not {wrong}")
        return concepts


class MedicalCorpus(Strict):
    """Every entry of the corpus, in file order; ids are unique."""

    entries: tuple[MedicalEntry, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def unique_ids(self) -> MedicalCorpus:
        seen: set[str] = set()
        for entry in self.entries:
            if entry.id in seen:
                raise ValueError(f"duplicate id {entry.id!r}")
            seen.add(entry.id)
        return self

    @cached_property
    def _by_id(self) -> dict[str, MedicalEntry]:
        return {entry.id: entry for entry in self.entries}

    def by_id(self, entry_id: str) -> MedicalEntry:
        """The entry with this id (KeyError if there is none)."""
        return self._by_id[entry_id]

    def by_topic(self, topic: Topic) -> list[MedicalEntry]:
        """The entries on one topic, in file order."""
        return [entry for entry in self.entries if entry.topic == topic]


def _where(loc: tuple[int | str, ...], raw: list[Any]) -> str:
    """Name a validation error's place: `entry 3 (asthma-overview): text.en`."""
    if len(loc) < 2 or loc[0] != "entries" or not isinstance(loc[1], int):
        return ".".join(str(part) for part in loc) or "(top level)"
    index, rest = loc[1], ".".join(str(part) for part in loc[2:])
    item = raw[index] if index < len(raw) else None
    entry_id = item.get("id") if isinstance(item, dict) else None
    place = f"entry {index}" + (f" ({entry_id})" if entry_id else "")
    return f"{place}: {rest}" if rest else place


def parse_medical_corpus(text: str, *, name: str = "corpus.yaml") -> MedicalCorpus:
    """Parse and validate corpus YAML; errors name the file, the entry and the problem."""
    try:
        # A SafeLoader that also refuses a key repeated in one entry (a second `text:` would
        # otherwise replace the first without a word).
        raw = yaml.load(text, Loader=UniqueKeyLoader)
    except yaml.YAMLError as exc:
        raise MedicalCorpusError(f"{name}: not valid YAML: {exc}") from exc
    if not isinstance(raw, list):
        raise MedicalCorpusError(f"{name}: the top level must be a list of entries")
    try:
        return MedicalCorpus.model_validate({"entries": raw})
    except ValidationError as exc:
        problems = "; ".join(
            f"{_where(err['loc'], raw)}: {err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors()[:5]
        )
        raise MedicalCorpusError(f"{name}: {problems}") from exc


def load_medical_corpus_file(path: Path) -> MedicalCorpus:
    """Read and validate one corpus file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise MedicalCorpusError(f"{path.name}: file not found") from exc
    return parse_medical_corpus(text, name=path.name)


@cache
def load_medical_corpus() -> MedicalCorpus:
    """The corpus shipped next to this module, loaded once per process."""
    return load_medical_corpus_file(CORPUS_PATH)


def by_id(entry_id: str) -> MedicalEntry:
    """The shipped entry with this id (KeyError if there is none)."""
    return load_medical_corpus().by_id(entry_id)
