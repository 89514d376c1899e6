"""The medical rules reader: a message as the common `Reading` (graphs/common/reading.py).

Its clauses are the clause reader's (graphs/medical/clauses.py), with what each does; its
values are the slot extractor's items (graphs/medical/slots.py), each with its span and the
role its clause gives it:
- a statement's item is a fact;
- a reading inside a question ("A1c 7.1 괜찮은 건가요?"), or what a question calls the person's
  own ("his back pain"), is a fact to confirm before it is used (lower confidence, `asked`);
- the set-aside side of a contrast ("이부프로펜 말고"), a topic set aside ("술 얘기 안
  했는데요") and a kept side that only names ("타이레놀이요") are taken back;
- an item said in a supposition ("스타틴 먹으면") is supposed; any other item of a question
  ("What is gout?") is no fact of the person's: unplaced.
The profile learns from the facts alone (`questions.profile_slots`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from graphs.common.reading import DEFAULT, About, Act, Clause, Reading, Role, Value
from graphs.medical import clauses
from graphs.medical.slots import SlotExtraction, SlotExtractor, SlotItem, normalise

TO_CONFIRM = 0.4  # the confidence of an item said inside a question: confirmed before use
_ACTS = {
    "statement": Act.STATEMENT,
    "question": Act.QUESTION,
    "hypothetical": Act.HYPOTHETICAL,
    "rejected": Act.CORRECTION,  # a topic the person sets aside: "I never said X"
}


@dataclass(frozen=True)
class MedicalReading:
    """The Reading, and what the slot extractor says of the message as a whole."""

    reading: Reading
    said: SlotExtraction  # every item found, who they are about, rejected values


def read(extractor: SlotExtractor, text: str) -> MedicalReading:
    """A (normalised) message as a Reading whose values carry the slot items."""
    text = normalise(text or "")
    if not text.strip():
        return MedicalReading(Reading(text=text), SlotExtraction((), "self", (), ()))
    said = extractor.extract(text)
    reader = clauses.reader()
    found = reader.read(text)
    values = tuple(_value(reader, text, clauses.clause_at(found, i.start), i) for i in said.items)
    common = tuple(
        Clause(
            text=text[c.start : c.end].strip(),
            span=(c.start, c.end),
            acts=frozenset(
                {_ACTS[c.kind], *([Act.CONTRAST] if c.set_aside or c.kept_side else [])}
            ),
            about=_about(
                [v.value for v in values if v.role is Role.FACT and c.start <= v.span[0] < c.end],
                said,
            ),
        )
        for c in found
    )
    reading = Reading(text=text, clauses=common, values=values, corrects=extractor.corrects(text))
    return MedicalReading(reading, said)


def _value(
    reader: clauses.ClauseReader, text: str, clause: clauses.Clause | None, item: SlotItem
) -> Value:
    """The item with the role its clause gives it."""
    role, confidence, kept = Role.FACT, DEFAULT, item
    if clause is None or clause.kind == "statement":
        pass
    elif clause.kind == "question" and item.slot in ("vitals", "labs") and not item.family:
        role, confidence, kept = Role.FACT, TO_CONFIRM, replace(item, unsure=True, asked=True)
    elif (
        clause.kind == "question"
        and item.slot in ("symptoms", "medications")
        and reader.possessed(text, item.start)
    ):
        role, confidence, kept = Role.FACT, TO_CONFIRM, replace(item, asked=True)
    elif clause.kind == "hypothetical":
        role = Role.SUPPOSED
    elif clause.kind == "rejected":
        role = Role.TAKEN_BACK
    else:
        role = Role.UNPLACED
    if clause is not None and role is Role.FACT:
        kept_side = clause.kept_side
        if any(a <= item.start < b for a, b in clause.set_aside) or (
            kept_side and kept_side[0] <= item.start < kept_side[1] and not clause.tells
        ):
            role = Role.TAKEN_BACK
    return Value(
        kind=item.slot,
        value=kept,
        span=(item.start, item.end),
        fields=(item.slot,),
        field=item.slot,
        role=role,
        confidence=confidence,
        approx=item.unsure,
        said=item.text,
    )


def _about(items: list[SlotItem], said: SlotExtraction) -> About:
    """Whom a clause is about, by its items: the person's own, or a relative's."""
    if not items:
        return About.UNSAID
    if all(i.family for i in items) or said.subject != "self":
        return About.OTHER
    return About.SELF
