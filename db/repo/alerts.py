"""Safety alerts: the rules that fired on a chat's messages, recorded once per message and read
back per session.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import SafetyAlert
from db.repo.tx import writing


async def add_alerts(
    *,
    engine: AsyncEngine,
    chat_id: int,
    session_id: str | None,
    input_id: str | None,
    alerts: list[tuple[str, str]],
) -> bool:
    """Record the safety rules (code, category) that fired on one message of the chat.

    False, writing nothing, when that message (by its input id) was recorded already.
    """
    async with writing(engine) as db:
        if input_id is not None:
            seen = await db.exec(
                select(SafetyAlert.id).where(
                    SafetyAlert.chat_id == chat_id, SafetyAlert.input_id == input_id
                )
            )
            if seen.first() is not None:
                return False
        for code, category in alerts:
            db.add(
                SafetyAlert(
                    chat_id=chat_id,
                    session_id=session_id,
                    code=code,
                    category=category,
                    input_id=input_id,
                )
            )
        await db.commit()
    return True


async def alerts_for(*, engine: AsyncEngine, session_ids: Iterable[str]) -> dict[str, list[dict]]:
    """The safety alerts of each session (code, category, ISO time), oldest first."""
    ids = list(session_ids)
    if not ids:
        return {}
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(SafetyAlert)
            .where(col(SafetyAlert.session_id).in_(ids))
            .order_by(col(SafetyAlert.at))
        )
        found: dict[str, list[dict]] = {}
        for alert in rows.all():
            found.setdefault(alert.session_id or "", []).append(
                {"code": alert.code, "category": alert.category, "at": alert.at.isoformat()}
            )
        return found
