"""What staff, /summary and the export read of a session's case: its summary and its whole
record as JSON-able data.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import CaseEvidence, CaseFact, CaseMaster, CaseMissingField, CaseSummary, ChatSession


async def get_summary(*, engine: AsyncEngine, session_id: str) -> CaseSummary | None:
    """The session's summary, if written."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(select(CaseSummary).where(CaseSummary.session_id == session_id))
        return rows.first()


async def case_record(*, engine: AsyncEngine, session: ChatSession) -> dict[str, Any]:
    """Everything staff see of one session, as JSON-able data (the export's row)."""
    async with AsyncSession(engine) as db:
        case = (
            await db.exec(select(CaseMaster).where(CaseMaster.session_id == session.id))
        ).first()
        facts = (await db.exec(select(CaseFact).where(CaseFact.session_id == session.id))).all()
        missing = (
            await db.exec(select(CaseMissingField).where(CaseMissingField.session_id == session.id))
        ).all()
        evidence = (
            await db.exec(select(CaseEvidence).where(CaseEvidence.session_id == session.id))
        ).all()
        summary = (
            await db.exec(select(CaseSummary).where(CaseSummary.session_id == session.id))
        ).first()
    return {
        "session_id": session.id,
        "chat_id": session.chat_id,
        "domain": session.domain,
        "status": session.status,
        "case_type": case.case_type if case else None,
        "sub_case_type": case.sub_case_type if case else None,
        "facts": {f.key: json.loads(f.value_json) for f in facts},
        "facts_detail": {
            f.key: {
                "value": json.loads(f.value_json),
                "quote": f.quote,
                "said_at": f.said_at,
                "confirmed": bool(f.confirmed),
            }
            for f in facts
        },
        "missing_fields": sorted(m.key for m in missing),
        "evidence_files": [
            {"kind": e.kind, "file_id": e.file_id, "file_name": e.file_name, "caption": e.caption}
            for e in evidence
        ],
        "completion_rate": round(session.completion_rate, 3),
        "llm_prompt_tokens": session.llm_prompt_tokens,
        "llm_completion_tokens": session.llm_completion_tokens,
        "summary_text": summary.summary_text if summary else None,
        "structured": json.loads(summary.structured_json) if summary else None,
        "created_at": session.started_at.isoformat(),
        "completed_at": session.ended_at.isoformat() if session.ended_at else None,
    }
