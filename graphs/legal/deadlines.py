"""Deadlines worked out from the dates an intake collected, by the K3 rules of its sub-type.

A date known only to the month or year ("2026-09", "2026") counts from its first day: the
earliest the deadline can fall, so a deadline is never shown later than it may really be; such
a deadline is marked approximate. A deadline due within URGENT_DAYS makes the intake urgent.
"""

from __future__ import annotations

import calendar
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from typing import Any

from graphs.legal.fields import condition
from graphs.legal.memo import tells_deadline
from knowledge.loader import Knowledge
from knowledge.models import DeadlineRule, Period

URGENT_DAYS = 30


@dataclass(frozen=True)
class Deadline:
    """One worked-out deadline."""

    key: str
    label: str
    rule: str
    due: str  # ISO date
    start_field: str
    approximate: bool  # the start date was known only to the month or year

    def days_left(self, today: date) -> int:
        """Days from `today` to the due date (negative once it has passed)."""
        return (date.fromisoformat(self.due) - today).days

    def due_soon(self, today: date) -> bool:
        """Due between today and URGENT_DAYS from now."""
        return 0 <= self.days_left(today) <= URGENT_DAYS

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _start(value: Any) -> tuple[date, bool] | None:
    """The first day a 'yyyy-mm-dd' / 'yyyy-mm' / 'yyyy' value can mean, and whether it is
    approximate; None for anything else ('ongoing', unknown)."""
    if not isinstance(value, str):
        return None
    parts = value.split("-")
    if not all(p.isdigit() for p in parts) or len(parts[0]) != 4 or len(parts) > 3:
        return None
    numbers = [int(p) for p in parts] + [1] * (3 - len(parts))
    try:
        return date(*numbers), len(parts) < 3
    except ValueError:
        return None


def _add_months(day: date, months: int) -> date:
    """The same day `months` months away, the month's last day when it has no such day."""
    index = day.year * 12 + day.month - 1 + months
    year, month = index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _shift(day: date, period: Period, sign: int) -> date:
    """`day` moved by a period forwards (sign 1) or backwards (sign -1)."""
    moved = _add_months(day, sign * (period.years * 12 + period.months))
    return moved + timedelta(days=sign * period.days)


def _applies(rule: DeadlineRule, facts: dict[str, Any]) -> bool:
    if rule.when and condition(rule.when, facts) is not True:
        return False
    return not any(facts.get(key) == value for key, value in rule.unless.items())


def work_out(
    knowledge: Knowledge, sub_type: str | None, facts: dict[str, Any], lang: str, today: date
) -> list[Deadline]:
    """The sub-type's deadlines that the facts allow working out, earliest first."""
    if not sub_type or sub_type not in knowledge.k3.info:
        return []
    found = []
    for rule in knowledge.k3.info[sub_type].deadlines:
        if not _applies(rule, facts):
            continue
        start = next(
            ((key, s) for key in rule.start if (s := _start(facts.get(key))) is not None), None
        )
        if start is None:
            continue
        key, (day, approximate) = start
        due = _shift(day, rule.after, 1) if rule.after else _shift(day, rule.before, -1)  # type: ignore[arg-type]
        if rule.future_only and due < today:
            continue
        found.append(
            Deadline(
                key=rule.key,
                label=rule.label.get(lang),
                rule=rule.rule.get(lang),
                due=due.isoformat(),
                start_field=key,
                approximate=approximate,
            )
        )
    return sorted(found, key=lambda d: d.due)


def told(
    knowledge: Knowledge, memo: list[dict[str, Any]], lang: str, today: date
) -> list[Deadline]:
    """The deadlines the person told (a chronology item of a day ahead whose words make it a
    deadline, a hearing or a summons: memo.yaml `deadline`), each labelled with their words."""
    found: dict[str, Deadline] = {}
    for item in memo:
        if item.get("section") != "chronology" or item.get("taken_back"):
            continue
        start = _start(item.get("date"))
        quote = " ".join(str(item.get("quote", "")).split())
        if start is None or start[1] or start[0] < today or not tells_deadline(knowledge, quote):
            continue
        due = start[0].isoformat()
        found.setdefault(
            due,
            Deadline(
                key="told",
                label=f"«{quote}»",
                rule=knowledge.message("deadline_told", lang),
                due=due,
                start_field=f"memo:{item.get('id', '')}",
                approximate=False,
            ),
        )
    return list(found.values())


def listed(
    knowledge: Knowledge,
    sub_type: str | None,
    facts: dict[str, Any],
    lang: str,
    today: date,
    memo: list[dict[str, Any]] | None = None,
) -> list[Deadline]:
    """Every deadline of a case, earliest first: those the person told (`told`, from its memo)
    and those worked out from its facts (`work_out`)."""
    found = [
        *told(knowledge, memo or [], lang, today),
        *work_out(knowledge, sub_type, facts, lang, today),
    ]
    return sorted(found, key=lambda d: d.due)


def is_urgent(deadlines: list[Deadline], today: date) -> bool:
    """Whether a deadline falls between today and URGENT_DAYS from now."""
    return any(d.due_soon(today) for d in deadlines)
