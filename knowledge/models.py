"""Pydantic schemas of the knowledge files (K0-K4, the lexicon, safety), validated on load."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

Lang = Literal["ko", "en"]
LANGS: tuple[Lang, ...] = ("ko", "en")
CaseTypeCode = Literal["CIVIL", "CRIMINAL", "FAMILY", "ADMINISTRATIVE", "OTHER"]
FieldKind = Literal[
    "date", "amount", "yesno", "choice", "multi_choice", "text", "int", "duration", "decimal"
]
EmotionKind = Literal["distress", "anger", "fear", "urgency"]


class Strict(BaseModel):
    """Base model that rejects unknown keys, so a typo in YAML is an error, not a silent default.

    Frozen: what is derived from a model's fields may be kept on it (`cached_property`); a copy
    made with `model_copy` starts without those, as its fields may differ.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        copied = super().model_copy(update=update, deep=deep)
        for cls in type(self).__mro__:
            for name, member in vars(cls).items():
                if isinstance(member, cached_property):
                    copied.__dict__.pop(name, None)
        return copied


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
    # The free-form intake for what no other sub-type fits: it has no cues (the classifier and
    # retrieval never offer it) and is reached by declining the case-type picker.
    free_form: bool = False

    @model_validator(mode="after")
    def _cues_or_free_form(self) -> SubTypeCriteria:
        has_cues = any(self.keywords.values()) or any(self.phrases.values())
        if has_cues == self.free_form:
            raise ValueError("a sub-type has cues unless it is the free-form one, which has none")
        return self


class CaseTypeCriteria(Strict):
    """One main case type (CIVIL, CRIMINAL, FAMILY, ADMINISTRATIVE, OTHER)."""

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

    @property
    def free_form(self) -> str:
        """The code of the free-form sub-type (what is taken when no type fits)."""
        return next(sub.code for _, sub in self.all_sub_types() if sub.free_form)

    @model_validator(mode="after")
    def _one_free_form(self) -> K1Criteria:
        if sum(sub.free_form for _, sub in self.all_sub_types()) != 1:
            raise ValueError("exactly one sub-type is the free-form intake (free_form: true)")
        return self


# --- K2: required fields and questions -----------------------------------------------------


class Option(Strict):
    """One allowed value of a choice field, with words that select it in free text."""

    value: str = Field(pattern=r"^[a-z_0-9]+$")
    label: Text
    synonyms: list[str] = []


class Statements(Strict):
    """Phrases that state a yes/no fact: `affirm` ones say it is true, `deny` ones false.
    Korean phrases match ignoring spaces, English ones as whole words; a negated phrase
    ("안 다쳤어요", "haven't moved out") does not count."""

    affirm: list[str] = []
    deny: list[str] = []

    def __add__(self, other: Statements) -> Statements:
        return Statements(affirm=self.affirm + other.affirm, deny=self.deny + other.deny)


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
    minimum: float | None = None  # int / duration / decimal lower bound
    maximum: float | None = None  # int / duration / decimal upper bound
    unit: str = ""  # decimal: shown after the value ("%"); int: "일" reads "2주" as 14 days
    short: bool = False  # text: a name or a label, never a clause (checks a model's value)
    per_month: bool = False  # amount: a sum per month (월세), the only kind a monthly sum fills
    # choice: the options are what the person did or has (steps, records), so one said as not
    # done or not had is not chosen ("경찰은 안 불렀어요", "계약서는 없고"); elsewhere a negated
    # verb is the grievance itself ("양육비를 안 보내요")
    done_or_had: bool = False
    # yesno: phrases stating the fact in any message ("이사 나왔어요" -> not living there)...
    says: Statements = Statements()
    # ...and those that answer it only when it is asked ("못 받았어요" to "받지 못하셨나요?").
    answers: Statements = Statements()

    @model_validator(mode="after")
    def _phrases_for_yes_no(self) -> FieldSpec:
        phrases = self.says.affirm or self.says.deny or self.answers.affirm or self.answers.deny
        if phrases and self.kind != "yesno" and not (self.kind == "int" and not self.says.affirm):
            raise ValueError("only a yesno field has says/answers (an int field: says.deny = 0)")
        return self

    @cached_property
    def option_words(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each option's value with its words (labels and synonyms) in lower case, made once:
        every answer to a choice field is matched against them."""
        return tuple(
            (
                option.value,
                tuple(w.lower() for w in (option.label.ko, option.label.en, *option.synonyms) if w),
            )
            for option in self.options
        )

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
    per_month: bool | None = None


class RequiredField(Strict):
    """A field a sub-type requires, optionally only when another fact has a given value."""

    key: str
    required_if: dict[str, Any] | None = None


class SubTypeFields(Strict):
    """The required fields of one sub-type in priority order, with wording overrides."""

    required: list[str | RequiredField] = Field(min_length=1)
    overrides: dict[str, FieldOverride] = {}

    def required_fields(self) -> tuple[RequiredField, ...]:
        """Required fields as RequiredField objects, in priority order (made once: the model
        is frozen, and every turn asks)."""
        return self._required_fields

    @cached_property
    def _required_fields(self) -> tuple[RequiredField, ...]:
        return tuple(RequiredField(key=r) if isinstance(r, str) else r for r in self.required)


class K2Fields(Strict):
    """K2: field definitions shared by all sub-types, and each sub-type's required list."""

    fields: dict[str, FieldSpec]
    sub_types: dict[str, SubTypeFields]
    # Asked of every sub-type before the intake closes, after its own fields, unless the
    # sub-type lists them itself (at a place of its own) or the person already told them.
    closing: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _closing_fields_last(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not data.get("closing"):
            return data
        sub_types = {}
        for code, spec in (data.get("sub_types") or {}).items():
            if isinstance(spec, dict):
                listed = [
                    r if isinstance(r, str) else r.get("key") for r in spec.get("required") or []
                ]
                extra = [k for k in data["closing"] if k not in listed]
                spec = {**spec, "required": [*(spec.get("required") or []), *extra]}
            sub_types[code] = spec
        return {**data, "sub_types": sub_types}

    @model_validator(mode="after")
    def _known_keys(self) -> K2Fields:
        for key in self.closing:
            if key not in self.fields:
                raise ValueError(f"closing: unknown field {key!r}")
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
        """The field `key` as the sub-type words it (shared definition plus overrides), made
        once per sub-type and field: the model is frozen, and every turn asks."""
        merged = self._merged_fields.get((sub_type, key))
        if merged is None:
            merged = self._merged_fields[sub_type, key] = self._merge(sub_type, key)
        return merged

    @cached_property
    def _merged_fields(self) -> dict[tuple[str, str], FieldSpec]:
        return {}

    def _merge(self, sub_type: str, key: str) -> FieldSpec:
        base = self.fields[key]
        override = (
            self.sub_types[sub_type].overrides.get(key) if sub_type in self.sub_types else None
        )
        if override is None:
            return base
        changes = {k: v for k, v in override.model_dump(exclude_none=True).items()}
        return base.model_copy(update={k: getattr(override, k) for k in changes})


# --- K3: legal information -----------------------------------------------------------------


class Period(Strict):
    """A length of time in days, months and years."""

    days: int = Field(default=0, ge=0)
    months: int = Field(default=0, ge=0)
    years: int = Field(default=0, ge=0)


class DeadlineRule(Strict):
    """A deadline worked out from a collected date: `after` (or `before`) the first of the
    `start` fields that is known, unless the facts in `unless` say it no longer matters."""

    key: str = Field(pattern=r"^[a-z_0-9]+$")
    label: Text
    rule: Text  # the provision it comes from, in a line
    start: list[str] = Field(min_length=1)
    after: Period | None = None
    before: Period | None = None
    unless: dict[str, Any] = {}
    # Only when the facts meet these conditions, written as a K2 `required_if`
    # ({neighbor_issue: {includes: leak}}); a condition the facts do not decide does not hold.
    when: dict[str, Any] = {}
    future_only: bool = False  # shown only while it lies ahead (a notice that can still be given)

    @model_validator(mode="after")
    def _one_direction(self) -> DeadlineRule:
        if (self.after is None) == (self.before is None):
            raise ValueError(f"deadline {self.key}: give exactly one of after / before")
        return self


class LegalInfo(Strict):
    """K3: what a person should know about one sub-type (general information, not advice)."""

    limitation: Text  # limitation period / deadline that matters most
    venue: Text  # where such a case is filed or handled
    first_steps: list[Text] = Field(min_length=1)
    typical_evidence: list[Text] = Field(min_length=1)
    notes: list[Text] = []
    deadlines: list[DeadlineRule] = []
    # First steps for a side other than the victim's, by party_role ("accused"): shown instead.
    role_steps: dict[str, list[Text]] = {}


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
    # Sections every format ends with, for what any case may hold (what the person wants),
    # leaving out the fields a format already shows.
    closing: list[SummarySection] = []

    def for_sub_type(self, code: str) -> SummaryFormat:
        """The sub-type's format, or the default one, with the closing sections it lacks."""
        fmt = self.formats.get(code) or self.formats["default"]
        shown = {key for section in fmt.sections for key in section.fields}
        extra = [
            SummarySection(title=s.title, fields=[k for k in s.fields if k not in shown])
            for s in self.closing
        ]
        extra = [s for s in extra if s.fields]
        return fmt.model_copy(update={"sections": [*fmt.sections, *extra]}) if extra else fmt


# --- Lexicon -------------------------------------------------------------------------------


class Lexicon(Strict):
    """Words the rules brain recognises: yes/no/unknown, feelings, greetings, corrections."""

    yes: dict[Lang, list[str]]
    no: dict[Lang, list[str]]
    unknown: dict[Lang, list[str]]  # "I don't know" / "I don't remember"
    emotions: dict[EmotionKind, dict[Lang, list[str]]]
    # legal terms that hold a feeling's cue and tell no feeling ("긴급조치": legal_set17 S6 was
    # told "급하신 상황이군요" for the school's measure)
    not_feelings: dict[Lang, list[str]] = {}
    greetings: dict[Lang, list[str]]
    correction_markers: dict[Lang, list[str]]  # "아니라", "정정", "actually", ...
    ongoing: dict[Lang, list[str]] = {}  # "재직 중", "still" — an end date that has not come
    hedges: dict[Lang, list[str]] = {}  # "아마", "인 것 같", "maybe": a value to confirm first
    people: dict[Lang, list[str]] = {}  # "엄마", "저", "brother": a list of people is a count
    # "결혼식", "수술", "보험사", "wedding": a date or amount in their clause is of another event
    # or role, and fills no field by default (only a field's own cue places it)
    other_events: dict[Lang, list[str]] = {}
    # "돌려받고 싶어요", "I want": a sentence saying what the person wants from the case
    wants: dict[Lang, list[str]] = {}
    wants_not: list[str] = []  # "죽고 싶어요", "I want to ask": no outcome to pursue
    # What a clause does besides stating (graphs/common/reading.py): a supposition ("만약",
    # "what if"), whose values are never recorded; a request; a contrast.
    suppositions: dict[Lang, list[str]] = {}
    requests: dict[Lang, list[str]] = {}
    contrasts: dict[Lang, list[str]] = {}
    # Words beside a value that make it approximate ("약 300만원", "6월쯤", "about $3,000")
    approximate_before: dict[Lang, list[str]] = {}
    approximate_after: dict[Lang, list[str]] = {}
    # Words beside an amount that make it a sum per month ("월 300", "2,300,000 a month")
    per_month_before: dict[Lang, list[str]] = {}
    per_month_after: dict[Lang, list[str]] = {}

    @cached_property
    def per_month(self) -> dict[str, tuple[str, ...]]:
        """The per-month words in lower case, as `per_month_at` takes them (made once)."""
        return {
            "before": tuple(w.lower() for ws in self.per_month_before.values() for w in ws),
            "after": tuple(w.lower() for ws in self.per_month_after.values() for w in ws),
        }

    # An outcome or a legal conclusion ("승소", "will win"): never in a summary's narrative
    outcome_claims: dict[Lang, list[str]] = {}
    staff_instructions: dict[Lang, list[str]] = {}  # a narrative sentence speaking to staff
    negations: dict[Lang, list[str]] = {}


# --- Safety pre-check ----------------------------------------------------------------------

SafetyCategory = Literal["danger", "suicide", "medical", "medical_today", "medical_days"]
Hotline = Literal["112", "119", "1366", "109", "1388", "1339", "117"]


class Patterns(Strict):
    """Regular expressions by language. Korean ones are matched against the text with spaces,
    punctuation and emoji removed (so they hold no spaces); English ones against the
    lower-cased text with single spaces."""

    ko: list[str] = []
    en: list[str] = []

    @field_validator("ko", "en")
    @classmethod
    def _compiles(cls, patterns: list[str], info: ValidationInfo) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad pattern {pattern!r}: {exc}") from exc
            if info.field_name == "ko" and " " in pattern:
                raise ValueError(f"Korean pattern {pattern!r} has a space (spaces are removed)")
        return patterns

    @model_validator(mode="after")
    def _not_empty(self) -> Patterns:
        if not self.ko and not self.en:
            raise ValueError("no patterns")
        return self


class SafetyRule(Strict):
    """A situation that needs help now; it fires when every term of any one `when` line
    appears in the message, outside clauses that one of its `unless` guards cancels."""

    code: str = Field(pattern=r"^[A-Z_]+$")
    category: SafetyCategory
    hotlines: list[Hotline] = Field(min_length=1)  # in the order the person should call
    when: list[list[str]] = Field(min_length=1)  # term names; lines are alternatives
    unless: list[str] = []  # guard names
    not_with: list[str] = []  # terms whose presence (here, earlier or standing) stops the rule
    # While the rule holds (raised within the day, help not come since), a message holding
    # every term of one of these lines fires it again: the danger told again ("아직 문앞에
    # 있어요" after someone at the door), answered with the numbers again.
    again: list[list[str]] = []
    advice: Text | None = None  # a line of its own after the category's reply
    first_aid: str | None = None  # a 119-now rule: its group of steps while help comes
    # the K1 sub-type a legal intake's first message that fires it tells of (a threat to
    # spread intimate images is IMAGE_ABUSE, whatever else its words point to)
    case: str | None = None
    why: str = ""  # for editors: the line this rule draws


class ProfileTerm(Strict):
    """What in a health profile stands for a term: current conditions or medicines by name,
    drug class or group, or an age range in years."""

    names: list[str] = []
    classes: list[str] = []
    groups: list[str] = []
    age_min: float | None = None
    age_max: float | None = None


class Source(Strict):
    """Where a text's advice comes from: a name and a public address."""

    name: str = Field(min_length=1)
    url: str = Field(pattern=r"^https://\S+$")


class FirstAidGroup(Strict):
    """What to do, and not do, while waiting for the ambulance after a 119-now alert: a title
    in plain words (also what a handover says happened), a few short steps and their source."""

    title: Text
    steps: list[Text] = Field(min_length=3, max_length=5)
    source: Source


# The terms that read a question asked while help comes (safety.yaml `terms`).
FIRST_AID_CUES = ("asks_give", "asks_handover", "in_care")


class SafetyRules(Strict):
    """safety.yaml: the pre-check run on every message, most urgent rule first."""

    terms: dict[str, Patterns]
    guards: dict[str, Patterns]  # cancel the clause they appear in, for rules that list them
    idioms: Patterns  # erased from the text before anything is matched
    hotlines: dict[Hotline, Text]  # one line naming the number, added when not yet named
    replies: dict[SafetyCategory, Text]
    staff_notice: Text
    carry: list[str] = []  # signs that count with the next messages for a day
    profile_terms: dict[str, ProfileTerm] = {}  # terms a health profile stands for
    # Terms a legal intake's sub-type stands for (a stalking intake: someone who stalks)
    case_terms: dict[str, list[str]] = {}
    first_aid: dict[str, FirstAidGroup] = {}  # steps while help comes, by group
    rules: list[SafetyRule] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> SafetyRules:
        for name in [*self.carry, *self.profile_terms]:
            if name not in self.terms:
                raise ValueError(f"carry/profile_terms: unknown term {name!r}")
        for name in self.profile_terms:
            if name not in self.carry:
                raise ValueError(f"profile_terms.{name}: a profile term must be in carry")
        for sub_type, names in self.case_terms.items():
            for name in names:
                if name not in self.carry:
                    raise ValueError(f"case_terms.{sub_type}: {name!r} must be in carry")
        seen: set[str] = set()
        for rule in self.rules:
            where = f"rules.{rule.code}"
            if rule.code in seen:
                raise ValueError(f"{where}: code appears twice")
            seen.add(rule.code)
            for part, lines in (("when", rule.when), ("again", rule.again)):
                for line in lines:
                    for name in line:
                        if name not in self.terms:
                            raise ValueError(f"{where}.{part}: unknown term {name!r}")
                    if not line:
                        raise ValueError(f"{where}.{part}: an empty line")
            for name in rule.not_with:
                if name not in self.terms:
                    raise ValueError(f"{where}.not_with: unknown term {name!r}")
            for name in rule.unless:
                if name not in self.guards:
                    raise ValueError(f"{where}.unless: unknown guard {name!r}")
            if len(set(rule.hotlines)) != len(rule.hotlines):
                raise ValueError(f"{where}.hotlines: a number appears twice")
            for number in rule.hotlines:
                if number not in self.hotlines:
                    raise ValueError(f"{where}.hotlines: {number} has no line in hotlines")
            reply = self.replies.get(rule.category)
            if reply is None:
                raise ValueError(f"replies: missing {rule.category}")
            if rule.hotlines[0] not in reply.ko or rule.hotlines[0] not in reply.en:
                raise ValueError(
                    f"{where}.hotlines: the reply for {rule.category} must name "
                    f"{rule.hotlines[0]} (the first number) in ko and en"
                )
        for number, line in self.hotlines.items():
            if number not in line.ko or number not in line.en:
                raise ValueError(f"hotlines.{number}: the line must name the number")
        self._first_aid_complete()
        return self

    def _first_aid_complete(self) -> None:
        """Every 119-now rule names a group that exists, only those rules name one, every
        group is used, and the cues that read questions asked while help comes are terms."""
        used: set[str] = set()
        for rule in self.rules:
            where = f"rules.{rule.code}.first_aid"
            if rule.category != "medical":
                if rule.first_aid is not None:
                    raise ValueError(f"{where}: only a 119-now (medical) rule has first aid")
                continue
            if rule.first_aid is None:
                raise ValueError(f"{where}: a 119-now rule needs a first-aid group")
            if rule.first_aid not in self.first_aid:
                raise ValueError(f"{where}: unknown group {rule.first_aid!r}")
            used.add(rule.first_aid)
        for name in self.first_aid:
            if name not in used:
                raise ValueError(f"first_aid.{name}: no rule uses this group")
        if self.first_aid:
            for name in FIRST_AID_CUES:
                if name not in self.terms:
                    raise ValueError(f"terms: missing {name!r} (first aid reads it)")


# --- Intents (what a message is when it is not an answer) ------------------------------------


class LangPatterns(Strict):
    """Regular expressions per language, matched on lower-cased text with single spaces."""

    ko: list[str] = []
    en: list[str] = []

    @model_validator(mode="after")
    def _compiles(self) -> LangPatterns:
        for pattern in [*self.ko, *self.en]:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
        return self


class QuestionCues(Strict):
    """A question back: a question word or a modal ending (a value with "?" is not one)."""

    words: LangPatterns
    modals: LangPatterns
    # A value asked back from memory ("작년 3월이었나요?", "언제였더라"): no question without a modal.
    unsure: LangPatterns = LangPatterns()


class Intents(Strict):
    """intents.yaml: questions back and their topics, delete requests, out of scope, chat."""

    question: QuestionCues
    topics: dict[str, LangPatterns]
    forget: LangPatterns
    forget_not: LangPatterns = LangPatterns()  # deleting told as part of the story, not asked
    not_listed: LangPatterns = LangPatterns()  # "none of these" typed at the case-type picker
    list_words: LangPatterns = LangPatterns()  # words naming the list: a decline, not an answer
    wrong_type: LangPatterns = LangPatterns()  # "fix the category": the case type is wrong
    type_denial: LangPatterns = LangPatterns()  # "X가 아니라", "not X" (X in group `what`)
    type_nouns: LangPatterns = LangPatterns()  # words making X a kind of matter ("문제", "thing")
    type_said: LangPatterns = LangPatterns()  # "… 문제에요", "it's a …": another kind is told
    medical: LangPatterns
    legal_guard: LangPatterns
    off_topic: LangPatterns = LangPatterns()  # weather, recipes, ...: out of scope, "other"
    small_talk: LangPatterns
    thanks: LangPatterns
    spam: LangPatterns


# --- Story details (graphs/legal/details.py) ----------------------------------------------------


class DetailKind(Strict):
    """One kind of detail kept from a message: its label, how its value is read, its triggers."""

    label: Text
    value: Literal["match", "after", "fixed"]
    fixed: Text | None = None
    ko: list[str] = []
    en: list[str] = []
    also: list[str] = []  # patterns whose match is the value whatever `value` says (@handles)

    @model_validator(mode="after")
    def _valid(self) -> DetailKind:
        if self.value == "fixed" and self.fixed is None:
            raise ValueError("a 'fixed' kind needs its fixed text")
        for pattern in [*self.ko, *self.en, *self.also]:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
        return self


class StoryLexicon(Strict):
    """story.yaml: the details kept from every message of an intake."""

    negations: LangPatterns
    kinds: dict[str, DetailKind]
    name_ends: list[str]


# --- The lawyer's memo (graphs/legal/memo.py) ---------------------------------------------------


class MemoWords(Strict):
    """A kind of memo value (a money role, a step, a party's role): its label and the words
    (regular expressions on the lower-cased clause) that give it."""

    label: Text
    ko: list[str] = []
    en: list[str] = []
    cases: list[str] = []  # the sub-types it is said of (none: every one)

    @model_validator(mode="after")
    def _compiles(self) -> MemoWords:
        if not (self.ko or self.en):
            raise ValueError("a memo kind needs words in ko or en")
        for pattern in [*self.ko, *self.en]:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
        return self


MEMO_TITLES = (
    "chronology",
    "money",
    "parties",
    "steps",
    "evidence",
    "circumstances",
    "positions",
    "planned",
    "confirmed",
    "year_assumed",
    "undated",
    "in_man",
    "monthly",
)


class MemoLexicon(Strict):
    """memo.yaml: what rules mode reads into the memo beside the key fields."""

    titles: dict[str, Text]
    money_roles: dict[str, MemoWords]
    steps: dict[str, MemoWords]
    party_roles: dict[str, MemoWords]
    holding: LangPatterns
    planned: LangPatterns
    step_acts: LangPatterns = LangPatterns()  # a step taken, not a loan from a bank
    told_to: LangPatterns = LangPatterns()  # a step someone said to take, not one taken
    deadline: LangPatterns = LangPatterns()  # a day ahead told as a deadline or a hearing
    # sections only a model reads into (labels of their kinds): the person's circumstances
    # (who writes for whom, visa, work, age, …) and what each side says or disputes
    circumstances: dict[str, Text] = {}
    positions: dict[str, Text] = {}
    remove: LangPatterns = LangPatterns()  # the person asks to delete an item of their record
    # sub-type -> key field -> money roles whose item holds its value (checked against K2)
    key_roles: dict[str, dict[str, list[str]]] = {}
    # sub-type -> yes/no key field an amount told of one of these roles answers "yes"
    money_told: dict[str, dict[str, list[str]]] = {}

    @model_validator(mode="after")
    def _titled(self) -> MemoLexicon:
        missing = [key for key in MEMO_TITLES if key not in self.titles]
        if missing:
            raise ValueError(f"titles: missing {missing}")
        for code, fields in [*self.key_roles.items(), *self.money_told.items()]:
            for key, roles in fields.items():
                unknown = [r for r in roles if r not in self.money_roles]
                if unknown or not roles:
                    raise ValueError(f"key_roles: {code}.{key}: unknown roles {unknown}")
        return self
