"""Schema and loader of the medical lexicon (knowledge/medical/lexicon.yaml).

The lexicon is data: conditions, symptoms, medicines, value cues and the cues that say how a
mention is meant (denied, past, about a relative), in Korean and English. Validation on load
catches a typo, a broken pattern or a spelling claimed by two entries before any message is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, cached_property
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, field_validator, model_validator

from knowledge.loader import UniqueKeyLoader
from knowledge.models import Strict  # unknown keys are errors; frozen

LEXICON_PATH = Path(__file__).resolve().parent / "medical" / "lexicon.yaml"

TermSlot = Literal["conditions", "symptoms", "medications"]
_GROUP = re.compile(r"\(([^()]*)\)")
_HANGUL = re.compile(r"[가-힣]")
_KEY_DROP = re.compile(r"[\s\-'^$]")
_CANONICAL = r"^[a-z0-9][a-z0-9 '/\-.]*$"


def expand_form(form: str) -> list[str]:
    """Every spelling a form stands for: "(a|b|)" is one of its parts, "(a)" is optional.

    "머리(가|) 아파" gives ["머리가 아파", "머리 아파"]; the "^" and "$" marks are kept.
    """
    group = _GROUP.search(form)
    if group is None:
        return [form]
    options = group.group(1).split("|")
    if len(options) == 1:
        options.append("")
    spellings: list[str] = []
    for option in options:
        spellings.extend(expand_form(form[: group.start()] + option + form[group.end() :]))
    return spellings


def surface_key(text: str) -> str:
    """The key a spelling is known by: lower case, without spaces, hyphens, apostrophes or marks.

    A match found in a message maps back to its entry through the same key, so "A-fib",
    "a fib" and "afib" are one spelling.
    """
    return _KEY_DROP.sub("", text).lower()


def _check_form(form: str) -> str:
    """Raise on a form the extractor could not compile: empty, nested or unbalanced groups,
    or a "^"/"$" mark anywhere but at its edge."""
    body = form.removeprefix("^").removesuffix("$")
    if not body.strip():
        raise ValueError(f"empty form {form!r}")
    depth = 0
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth not in (0, 1):
            raise ValueError(f"unbalanced or nested group in {form!r}")
    if depth or "^" in body or "$" in body:
        raise ValueError(f"bad group or mark in {form!r}")
    return form


def _check_patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """Compile every pattern once so that a broken regex fails on load, not on a message."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad pattern {pattern!r}: {exc}") from exc
    return patterns


class Forms(Strict):
    """How something is written in Korean and in English (see the syntax in the YAML header)."""

    ko: tuple[str, ...] = ()
    en: tuple[str, ...] = ()

    @field_validator("ko", "en")
    @classmethod
    def _well_formed(cls, forms: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_form(form) for form in forms)

    def spellings(self) -> list[str]:
        """Every expanded spelling, Korean first."""
        return [spelling for form in (*self.ko, *self.en) for spelling in expand_form(form)]


class Term(Strict):
    """A named thing a message may mention: a condition, a symptom, a medicine or a group."""

    name: str = Field(pattern=_CANONICAL)  # canonical English, lower case
    ko: str = Field(min_length=1)  # Korean name
    forms: Forms
    exclude: tuple[str, ...] = ()  # phrases in which a form does not count ("통풍이 잘")

    @field_validator("ko")
    @classmethod
    def _korean(cls, ko: str) -> str:
        if not _HANGUL.search(ko):
            raise ValueError(f"Korean name {ko!r} has no Hangul")
        return ko

    def spellings(self) -> list[str]:
        """Every spelling that names this term."""
        return self.forms.spellings()

    @model_validator(mode="after")
    def _names_are_spellings(self) -> Term:
        keys = {surface_key(spelling) for spelling in self.spellings()}
        for label in (self.name, self.ko):
            if surface_key(label) not in keys:
                raise ValueError(f"{self.name}: {label!r} is not among its own forms")
        return self


class Condition(Term):
    """A diagnosis, a state (pregnancy), a habit (smoking) or an allergy."""

    kind: Literal["disease", "state", "habit", "allergy"] = "disease"


class Symptom(Term):
    """Something the person feels or notices."""


class MedicationGroup(Term):
    """A medicine named by what it is for ("혈압약", "blood thinners")."""


class Medication(Term):
    """One medicine by its generic name, with its class, lay groups and brand names."""

    drug_class: str = Field(min_length=3)
    groups: tuple[str, ...] = ()  # names of MedicationGroup entries
    brands: tuple[str, ...] = ()  # matched like forms

    @field_validator("brands")
    @classmethod
    def _brand_forms(cls, brands: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_form(brand) for brand in brands)

    def spellings(self) -> list[str]:
        return [*self.forms.spellings(), *(s for brand in self.brands for s in expand_form(brand))]


class Unit(Strict):
    """A way a value's unit is written, and how to convert it to the canonical unit."""

    words: tuple[str, ...] = Field(min_length=1)
    factor: float = 1.0  # canonical = value * factor + offset
    offset: float = 0.0
    # Assumed (and the item marked unsure) when no unit is written and the number is
    # impossible in the canonical unit but possible in this one.
    guess: bool = False


class Reading(Strict):
    """One number a measure gives (blood pressure gives two), with its plausible range."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    ko: str = Field(min_length=1)
    min: float
    max: float
    cues: Forms = Forms()  # cues naming just this reading ("수축기", "diastolic")

    @model_validator(mode="after")
    def _range(self) -> Reading:
        if self.min >= self.max:
            raise ValueError(f"{self.key}: min must be below max")
        return self


class Measure(Strict):
    """A vital sign or lab value read from a cue and a number ("혈압 150/95", "A1c 6.8")."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")  # carried by a rejection ("bp")
    slot: Literal["vitals", "labs"]
    ko: str = Field(min_length=1)
    unit: str = Field(min_length=1)  # canonical unit
    decimals: int = Field(ge=0, le=3)  # rounding of the stored value; 0 stores an int
    units: tuple[Unit, ...] = Field(min_length=1)  # the first is the canonical one
    readings: tuple[Reading, ...] = Field(min_length=1, max_length=2)
    cues: Forms
    weak_cues: Forms = Forms()  # count only with a written unit ("열이 38도")
    blockers: tuple[str, ...] = ()  # words right after a cue that make it no reading ("혈압약")

    @model_validator(mode="after")
    def _canonical_unit_first(self) -> Measure:
        first = self.units[0]
        if first.factor != 1.0 or first.offset != 0.0 or first.guess:
            raise ValueError(f"{self.key}: the first unit must be the canonical one")
        return self


class Age(Strict):
    """How an age is written: units ("세", "years old"), cues ("나이는") and native numerals."""

    ko: str
    min: int = Field(ge=0)
    max: int = Field(le=150)
    units: Forms
    cues: Forms
    native_tens: dict[str, int]
    native_ones: dict[str, int]


class SexWords(Strict):
    """Words for one sex in Korean and English."""

    ko: tuple[str, ...] = Field(min_length=1)
    en: tuple[str, ...] = Field(min_length=1)


class Sex(Strict):
    """Words that state the person's sex."""

    ko: str
    male: SexWords
    female: SexWords


class Topic(Strict):
    """What a question may ask about beyond the person's own items (exercise, diet): never
    stored; its name is the medical corpus's concept tag."""

    name: str = Field(pattern=_CANONICAL)
    ko: str = Field(min_length=1)
    forms: Forms


class Demographics(Strict):
    """Age and sex."""

    age: Age
    sex: Sex


class Relation(Strict):
    """A relative a message may be about: family history, or the person a carer speaks for."""

    name: str = Field(pattern=_CANONICAL)
    ko: str
    sex: Literal["male", "female"] | None = None
    subject: bool = True  # False for the family as a whole: never the person cared for
    other: bool = False  # not family: a friend, a colleague; what is said of them is not kept
    # Family by marriage (a spouse, an in-law): the person cared for, or nobody's history; what
    # they have is no family history of the patient.
    blood: bool = True
    # The generic word for one person cared for: "son" and "daughter" are a "child" ("애",
    # "아들" and "우리 애기" in one chat are one person, not two).
    kind_of: str | None = None
    forms: Forms


class CueSet(Strict):
    """Patterns that act on the words before them, after them, or right after them."""

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    right_after: tuple[str, ...] = ()  # anchored at the end of the word: "^..."

    @field_validator("before", "after", "right_after")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_patterns(patterns)


class ClauseCues(Strict):
    """What a clause does (`graphs/medical/clauses.py`): only statements about the person are
    stored. Korean endings are read from Kiwi morphemes as well (`ko_endings`)."""

    breaks: tuple[str, ...] = ()  # further clause edges: "if", a Korean condition "…면 "
    question: tuple[str, ...] = ()  # the clause asks
    hypothetical: tuple[str, ...] = ()  # a condition, a plan or a permission asked for
    rejected: tuple[str, ...] = ()  # the person sets a topic aside ("술 얘기 안 했는데요")
    contrast_after: tuple[str, ...] = ()  # the words before it are set aside ("X 말고 Y")
    contrast_before: tuple[str, ...] = ()  # the words after it are set aside ("not X but Y")
    contrast_end: tuple[str, ...] = ()  # where a set-aside stretch after a cue ends ("but")
    taking: tuple[str, ...] = ()  # an English predicate of having or taking (a contrast's Y)
    possessive: tuple[str, ...] = ()  # "my/his X" inside a question: the person's own
    # Kiwi morphemes (form/TAG) that end a Korean clause that asks, supposes or asks leave.
    ko_question_endings: tuple[str, ...] = ()
    ko_hypothetical_endings: tuple[str, ...] = ()

    @field_validator(
        "breaks",
        "question",
        "hypothetical",
        "rejected",
        "contrast_after",
        "contrast_before",
        "contrast_end",
        "taking",
        "possessive",
    )
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_patterns(patterns)


class Details(Strict):
    """What is kept beside a symptom or condition: how long, when it comes, a pregnancy week."""

    duration: tuple[str, ...] = ()
    pattern: tuple[str, ...] = ()
    pregnancy_week: tuple[str, ...] = ()  # group `w`: the week ("임신 32주", "32 weeks")

    @field_validator("duration", "pattern", "pregnancy_week")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_patterns(patterns)


class ReadingContext(Strict):
    """Where or when a reading was taken ("home", "clinic", "fasting", "after_meal")."""

    name: str = Field(pattern=_CANONICAL)
    ko: str
    en: str
    cues: tuple[str, ...] = Field(min_length=1)

    @field_validator("cues")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_patterns(patterns)


class Cues(Strict):
    """Regular expressions (case-insensitive) that say how a mention is meant."""

    negation: CueSet
    stopped: CueSet
    history: tuple[str, ...]
    history_condition: tuple[str, ...]
    current: tuple[str, ...]
    uncertain: tuple[str, ...]
    death: tuple[str, ...]
    self_markers: tuple[str, ...]  # the speaker talks about themself
    pronoun: tuple[str, ...]
    carer_before_weak: tuple[str, ...]
    carer_before_strong: tuple[str, ...]
    carer_after: tuple[str, ...]
    carer_anywhere: tuple[str, ...]
    # anchored right after a relation word: their thing, not them ("와이프 혈당기로", "my wife's meter")
    not_a_person_after: tuple[str, ...] = ()
    # words of fever or a thermometer: a bare 38.4 in the message is a temperature
    thermometer_context: tuple[str, ...] = ()
    approximate_before: tuple[str, ...]
    approximate_after: tuple[str, ...]
    counters: tuple[str, ...]
    changes: tuple[str, ...]
    changes_before: tuple[str, ...]
    not_age_after: tuple[str, ...]
    not_age_before: tuple[str, ...]
    dose: tuple[str, ...]
    medicine_suffixes: tuple[str, ...] = Field(min_length=1)
    medicine_context: tuple[str, ...]
    unknown_medicine_stopwords: tuple[str, ...] = ()
    fillers: tuple[str, ...] = ()  # whole words skipped inside a term ("머리가 좀 아파요")
    follow_up: tuple[str, ...] = ()  # a question that refers back to the one before
    correction: tuple[str, ...] = ()  # a reading taken back: the next number replaces it
    worry: tuple[str, ...] = ()  # worry about one's health, answered with a brief word first
    care: tuple[str, ...] = ()  # words of seeking care (응급실, doctor): a health message
    # the speaker's own, said outright ("내가 당뇨가 있어서", "I'm on metformin myself"): in a
    # profile kept for someone they care for, not that person's
    speaker_own: tuple[str, ...] = ()
    medicine_follow_up: tuple[str, ...] = ()  # ...to a medicine it does not name
    clauses: ClauseCues = ClauseCues()
    details: Details = Details()
    reading_contexts: tuple[ReadingContext, ...] = ()

    @field_validator(
        "history",
        "history_condition",
        "current",
        "uncertain",
        "death",
        "self_markers",
        "pronoun",
        "carer_before_weak",
        "carer_before_strong",
        "carer_after",
        "carer_anywhere",
        "not_a_person_after",
        "thermometer_context",
        "approximate_before",
        "approximate_after",
        "counters",
        "changes",
        "changes_before",
        "not_age_after",
        "not_age_before",
        "dose",
        "medicine_context",
        "follow_up",
        "medicine_follow_up",
        "correction",
        "worry",
    )
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _check_patterns(patterns)


class MedicalLexicon(Strict):
    """The whole medical lexicon, cross-checked: names unique, groups known, spellings unique."""

    korean_particles: tuple[str, ...] = Field(min_length=1)
    conditions: tuple[Condition, ...] = Field(min_length=40)
    symptoms: tuple[Symptom, ...] = Field(min_length=40)
    medication_groups: tuple[MedicationGroup, ...] = Field(min_length=1)
    medications: tuple[Medication, ...] = Field(min_length=60)
    measures: tuple[Measure, ...] = Field(min_length=1)
    demographics: Demographics
    relations: tuple[Relation, ...] = Field(min_length=1)
    cues: Cues
    topics: tuple[Topic, ...] = ()
    concept_aliases: dict[str, str] = {}  # a lexicon name or class -> the corpus's concept tag

    @field_validator("concept_aliases")
    @classmethod
    def _lower_case(cls, aliases: dict[str, str]) -> dict[str, str]:
        bad = sorted(k for k, v in aliases.items() if k != k.lower() or v != v.lower())
        if bad:
            raise ValueError(f"concept_aliases: not lower case: {bad}")
        return aliases

    def concepts_of(self, name: str) -> list[str]:
        """The corpus concept tags a lexicon name stands for: itself, its class (a medicine's),
        and their aliases ("losartan" -> angiotensin receptor blocker)."""
        names = [name.lower()]
        medication = self.medication_index.get(name)
        if medication is not None:
            names.append(medication.drug_class.lower())
        out = [*names, *(self.concept_aliases[n] for n in names if n in self.concept_aliases)]
        return list(dict.fromkeys(out))

    @cached_property
    def medication_index(self) -> dict[str, Medication]:
        """Medicines by canonical name."""
        return {m.name: m for m in self.medications}

    def terms(self) -> Iterator[tuple[TermSlot, Term]]:
        """Every term with the slot its items go to (a medication group is a medication)."""
        yield from (("conditions", c) for c in self.conditions)
        yield from (("symptoms", s) for s in self.symptoms)
        yield from (("medications", g) for g in self.medication_groups)
        yield from (("medications", m) for m in self.medications)

    @model_validator(mode="after")
    def _consistent(self) -> MedicalLexicon:
        for section in ("conditions", "symptoms", "medication_groups", "medications"):
            names = [entry.name for entry in getattr(self, section)]
            twice = sorted({name for name in names if names.count(name) > 1})
            if twice:
                raise ValueError(f"{section}: names appear twice: {twice}")
        groups = {group.name for group in self.medication_groups}
        for medication in self.medications:
            unknown = set(medication.groups) - groups
            if unknown:
                raise ValueError(f"medications.{medication.name}: unknown groups {sorted(unknown)}")
        self._unique_spellings(
            (f"{slot}.{term.name}", term.spellings()) for slot, term in self.terms()
        )
        self._unique_spellings(
            (
                f"measures.{measure.key}",
                [*measure.cues.spellings(), *measure.weak_cues.spellings()],
            )
            for measure in self.measures
        )
        self._unique_spellings(
            (f"measures.{measure.key}.{reading.key}", reading.cues.spellings())
            for measure in self.measures
            for reading in measure.readings
        )
        self._unique_spellings((f"relations.{r.name}", r.forms.spellings()) for r in self.relations)
        self._unique_spellings((f"topics.{t.name}", t.forms.spellings()) for t in self.topics)
        if len({m.key for m in self.measures}) != len(self.measures):
            raise ValueError("measures: a key appears twice")
        readings = [r.key for m in self.measures for r in m.readings]
        if len(set(readings)) != len(readings):
            raise ValueError("measures: a reading key appears twice")
        return self

    @staticmethod
    def _unique_spellings(owners: Iterator[tuple[str, list[str]]]) -> None:
        """Raise when one spelling belongs to two entries: a match must name one thing."""
        seen: dict[str, str] = {}
        for owner, spellings in owners:
            for spelling in spellings:
                key = surface_key(spelling)
                if seen.setdefault(key, owner) != owner:
                    raise ValueError(f"{spelling!r} belongs to both {seen[key]} and {owner}")


@cache
def load_medical_lexicon() -> MedicalLexicon:
    """The packaged medical lexicon, read and validated once per process."""
    # A key repeated in one entry is refused, as in every other knowledge file (libyaml's
    # parser when present).
    raw = yaml.load(LEXICON_PATH.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)
    return MedicalLexicon.model_validate(raw)
