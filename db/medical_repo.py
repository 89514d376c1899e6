"""Data access for the medical assistant: a chat's profile, its items and questions.

The profile's source of truth is the medical graph's checkpoint; each turn writes its rows whole
in the turn's one transaction (db/repo/profiles.py, `write_turn`), for staff, the export and
/forget.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import MedicalProfile, MedicalQuestion, ProfileItem, SafetyAlert
from db.repo import writing


async def profile_of(*, engine: AsyncEngine, chat_id: int) -> MedicalProfile | None:
    """The chat's medical profile row, if it has one."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(select(MedicalProfile).where(MedicalProfile.chat_id == chat_id))
        return rows.first()


async def open_profile(*, engine: AsyncEngine, chat_id: int, user_id: int | None) -> MedicalProfile:
    """The chat's medical profile, created on first use (its id is the graph's thread id)."""
    found = await profile_of(engine=engine, chat_id=chat_id)
    if found is not None:
        return found
    profile = MedicalProfile(id=uuid.uuid4().hex, chat_id=chat_id, user_id=user_id)
    async with writing(engine) as db:
        db.add(profile)
        await db.commit()
        await db.refresh(profile)
    return profile


async def list_profiles(*, engine: AsyncEngine) -> list[MedicalProfile]:
    """Every medical profile, most recently updated first."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(select(MedicalProfile).order_by(col(MedicalProfile.updated_at).desc()))
        return list(rows.all())


async def profile_record(*, engine: AsyncEngine, profile: MedicalProfile) -> dict[str, Any]:
    """What staff see of a profile, as JSON-able data (the export's medical row)."""
    async with AsyncSession(engine) as db:
        items = (
            await db.exec(
                select(ProfileItem)
                .where(ProfileItem.profile_id == profile.id)
                .order_by(col(ProfileItem.importance).desc(), col(ProfileItem.id))
            )
        ).all()
        questions = (
            await db.exec(
                select(MedicalQuestion)
                .where(MedicalQuestion.profile_id == profile.id)
                .order_by(col(MedicalQuestion.id))
            )
        ).all()
        alerts = (
            await db.exec(
                select(SafetyAlert)
                .where(SafetyAlert.session_id == profile.id)
                .order_by(col(SafetyAlert.at))
            )
        ).all()
    return profile_data(profile, list(items), list(questions), list(alerts))


def profile_data(
    profile: MedicalProfile,
    items: list[ProfileItem],
    questions: list[MedicalQuestion],
    alerts: list[SafetyAlert],
) -> dict[str, Any]:
    """The export row of a medical profile (keys of issue #9)."""

    def entry(item: ProfileItem) -> dict[str, Any]:
        return {
            "name": item.name,
            "name_ko": item.name_ko,
            "text": item.text,
            "first_said": item.first_said,
            "last_said": item.last_said,
            "importance": item.importance,
            "current": item.current,
        }

    own = [i for i in items if i.status != "family"]
    mine = [i for i in own if i.status in ("current", "past") and not i.unsure]

    def demographic(name: str) -> Any:
        found = [
            i for i in own if i.slot == "demographics" and i.name == name and i.status == "current"
        ]
        return json.loads(found[0].value_json) if found else None

    def latest(slot: str) -> dict[str, Any]:
        return {
            i.name: json.loads(i.value_json)
            for i in own
            if i.slot == slot and i.status == "current" and not i.unsure
        }

    age = demographic("age")
    return {
        "session_id": profile.id,
        "chat_id": profile.chat_id,
        "domain": "medical",
        "status": "open",
        "subject": profile.subject,
        "profile": {
            "age": int(age) if age is not None else None,
            "sex": demographic("sex"),
            "conditions": [entry(i) for i in mine if i.slot == "conditions"],
            "symptoms": [entry(i) for i in mine if i.slot == "symptoms"],
            "medications": [entry(i) for i in mine if i.slot == "medications"],
            "denied": [i.name for i in own if i.status == "denied"],
            "family_history": [i.name for i in items if i.status == "family"],
            "vitals": latest("vitals"),
            "labs": latest("labs"),
        },
        "questions": [
            {
                "question": q.question,
                "sources": json.loads(q.sources_json),
                "answered": q.answered,
                "uncertainty": q.uncertainty,
                "at": q.at,
            }
            for q in questions
            if not q.urgent  # the words of a red flag are the alert's text
        ],
        "alerts": [
            {"code": a.code, "at": a.at.isoformat(), "text": _words_of(a, questions)}
            for a in alerts
        ],
        "summary_text": profile.summary_text,
        "created_at": profile.started_at.isoformat(),
        "updated_at": profile.updated_at.isoformat(),
    }


def _words_of(alert: SafetyAlert, questions: list[MedicalQuestion]) -> str | None:
    """The person's words that raised an alert: the red-flag message of the same update, or
    without update ids (the console) the one recorded within seconds of it; None when unsure."""
    if alert.input_id is not None:
        return next(
            (q.question for q in questions if q.urgent and q.input_id == alert.input_id), None
        )
    at = alert.at if alert.at.tzinfo else alert.at.replace(tzinfo=UTC)
    best, gap = None, timedelta(seconds=30)
    for q in questions:
        if not q.urgent:
            continue
        said = datetime.fromisoformat(q.at)
        said = said if said.tzinfo else said.replace(tzinfo=UTC)
        if abs(said - at) <= gap:
            best, gap = q.question, abs(said - at)
    return best
