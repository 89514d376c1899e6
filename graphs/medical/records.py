"""What the medical state gives the person and staff: /profile, the pre-visit summary, the
items as the records store them, and the recent words a red flag can build up from."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from graphs.medical import memory
from graphs.medical.render import label, relation_label, said_text, with_details
from knowledge.loader import Knowledge
from knowledge.medical_lexicon import load_medical_lexicon

ALLERGY_TITLE = ("알레르기", "Allergies")
SLOT_TITLES = {
    "demographics": ("기본 정보", "About"),
    "conditions": ("질환", "Conditions"),
    "symptoms": ("증상", "Symptoms"),
    "medications": ("약", "Medicines"),
    "vitals": ("측정값", "Measurements"),
    "labs": ("검사 결과", "Test results"),
}


def stored_items(profile: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    """The profile's items as the records store them: each with whether it is current now."""
    return [{**i, "current": memory.is_current(i, now)} for i in profile.get("items", [])]


def _day(iso: str) -> str:
    return iso[:10]


def profile_text(kn: Knowledge, profile: dict[str, Any], lang: str, now: datetime) -> str | None:
    """/profile: every item by slot, with the date last said and how current it is."""
    items = profile.get("items", [])
    if not items:
        return None
    ko = lang == "ko"
    lines = [kn.message("med_profile_header", lang)]
    if profile.get("subject", "self") != "self":
        lines.append(
            kn.message("med_profile_for", lang, who=relation_label(profile["subject"], lang))
        )
    for slot, (title_ko, title_en) in SLOT_TITLES.items():
        rows = [i for i in items if i["slot"] == slot and i["name"] not in memory.PAIRS.values()]
        if not rows:
            continue
        lines.append(f"\n[{title_ko if ko else title_en}]")
        for item in sorted(rows, key=lambda i: -memory.weight(i, now)):
            tags = []
            if item["status"] == "past":
                tags.append(kn.message("med_profile_past", lang))
            elif item["status"] == "denied":
                tags.append(kn.message("med_profile_denied", lang))
            elif item["status"] == "family":
                tags.append(kn.message("med_profile_family", lang))
            elif item["unsure"] and not item.get("confirmed"):
                tags.append(kn.message("med_profile_unsure", lang))
            elif not memory.is_current(item, now):
                tags.append(kn.message("med_profile_stale", lang))
            shown = item_label(item, profile, lang)
            tag = f" - {', '.join(tags)}" if tags else ""
            lines.append(f"• {shown} ({_day(item['last_said'])}){tag}")
    return "\n".join(lines)


def item_label(item: dict[str, Any], profile: dict[str, Any], lang: str) -> str:
    """An item's name as /profile shows it ("혈압 150/95", "메트포르민")."""
    if item["slot"] in ("vitals", "labs", "demographics"):
        return said_text(item, profile, lang)
    return with_details(label(item, lang), item.get("details") or [])


REMOVE = "m:del:"  # a delete button's data: this, then the item's key


def removable(profile: dict[str, Any], lang: str) -> list[dict[str, str]]:
    """A delete button for each item (a blood pressure pair is one)."""
    buttons = []
    for item in profile.get("items", []):
        if item["name"] in memory.PAIRS.values() and item["slot"] == "vitals":
            continue
        shown = item_label(item, profile, lang)
        buttons.append({"label": f"✕ {shown}"[:60], "data": f"{REMOVE}{item['key']}"[:64]})
    return buttons[:20]


def profile_lines(
    profile: dict[str, Any], lang: str, now: datetime, *, allergies: bool = False
) -> list[str]:
    """One line per slot of what the profile holds (current items, then past ones), as the
    summary lists them; `allergies`: the allergies on a line of their own (a handover)."""
    ko = lang == "ko"
    lines = []
    for slot, (title_ko, title_en) in SLOT_TITLES.items():
        rows = [
            i
            for i in profile.get("items", [])
            if i["slot"] == slot
            and i["name"] not in memory.PAIRS.values()
            and not (i["unsure"] and not i.get("confirmed"))
        ]
        groups = [((title_ko, title_en), rows)]
        if allergies and slot == "conditions":
            allergic = [i for i in rows if _is_allergy(i)]
            groups = [
                ((title_ko, title_en), [i for i in rows if not _is_allergy(i)]),
                (ALLERGY_TITLE, allergic),
            ]
        for (title_ko, title_en), group in groups:
            title = title_ko if ko else title_en
            current = [i for i in group if i["status"] == "current"]
            past = [i for i in group if i["status"] == "past"]
            if current:
                said = ", ".join(
                    said_text(i, profile, lang)
                    + ("" if memory.is_current(i, now) else (" (오래됨)" if ko else " (old)"))
                    for i in current
                )
                lines.append(f"{title}: {said}")
            if past:
                lines.append(
                    f"{title} ({'과거' if ko else 'past'}): "
                    + ", ".join(label(i, lang) for i in past)
                )
    return lines


def _is_allergy(item: dict[str, Any]) -> bool:
    return item["slot"] == "conditions" and item["name"] in _allergy_names()


@lru_cache(maxsize=1)
def _allergy_names() -> frozenset[str]:
    return frozenset(c.name for c in load_medical_lexicon().conditions if c.kind == "allergy")


def handover_text(
    kn: Knowledge,
    profile: dict[str, Any],
    happened: list[tuple[str, str]],
    lang: str,
    now: datetime,
) -> str:
    """What to tell the ambulance crew: what happened (in plain words) and when it was told,
    whom it is about, then the profile as the summary lists it, allergies apart."""
    lines = [kn.message("handover_header", lang)]
    lines += [kn.message("handover_what", lang, what=what, at=at) for what, at in happened]
    if profile.get("subject", "self") != "self":
        lines.append(
            kn.message("med_profile_for", lang, who=relation_label(profile["subject"], lang))
        )
    lines += [f"• {line}" for line in profile_lines(profile, lang, now, allergies=True)]
    lines.append(kn.message("handover_also", lang))
    return "\n".join(lines)


def summary_text(
    kn: Knowledge,
    values: dict[str, Any],
    alerts: list[dict[str, Any]],
    lang: str,
    now: datetime,
) -> str | None:
    """The pre-visit summary: reason for contact, profile, red flags, questions and sources."""
    profile = values.get("profile") or memory.new_profile()
    asked = values.get("asked") or []
    if not profile.get("items") and not asked and not alerts:
        return None
    ko = lang == "ko"
    lines = ["진료 전 요약" if ko else "Pre-visit summary"]
    if alerts:  # every red flag heads the summary, with when it fired
        listed = ", ".join(f"{a['code']} {a['at'][:16].replace('T', ' ')}" for a in alerts)
        lines.append(("⚠️ 위험 신호: " if ko else "⚠️ Red flags: ") + listed)
    if profile.get("subject", "self") != "self":
        lines.append(
            kn.message("med_profile_for", lang, who=relation_label(profile["subject"], lang))
        )
    if asked:
        lines.append(
            ("방문 이유(첫 질문): " if ko else "Reason for contact (first question): ")
            + asked[0]["q"]
        )
    lines += profile_lines(profile, lang, now)
    family = [i for i in profile.get("items", []) if i["status"] == "family"]
    if family:
        lines.append(
            ("가족력: " if ko else "Family history: ") + ", ".join(label(i, lang) for i in family)
        )
    denied = [i for i in profile.get("items", []) if i["status"] == "denied"]
    if denied:
        lines.append(
            ("없다고 함: " if ko else "Said not: ") + ", ".join(label(i, lang) for i in denied)
        )
    if asked:
        lines.append("질문과 답변 출처:" if ko else "Questions and the sources of the answers:")
        for q in asked[-10:]:
            if q.get("urgent") and not q.get("answered"):  # a red flag's words: what to do now
                lines.append(f"• ⚠️ {q['q'][:120]}")
                continue
            sources = (
                "; ".join(q["sources"])
                if q["sources"]
                else ("자료 없음" if ko else "no source found")
            )
            # an answer the model wrote (LLM mode, checked) is marked for staff
            written = (
                (" (모델 작성)" if ko else " (model-written)") if q.get("writer") == "model" else ""
            )
            lines.append(f"• {q['q'][:120]} — {sources}{written}")
    return "\n".join(lines)
