"""/forget: everything recorded for a chat deleted; its settings (language, domain) kept."""

from __future__ import annotations

from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select

from db.models import (
    CaseEvidence,
    CaseFact,
    CaseMaster,
    CaseMissingField,
    CaseParty,
    CaseSummary,
    ChatOffer,
    ChatPreference,
    ChatSession,
    ChatTurn,
    InboxUpdate,
    MedicalProfile,
    MedicalQuestion,
    ProfileItem,
    SafetyAlert,
    StateTransition,
)
from db.repo.tx import writing

# Tables whose rows belong to one session (all reference chatsession.id).
SESSION_TABLES = (
    CaseFact,
    CaseParty,
    CaseEvidence,
    CaseMissingField,
    CaseSummary,
    StateTransition,
    ChatTurn,
    CaseMaster,
)


async def forget_chat(*, engine: AsyncEngine, chat_id: int) -> list[str]:
    """Delete everything recorded for a chat (sessions and their records, the medical profile,
    its items and questions, inbox, alerts, offer).

    The chat's settings (ChatPreference: its language and the domain it talks to) stay, its
    safety memory cleared: they hold nothing the person said, and without them a chat in the medical assistant would fall
    back to the legal intake's commands ("/profile" unknown) and first-message routing.
    Returns the deleted session and profile ids: the caller deletes their checkpoint threads.
    ResearchResponse is not touched: it holds public services' answers to searches, no chat's.
    """
    async with writing(engine) as db:
        ids = list(
            (await db.exec(select(ChatSession.id).where(ChatSession.chat_id == chat_id))).all()
        )
        if ids:
            for table in SESSION_TABLES:  # children first: foreign keys point at chatsession
                await db.exec(delete(table).where(col(table.session_id).in_(ids)))
            await db.exec(delete(ChatSession).where(col(ChatSession.id).in_(ids)))
        profiles = list(
            (
                await db.exec(select(MedicalProfile.id).where(MedicalProfile.chat_id == chat_id))
            ).all()
        )
        if profiles:
            for table in (ProfileItem, MedicalQuestion):
                await db.exec(delete(table).where(col(table.profile_id).in_(profiles)))
            await db.exec(delete(MedicalProfile).where(col(MedicalProfile.id).in_(profiles)))
            ids += profiles  # a medical thread id too
        await db.exec(delete(InboxUpdate).where(col(InboxUpdate.chat_id) == chat_id))
        await db.exec(delete(SafetyAlert).where(col(SafetyAlert.chat_id) == chat_id))
        await db.exec(delete(ChatOffer).where(col(ChatOffer.chat_id) == chat_id))
        await db.exec(  # the safety memory (term names of the last day) goes with the rest
            update(ChatPreference)
            .where(col(ChatPreference.chat_id) == chat_id)
            .values(safety_json=None)
        )
        await db.commit()
    return ids
