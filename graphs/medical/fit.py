"""Whom an answer is for, and whether a corpus entry fits them (its `applies_to`).

The person is the one the question is about: the profile's subject, or another person the
message speaks of (a mother asking about her child's weight). What is known of them (sex, age
group, pregnancy, conditions and medicines held or denied) is read against each entry:
unknown fits, except an entry only for a population the person writing is not by default
(pregnancy, infants, children), which needs that population known or named in the question.
A baby or a child is never served an entry for adults: not when their age group is known, nor
when it is not but the question is about a baby or a child ("신생아가 토해요").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphs.medical import about, memory
from knowledge.medical_answering import load_answering
from knowledge.medical_corpus import AGE_GROUPS, AppliesTo

ASSUMED_AGES = frozenset({"adult", "older"})  # the person writing, when nothing says otherwise
YOUNG = frozenset({"infant", "child"})
# a mother's question names a baby too
NOT_OF_THE_BABY = frozenset({"pregnancy", "breastfeeding", "postpartum"})
HELD_SLOTS = ("conditions", "medications", "symptoms")


@dataclass(frozen=True)
class Person:
    """What is known of the person a question is about."""

    sex: str | None = None
    age_group: str | None = None
    pregnant: bool = False
    held: frozenset[str] = frozenset()  # corpus tags of current conditions, medicines, symptoms
    denied: frozenset[str] = frozenset()  # corpus tags of what they said they do not have


def age_group(age: float) -> str:
    """infant under 1, child under 18, adult under 65, older from 65."""
    if age < 1:
        return "infant"
    if age < 18:
        return "child"
    return "adult" if age < 65 else "older"


def _relation_sex(name: str) -> str | None:
    for relation in about.extractor().lexicon.relations:
        if relation.name == name:
            return relation.sex
    return None


def _known(items: list[dict[str, Any]], subject: str) -> Person:
    """A person from their items (stored or just said) and the relation they are."""
    current = [i for i in items if i["status"] == "current" and not i.get("unsure")]
    demographics = {i["name"]: i["value"] for i in current if i["slot"] == "demographics"}
    sex = demographics.get("sex") or _relation_sex(subject)
    age = demographics.get("age")
    group = (
        age_group(float(age))
        if isinstance(age, int | float)
        else load_answering().relation_ages.get(subject)
    )
    held = [i["name"] for i in current if i["slot"] in HELD_SLOTS]
    denied = [i["name"] for i in items if i["status"] == "denied"]
    return Person(
        sex=str(sex) if sex in ("male", "female") else None,
        age_group=group,
        pregnant="pregnancy" in held,
        held=frozenset(about.tags(held)),
        denied=frozenset(about.tags(denied)),
    )


def _status(said: dict[str, Any]) -> str:
    """A just-said item's standing, as `memory.status_of` gives it for a stored one."""
    if said["family"]:
        return "family"
    if said["history"]:
        return "past"
    return "denied" if said["negated"] else "current"


def person_of(state: dict[str, Any], now: datetime) -> Person:
    """The person the question is about: another person the message speaks of (not stored in
    this profile), else the profile's own subject with their current items."""
    profile = state.get("profile") or memory.new_profile()
    said = state.get("extraction") or {}
    subject = said.get("subject", "self")
    if subject != "self" and subject != profile.get("subject", "self"):
        items = [{**i, "status": _status(i)} for i in said.get("items", [])]
        return _known(items, subject)
    stored = [
        i for i in profile.get("items", []) if i["status"] != "current" or memory.is_current(i, now)
    ]
    return _known(stored, profile.get("subject", "self"))


def asked_of(question: str, tags: list[str] | tuple[str, ...]) -> frozenset[str]:
    """What a question asks about: its concept tags (and topics) and the populations it names."""
    return frozenset(tags) | load_answering().populations_named(question.lower())


def age_groups(person: Person, asked: frozenset[str]) -> frozenset[str]:
    """The age groups the person may be in: their own and those the question names. A baby or
    a child is only young; one of unknown age is young when the question is about a baby or a
    child (not a mother's own pregnancy or breastfeeding), else taken for the adult writing."""
    named = asked & set(AGE_GROUPS)
    young = named & YOUNG
    if person.age_group in YOUNG:
        return frozenset({person.age_group}) | young
    if person.age_group is None and young and not (asked & NOT_OF_THE_BABY or person.pregnant):
        return young
    return (frozenset({person.age_group}) if person.age_group else ASSUMED_AGES) | named


def in_ages(ages: tuple[str, ...], person: Person, asked: frozenset[str]) -> bool:
    """Whether one of the person's age groups (`age_groups`) is among `ages`."""
    return bool(age_groups(person, asked) & set(ages))


def fits(rule: AppliesTo, person: Person, asked: frozenset[str]) -> bool:
    """Whether an entry with this `applies_to` may be served to the person for this question."""
    if rule.sex != "any" and person.sex not in (None, rule.sex):
        return False
    if not in_ages(rule.ages, person, asked):
        return False
    if rule.pregnancy is True and not (person.pregnant or "pregnancy" in asked):
        return False
    if rule.pregnancy is False and person.pregnant:
        return False
    for names in (rule.conditions, rule.medicines):
        if names and set(names) <= person.denied:  # "I don't have COPD" names it, asks nothing
            return False
    return not rule.asked or bool(set(rule.asked) & (asked | person.held))
