"""The safety pre-check: the rules of knowledge/safety.yaml matched against one message.

The text is normalised (NFKC, lower case, one space), cut into clauses where what is said
turns (`graphs/common/text.py` `clauses(..., at="turn")`: a guard covers what is told in one
breath), and each clause is read two ways: Korean patterns see it without spaces, punctuation or emoji ("죽고 싶 어요"
reads "죽고싶어요"), English patterns see it with single spaces. A guard (past, hypothetical,
a film...) cancels only its own clause, so "예전에 맞은 적 있어요 지금 또 때려요" still fires.
Pure Python and `re`: it runs on every message before anything else.

A red flag is judged over the conversation, not the single message: what each message held
(its clauses' term and guard names, a `Trace`, never its words) is kept for a day, and the
signs among them (the file's `carry` terms) count with the next messages, as do the terms the
person's health profile stands for (`standing`: heart failure, a pregnancy, a baby's age). A
rule then fires on the message that completes it: "흑변이 나왔어요", hours later "어지러워요".
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from graphs.common.text import clauses
from knowledge.models import Patterns, SafetyRules

_APOSTROPHES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "`": "'"})
_SPACES = re.compile(r"[^\S\n]+")  # runs of spaces and tabs, not line breaks
_LINES = re.compile(r" ?\n[\s]*")
_NOT_WORD = re.compile(r"[\W_]+")
_ERASED = "|"  # what an idiom leaves behind: no pattern matches across it
_NUMBER = "(?<!\\d){}(?!\\d)"
# A clause that tells when the one before happened ("that was a month ago", "그건 한 달
# 전이에요"): its past guard is the clause before's too.
_DATES_BACK = re.compile(
    r"^(?:and |but |so )?(?:(?:that|it|this) (?:was|happened)\b|그게|그건|그거|그때가)"
)
# An English clause that supposes: the clause after it (cut at the comma) is what would follow.
_IF_CLAUSE = re.compile(r"^(?:and |but |so )?(?:even if|if|in case|suppose|what if)\b")
# What a laugh is made of, to tell a clause that is only one ("ㅋㅋㅋ", "ㅎㅎ", "lol").
_LAUGHS = re.compile(unicodedata.normalize("NFKC", r"[ㅋㅎ]+|lol|lmf?ao|(?:ha)+|😂|🤣"))
# Words that soften without changing what is said ("발목이 좀 부었어요"): left out of the
# Korean reading, as whole words only.
_FILLERS = frozenset({"좀", "약간", "살짝", "조금", "쫌", "조끔"})


# The categories that need help now (an ambulance, the police, the crisis line); the other two
# say when to be seen: today, or within days.
# Readings of the last few messages kept in memory (a turn reads its message more than once).
READINGS_KEPT = 8
NOW_CATEGORIES = frozenset({"danger", "suicide", "medical"})
# The categories answered again whenever a message adds to them (a medical sign completed over
# messages is answered once an episode: its level is repeated on a question instead).
AGAIN_CATEGORIES = frozenset({"danger", "suicide"})


@dataclass(frozen=True)
class SafetyHit:
    """A rule that fired on a message."""

    code: str  # rule code, e.g. VIOLENCE_NOW
    category: str  # danger | suicide | medical (119 now) | medical_today | medical_days
    hotlines: tuple[str, ...]  # numbers to call, in order
    building: bool = False  # fired only with earlier messages or the profile, not this one alone
    again: bool = False  # fired by one of its `again` lines: the danger told again

    @property
    def now(self) -> bool:
        """Help is needed now (not a visit today or within days)."""
        return self.category in NOW_CATEGORIES


@dataclass(frozen=True)
class Trace:
    """What one message held for the rules: each clause's term and guard names (no words)."""

    clauses: tuple[tuple[frozenset[str], frozenset[str]], ...]

    def present(self, unless: set[str]) -> set[str]:
        """The terms of the clauses that none of `unless` cancels."""
        out: set[str] = set()
        for terms, guards in self.clauses:
            if not guards & unless:
                out |= terms
        return out

    def as_json(self) -> list[list[list[str]]]:
        return [[sorted(terms), sorted(guards)] for terms, guards in self.clauses]

    @classmethod
    def from_json(cls, data: list[list[list[str]]]) -> Trace:
        return cls(tuple((frozenset(t), frozenset(g)) for t, g in data))


@dataclass(frozen=True)
class _Clause:
    """One clause, as each language's patterns see it."""

    spaced: str  # lower case, single spaces: for English patterns
    compact: str  # no spaces, punctuation or emoji: for Korean patterns
    whole: str = ""  # compact with its soft words kept ("살짝"): for guards


class _Matcher:
    """One `Patterns` entry compiled to one regex per language."""

    def __init__(self, patterns: Patterns) -> None:
        self.ko = _alternation(patterns.ko)
        self.en = _alternation(patterns.en)

    def search(self, clause: _Clause, *, whole: bool = False) -> bool:
        compact = clause.whole if whole and clause.whole else clause.compact
        return bool(
            (self.ko and self.ko.search(compact)) or (self.en and self.en.search(clause.spaced))
        )


def _alternation(patterns: Iterable[str]) -> re.Pattern[str] | None:
    # normalised as the text is: NFKC makes the "ㅋㅋ" typed (compatibility jamo) another
    # character, which a pattern written "ㅋㅋ" never met (legal_set16 A4)
    joined = "|".join(f"(?:{unicodedata.normalize('NFKC', p)})" for p in patterns)
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
        self.carry = self._carry = set(rules.carry)
        self._advice = {rule.code: rule.advice for rule in rules.rules if rule.advice}
        self._read: OrderedDict[str, Trace] = OrderedDict()

    def read(self, text: str) -> Trace:
        """The term and guard names of each clause of `text` that names a term (a message is
        read by several checks in its turn: the last few readings are kept)."""
        known = self._read.get(text)
        if known is not None:
            self._read.move_to_end(text)
            return known
        trace = self._trace(text)
        self._read[text] = trace
        while len(self._read) > READINGS_KEPT:
            self._read.popitem(last=False)
        return trace

    def _trace(self, text: str) -> Trace:
        named: list[tuple[frozenset[str], frozenset[str]]] = []
        supposed = False  # the clause before opened with "if": this one is its consequence
        was = False  # the clause before told only that it was past
        named_last = False  # the clause before named a term
        for clause in self._clauses(text):
            if (
                named
                and _DATES_BACK.match(clause.spaced)
                and self._guards["past"].search(clause, whole=True)
            ):
                # "… he would kill me when the bouncer dragged him out. that was a month ago"
                # (legal_set14 S2): a clause that only dates the one before makes it past
                terms, guards = named[-1]
                named[-1] = (terms, guards | {"past"})
            found = frozenset(n for n, t in self._terms.items() if t.search(clause))
            if named and named_last and not found and self._laugh_alone(clause):
                # "… 그것도 무섭네요 ㅋㅋ": a laugh on its own laughs off the clause before
                terms, guards = named[-1]
                named[-1] = (terms, guards | {"laughter"})
            named_last = bool(found)
            if found:  # a clause naming no term adds nothing, whatever guards it holds
                guards = frozenset(
                    n for n, g in self._guards.items() if g.search(clause, whole=True)
                )
                if supposed:  # "If he gets physical again, do I call 112?"
                    guards |= {"hypothetical"}
                if was and "now" not in found:
                    guards |= {"past"}  # "it was really scary, blood everywhere" (set15 S6)
                named.append((found, guards))
            # a clause that only tells the past of what it opens, naming no sign itself, dates
            # the clause right after it
            was = (
                not found
                and clause.spaced.rstrip().endswith(",")
                and self._guards["past"].search(clause, whole=True)
            )
            supposed = bool(_IF_CLAUSE.match(clause.spaced))
        return Trace(tuple(named))

    def _laugh_alone(self, clause: _Clause) -> bool:
        """Whether a clause is nothing but a laugh ("ㅋㅋ", "lol")."""
        laughter = self._guards.get("laughter")
        rest = _LAUGHS.sub("", clause.compact)
        return laughter is not None and laughter.search(clause) and not rest

    def check(
        self,
        text: str,
        *,
        earlier: Sequence[Trace] = (),
        standing: Iterable[str] = (),
        holding: Collection[str] = (),
    ) -> list[SafetyHit]:
        """Every rule that fires on `text`, most urgent first (the file's order), once each.

        `earlier` are the traces of the recent messages and `standing` the terms the profile
        stands for: their signs complete a rule that this message adds to, never one it does
        not touch (a hit that needed them is `building`). `holding` are the codes of the rules
        raised and still holding: one of their `again` lines fires them again.
        """
        return self.check_trace(
            self.read(text), earlier=earlier, standing=standing, holding=holding
        )

    def check_trace(
        self,
        trace: Trace,
        *,
        earlier: Sequence[Trace] = (),
        standing: Iterable[str] = (),
        holding: Collection[str] = (),
    ) -> list[SafetyHit]:
        """`check` on a message already read."""
        if not trace.clauses:
            return []
        standing = set(standing) & self._carry
        hits: list[SafetyHit] = []
        for rule in self.rules.rules:
            unless = set(rule.unless)
            here = trace.present(unless)
            # while the danger holds, a supposition about it is the danger told again ("근데
            # 오늘밤 진짜 내려오면 어떻게 해요": legal_set12 R6), and a fear laughed off is not
            # ("내일 지각하면 팀장님이 … 그것도 무섭네요 ㅋㅋ": legal_set16 A4)
            told_again = (
                trace.present((unless | {"laughter"}) - {"hypothetical"})
                if rule.code in holding
                else here
            )
            if not here and not told_again:
                continue
            carried = set(standing)
            for before in earlier:
                carried |= before.present(unless) & self._carry
            if set(rule.not_with) & (here | carried):
                continue
            alone = building = False
            for line in rule.when:
                needed = set(line)
                if needed <= here:
                    alone = True
                    break
                if needed & here and needed <= here | carried:
                    building = True
            if alone or building:
                hits.append(
                    SafetyHit(rule.code, rule.category, tuple(rule.hotlines), building=not alone)
                )
            elif (
                rule.code in holding
                and any(set(line) <= told_again for line in rule.again)
                # told again, unless a more urgent rule of its kind fired of its own
                and not any(h.category == rule.category and not h.again for h in hits)
            ):
                hits.append(SafetyHit(rule.code, rule.category, tuple(rule.hotlines), again=True))
        return hits

    def reply(self, hits: list[SafetyHit], lang: str) -> str:
        """The most urgent category's text, then a line for each further number not yet named."""
        if not hits:
            return ""
        lines = [self.rules.replies[hits[0].category].get(lang)]
        lines += [self._advice[h.code].get(lang) for h in hits if h.code in self._advice]
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
        found = []
        for part in clauses(spaced, at="turn"):
            compact = _NOT_WORD.sub("", " ".join(w for w in part.split() if w not in _FILLERS))
            if self._idioms_ko:
                compact = self._idioms_ko.sub(_ERASED, compact)
            if compact:
                found.append(_Clause(part, compact, _NOT_WORD.sub("", part)))
        return found


# How long a sign said in one message counts with the next ones, and a crisis lasts unless the
# person chooses to carry on.
WINDOW = timedelta(hours=24)


@dataclass
class Recent:
    """What a chat's safety check keeps between messages, and never any words: the traces of
    the last day's messages that held a sign, the terms the profile stands for, the rules
    raised (a rule completed over messages is raised once an episode) and a crisis."""

    traces: list[tuple[str, Trace]] = field(default_factory=list)  # (ISO time, trace)
    standing: list[str] = field(default_factory=list)
    case: list[str] = field(default_factory=list)  # the terms the legal intake stands for
    raised: dict[str, str] = field(default_factory=dict)  # rule code -> ISO time
    crisis: str | None = None  # ISO time of the suicide alert the person has not moved on from
    settled: str | None = None  # ISO time the person said help had come (or it was no emergency)
    changed: bool = False  # to be written back

    @classmethod
    def load(cls, data: str | None, now: datetime) -> Recent:
        """From its JSON (None: nothing kept), with what is older than a day dropped."""
        if not data:
            return cls()
        raw = json.loads(data)
        recent = cls(
            traces=[(at, Trace.from_json(t)) for at, t in raw.get("traces", [])],
            standing=list(raw.get("standing", [])),
            case=list(raw.get("case", [])),
            raised=dict(raw.get("raised", {})),
            crisis=raw.get("crisis"),
            settled=raw.get("settled"),
        )
        fresh = [(at, t) for at, t in recent.traces if _within(at, now)]
        raised = {code: at for code, at in recent.raised.items() if _within(at, now)}
        crisis = recent.crisis if recent.crisis and _within(recent.crisis, now) else None
        if (fresh, raised, crisis) != (recent.traces, recent.raised, recent.crisis):
            recent.traces, recent.raised, recent.crisis = fresh, raised, crisis
            recent.changed = True
        return recent

    def dump(self) -> str:
        return json.dumps(
            {
                "traces": [[at, t.as_json()] for at, t in self.traces],
                "standing": self.standing,
                "case": self.case,
                "raised": self.raised,
                "crisis": self.crisis,
                "settled": self.settled,
            },
            separators=(",", ":"),
        )

    def earlier(self) -> list[Trace]:
        """The traces a new message's signs may complete a rule with: none from before help
        came ("경찰 왔다갔어요 … 딸이 5살인데 오늘 너무 놀라서 울다 잤어요": legal_set15 A3 raised
        the child at risk again from the threat the police had answered)."""
        return [
            t
            for at, t in self.traces
            if self.settled is None
            or datetime.fromisoformat(at) > datetime.fromisoformat(self.settled)
        ]

    def fresh(self, hits: list[SafetyHit]) -> list[SafetyHit]:
        """The hits to raise: a medical rule completed over messages only once an episode;
        danger and suicide are answered each time a message adds to them (a new word of a
        plan, a threat told again)."""
        return [
            h
            for h in hits
            if not (h.building and h.code in self.raised and h.category not in AGAIN_CATEGORIES)
        ]

    def note(self, trace: Trace, hits: list[SafetyHit], carry: set[str], now: datetime) -> None:
        """Keep this message's trace when it holds a sign, the rules raised, a crisis begun."""
        at = now.isoformat()
        if any(terms & carry for terms, _ in trace.clauses):
            self.traces.append((at, trace))
            self.changed = True
        for hit in hits:
            self.raised[hit.code] = at
            self.changed = True
        if any(h.category == "suicide" for h in hits):
            self.crisis = at

    def settle(self, now: datetime) -> None:
        """Help has come (at the hospital, the crew here) or the person says it is no
        emergency: the alerts raised so far no longer hold their level or first aid."""
        self.settled = now.isoformat()
        self.changed = True

    def holds(self, code: str) -> bool:
        """A rule raised and not stood down since (help came after it)."""
        at = self.raised.get(code)
        if at is None:
            return False
        return self.settled is None or datetime.fromisoformat(at) > datetime.fromisoformat(
            self.settled
        )

    def set_standing(self, terms: Iterable[str]) -> None:
        terms = sorted(set(terms))
        if terms != self.standing:
            self.standing = terms
            self.changed = True

    def set_case(self, terms: Iterable[str]) -> None:
        """The terms the chat's legal intake stands for (its sub-type's `case_terms`)."""
        terms = sorted(set(terms))
        if terms != self.case:
            self.case = terms
            self.changed = True

    def end_crisis(self) -> None:
        if self.crisis is not None:
            self.crisis = None
            self.changed = True


def _within(iso: str, now: datetime) -> bool:
    at = datetime.fromisoformat(iso)
    if at.tzinfo is None and now.tzinfo is not None:
        at = at.replace(tzinfo=now.tzinfo)
    return now - at <= WINDOW
