"""Form logic of the legal intake: which fields a sub-type requires, which one to ask next."""

from __future__ import annotations

from typing import Any

from knowledge.models import K2Fields

_UNDECIDED = None


def _months_between(start: Any, end: Any) -> int | None:
    """Whole months from one 'yyyy-mm(-dd)' value to another, None when either lacks a month."""
    if not (isinstance(start, str) and isinstance(end, str)) or len(start) < 7 or len(end) < 7:
        return None
    if not (start[:4].isdigit() and end[:4].isdigit()):
        return None
    return (int(end[:4]) - int(start[:4])) * 12 + int(end[5:7]) - int(start[5:7])


def _holds(dep: str, expected: Any, facts: dict[str, Any]) -> bool | None:
    """Whether one condition holds on the facts; None while the facts do not decide it.

    A condition is a value the fact must have (`evidence: true`), a least value
    (`children_count: {at_least: 1}`), one of some values (`{one_of: [speeding, parking]}`), a
    value among a multi-choice's picks (`neighbor_issue: {includes: leak}`), a fact not given
    (`amount: {absent: true}`), a text shorter than some characters
    (`action_description: {shorter_than: 40}`), or a length of time from a date fact to another
    (`employment_start: {months_until: employment_end, at_least: 12}`).
    """
    if isinstance(expected, dict) and "months_until" in expected:
        months = _months_between(facts.get(dep), facts.get(expected["months_until"]))
        return None if months is None else months >= expected["at_least"]
    if isinstance(expected, dict) and "absent" in expected:  # asked only while not told
        return (dep not in facts) == expected["absent"]
    if dep not in facts:
        return _UNDECIDED
    if isinstance(expected, dict) and "includes" in expected:  # neighbor_issue: {includes: leak}
        value = facts[dep]
        return expected["includes"] in (value if isinstance(value, list) else [value])
    if isinstance(expected, dict) and "shorter_than" in expected:
        return len(str(facts[dep] or "")) < expected["shorter_than"]
    if isinstance(expected, dict) and "at_least" in expected:  # children_count: {at_least: 1}
        value = facts[dep]
        return isinstance(value, int | float) and value >= expected["at_least"]
    if isinstance(expected, dict) and "one_of" in expected:  # fine_kind: {one_of: [a, b]}
        return facts[dep] in expected["one_of"]
    return facts[dep] == expected


def condition(req_if: dict[str, Any] | None, facts: dict[str, Any]) -> bool | None:
    """True when every condition holds, False when one fails, None while any is undecided."""
    results = [_holds(dep, value, facts) for dep, value in (req_if or {}).items()]
    if any(r is False for r in results):
        return False
    return None if any(r is None for r in results) else True


def required_keys(k2: K2Fields, sub_type: str, facts: dict[str, Any]) -> list[str]:
    """Required fields of the sub-type in priority order, conditions evaluated on `facts`.

    A field whose condition the facts do not decide yet is not required yet (a question about
    evidence types waits for the evidence answer); a length-of-time condition that cannot be
    worked out is taken as met (퇴직금 is asked when the dates of employment are unclear).
    """
    keys = []
    for req in k2.sub_types[sub_type].required_fields():
        holds = condition(req.required_if, facts)
        timed = any(
            isinstance(v, dict) and "months_until" in v for v in (req.required_if or {}).values()
        )
        if holds or (holds is None and timed):
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
    """(answered required fields, fields that are or may still become required).

    Fields whose condition is undecided count in the total, so the count never goes backwards:
    it only moves forward when a condition turns out not to apply.
    """
    keys = [
        req.key
        for req in k2.sub_types[sub_type].required_fields()
        if condition(req.required_if, facts) is not False
    ]
    return sum(1 for key in keys if key in facts), len(keys)


def missing_fields(k2: K2Fields, sub_type: str, facts: dict[str, Any]) -> list[str]:
    """Required fields without a known value (unknown ones included)."""
    return [key for key in required_keys(k2, sub_type, facts) if key not in facts]


def percent(answered: int, total: int) -> int:
    """Completion as a whole percentage."""
    return round(100 * answered / total) if total else 0
