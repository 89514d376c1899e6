"""Exports of the intake records for staff: JSON, CSV and Markdown."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from db import medical_repo, repo

EXPORT_KEYS = (
    "session_id",
    "chat_id",
    "domain",
    "status",
    "case_type",
    "sub_case_type",
    "alerts",
    "urgent",
    "deadlines",
    "facts",
    "facts_detail",
    "missing_fields",
    "summary_text",
    "structured",
    "created_at",
    "completed_at",
    "llm_prompt_tokens",  # what the model's calls of the intake cost (LLM mode), else 0
    "llm_completion_tokens",
)
# What a medical row adds (a legal row has them empty): whom it is about, the remembered
# profile and the questions asked with their sources (db/medical_repo.profile_data).
MEDICAL_KEYS = ("subject", "profile", "questions")
# What a legal row adds (a medical row has them empty): values said for a recorded field that
# were not applied (to check), what the person added after the summary, and the lawyer's memo
# (chronology, money, parties, steps, evidence; graphs/legal/memo.py). A legal row's
# `questions` are the questions the person asked back, for the lawyer to answer.
LEGAL_KEYS = ("asides", "addenda", "memo")


async def collect(
    *,
    engine: AsyncEngine,
    include_open: bool,
    deadlines_of: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
    medical_summary: Callable[[Any, list[dict[str, Any]]], Awaitable[str | None]] | None = None,
    intake_state: Callable[[str], Awaitable[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Completed intakes (and open and cancelled ones, with their missing fields, when
    `include_open`) and every medical profile, safety alerts first, then those with a
    deadline within 30 days.

    `deadlines_of` works out a record's deadlines (due dates as of today) from its facts;
    `medical_summary` writes a profile's pre-visit summary as of now; `intake_state` reads an
    intake's state (its questions back, asides and addenda, also while it is open).
    """
    statuses = ["completed", "open", "cancelled"] if include_open else ["completed"]
    sessions = await repo.list_sessions(engine=engine, statuses=statuses)
    alerts = await repo.alerts_for(engine=engine, session_ids=[s.id for s in sessions])
    rows = []
    for session in sessions:
        record = await repo.case_record(engine=engine, session=session)
        record["alerts"] = alerts.get(session.id, [])
        state = await intake_state(session.id) if intake_state is not None else {}
        said = state or (record["structured"] or {})
        # the deadlines its facts give and those the person told (its memo)
        record["deadlines"] = (
            deadlines_of(record | {"memo": said.get("memo")}) if deadlines_of else []
        )
        # urgent: a deadline close by, or a safety alert raised in the conversation
        record["urgent"] = any(d["urgent"] for d in record["deadlines"]) or bool(record["alerts"])
        rows.append(
            {key: record[key] for key in EXPORT_KEYS}
            | {"evidence_files": record["evidence_files"]}
            | dict.fromkeys(MEDICAL_KEYS)
            | {"questions": [dict(q) for q in said.get("questions") or []]}
            | {key: [dict(v) for v in said.get(key) or []] for key in LEGAL_KEYS}
        )
    for profile in await medical_repo.list_profiles(engine=engine):
        record = await medical_repo.profile_record(engine=engine, profile=profile)
        if medical_summary is not None:
            record["summary_text"] = await medical_summary(profile, record["alerts"])
        rows.append(
            {key: record.get(key) for key in EXPORT_KEYS}
            | {"evidence_files": [], "facts": {}, "facts_detail": {}, "missing_fields": []}
            | {"urgent": False, "deadlines": [], "completed_at": None}
            | {key: record[key] for key in MEDICAL_KEYS}
            | dict.fromkeys(LEGAL_KEYS)
        )
    # Sessions with a safety alert first: staff look at them before anything else; then
    # those with a deadline close by.
    rows.sort(key=lambda row: (not row["alerts"], not row["urgent"]))
    return rows


def render(rows: list[dict[str, Any]], fmt: str) -> str:
    """Rows as json, csv or md text."""
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False, indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(
            out, fieldnames=[*EXPORT_KEYS, "evidence_files", *MEDICAL_KEYS, *LEGAL_KEYS]
        )
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
                    for k, v in row.items()
                }
            )
        return out.getvalue()
    if fmt == "md":
        parts = []
        for row in rows:
            title = "medical" if row["domain"] == "medical" else _case_title(row)
            parts.append(f"## {title} · {row['status']} · chat {row['chat_id']}")
            parts.append(
                f"- session: `{row['session_id']}`  created: {row['created_at']}"
                f"  completed: {row['completed_at'] or '-'}"
            )
            if row["alerts"]:
                codes = ", ".join(f"{a['code']} ({a['at'][:16]})" for a in row["alerts"])
                parts.append(f"- ⚠️ safety alerts: {codes}")
            soon = ", ".join(
                f"{d['label']} {d['due']} ({d['days_left']}d)"
                for d in row["deadlines"]
                if d["urgent"]
            )
            if soon:
                parts.append(f"- ⏰ deadline soon: {soon}")
            if row["missing_fields"]:
                parts.append(f"- missing: {', '.join(row['missing_fields'])}")
            parts.append("")
            shown = row["profile"] if row["domain"] == "medical" else row["facts"]
            parts.append(
                row["summary_text"]
                or "```\n" + json.dumps(shown, ensure_ascii=False, indent=2) + "\n```"
            )
            parts.append("")
        return "\n".join(parts)
    raise ValueError(f"unknown export format {fmt!r}")


def _case_title(row: dict[str, Any]) -> str:
    """The sub-type's label with its code (`대여금 (LOAN)`) once summarised, else the code."""
    code = row["sub_case_type"] or "-"
    label = (row.get("structured") or {}).get("sub_case_label")
    return f"{label} ({code})" if label and label != code else code
