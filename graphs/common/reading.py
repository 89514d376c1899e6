"""The reader seam: what one message says, as a typed `Reading` both graphs decide from.

A reader (the rules now; an LLM reader later, checked by the same validators) turns a message
into its clauses, each with what it does (`Act`) and whom it is about, and the values found in
it: each with its span in the message, the fields it could fill, the one it was placed in (if
any), its role and how sure the reader is. Nodes never look at the words again to decide
whether a value is a fact: a value said in a supposition ("만약 500만원이면"), taken back
("4월 아니고") or of another event ("결혼식이 10월이었는데") is in the Reading with that role,
and only `Role.FACT` and `Role.ANSWER` values are recorded.

Confidence of a placed value: `CUED` when a word of the field placed it ("보증금 2억"),
`ASKED` when it answers the question just asked, `DEFAULT` when it went to the only or the
primary field of its kind, or was read from the whole message (an option, a phrase).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

CUED, ASKED, DEFAULT = 0.9, 0.8, 0.6
MODEL = 0.7  # of a value only a model read (checked by the rules' readers)


class Act(StrEnum):
    """What a clause does. A clause may do several things ("만약 소송하면 이길 수 있나요?"
    supposes and asks); one that does none of the others states."""

    STATEMENT = "statement"
    QUESTION = "question"
    REQUEST = "request"
    HYPOTHETICAL = "hypothetical"
    CONTRAST = "contrast"
    CORRECTION = "correction"


class Role(StrEnum):
    """What a value found in a message is to the intake."""

    ANSWER = "answer"  # the value of the field just asked
    FACT = "fact"  # another field's value, stated
    TAKEN_BACK = "taken_back"  # "300만원 아니고", "not March": a value the person withdraws
    OTHER_EVENT = "other_event"  # of another event or role ("보험사가 80만원 준대요")
    SUPPOSED = "supposed"  # said in a supposition: no fact
    UNPLACED = "unplaced"  # read, but no field takes it here
    SUGGESTED = "suggested"  # another field's value only a model read: recorded once confirmed


class About(StrEnum):
    """Whom a clause is about, as far as its words say."""

    SELF = "self"  # "제가 빌려줬어요", "I lent him"
    OTHER = "other"  # a person other than the writer ("친구가", "my landlord")
    UNSAID = "unsaid"


@dataclass(frozen=True)
class Value:
    """One value found in a message."""

    kind: str  # amount, date, int, days, duration, choice, multi_choice, yesno, name, text
    value: Any
    span: tuple[int, int] | None  # where it was read in the message; None: from the whole text
    fields: tuple[str, ...] = ()  # the fields it could fill, the chosen one first
    field: str | None = None  # the field it was placed in, if any
    role: Role = Role.UNPLACED
    confidence: float = DEFAULT
    cued: bool = False  # placed by a word of its field, not by default
    approx: bool = False  # given as approximate ("300만원 정도", "about June")
    said: str = ""  # as written (the span's text, or the words that gave it)
    # Other readings of the same words that the field accepts ("last Saturday" said on a
    # Sunday): such a value is recorded only once the person chooses (`Reading.choices`).
    alternatives: tuple[Any, ...] = ()
    # An answer that adds up parts the person listed ("3월에 1000만원, 5월에 500만원, 8월에
    # 1500만원"): kept only once they confirm the total.
    summed: bool = False


@dataclass(frozen=True)
class Clause:
    """A clause (a sentence as chats write them) and what it does."""

    text: str
    span: tuple[int, int]
    acts: frozenset[Act] = frozenset({Act.STATEMENT})
    about: About = About.UNSAID

    @property
    def asks(self) -> bool:
        return Act.QUESTION in self.acts

    @property
    def supposes(self) -> bool:
        return Act.HYPOTHETICAL in self.acts

    def holds(self, span: tuple[int, int] | None) -> bool:
        """Whether a value read at `span` stands in this clause."""
        return span is not None and self.span[0] <= span[0] < self.span[1]


@dataclass(frozen=True)
class Reading:
    """What a message says: clauses, values, and the asked field's outcome."""

    text: str
    clauses: tuple[Clause, ...] = ()
    values: tuple[Value, ...] = ()
    asked: str | None = None
    invalid: str | None = None  # why an answer to the asked field cannot be used
    unknown: bool = False  # the person said they do not know
    corrects: bool = False  # a correction marker ("정정", "I meant") anywhere in the message
    emotions: tuple[dict[str, str], ...] = ()  # {"kind": ..., "cue": ...}
    # Memo items a model read in context and the rules checked (graphs/legal/memo.py), and
    # whether it found the message to be about another matter (None: not asked).
    items: tuple[dict[str, Any], ...] = ()
    new_matter: bool | None = None
    # whether a model found the person saying the case type being taken is wrong (None: not
    # asked; the rules read the words for it themselves, graphs/legal/retype.py)
    wrong_type: bool | None = None
    # Corrections of memo items a model read: {"item": "m9", "said": "작년이고요"} (the words
    # are the message's; the nodes read the value with the item's own reader).
    item_fixes: tuple[dict[str, str], ...] = ()

    # --- what the nodes decide from ---------------------------------------------------------

    @property
    def answer(self) -> Any:
        """The asked field's value, None when not given or when its words read two ways."""
        found = [v for v in self.values if v.role is Role.ANSWER]
        return found[-1].value if found and not found[-1].alternatives else None

    @property
    def answer_summed(self) -> bool:
        """Whether the asked field's value adds up parts the person listed."""
        found = [v for v in self.values if v.role is Role.ANSWER]
        return bool(found) and found[-1].summed

    @property
    def facts(self) -> dict[str, Any]:
        """Other fields' stated values, the latest telling of each winning (a telling that
        reads two ways is in `choices` instead). A value a word of its field placed outranks
        one its kind's default placed ("사전통지서는 11월 20일에 받았고 … 청문은 12월 11일":
        the notice date is the 20th, legal_set14 R4)."""
        facts: dict[str, Any] = {}
        placed = {v.field for v in self.values if v.role is Role.FACT and v.cued}
        for value in self.values:
            if value.field in placed and not value.cued:
                continue
            if value.role is Role.FACT and value.field is not None:
                facts[value.field] = value.value
                if value.alternatives:
                    del facts[value.field]
        return facts

    @property
    def placed(self) -> frozenset[str]:
        """Fields a value of the message was placed in: recorded, suggested, or to choose."""
        roles = (Role.FACT, Role.ANSWER, Role.SUGGESTED)
        return frozenset(v.field for v in self.values if v.field and v.role in roles)

    @property
    def choices(self) -> dict[str, Value]:
        """Fields (the asked one first) whose latest telling reads two ways: the person chooses
        between `(value.value, *value.alternatives)` before any is recorded."""
        latest: dict[str, Value] = {}
        for value in self.values:
            if value.role in (Role.FACT, Role.ANSWER) and value.field is not None:
                latest[value.field] = value
        found = {key: v for key, v in latest.items() if v.alternatives}
        return dict(sorted(found.items(), key=lambda item: item[0] != self.asked))

    @property
    def suggested(self) -> dict[str, Any]:
        """Other fields' values only a model read (the rules' readers accept their form): the
        person is asked before any is recorded."""
        return {
            v.field: v.value
            for v in self.values
            if v.role is Role.SUGGESTED and v.field is not None
        }

    @property
    def cued(self) -> frozenset[str]:
        """Fields a word of theirs placed a value in ("보증금 2억"), not their kind's default."""
        return frozenset(
            v.field for v in self.values if v.cued and v.field and v.role is not Role.SUPPOSED
        )

    @property
    def approx(self) -> frozenset[str]:
        """Fields whose value was given as approximate."""
        return frozenset(
            v.field
            for v in self.values
            if v.approx and v.field and v.role in (Role.FACT, Role.ANSWER)
        )

    @property
    def taken_back(self) -> tuple[tuple[str, Any, str], ...]:
        """Values the message withdraws: (kind, value, as written)."""
        return tuple((v.kind, v.value, v.said) for v in self.values if v.role is Role.TAKEN_BACK)

    @property
    def correction(self) -> bool:
        """The message says an earlier statement was wrong."""
        return self.corrects or any(Act.CORRECTION in c.acts for c in self.clauses)

    @property
    def other_values(self) -> int:
        """Values said of another event or role (the story keeps them)."""
        return sum(v.role is Role.OTHER_EVENT for v in self.values)

    @property
    def supposed(self) -> tuple[Value, ...]:
        """Values said only in a supposition: never recorded."""
        return tuple(v for v in self.values if v.role is Role.SUPPOSED)

    def questions(self) -> list[Clause]:
        """The clauses that ask something, in order."""
        return [c for c in self.clauses if c.asks]

    def clause_of(self, value: Value) -> Clause | None:
        """The clause a value was read in (None for one read from the whole message)."""
        return next((c for c in self.clauses if c.holds(value.span)), None)


# --- the rules' clause acts (the words are the knowledge's, passed in) -----------------------

# A sentence that asks by its ending and mark ("남은 돈은 안 갚아도 되는거 맞죠?", "can I sue?").
# (also the clipped endings of a typed question: "돌려받을수있음?", "가능함?", "사기임?",
# legal_set16 R5 had it as a wish only; not "한 20?", a number told unsure)
ASKS = re.compile(r"(?:[요죠까니나냐지야어음함됨임]|[a-z])\s*[?？]+\s*$", re.I)
# An English question told by its word order, without a mark ("please hes coming in an hour.
# what do i do": legal_set11 C5): a question word before a verb that asks, or that verb before
# its subject.
ASKS_BY_ORDER = re.compile(
    r"^(?:(?:please|so|and|but|ok|okay|then|now)\b[,\s]*)*"
    r"(?:(?:what|how|when|where|who|why|which)\s+(?:do|does|did|should|can|could|will|would|is|"
    r"are|am|was|were|must|may|happens?)\b|(?:should|can|could|do|does|did|will|would|may|must|"
    r"am|is|are)\s+(?:i|we|you|he|she|they|it)\b)",
    re.I,
)
# A short answer said with a rising tone, no question ("I think so?", "i did answer??": legal_set19
# S1, S3 had them listed as questions for the lawyer).
HEDGED = re.compile(
    r"^(?:i\s+(?:think|guess|believe|suppose|did|do|have|had|already)|maybe|probably)\b"
    r"(?:\s+\S+){0,2}\s*[?？]+\s*$",
    re.I,
)
_FIRST_PERSON = re.compile(
    r"(?:^|\s)(?:제가|저는|저도|저희|제|저|내가|나는|난)(?=\s|$)|\b(?:i|my|me)\b"
)


@dataclass(frozen=True)
class ActWords:
    """The lexicon's words for each act, lower-cased substrings (knowledge/lexicon.yaml)."""

    suppositions: tuple[str, ...] = ()
    requests: tuple[str, ...] = ()
    contrasts: tuple[str, ...] = ()
    corrections: tuple[str, ...] = ()
    people: frozenset[str] = frozenset()


@functools.cache
def _supposing(words: tuple[str, ...]) -> re.Pattern[str]:
    """The supposition words, each not followed by 서: "수사관이라고 하면서", "갚는다면서" tell
    what someone said, no supposition (legal_set15 R3 lost a transfer and the caller's name)."""
    return re.compile("|".join(f"{re.escape(w)}(?!서)" for w in words) or "(?!x)x")


def clause_acts(sentence: str, words: ActWords, *, asks: bool) -> frozenset[Act]:
    """What a sentence does by its words; `asks` is the caller's reading of a question (it
    needs the intents, which this module does not know)."""
    lowered = sentence.lower()
    acts = set()
    if asks:
        acts.add(Act.QUESTION)
    if _supposing(words.suppositions).search(lowered):
        acts.add(Act.HYPOTHETICAL)
    if any(w in lowered for w in words.requests):
        acts.add(Act.REQUEST)
    if any(w in lowered for w in words.contrasts):
        acts.add(Act.CONTRAST)
    if any(w in lowered for w in words.corrections):
        acts.add(Act.CORRECTION)
    return frozenset(acts or {Act.STATEMENT})


def clause_about(sentence: str, words: ActWords) -> About:
    """Whom a sentence is about: the writer when it says I or my, another person when it names
    one (a word of the lexicon's people, with its particle), else unsaid."""
    lowered = sentence.lower()
    if _FIRST_PERSON.search(lowered):
        return About.SELF
    for word in re.findall(r"[가-힣]+|[a-z]+", lowered):
        if word in words.people or any(
            word.startswith(p) and len(word) - len(p) <= 2 for p in words.people if len(p) >= 2
        ):
            return About.OTHER
    return About.UNSAID
