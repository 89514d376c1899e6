"""The interactions and contraindications a question touches (knowledge/medical/interactions.yaml):
the person's medicines and conditions checked against what the question names, first, so that
"ibuprofen?" from someone on warfarin leads with "avoid it", with its source."""

from __future__ import annotations

from graphs.medical import about
from graphs.medical.fit import Person
from knowledge.medical_interactions import Interaction, load_interactions

LEVEL_ORDER = {"avoid": 0, "caution": 1}


def expand(tags: frozenset[str] | set[str]) -> frozenset[str]:
    """Tags with a combination's classes apart: "calcium channel blocker with angiotensin ii
    receptor blocker" is each of the two (and their corpus names)."""
    aliases = about.extractor().lexicon.concept_aliases
    parts = {part.strip() for tag in tags for part in tag.split(" with ")}
    return frozenset(tags | parts | {aliases[p] for p in parts if p in aliases})


def touched(question: str, asked: frozenset[str], person: Person) -> list[Interaction]:
    """The rules one side of which the question names while the other is held by the person or
    named too, the ones to avoid first. A man's question is not about his own pregnancy."""
    lowered = question.lower()
    asked, held = expand(asked), expand(person.held)
    if person.sex == "male":
        asked -= {"pregnancy"}
    found = []
    for rule in load_interactions().rules:
        this_asked, that_asked = rule.this.named(asked, lowered), rule.that.named(asked, lowered)
        this_held, that_held = rule.this.named(held), rule.that.named(held)
        if (this_asked and (that_asked or that_held)) or (that_asked and this_held):
            found.append(rule)
    return sorted(found, key=lambda r: LEVEL_ORDER[r.level])


def warning_lines(rules: list[Interaction], lang: str) -> list[str]:
    """The answer's first lines: each warning, plainly, with the body it follows."""
    return [f"⚠️ {rule.warning.get(lang)} ({rule.source.name})" for rule in rules]


def warning_sources(rules: list[Interaction]) -> list[str]:
    return list(dict.fromkeys(f"{r.source.name} ({r.source.url})" for r in rules))
