"""Form logic of the legal intake: which fields a sub-type requires, which one to ask next."""

from __future__ import annotations

from typing import Any

from knowledge.models import K2Fields


def required_keys(k2: K2Fields, sub_type: str, facts: dict[str, Any]) -> list[str]:
    """Required fields of the sub-type in priority order, conditions evaluated on `facts`."""
    keys = []
    for req in k2.sub_types[sub_type].required_fields():
        condition = req.required_if or {}
        if all(facts.get(dep) == value for dep, value in condition.items()):
            keys.append(req.key)
    return keys


def next_field(
    k2: K2Fields, sub_type: str, facts: dict[str, Any], unknown: list[str]
) -> str | None:
    """The first required field that is neither answered nor recorded as unknown."""
    for key in required_keys(k2, sub_type, facts):
        if key not in facts and key not in unknown:
            return key
    return None


def progress(k2: K2Fields, sub_type: str, facts: dict[str, Any]) -> tuple[int, int]:
    """(answered required fields, required fields)."""
    keys = required_keys(k2, sub_type, facts)
    return sum(1 for key in keys if key in facts), len(keys)


def missing_fields(k2: K2Fields, sub_type: str, facts: dict[str, Any]) -> list[str]:
    """Required fields without a known value (unknown ones included)."""
    return [key for key in required_keys(k2, sub_type, facts) if key not in facts]


def percent(answered: int, total: int) -> int:
    """Completion as a whole percentage."""
    return round(100 * answered / total) if total else 0
