"""The safety pre-check: the rules of knowledge/safety.yaml matched against one message.

The text is normalised (NFKC, lower case, one space), cut into clauses, and each clause is
read two ways: Korean patterns see it without spaces, punctuation or emoji ("죽고 싶 어요"
reads "죽고싶어요"), English patterns see it with single spaces. A guard (past, hypothetical,
a film...) cancels only its own clause, so "예전에 맞은 적 있어요 지금 또 때려요" still fires.
Pure Python and `re`: it runs on every message before anything else.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from knowledge.models import Patterns, SafetyRules

_APOSTROPHES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "`": "'"})
_SPACES = re.compile(r"[^\S\n]+")  # runs of spaces and tabs, not line breaks
_LINES = re.compile(r" ?\n[\s]*")
_NOT_WORD = re.compile(r"[\W_]+")
_ERASED = "|"  # what an idiom leaves behind: no pattern matches across it
# Clause breaks: sentence punctuation (a full stop only before a space, so "죽.고.싶.어" stays
# whole); a Korean sentence end (요/죠 before a space, as people write without full stops);
# after a connective (는데, 지만: "예전엔 그랬는데 지금은"); before 지금/방금; before English
# "but"/"however".
_CLAUSE_BREAK = re.compile(
    r"[.!?…~]+(?=\s|$)|[;,\n。！？]+"
    r"|(?<=[요죠])\s+"
    r"|(?<=는데|인데|은데|던데|지만)"
    r"|(?=지금|방금)"
    r"|\s+(?=(?:but|however|although|though)\b)"
)
_NUMBER = "(?<!\\d){}(?!\\d)"


@dataclass(frozen=True)
class SafetyHit:
    """A rule that fired on a message."""

    code: str  # rule code, e.g. VIOLENCE_NOW
    category: str  # danger | suicide | medical
    hotlines: tuple[str, ...]  # numbers to call, in order


@dataclass(frozen=True)
class _Clause:
    """One clause, as each language's patterns see it."""

    spaced: str  # lower case, single spaces: for English patterns
    compact: str  # no spaces, punctuation or emoji: for Korean patterns


class _Matcher:
    """One `Patterns` entry compiled to one regex per language."""

    def __init__(self, patterns: Patterns) -> None:
        self.ko = _alternation(patterns.ko)
        self.en = _alternation(patterns.en)

    def search(self, clause: _Clause) -> bool:
        return bool(
            (self.ko and self.ko.search(clause.compact))
            or (self.en and self.en.search(clause.spaced))
        )


def _alternation(patterns: Iterable[str]) -> re.Pattern[str] | None:
    joined = "|".join(f"(?:{p})" for p in patterns)
    return re.compile(joined) if joined else None


def normalise(text: str) -> str:
    """NFKC, straight apostrophes, lower case, single spaces (a line break stays one)."""
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).lower()
    return _LINES.sub("\n", _SPACES.sub(" ", text)).strip()


class SafetyCheck:
    """The safety rules compiled once; `check` every message, `reply` with what to do now."""

    def __init__(self, rules: SafetyRules) -> None:
        self.rules = rules
        self._terms = {name: _Matcher(p) for name, p in rules.terms.items()}
        self._guards = {name: _Matcher(p) for name, p in rules.guards.items()}
        self._idioms_en = _alternation(rules.idioms.en)
        self._idioms_ko = _alternation(rules.idioms.ko)

    def check(self, text: str) -> list[SafetyHit]:
        """Every rule that fires on `text`, most urgent first (the file's order), once each."""
        terms: list[set[str]] = []
        guards: list[set[str]] = []
        for clause in self._clauses(text):
            found = {n for n, t in self._terms.items() if t.search(clause)}
            if found:  # a clause naming no term adds nothing, whatever guards it holds
                terms.append(found)
                guards.append({n for n, g in self._guards.items() if g.search(clause)})
        if not terms:
            return []
        hits: list[SafetyHit] = []
        for rule in self.rules.rules:
            unless = set(rule.unless)
            present: set[str] = set()
            for found, guarded in zip(terms, guards, strict=True):
                if not guarded & unless:
                    present |= found
            if any(set(line) <= present for line in rule.when):
                hits.append(SafetyHit(rule.code, rule.category, tuple(rule.hotlines)))
        return hits

    def reply(self, hits: list[SafetyHit], lang: str) -> str:
        """The most urgent category's text, then a line for each further number not yet named."""
        if not hits:
            return ""
        lines = [self.rules.replies[hits[0].category].get(lang)]
        for number in dict.fromkeys(n for hit in hits for n in hit.hotlines):
            if not any(re.search(_NUMBER.format(number), line) for line in lines):
                lines.append(self.rules.hotlines[number].get(lang))
        return "\n".join(lines)

    def notice(self, hits: list[SafetyHit], lang: str, *, chat: object, when: str) -> str:
        """The staff notice: rule codes, category and numbers given; no words of the person."""
        hotlines = dict.fromkeys(n for hit in hits for n in hit.hotlines)
        return self.rules.staff_notice.get(lang).format(
            category=hits[0].category,
            codes=", ".join(hit.code for hit in hits),
            hotlines=", ".join(hotlines),
            chat=chat,
            when=when,
        )

    def _clauses(self, text: str) -> list[_Clause]:
        spaced = normalise(text)
        if self._idioms_en:
            spaced = self._idioms_en.sub(_ERASED, spaced)
        clauses = []
        for part in _CLAUSE_BREAK.split(spaced):
            part = part.strip()
            compact = _NOT_WORD.sub("", part)
            if self._idioms_ko:
                compact = self._idioms_ko.sub(_ERASED, compact)
            if compact:
                clauses.append(_Clause(part, compact))
        return clauses
