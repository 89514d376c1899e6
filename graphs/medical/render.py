"""How the medical assistant shows what it holds: an item as it is repeated back ("혈압 150/95
(집에서)", "당뇨병(과거)"), a relation and a measure named in the reply's language, and the Korean
particle that follows a word."""

from __future__ import annotations

from typing import Any

from graphs.medical import memory
from graphs.medical.about import extractor


def josa(word: str, pair: str) -> str:
    """The Korean particle of `pair` ("을/를", "이/가", "은/는") that follows `word`."""
    with_final, without = pair.split("/")
    last = word.strip()[-1:] if word.strip() else ""
    if "가" <= last <= "힣":
        return with_final if (ord(last) - 0xAC00) % 28 else without
    return f"({with_final}){without}" if with_final != "이" else "(이)가"


def label(item: dict[str, Any], lang: str) -> str:
    return item["name_ko"] if lang == "ko" else item["name"]


def said_text(item: dict[str, Any], profile: dict[str, Any], lang: str) -> str:
    """An item as the bot repeats it back: "혈압 150/95", "당뇨병", "age 80"."""
    if item["slot"] in ("vitals", "labs"):
        name = item["name_ko"] if lang == "ko" else EN_MEASURES.get(item["name"], item["name"])
        if item["name"] == "bp_sys" and lang == "ko":
            name = "혈압"
        shown = f"{name} {memory.display_value(item, profile)}"
        return with_details(shown, context_words(item, lang))
    if item["slot"] == "demographics":
        if item["name"] == "age":
            return f"{item['value']}세" if lang == "ko" else f"age {item['value']}"
        sex = {"male": ("남성", "male"), "female": ("여성", "female")}.get(str(item["value"]))
        return (sex[0] if lang == "ko" else sex[1]) if sex else str(item["value"])
    shown = with_details(label(item, lang), item.get("details") or [])
    if item["status"] == "denied":
        return f"{shown} 없음" if lang == "ko" else f"no {shown}"
    if item["status"] == "past":
        return f"{shown}(과거)" if lang == "ko" else f"{shown} (past)"
    if item["status"] == "family":
        return f"{shown}(가족력)" if lang == "ko" else f"{shown} (family)"
    return shown


def with_details(shown: str, details: list[str]) -> str:
    """An item with what was said beside it: "기침 (2주째)", "혈압 150/95 (집에서)"."""
    return f"{shown} ({', '.join(details)})" if details else shown


def context_words(item: dict[str, Any], lang: str) -> list[str]:
    """Where or when a reading was taken, in the reply's language ("집에서", "fasting")."""
    contexts = {c.name: c for c in extractor().lexicon.cues.reading_contexts}
    return [
        (contexts[n].ko if lang == "ko" else contexts[n].en)
        for n in item.get("context") or []
        if n in contexts
    ]


def relation_label(name: str, lang: str) -> str:
    """ "아버지" / "father" for the relation a carer speaks for."""
    for relation in extractor().lexicon.relations:
        if relation.name == name:
            return relation.ko if lang == "ko" else relation.name.replace("-", " ")
    return name


def measure_label(key: str, lang: str) -> str:
    """ "혈압" / "blood pressure" for a rejected reading's measure ("bp"); "나이" / "age"."""
    if key == "age":
        return "나이" if lang == "ko" else "Age"
    if lang == "en":
        return EN_MEASURES.get(key, key.replace("_", " "))
    for measure in extractor().lexicon.measures:
        if measure.key == key:
            return measure.ko
    return key


# How an English reply names a measure (the lexicon's Korean names are used in Korean).
EN_MEASURES = {
    "bp": "blood pressure",
    "bp_sys": "blood pressure",
    "glucose": "blood sugar",
    "hba1c": "HbA1c",
    "temp": "temperature",
    "hr": "pulse",
    "weight_kg": "weight",
    "height_cm": "height",
    "spo2": "oxygen saturation",
    "ldl": "LDL",
    "hdl": "HDL",
    "tg": "triglycerides",
    "tsh": "TSH",
    "egfr": "eGFR",
    "creatinine": "creatinine",
}
