"""Rules slot extraction for the medical assistant: one message in, structured profile items out.

Offline and deterministic. Lexicon words (conditions, symptoms, medicines) are found by walking
a prefix tree built once from knowledge/medical/lexicon.yaml, longest spelling first; values
(vitals, labs, age) by a cue and a number. Each item then takes its flags from the clause it stands in (denied,
past, hedged) and from whom that clause is about: the patient, a relative (family history), or
the person a carer speaks for, who then is the patient.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from graphs.common.text import clause_spans
from graphs.medical import slot_shapes
from knowledge.medical_lexicon import (
    Condition,
    Measure,
    MedicalLexicon,
    Medication,
    Reading,
    Relation,
    Term,
    Unit,
    expand_form,
    load_medical_lexicon,
    surface_key,
)

ITEM_SLOTS = ("conditions", "symptoms", "medications")
FLEXIBLE_FROM = 3  # syllables from which a Korean form also matches with spaces inside
FLEXIBLE_FROM_MEDICATION = 4  # brand names of three syllables are often everyday words
MAX_VALUE_GAP = 16  # characters between a cue and its number ("혈압이 아침에 150")
MAX_REVERSE_GAP = 6  # characters between a number with its unit and a cue after it ("38도 열")
CORRECTION_REACH = 40  # characters after a reading in which a correction word may take it back
DRUG_ALLERGY = "drug allergy"  # the condition a medicine named with "알레르기" becomes
_LOOK = 40  # characters looked at around a word for anchored cues

_END = ""  # marks the end of spellings in a prefix tree
_HANGUL_CHAR = re.compile(r"[가-힣]")
_NEVER = re.compile(r"(?!x)x")
_NUMBER = re.compile(r"(?<![\d.])\d{1,4}(?:\.\d{1,3})?(?!\d)")
# Blood pressure as a pair: "150/95", "150에 95" (but "150에서" is where it came from), "140 over 90".
_PAIR = re.compile(r"(\d{2,3})\s*(?:/|에(?!서)|over|-)\s*(\d{2,3})(?!\d|\.\d)", re.I)  # "120/80."
_VALUE_BREAK = re.compile(r"[!?;\n]|\.(?!\d)")
# What may stand between two words that one cue covers: "당뇨, 고혈압은 없어요", "no fever or cough".
_LIST_GAP = re.compile(
    r"^\s*(?:도|은|는|이|가)?\s*(?:,|/|및|또는|혹은|이랑|랑|하고|과|와|이나|나|or|and|nor)?\s*$",
    re.I,
)
_ALLERGY_AFTER_MEDICINE = re.compile(r"^\s*(?:에\s*(?:대한\s*)?)?$")  # "페니실린 알레르기"
_ALLERGY_BEFORE_MEDICINE = re.compile(r"^\s+to\s+$", re.I)  # "allergic to metformin"


@dataclass(frozen=True)
class SlotItem:
    """One thing learnt from a message.

    `negated` is a denial ("당뇨는 없어요", "no allergies") or something stopped ("혈압약은
    끊었어요"): not current. A stopped item also has `history` (it was taken before), while
    a denied one never has. `family` marks a relative's item, kept apart from the patient's.
    """

    slot: str  # demographics | conditions | symptoms | medications | vitals | labs
    name: str  # canonical English ("metformin", "headache", "bp_sys", "age")
    name_ko: str  # Korean name; for a value, the Korean label
    value: float | int | str | None  # numbers for vitals/labs/age; "male"/"female"; None
    text: str  # the words as written (with a medicine's dose: "메트포르민 500mg 하루 두 번")
    negated: bool
    family: bool
    history: bool
    unsure: bool  # read with doubt ("한 150?", a guessed unit, "것 같아요"): to be confirmed
    # where it stands in the (normalised) message: read against the clause it is in
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    context: tuple[str, ...] = ()  # of a reading: where or when taken ("home", "fasting")
    details: tuple[str, ...] = ()  # of a symptom or condition: "2주째", "계단 오를 때"
    asked: bool = False  # a reading said inside a question: kept to be confirmed
    corrects: bool = False  # replaces a reading said wrong in an earlier message
    source: str = "rules"  # who read it: "model" for an item only the model found (LLM mode)


@dataclass(frozen=True)
class SlotExtraction:
    """Everything one message gave, and what it gave that could not be stored."""

    items: tuple[SlotItem, ...]
    subject: str  # "self", or the relation a carer speaks for ("father", "mother", "child", …)
    rejected: tuple[tuple[str, str], ...]  # (key, reason): ("bp", "out_of_range")
    unknown_medicines: tuple[str, ...]  # words that look like a medicine the lexicon lacks


@dataclass(frozen=True)
class _Hit:
    """A lexicon spelling found in the text, with what it was registered for."""

    start: int
    end: int
    payload: object


@dataclass(frozen=True)
class _TermRef:
    """What a term spelling stands for."""

    slot: str
    term: Term


@dataclass(frozen=True)
class _CueRef:
    """What a value cue stands for: a measure, or one reading of it ("수축기")."""

    measure: Measure
    reading: Reading | None
    weak: bool  # counts only with a written unit


@dataclass
class _Clause:
    """A stretch of text one negation or history cue covers, and whom it is about."""

    start: int
    end: int
    sentence: int
    holder: str | None = None  # a relation's name, "self", "family", or None: not said


@dataclass
class _Mention:
    """An item in the making: where it stands and the flags its clause gives it."""

    slot: str
    name: str
    name_ko: str
    value: float | int | str | None
    start: int
    end: int  # end of the word itself
    text_end: int  # end of what is kept as its text (a dose included)
    negated: bool = False
    history: bool = False
    unsure: bool = False
    holder: str | None = None
    needs_relation: bool = False  # an age read from an honorific ("80이신데")


@dataclass
class _RawReading:
    """A number (or a pair) found for a cue, before conversion and range checks."""

    start: int
    end: int  # after its unit
    numbers: tuple[float, ...]
    unit: Unit | None
    unsure: bool


def _expand_all(forms: Iterable[str]) -> list[str]:
    """Every spelling of several forms."""
    return [spelling for form in forms for spelling in expand_form(form)]


# --- lexicon matching -----------------------------------------------------------------------


def _is_hangul(char: str) -> bool:
    return bool(_HANGUL_CHAR.match(char))


def _is_latin(char: str) -> bool:
    return char.isascii() and char.isalpha()


def _longest_first(hits: Iterable[_Hit]) -> list[_Hit]:
    """Overlapping hits settled longest first (then leftmost); the result in text order."""
    chosen: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start - h.end, h.start)):
        if all(hit.end <= c.start or hit.start >= c.end for c in chosen):
            chosen.append(hit)
    return sorted(chosen, key=lambda h: h.start)


@dataclass(frozen=True)
class _Spelling:
    """One way an entry is written, with where spaces may fall inside it and its edges."""

    payload: object
    gaps: frozenset[int]  # key positions a space may stand before
    word_start: bool  # "^": not right after a Hangul letter or a digit
    word_end: bool  # "$": a particle or a non-letter follows


class _Matcher:
    """Finds lexicon spellings in a text, longest first.

    The text is squeezed (spaces, hyphens and apostrophes dropped, lower case) and walked
    along a prefix tree of spelling keys, so each start position yields its longest spelling.
    A candidate then has to fit the original text: spaces only where its spelling allows them,
    and the edge rules of its script ("diabetes" not inside "prediabetes").
    """

    def __init__(
        self, entries: Iterable[tuple[str, object, int | None]], particles: Sequence[str]
    ) -> None:
        particle = "|".join(sorted(map(re.escape, particles), key=len, reverse=True))
        self._particle_or_break = re.compile(rf"(?:{particle})|[^가-힣]|$")
        self._root: dict[str, dict] = {}
        for spelling, payload, flexible_from in entries:
            body = spelling.removeprefix("^").removesuffix("$").strip()
            key = surface_key(body)
            node = self._root
            for char in key:
                node = node.setdefault(char, {})
            node.setdefault(_END, []).append(
                _Spelling(
                    payload,
                    _gaps(body, key, flexible_from),
                    spelling.startswith("^"),
                    spelling.endswith("$"),
                )
            )

    def find(self, text: str) -> list[_Hit]:
        """Every spelling in `text`, overlaps settled longest first, in text order."""
        positions = [i for i, char in enumerate(text) if not (char.isspace() or char in "-'")]
        squeezed = [_lower(text[i]) for i in positions]
        hits: list[_Hit] = []
        for first in range(len(squeezed)):
            node, best = self._root, None
            for last in range(first, len(squeezed)):
                node = node.get(squeezed[last])
                if node is None:
                    break
                for spelling in node.get(_END, ()):
                    end = self._fit(text, positions, first, last, spelling)
                    if end is not None:
                        best = _Hit(positions[first], end, spelling.payload)
            if best is not None:
                hits.append(best)
        return _longest_first(hits)

    def _fit(
        self, text: str, positions: list[int], first: int, last: int, spelling: _Spelling
    ) -> int | None:
        """Where the candidate ends in `text` (a plural included), or None when it does not fit."""
        start, end = positions[first], positions[last] + 1
        for offset in range(1, last - first + 1):
            skipped = text[positions[first + offset - 1] + 1 : positions[first + offset]]
            if any(c.isspace() for c in skipped) and offset not in spelling.gaps:
                return None
        before = text[start - 1] if start else ""
        head, tail = text[start], text[end - 1]
        if _is_latin(head) and _is_latin(before) or head.isdigit() and before.isdigit():
            return None
        if spelling.word_start and (_is_hangul(before) or before.isdigit()):
            return None
        # A Korean match that starts inside a word and runs on over a space is a word ending
        # and the next word: "있고 혈압" is not "고 혈압" (hypertension written apart).
        if _is_hangul(before) and any(c.isspace() for c in text[start:end]):
            return None
        if _is_latin(tail):
            plural = re.match(r"e?s(?![a-z])", text[end : end + 3], re.I)
            end += plural.end() if plural else 0
            return None if _is_latin(text[end : end + 1]) else end
        if tail.isdigit() and text[end : end + 1].isdigit():
            return None
        if spelling.word_end and not self._particle_or_break.match(text, end):
            return None
        return end


def _gaps(body: str, key: str, flexible_from: int | None) -> frozenset[int]:
    """Key positions a space may stand before: where the form has one, and between any two
    syllables of a Korean form long enough to be written with spaces inside ("고 혈압")."""
    gaps: set[int] = set()
    index = 0
    for char in body:
        if char.isspace() or char in "-'":
            gaps.add(index)
        else:
            index += 1
    if flexible_from is not None and len(_HANGUL_CHAR.findall(key)) >= flexible_from:
        gaps |= {i for i in range(1, len(key)) if _is_hangul(key[i - 1]) and _is_hangul(key[i])}
    return frozenset(gaps)


def _lower(char: str) -> str:
    """Lower case of one character, kept as it is when lowering would change its length."""
    lowered = char.lower()
    return lowered if len(lowered) == 1 else char


def _any_of(patterns: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive regex matching any of `patterns` (never matching when empty)."""
    joined = "|".join(f"(?:{p})" for p in patterns)
    return re.compile(joined, re.I) if joined else _NEVER


def _words(words: Iterable[str]) -> str:
    """An alternation of literal words, longest first, spaces optional."""
    escaped = (re.escape(w).replace(r"\ ", r"\s*") for w in sorted(words, key=len, reverse=True))
    return "|".join(escaped)


def _starts(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
    """`pattern` (anchored with ^) matched on the text right after `pos`."""
    return pattern.search(text[pos : pos + _LOOK])


def _ends(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
    """`pattern` (anchored with $) matched on the text right before `pos`."""
    return pattern.search(text[max(0, pos - _LOOK) : pos])


# An age typed onto the relative it belongs to ("5살오빠가", "7살딸이"): a space between, so the
# relative is read as a word and the age as theirs.
_AGE_GLUED = re.compile(
    r"(\d{1,3}\s?(?:살|세|개월))(?=(?:오빠|언니|누나|형|동생|아들|딸|아기|애기|손자|손녀|조카|사촌)"
    r"(?:가|는|이|도|랑|이랑|한테|의|은)?(?:\s|$|[,.!?]))"
)


# Where someone else is from, typed onto them ("경로당친구가", "회사동료가"): a space between.
_PLACE_GLUED = re.compile(
    r"(?<=[가-힣])(?=(?:친구|동료|이웃|지인)(?:가|는|이|도|랑|한테|의|분|들))"
)


def normalise(text: str) -> str:
    """NFKC (full-width digits, "℃" -> "°C", "㎏" -> "kg"), straight quotes, and a space
    between an age or a place and the person it is typed onto."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate({0x2019: "'", 0x2018: "'", 0x201C: '"', 0x201D: '"'})
    return _PLACE_GLUED.sub(" ", _AGE_GLUED.sub(r"\1 ", text))


def _clauses(text: str) -> list[_Clause]:
    """The message cut into sentences, and each sentence into clauses (graphs/common/text.py)."""
    return [_Clause(c.start, c.end, c.sentence) for c in clause_spans(text)]


# --- the extractor --------------------------------------------------------------------------


class SlotExtractor:
    """Reads a message into slot items with the medical lexicon; build once, call per message."""

    def __init__(self, lexicon: MedicalLexicon | None = None) -> None:
        self.lexicon = lexicon or load_medical_lexicon()
        self._by_marriage = {r.name for r in self.lexicon.relations if not r.blood}
        lex, cues = self.lexicon, self.lexicon.cues
        self._terms = _Matcher(self._term_entries(), lex.korean_particles)
        self._cues = _Matcher(self._cue_entries(), lex.korean_particles)
        self._relations = _Matcher(
            ((s, r, None) for r in lex.relations for s in self._relation_spellings(r)),
            lex.korean_particles,
        )
        self._topics = _Matcher(
            ((s, topic.name, None) for topic in lex.topics for s in topic.forms.spellings()),
            lex.korean_particles,
        )
        self._follow_up = _any_of(cues.follow_up)
        self._correction = _any_of(cues.correction)
        self._worry = _any_of(cues.worry)
        self._medicine_follow_up = _any_of(cues.medicine_follow_up)
        self._fillers = (
            re.compile(rf"(?<!\w)(?:{_words(cues.fillers)})(?!\w)", re.I)
            if cues.fillers
            else _NEVER
        )
        self._excludes = {
            (slot, term.name): re.compile(_words(term.exclude), re.I)
            for slot, term in lex.terms()
            if term.exclude
        }
        self._drug_allergy = next(
            (_TermRef("conditions", c) for c in lex.conditions if c.name == DRUG_ALLERGY), None
        )
        self._units = {m.key: self._unit_pattern(m.units) for m in lex.measures}
        self._unit_of = {w.lower(): u for m in lex.measures for u in m.units for w in u.words}
        self._blockers = {
            m.key: re.compile(rf"^\s*(?:{_words(m.blockers)})", re.I) if m.blockers else _NEVER
            for m in lex.measures
        }
        neg, stop = cues.negation, cues.stopped
        self._neg = (_any_of(neg.before), _any_of(neg.after), _any_of(neg.right_after))
        self._stop = (_any_of(stop.before), _any_of(stop.after), _any_of(stop.right_after))
        self._history = _any_of(cues.history)
        self._history_condition = _any_of(cues.history_condition)
        self._current = _any_of(cues.current)
        self._uncertain = _any_of(cues.uncertain)
        self._death = _any_of(cues.death)
        self._self = _any_of(cues.self_markers)
        self._pronoun = _any_of(cues.pronoun)
        self._carer_weak = _any_of(cues.carer_before_weak)
        self._carer_strong = _any_of(cues.carer_before_strong)
        self._carer_after = _any_of(cues.carer_after)
        self._carer_anywhere = _any_of(cues.carer_anywhere)
        self._not_a_person = _any_of(cues.not_a_person_after)
        self._thermometer = _any_of(cues.thermometer_context)
        self._approx_before = _any_of(cues.approximate_before)
        self._approx_after = _any_of(cues.approximate_after)
        self._counters = _any_of(cues.counters)
        self._changes = _any_of(cues.changes)
        self._changes_before = _any_of(cues.changes_before)
        self._not_age_after = _any_of(cues.not_age_after)
        self._not_age_before = _any_of(cues.not_age_before)
        self._dose = re.compile(rf"(?:\s*(?:{'|'.join(f'(?:{d})' for d in cues.dose)}))+", re.I)
        self._medicine_context = _any_of(cues.medicine_context)
        self._stopwords = {w.lower() for w in cues.unknown_medicine_stopwords}
        self._ages = self._age_patterns()
        children = [r for r in self.lexicon.relations if r.name == "child" or r.kind_of == "child"]
        self._child_names = frozenset(r.name for r in children)
        self._child_words = [w for r in children for w in (*r.forms.ko, *r.forms.en)]
        details = cues.details
        self._duration = _any_of(details.duration)
        self._pattern = _any_of(details.pattern)
        self._pregnancy_week = [re.compile(p, re.I) for p in details.pregnancy_week]
        self._contexts = [(c.name, _any_of(c.cues)) for c in cues.reading_contexts]
        self._sexes = self._sex_patterns()
        suffix = _words(cues.medicine_suffixes)
        self._unknown_word = re.compile(
            rf"(?<![가-힣A-Za-z0-9])(?P<w>[가-힣A-Za-z][가-힣A-Za-z0-9]{{1,14}}?(?:{suffix}))"
            r"(?=[\s을를은는이도만과와랑하,.]|\d|$)"
        )
        self._unknown_dosed = re.compile(
            r"(?<![A-Za-z가-힣])(?P<w>[A-Za-z][A-Za-z\-]{2,}|[가-힣]{2,10})\s*\d+(?:\.\d+)?\s*"
            r"(?:mg|mcg|μg|ug|ml|iu|밀리그램|밀리)(?![a-z/])",
            re.I,
        )

    # -- building -----------------------------------------------------------------------------

    def _term_entries(self) -> Iterable[tuple[str, object, int | None]]:
        for slot, term in self.lexicon.terms():
            flexible = FLEXIBLE_FROM_MEDICATION if isinstance(term, Medication) else FLEXIBLE_FROM
            for spelling in term.spellings():
                yield spelling, _TermRef(slot, term), flexible

    def _cue_entries(self) -> Iterable[tuple[str, object, int | None]]:
        for measure in self.lexicon.measures:
            for weak, forms in ((False, measure.cues), (True, measure.weak_cues)):
                for spelling in forms.spellings():
                    yield spelling, _CueRef(measure, None, weak), FLEXIBLE_FROM
            for reading in measure.readings:
                for spelling in reading.cues.spellings():
                    yield spelling, _CueRef(measure, reading, False), FLEXIBLE_FROM

    @staticmethod
    def _relation_spellings(relation: Relation) -> list[str]:
        """Relation words are whole words: Korean ones take a particle ("아버지가", not "아이디")."""
        ko = _expand_all(relation.forms.ko)
        # "저희아빠", "우리애기", "울엄마": typed fast, the possessive sticks to the word
        glued = [f"^{mine}{s}$" for mine in ("저희", "우리", "울", "제", "내") for s in ko]
        return [f"^{s}$" for s in ko] + glued + list(_expand_all(relation.forms.en))

    @staticmethod
    def _unit_pattern(units: Sequence[Unit]) -> re.Pattern[str]:
        """The units of a measure right after a number; a Latin unit must end its word."""
        words = sorted((w for u in units for w in u.words), key=len, reverse=True)
        parts = [
            re.escape(w).replace(r"\ ", r"\s*") + (r"(?![a-z])" if w[-1].isalpha() else "")
            for w in words
        ]
        return re.compile(rf"\s*(?P<u>{'|'.join(parts)})", re.I)

    def _age_patterns(self) -> list[tuple[re.Pattern[str], bool, bool]]:
        """(pattern, explicit, needs a relation): explicit ages out of range are rejected."""
        age = self.lexicon.demographics.age
        ko_units, en_units = _words(age.units.ko), _words(age.units.en)
        ko_cues, en_cues = _words(age.cues.ko), _words(age.cues.en)
        native = (
            f"(?:{_words(age.native_tens)})(?:{_words(age.native_ones)})?"
            f"|(?:{_words(age.native_ones)})"
        )
        relations = _words(w for r in self.lexicon.relations for w in r.forms.en)
        relations_ko = _words(w for r in self.lexicon.relations if r.subject for w in r.forms.ko)
        not_a_unit = (
            r"(?![\d.])(?!\s*(?:%|kg|kgs|kilos?|lbs?|pounds?|cm|ft|feet|foot|inch|inches|in\b|mg"
            r"|percent|degrees?|bpm|years?\s+ago|times|weeks?|months?|days?|hours?|minutes?|'|\"))"
        )
        specs = [
            (
                rf"(?<![\d.])(?:만\s*)?(?P<n>\d{{1,3}})\s*(?:{ko_units})(?!대|트|균|금|계|기|상|포)",
                True,
                False,
            ),
            (rf"(?<![가-힣])(?P<w>{native})\s*살", True, False),
            (
                rf"(?<![가-힣])(?:{ko_cues})\s*(?:는|가|은|이|:)?\s*(?:만\s*)?(?P<n>\d{{1,3}})(?![\d.])",
                True,
                False,
            ),
            (rf"(?<![가-힣])(?:{ko_cues})\s*(?:는|가|은|이|:)?\s*(?P<w>{native})", True, False),
            (
                r"(?<![\d.])(?P<n>\d{1,3})\s*(?:이세요|이신데|이시고|이십니다|이셔서|이셔요|세세요)",
                True,
                True,
            ),
            (rf"(?<![\d.])(?P<n>\d{{1,3}})\s*[- ]?\s*(?:{en_units})(?![a-z])", True, False),
            (  # "영감은 80이구요", "아버지는 올해 83이에요": a relative's bare number and a copula
                rf"(?<![가-힣])(?:{relations_ko})(?:님)?\s*(?:은|는|이|가|께서는|께서)\s*(?:올해\s*|이제\s*)?"
                r"(?:만\s*)?(?P<n>\d{2,3})\s*(?:이구요|이고요|이고|이에요|이예요|입니다|이요|인데|이신데"
                r"|이세요|이시고)(?![가-힣])",
                True,
                True,
            ),
            (rf"\b(?:{en_cues})\s*[:=]?\s*(?P<n>\d{{1,3}})(?![\d.])", True, False),
            (
                r"\b(?:i'?m|i am|he'?s|he is|she'?s|she is)\s+(?:only\s+|now\s+|just\s+)?"
                rf"(?P<n>\d{{1,3}}){not_a_unit}",
                False,
                False,
            ),
            (
                rf"\b(?:{relations})\s+is\s+(?:only\s+|now\s+)?(?P<n>\d{{1,3}}){not_a_unit}",
                False,
                False,
            ),
        ]
        return [(re.compile(p, re.I), explicit, rel) for p, explicit, rel in specs]

    def _sex_patterns(self) -> list[tuple[re.Pattern[str], dict[str, str]]]:
        """Patterns whose group `w` states a sex, with the value of each word."""
        sex = self.lexicon.demographics.sex
        value_of = {w.lower(): "male" for w in (*sex.male.ko, *sex.male.en)}
        value_of |= {w.lower(): "female" for w in (*sex.female.ko, *sex.female.en)}
        value_of |= {"m": "male", "f": "female"}
        long_ko = _words(w for w in (*sex.male.ko, *sex.female.ko) if len(w) > 1)
        short_ko = _words(w for w in (*sex.male.ko, *sex.female.ko) if len(w) == 1)
        en = _words((*sex.male.en, *sex.female.en))
        years_old = r"\d{1,3}\s*[- ]?\s*(?:(?:years?|yrs?)[\s-]*old|yo|y/o|y\.o\.)"
        patterns = [
            # "남자예요", "67세 남자고": a sex word ending the phrase, not "남자친구", "여자 의사"
            rf"(?<![가-힣])(?P<w>{long_ko})(?:아이|애|아기)?(?=\s*(?:예요|이에요|에요|입니다|이고|고|인데"
            r"|이며|며|임|이요|요|이구요|구요|이세요|이십니다)|\s*[.,!?/)]|\s*$)",
            rf"(?:(?<=세)|(?<=살))\s*[/,]?\s*(?P<w>{short_ko})(?![가-힣])",  # "67세 남"
            rf"\b(?:i'?m|i am)\s+(?:a\s+)?(?:{years_old}\s+)?(?P<w>{en})\b",
            rf"\b{years_old}\s+(?P<w>{en})\b",
            r"\bsex\s*[:=]?\s*(?P<w>male|female|m|f)\b",
            r"(?<![a-z])(?P<w>male|female)\b(?!\s+(?:doctor|nurse|friend|colleague|partner|patient"
            r"|dog|cat|physician))",
        ]
        return [(re.compile(p, re.I), value_of) for p in patterns]

    # -- reading a message --------------------------------------------------------------------

    def extract(self, text: str) -> SlotExtraction:
        """Slot items in `text`, who they are about, impossible values and unknown medicines."""
        text = normalise(text)
        clauses = _clauses(text)
        terms = self._find_terms(text)
        cue_hits = self._cues.find(text)
        values, rejected, used, value_cues = self._read_values(text, cue_hits, terms)
        values += self._read_bare_temperatures(text, values, used)
        terms_found = terms
        terms = [t for t in terms if not _inside_longer(t, value_cues)]
        mentions = [self._term_mention(text, hit) for hit in self._merge_allergies(text, terms)]
        young = self._read_young_ages(text, used)
        ages, age_rejects = self._read_ages(text, used + [(m.start, m.end) for m in young])
        mentions += values + young + ages + self._read_sexes(text)
        mentions.sort(key=lambda m: m.start)
        # A relation word inside a term ("애기가 덜 움직여요" is the mother's) or before a thing
        # of theirs ("와이프 혈당기로 재봤는데") names no one the clause is about.
        relations = [
            r
            for r in self._relations.find(text)
            if not _inside_longer(r, terms_found) and not _starts(self._not_a_person, text, r.end)
        ]
        self._assign_holders(text, clauses, relations)
        starts = [c.start for c in clauses]
        for mention in mentions:
            mention.holder = clauses[bisect.bisect_right(starts, mention.start) - 1].holder
        self._young_ages_to_child(young, relations)
        self._mark(text, clauses, mentions)
        subject = self._subject(text, clauses, relations, mentions)
        items = self._items(text, clauses, mentions, subject, relations)
        return SlotExtraction(
            items=items,
            subject=subject.name if subject else "self",
            rejected=tuple(rejected + age_rejects),
            unknown_medicines=self._unknown_medicines(text, terms, cue_hits),
        )

    def topics(self, text: str) -> list[str]:
        """The topics a question asks about (exercise, diet...), in the order it names them:
        the focus of a question, never stored in a profile."""
        found = self._topics.find(normalise(text))
        return list(dict.fromkeys(str(hit.payload) for hit in found))

    def corrects(self, text: str) -> bool:
        """Whether a message says something said before was wrong ("잘못 말했어요", "sorry")."""
        return bool(self._correction.search(normalise(text)))

    def measures_named(self, text: str) -> set[str]:
        """The measures a message names by their cues ("혈압", "blood sugar"), with or without
        a number."""
        return {hit.payload.measure.key for hit in self._cues.find(normalise(text))}

    def worries(self, text: str) -> bool:
        """Whether a message voices worry about one's health ("걱정돼요", "I'm freaking out")."""
        return bool(self._worry.search(normalise(text)))

    def refers_back(self, text: str) -> Literal["medicine", "any"] | None:
        """Whether a question refers to something said before: to a medicine ("부작용은요?",
        "when do I take it?"), to anything ("그건 정상이에요?", "is it serious?"), or not."""
        normal = normalise(text)
        if self._medicine_follow_up.search(normal):
            return "medicine"
        return "any" if self._follow_up.search(normal) else None

    def _find_terms(self, text: str) -> list[_Hit]:
        """Term hits, without those inside a phrase their entry excludes ("통풍이 잘 되는").
        The text is also read with its filler words blanked, position for position, so that
        "머리가 좀 아파요" is read as "머리가 아파요" and the item keeps the words as written."""
        found = self._terms.find(text)
        blanked = self._fillers.sub(lambda m: " " * len(m.group()), text)
        if blanked != text:  # a form may hold a filler itself ("땀이 많이 나"): both readings
            found = _longest_first([*found, *self._terms.find(blanked)])
        hits = []
        for hit in found:
            exclude = self._excludes.get((hit.payload.slot, hit.payload.term.name))
            if exclude and any(
                m.start() < hit.end and hit.start < m.end() for m in exclude.finditer(text)
            ):
                continue
            hits.append(hit)
        return hits

    def _merge_allergies(self, text: str, hits: list[_Hit]) -> list[_Hit]:
        """A medicine named with an allergy word is a drug allergy, not a medicine taken."""
        if self._drug_allergy is None:
            return hits
        merged: list[_Hit] = []
        i = 0
        while i < len(hits):
            first, second = hits[i], hits[i + 1] if i + 1 < len(hits) else None
            if second is not None:
                gap = text[first.end : second.start]
                medicine_then_allergy = (
                    _is_medicine(first)
                    and _is_allergy(second)
                    and _ALLERGY_AFTER_MEDICINE.match(gap)
                )
                allergy_then_medicine = (
                    _is_allergy(first)
                    and _is_medicine(second)
                    and _ALLERGY_BEFORE_MEDICINE.match(gap)
                )
                if medicine_then_allergy or allergy_then_medicine:
                    merged.append(_Hit(first.start, second.end, self._drug_allergy))
                    i += 2
                    continue
            merged.append(first)
            i += 1
        return merged

    def _term_mention(self, text: str, hit: _Hit) -> _Mention:
        """A mention of a term; a medicine keeps the dose written after it in its text."""
        ref: _TermRef = hit.payload
        text_end = hit.end
        if ref.slot == "medications":
            dose = self._dose.match(text, hit.end)
            text_end = dose.end() if dose else hit.end
        return _Mention(ref.slot, ref.term.name, ref.term.ko, None, hit.start, hit.end, text_end)

    # -- values ---------------------------------------------------------------------------------

    def _read_values(
        self, text: str, cue_hits: list[_Hit], terms: list[_Hit]
    ) -> tuple[list[_Mention], list[tuple[str, str]], list[tuple[int, int]], list[_Hit]]:
        """Vitals and labs after (or just before) their cues; impossible ones rejected."""
        mentions: list[_Mention] = []
        rejected: list[tuple[str, str]] = []
        used: list[tuple[int, int]] = []
        value_cues: list[_Hit] = []
        for index, cue in enumerate(cue_hits):
            ref: _CueRef = cue.payload
            if _starts(self._blockers[ref.measure.key], text, cue.end):
                continue
            next_start = cue_hits[index + 1].start if index + 1 < len(cue_hits) else len(text)
            reading = self._number_after(text, cue, ref, next_start, terms) or self._number_before(
                text, cue, ref
            )
            if reading is None or any(s < reading.end and reading.start < e for s, e in used):
                continue
            corrected = self._corrected(text, ref, reading, next_start)
            if corrected is not None:
                used.append((reading.start, reading.end))  # the number taken back
                reading = corrected
            used.append((reading.start, reading.end))
            value_cues.append(cue)
            found, problem = self._convert(ref, reading)
            if problem:
                rejected.append((ref.reading.key if ref.reading else ref.measure.key, problem))
                continue
            start, end = min(cue.start, reading.start), max(cue.end, reading.end)
            for key_reading, value in found:
                mentions.append(
                    _Mention(
                        ref.measure.slot,
                        key_reading.key,
                        key_reading.ko,
                        value,
                        start,
                        end,
                        end,
                        unsure=reading.unsure,
                    )
                )
        return mentions, rejected, used, value_cues

    def _number_after(
        self, text: str, cue: _Hit, ref: _CueRef, next_cue: int, terms: list[_Hit]
    ) -> _RawReading | None:
        """The first number after a cue, close enough and with nothing else in between."""
        stop = _VALUE_BREAK.search(text, cue.end)
        match = _NUMBER.search(text, cue.end, stop.start() if stop else len(text))
        if match is None or match.start() - cue.end > MAX_VALUE_GAP or match.start() > next_cue:
            return None
        filler = text[cue.end : match.start()]
        if "," in filler or any(cue.end <= t.start < match.start() for t in terms):
            return None
        pair = _PAIR.match(text, match.start()) if len(ref.measure.readings) == 2 else None
        if pair and ref.reading is None:
            numbers, end = (float(pair[1]), float(pair[2])), pair.end()
        else:
            numbers, end = (float(match.group()),), match.end()
        return self._finish(text, ref, match.start(), end, numbers, filler_before=True)

    def _corrected(
        self, text: str, ref: _CueRef, reading: _RawReading, next_cue: int
    ) -> _RawReading | None:
        """The reading that takes this one back in the same message: a correction word soon
        after it, then a number of the same shape (a pair for a pair) before any other cue."""
        window_end = min(next_cue, reading.end + CORRECTION_REACH)
        marker = self._correction.search(text, reading.end, window_end)
        if marker is None:
            return None
        match = _NUMBER.search(text, marker.end(), min(len(text), marker.end() + MAX_VALUE_GAP))
        if match is None or match.start() >= next_cue:
            return None
        pair = _PAIR.match(text, match.start())
        if len(reading.numbers) == 2:
            if not pair:
                return None
            numbers, end = (float(pair[1]), float(pair[2])), pair.end()
        elif pair:
            return None  # a pair does not correct a single number
        else:
            numbers, end = (float(match.group()),), match.end()
        return self._finish(text, ref, match.start(), end, numbers, filler_before=True)

    def _number_before(self, text: str, cue: _Hit, ref: _CueRef) -> _RawReading | None:
        """A number with its unit written just before a cue ("38도 열이 나요", "175cm tall")."""
        if len(ref.measure.readings) != 1:
            return None
        window_start = max(0, cue.start - _LOOK)
        window = text[window_start : cue.start]
        best = None
        for match in _NUMBER.finditer(window):
            unit = self._units[ref.measure.key].match(window, match.end())
            if unit and len(window) - unit.end() <= MAX_REVERSE_GAP:
                gap = window[unit.end() :]
                if not re.search(r"[\d.!?,\n]", gap):
                    best = (match, unit)
        if best is None:
            return None
        match, _ = best
        start, end = window_start + match.start(), window_start + match.end()
        return self._finish(text, ref, start, end, (float(match.group()),), filler_before=False)

    def _finish(
        self,
        text: str,
        ref: _CueRef,
        start: int,
        end: int,
        numbers: tuple[float, ...],
        *,
        filler_before: bool,
    ) -> _RawReading | None:
        """Read the unit after a number and decide whether it is a reading at all."""
        unit_match = self._units[ref.measure.key].match(text, end)
        unit = self._unit_of[unit_match["u"].lower()] if unit_match else None
        after = unit_match.end() if unit_match else end
        if unit is None and (ref.weak or _starts(self._counters, text, end)):
            return None
        if _starts(self._changes, text, after) or _ends(self._changes_before, text, start):
            return None
        unsure = bool(
            (filler_before and _ends(self._approx_before, text, start))
            or _starts(self._approx_after, text, after)
            or (len(ref.measure.readings) == 2 and len(numbers) == 1 and ref.reading is None)
        )
        return _RawReading(start, after, numbers, unit, unsure)

    def _convert(
        self, ref: _CueRef, raw: _RawReading
    ) -> tuple[list[tuple[Reading, float | int]], str | None]:
        """Values in the canonical unit with their readings, or the reason they are impossible."""
        measure = ref.measure
        readings = (ref.reading,) if ref.reading else measure.readings[: len(raw.numbers)]
        candidates = [raw.unit] if raw.unit else [measure.units[0]]
        if raw.unit is None:
            candidates += [u for u in measure.units[1:] if u.guess]
        for position, unit in enumerate(candidates):
            values = [n * unit.factor + unit.offset for n in raw.numbers]
            if all(r.min <= v <= r.max for r, v in zip(readings, values, strict=True)):
                if len(values) == 2 and values[0] <= values[1]:
                    return [], "diastolic_above_systolic"
                raw.unsure = raw.unsure or position > 0  # a guessed unit is to be confirmed
                rounded = [_rounded(v, measure.decimals) for v in values]
                return list(zip(readings, rounded, strict=True)), None
        return [], "out_of_range"

    # -- demographics -----------------------------------------------------------------------------

    def _read_ages(
        self, text: str, used: list[tuple[int, int]]
    ) -> tuple[list[_Mention], list[tuple[str, str]]]:
        """Ages stated now ("67세", "I'm 67"), not then ("80세셨을 때", "when he was 80")."""
        age = self.lexicon.demographics.age
        mentions: list[_Mention] = []
        rejected: list[tuple[str, str]] = []
        taken: list[tuple[int, int]] = list(used)
        for pattern, explicit, needs_relation in self._ages:
            for match in pattern.finditer(text):
                group = "n" if "n" in pattern.groupindex else "w"
                start, end = match.span(group)
                if any(s < end and start < e for s, e in taken):
                    continue
                if _starts(self._not_age_after, text, match.end()) or _ends(
                    self._not_age_before, text, match.start()
                ):
                    continue
                value = int(match[group]) if group == "n" else self._native(match[group])
                taken.append((start, end))
                if not age.min <= value <= age.max:
                    if explicit:
                        rejected.append(("age", "out_of_range"))
                    continue
                unsure = bool(_starts(self._approx_after, text, match.end()))
                mentions.append(
                    _Mention(
                        "demographics",
                        "age",
                        age.ko,
                        value,
                        match.start(),
                        match.end(),
                        match.end(),
                        unsure=unsure,
                        needs_relation=needs_relation,
                    )
                )
        return mentions, rejected

    def _read_young_ages(self, text: str, used: list[tuple[int, int]]) -> list[_Mention]:
        """A young child's age in weeks, months or days (in years: "4개월 딸" is 0.33)."""
        age = self.lexicon.demographics.age
        return [
            _Mention("demographics", "age", age.ko, value, start, end, end)
            for start, end, value in slot_shapes.young_ages(text, self._child_words)
            if not any(s < end and start < e for s, e in used)
        ]

    def _young_ages_to_child(self, young: list[_Mention], relations: list[_Hit]) -> None:
        """A baby's age said beside the word for the child ("태어난지 7주됐어요 아들이에요") is
        the child's, whichever clause the word stands in."""
        child = next(
            (r.payload.name for r in relations if r.payload.name in self._child_names), None
        )
        for mention in young:
            if child is not None and mention.holder in (None, "self"):
                mention.holder = child

    def _read_bare_temperatures(
        self, text: str, values: list[_Mention], used: list[tuple[int, int]]
    ) -> list[_Mention]:
        """A thermometer's reading with no word for temperature ("귀체온계로 재니까 38.4 나와요"),
        when the message read none with one."""
        if any(m.name == "temp" for m in values):
            return []
        found = [
            (start, end, value)
            for start, end, value in slot_shapes.bare_temperatures(text, self._thermometer)
            if not any(s < end and start < e for s, e in used)
        ]
        temp = next((r for m in self.lexicon.measures for r in m.readings if r.key == "temp"), None)
        if temp is None:
            return []
        for start, end, _ in found:
            used.append((start, end))
        return [
            _Mention("vitals", "temp", temp.ko, value, start, end, end)
            for start, end, value in found
        ]

    def _native(self, word: str) -> int:
        """The value of a native Korean numeral ("예순일곱" -> 67)."""
        age = self.lexicon.demographics.age
        word = re.sub(r"\s", "", word)
        tens = next(
            (t for t in sorted(age.native_tens, key=len, reverse=True) if word.startswith(t)), ""
        )
        return age.native_tens.get(tens, 0) + age.native_ones.get(word[len(tens) :], 0)

    def _read_sexes(self, text: str) -> list[_Mention]:
        """Statements of sex ("67세 남자예요", "I'm a 45 year old woman")."""
        sex = self.lexicon.demographics.sex
        mentions: list[_Mention] = []
        taken: list[int] = []
        for pattern, value_of in self._sexes:
            for match in pattern.finditer(text):
                start, end = match.span("w")
                if start in taken:
                    continue
                taken.append(start)
                value = value_of[match["w"].lower()]
                mentions.append(_Mention("demographics", "sex", sex.ko, value, start, end, end))
        return mentions

    # -- whom, and how it is meant ----------------------------------------------------------------

    def _assign_holders(self, text: str, clauses: list[_Clause], relations: list[_Hit]) -> None:
        """Whom each clause is about: a relation named in it wins, then "I", then a pronoun for
        the last relative; a clause that names nobody goes on with its sentence's last one."""
        last_relative: str | None = None
        previous: _Clause | None = None
        for clause in clauses:
            named = [h.payload for h in relations if clause.start <= h.start < clause.end]
            if named:
                first: Relation = named[0]
                clause.holder = (
                    first.name if first.subject else "other" if first.other else "family"
                )
            elif self._self.search(text, clause.start, clause.end):
                clause.holder = "self"
            elif last_relative and self._pronoun.search(text, clause.start, clause.end):
                clause.holder = last_relative
            elif previous is not None and previous.sentence == clause.sentence:
                clause.holder = previous.holder
            last_relative = next((r.name for r in reversed(named) if r.subject), last_relative)
            previous = clause

    def _mark(self, text: str, clauses: list[_Clause], mentions: list[_Mention]) -> None:
        """Set negated / history / unsure from the cues in each mention's clause."""
        for clause in clauses:
            inside = [m for m in mentions if clause.start <= m.start < clause.end]
            words = [m for m in inside if m.slot in ITEM_SLOTS]
            if not inside:
                continue

            def free(match: re.Match[str], inside: list[_Mention] = inside) -> bool:
                """A cue that is part of a word ("기운이 없", "no appetite") is not a cue."""
                return not any(match.start() < m.end and m.start < match.end() for m in inside)

            def found(pattern: re.Pattern[str], clause: _Clause = clause) -> bool:
                return any(free(m) for m in pattern.finditer(text, clause.start, clause.end))

            denied = self._reach(text, clause, words, self._neg, free)
            stopped = self._reach(text, clause, words, self._stop, free)
            past = found(self._history) and not found(self._current)
            past_condition = found(self._history_condition) and not found(self._current)
            hedged = found(self._uncertain)
            for mention in inside:
                if mention.slot == "demographics":
                    continue
                mention.unsure = mention.unsure or hedged
                mention.history = past or (mention.slot == "conditions" and past_condition)
                if id(mention) in stopped:
                    mention.negated = mention.history = True
                elif id(mention) in denied:
                    mention.negated, mention.history = True, False

    def _reach(
        self,
        text: str,
        clause: _Clause,
        words: list[_Mention],
        cues: tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]],
        free: Callable[[re.Match[str]], bool],
    ) -> set[int]:
        """Ids of the words a set of cues covers: the nearest word after a "before" cue (and
        those listed with it), the nearest before an "after" cue, a word a cue follows at once."""
        before, after, right_after = cues
        covered: set[int] = set()
        for match in before.finditer(text, clause.start, clause.end):
            index = next((i for i, w in enumerate(words) if w.start >= match.end()), None)
            if free(match) and index is not None:
                covered |= _listed(text, words, index, step=1)
        for match in after.finditer(text, clause.start, clause.end):
            index = next(
                (i for i in range(len(words) - 1, -1, -1) if words[i].end <= match.start()), None
            )
            if free(match) and index is not None:
                covered |= _listed(text, words, index, step=-1)
        for index, word in enumerate(words):
            if _starts(right_after, text, word.end):
                covered |= _listed(text, words, index, step=-1)
        return covered

    def _subject(
        self, text: str, clauses: list[_Clause], relations: list[_Hit], mentions: list[_Mention]
    ) -> Relation | None:
        """The relative a carer speaks for, or None when the speaker is the patient.

        A relative becomes the patient when the speaker says nothing about themself and the
        relative is tied to the message strongly (their age, a current symptom, medicine or
        value, "my mom is/has", "for my father", "모시고", "보호자") or weakly with a current
        condition ("저희 어머니가 당뇨가 있으세요"). "어머니가 당뇨" alone is family history, and
        a relative who has died is never the patient.
        """
        if any(m.holder == "self" for m in mentions):
            return None
        anywhere = bool(self._carer_anywhere.search(text))
        starts = [c.start for c in clauses]
        for hit in relations:
            relation: Relation = hit.payload
            clause = clauses[bisect.bisect_right(starts, hit.start) - 1]
            if not relation.subject or self._death.search(text, clause.start, clause.end):
                continue
            held = [m for m in mentions if m.holder == relation.name]
            acute = any(
                (m.slot in ("symptoms", "medications", "vitals", "labs") and not m.history)
                or m.name == "age"
                for m in held
            )
            strong = (
                anywhere
                or acute
                or _ends(self._carer_strong, text, hit.start)
                or _starts(self._carer_after, text, hit.end)
            )
            weak = _ends(self._carer_weak, text, hit.start) and any(
                m.slot == "conditions" and not m.history and not m.negated for m in held
            )
            if strong or weak:
                return relation
        return None

    def _items(
        self,
        text: str,
        clauses: list[_Clause],
        mentions: list[_Mention],
        subject: Relation | None,
        relations: list[_Hit],
    ) -> tuple[SlotItem, ...]:
        """Mentions as items: a relative's conditions are family history, the rest of what is
        said of a relative or of someone outside the family (a friend) is not kept; age and
        sex only the patient's. One person named two ways ("애", "아들") is one."""
        patient = subject.name if subject else "self"
        items: list[SlotItem] = []
        seen: set[tuple] = set()
        if subject is not None and subject.sex:
            first = next(h for h in relations if h.payload is subject)
            if not any(m.name == "sex" and (m.holder or patient) == patient for m in mentions):
                sex = self.lexicon.demographics.sex
                mentions = sorted(
                    [
                        *mentions,
                        _Mention(
                            "demographics",
                            "sex",
                            sex.ko,
                            subject.sex,
                            first.start,
                            first.end,
                            first.end,
                        ),
                    ],
                    key=lambda m: m.start,
                )
        for mention in mentions:
            holder = mention.holder or patient
            if self.same_person(holder, patient):
                holder = patient
            # A spouse or in-law is no blood kin of the speaker; of a child the speaker cares for,
            # the speaker's husband is the father: family by marriage counts only for them.
            kin = not (patient == "self" and holder in self._by_marriage)
            if holder == "other" or (
                holder != patient and (mention.slot != "conditions" or not kin)
            ):
                if mention.slot != "demographics":
                    continue
            if mention.slot == "demographics":
                if holder != patient or (mention.needs_relation and subject is None):
                    continue
                key: tuple = (mention.slot, mention.name)
            else:
                key = (
                    mention.slot,
                    mention.name,
                    mention.value,
                    mention.negated,
                    holder != patient,
                    mention.history,
                )
            if key in seen:
                continue
            seen.add(key)
            items.append(
                SlotItem(
                    slot=mention.slot,
                    name=mention.name,
                    name_ko=mention.name_ko,
                    value=mention.value,
                    text=text[mention.start : mention.text_end].strip(),
                    negated=mention.negated,
                    family=holder != patient,
                    history=mention.history,
                    unsure=mention.unsure,
                    start=mention.start,
                    end=mention.text_end,
                    context=self._reading_context(text, clauses, mention),
                    details=self._details(text, clauses, mention),
                )
            )
        return tuple(items)

    def same_person(self, one: str, other: str) -> bool:
        """Whether two relation names stand for one person cared for: the same relation, or
        a son or daughter and the word for a child ("애", "아이")."""
        if one == other:
            return True
        kind = {r.name: r.kind_of for r in self.lexicon.relations}
        return kind.get(one) == other or kind.get(other) == one

    def _reading_context(
        self, text: str, clauses: list[_Clause], mention: _Mention
    ) -> tuple[str, ...]:
        """Where or when a reading was taken, from its sentence ("집에서 재니까", "fasting")."""
        if mention.slot not in ("vitals", "labs"):
            return ()
        start, end = _sentence_of(clauses, mention.start)
        return tuple(name for name, cue in self._contexts if cue.search(text, start, end))

    def _details(self, text: str, clauses: list[_Clause], mention: _Mention) -> tuple[str, ...]:
        """How long, and when it comes, said in a symptom's or condition's sentence; the week
        of a pregnancy."""
        if mention.slot not in ("symptoms", "conditions") or mention.negated:
            return ()
        start, end = _sentence_of(clauses, mention.start)
        found: list[str] = []
        if mention.name == "pregnancy":
            weeks = (p.search(text, start, end) for p in self._pregnancy_week)
            week = next((w for w in weeks if w), None)
            if week:
                korean = _HANGUL_CHAR.search(week.group())
                found.append(f"{week['w']}주" if korean else f"{week['w']} weeks")
        if mention.slot == "symptoms":
            for cue in (self._duration, self._pattern):
                found += [m.group().strip() for m in cue.finditer(text, start, end)]
        return tuple(dict.fromkeys(f for f in found if f))

    def _unknown_medicines(self, text: str, terms: list[_Hit], cues: list[_Hit]) -> tuple[str, ...]:
        """Words that look like a medicine being taken ("엑스자임정 먹어요", "Zorbex 20mg") but
        that the lexicon does not know."""
        known = [*terms, *cues]
        found: list[str] = []
        candidates = [
            m
            for m in self._unknown_word.finditer(text)
            if _starts(self._medicine_context, text, m.end())
        ] + list(self._unknown_dosed.finditer(text))
        for match in sorted(candidates, key=lambda m: m.start()):
            start, end = match.span("w")
            word = match["w"]
            if word.lower() in self._stopwords or word in found:
                continue
            if any(k.start < end and start < k.end for k in known):
                continue
            found.append(word)
        return tuple(found)


def _sentence_of(clauses: list[_Clause], position: int) -> tuple[int, int]:
    """The span of the sentence that holds `position`."""
    starts = [c.start for c in clauses]
    number = clauses[max(0, bisect.bisect_right(starts, position) - 1)].sentence
    inside = [c for c in clauses if c.sentence == number]
    return inside[0].start, inside[-1].end


def _rounded(value: float, decimals: int) -> float | int:
    """A value rounded for storage: an int when the measure has no decimals."""
    return int(round(value)) if decimals == 0 else round(value, decimals)


def _inside_longer(hit: _Hit, containers: list[_Hit]) -> bool:
    """True when `hit` lies inside a longer hit ("당뇨" inside the cue "당뇨 수치가 200")."""
    return any(
        c.start <= hit.start and hit.end <= c.end and c.end - c.start > hit.end - hit.start
        for c in containers
    )


def _is_medicine(hit: _Hit) -> bool:
    return hit.payload.slot == "medications"


def _is_allergy(hit: _Hit) -> bool:
    term = hit.payload.term
    return isinstance(term, Condition) and term.name == "allergy"


def _listed(text: str, words: list[_Mention], index: int, *, step: int) -> set[int]:
    """The word at `index` and the words listed with it in the direction of `step`."""
    covered = {id(words[index])}
    i = index
    while 0 <= i + step < len(words):
        left, right = sorted((words[i], words[i + step]), key=lambda w: w.start)
        if not _LIST_GAP.match(text[left.text_end : right.start]):
            break
        i += step
        covered.add(id(words[i]))
    return covered
