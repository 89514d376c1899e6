"""A rejected answer ("그 얘기가 아닌데", "다이어트 얘기가 아닌데", "that's not what I asked",
"I don't have COPD"): the question before is answered again without the entries that missed
and their topic, so that the same wrong answer never comes twice."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from graphs.medical import about
from graphs.medical.slots import SlotExtraction, normalise
from knowledge.medical_answering import load_answering
from knowledge.medical_corpus import load_medical_corpus

EXCLUDED_KEPT = 40  # passage ids kept out while the conversation stays on a rejected question
PREFIX = "med:"  # a shipped corpus entry's passage id


@dataclass(frozen=True)
class Retry:
    question: str  # what to answer now: the question before, or what the message asks instead
    excluded: list[str]  # passage ids never to serve again for it


def _named(text: str) -> set[str]:
    return set(about.tags(about.concepts(text))) | set(about.extractor().topics(text))


def _denied_topic(said: SlotExtraction, last: list[str]) -> set[str]:
    """Tags the message denies having that the last answer was about ("I don't have COPD")."""
    corpus = load_medical_corpus()
    answered = {c for pid in last if pid.startswith(PREFIX) for c in _concepts(corpus, pid)}
    denied = about.tags([i.name for i in said.items if i.negated and not i.family])
    return set(denied) & answered


def _concepts(corpus: Any, pid: str) -> tuple[str, ...]:
    try:
        return tuple(corpus.by_id(pid.removeprefix(PREFIX)).concepts)
    except KeyError:
        return ()


def retry(state: dict[str, Any], text: str, said: SlotExtraction) -> Retry | None:
    """The retry a message asks for when it rejects the last answer; None otherwise."""
    last = list(state.get("last_entries") or [])
    asked = [a for a in state.get("asked") or [] if a.get("answered")]
    if not text or not last or not asked:
        return None
    denied = _denied_topic(said, last)
    found = load_answering().rejects(text)
    if not denied and found is None:
        return None
    # "다이어트 얘기가 아닌데" names what missed before the words that reject it; "그게 아니라
    # 해열제 용량이요" names what is asked instead after them.
    before, after = (text[: found.start()], text[found.end() :]) if found else (text, "")
    corpus = load_medical_corpus()
    rejected = denied or _named(before)
    if rejected:  # what the message names as missed: every entry on it
        excluded = [f"{PREFIX}{e.id}" for e in corpus.entries if rejected & set(e.concepts)]
    else:  # "그 얘기가 아닌데": the entries on the missed ones' main topic, not the question's
        own = set(about.tags(asked[-1].get("concepts") or []))
        main = {c[0] for pid in last if (c := _concepts(corpus, pid)) and c[0] not in own}
        excluded = [f"{PREFIX}{e.id}" for e in corpus.entries if e.concepts[0] in main]
    excluded = [*last, *excluded]
    kept = list(dict.fromkeys([*(state.get("excluded") or []), *excluded]))[-EXCLUDED_KEPT:]
    asks_instead = _named(after) - rejected
    return Retry(question=after.strip() if asks_instead else asked[-1]["q"], excluded=kept)


def still_excluded(state: dict[str, Any], question: str) -> list[str]:
    """The rejected passages stay out while the conversation stays on the rejected question (a
    follow-up names nothing of its own); a question on something else starts afresh."""
    if question and _named(question):
        return []
    return list(state.get("excluded") or [])


# "X 아니고요", "X 말고요" right after the name: the topic is set aside, not denied ("X는 없어요",
# "I don't have X" deny having it and are kept).
_NOT_THIS_TOPIC = re.compile(r"\s*(?:이|가|은|는|요)?\s*(?:아니|아닌|아녜|말고|말구)")


def without_topics_set_aside(said: SlotExtraction, text: str) -> SlotExtraction:
    """A message rejecting the last answer: the "denials" that only set its topic aside are
    no denials ("수면무호흡 아니고요;;" said of an answer on sleep apnoea)."""
    words = normalise(text or "")
    kept = tuple(i for i in said.items if not (i.negated and _NOT_THIS_TOPIC.match(words, i.end)))
    return said if kept == said.items else replace(said, items=kept)
