"""A correction told as a field's label and its value: "혈중알코올농도는 0.081이에요", "경찰 신고
예 아니고 아니요요", "'Already shared' should be no".

This is the form the bot itself suggests when it could not tell what to change, so it must
work for every kind of value, not only names (`changes.name_corrections`): the label (or its
head, "경찰 신고" of "경찰 신고·고소 여부") is found in the message, the words after it up to
the end of the sentence are the value (the right one of a pair: "A 아니고 B", "not A but B"),
read by the field's own reader. A value that differs from the one recorded is proposed old →
new, to confirm; nothing changes before the person's yes. It reads messages after the summary
(graphs/legal/amend.py); during the intake such a restatement is kept aside and the person is
told how to correct it, while the question asked waits.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from graphs.legal.changes import change, same_value
from graphs.legal.extract import FactExtractor
from knowledge.loader import Knowledge

_READ_KINDS = frozenset({"yesno", "choice", "multi_choice", "decimal", "int", "amount", "date"})
_LABEL_HEAD = re.compile(r"[·/(]")  # "경찰 신고·고소 여부": "경찰 신고" names it too
_SENTENCE_END = re.compile(r"[!?\n]|(?<!\d)\.|\.(?!\d)|$")
_LEADING = re.compile(
    r"^[\s'\"‘’“”:=\-–>→]*(?:은|는|이|가|을|를|도|란|이란|항목은|항목이|line|field)?"
    r"[\s'\"‘’“”:=\-–>→]*(?:is|was|should be|must be|to)?\s*",
    re.I,
)
_PAIR_KO = re.compile(r"\s*(?:아니고|아니라|아니구|말고)\s*")
_PAIR_EN = re.compile(r"\bnot\b.*?\bbut\s+", re.I)
_ENDINGS = re.compile(r"(?:이에요|예요|에요|입니다|이요|요|이네요|네요)+\s*$")
MAX_VALUE_CHARS = 40
_extractors: dict[int, tuple[Knowledge, FactExtractor]] = {}


def labelled_fixes(
    kn: Knowledge,
    sub_type: str,
    facts: dict[str, Any],
    text: str,
    *,
    now: datetime,
    named: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Proposed changes of recorded fields the message names by label with a new value."""
    reader = _reader(kn)
    compact, where = _compact(text)
    out = []
    for key, old in facts.items():
        if key in named or key not in kn.k2.fields or old is None:
            continue
        spec = kn.k2.field(sub_type, key)
        if spec.kind not in _READ_KINDS:
            continue
        for label in _labels(kn, sub_type, key):
            at = compact.find(label)
            if at < 0:
                continue
            said = _value_words(text[where[at + len(label) - 1] + 1 :])
            value = _read(reader, spec, said, now)
            if value is not None and not same_value(value, old):
                out.append(change(key, old, value, text))
            break
    return out


def _reader(kn: Knowledge) -> FactExtractor:
    """The rules' readers for this knowledge (built once: they compile its words)."""
    kept = _extractors.get(id(kn))
    if kept is None or kept[0] is not kn:
        kept = _extractors[id(kn)] = (kn, FactExtractor(kn))
    return kept[1]


def _labels(kn: Knowledge, sub_type: str, key: str) -> list[str]:
    """A field's labels in both languages (the sub-type's and the general one) and their heads,
    compacted (no spaces, lower case), longest first."""
    specs = (kn.k2.field(sub_type, key), kn.k2.fields[key])
    found = set()
    for spec in specs:
        for label in (spec.label.ko, spec.label.en):
            found.add(_compact(label)[0])
            head = _LABEL_HEAD.split(label)[0]
            if len(_compact(head)[0]) >= 3:
                found.add(_compact(head)[0])
    return sorted((f for f in found if f), key=len, reverse=True)


def _compact(text: str) -> tuple[str, list[int]]:
    """`text` lower-cased without spaces, and for each of its characters the index in `text`."""
    chars, where = [], []
    for i, char in enumerate(text.lower()):
        if not char.isspace():
            chars.append(char)
            where.append(i)
    return "".join(chars), where


def _value_words(after: str) -> str:
    """The words giving the value after a label: to the end of the sentence, the right one of
    a pair, without the particle or verb around it."""
    said = after[: _SENTENCE_END.search(after).start()][: MAX_VALUE_CHARS * 2]
    said = _LEADING.sub("", said, count=1)
    said = _PAIR_KO.split(said)[-1]
    pair = _PAIR_EN.search(said)
    if pair is not None:
        said = said[pair.end() :]
    elif ", not " in said.lower():
        said = said[: said.lower().index(", not ")]
    return said.strip()[:MAX_VALUE_CHARS]


def _read(reader: FactExtractor, spec: Any, said: str, now: datetime) -> Any:
    """The field's reading of `said` (also without its polite ending: "아니요예요"), or None."""
    if not said:
        return None
    for words in dict.fromkeys((said, _ENDINGS.sub("", said))):
        if words:
            value, invalid = reader.parse_answer(spec, words, now=now)
            if invalid is None and value is not None:
                return value
    return None
