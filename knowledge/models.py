"""Pydantic schemas of the knowledge files (K0-K4 and the lexicon), validated on load."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Lang = Literal["ko", "en"]
LANGS: tuple[Lang, ...] = ("ko", "en")
CaseTypeCode = Literal["CIVIL", "CRIMINAL", "FAMILY", "ADMINISTRATIVE"]
FieldKind = Literal["date", "amount", "yesno", "choice", "multi_choice", "text", "int", "duration"]
EmotionKind = Literal["distress", "anger", "fear", "urgency"]


class Strict(BaseModel):
    """Base model that rejects unknown keys, so a typo in YAML is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(Strict):
    """A user-facing text in Korean and English."""

    ko: str = Field(min_length=1)
    en: str = Field(min_length=1)

    def get(self, lang: str) -> str:
        """Return the text in `lang`, Korean when the language is unknown."""
        return self.en if lang == "en" else self.ko


# --- K0: intake messages -------------------------------------------------------------------


class K0Messages(Strict):
    """K0: every fixed message the intake sends, by key."""

    messages: dict[str, Text]


# --- K1: case-type criteria ----------------------------------------------------------------


class SubTypeCriteria(Strict):
    """One sub-type of a case type and the cues that point to it."""

    code: str = Field(pattern=r"^[A-Z_]+$")
    label: Text
    description: Text
    # Single-word cues, matched against Korean morpheme lemmas / lower-cased English words.
    keywords: dict[Lang, list[str]]
    # Multi-word cues, matched as substrings of the normalised text; they weigh more.
    phrases: dict[Lang, list[str]] = {}
    # Cues that argue against this sub-type (e.g. "빌려준" against THEFT).
    negative: dict[Lang, list[str]] = {}
    examples: list[str] = []


class CaseTypeCriteria(Strict):
    """One main case type (CIVIL, CRIMINAL, FAMILY, ADMINISTRATIVE)."""

    code: CaseTypeCode
    label: Text
    sub_types: list[SubTypeCriteria] = Field(min_length=1)


class K1Criteria(Strict):
    """K1: the case-type taxonomy with classification cues."""

    case_types: list[CaseTypeCriteria] = Field(min_length=1)

    def sub_type(self, code: str) -> tuple[CaseTypeCriteria, SubTypeCriteria]:
        """Return the main type and the sub-type for a sub-type code (KeyError if unknown)."""
        for case_type in self.case_types:
            for sub in case_type.sub_types:
                if sub.code == code:
                    return case_type, sub
        raise KeyError(code)

    def all_sub_types(self) -> list[tuple[CaseTypeCriteria, SubTypeCriteria]]:
        """Every (main type, sub-type) pair in file order."""
        return [(ct, sub) for ct in self.case_types for sub in ct.sub_types]


# --- K2: required fields and questions -----------------------------------------------------


class Option(Strict):
    """One allowed value of a choice field, with words that select it in free text."""

    value: str = Field(pattern=r"^[a-z_0-9]+$")
    label: Text
    synonyms: list[str] = []


class FieldSpec(Strict):
    """A fact the intake may ask for: its kind, question, reason and validation rules."""

    kind: FieldKind
    label: Text
    question: Text
    why: Text
    options: list[Option] = []
    allow_future: bool = False  # date: a future date is valid (e.g. a lease end date)
    primary: bool = False  # receives untagged values of its kind found in free text
    cues: list[str] = []  # words that tie a value in free text to this field
    minimum: int | None = None  # int / duration lower bound
    maximum: int | None = None  # int / duration upper bound

    @model_validator(mode="after")
    def _options_for_choices(self) -> FieldSpec:
        if self.kind in ("choice", "multi_choice") and not self.options:
            raise ValueError(f"a {self.kind} field needs options")
        return self


class FieldOverride(Strict):
    """Per sub-type wording or cues for a shared field."""

    label: Text | None = None
    question: Text | None = None
    why: Text | None = None
    cues: list[str] | None = None
    primary: bool | None = None
    allow_future: bool | None = None


class RequiredField(Strict):
    """A field a sub-type requires, optionally only when another fact has a given value."""

    key: str
    required_if: dict[str, Any] | None = None


class SubTypeFields(Strict):
    """The required fields of one sub-type in priority order, with wording overrides."""

    required: list[str | RequiredField] = Field(min_length=1)
    overrides: dict[str, FieldOverride] = {}

    def required_fields(self) -> list[RequiredField]:
        """Required fields as RequiredField objects, in priority order."""
        return [RequiredField(key=r) if isinstance(r, str) else r for r in self.required]


class K2Fields(Strict):
    """K2: field definitions shared by all sub-types, and each sub-type's required list."""

    fields: dict[str, FieldSpec]
    sub_types: dict[str, SubTypeFields]

    @model_validator(mode="after")
    def _known_keys(self) -> K2Fields:
        for code, spec in self.sub_types.items():
            for req in spec.required_fields():
                if req.key not in self.fields:
                    raise ValueError(f"sub_types.{code}.required: unknown field {req.key!r}")
                for dep in (req.required_if or {}).keys():
                    if dep not in self.fields:
                        raise ValueError(f"sub_types.{code}.required_if: unknown field {dep!r}")
            for key in spec.overrides:
                if key not in self.fields:
                    raise ValueError(f"sub_types.{code}.overrides: unknown field {key!r}")
        return self

    def field(self, sub_type: str, key: str) -> FieldSpec:
        """The field `key` as the sub-type words it (shared definition plus overrides)."""
        base = self.fields[key]
        override = (
            self.sub_types[sub_type].overrides.get(key) if sub_type in self.sub_types else None
        )
        if override is None:
            return base
        changes = {k: v for k, v in override.model_dump(exclude_none=True).items()}
        return base.model_copy(update={k: getattr(override, k) for k in changes})


# --- K3: legal information -----------------------------------------------------------------


class LegalInfo(Strict):
    """K3: what a person should know about one sub-type (general information, not advice)."""

    limitation: Text  # limitation period / deadline that matters most
    venue: Text  # where such a case is filed or handled
    first_steps: list[Text] = Field(min_length=1)
    typical_evidence: list[Text] = Field(min_length=1)
    notes: list[Text] = []


class K3Info(Strict):
    """K3: legal information per sub-type."""

    disclaimer: Text
    info: dict[str, LegalInfo]


# --- K4: summary formats -------------------------------------------------------------------


class SummarySection(Strict):
    """A titled block of facts in a summary."""

    title: Text
    fields: list[str]


class SummaryFormat(Strict):
    """How the summary of one sub-type is laid out."""

    title: Text
    sections: list[SummarySection] = Field(min_length=1)
    info: list[Literal["limitation", "venue", "first_steps", "typical_evidence", "notes"]] = [
        "limitation",
        "venue",
        "first_steps",
    ]


class K4Formats(Strict):
    """K4: summary formats per sub-type code; `default` serves a sub-type without its own."""

    formats: dict[str, SummaryFormat]

    def for_sub_type(self, code: str) -> SummaryFormat:
        """The sub-type's format, or the default one."""
        return self.formats.get(code) or self.formats["default"]


# --- Lexicon -------------------------------------------------------------------------------


class Lexicon(Strict):
    """Words the rules brain recognises: yes/no/unknown, feelings, greetings, corrections."""

    yes: dict[Lang, list[str]]
    no: dict[Lang, list[str]]
    unknown: dict[Lang, list[str]]  # "I don't know" / "I don't remember"
    emotions: dict[EmotionKind, dict[Lang, list[str]]]
    greetings: dict[Lang, list[str]]
    correction_markers: dict[Lang, list[str]]  # "아니라", "정정", "actually", ...
    ongoing: dict[Lang, list[str]] = {}  # "재직 중", "still" — an end date that has not come
