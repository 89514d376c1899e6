"""Rules fact extraction: turn a message into normalised facts of a sub-type's fields."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from graphs.common import normalize
from graphs.common.brain import Extraction
from graphs.common.text import is_meaningless
from knowledge.loader import Knowledge
from knowledge.models import FieldSpec

MAX_TEXT_ANSWER = 500  # characters kept of a free-text answer
CUE_WINDOW_BEFORE = 14  # characters before a value searched for a field cue ("보증금 2억")
CUE_WINDOW_AFTER = 8  # characters after it ("2억의 보증금", "작년 3월에 퇴사")

# A person named right after a relation word: "친구 김철수한테", "사장 박민수가".
_RELATION = (
    "친구|지인|동창|동료|선배|후배|사장님|사장|대표|집주인|임대인|남편|아내|전남편|전처|"
    "전 남편|전 아내|동생|형|언니|오빠|누나|삼촌|이모|고모"
)
_PARTICLE = "한테|에게|께|이랑|랑|하고|씨|님|이가|이는|이를|이한테|가|이|은|는|을|를|와|과|도|의|한"
_NAMED_RELATION = re.compile(
    rf"(?P<rel>{_RELATION})\s*(?!님)(?!(?:{_PARTICLE})(?:[\s,.!?]|$))(?P<name>[가-힣]{{2,4}}?)"
    rf"(?=(?:{_PARTICLE}|[\s,.!?]|$))"
)
_COMPANY = re.compile(
    r"(?P<name>(?:\(주\)\s*|주식회사\s*)[가-힣A-Za-z0-9]{1,20}|"
    r"[가-힣A-Za-z0-9]{1,20}(?:주식회사|\(주\)|상사|건설|산업|유통|식당|마트|카페|편의점))"
)
_NO_EVIDENCE = re.compile(r"(증거|자료|evidence)[^.!?\n]{0,12}(없|안 ?남|no\b|none)", re.I)
# A mention followed closely by a negation does not count: "차용증은 없어요", "no contract".
_NEGATION_AFTER = re.compile(r"^[^.!?,\n]{0,6}?(없|안 ?썼|안 ?했|못 ?받|않)")
_LATIN = re.compile(r"[a-z]")


def _mentions(lowered: str, word: str) -> bool:
    """Whether `word` occurs in the text, not negated right after; Latin words match whole."""
    if _LATIN.search(word):
        pattern = re.compile(rf"(?<![a-z]){re.escape(word)}(?![a-z])")
        spans = [m.end() for m in pattern.finditer(lowered)]
    else:
        spans, pos = [], lowered.find(word)
        while pos >= 0:
            spans.append(pos + len(word))
            pos = lowered.find(word, pos + 1)
    return any(not _NEGATION_AFTER.match(lowered[end:]) for end in spans)


class FactExtractor:
    """Extracts a sub-type's facts from Korean or English text with the K2 field definitions."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.knowledge = knowledge
        lex = knowledge.lexicon
        self._yes = [w for ws in lex.yes.values() for w in ws]
        self._no = [w for ws in lex.no.values() for w in ws]
        self._unknown = [w.lower() for ws in lex.unknown.values() for w in ws]
        self._corrections = [w.lower() for ws in lex.correction_markers.values() for w in ws]
        self._ongoing = [w.lower() for ws in lex.ongoing.values() for w in ws]
        self._emotions = [
            (kind, cue.lower())
            for kind, by_lang in lex.emotions.items()
            for cues in by_lang.values()
            for cue in cues
        ]

    # --- public -----------------------------------------------------------------------------

    def extract(self, text: str, *, sub_type: str, asked: str | None, now: datetime) -> Extraction:
        """Extract the asked field's answer, the other fields' values and feelings from `text`."""
        lowered = text.lower()
        keys = self._field_keys(sub_type)
        facts = self._free_text_facts(text, sub_type=sub_type, keys=keys, asked=asked, now=now)
        answer, invalid, unknown = None, None, False
        if asked is not None:
            spec = self.knowledge.k2.field(sub_type, asked)
            answer, invalid = self.parse_answer(spec, text, now=now, tagged=facts.pop(asked, None))
            if answer is None and self._says_unknown(lowered):
                unknown, invalid = True, None
        return Extraction(
            answer=answer,
            invalid=invalid,
            unknown=unknown,
            facts=facts,
            emotions=self._emotions_in(lowered),
            correction=any(marker in lowered for marker in self._corrections),
        )

    def parse_answer(
        self, spec: FieldSpec, text: str, *, now: datetime, tagged: Any = None
    ) -> tuple[Any, str | None]:
        """Normalise `text` as the answer to a field: (value, None) or (None, reason code)."""
        if tagged is not None:
            return self._check(spec, tagged, now=now)
        stripped = text.strip()
        lowered = stripped.lower()
        if spec.kind == "amount":
            found = normalize.find_amounts(stripped)
            value = found[-1].value if found else normalize.parse_amount(stripped)
            return (
                self._check(spec, value, now=now)
                if value is not None
                else (None, "amount_unparsed")
            )
        if spec.kind == "date":
            if any(word in lowered for word in self._ongoing):
                return "ongoing", None
            found = normalize.find_dates(stripped, now=now)
            value = found[-1].value if found else normalize.parse_date(stripped, now=now)
            return (
                self._check(spec, value, now=now) if value is not None else (None, "date_unparsed")
            )
        if spec.kind == "yesno":
            value = normalize.parse_yes_no(stripped, yes=self._yes, no=self._no)
            return (value, None) if value is not None else (None, "yesno")
        if spec.kind == "choice":
            matches = self.match_options(spec, lowered)
            return (matches[0], None) if matches else (None, "choice")
        if spec.kind == "multi_choice":
            matches = self.match_options(spec, lowered)
            return (matches, None) if matches else (None, "choice")
        if spec.kind == "int":
            value = normalize.parse_int(stripped)
            if value is None and spec.minimum == 0 and self._says_none(stripped):
                value = 0
            return self._check(spec, value, now=now) if value is not None else (None, "int")
        if spec.kind == "duration":
            value = normalize.parse_duration_months(stripped)
            return self._check(spec, value, now=now) if value is not None else (None, "duration")
        if is_meaningless(stripped) or self._says_unknown(lowered):
            return None, "text"
        return stripped[:MAX_TEXT_ANSWER], None

    def match_options(self, spec: FieldSpec, lowered: str) -> list[str]:
        """Option values whose label or synonyms appear in the text (not negated), in option order."""
        found = []
        for option in spec.options:
            words = [option.label.ko, option.label.en, *option.synonyms]
            if any(_mentions(lowered, w.lower()) for w in words if w):
                found.append(option.value)
        return found

    # --- helpers ----------------------------------------------------------------------------

    def _check(self, spec: FieldSpec, value: Any, *, now: datetime) -> tuple[Any, str | None]:
        """Validate a normalised value against the field's rules."""
        if spec.kind == "amount" and value <= 0:
            return None, "amount_nonpositive"
        if spec.kind == "date" and value != "ongoing":
            if not spec.allow_future and normalize.is_future(value, now=now):
                return None, "date_future"
        if spec.kind in ("int", "duration"):
            low = spec.minimum if spec.minimum is not None else 0
            high = spec.maximum if spec.maximum is not None else 10**6
            if not low <= value <= high:
                return None, "int_range"
        return value, None

    def _field_keys(self, sub_type: str) -> list[str]:
        """Every field the sub-type may need, conditional ones included."""
        spec = self.knowledge.k2.sub_types.get(sub_type)
        return [req.key for req in spec.required_fields()] if spec else []

    def _free_text_facts(
        self, text: str, *, sub_type: str, keys: list[str], asked: str | None, now: datetime
    ) -> dict[str, Any]:
        """Values of any of the sub-type's fields stated in free text (latest statement wins)."""
        k2 = self.knowledge.k2
        specs = {key: k2.field(sub_type, key) for key in keys}
        lowered = text.lower()
        facts: dict[str, Any] = {}
        for kind, finder in (
            ("amount", lambda: normalize.find_amounts(text)),
            ("date", lambda: normalize.find_dates(text, now=now)),
        ):
            fields = [k for k, s in specs.items() if s.kind == kind]
            if not fields:
                continue
            fallback = (
                asked if asked in fields else next((k for k in fields if specs[k].primary), None)
            )
            for match in finder():
                key = self._cued_field(lowered, match.start, match.end, fields, specs) or fallback
                if key is None:
                    continue
                value, invalid = self._check(specs[key], match.value, now=now)
                if invalid is None:
                    facts[key] = value
        for key, spec in specs.items():
            if (
                key == asked
                or spec.kind not in ("choice", "multi_choice")
                or key == "evidence_type"
            ):
                continue
            matches = self.match_options(spec, lowered)
            if matches and spec.kind == "choice" and len(matches) == 1:
                facts[key] = matches[0]
        if "evidence" in specs:
            kinds = self.match_options(k2.field(sub_type, "evidence_type"), lowered)
            if kinds:
                facts["evidence"] = True
                if "evidence_type" in specs or asked == "evidence":
                    facts["evidence_type"] = kinds
            elif _NO_EVIDENCE.search(text):
                facts["evidence"] = False
        if "counterparty" in specs and asked != "counterparty":
            name = self._counterparty_name(text)
            if name:
                facts["counterparty"] = name
        return facts

    @staticmethod
    def _cued_field(
        lowered: str, start: int, end: int, fields: list[str], specs: dict[str, FieldSpec]
    ) -> str | None:
        """The field whose cue stands nearest to a value, within a short window."""
        # A cue before the value ("보증금 2억") wins over one after it ("2억, 월세는 …").
        before = lowered[max(0, start - CUE_WINDOW_BEFORE) : start]
        after = lowered[end : end + CUE_WINDOW_AFTER]
        best, best_distance = None, 10**6
        for key in fields:
            for cue in (c.lower() for c in specs[key].cues):
                pos = before.rfind(cue)
                if pos >= 0 and len(before) - pos < best_distance:
                    best, best_distance = key, len(before) - pos
        if best is not None:
            return best
        for key in fields:
            for cue in (c.lower() for c in specs[key].cues):
                pos = after.find(cue)
                if pos >= 0 and pos < best_distance:
                    best, best_distance = key, pos
        return best

    @staticmethod
    def _counterparty_name(text: str) -> str | None:
        """A named person or company in free text ("친구 김철수", "OO건설"), if any."""
        match = _NAMED_RELATION.search(text)
        if match:
            return f"{match.group('rel')} {match.group('name')}"
        match = _COMPANY.search(text)
        return match.group("name").strip() if match else None

    def _says_unknown(self, lowered: str) -> bool:
        return any(word in lowered for word in self._unknown)

    def _says_none(self, text: str) -> bool:
        return normalize.parse_yes_no(text, yes=[], no=self._no) is False

    def _emotions_in(self, lowered: str) -> tuple[dict[str, str], ...]:
        seen: dict[str, str] = {}
        for kind, cue in self._emotions:
            if kind not in seen and cue in lowered:
                seen[kind] = cue
        return tuple({"kind": kind, "cue": cue} for kind, cue in seen.items())
