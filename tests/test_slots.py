"""Table-driven tests of the medical slot extractor (graphs/medical/slots.py) and its lexicon.

Each case states the exact items a message must give, as (slot, name, value, flags) where the
flags are N(egated), F(amily), H(istory) and ? (unsure), and near-misses that must give none.
"""

from __future__ import annotations

import copy
import re
import time

import pytest
import yaml
from pydantic import ValidationError

from graphs.medical.slots import SlotExtraction, SlotExtractor, SlotItem
from knowledge.medical_lexicon import (
    LEXICON_PATH,
    MedicalLexicon,
    expand_form,
    load_medical_lexicon,
    surface_key,
)

Row = tuple[str, str, object, str]


@pytest.fixture(scope="module")
def extractor() -> SlotExtractor:
    return SlotExtractor()


def flags(item: SlotItem) -> str:
    """The item's flags as letters: N(egated) F(amily) H(istory) ?(unsure)."""
    marks = (("N", item.negated), ("F", item.family), ("H", item.history), ("?", item.unsure))
    return "".join(letter for letter, on in marks if on)


def rows(result: SlotExtraction) -> list[Row]:
    return [(i.slot, i.name, i.value, flags(i)) for i in result.items]


def v(name: str, value: object, marks: str = "") -> Row:
    """A vital sign row."""
    return ("vitals", name, value, marks)


def lab(name: str, value: object, marks: str = "") -> Row:
    return ("labs", name, value, marks)


def c(name: str, marks: str = "") -> Row:
    """A condition row."""
    return ("conditions", name, None, marks)


def s(name: str, marks: str = "") -> Row:
    """A symptom row."""
    return ("symptoms", name, None, marks)


def m(name: str, marks: str = "") -> Row:
    """A medication row."""
    return ("medications", name, None, marks)


def age(value: int, marks: str = "") -> Row:
    return ("demographics", "age", value, marks)


def sex(value: str) -> Row:
    return ("demographics", "sex", value, "")


# --- vitals and labs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("혈압 150/95", [v("bp_sys", 150), v("bp_dia", 95)]),
        ("혈압이 150에 95", [v("bp_sys", 150), v("bp_dia", 95)]),
        # a lower bound, and one number only: systolic, to be confirmed
        ("혈압이 150 넘게 나왔어요", [v("bp_sys", 150, "?")]),
        ("공복혈당 180", [v("glucose", 180)]),
        ("당 수치가 200 넘었대요", [v("glucose", 200, "?")]),
        ("당화혈색소 8.2%", [lab("hba1c", 8.2)]),
        ("체온 38.5도", [v("temp", 38.5)]),
        ("열이 38도", [v("temp", 38.0)]),
        ("혈압 140/90mmHg", [v("bp_sys", 140), v("bp_dia", 90)]),
        ("혈당 130mg/dL, 당화혈색소 6.9", [v("glucose", 130), lab("hba1c", 6.9)]),
        ("맥박 90", [v("hr", 90)]),
        ("LDL 160", [lab("ldl", 160)]),
        ("TSH 6.5", [lab("tsh", 6.5)]),
        ("BP 128/82", [v("bp_sys", 128), v("bp_dia", 82)]),
        ("BP was like 140 over 90", [v("bp_sys", 140, "?"), v("bp_dia", 90, "?")]),
        ("HbA1c 7.1", [lab("hba1c", 7.1)]),
        ("my A1c is 6.8", [lab("hba1c", 6.8)]),
        ("fasting sugar 130", [v("glucose", 130)]),
        ("temp 101.3F", [v("temp", 38.5)]),
        ("weight 80kg", [v("weight_kg", 80.0)]),
        ("몸무게 65킬로", [v("weight_kg", 65.0)]),
        ("산소포화도 92%", [v("spo2", 92)]),
        ("수축기 140 이완기 90", [v("bp_sys", 140), v("bp_dia", 90)]),
        ("혈압은 130에 80 정도", [v("bp_sys", 130, "?"), v("bp_dia", 80, "?")]),
        ("혈압이 한 150?", [v("bp_sys", 150, "?")]),
        ("키 175 몸무게 70", [v("height_cm", 175.0), v("weight_kg", 70.0)]),
        ("I'm 175cm tall", [v("height_cm", 175.0)]),
        ("38도 열이 나요", [v("temp", 38.0), s("fever")]),
        ("pulse 72 bpm", [v("hr", 72)]),
        ("SpO2 95", [v("spo2", 95)]),
        ("weight 176 lbs", [v("weight_kg", 79.8)]),
        ("eGFR 55", [lab("egfr", 55)]),
        ("AST 40 ALT 52", [lab("ast", 40), lab("alt", 52)]),
        ("중성지방 250", [lab("tg", 250)]),
        ("총콜레스테롤 240", [lab("total_chol", 240)]),
        ("HDL 45", [lab("hdl", 45)]),
        ("크레아티닌 1.3", [lab("creatinine", 1.3)]),
        ("헤모글로빈 11.5", [lab("hb", 11.5)]),
        ("혈당이 300이 넘고 목이 말라요", [v("glucose", 300), s("thirst")]),
        # no unit, impossible as written, possible in a second unit: converted, to be confirmed
        ("혈당 7.2", [v("glucose", 130, "?")]),
        ("temp 101", [v("temp", 38.3, "?")]),
        ("LDL 3.2", [lab("ldl", 124, "?")]),
        ("creatinine 90", [lab("creatinine", 1.02, "?")]),
        ("hemoglobin 130", [lab("hb", 13.0, "?")]),
    ],
)
def test_values(extractor: SlotExtractor, text: str, expected: list[Row]) -> None:
    result = extractor.extract(text)
    assert rows(result) == expected
    assert result.rejected == ()


def test_values_of_whole_units_are_ints_and_keep_their_words(extractor: SlotExtractor) -> None:
    items = extractor.extract("혈압이 150에 95, 체온 37.8도").items
    assert [type(i.value) for i in items] == [int, int, float]
    assert [i.text for i in items] == ["혈압이 150에 95", "혈압이 150에 95", "체온 37.8도"]
    assert [i.name_ko for i in items] == ["수축기 혈압", "이완기 혈압", "체온"]


@pytest.mark.parametrize(
    ("text", "rejected"),
    [
        ("혈압 400/20", ("bp", "out_of_range")),
        ("체온 60도", ("temp", "out_of_range")),
        ("HbA1c 45%", ("hba1c", "out_of_range")),
        ("혈압 80/120", ("bp", "diastolic_above_systolic")),
        ("맥박 400", ("hr", "out_of_range")),
        ("산소포화도 120%", ("spo2", "out_of_range")),
        ("150살이에요", ("age", "out_of_range")),
    ],
)
def test_impossible_values_are_rejected_not_stored(
    extractor: SlotExtractor, text: str, rejected: tuple[str, str]
) -> None:
    result = extractor.extract(text)
    assert result.items == ()
    assert result.rejected == (rejected,)


# --- conditions, symptoms, medicines ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("메트포르민", [m("metformin")]),
        ("메트formin 먹어요", [m("metformin")]),
        ("메트포민 먹어요", [m("metformin")]),  # a common misspelling
        ("다이아벡스 먹어요", [m("metformin")]),  # a brand
        ("고 혈압", [c("hypertension")]),
        ("고혈압이 있어요", [c("hypertension")]),
        ("혈압이 높아요", [c("hypertension")]),
        ("당뇨가 있어요", [c("diabetes")]),
        ("I'm diabetic", [c("diabetes")]),
        ("type 2 diabetes", [c("diabetes")]),
        ("제2형 당뇨예요", [c("diabetes")]),  # not a brother (형)
        ("high blood pressure", [c("hypertension")]),
        ("hypertention", [c("hypertension")]),
        ("당뇨랑 고 혈압 있어요", [c("diabetes"), c("hypertension")]),
        ("a-fib 있어요", [c("atrial fibrillation")]),
        ("I have A fib", [c("atrial fibrillation")]),
        ("parkinsons disease", [c("parkinson's disease")]),
        ("prediabetes", [c("prediabetes")]),
        ("공복혈당장애", [c("prediabetes")]),
        ("임신 중이에요", [c("pregnancy")]),
        ("B형간염 보균자예요", [c("hepatitis b")]),
        ("페니실린 알레르기 있어요", [c("penicillin allergy")]),
        ("메트포르민 알레르기", [c("drug allergy")]),
        ("allergic to metformin", [c("drug allergy")]),
        ("머리가 아파요", [s("headache")]),
        ("머리 아픔", [s("headache")]),
        ("두통", [s("headache")]),
        ("골치가 아파요", [s("headache")]),
        ("I have headaches", [s("headache")]),
        ("어지러워요", [s("dizziness")]),
        ("숨참", [s("shortness of breath")]),
        ("가슴이 두근거려요", [s("palpitations")]),
        ("소변을 자주 봐요", [s("frequent urination")]),
        ("손발이 저려요", [s("numbness")]),
        ("배가 아파요", [s("abdominal pain")]),
        ("허리가 아파요", [s("back pain")]),
        ("다리가 부었어요", [s("swelling")]),
        ("chest pain and shortness of breath", [s("chest pain"), s("shortness of breath")]),
        ("어제부터 열이 나고 기침을 해요", [s("fever"), s("cough")]),
        ("no appetite", [s("loss of appetite")]),  # the "no" belongs to the symptom
        ("체중이 5kg 줄었어요", [s("weight loss")]),  # a change, not a weight
        ("노바스크 먹어요", [m("amlodipine")]),
        ("리피토정 먹어요", [m("atorvastatin")]),
        ("타이래놀 먹었어요", [m("acetaminophen")]),
        ("paracetamol", [m("acetaminophen")]),
        ("자누비아랑 자디앙 먹어요", [m("sitagliptin"), m("empagliflozin")]),
        ("플라빅스, 와파린", [m("clopidogrel"), m("warfarin")]),
        ("씬지로이드 먹어요", [m("levothyroxine")]),
        ("스틸녹스 먹고 자요", [m("zolpidem")]),
        ("당뇨약 먹어요", [m("antidiabetic")]),
        ("blood pressure meds", [m("antihypertensive")]),
        ("I take blood thinners", [m("antithrombotic")]),
        ("albuterol inhaler", [m("salbutamol"), m("asthma medication")]),
    ],
)
def test_terms(extractor: SlotExtractor, text: str, expected: list[Row]) -> None:
    assert rows(extractor.extract(text)) == expected


def test_the_ways_of_saying_headache_are_one_item(extractor: SlotExtractor) -> None:
    said = ["머리가 아파요", "머리 아픔", "두통", "골치가 아파", "headache", "my head hurts"]
    found = {(i.slot, i.name, i.name_ko) for t in said for i in extractor.extract(t).items}
    assert found == {("symptoms", "headache", "두통")}


@pytest.mark.parametrize(
    ("text", "expected", "kept"),
    [
        ("머리가 좀 아파요", [s("headache")], "머리가 좀 아파"),
        ("머리가 너무 아파요", [s("headache")], "머리가 너무 아파"),
        ("배가 살짝 아파요", [s("abdominal pain")], "배가 살짝 아파"),
        ("숨이 좀 차요", [s("shortness of breath")], "숨이 좀 차"),
        ("my head really hurts today", [s("headache")], "my head really hurts"),
        ("I feel very dizzy", [s("dizziness")], "dizzy"),
        # a form that holds a filler itself is still read whole
        ("땀이 많이 나요", [s("sweating")], "땀이 많이 나"),
        ("소변을 너무 자주 봐요", [s("frequent urination")], "소변을 너무 자주"),
        ("밤에 자꾸 깨요", [s("trouble sleeping")], "밤에 자꾸 깨"),
        # a filler never turns a denial around
        ("당뇨는 좀 없어요", [c("diabetes", "N")], "당뇨"),
    ],
)
def test_filler_words_inside_a_phrase_are_skipped_and_kept(
    extractor: SlotExtractor, text: str, expected: list[Row], kept: str
) -> None:
    result = extractor.extract(text)
    assert rows(result) == expected
    assert result.items[0].text == kept


@pytest.mark.parametrize(
    ("text", "topics"),
    [
        ("운동은 어떤 게 괜찮을까요?", ["exercise"]),
        ("그럼 걷기는 하루에 얼마나 해야돼요?", ["exercise"]),
        ("what exercise is safe for me?", ["exercise"]),
        ("is it ok to drink a glass of wine?", ["alcohol"]),
        ("당뇨 있으면 어떤 음식을 피해야 해요?", ["diet"]),
        ("요즘 잠을 잘 못 자요", ["sleep"]),
        ("독감 주사 맞아도 되나요?", ["vaccination"]),
        ("짜게 먹으면 안 되나요? 운동도 해야 하나요?", ["salt", "exercise"]),
        # near-misses: no topic
        ("수술 날짜가 잡혔어요", []),
        ("잠깐만요", []),
        ("메트포르민 부작용이 뭐예요?", []),
    ],
)
def test_the_topic_a_question_asks_about(
    extractor: SlotExtractor, text: str, topics: list[str]
) -> None:
    assert extractor.topics(text) == topics
    assert all(i.slot != "topics" for i in extractor.extract(text).items)  # never stored


def test_a_name_stands_for_its_class_and_aliases() -> None:
    lexicon = load_medical_lexicon()
    assert lexicon.concepts_of("lisinopril") == ["lisinopril", "ace inhibitor"]
    assert lexicon.concepts_of("losartan") == [
        "losartan",
        "angiotensin ii receptor blocker",
        "angiotensin receptor blocker",
    ]
    assert lexicon.concepts_of("alcohol use") == ["alcohol use", "alcohol"]
    assert lexicon.concepts_of("diabetes") == ["diabetes"]


@pytest.mark.parametrize(
    ("text", "name", "kept"),
    [
        ("메트포르민 500mg 하루 두 번", "metformin", "메트포르민 500mg 하루 두 번"),
        ("I take metformin 500mg twice a day", "metformin", "metformin 500mg twice a day"),
        ("Tylenol 500mg as needed", "acetaminophen", "Tylenol 500mg as needed"),
        ("타이레놀 먹었어요", "acetaminophen", "타이레놀"),
        ("혈압약 2알 먹어요", "antihypertensive", "혈압약 2알"),
    ],
)
def test_a_medicine_keeps_its_dose_in_its_text(
    extractor: SlotExtractor, text: str, name: str, kept: str
) -> None:
    result = extractor.extract(text)
    assert [(i.name, i.text, flags(i)) for i in result.items] == [(name, kept, "")]
    assert result.unknown_medicines == ()


def test_dosing_without_a_medicine_gives_nothing(extractor: SlotExtractor) -> None:
    result = extractor.extract("약은 아침저녁으로 한 알씩")
    assert result == SlotExtraction(items=(), subject="self", rejected=(), unknown_medicines=())


# --- negation, history, family ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("당뇨는 없어요", [c("diabetes", "N")]),
        ("no allergies", [c("allergy", "N")]),
        ("allergies: none", [c("allergy", "N")]),
        ("I don't smoke", [c("smoking", "N")]),
        ("술은 안 마셔요", [c("alcohol use", "N")]),
        ("열은 안 나요", [s("fever", "N")]),
        ("denies chest pain", [s("chest pain", "N")]),
        # stopped: not current, but taken before
        ("혈압약은 끊었어요", [m("antihypertensive", "NH")]),
        ("I stopped taking metformin", [m("metformin", "NH")]),
        ("I quit smoking", [c("smoking", "NH")]),
        ("담배 끊었어요", [c("smoking", "NH")]),
        # a cue reaches the words listed with it, and no further
        ("두통은 없고 어지러워요", [s("headache", "N"), s("dizziness")]),
        ("당뇨, 고혈압은 없어요", [c("diabetes", "N"), c("hypertension", "N")]),
        ("no fever or cough", [s("fever", "N"), s("cough", "N")]),
        ("I have diabetes but no asthma", [c("diabetes"), c("asthma", "N")]),
        ("술 담배 안 해요", [c("alcohol use", "N"), c("smoking", "N")]),
        ("당뇨 없음, 고혈압 있음", [c("diabetes", "N"), c("hypertension")]),
        ("not pregnant", [c("pregnancy", "N")]),
        ("당뇨 때문에 술은 안 마셔요", [c("diabetes"), c("alcohol use", "N")]),
        ("당뇨가 아니라 고혈압이에요", [c("diabetes", "N"), c("hypertension")]),
        # hedged
        ("당뇨인 것 같아요", [c("diabetes", "?")]),
        ("I don't know if I have diabetes", [c("diabetes", "?")]),
        # past
        ("예전에 위궤양 있었어요", [c("peptic ulcer", "H")]),
        ("had a stroke 5 years ago", [c("stroke", "H")]),
        ("5년 전에 위암 수술했어요", [c("stomach cancer", "H")]),
        ("10살 때 천식이 있었어요", [c("asthma", "H")]),
        ("예전에 혈압이 180까지 올라간 적 있어요", [v("bp_sys", 180, "H?")]),
        # begun in the past and still there
        ("I've had diabetes for 10 years", [c("diabetes")]),
        ("10년 전부터 당뇨가 있어요", [c("diabetes")]),
        ("예전에 당뇨 진단 받았어요", [c("diabetes")]),
        # a relative's: family history, kept apart
        ("어머니가 당뇨", [c("diabetes", "F")]),
        ("my dad had a heart attack", [c("myocardial infarction", "FH")]),
        ("family history of diabetes", [c("diabetes", "F")]),
        ("당뇨 가족력 있어요", [c("diabetes", "F")]),
        ("diabetes runs in my family", [c("diabetes", "F")]),
        ("돌아가신 아버지가 당뇨였어요", [c("diabetes", "FH")]),
        ("어머니가 당뇨가 있고 저는 두통이 있어요", [c("diabetes", "F"), s("headache")]),
        (
            "My mother has diabetes and I have high blood pressure",
            [c("diabetes", "F"), c("hypertension")],
        ),
    ],
)
def test_how_a_mention_is_meant(extractor: SlotExtractor, text: str, expected: list[Row]) -> None:
    result = extractor.extract(text)
    assert rows(result) == expected
    assert result.subject == "self"


# --- who the patient is -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "subject", "expected"),
    [
        (
            "아버지가 80세신데 혈압약 드세요",
            "father",
            [sex("male"), age(80), m("antihypertensive")],
        ),
        ("my mom is 72 and has diabetes", "mother", [age(72), sex("female"), c("diabetes")]),
        ("저희 어머니가 당뇨가 있으세요", "mother", [sex("female"), c("diabetes")]),
        ("제가 아버지를 모시고 있는데 당뇨가 있으세요", "father", [sex("male"), c("diabetes")]),
        ("I'm asking for my dad. He takes warfarin", "father", [sex("male"), m("warfarin")]),
        ("I'm worried about my dad, he has diabetes", "father", [sex("male"), c("diabetes")]),
        (
            "my dad's blood pressure is 150/90",
            "father",
            [sex("male"), v("bp_sys", 150), v("bp_dia", 90)],
        ),
        ("우리 아이가 5살인데 열이 39도예요", "child", [age(5), v("temp", 39.0)]),
        ("딸이 기침을 해요", "daughter", [sex("female"), s("cough")]),
        ("아버지가 80이세요", "father", [sex("male"), age(80)]),
        (
            "엄마 혈압이 170/100 나왔어요",
            "mother",
            [sex("female"), v("bp_sys", 170), v("bp_dia", 100)],
        ),
        ("저는 괜찮은데 남편이 숨이 차대요", "husband", [sex("male"), s("shortness of breath")]),
        ("아이가 3살인데 기침을 해요 콧물도 나요", "child", [age(3), s("cough"), s("runny nose")]),
        # the speaker's own age: the mother's is neither the patient's nor family history
        ("저는 50살이고 어머니는 80세세요", "self", [age(50)]),
        # a relative who has died is never the patient, and an age then is no age now
        ("아버지가 80세셨을 때 돌아가셨어요", "self", []),
    ],
)
def test_a_carer_speaks_for_the_patient(
    extractor: SlotExtractor, text: str, subject: str, expected: list[Row]
) -> None:
    result = extractor.extract(text)
    assert (result.subject, rows(result)) == (subject, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("67세 남자예요", [age(67), sex("male")]),
        ("67세 남", [age(67), sex("male")]),
        ("I'm a 45 year old woman", [age(45), sex("female")]),
        ("나이는 58이에요", [age(58)]),
        ("연세가 80이세요", [age(80)]),
        ("67yo", [age(67)]),
        ("67 years old", [age(67)]),
        ("만 67세", [age(67)]),
        ("예순일곱 살이에요", [age(67)]),
        ("I'm 67", [age(67)]),
        ("저는 여자고 45살이에요", [sex("female"), age(45)]),
        ("I am female", [sex("female")]),
    ],
)
def test_demographics(extractor: SlotExtractor, text: str, expected: list[Row]) -> None:
    assert rows(extractor.extract(text)) == expected


# --- mixed languages, unknown medicines, near-misses ------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metformin 먹고 있고 혈압 130/85", [m("metformin"), v("bp_sys", 130), v("bp_dia", 85)]),
        (
            "당뇨 있고 metformin 500mg 먹어요, BP 140/90",
            [c("diabetes"), m("metformin"), v("bp_sys", 140), v("bp_dia", 90)],
        ),
        ("HbA1c 7.5%이고 자디앙 먹어요", [lab("hba1c", 7.5), m("empagliflozin")]),
        ("2024년 3월 15일에 혈당 130", [v("glucose", 130)]),
    ],
)
def test_korean_and_english_in_one_message(
    extractor: SlotExtractor, text: str, expected: list[Row]
) -> None:
    assert rows(extractor.extract(text)) == expected


@pytest.mark.parametrize(
    ("text", "unknown"),
    [
        ("엑스자임정 먹어요", ("엑스자임정",)),
        ("Zorbex 20mg daily", ("Zorbex",)),
        ("리피토정 먹어요", ()),
        ("메트포르민 500mg", ()),
        ("걱정이에요", ()),
        ("하루 500mg 먹어요", ()),
    ],
)
def test_unknown_medicines(extractor: SlotExtractor, text: str, unknown: tuple[str, ...]) -> None:
    assert extractor.extract(text).unknown_medicines == unknown


@pytest.mark.parametrize(
    "text",
    [
        "안녕하세요",
        "혈압 재러 병원 가요",  # a cue with no number
        "2024년 3월 15일",  # a date is no vital
        "010-1234-5678",  # a phone number gives no values
        "혈당 3/15에 쟀어요",  # a date after a cue
        "3시에 혈당 쟀어요",
        "혈당 3시간 후에 쟀어요",  # a count after a cue
        "혈압이 150에서 130으로 떨어졌어요",  # a change, not a reading
        "체온계로 쟀어요",
        "통풍이 잘 되는 방이에요",  # ventilation, not gout
        "암기 과목이 어려워요",  # not cancer
        "열심히 운동해요",  # not fever
        "키위 3개 먹었어요",  # not a height
        "남자친구가 생겼어요",  # not the speaker's sex
        "대출 연체했더니 추심이 와요",  # 연체 is no indigestion (체했)
        "물을 부었어요",  # pouring, not swelling
        "하루 날 잡아서 갈게요",  # not the brand 하루날
        "비 만 오면 출근하기 싫어요",  # not obesity
        "a cold drink please",
        "I'm tired of waiting",
        "I'm 180cm",  # no age
    ],
)
def test_near_misses_give_nothing(extractor: SlotExtractor, text: str) -> None:
    result = extractor.extract(text)
    assert (result.items, result.rejected, result.unknown_medicines) == ((), (), ())
    assert result.subject == "self"


def test_extraction_is_fast_enough_for_every_message(extractor: SlotExtractor) -> None:
    message = (
        "아버지가 80세신데 당뇨가 있고 메트포르민 500mg 하루 두 번 드세요. 혈압은 150/95 정도예요"
    )
    # CPU time, not wall time: another job on the machine slows the clock, not the extractor.
    started = time.process_time()
    for _ in range(200):
        extractor.extract(message)
    assert time.process_time() - started < 2.0  # about 1 ms a message; generous for slow CI


# --- the lexicon ------------------------------------------------------------------------------


def test_the_lexicon_loads_and_validates() -> None:
    lexicon = load_medical_lexicon()
    assert lexicon is load_medical_lexicon()  # read once per process
    assert len(lexicon.conditions) >= 40
    assert len(lexicon.symptoms) >= 40
    assert len(lexicon.medications) >= 60
    keys = {r.key for measure in lexicon.measures for r in measure.readings}
    assert keys >= {
        *("bp_sys", "bp_dia", "glucose", "temp", "hr", "weight_kg", "height_cm", "spo2"),
        *("hba1c", "ldl", "hdl", "tg", "total_chol", "tsh", "creatinine", "egfr", "ast", "alt"),
        "hb",
    }


def test_every_medication_has_a_korean_and_a_canonical_english_name() -> None:
    lexicon = load_medical_lexicon()
    groups = {g.name for g in lexicon.medication_groups}
    for medication in lexicon.medications:
        assert re.search(r"[가-힣]", medication.ko), medication.name
        assert re.fullmatch(r"[a-z0-9][a-z0-9 /\-.']*", medication.name), medication.name
        assert medication.drug_class.strip(), medication.name
        assert set(medication.groups) <= groups, medication.name


@pytest.mark.parametrize(
    ("slot", "term"),
    [(slot, term) for slot, term in load_medical_lexicon().terms()],
    ids=lambda value: getattr(value, "name", value),
)
def test_every_term_is_found_by_its_own_names(extractor: SlotExtractor, slot, term) -> None:
    """The English and the Korean name of each entry both come back as that entry."""
    for said in (term.name, term.ko):
        found = [(i.slot, i.name) for i in extractor.extract(said).items]
        assert found == [(slot, term.name)], said


def test_expand_form_spells_out_options() -> None:
    assert expand_form("머리(가|는|) 아파") == ["머리가 아파", "머리는 아파", "머리 아파"]
    assert expand_form("^열(이) 나") == ["^열이 나", "^열 나"]
    assert surface_key("A-fib") == surface_key("a fib") == "afib"


def _raw() -> dict:
    return yaml.safe_load(LEXICON_PATH.read_text(encoding="utf-8"))


def _with(change) -> dict:
    raw = copy.deepcopy(_raw())
    change(raw)
    return raw


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["conditions"][0].update(typo="x"), "Extra inputs are not permitted"),
        (lambda r: r["symptoms"][0]["forms"]["ko"].append("당뇨"), "belongs to both"),
        (lambda r: r["medications"][0].update(groups=["no such group"]), "unknown groups"),
        (lambda r: r["cues"]["history"].append("(unclosed"), "bad pattern"),
        (lambda r: r["measures"][0]["readings"][0].update(min=500), "min must be below max"),
        (lambda r: r["conditions"][0].update(ko="당뇨질환"), "not among its own forms"),
        (lambda r: r["conditions"][0]["forms"]["ko"].append("당(뇨(병))"), "nested"),
        (lambda r: r.update(medications=r["medications"][:10]), "at least 60"),
        (lambda r: r["topics"][1]["forms"]["ko"].append("운동"), "belongs to both"),
        (lambda r: r["concept_aliases"].update({"ACE": "x"}), "not lower case"),
    ],
)
def test_a_broken_lexicon_is_refused(change, message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        MedicalLexicon.model_validate(_with(change))
