"""Synthea patients as they would describe themselves to the medical assistant, with gold profiles.

Reads tests/data/shared/synthea_dev (Synthea CSV: patients, conditions, medications, observations)
and gives, for every living patient:

- a gold profile: age (from the birth date on REFERENCE), sex, current conditions (no STOP
  date, social findings left out, mapped to the lexicon's canonical names by CONDITIONS below;
  a description it does not map is skipped), current medicines (mapped by MEDICINES), and the
  latest vitals and labs (LOINC: blood pressure 8480-6 / 8462-4, glucose 2339-0, HbA1c 4548-4,
  weight 29463-7, LDL 18262-6 or 2089-1);
- what the patient would write, in Korean and in English, split in several messages (templates
  of our own, chosen per patient by a fixed seed); a child's messages are written by a parent;
- `conversation`: a longer chat (20 turns) that repeats and paraphrases the same things, as
  people do, with earlier readings of a value said before the latest one.

`profile_scores` compares a profile's current items with a gold profile: recall and precision
over (slot, name) pairs, with the value for demographics, vitals and labs.

Used by tests/test_medical_synthea.py (fast, no graph) and bench/medical.py.
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any

from graphs.medical import memory, questions
from graphs.medical.slots import SlotExtractor
from tests.support import SHARED_DATA

DATA = SHARED_DATA / "synthea_dev"
REFERENCE = datetime(2024, 2, 1, 9, 0, tzinfo=UTC)  # ages are taken on this day; chats start then
CHILD_UNTIL = 14  # a younger patient's messages are written by a parent
LANGS = ("ko", "en")
VALUE_SLOTS = ("demographics", "vitals", "labs")

# Synthea "conditions" that are social or administrative findings, never diseases (README).
SOCIAL_FINDINGS = {
    "Full-time employment (finding)",
    "Part-time employment (finding)",
    "Not in labor force (finding)",
    "Received higher education (finding)",
    "Received certificate of high school equivalency (finding)",
    "Housing unsatisfactory (finding)",
    "Limited social contact (finding)",
    "Social isolation (finding)",
    "Stress (finding)",
    "Has a criminal record (finding)",
    "Risk activity involvement (finding)",
    "Victim of intimate partner abuse (finding)",
    "Unhealthy alcohol drinking behavior (finding)",
}
# Synthea description -> (slot, canonical name in knowledge/medical/lexicon.yaml). Anything not
# here (appendicitis, drug overdose, impacted molars, polyp of colon, preeclampsia, hypoxemia,
# chronic pain, miscarriage, fractures, sprains, ...) has no lexicon entry and is skipped.
CONDITIONS: dict[str, tuple[str, str]] = {
    "Anemia (disorder)": ("conditions", "anemia"),
    "Body mass index 30+ - obesity (finding)": ("conditions", "obesity"),
    "Chronic intractable migraine without aura": ("conditions", "migraine"),
    "Chronic low back pain (finding)": ("symptoms", "back pain"),
    "Chronic obstructive bronchitis (disorder)": ("conditions", "copd"),
    "Chronic sinusitis (disorder)": ("conditions", "sinusitis"),
    "Viral sinusitis (disorder)": ("conditions", "sinusitis"),
    "Coronary Heart Disease": ("conditions", "coronary artery disease"),
    "Hyperlipidemia": ("conditions", "dyslipidemia"),
    "Hypertension": ("conditions", "hypertension"),
    "Normal pregnancy": ("conditions", "pregnancy"),
    "Osteoarthritis of hip": ("conditions", "osteoarthritis"),
    "Prediabetes": ("conditions", "prediabetes"),
    "Myocardial Infarction": ("conditions", "myocardial infarction"),
    "History of myocardial infarction (situation)": ("conditions", "myocardial infarction"),
}
# Events rather than standing conditions: Synthea never stops them, a patient says them as past.
PAST_EVENTS = {"myocardial infarction"}
# Synthea medicine description (its first words, lower case) -> lexicon medicine name.
# Unmapped: enoxaparin, medroxyprogesterone, NuvaRing, epinephrine auto-injector, captopril,
# terfenadine, diphenhydramine, acetaminophen with hydrocodone (no lexicon entry).
MEDICINES: dict[str, str] = {
    "acetaminophen 325 mg oral tablet": "acetaminophen",
    "acetaminophen 500 mg oral tablet": "acetaminophen",
    "amlodipine": "amlodipine",
    "amoxicillin 250 mg / clavulanate": "amoxicillin/clavulanate",
    "atorvastatin": "atorvastatin",
    "clopidogrel": "clopidogrel",
    "fexofenadine": "fexofenadine",
    "hydrochlorothiazide": "hydrochlorothiazide",
    "ibuprofen": "ibuprofen",
    "loratadine": "loratadine",
    "nda020503 200 actuat albuterol": "salbutamol",
    "naproxen": "naproxen",
    "nitroglycerin": "nitroglycerin",
    "simvastatin": "simvastatin",
    "lisinopril": "lisinopril",
    "ferrous sulfate": "iron supplement",
}
_NOT_MAPPED = ("hydrocodone",)  # a combination the lexicon has no entry for
# LOINC code -> (slot, lexicon reading, decimals kept)
OBSERVATIONS: dict[str, tuple[str, str, int]] = {
    "8480-6": ("vitals", "bp_sys", 0),
    "8462-4": ("vitals", "bp_dia", 0),
    "2339-0": ("vitals", "glucose", 0),
    "4548-4": ("labs", "hba1c", 1),
    "29463-7": ("vitals", "weight_kg", 1),
    "18262-6": ("labs", "ldl", 0),
    "2089-1": ("labs", "ldl", 0),
}

# How people name each canonical item: the first spelling is used first, the others when the
# item comes up again (paraphrases). Spellings of our own, not copied from the lexicon.
LAY: dict[str, dict[str, list[str]]] = {
    "anemia": {"en": ["anemia", "low iron anemia", "anaemia"], "ko": ["빈혈", "철결핍성 빈혈"]},
    "obesity": {"en": ["obesity", "being obese", "obesity problems"], "ko": ["비만", "고도비만"]},
    "migraine": {
        "en": ["migraines", "chronic migraine", "migraine"],
        "ko": ["편두통", "만성 편두통"],
    },
    "back pain": {
        "en": ["chronic low back pain", "lower back pain", "back pain"],
        "ko": ["만성 요통", "허리 통증", "허리가 아픈 거"],
    },
    "copd": {
        "en": ["COPD", "chronic bronchitis", "emphysema"],
        "ko": ["만성 기관지염", "COPD", "만성폐쇄성폐질환"],
    },
    "sinusitis": {
        "en": ["chronic sinusitis", "sinusitis", "sinusitis again"],
        "ko": ["축농증", "만성 부비동염"],
    },
    "coronary artery disease": {
        "en": ["coronary heart disease", "coronary artery disease"],
        "ko": ["관상동맥질환", "관상동맥 질환"],
    },
    "dyslipidemia": {
        "en": ["high cholesterol", "hyperlipidemia", "cholesterol that runs high"],
        "ko": ["고지혈증", "이상지질혈증", "고지혈"],
    },
    "hypertension": {
        "en": ["high blood pressure", "hypertension", "HTN"],
        "ko": ["고혈압", "고혈압증"],
    },
    "pregnancy": {"en": ["pregnant", "pregnant right now"], "ko": ["임신 중", "임신부"]},
    "osteoarthritis": {
        "en": ["osteoarthritis in my hip", "hip osteoarthritis", "osteoarthritis"],
        "ko": ["고관절 퇴행성 관절염", "골관절염", "퇴행성관절염"],
    },
    "prediabetes": {
        "en": ["prediabetes", "pre-diabetes", "borderline diabetes"],
        "ko": ["당뇨 전단계", "전당뇨", "경계성 당뇨"],
    },
    "myocardial infarction": {
        "en": ["a heart attack", "a heart attack"],
        "ko": ["심근경색", "심근경색"],
    },
    # medicines: generic first, then a brand or another spelling
    "acetaminophen": {
        "en": ["Tylenol", "acetaminophen", "paracetamol"],
        "ko": ["타이레놀", "아세트아미노펜"],
    },
    "amlodipine": {"en": ["amlodipine", "Norvasc"], "ko": ["암로디핀", "노바스크"]},
    "amoxicillin/clavulanate": {
        "en": ["Augmentin", "co-amoxiclav"],
        "ko": ["오구멘틴", "오구멘틴"],
    },
    "atorvastatin": {"en": ["atorvastatin", "Lipitor"], "ko": ["아토르바스타틴", "리피토"]},
    "clopidogrel": {"en": ["clopidogrel", "Plavix"], "ko": ["클로피도그렐", "플라빅스"]},
    "fexofenadine": {"en": ["fexofenadine", "Allegra"], "ko": ["펙소페나딘", "알레그라"]},
    "hydrochlorothiazide": {
        "en": ["hydrochlorothiazide", "HCTZ"],
        "ko": ["히드로클로로티아지드", "하이드로클로로티아지드"],
    },
    "ibuprofen": {"en": ["ibuprofen", "ibuprofen"], "ko": ["이부프로펜", "이부프로펜"]},
    "loratadine": {"en": ["loratadine", "Claritin"], "ko": ["로라타딘", "클라리틴"]},
    "salbutamol": {"en": ["albuterol", "Ventolin"], "ko": ["벤토린", "살부타몰"]},
    "naproxen": {"en": ["naproxen", "Aleve"], "ko": ["나프록센", "낙센"]},
    "nitroglycerin": {"en": ["nitroglycerin", "nitro spray"], "ko": ["니트로글리세린", "니트로"]},
    "simvastatin": {"en": ["simvastatin", "Zocor"], "ko": ["심바스타틴", "심바스타틴"]},
    "lisinopril": {"en": ["lisinopril", "Zestril"], "ko": ["리시노프릴", "리시노프릴"]},
    "iron supplement": {"en": ["iron pills", "ferrous sulfate"], "ko": ["철분제", "철분"]},
}


# --- reading Synthea ------------------------------------------------------------------------


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def age_on(birth: str, day: date) -> int:
    born = date.fromisoformat(birth)
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def medicine_name(description: str) -> str | None:
    """The lexicon medicine a Synthea medication description is, or None (not in the lexicon)."""
    lowered = description.lower()
    if any(word in lowered for word in _NOT_MAPPED):
        return None
    for start, name in MEDICINES.items():
        if lowered.startswith(start):
            return name
    return None


def _dose(description: str) -> str:
    """The first strength of a description as people write it ("10mg"), or ""."""
    found = re.search(r"(\d+(?:\.\d+)?) MG(?!/)", description)
    return f"{found[1]}mg" if found else ""


def _value(raw: str, decimals: int) -> float | int:
    number = round(float(raw), decimals)
    return int(number) if decimals == 0 else number


@cache
def _patients() -> tuple[dict[str, Any], ...]:
    patients = [p for p in _rows("patients.csv") if not p["DEATHDATE"]]
    conditions = _rows("conditions.csv")
    medications = _rows("medications.csv")
    observations = sorted(_rows("observations.csv"), key=lambda r: r["DATE"])
    out = []
    for p in patients:
        pid = p["Id"]
        current_conditions: dict[tuple[str, str], None] = {}
        past_conditions: dict[tuple[str, str], None] = {}
        for row in conditions:
            if row["PATIENT"] != pid or row["DESCRIPTION"] in SOCIAL_FINDINGS:
                continue
            mapped = CONDITIONS.get(row["DESCRIPTION"])
            if mapped is None:
                continue
            if mapped[1] == "pregnancy" and row["STOP"]:
                continue  # a pregnancy that ended is not said as an illness of the past
            if row["STOP"] or mapped[1] in PAST_EVENTS:
                past_conditions[mapped] = None
            else:
                current_conditions[mapped] = None
        current_meds: dict[str, str] = {}  # name -> dose
        stopped_meds: dict[str, str] = {}
        for row in sorted(medications, key=lambda r: r["START"]):
            if row["PATIENT"] != pid:
                continue
            name = medicine_name(row["DESCRIPTION"])
            if name is None:
                continue
            (stopped_meds if row["STOP"] else current_meds)[name] = _dose(row["DESCRIPTION"])
        readings: dict[str, list[float | int]] = {}
        for row in observations:
            known = OBSERVATIONS.get(row["CODE"])
            if row["PATIENT"] != pid or known is None or not row["VALUE"]:
                continue
            readings.setdefault(known[1], []).append(_value(row["VALUE"], known[2]))
        age = age_on(p["BIRTHDATE"], REFERENCE.date())
        sex = {"M": "male", "F": "female"}[p["GENDER"]]
        out.append(
            {
                "id": pid,
                "age": age,
                "sex": sex,
                "carer": ("daughter" if sex == "female" else "son") if age < CHILD_UNTIL else None,
                "conditions": [n for s, n in current_conditions if s == "conditions"],
                "symptoms": [n for s, n in current_conditions if s == "symptoms"],
                "medications": list(current_meds),
                "doses": {**stopped_meds, **current_meds},
                "values": {name: values[-1] for name, values in readings.items()},
                "earlier": {name: values[-3:-1] for name, values in readings.items()},
                "past_conditions": [
                    n for s, n in past_conditions if (s, n) not in current_conditions
                ],
                "stopped_medications": [n for n in stopped_meds if n not in current_meds],
            }
        )
    return tuple(out)


def value_slot(name: str) -> str:
    return next(slot for slot, reading, _ in OBSERVATIONS.values() if reading == name)


def gold_pairs(gold: dict[str, Any]) -> set[tuple]:
    """The gold profile's current items as (slot, name) pairs, with the value for demographics,
    vitals and labs: ("demographics", "age", 54), ("conditions", "hypertension"), ..."""
    pairs: set[tuple] = {("demographics", "age", gold["age"]), ("demographics", "sex", gold["sex"])}
    for slot in ("conditions", "symptoms", "medications"):
        pairs |= {(slot, name) for name in gold[slot]}
    for name, value in gold["values"].items():
        pairs.add((value_slot(name), name, _norm(value)))
    return pairs


def _norm(value: Any) -> Any:
    return round(float(value), 1) if isinstance(value, int | float) else value


def profile_pairs(profile: dict[str, Any], now: datetime) -> list[tuple]:
    """The profile's current items as pairs like `gold_pairs` (one per item: a profile kept
    without consolidation may hold one thing twice, and both count)."""
    out = []
    for item in memory.current_items(profile, now):
        if item["slot"] in VALUE_SLOTS:
            out.append((item["slot"], item["name"], _norm(item["value"])))
        else:
            out.append((item["slot"], item["name"]))
    return out


def profile_scores(profile: dict[str, Any], gold: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Recall (gold pairs found current in the profile) and precision (current profile items
    that are gold pairs), with what was missed and what was extra."""
    want = gold_pairs(gold)
    got = profile_pairs(profile, now)
    hits = want & set(got)
    correct = sum(1 for pair in got if pair in want)
    return {
        "recall": len(hits) / len(want) if want else 1.0,
        "precision": correct / len(got) if got else 1.0,
        "missed": sorted(want - set(got), key=str),
        "extra": sorted({p for p in got if p not in want}, key=str),
        "items": len(got),
    }


# --- writing as the patient ------------------------------------------------------------------


def _final(word: str) -> bool:
    """Whether a Korean word ends in a final consonant (a Latin word or digit: by its sound)."""
    last = word.strip()[-1:]
    if "가" <= last <= "힣":
        return (ord(last) - 0xAC00) % 28 != 0
    return last.lower() in "lmnr013678" if last else False


def _p(word: str, pair: str) -> str:
    """The word with the particle of `pair` ("이/가", "을/를", "은/는", "이랑/랑", "이에요/예요")."""
    with_final, without = pair.split("/")
    return word + (with_final if _final(word) else without)


def _en_list(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _ko_list(words: list[str], rng: random.Random) -> str:
    style = rng.choice(("comma", "rang", "hago"))
    if len(words) == 1:
        return words[0]
    if style == "comma":
        return ", ".join(words)
    if style == "hago":
        return "하고 ".join(words)
    return " ".join(_p(w, "이랑/랑") for w in words[:-1]) + " " + words[-1]


def _lay(name: str, lang: str, n: int = 0) -> str:
    forms = LAY[name][lang]
    return forms[n % len(forms)]


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


WHO = {"daughter": {"en": "my daughter", "ko": "딸"}, "son": {"en": "my son", "ko": "아들"}}


def _intro(g: dict[str, Any], lang: str, rng: random.Random) -> str:
    age, female = g["age"], g["sex"] == "female"
    if g["carer"]:
        who = WHO[g["carer"]][lang]
        if lang == "ko":
            return rng.choice(
                [f"우리 {_p(who, '이/가')} {age}살이에요", f"{age}살 {who} 때문에 여쭤보려고요"]
            )
        return rng.choice(
            [
                f"Hi, I'm asking for {who}, she is {age}"
                if female
                else f"Hi, I'm asking for {who}, he is {age}",
                f"{who.capitalize()} is {age} years old",
            ]
        )
    if lang == "ko":
        sex = rng.choice(["여자", "여성"]) if female else rng.choice(["남자", "남성"])
        return rng.choice(
            [
                f"{age}세 {_p(sex, '이에요/예요')}",
                f"저는 {age}살 {sex}입니다",
                f"안녕하세요 {age}살 {sex}인데요 상담 좀 받고 싶어요",
                f"나이는 {age}세이고 {sex}입니다",
            ]
        )
    noun = "woman" if female else "man"
    adjective = "female" if female else "male"
    return rng.choice(
        [
            f"I'm a {age} year old {noun}",
            f"Hi, {age}-year-old {noun} here",
            f"I am {age} years old, {adjective}",
            f"Hello. I'm {age} and {adjective}",
        ]
    )


def _conditions(g: dict[str, Any], names: list[str], lang: str, rng: random.Random) -> str:
    words = [_lay(n, lang) for n in names]
    if g["carer"]:
        who = WHO[g["carer"]][lang]
        if lang == "ko":
            return f"{_p(who, '은/는')} {_p(_ko_list(words, rng), '이/가')} 있어요"
        return f"{who.capitalize()} has {_en_list(words)}"
    if "pregnancy" in names and len(names) == 1:
        return "임신 중이에요" if lang == "ko" else "I'm pregnant"
    words = [w for w in words if w not in ("pregnant", "임신 중")]
    extra = ""
    if "pregnancy" in names:
        extra = " 그리고 지금 임신 중이에요" if lang == "ko" else ", and I'm pregnant"
    if lang == "ko":
        listed = _ko_list(words, rng)
        return (
            rng.choice(
                [
                    f"{_p(listed, '이/가')} 있어요",
                    f"{listed} 진단을 받았어요",
                    f"지금 {listed} 때문에 병원 다니고 있어요",
                    f"병원에서 {_p(listed, '이/가')} 있다고 했어요",
                ]
            )
            + extra
        )
    listed = _en_list(words)
    return (
        rng.choice(
            [
                f"I have {listed}",
                f"I've been diagnosed with {listed}",
                f"My doctor says I have {listed}",
                f"I'm being treated for {listed}",
            ]
        )
        + extra
    )


def _medicines(g: dict[str, Any], names: list[str], lang: str, rng: random.Random) -> str:
    dosed = rng.random() < 0.5
    words = [f"{_lay(n, lang)} {g['doses'][n]}".strip() if dosed else _lay(n, lang) for n in names]
    if g["carer"]:
        who = WHO[g["carer"]][lang]
        if lang == "ko":
            return f"{_p(who, '은/는')} {_ko_list(words, rng)} 먹고 있어요"
        return f"{who.capitalize()} takes {_en_list(words)}"
    if lang == "ko":
        listed = _ko_list(words, rng)
        return rng.choice(
            [
                f"약은 {listed} 먹고 있어요",
                f"{listed} 복용 중이에요",
                f"매일 {_p(listed, '을/를')} 먹어요",
                f"현재 {listed} 처방받아서 먹고 있습니다",
            ]
        )
    listed = _en_list(words)
    return rng.choice(
        [
            f"I take {listed}",
            f"I'm on {listed}",
            f"My medications are {listed}",
            f"Every morning I take {listed}",
        ]
    )


def _vitals(
    values: dict[str, Any], lang: str, rng: random.Random, carer: str | None = None
) -> list[str]:
    """Messages giving blood pressure and weight, and the lab values (one message each)."""
    out = []
    parts = []
    if carer and ("bp_sys" in values or "weight_kg" in values):
        s, d = _num(values.get("bp_sys", "")), _num(values.get("bp_dia", ""))
        w = _num(values.get("weight_kg", ""))
        who = WHO[carer][lang]
        she, her = ("she", "Her") if carer == "daughter" else ("he", "His")
        if lang == "ko":
            if s and d:
                parts.append(f"{who} 혈압은 {_p(f'{s}/{d}', '이에요/예요')}")
            if w:
                parts.append(f"몸무게는 {w}kg이에요")
        else:
            if s and d:
                parts.append(f"{her} blood pressure was {s}/{d} at the clinic")
            if w:
                parts.append(f"{she} weighs {w} kg")
        out.append((". " if lang == "ko" else " and ").join(parts))
        values = {k: v for k, v in values.items() if k not in ("bp_sys", "bp_dia", "weight_kg")}
        parts = []
    if "bp_sys" in values and "bp_dia" in values:
        s, d = _num(values["bp_sys"]), _num(values["bp_dia"])
        if lang == "ko":
            parts.append(
                rng.choice(
                    [
                        f"혈압이 {s}에 {d} 나왔어요",
                        f"혈압은 {_p(f'{s}/{d}', '이에요/예요')}",
                        f"어제 잰 혈압이 {_p(f'{s}/{d}', '이었어요/였어요')}",
                    ]
                )
            )
        else:
            parts.append(
                rng.choice(
                    [
                        f"My blood pressure was {s} over {d}",
                        f"BP {s}/{d} this morning",
                        f"Last blood pressure reading: {s}/{d}",
                    ]
                )
            )
    if "weight_kg" in values:
        w = _num(values["weight_kg"])
        if lang == "ko":
            parts.append(rng.choice([f"몸무게는 {w}kg이에요", f"체중은 {w}킬로 나가요"]))
        else:
            parts.append(rng.choice([f"I weigh {w} kg", f"my weight is {w} kg"]))
    if parts:
        joiner = ". " if lang == "ko" else rng.choice([". ", " and "])
        out.append(joiner.join(parts))
    labs = []
    if "glucose" in values:
        v = _num(values["glucose"])
        labs.append(
            rng.choice([f"공복혈당이 {v} 나왔어요", f"혈당 수치는 {_p(v, '이었어요/였어요')}"])
            if lang == "ko"
            else rng.choice([f"My fasting glucose was {v}", f"blood sugar {v} mg/dL"])
        )
    if "hba1c" in values:
        v = _num(values["hba1c"])
        labs.append(
            rng.choice([f"당화혈색소는 {v}%였어요", f"당화혈색소 {v}%래요"])
            if lang == "ko"
            else rng.choice([f"my A1c was {v}%", f"HbA1c {v}%"])
        )
    if "ldl" in values:
        v = _num(values["ldl"])
        labs.append(
            rng.choice([f"LDL 콜레스테롤은 {v}이래요", f"나쁜 콜레스테롤이 {v} 나왔어요"])
            if lang == "ko"
            else rng.choice([f"LDL cholesterol {v} mg/dL", f"my LDL was {v}"])
        )
    if labs:
        head = "피검사 결과: " if lang == "ko" else "Blood test results: "
        out.append(head + ". ".join(labs))
    return out


def _past(g: dict[str, Any], lang: str, rng: random.Random) -> list[str]:
    out = []
    if g["carer"]:  # a parent says what the child took before
        who = WHO[g["carer"]][lang]
        for name in g["stopped_medications"]:
            word = _lay(name, lang)
            out.append(
                f"{_p(who, '은/는')} 예전에 {word} 먹다가 끊었어요"
                if lang == "ko"
                else f"{who.capitalize()} used to take {word} but stopped"
            )
        return out
    for name in g["past_conditions"]:
        word = _lay(name, lang)
        if lang == "ko":
            out.append(
                rng.choice(
                    [
                        f"작년에 {_p(word, '을/를')} 앓았는데 다 나았어요",
                        f"예전에 {_p(word, '이/가')} 있었어요",
                    ]
                )
            )
        else:
            out.append(
                rng.choice(
                    [f"I had {word} last year but it cleared up", f"In the past I had {word}"]
                )
            )
    for name in g["stopped_medications"]:
        word = _lay(name, lang)
        if lang == "ko":
            out.append(
                rng.choice(
                    [f"예전에 {word} 먹었는데 지금은 안 먹어요", f"{_p(word, '은/는')} 끊었어요"]
                )
            )
        else:
            out.append(
                rng.choice(
                    [f"I used to take {word} but I stopped", f"I stopped taking {word} a while ago"]
                )
            )
    return out


def _utterances(g: dict[str, Any], lang: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    messages = [_intro(g, lang, rng)]
    conditions = g["conditions"] + g["symptoms"]
    meds = g["medications"]
    # Now and then the first message says it all, as in "I'm 54, I have diabetes and take X".
    if conditions and meds and not g["carer"] and rng.random() < 0.35:
        c, m = _lay(conditions[0], lang), _lay(meds[0], lang)
        if conditions[0] == "pregnancy":
            c = "임신 중인데" if lang == "ko" else "pregnant"
        if lang == "ko":
            sex = "여자" if g["sex"] == "female" else "남자"
            head = (
                f"{g['age']}세 {sex}고 {_p(c, '이/가')} 있어요"
                if c != "임신 중인데"
                else f"{g['age']}세 {sex}고 {c}"
            )
            messages = [f"{head}. {_p(m, '을/를')} 먹고 있어요"]
        else:
            head = (
                f"I'm {g['age']}, I'm pregnant"
                if c == "pregnant"
                else f"I'm {g['age']}, I have {c}"
            )
            sex = "a woman" if g["sex"] == "female" else "a man"
            messages = [f"{head} and I take {m}", f"I'm {sex}"]
        conditions, meds = conditions[1:], meds[1:]
    for start in range(0, len(conditions), 3):  # at most three conditions in one message
        messages.append(_conditions(g, conditions[start : start + 3], lang, rng))
    if meds:
        messages.append(_medicines(g, meds, lang, rng))
    messages += _vitals(g["values"], lang, rng, g["carer"])
    messages += _past(g, lang, rng)
    return messages


def _seed(pid: str, lang: str) -> int:
    return int(pid[:8], 16) + (0 if lang == "ko" else 1)


def synthea_patients() -> list[dict[str, Any]]:
    """Every living Synthea patient: the gold profile and `utterances` {"ko": [...], "en": [...]}
    (several messages each)."""
    out = []
    for g in _patients():
        g = dict(g)
        g["utterances"] = {lang: _utterances(g, lang, _seed(g["id"], lang)) for lang in LANGS}
        out.append(g)
    return out


# --- longer chats: repeats and paraphrases -------------------------------------------------

NEUTRAL = {
    "ko": [
        "하루에 얼마나 걸으면 좋을까요?",
        "요즘 잠을 잘 못 자는데 낮잠은 괜찮나요?",
        "건강검진은 얼마나 자주 받아야 하나요?",
        "물은 하루에 얼마나 마셔야 해요?",
        "감사합니다",
    ],
    "en": [
        "How much should I walk each day?",
        "How often should I get a check-up?",
        "How much water should I drink a day?",
        "Is it fine to skip breakfast?",
        "Thanks",
    ],
}


def _mention_condition(g: dict[str, Any], name: str, lang: str, n: int) -> str:
    word = _lay(name, lang, n)
    if g["carer"]:
        who = WHO[g["carer"]][lang]
        if lang == "ko":
            return f"{_p(who, '이/가')} {_p(word, '이/가')} 있는데 운동해도 되나요?"
        return f"{who.capitalize()} has {word}, can she do sports?"
    if name == "pregnancy":
        return (
            "임신 중인데 커피 마셔도 되나요?" if lang == "ko" else "I'm pregnant, is coffee okay?"
        )
    if lang == "ko":
        return [
            f"{_p(word, '이/가')} 있는데 커피 마셔도 되나요?",
            f"제가 {_p(word, '이/가')} 있잖아요, 짜게 먹으면 안 되나요?",
            f"{_p(word, '은/는')} 완치가 되나요?",
        ][n % 3]
    return [
        f"Since I have {word}, is coffee okay?",
        f"With my {word}, should I cut down on salt?",
        f"Can {word} go away completely?",
    ][n % 3]


def _mention_medicine(g: dict[str, Any], name: str, lang: str, n: int) -> str:
    word = _lay(name, lang, n)
    if g["carer"]:
        who = WHO[g["carer"]][lang]
        if lang == "ko":
            return f"{_p(who, '이/가')} 오늘도 {_p(word, '을/를')} 먹었어요. 밥 먹고 먹여야 하나요?"
        return f"{who.capitalize()} took her {word} today, should it be with food?"
    if lang == "ko":
        return [
            f"오늘 아침에도 {_p(word, '을/를')} 먹었어요. 식후에 먹어도 되나요?",
            f"{_p(word, '은/는')} 계속 먹어야 하나요?",
            f"{word} 먹으면서 술 마셔도 돼요?",
        ][n % 3]
    return [
        f"I took my {word} this morning, is it fine with food?",
        f"Do I have to keep taking {word}?",
        f"Can I drink alcohol while on {word}?",
    ][n % 3]


def conversation(patient: dict[str, Any], lang: str, turns: int = 20) -> list[str]:
    """A `turns`-message chat: earlier readings first, then the patient's messages, then the same
    conditions and medicines brought up again in questions (other spellings), neutral questions,
    and the latest readings said once more near the end."""
    rng = random.Random(_seed(patient["id"], lang) + 7)
    earlier = {k: v[-1] for k, v in patient["earlier"].items() if v}
    messages = list(_vitals(earlier, lang, rng, patient["carer"])[:1])  # an older reading first
    messages += patient["utterances"][lang]
    things = [("c", n) for n in patient["conditions"] + patient["symptoms"]]
    things += [("m", n) for n in patient["medications"]]
    again = random.Random(_seed(patient["id"], lang) + 9)
    closing = _vitals(patient["values"], lang, again, patient["carer"])[:1]
    fill = turns - len(messages) - len(closing)
    extra: list[str] = []
    mentioned = neutral = 0
    while len(extra) < fill:
        if things and len(extra) % 3 != 2:  # two mentions, then a question about nothing said
            kind, name = things[mentioned % len(things)]
            rounds = mentioned // len(things) + 1  # another spelling each time round
            mention = _mention_condition if kind == "c" else _mention_medicine
            extra.append(mention(patient, name, lang, rounds))
            mentioned += 1
        else:
            extra.append(NEUTRAL[lang][neutral % len(NEUTRAL[lang])])
            neutral += 1
    return (messages + extra)[: turns - len(closing)] + closing


def read_messages(
    messages: Iterable[str],
    extractor: SlotExtractor,
    *,
    start: datetime = REFERENCE,
    step: timedelta = timedelta(minutes=2),
    consolidate: bool = True,
    profile: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], datetime]:
    """The profile the messages build (what the graph's store_memory does: the message's
    telling part read by the extractor, then memory.remember; no graph), and the time of the
    last one."""
    profile = profile or memory.new_profile()
    at = start
    for i, text in enumerate(messages):
        at = start + i * step
        profile, _ = memory.remember(
            profile,
            questions.profile_slots(extractor, text),
            at=at,
            input_id=str(i),
            consolidate=consolidate,
        )
    return profile, at
