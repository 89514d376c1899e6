"""A medical profile's rows as a turn leaves them (`ProfileSnapshot`), written whole in the
turn's one transaction (`profile_work`, run by `write_turn`).

The profile's source of truth is the medical graph's checkpoint; the rows are for staff, the
export and /forget (read in db/medical_repo.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from db.repo.statements import TurnStatements


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class ProfileSnapshot:
    """What a medical profile's rows should be: whom it is about, its items (with whether each
    is current now) and the questions asked, and the pre-visit summary when one was made."""

    profile_id: str
    subject: str  # self, or the relation a carer speaks for
    items: tuple[dict[str, Any], ...]  # `ProfileItem` rows
    questions: tuple[dict[str, Any], ...]  # `MedicalQuestion` rows
    summary_text: str | None = None  # None: the summary kept is left as it is

    @classmethod
    def of(
        cls,
        *,
        profile_id: str,
        subject: str,
        items: list[dict[str, Any]],
        asked: list[dict[str, Any]],
        summary_text: str | None = None,
    ) -> ProfileSnapshot:
        """From the graph's stored items (graphs/medical/records.py `stored_items`) and the
        questions in its state."""
        return cls(
            profile_id=profile_id,
            subject=subject,
            items=tuple(_item_row(profile_id, item) for item in items),
            questions=tuple(_question_row(profile_id, q) for q in asked),
            summary_text=summary_text,
        )


def _item_row(profile_id: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "profile_id": profile_id,
        "key": item["key"],
        "slot": item["slot"],
        "name": item["name"],
        "name_ko": item["name_ko"],
        "value_json": _dumps(item["value"]),
        "text": item["text"],
        "status": item["status"],
        "current": bool(item.get("current")),
        "unsure": bool(item["unsure"] and not item.get("confirmed")),
        "first_said": item["first_said"],
        "last_said": item["last_said"],
        "mentions": item["mentions"],
        "importance": round(float(item["importance"]), 3),
        "history_json": _dumps(item["history"]),
    }


def _question_row(profile_id: str, q: dict[str, Any]) -> dict[str, Any]:
    return {
        "profile_id": profile_id,
        "question": q["q"],
        "sources_json": _dumps(q["sources"]),
        "answered": bool(q["answered"]),
        "uncertainty": float(q["uncertainty"]),
        "cached": bool(q["cached"]),
        "urgent": bool(q.get("urgent")),
        "input_id": q.get("input_id"),
        "at": q["at"],
    }


def profile_work(
    the: TurnStatements, profile: ProfileSnapshot, now: datetime
) -> list[tuple[Any, Any]]:
    """The (statement, parameters) pairs that write a profile whole: its row, then its items
    and questions replaced."""
    pid = profile.profile_id
    work: list[tuple[Any, Any]] = [
        (the.profile, {"b_id": pid, "b_subject": profile.subject, "b_at": now}),
    ]
    if profile.summary_text is not None:
        work.append((the.profile_summary, {"b_id": pid, "b_summary": profile.summary_text}))
    work += [(the.clear_items, {"b_id": pid}), (the.clear_questions, {"b_id": pid})]
    if profile.items:
        work.append((the.items, list(profile.items)))
    if profile.questions:
        work.append((the.questions, list(profile.questions)))
    return work
