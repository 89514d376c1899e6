"""The medical profile read from Synthea patients' own words (tests/medical_synthea.py).

Each living Synthea patient's messages (Korean and English templates) go through the slot
extractor and `memory.remember`, with no graph and no index, and the profile's current items are
scored against the gold drawn from the patient's records. Floors sit a little below what was
measured; the tables below pin down how particular templates must be read.
"""

from __future__ import annotations

import statistics
from datetime import timedelta
from typing import Any

import pytest

from graphs.medical import memory
from graphs.medical.slots import SlotExtractor
from tests.medical_synthea import (
    REFERENCE,
    SOCIAL_FINDINGS,
    conversation,
    gold_pairs,
    profile_scores,
    read_messages,
    synthea_patients,
)

# Measured (2024-02-01 reference day, 15 living patients):
#   the patients' own messages   ko: recall 0.997, precision 0.997   en: recall 0.955, precision 1.0
#   20-turn chats (repeats)      ko: recall 0.93,  precision 0.95    en: recall 0.97,  precision 0.96
# What is lost: in English a blood pressure followed by a full stop ("… 107 over 77. my weight
# …") is not read as a pair; in Korean "LDL 콜레스테롤은 81" is read as total cholesterol; in the
# chats "고혈압은 완치가 되나요?" moves hypertension to the past and "술 마셔도 돼요?" adds
# alcohol use (see the xfail cases below).
FLOORS = {
    ("messages", "ko"): (0.97, 0.97),
    ("messages", "en"): (0.92, 0.97),
    ("chat", "ko"): (0.90, 0.92),
    ("chat", "en"): (0.93, 0.93),
}


@pytest.fixture(scope="module")
def extractor() -> SlotExtractor:
    return SlotExtractor()


@pytest.fixture(scope="module")
def patients() -> list[dict[str, Any]]:
    return synthea_patients()


def patient(patients: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    return next(p for p in patients if p["id"].startswith(prefix))


def status(profile: dict[str, Any], slot: str, name: str, now) -> str:
    """ "current" (usable now), the item's status when it is not, or "absent"."""
    items = [i for i in profile["items"] if i["slot"] == slot and i["name"] == name]
    if not items:
        return "absent"
    if any(memory.is_current(i, now) for i in items):
        return "current"
    return items[-1]["status"]


# --- the gold -------------------------------------------------------------------------------


def test_the_gold_keeps_diseases_and_leaves_out_social_findings(patients) -> None:
    assert len(patients) == 15  # 17 in the data, two of them dead
    named = {n for p in patients for n in p["conditions"] + p["symptoms"]}
    assert named <= {
        "anemia",
        "obesity",
        "migraine",
        "back pain",
        "copd",
        "sinusitis",
        "dyslipidemia",
        "hypertension",
        "pregnancy",
        "osteoarthritis",
        "prediabetes",
    }
    assert not {n for n in named if "(finding)" in n or n in SOCIAL_FINDINGS}
    old = patient(patients, "9e886a7a")  # born 1955-06-22
    assert (old["age"], old["sex"]) == (68, "female")
    assert set(old["conditions"]) == {"anemia", "dyslipidemia", "hypertension", "prediabetes"}
    assert set(old["medications"]) == {"hydrochlorothiazide", "simvastatin", "lisinopril"}
    assert old["values"]["hba1c"] == 6.1 and old["values"]["bp_sys"] == 107
    # Stopped in Synthea: never current in the gold.
    assert "acetaminophen" in patient(patients, "280ee8b5")["stopped_medications"]
    assert "acetaminophen" not in patient(patients, "280ee8b5")["medications"]
    assert ("demographics", "age", 68) in gold_pairs(old)


# --- floors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_profiles_from_the_patients_messages_stay_above_the_floors(
    extractor, patients, lang
) -> None:
    scores = []
    for p in patients:
        profile, now = read_messages(p["utterances"][lang], extractor)
        scores.append(profile_scores(profile, p, now))
    recall = statistics.mean(s["recall"] for s in scores)
    precision = statistics.mean(s["precision"] for s in scores)
    floor_recall, floor_precision = FLOORS[("messages", lang)]
    assert recall >= floor_recall, (recall, [s["missed"] for s in scores if s["missed"]])
    assert precision >= floor_precision, (precision, [s["extra"] for s in scores if s["extra"]])


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_twenty_turn_chats_stay_above_the_floors_and_consolidate(extractor, patients, lang) -> None:
    scores, kept, unmerged = [], [], []
    for p in patients:
        messages = conversation(p, lang, turns=20)
        assert len(messages) == 20
        profile, now = read_messages(messages, extractor)
        scores.append(profile_scores(profile, p, now))
        kept.append(len(profile["items"]))
        unmerged.append(len(read_messages(messages, extractor, consolidate=False)[0]["items"]))
    floor_recall, floor_precision = FLOORS[("chat", lang)]
    assert statistics.mean(s["recall"] for s in scores) >= floor_recall
    assert statistics.mean(s["precision"] for s in scores) >= floor_precision
    # Measured: about 9.7 items kept against 22-23 without consolidation.
    assert statistics.mean(kept) <= 0.6 * statistics.mean(unmerged)


# --- how particular templates are read -------------------------------------------------------

# (patient id prefix, language, slot, name, status after the patient's messages)
READINGS = [
    # every current condition and medicine of a patient with several
    *[
        ("9e886a7a", lang, slot, name, "current")
        for lang in ("ko", "en")
        for slot, name in [
            ("conditions", "hypertension"),
            ("conditions", "dyslipidemia"),
            ("conditions", "prediabetes"),
            ("conditions", "anemia"),
            ("medications", "hydrochlorothiazide"),
            ("medications", "simvastatin"),
            ("medications", "lisinopril"),
        ]
    ],
    ("5f8d3e13", "ko", "conditions", "osteoarthritis", "current"),  # "고관절 퇴행성 관절염"
    ("5f8d3e13", "en", "conditions", "migraine", "current"),  # "migraines"
    ("42e628c2", "ko", "symptoms", "back pain", "current"),  # "만성 요통"
    ("1d3d16ce", "ko", "conditions", "copd", "current"),  # "만성 기관지염"
    ("a0fe2cde", "ko", "conditions", "pregnancy", "current"),
    ("a0fe2cde", "en", "conditions", "pregnancy", "current"),
    ("1cd7cc0a", "en", "medications", "salbutamol", "current"),  # "albuterol"
    ("38ddd8f0", "en", "medications", "iron supplement", "current"),  # "iron pills"
    # stopped medicines and past illnesses are kept, but not as current
    ("280ee8b5", "ko", "medications", "acetaminophen", "past"),  # "타이레놀은 끊었어요"
    ("280ee8b5", "en", "medications", "acetaminophen", "past"),  # "I stopped taking Tylenol"
    ("1d3d16ce", "ko", "medications", "acetaminophen", "past"),
    ("5f8d3e13", "ko", "medications", "amoxicillin/clavulanate", "past"),  # "오구멘틴은 끊었어요"
    ("1cd7cc0a", "ko", "conditions", "sinusitis", "past"),  # "예전에 축농증이 있었어요"
    ("1cd7cc0a", "en", "conditions", "sinusitis", "past"),  # "…last year but it cleared up"
    # a child's, said by a parent: the child's own items, not family history
    ("1854be9f", "ko", "medications", "loratadine", "current"),
    ("1854be9f", "en", "medications", "loratadine", "current"),
    ("42c09e08", "en", "medications", "fexofenadine", "current"),
]


@pytest.mark.parametrize(("prefix", "lang", "slot", "name", "want"), READINGS)
def test_a_patients_items_stand_as_said(
    extractor, patients, prefix, lang, slot, name, want
) -> None:
    p = patient(patients, prefix)
    profile, now = read_messages(p["utterances"][lang], extractor)
    assert status(profile, slot, name, now) == want, p["utterances"][lang]


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_a_parent_speaks_for_a_child(extractor, patients, lang) -> None:
    p = patient(patients, "1854be9f")  # 10, female
    profile, now = read_messages(p["utterances"][lang], extractor)
    assert profile["subject"] == "daughter"
    assert memory.demographic(profile, "age") == 10
    assert memory.demographic(profile, "sex") == "female"
    assert status(profile, "medications", "ibuprofen", now) != "current"


# (message, items it must give as (slot, name, value) with value None for a word)
TEMPLATES = [
    (
        "I'm 54, I have type 2 diabetes and I take metformin",
        {
            ("demographics", "age", 54),
            ("conditions", "diabetes", None),
            ("medications", "metformin", None),
        },
    ),
    ("혈압이 138에 85 나왔어요", {("vitals", "bp_sys", 138), ("vitals", "bp_dia", 85)}),
    (
        "어제 잰 혈압이 111/81이었어요. 몸무게는 106.4kg이에요",
        {("vitals", "bp_sys", 111), ("vitals", "bp_dia", 81), ("vitals", "weight_kg", 106.4)},
    ),
    (
        "피검사 결과: 공복혈당이 81 나왔어요. 당화혈색소는 6.1%였어요. 나쁜 콜레스테롤이 120 나왔어요",
        {("vitals", "glucose", 81), ("labs", "hba1c", 6.1), ("labs", "ldl", 120)},
    ),
    (
        "Blood test results: blood sugar 99 mg/dL. HbA1c 6.4%",
        {("vitals", "glucose", 99), ("labs", "hba1c", 6.4)},
    ),
    (
        "나이는 68세이고 여자입니다",
        {("demographics", "age", 68), ("demographics", "sex", "female")},
    ),
    ("Hi, 38-year-old man here", {("demographics", "age", 38), ("demographics", "sex", "male")}),
    (
        "매일 심바스타틴 10mg랑 히드로클로로티아지드 25mg랑 리시노프릴 10mg를 먹어요",
        {
            ("medications", "simvastatin", None),
            ("medications", "hydrochlorothiazide", None),
            ("medications", "lisinopril", None),
        },
    ),
    (
        "병원에서 고혈압, 당뇨 전단계, 빈혈이 있다고 했어요",
        {
            ("conditions", "hypertension", None),
            ("conditions", "prediabetes", None),
            ("conditions", "anemia", None),
        },
    ),
]


@pytest.mark.parametrize(("text", "want"), TEMPLATES)
def test_a_template_is_read_right(extractor, text, want) -> None:
    said = extractor.extract(text)
    got = {(i.slot, i.name, i.value) for i in said.items if not (i.negated or i.history)}
    assert got == want


# Misreadings found while this set was written, now fixed: a blood-pressure pair before a full
# stop, "LDL 콜레스테롤" read as total cholesterol, a question about a cure ending a condition.
ONCE_MISREAD = [
    pytest.param(
        ["My blood pressure was 107 over 77. my weight is 87.1 kg"],
        ("vitals", "bp_dia"),
        "current",
        id="bp-pair-before-a-full-stop",  # graphs/medical/slots.py _PAIR: (?![\d.]) after it
    ),
    pytest.param(
        ["피검사 결과: LDL 콜레스테롤은 81이래요"],
        ("labs", "ldl"),
        "current",
        id="ko-LDL-cholesterol-read-as-total",  # lexicon: no "LDL 콜레스테롤" cue for ldl
    ),
    pytest.param(
        ["고혈압이 있어요", "고혈압은 완치가 되나요?"],
        ("conditions", "hypertension"),
        "current",
        id="ko-asking-about-a-cure-ends-the-condition",  # lexicon history cue '완치|나았'
    ),
]


@pytest.mark.parametrize(("messages", "item", "want"), ONCE_MISREAD)
def test_once_misread(extractor, messages, item, want) -> None:
    profile, now = read_messages(messages, extractor, start=REFERENCE, step=timedelta(minutes=1))
    assert status(profile, *item, now) == want
