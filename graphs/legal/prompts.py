"""Texts the legal intake sends: questions, re-asks, labels and values, from K0 and K2."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from graphs.legal import memo as legal_memo
from graphs.legal.fields import percent, progress
from graphs.legal.state import Message
from knowledge.loader import Knowledge
from knowledge.models import FieldSpec

REASON_KEYS = {
    "amount_nonpositive": "invalid_amount_nonpositive",
    "amount_unparsed": "invalid_amount_unparsed",
    "amount_several": "invalid_amount_several",
    "date_future": "invalid_date_future",
    "date_unparsed": "invalid_date_unparsed",
    "yesno": "invalid_yesno",
    "choice": "invalid_choice",
    "text": "invalid_text",
    "text_other": "invalid_text_other",
    "int": "invalid_int",
    "int_range": "invalid_int_range",
    "duration": "invalid_duration",
    "decimal": "invalid_decimal",
}


def message(text: str, choices: list[dict[str, str]] | None = None) -> Message:
    """A reply with optional buttons."""
    return {"text": text, "choices": choices or []}


def say(kn: Knowledge, lang: str, key: str, **values: Any) -> Message:
    """A K0 message as a reply."""
    return message(kn.message(key, lang, **values))


def case_labels(kn: Knowledge, sub_type: str, lang: str) -> tuple[str, str]:
    """(main type label, sub-type label) in `lang`."""
    case_type, sub = kn.k1.sub_type(sub_type)
    return case_type.label.get(lang), sub.label.get(lang)


def format_value(kn: Knowledge, spec: FieldSpec, value: Any, lang: str) -> str:
    """A normalised value as the person would write it."""
    if value is None:
        return kn.message("value_unknown", lang)
    if spec.kind == "amount":
        return f"{value:,}원" if lang == "ko" else f"KRW {value:,}"
    if spec.kind == "yesno":
        return kn.message("value_yes" if value else "value_no", lang)
    if spec.kind == "date" and value == "ongoing":
        return kn.message("value_ongoing", lang)
    if spec.kind == "duration":
        return kn.message("duration_format", lang, years=value // 12, months=value % 12)
    if spec.kind == "decimal":
        return f"{value:g}{spec.unit}"
    if spec.kind in ("choice", "multi_choice"):
        labels = {o.value: o.label.get(lang) for o in spec.options}
        values = value if isinstance(value, list) else [value]
        return ", ".join(labels.get(v, str(v)) for v in values)
    return str(value)


def describe_facts(kn: Knowledge, sub_type: str, facts: dict[str, Any], lang: str) -> str:
    """Facts as '· label: value' lines, in the sub-type's field order."""
    lines = []
    for key, value in facts.items():
        if key == "action_description":
            continue
        spec = kn.k2.field(sub_type, key)
        lines.append(f"· {spec.label.get(lang)}: {format_value(kn, spec, value, lang)}")
    return "\n".join(lines)


def answer_choices(
    kn: Knowledge, spec: FieldSpec, key: str, lang: str, *, picked: Sequence[str] = ()
) -> list[dict[str, str]]:
    """Buttons for a field: yes/no or its options, then 'I don't know'.

    Once a multi-choice field has picks, those options are not offered again and "That's all"
    replaces "I don't know".
    """
    choices = []
    if spec.kind == "yesno":
        choices += [
            {"label": kn.message("btn_yes", lang), "data": f"a:{key}:yes"},
            {"label": kn.message("btn_no", lang), "data": f"a:{key}:no"},
        ]
    elif spec.kind in ("choice", "multi_choice"):
        choices += [
            {"label": o.label.get(lang), "data": f"a:{key}:{o.value}"}
            for o in spec.options
            if o.value not in picked
        ]
    if picked:
        choices.append({"label": kn.message("btn_done", lang), "data": f"a:{key}:done"})
    elif all(o.value != "unknown" for o in spec.options):  # never 모름 beside 잘 모르겠어요
        choices.append({"label": kn.message("btn_unknown", lang), "data": f"a:{key}:unknown"})
    return choices


def question(
    kn: Knowledge,
    spec: FieldSpec,
    key: str,
    lang: str,
    *,
    answered: int,
    total: int,
    reason: str = "",
    picked: Sequence[str] = (),
) -> Message:
    """The question for a field: progress, (why the last answer failed,) question, why we ask.

    A multi-choice field with picks also lists them.
    """
    parts = [
        kn.message(
            "progress", lang, percent=percent(answered, total), answered=answered, total=total
        )
    ]
    if reason:
        parts.append(reason)
    parts.append(spec.question.get(lang))
    parts.append(kn.message("why", lang, why=spec.why.get(lang)))
    if picked:
        items = format_value(kn, spec, list(picked), lang)
        parts.append(kn.message("picked_so_far", lang, items=items))
    return message("\n".join(parts), answer_choices(kn, spec, key, lang, picked=picked))


def question_for(
    kn: Knowledge, spec: FieldSpec, state: Mapping[str, Any], key: str, lang: str, reason: str = ""
) -> Message:
    """`question` for `key` with the progress and the picks kept in the intake's state."""
    answered, total = progress(kn.k2, state["sub_type"], state.get("facts", {}))
    picked = state.get("picked", []) if state.get("asking") == key else []
    return question(
        kn, spec, key, lang, answered=answered, total=total, reason=reason, picked=picked
    )


def confirm_question(
    kn: Knowledge, sub_type: str, pending: Mapping[str, Any], lang: str
) -> Message:
    """ "보증금을 약 1,000만원으로 적을까요?" with 맞아요 / 아니에요 buttons."""
    key = pending["field"]
    spec = kn.k2.field(sub_type, key)
    message_key = "confirm_sum" if pending.get("summed") else "confirm_value"
    words = {"words": pending["in_man"]} if pending.get("in_man") else {}
    text = kn.message(
        "confirm_in_man" if words else message_key,
        lang,
        field=spec.label.get(lang),
        value=format_value(kn, spec, pending["value"], lang),
        **words,
    )
    return message(
        text,
        [
            {"label": kn.message("btn_confirm", lang), "data": f"a:{key}:confirm"},
            {"label": kn.message("btn_deny", lang), "data": f"a:{key}:deny"},
        ],
    )


def choose_date(kn: Knowledge, sub_type: str, pending: Mapping[str, Any], lang: str) -> Message:
    """ "'지난 토요일'이 어느 날인가요?" with a button for each day the words may mean; any other
    value read two ways (the rules and a model disagree) is asked the same way, a button each."""
    key = pending["field"]
    spec = kn.k2.field(sub_type, key)
    dated = spec.kind == "date"
    if pending.get("several") and not dated:  # amounts: the question's own words, buttons
        told = ", ".join(format_value(kn, spec, v, lang) for v in pending["options"])
        text = kn.message("invalid_amount_several", lang, value=told, field=spec.label.get(lang))
    else:
        text = kn.message(
            "date_which_several"
            if pending.get("several")
            else "date_which"
            if dated
            else "value_which",
            lang,
            words=pending.get("said") or " ".join(pending.get("quote", "").split())[:60],
            field=spec.label.get(lang),
        )
    return message(
        text,
        [
            {
                "label": day_label(kn, value, lang)
                if dated
                else format_value(kn, spec, value, lang),
                "data": f"a:{key}:on:{option_data(value, i)}",
            }
            for i, value in enumerate(pending["options"])
        ],
    )


def option_data(value: Any, index: int) -> str:
    """A button's data for one of the values offered: the value itself, or for several options
    of a multi-choice its place ("#1"), which keeps the data within Telegram's 64 bytes."""
    return f"#{index}" if isinstance(value, list) else str(value)


def day_label(kn: Knowledge, iso: str, lang: str) -> str:
    """A day with its weekday, as the person reads it: "2026년 11월 28일 (토)", "Sat 28 Nov 2026"."""
    if len(iso) < 10:  # a month or a year told without a day ("8월" in one year or another)
        year, _, month = iso.partition("-")
        if not month:
            return f"{year}년" if lang == "ko" else year
        if lang == "ko":
            return f"{year}년 {int(month)}월"
        return f"{kn.message('months', lang).split()[int(month) - 1]} {year}"
    day = date.fromisoformat(iso)
    weekday = kn.message("weekdays", lang).split()[day.weekday()]
    if lang == "ko":
        return f"{day.year}년 {day.month}월 {day.day}일 ({weekday})"
    month = kn.message("months", lang).split()[day.month - 1]
    return f"{weekday} {day.day} {month} {day.year}"


def confirm_changes(
    kn: Knowledge,
    sub_type: str,
    proposed: list[Mapping[str, Any]],
    lang: str,
    memo: list[dict[str, Any]] | None = None,
) -> Message:
    """ "이렇게 고칠까요? · 입사일: 2026-04-01 → 2026-03-02" with yes / keep buttons; values for
    empty fields (old None: read by a model alone) are asked as "이렇게 적어 둘까요?". A memo
    item's change is named by its section and words."""
    lines = []
    for change in proposed:
        if legal_memo.is_item(change["field"]):
            label = legal_memo.item_label(kn, memo or [], change["field"], lang)
            if change.get("remove"):
                lines.append(kn.message("remove_line", lang, field=label, old=change["old"]))
                continue
            old, new = (legal_memo.shown(change[k], lang) for k in ("old", "new"))
            lines.append(kn.message("change_line", lang, field=label, old=old, new=new))
            continue
        spec = kn.k2.field(sub_type, change["field"])
        new = format_value(kn, spec, change["new"], lang)
        label = spec.label.get(lang)
        if change["old"] is None:
            lines.append(kn.message("addition_line", lang, field=label, new=new))
            continue
        old = format_value(kn, spec, change["old"], lang)
        lines.append(kn.message("change_line", lang, field=label, old=old, new=new))
    adding = all(change["old"] is None for change in proposed)
    head, yes, no = (
        ("confirm_additions", "btn_addition_yes", "btn_addition_no")
        if adding
        else ("confirm_changes", "btn_change_yes", "btn_change_no")
    )
    return message(
        kn.message(head, lang, changes="\n".join(lines)),
        [
            {"label": kn.message(yes, lang), "data": "a:changes:confirm"},
            {"label": kn.message(no, lang), "data": "a:changes:deny"},
        ],
    )


def reason_text(
    kn: Knowledge, sub_type: str, invalid: dict[str, Any], lang: str, *, again: bool = False
) -> str:
    """Why an answer could not be used, in the person's language (worded otherwise `again`)."""
    spec = kn.k2.field(sub_type, invalid["field"])
    reason = invalid["reason"]
    values: dict[str, Any] = {}
    if reason in ("date_future", "amount_several"):
        values["value"] = invalid.get("value") or ""
    if reason == "amount_several":
        values["field"] = spec.label.get(lang)
    if reason == "int_range":
        values.update(minimum=spec.minimum or 0, maximum=spec.maximum or 0)
    text = kn.message(REASON_KEYS[reason], lang, **values)
    return kn.message("reask_second" if again else "reask", lang, reason=text)


def case_type_choices(
    kn: Knowledge, lang: str, *, candidates: list[str], browse: str | None
) -> list[dict[str, str]]:
    """Buttons to pick the case type: likely sub-types, a main type's sub-types, or main types."""
    if browse:
        subs = next(ct.sub_types for ct in kn.k1.case_types if ct.code == browse)
        choices = [{"label": s.label.get(lang), "data": f"st:{s.code}"} for s in subs]
    elif candidates:
        choices = []
        for code in candidates:
            main, sub = case_labels(kn, code, lang)
            choices.append({"label": f"{main} · {sub}", "data": f"st:{code}"})
    else:  # the main types; one holding only the free-form intake goes straight to it
        return [
            {"label": ct.label.get(lang), "data": f"st:{kn.k1.free_form}"}
            if all(s.free_form for s in ct.sub_types)
            else {"label": ct.label.get(lang), "data": f"ct:{ct.code}"}
            for ct in kn.k1.case_types
        ]
    choices.append({"label": kn.message("btn_none_of_these", lang), "data": "ct:*"})
    return choices
