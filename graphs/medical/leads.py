"""Descriptions that lead to an entry the search alone may miss (knowledge/medical/answering.yaml
`leads`): tremor and a cold sweat in someone on a sulfonylurea → low blood sugar; sudden worse
confusion → delirium; chest tightness on the stairs → angina; "when should I call 119?" → the
signs of an emergency."""

from __future__ import annotations

from graphs.medical.fit import Person, in_ages
from knowledge.medical_answering import Lead, load_answering


def _shown(lead: Lead, question: str, asked: frozenset[str]) -> bool:
    lowered = question.lower()
    met = sum(1 for sign in lead.signs if sign.shown(asked, lowered))
    return met >= (lead.need or len(lead.signs))


def led_entries(question: str, asked: frozenset[str], person: Person) -> list[str]:
    """The entries the question's description leads to, for this person."""
    found = []
    for lead in load_answering().leads:
        if lead.with_ and not set(lead.with_) & (asked | person.held):
            continue
        if in_ages(lead.ages, person, asked) and _shown(lead, question, asked):
            found.append(lead.entry)
    return list(dict.fromkeys(found))
