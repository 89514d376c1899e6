"""The staff summary in the sub-type's K4 format, with K3 legal information."""

from __future__ import annotations

from datetime import date
from typing import Any

from graphs.legal import deadlines as legal_deadlines
from graphs.legal import memo as legal_memo
from graphs.legal.details import Detail, detail_line
from graphs.legal.fields import missing_fields, progress
from graphs.legal.prompts import case_labels, format_value
from graphs.legal.years import assumed_years
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge

INFO_KEYS = {
    "limitation": "info_limitation",
    "venue": "info_venue",
    "first_steps": "info_first_steps",
    "typical_evidence": "info_typical_evidence",
    "notes": "info_notes",
}
DESCRIPTION_PREVIEW = 600


def build_summary(
    kb: KnowledgeBase,
    state: dict[str, Any],
    lang: str,
    *,
    today: date,
    narrative: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Summary text and structured data for a finished intake, in the K4 format with K3
    information and the deadlines worked out from its dates as of `today`. `narrative`: the
    sentences of the model's checked account (graphs/legal/llm_summary.py), shown first in the
    format's narrative section; None: the rules' narrative, the person's own account."""
    kn = kb.knowledge
    sub_type = state["sub_type"]
    facts: dict[str, Any] = state.get("facts", {})
    fmt = kb.summary_format(sub_type)
    info = kb.legal_info(sub_type)
    main_label, sub_label = case_labels(kn, sub_type, lang)
    unknown = state.get("unknown", [])
    missing = missing_fields(kn.k2, sub_type, facts)
    answered, total = progress(kn.k2, sub_type, facts)

    unclear: dict[str, str] = state.get("unclear", {})
    approx = set(state.get("approx", []))
    provenance: dict[str, Any] = state.get("provenance", {})

    def shown(key: str, value: Any) -> str:
        spec = kn.k2.field(sub_type, key)
        if value is None and key in unclear:  # their own words, for staff to check
            return f"{kn.message('summary_unclear', lang)}: '{unclear[key]}'"
        text = format_value(kn, spec, value, lang)
        return kn.message("summary_approx", lang, value=text) if key in approx else text

    sections = []
    for section in fmt.sections:
        items = []
        for key in section.fields:
            if key not in facts and key not in missing:
                continue  # not required for this case and not given
            spec = kn.k2.field(sub_type, key)
            value = facts.get(key)
            items.append(
                {
                    "key": key,
                    "label": spec.label.get(lang),
                    "value": value,
                    "display": shown(key, value),
                }
            )
        if items:
            sections.append({"title": section.title.get(lang), "items": items})

    legal_info: dict[str, Any] = {}
    role = facts.get("party_role")
    for part in fmt.info:
        value = getattr(info, part)
        if part == "first_steps" and role in info.role_steps:
            value = info.role_steps[role]  # the steps for the person's own side
        legal_info[part] = (
            [t.get(lang) for t in value] if isinstance(value, list) else value.get(lang)
        )

    memo = list(state.get("memo", []))
    links = legal_memo.links(kn, sub_type, facts, memo)
    # an item is confirmed with the key field that points at it
    memo = legal_memo.confirmed(
        memo, [i for k, i in links.items() if (provenance.get(k) or {}).get("confirmed")]
    )
    deadlines = legal_deadlines.listed(kn, sub_type, facts, lang, today, memo)
    emotions = [e["kind"] for e in state.get("emotions", [])]
    corrections = [
        {"field": c["field"], "old": c["old"], "new": c["new"]}
        for c in state.get("corrections", [])
    ]
    structured = {
        "format": sub_type if sub_type in kn.k4.formats else "default",
        "case_type": state["case_type"],
        "case_label": main_label,
        "sub_case_type": sub_type,
        "sub_case_label": sub_label,
        # Taken as told (no listed type fitted): staff classify it.
        "needs_classification": kn.k1.sub_type(sub_type)[1].free_form,
        "confidence": round(state.get("confidence", 0.0), 3),
        "facts": {k: v for k, v in facts.items()},
        "facts_detail": {
            key: {
                "value": value,
                "quote": (provenance.get(key) or {}).get("quote"),
                "at": (provenance.get(key) or {}).get("at"),
                "confirmed": bool((provenance.get(key) or {}).get("confirmed")),
                "approximate": key in approx,
                **({"unclear_words": unclear[key]} if key in unclear else {}),
                **({"item": links[key]} if key in links else {}),
            }
            for key, value in facts.items()
            if key != "action_description"
        },
        "details": [dict(d) for d in state.get("details", [])],
        # The lawyer's memo: every item told, with its words (graphs/legal/memo.py).
        "memo": [dict(i) for i in memo],
        "ledger": legal_memo.ledger(memo),
        "questions": [dict(q) for q in state.get("questions", [])],
        "amendments": [dict(a) for a in state.get("amendments", [])],
        # Values said for a recorded field that were not applied, and what was added after the
        # summary: the lawyer reads them beside the fields, in the person's words.
        "asides": [dict(a) for a in state.get("asides", [])],
        "addenda": [dict(a) for a in state.get("addenda", [])],
        "unknown_fields": list(unknown),
        "missing_fields": missing,
        "completion_rate": round(answered / total, 3) if total else 0.0,
        "sections": sections,
        "emotions": emotions,
        "corrections": corrections,
        # the case type changed at the person's word mid-intake: {"old", "new", "quote", "at"}
        "type_changes": [dict(c) for c in state.get("type_changes", [])],
        "evidence_files": [
            {k: f.get(k) for k in ("kind", "file_id", "file_name", "caption", "at")}
            for f in state.get("evidence_files", [])
        ],
        "legal_info": legal_info,
        "deadlines": [d.as_dict() | {"days_left": d.days_left(today)} for d in deadlines],
        "urgent": legal_deadlines.is_urgent(deadlines, today),
        "language": lang,
        # Who wrote the account in brief: the model (its sentences checked against the facts,
        # each with the fields it rests on) or the rules (the person's own account alone).
        "narrative_by": "model" if narrative else "rules",
        "narrative": [dict(n) for n in narrative or []],
    }
    return {
        "text": render_text(kn, state, structured, lang, fmt.title.get(lang)),
        "structured": structured,
    }


def render_text(
    kn: Knowledge, state: dict[str, Any], data: dict[str, Any], lang: str, title: str
) -> str:
    """The summary as plain text for staff and for the person."""
    msg = kn.message
    lines = [f"{msg('summary_amended', lang)}"] if data["amendments"] else []
    soon = [d for d in data["deadlines"] if 0 <= d["days_left"] <= legal_deadlines.URGENT_DAYS]
    lines += [
        msg(
            "summary_urgent", lang, label=d["label"], due=_due(kn, d, lang), left=_left(kn, d, lang)
        )
        for d in soon[:1]
    ]
    lines += [
        f"📋 {title}",
        f"■ {msg('summary_case', lang)}: {data['case_label']} · {data['sub_case_label']}",
    ]
    description = (
        (state.get("facts") or {}).get("action_description") or state.get("description") or ""
    ).strip()
    shown_in_sections = any(
        i["key"] == "action_description" for sec in data["sections"] for i in sec["items"]
    )
    brief = _narrative_lines(kn, data, lang)
    if brief and not shown_in_sections:
        lines += [f"■ {brief[0]}", *brief[1:]]
    if description and not shown_in_sections:
        preview = (
            description
            if len(description) <= DESCRIPTION_PREVIEW
            else description[:DESCRIPTION_PREVIEW] + "…"
        )
        lines.append(f"■ {msg('summary_description', lang)}: {preview}")
    for section in data["sections"]:
        lines.append("")
        lines.append(f"[{section['title']}]")
        if brief and any(i["key"] == "action_description" for i in section["items"]):
            lines += [f"· {brief[0]}", *brief[1:]]
        lines += [f"· {item['label']}: {item['display']}" for item in section["items"]]
    if data["details"]:
        lines.append("")
        lines.append(f"[{msg('summary_details', lang)}]")
        for d in data["details"]:
            lines.append("· " + detail_line(Detail(d["kind"], d["value"], d["quote"]), lang, kn))
    lines += memo_lines(kn, data, lang)
    if data["deadlines"]:
        lines.append("")
        lines.append(f"[{msg('summary_deadlines', lang)}]")
        lines += [
            "· "
            + msg(
                "deadline_line",
                lang,
                label=d["label"],
                due=_due(kn, d, lang),
                left=_left(kn, d, lang),
                rule=d["rule"],
            )
            for d in data["deadlines"]
        ]
    lines.append("")
    if data["questions"]:
        lines.append(f"■ {msg('summary_questions', lang)}:")
        lines += [f"  · {q['text']}" for q in data["questions"]]
    if data["asides"]:
        lines.append(f"■ {msg('summary_asides', lang)}:")
        for a in data["asides"]:
            if legal_memo.is_item(a["field"]):
                label = legal_memo.item_label(kn, data.get("memo") or [], a["field"], lang)
                was, said = (legal_memo.shown(a[k], lang) for k in ("recorded", "value"))
                lines.append(f"  · {label}: {was} ↔ {said} «{a.get('quote', '')}»")
                continue
            spec = kn.k2.field(data["sub_case_type"], a["field"])
            lines.append(
                f"  · {spec.label.get(lang)}: {format_value(kn, spec, a['recorded'], lang)}"
                f" ↔ {format_value(kn, spec, a['value'], lang)} «{a.get('quote', '')}»"
            )
    if data["addenda"]:
        lines.append(f"■ {msg('summary_addenda', lang)}:")
        lines += [f"  · {a['text']}" for a in data["addenda"]]
    if data["evidence_files"]:
        names = ", ".join(f.get("file_name") or f["kind"] for f in data["evidence_files"])
        lines.append(f"■ {msg('summary_evidence_files', lang)}: {names}")
    if data["emotions"]:
        feelings = ", ".join(msg(f"emotion_{kind}", lang) for kind in data["emotions"])
        lines.append(f"■ {msg('summary_emotions', lang)}: {feelings}")
    if data["missing_fields"]:
        labels = ", ".join(
            kn.k2.field(data["sub_case_type"], k).label.get(lang) for k in data["missing_fields"]
        )
        lines.append(f"■ {msg('summary_missing', lang)}: {labels}")
    for c in data.get("type_changes", []):
        old, new = (case_labels(kn, c[k], lang)[1] for k in ("old", "new"))
        lines.append(f"■ {msg('summary_type_changed', lang)}: {old} → {new} «{c['quote']}»")
    if data["corrections"]:
        lines.append(f"■ {msg('summary_corrections', lang)}:")
        for c in data["corrections"]:
            spec = kn.k2.field(data["sub_case_type"], c["field"])
            old, new = (
                format_value(kn, spec, c["old"], lang),
                format_value(kn, spec, c["new"], lang),
            )
            lines.append(f"  · {spec.label.get(lang)}: {old} → {new}")
    if data["legal_info"]:
        lines.append("")
        lines.append(f"■ {msg('summary_info', lang)}")
        for part, value in data["legal_info"].items():
            label = msg(INFO_KEYS[part], lang)
            if isinstance(value, list):
                lines.append(f"· {label}:")
                lines += [f"  - {v}" for v in value]
            else:
                lines.append(f"· {label}: {value}")
    lines.append("")
    lines.append(f"※ {kn.k3.disclaimer.get(lang)}")
    return "\n".join(lines)


def memo_lines(kn: Knowledge, data: dict[str, Any], lang: str) -> list[str]:
    """The memo's sections for staff: the chronology in date order, the money with what each
    amount is (and the sums per kind where one was told more than once or beside another), the
    parties, the steps taken, the evidence mentioned; each item with the person's words."""
    lex, memo = kn.memo, data.get("memo") or []
    words = {
        "money": {k: w.label.get(lang) for k, w in lex.money_roles.items()},
        "parties": {k: w.label.get(lang) for k, w in lex.party_roles.items()},
        "steps": {k: w.label.get(lang) for k, w in lex.steps.items()},
    }
    evidence = kn.k2.fields.get("evidence_type")
    kinds = {o.value: o.label.get(lang) for o in evidence.options} if evidence else {}
    planned = lex.titles["planned"].get(lang)
    mark = f" ✓{lex.titles['confirmed'].get(lang)}"
    assumed = lex.titles["year_assumed"].get(lang)
    ours = assumed_years(memo)  # dates told without a year, in a story of earlier years

    def money(amount: int) -> str:
        return f"{amount:,}원" if lang == "ko" else f"KRW {amount:,}"

    def line(item: dict[str, Any]) -> str:
        section = item["section"]
        if section == "chronology":
            head = item["date"] or lex.titles["undated"].get(lang)
            head += f" ({planned})" if item.get("planned") else ""
            head += f" ({assumed})" if item.get("id") in ours else ""
        elif section == "money":
            role = words["money"].get(item["role"]) or (
                f"'{item['what']}'" if item.get("what") else "?"  # the person's words for it
            )
            head = f"{money(item['amount'])}"
            head += f" ({lex.titles['monthly'].get(lang)})" if item.get("monthly") else ""
            head += f" — {role}"
            head += f" ({lex.titles['in_man'].get(lang)})" if item.get("in_man") else ""
            head += f" · {item['party']}" if item.get("party") else ""
            head += f" ({planned})" if item.get("planned") else ""
        elif section == "parties":
            role = words["parties"].get(item.get("role") or "")
            head = item["name"] + (f" ({role})" if role else "")
        elif section == "steps":
            head = words["steps"].get(item["body"], item["body"])
            head += f" {item['date']}" if item.get("date") else ""
        elif section in legal_memo.NOTED:
            head = legal_memo.item_brief(kn, item, lang) or "·"
        else:
            head = kinds.get(item.get("kind"), str(item.get("kind")))
        done = mark if item.get("confirmed") else ""
        return f"· {head} «{item['quote']}» [{item['id']}]{done}"

    lines: list[str] = []
    for section in legal_memo.SECTIONS:
        items = legal_memo.ordered(memo, section)
        if not items:
            continue
        lines += ["", f"[{lex.titles[section].get(lang)}]", *(line(i) for i in items)]
        sums = data.get("ledger") or {}
        if section == "money" and sums:
            told = [f"{words['money'].get(k, k)} {money(v)}" for k, v in sums.items()]
            lines.append("  Σ " + " · ".join(told))
    return lines


def still_true(
    narrative: list[dict[str, Any]] | None, before: dict[str, Any], after: dict[str, Any]
) -> list[dict[str, Any]] | None:
    """The sentences of a checked account that still hold after a change to the record (a
    confirmed correction after the summary): those whose fields and memo items did not change.
    None when none is left (the rules' narrative stands)."""
    if not narrative:
        return None
    old, new = before.get("facts") or {}, after.get("facts") or {}
    items = {i["id"]: i for i in before.get("memo") or []}
    now = {i["id"]: i for i in after.get("memo") or []}
    kept = [
        sentence
        for sentence in narrative
        if all(old.get(key) == new.get(key) for key in sentence.get("fields", []))
        and all(items.get(i) == now.get(i) for i in sentence.get("items", []))
    ]
    return kept or None


def _narrative_lines(kn: Knowledge, data: dict[str, Any], lang: str) -> list[str]:
    """The model's account in brief and the note that says so; none for the rules'."""
    if data["narrative_by"] != "model":
        return []
    told = " ".join(n["text"] for n in data["narrative"])
    return [
        f"{kn.message('summary_narrative', lang)}: {told}",
        f"  {kn.message('summary_narrative_by_model', lang)}",
    ]


def _due(kn: Knowledge, deadline: dict[str, Any], lang: str) -> str:
    """A deadline's date, marked approximate when its start date was."""
    due = deadline["due"]
    return kn.message("deadline_approx", lang, due=due) if deadline["approximate"] else due


def _left(kn: Knowledge, deadline: dict[str, Any], lang: str) -> str:
    """How far off a deadline is: days left, today, or how long ago it passed."""
    days = deadline["days_left"]
    if days > 0:
        return kn.message("deadline_left", lang, days=days)
    if days == 0:
        return kn.message("deadline_today", lang)
    return kn.message("deadline_passed", lang, days=-days)
