"""The statements of a turn's one read (`chat_view`) and one write (`write_turn`: the chat, the
case, the medical profile), built once per dialect and run with parameters.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, bindparam, delete, update
from sqlalchemy.dialects import postgresql, sqlite
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
    MedicalProfile,
    MedicalQuestion,
    ProfileItem,
    StateTransition,
)

SESSION_COLUMNS = [c for c in ChatSession.__table__.columns]


@dataclass(frozen=True)
class TurnStatements:
    """The statements of a turn's read and write, built once per dialect and run with
    parameters: building a statement costs more than running it on SQLite."""

    view: Any
    lang: Any
    safety: Any
    offer: Any
    close: Any
    session: Any
    transition: Any
    master: Any
    facts: Any
    drop_facts: Any
    clear_missing: Any
    missing: Any
    party: Any
    evidence: Any
    summary: Any
    turn: Any
    tokens: Any  # what the model's calls cost, added to the session's counts
    profile: Any  # the medical profile's row, and its items and questions (replaced whole)
    profile_summary: Any
    clear_items: Any
    clear_questions: Any
    items: Any
    questions: Any


def _upsert(dialect: Any, table: Any, keys: list[str], updated: list[str]) -> Any:
    """INSERT ... ON CONFLICT (keys) DO UPDATE SET each of `updated` to the inserted value."""
    stmt = dialect.insert(table)
    return stmt.on_conflict_do_update(
        index_elements=keys, set_={name: getattr(stmt.excluded, name) for name in updated}
    )


@functools.cache
def turn_statements(dialect_name: str) -> TurnStatements:
    """The statements of a dialect ("postgresql", else SQLite's), built on first use."""
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    chat = bindparam("chat_id", type_=BigInteger)
    anchor = select(chat.label("chat_id")).subquery()
    latest = (
        select(ChatSession.id)
        .where(ChatSession.chat_id == chat)
        .order_by(col(ChatSession.started_at).desc())
        .limit(1)
        .scalar_subquery()
    )
    view = (
        select(
            ChatPreference.lang,
            ChatPreference.domain,
            ChatPreference.safety_json,
            ChatPreference.lang_chosen,
            ChatOffer.user_id,
            ChatOffer.choices_json,
            *SESSION_COLUMNS,
        )
        .select_from(anchor)
        .outerjoin(ChatPreference, ChatPreference.chat_id == anchor.c.chat_id)
        .outerjoin(ChatOffer, ChatOffer.chat_id == anchor.c.chat_id)
        .outerjoin(ChatSession, ChatSession.id == latest)
    )
    session_row = update(ChatSession).where(col(ChatSession.id) == bindparam("b_id"))
    profile_row = update(MedicalProfile).where(col(MedicalProfile.id) == bindparam("b_id"))
    fact_columns = ["value_json", "status", "quote", "said_at", "confirmed", "updated_at"]
    return TurnStatements(
        view=view,
        lang=_upsert(dialect, ChatPreference, ["chat_id"], ["lang"]),
        safety=_upsert(dialect, ChatPreference, ["chat_id"], ["safety_json"]),
        offer=_upsert(dialect, ChatOffer, ["chat_id"], ["user_id", "choices_json", "offered_at"]),
        close=session_row.where(col(ChatSession.status) == "open").values(
            status=bindparam("b_status"), ended_at=bindparam("b_at")
        ),
        session=session_row.values(
            current_state=bindparam("b_state"),
            completion_rate=bindparam("b_rate"),
            updated_at=bindparam("b_at"),
        ),
        tokens=session_row.values(
            llm_prompt_tokens=col(ChatSession.llm_prompt_tokens) + bindparam("b_prompt"),
            llm_completion_tokens=col(ChatSession.llm_completion_tokens)
            + bindparam("b_completion"),
        ),
        transition=dialect.insert(StateTransition),
        master=update(CaseMaster)
        .where(col(CaseMaster.session_id) == bindparam("b_id"))
        .values(
            {
                name: bindparam(f"b_{name}")
                for name in ("case_type", "sub_case_type", "confidence", "description")
            }
            | {"emotions_json": bindparam("b_emotions_json"), "updated_at": bindparam("b_at")}
        ),
        facts=_upsert(dialect, CaseFact, ["session_id", "key"], fact_columns),
        drop_facts=delete(CaseFact).where(
            col(CaseFact.session_id) == bindparam("b_id"),
            col(CaseFact.key).in_(bindparam("b_keys", expanding=True)),
        ),
        clear_missing=delete(CaseMissingField).where(
            col(CaseMissingField.session_id) == bindparam("b_id")
        ),
        missing=dialect.insert(CaseMissingField),
        party=_upsert(dialect, CaseParty, ["session_id", "role"], ["name", "party_type"]),
        evidence=dialect.insert(CaseEvidence).on_conflict_do_nothing(
            index_elements=["session_id", "file_unique_id"]
        ),
        summary=_upsert(dialect, CaseSummary, ["session_id"], ["summary_text", "structured_json"]),
        turn=dialect.insert(ChatTurn).on_conflict_do_nothing(
            index_elements=["session_id", "input_id"]
        ),
        profile=profile_row.values(subject=bindparam("b_subject"), updated_at=bindparam("b_at")),
        profile_summary=profile_row.values(summary_text=bindparam("b_summary")),
        clear_items=delete(ProfileItem).where(col(ProfileItem.profile_id) == bindparam("b_id")),
        clear_questions=delete(MedicalQuestion).where(
            col(MedicalQuestion.profile_id) == bindparam("b_id")
        ),
        items=dialect.insert(ProfileItem),
        questions=dialect.insert(MedicalQuestion),
    )
