"""What a message is when it is not an answer: a question back, a request to delete, out of
scope, small talk, thanks or spam (patterns in knowledge/intents.yaml), and brief answers to
questions back from K3.

`read_intent` reads the words only; the caller decides by state (a first message that asks
"어떻게 해야 하나요?" is the description of a problem, the same words mid-intake a question).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from knowledge.loader import Knowledge
from knowledge.models import Intents, LangPatterns

IntentKind = Literal["question", "forget", "out_of_scope", "small_talk", "spam", "thanks", "none"]
# Topics answered from the sub-type's K3 entry; any other topic is noted for the lawyer.
K3_TOPICS = ("limitation", "venue", "first_steps", "typical_evidence", "notes")
ANSWER_ITEMS = 2  # list items of a K3 part quoted in a brief answer


@dataclass(frozen=True)
class Intent:
    """What a message is; `topic` is a question's subject or an out-of-scope area."""

    kind: IntentKind
    topic: str | None = None


class _Compiled:
    """intents.yaml as compiled patterns (one alternation per list)."""

    def __init__(self, intents: Intents) -> None:
        self.words = _either(intents.question.words)
        self.modals = _either(intents.question.modals)
        self.unsure = _either(intents.question.unsure)
        self.topics = {name: _either(p) for name, p in intents.topics.items()}
        self.forget = _either(intents.forget)
        self.forget_not = _either(intents.forget_not)
        self.medical = _either(intents.medical)
        self.legal = _either(intents.legal_guard)
        self.off_topic = _either(intents.off_topic)
        self.small_talk = _either(intents.small_talk)
        self.thanks = _either(intents.thanks)
        self.spam = _either(intents.spam)
        self.not_listed = _either(intents.not_listed)
        self.list_words = _either(intents.list_words)
        self.wrong_type = _either(intents.wrong_type)
        # each on its own: the two languages' patterns share the group name `what`
        self.type_denial = [
            re.compile(p) for p in [*intents.type_denial.ko, *intents.type_denial.en]
        ]
        self.type_nouns = _either(intents.type_nouns)
        self.type_said = _either(intents.type_said)


def _either(patterns: LangPatterns) -> re.Pattern[str] | None:
    both = [*patterns.ko, *patterns.en]
    return re.compile("|".join(f"(?:{p})" for p in both)) if both else None


def _has(pattern: re.Pattern[str] | None, text: str) -> bool:
    return bool(pattern and pattern.search(text))


_COMPILED: dict[int, tuple[Intents, _Compiled]] = {}


def _compiled(intents: Intents) -> _Compiled:
    """The compiled patterns of a loaded intents file (compiled once per file)."""
    cached = _COMPILED.get(id(intents))
    if cached is None or cached[0] is not intents:
        cached = _COMPILED[id(intents)] = (intents, _Compiled(intents))
    return cached[1]


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).lower().split())


def read_intent(text: str, kn: Knowledge) -> Intent:
    """The kind of a message: forget, spam, thanks, small talk, out of scope, question, none."""
    lowered = _normal(text)
    if not lowered:
        return Intent("none")
    c = _compiled(kn.intents)
    if _has(c.forget, lowered) and not _has(c.forget_not, lowered):
        return Intent("forget")
    if _has(c.spam, lowered) and len(lowered) < 300:
        return Intent("spam")
    if _has(c.thanks, lowered) and len(lowered) <= 20 and "?" not in lowered:
        return Intent("thanks")
    if _has(c.small_talk, lowered):
        return Intent("small_talk")
    if _has(c.medical, lowered) and not _has(c.legal, lowered):
        return Intent("out_of_scope", "medical")
    if _has(c.off_topic, lowered) and not _has(c.legal, lowered):
        return Intent("out_of_scope", "other")
    topic = next((name for name, p in c.topics.items() if _has(p, lowered)), None)
    modal = _has(c.modals, lowered)
    if not modal and not topic and _has(c.unsure, lowered):
        return Intent("none")  # "작년 3월이었나요?" is a value asked back from memory
    asks = "?" in lowered or modal
    if asks and (_has(c.words, lowered) or modal or topic):
        return Intent("question", topic)
    return Intent("none")


def declines_types(text: str, kn: Knowledge, *, names_list: bool = False) -> bool:
    """Whether a message says none of the offered case types fits ("여기 없는데요", "none of
    these"); with `names_list`, only a decline that names the list ("목록에 없어요"), so that
    "없어요" answering a question is not taken for one."""
    lowered = _normal(text)
    c = _compiled(kn.intents)
    if not _has(c.not_listed, lowered):
        return False
    return not names_list or _has(c.list_words, lowered)


@dataclass(frozen=True)
class Denial:
    """Something a message says is not so ("세금 문제가 아니라", "not a rent thing"): the words
    denied, and whether the message makes them a kind of matter (a word for one in them, or
    the message telling what it is instead after them)."""

    what: str
    kind_of_matter: bool
    instead_said: bool  # "… 문제에요" after it: the person tells what it is instead


def says_wrong_type(text: str, kn: Knowledge) -> bool:
    """Whether a message says in so many words that the case type is wrong ("fix the
    category", "유형이 잘못됐어요")."""
    return _has(_compiled(kn.intents).wrong_type, _normal(text))


def denials(text: str, kn: Knowledge) -> tuple[list[Denial], str]:
    """What the message denies, and the message without the denials (what it says instead)."""
    lowered = _normal(text)
    c = _compiled(kn.intents)
    found, spans = [], []
    for pattern in c.type_denial:
        for m in pattern.finditer(lowered):
            what = m.group("what")
            noun = c.type_nouns.search(what.split()[-1]) if c.type_nouns else None
            if noun is not None and noun.start() > 0:  # "경제문제는": its own word says which
                what = what.split()[-1]
            instead = _has(c.type_said, lowered[m.end() :])
            found.append(Denial(what, noun is not None or instead, instead))
            spans.append(m.span())
    rest = lowered
    for start, end in sorted(spans, reverse=True):
        rest = f"{rest[:start]} {rest[end:]}"
    return found, " ".join(rest.split())


def answer_question(kn: Knowledge, sub_type: str | None, intent: Intent, lang: str) -> str | None:
    """Brief general information from the sub-type's K3 entry; None when K3 has no answer."""
    if intent.topic not in K3_TOPICS or not sub_type or sub_type not in kn.k3.info:
        return None
    value = getattr(kn.k3.info[sub_type], intent.topic)
    if not isinstance(value, list):
        return value.get(lang)
    if not value:
        return None  # a sub-type with no notes
    if intent.topic == "typical_evidence":  # short noun phrases, set in a K0 sentence
        items = ", ".join(item.get(lang) for item in value)
        return kn.message("question_evidence", lang, items=items)
    return " ".join(item.get(lang) for item in value[:ANSWER_ITEMS])  # whole sentences
