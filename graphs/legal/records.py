"""What the engine needs from a legal intake's state: records snapshot, status, current prompt."""

from __future__ import annotations

from datetime import date
from typing import Any

from graphs.legal import prompts
from graphs.legal.fields import missing_fields, percent, progress
from graphs.legal.state import Message
from graphs.legal.summary import build_summary
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge


def case_snapshot(kn: Knowledge, values: dict[str, Any], node: str) -> dict[str, Any]:
    """Plain data the records are written from (read by db.repo.CaseSnapshot.of)."""
    sub_type = values.get("sub_type")
    facts = dict(values.get("facts", {}))
    unknown = list(values.get("unknown", []))
    answered, total = progress(kn.k2, sub_type, facts) if sub_type else (0, 0)
    missing = missing_fields(kn.k2, sub_type, facts) if sub_type else []
    stored = {**facts, **{key: None for key in unknown if key not in facts}}
    return {
        "state": node,
        "status": values.get("status", "open"),
        "completion_rate": answered / total if total else 0.0,
        "case_type": values.get("case_type"),
        "sub_type": sub_type,
        "confidence": values.get("confidence", 0.0),
        "description": values.get("description", ""),
        "emotions": values.get("emotions", []),
        "facts": stored,
        "unknown": unknown,
        "missing": missing,
        "counterparty": {
            "name": facts.get("counterparty"),
            "party_type": facts.get("counterparty_type"),
        },
        "evidence_files": values.get("evidence_files", []),
        "summary": values.get("summary"),
        "facts_detail": values.get("provenance", {}),
    }


def status_text(kn: Knowledge, values: dict[str, Any], lang: str) -> str:
    """/status: progress, the case type and what is still missing."""
    sub_type = values.get("sub_type")
    if not sub_type:
        return kn.message("status_no_case", lang)
    facts = values.get("facts", {})
    answered, total = progress(kn.k2, sub_type, facts)
    main, sub = prompts.case_labels(kn, sub_type, lang)
    missing = missing_fields(kn.k2, sub_type, facts)
    listed = ", ".join(kn.k2.field(sub_type, k).label.get(lang) for k in missing)
    return kn.message(
        "status",
        lang,
        percent=percent(answered, total),
        case=f"{main} · {sub}",
        missing=listed or kn.message("missing_none", lang),
    )


def current_prompt(
    kn: Knowledge, values: dict[str, Any], node: str, field: str | None, lang: str
) -> Message | None:
    """The question the intake waits on, rendered afresh in `lang` (after /lang, bad input, ...)."""
    sub_type = values.get("sub_type")
    if node == "INIT":
        return prompts.say(kn, lang, "ask_description")
    if node == "CONFIRM_CASE_TYPE":
        choices = prompts.case_type_choices(
            kn, lang, candidates=values.get("candidates") or [], browse=values.get("browse")
        )
        return prompts.message(kn.message("choose_case_type", lang), choices)
    if node == "FACT_COLLECTION" and sub_type and values.get("proposed"):
        return prompts.confirm_changes(
            kn, sub_type, values["proposed"], lang, values.get("memo", [])
        )
    pending = values.get("pending")
    if node == "FACT_COLLECTION" and sub_type and pending and pending["field"] == field:
        if "options" in pending:  # two days the words fit ("last Monday"): which one
            return prompts.choose_date(kn, sub_type, pending, lang)
        return prompts.confirm_question(kn, sub_type, pending, lang)
    if node in ("FACT_COLLECTION", "RE_QUESTION") and sub_type and field:
        return prompts.question_for(kn, kn.k2.field(sub_type, field), values, field, lang)
    return None


def draft_text(kb: KnowledgeBase, values: dict[str, Any], lang: str, today: date) -> str | None:
    """/summary mid-intake: the summary of what is known so far, once the case type is."""
    if not values.get("sub_type") or values.get("status") == "completed":
        return None
    return build_summary(kb, dict(values), lang, today=today)["text"]
