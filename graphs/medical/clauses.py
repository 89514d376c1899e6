"""What each clause of a message does, before anything it names is stored.

A clause is a statement (about the person, or the one they care for), a question, a
supposition or a leave asked for ("if I start a statin", "스타틴 먹으면", "먹어도 돼요?"), or a
topic the person sets aside ("술 얘기 안 했는데요", "I never said anything about X"). Inside a
statement, one side of a contrast may be set aside ("이부프로펜 말고 타이레놀", "not X but Y"):
the kept side counts only when the clause tells of having or taking it ("타이레놀 먹어요", not
the bare "타이레놀이요"). Korean endings are read from Kiwi's morphemes, so that "되나요",
"될까여", "먹으면" count however they are spaced; the cue patterns are in the medical lexicon
(`cues.clauses`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

from graphs.common.text import clause_spans
from knowledge.korean import get_kiwi
from knowledge.medical_lexicon import ClauseCues, load_medical_lexicon

ClauseKind = Literal["statement", "question", "hypothetical", "rejected"]
_ASKS = re.compile(r"[?？]\s*[ㅠㅜ~!.]*\s*$")
# Kiwi writes an ending's lone consonant as a final jamo ("ᆫ가요"); the lexicon as people do.
_JAMO = str.maketrans({"\u11ab": "ㄴ", "\u11af": "ㄹ", "\u11b7": "ㅁ", "\u11b8": "ㅂ"})
_PREDICATE_TAGS = frozenset({"VV", "VA", "VX", "XSV", "XSA"})  # not VCP: "타이레놀이요"


@dataclass(frozen=True)
class Clause:
    """One clause: where it stands, what it does, and what a contrast in it sets aside."""

    start: int
    end: int
    kind: ClauseKind
    sentence: int = 0
    set_aside: tuple[tuple[int, int], ...] = ()  # stretches a contrast puts aside
    kept_side: tuple[int, int] | None = None  # the contrast's other side
    tells: bool = True  # the kept side says the person has or takes it


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    morpheme: str  # "form/TAG"
    tag: str


def _any(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns) or r"(?!x)x", re.I)


class ClauseReader:
    """Reads a message into clauses with what each does; build once, call per message."""

    def __init__(self, cues: ClauseCues) -> None:
        self._breaks = _any(cues.breaks)
        self._question = _any(cues.question)
        self._hypothetical = _any(cues.hypothetical)
        self._rejected = _any(cues.rejected)
        self._contrast_after = _any(cues.contrast_after)
        self._contrast_before = _any(cues.contrast_before)
        self._contrast_end = _any(cues.contrast_end)
        self._taking = _any(cues.taking)
        self._possessive = _any(cues.possessive)
        self._ko_question = frozenset(cues.ko_question_endings)
        self._ko_hypothetical = frozenset(cues.ko_hypothetical_endings)

    def read(self, text: str) -> list[Clause]:
        """The clauses of `text` (already normalised), in order."""
        tokens = _tokens(text)
        clauses = []
        for span in clause_spans(text, more=self._breaks):
            inside = [t for t in tokens if span.start <= t.start < span.end]
            clause = self._clause(text, span.start, span.end, inside)
            clauses.append(replace(clause, sentence=span.sentence))
        return self._contrasts(text, _asked_together(_hearsay(text, clauses), tokens), tokens)

    def possessed(self, text: str, start: int) -> bool:
        """Whether the words right before `start` make it the person's own ("his back pain")."""
        return bool(self._possessive.search(text[max(0, start - 12) : start]))

    def _clause(self, text: str, start: int, end: int, tokens: list[_Token]) -> Clause:
        words = text[start:end]
        if self._rejected.search(words):
            return Clause(start, end, "rejected")
        last = _last_ending(tokens)
        if self._hypothetical.search(words) or (last and last.morpheme in self._ko_hypothetical):
            return Clause(start, end, "hypothetical")
        asks = _ASKS.search(words) or self._question.search(words)
        if asks or any(t.morpheme in self._ko_question for t in tokens[-3:]):
            return Clause(start, end, "question")
        return Clause(start, end, "statement")

    def _contrasts(self, text: str, clauses: list[Clause], tokens: list[_Token]) -> list[Clause]:
        """Korean "X 말고 Y" sets aside what comes before the cue in its clause; English "not X
        but Y", "Y, not X" what comes after it. The kept side runs to the sentence's end (Y
        often stands in the next clause: "이부프로펜 말고 | 타이레놀 먹어요")."""
        out = list(clauses)
        for index, clause in enumerate(clauses):
            words = text[clause.start : clause.end]
            aside: list[tuple[int, int]] = []
            for match in self._contrast_after.finditer(words):
                aside.append((clause.start, clause.start + match.end()))
            for match in self._contrast_before.finditer(words):
                stop = self._contrast_end.search(words, match.end())
                finish = stop.start() if stop and stop.start() > match.end() else len(words)
                aside.append((clause.start + match.start(), clause.start + finish))
            if not aside:
                continue
            sentence_end = max(c.end for c in clauses if c.sentence == clause.sentence)
            kept = (clause.start, sentence_end)
            tells = self._tells(text, kept, aside, tokens)
            out[index] = replace(out[index], set_aside=tuple(aside))
            for other, later in enumerate(out):
                if later.sentence == clause.sentence and later.end > clause.start:
                    out[other] = replace(later, kept_side=kept, tells=tells)
        return out

    def _tells(
        self,
        text: str,
        kept: tuple[int, int],
        aside: list[tuple[int, int]],
        tokens: list[_Token],
    ) -> bool:
        """Whether the kept side of a contrast has a predicate of its own (a verb: 먹어요,
        take, am on), not only a name with a copula ("타이레놀이요", "paracetamol")."""
        start, end = kept
        outside = [t for t in tokens if start <= t.start < end and not _within(t.start, aside)]
        if any(t.tag in _PREDICATE_TAGS for t in outside):
            return True
        words = "".join(
            ch if not _within(start + i, aside) else " " for i, ch in enumerate(text[start:end])
        )
        return bool(self._taking.search(words))


# Korean endings that join a clause to the next as one act ("타이레놀 먹고 누워 있으면 될까요?").
_JOINING = frozenset({"고/EC", "면서/EC", "으면서/EC"})  # not "아파서": a reason is told


def _asked_together(clauses: list[Clause], tokens: list[_Token]) -> list[Clause]:
    """A statement that is part of what a later clause of its sentence asks: one joined to it by
    a present connective ("그냥 타이레놀 먹고 | 누워있으면 될까요" asks about taking it; "먹었고"
    tells it was taken), or the first half of a choice ("타이레놀이 나아요 | 이부프로펜이
    나아요?")."""
    out = list(clauses)
    for index in range(len(out) - 2, -1, -1):
        clause, after = out[index], out[index + 1]
        if clause.kind != "statement" or after.kind not in ("question", "hypothetical"):
            continue
        own = [t for t in tokens if clause.start <= t.start < clause.end and t.tag[0] != "S"]
        later = [t for t in tokens if after.start <= t.start < after.end and t.tag[0] != "S"]
        joined = (
            after.sentence == clause.sentence
            and len(own) >= 2
            and own[-1].morpheme in _JOINING
            and own[-2].tag == "VV"  # a verb: "먹고" asks with the next; "먹었고", "아프고" tell
        )
        choice = (
            len(own) >= 2
            and len(later) >= 2
            and own[-1].tag == "EF"
            and (own[-2].morpheme, own[-1].morpheme) == (later[-2].morpheme, later[-1].morpheme)
        )
        if joined or choice:
            out[index] = replace(clause, kind=after.kind)
    return out


_SAID_THAT = re.compile(r"(?:다|라|래)\s?고\s*$")
_HEARD = re.compile(r"^\s*(?:들어|들었|들은|들음)")


def _hearsay(text: str, clauses: list[Clause]) -> list[Clause]:
    """ "X는 안 된다고 | 들어서": what the person heard said, cut from "heard" at the clause
    edge, is not theirs (the lexicon's pattern reads it when it stands in one clause)."""
    out = list(clauses)
    for index in range(len(out) - 1):
        said, heard = out[index], out[index + 1]
        if _SAID_THAT.search(text[said.start : said.end]) and _HEARD.search(
            text[heard.start : heard.end]
        ):
            out[index] = replace(said, kind="hypothetical")
            out[index + 1] = replace(heard, kind="hypothetical")
    return out


def _within(position: int, stretches: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> bool:
    return any(a <= position < b for a, b in stretches)


def _tokens(text: str) -> list[_Token]:
    """Kiwi's morphemes of the Korean in `text`, with their positions (none without Hangul)."""
    if not re.search(r"[가-힣]", text):
        return []
    return [
        _Token(t.start, t.start + t.len, f"{t.form.translate(_JAMO)}/{t.tag}", t.tag)
        for t in get_kiwi().tokenize(text)
    ]


def _last_ending(tokens: list[_Token]) -> _Token | None:
    """The clause's last morpheme that is not punctuation."""
    words = [t for t in tokens if not t.tag.startswith("S")]
    return words[-1] if words else None


def clause_at(clauses: list[Clause], position: int) -> Clause | None:
    """The clause that holds `position`."""
    return next((c for c in clauses if c.start <= position < c.end), None)


@cache
def reader() -> ClauseReader:
    """The reader built from the packaged lexicon, once per process."""
    return ClauseReader(load_medical_lexicon().cues.clauses)
