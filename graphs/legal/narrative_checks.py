"""The rules' checks of a narrative sentence the model wrote for a staff summary.

A sentence is kept only when everything it states is on the record (a wrong fact in a staff
summary is worse than a missing one):
- every field it names is a recorded fact (a field recorded as unknown is not);
- every amount and date in it equals a recorded fact's value, read by the rules' own readers
  (graphs/common/normalize: "300만원" and "3,000,000원" are the same amount), and any other
  number in it is a recorded value; a value recorded as approximate keeps its "약" / "about";
- every name in it (a proper noun by Kiwi, a capitalised word in English) is in a recorded fact
  or the person's own account;
- it states no outcome or legal conclusion (the lexicon's `outcome_claims`, in either language);
- resting on a yes/no fact, it is negated (the lexicon's `negations`) exactly when the fact is
  "no": "there is evidence" is never kept for a "no" (a sentence on a field named in the
  negative, "severance_unpaid", is dropped either way: never kept wrong);
- it is in the intake's language and no longer than `MAX_SENTENCE_CHARS`.
`check_sentence` names the first check a sentence fails, or None.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphs.common.normalize import find_amounts, find_dates
from graphs.legal.names import bare
from graphs.legal.prompts import format_value
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge

MAX_SENTENCE_CHARS = 300
MIN_LANGUAGE_SHARE = 0.7  # of the letters (beside recorded words), in the intake's script
APPROX_WINDOW = 8  # characters either side of a value searched for its "약" / "쯤"
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
_HANGUL = re.compile(r"[가-힣ㄱ-ㅎㅏ-ㅣ]")
_LATIN = re.compile(r"[A-Za-z]")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[- ][A-Z][a-z]+)*\b")
# Capitalised English words that are no one's name.
_NOT_NAMES_EN = frozenset(
    "I The A An He She They It This That These Those On In At After Before When While Since "
    "Then Later Also However But And So As Of For From To With By The client Client Korea "
    "Korean KRW Won Mr Ms Mrs Dr January February March April May June July August September "
    "October November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
)


@dataclass(frozen=True)
class Record:
    """What a narrative may state: the recorded facts as the rules hold them."""

    facts: dict[str, Any]  # recorded values (None and unknown fields left out)
    kinds: dict[str, str]  # field key -> K2 kind
    approx: frozenset[str]  # fields recorded as approximate
    words: str  # recorded text values, their displays and the person's account, lower-cased
    numbers: frozenset[str]  # every number in a recorded value or its display (not the account)
    lang: str
    now: datetime
    # The memo's items by id (graphs/legal/memo.py): a sentence may rest on them too.
    items: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(
        cls, kn: Knowledge, state: dict[str, Any], lang: str, now: datetime, account: str
    ) -> Record:
        sub_type = state["sub_type"]
        facts = {k: v for k, v in (state.get("facts") or {}).items() if v is not None}
        kinds = {k: kn.k2.field(sub_type, k).kind for k in facts if k in kn.k2.fields}
        shown = {
            (k, shown_lang): format_value(kn, kn.k2.field(sub_type, k), v, shown_lang)
            for k, v in facts.items()
            if k in kinds
            for shown_lang in ("ko", "en")
        }
        texts = [str(v) for v in facts.values() if isinstance(v, str)]
        told = [str(v) for k, v in facts.items() if k != "action_description"]
        told += [text for (k, _), text in shown.items() if k != "action_description"]
        items = {i["id"]: i for i in state.get("memo") or [] if "id" in i}
        quotes = [str(i.get("quote", "")) for i in items.values()]
        told += [str(i[k]) for i in items.values() for k in ("amount", "date") if i.get(k)]
        return cls(
            facts=facts,
            kinds=kinds,
            approx=frozenset(state.get("approx", [])) & set(facts),
            words=" ".join([*texts, *shown.values(), account, *quotes]).lower(),
            numbers=frozenset(_plain_number(n) for n in _DIGITS.findall(" ".join(told))),
            lang=lang,
            now=now,
            items=items,
        )

    def values_of(self, *kinds: str) -> dict[object, set[str]]:
        """Recorded values of these kinds -> the fields (or memo items) holding them."""
        held: dict[object, set[str]] = {}
        for key, value in self.facts.items():
            if self.kinds.get(key) in kinds:
                held.setdefault(value, set()).add(key)
        for item_id, item in self.items.items():
            for kind in kinds:
                if item.get(kind) is not None:
                    held.setdefault(item[kind], set()).add(item_id)
        return held


def check_sentence(
    kn: Knowledge, record: Record, text: str, fields: list[str], items: list[str] | None = None
) -> str | None:
    """The first check `text` fails ("field", "amount", "date", "number", "approximate",
    "name", "outcome", "staff", "yesno", "language", "length"), or None when it passes them all.
    A sentence rests on recorded fields and memo items (`items`: their ids), at least one."""
    items = items or []
    if not text.strip() or len(text) > MAX_SENTENCE_CHARS:
        return "length"
    if _claims_outcome(kn, text):
        return "outcome"
    if _speaks_to_staff(kn, text):
        return "staff"
    if not (fields or items) or any(key not in record.facts for key in fields):
        return "field"
    if any(item not in record.items for item in items):
        return "field"
    if not _in_language(record, text):
        return "language"
    if _turned_around(kn, record, text, fields):
        return "yesno"
    return _values_fail(kn, record, text) or _names_fail(record, text)


def _claims_outcome(kn: Knowledge, text: str) -> bool:
    lowered = " ".join(text.lower().split())
    claims = kn.lexicon.outcome_claims
    return any(word.lower() in lowered for lang in claims for word in claims[lang])


def _speaks_to_staff(kn: Knowledge, text: str) -> bool:
    """Whether a sentence addresses staff or gives an instruction ("담당자는 … 삭제하세요")."""
    lowered = " ".join(text.lower().split())
    words = kn.lexicon.staff_instructions
    return any(w.lower() in lowered for w in words.get("ko", [])) or any(
        re.search(rf"(?<![a-z]){re.escape(w.lower())}", lowered) for w in words.get("en", [])
    )


def _turned_around(kn: Knowledge, record: Record, text: str, fields: list[str]) -> bool:
    """Whether `text` says a yes/no fact it rests on the other way round: negated for a "yes",
    or not negated for a "no"."""
    said = [key for key in fields if record.kinds.get(key) == "yesno"]
    if not said:
        return False
    lowered = f" {' '.join(text.lower().split())} "
    negated = any(word in lowered for word in kn.lexicon.negations.get("ko", [])) or any(
        re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", lowered)
        for word in kn.lexicon.negations.get("en", [])
    )
    return any(negated != (record.facts[key] is False) for key in said)


def _in_language(record: Record, text: str) -> bool:
    """Whether the letters of `text`, beside words of the record, are in the intake's script."""
    recorded = set(record.words.split())
    own = [w for w in text.split() if _word(w) not in recorded and bare(_word(w)) not in recorded]
    letters = [c for c in " ".join(own) if c.isalpha()]
    if not letters:
        return True
    script = _HANGUL if record.lang == "ko" else _LATIN
    return sum(1 for c in letters if script.match(c)) / len(letters) >= MIN_LANGUAGE_SHARE


def _word(word: str) -> str:
    return word.lower().strip(".,!?\"'()·")


def _values_fail(kn: Knowledge, record: Record, text: str) -> str | None:
    """Which kind of value in `text` is not a recorded one, or lost its approximation."""
    spans: list[tuple[int, int]] = []
    amounts = record.values_of("amount")
    for match in find_amounts(text):
        if match.value not in amounts:
            return "amount"
        if not _approximate_kept(kn, record, text, match, amounts[match.value]):
            return "approximate"
        spans.append((match.start, match.end))
    dates = record.values_of("date")
    for match in find_dates(text, now=record.now, allow_future=True):
        if match.value not in dates:
            return "date"
        if not _approximate_kept(kn, record, text, match, dates[match.value]):
            return "approximate"
        spans.append((match.start, match.end))
    for match in _DIGITS.finditer(text):
        if any(s <= match.start() < e for s, e in spans):
            continue
        if _plain_number(match.group()) not in record.numbers:
            return "number"
    return None


def _plain_number(text: str) -> str:
    return text.replace(",", "")


def _approximate_kept(
    kn: Knowledge, record: Record, text: str, match: Any, fields: set[str]
) -> bool:
    """A value only approximate fields hold is said with its "약" / "쯤" / "about"."""
    if not fields <= record.approx:
        return True
    lex = kn.lexicon
    before = text[max(0, match.start - APPROX_WINDOW) : match.end].lower()
    after = text[match.start : match.end + APPROX_WINDOW].lower()
    return any(w.lower() in before for w in lex.approximate_before.get(record.lang, [])) or any(
        w.lower() in after for w in lex.approximate_after.get(record.lang, [])
    )


def _names_fail(record: Record, text: str) -> str | None:
    """ "name" when `text` names someone (or something) the record does not."""
    names = [t.form for t in get_kiwi().tokenize(text) if t.tag == "NNP"]
    for m in _CAPITALISED.finditer(text):
        words = re.split(r"[- ]", m.group())
        if m.start() == len(text) - len(text.lstrip()) and len(words) == 1:
            continue  # a sentence's first word is capitalised whatever it is
        names += [w for w in words if w not in _NOT_NAMES_EN]
    return "name" if any(name.lower() not in record.words for name in names) else None
