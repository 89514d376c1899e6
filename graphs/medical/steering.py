"""Which passages an answer may draw on: the entries a description or an interaction leads to
come first, and an entry the person rejected, or that does not fit them, never comes at all."""

from __future__ import annotations

from typing import Any

from graphs.medical import evidence as ev
from graphs.medical.fit import Person, fits
from knowledge.medical_corpus import MedicalCorpus

LEAD_RELEVANCE = 0.8  # an entry a description leads to ranks above one on the question's focus
UNFIT_MARGIN = 4  # hits searched beyond k, so that dropping the unfit still leaves k to use


def floors(led: list[str]) -> dict[str, float]:
    """The relevance each led passage keeps whatever its similarity (passage id → floor)."""
    return {f"med:{entry}": LEAD_RELEVANCE for entry in led}


def warned_entries(entries: list[str]) -> list[str]:
    """The passages an interaction's warning already says: the rest of the answer is the rest."""
    return [f"med:{entry}" for entry in entries]


def steer(
    found: list[ev.Passage],
    corpus: MedicalCorpus,
    lang: str,
    *,
    floor: dict[str, float],
    excluded: list[str],
    person: Person,
    asked: frozenset[str],
) -> list[ev.Passage]:
    """The passages found, with the led ones added or raised, without the excluded or unfit."""
    by_id = {p.id: p for p in found}
    for pid, relevance in floor.items():
        held = by_id.get(pid)
        if held is None:
            by_id[pid] = ev.passage_of(corpus.by_id(pid.removeprefix("med:")), lang, relevance, 0)
        elif held.relevance < relevance:
            by_id[pid] = held.rescored(relevance)
    kept = [p for p in by_id.values() if p.id not in excluded and _fits(p, corpus, person, asked)]
    return sorted(kept, key=lambda p: (-p.relevance, -p.fused))


def _fits(
    passage: ev.Passage, corpus: MedicalCorpus, person: Person, asked: frozenset[str]
) -> bool:
    """An entry of the shipped corpus fits by its applies_to; an ingested passage has none."""
    if not passage.id.startswith("med:"):
        return True
    try:
        entry = corpus.by_id(passage.id.removeprefix("med:"))
    except KeyError:
        return True
    return fits(entry.applies_to, person, asked)


def person_state(person: Person) -> dict[str, Any]:
    """The person as plain data for the run's state."""
    return {
        "sex": person.sex,
        "age_group": person.age_group,
        "pregnant": person.pregnant,
        "held": sorted(person.held),
        "denied": sorted(person.denied),
    }


def person_from(data: dict[str, Any] | None) -> Person:
    data = data or {}
    return Person(
        sex=data.get("sex"),
        age_group=data.get("age_group"),
        pregnant=bool(data.get("pregnant")),
        held=frozenset(data.get("held") or ()),
        denied=frozenset(data.get("denied") or ()),
    )
