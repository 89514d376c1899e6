"""What each clause of a message does before anything is stored (graphs/medical/clauses.py):
statements about the person are kept; questions, suppositions, leave asked for, topics set
aside, the set-aside side of a contrast and other people give nothing. Written as people type:
typos, no spaces, emphatic endings. Each table has firing cases and near-misses."""

from __future__ import annotations

import pytest

from graphs.medical import questions
from graphs.medical.slots import SlotExtractor


@pytest.fixture(scope="module")
def extractor() -> SlotExtractor:
    return SlotExtractor()


def stored(extractor: SlotExtractor, text: str) -> list[tuple[str, str]]:
    """(name, status) of what the profile would learn: "" current, "N" denied, "?" unsure."""
    out = []
    for item in questions.profile_slots(extractor, text).items:
        flag = "N" if item.negated else "?" if item.unsure else ""
        out.append((item.name, flag))
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a question about a medicine or condition does not say the person has or takes it
        ("Do I need to go on a statin?", []),
        ("should i start aspirin??", []),
        ("스타틴 먹어야 되나요?", []),
        ("스타틴먹어야하나요", []),
        ("제가 당뇨인가요", []),
        ("당뇨일까여?", []),
        ("is it gout", []),
        # near-misses: a statement before the question, a reading in it, the person's own
        ("I take metformin, can I exercise?", [("metformin", "")]),
        ("메트포르민 먹는데 운동해도 되나요?", [("metformin", "")]),
        ("당뇨가 있는데요 운동은 뭐가 좋을까요?", [("diabetes", "")]),
        ("혈압 150/95 괜찮은 건가요", [("bp_sys", "?"), ("bp_dia", "?")]),
        ("Can he take ibuprofen for his back pain?", [("back pain", "")]),
        ("열이 나요", [("fever", "")]),  # 나요 that tells
        # a statement joined to the question it is part of, or the first half of a choice
        ("응급실 가야돼요?? 그냥 타이레놀 먹고 누워있으면 될까요", []),
        ("부루펜 먹이고 재워도 될까요", []),
        ("타이레놀먹는게 나아요 이부프로펜이 나아요?", []),
        # near-misses: taken already (past), a statement before a different question
        ("타이레놀 먹었고 지금 자도 되나요?", [("acetaminophen", "")]),
        ("타이레놀 먹어요 괜찮아요?", [("acetaminophen", "")]),
    ],
)
def test_a_question_stores_only_what_it_tells(extractor, text, expected) -> None:
    assert stored(extractor, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a supposition, a plan or a leave asked for
        ("if I start a statin will I get muscle pain?", []),
        ("What if I took ibuprofen with it", []),
        ("스타틴 먹으면 근육통 생기나요?", []),
        ("혹시 타이레놀 먹으면 괜찮아질까요", []),
        ("타이레놀 먹어도되나여?", []),
        ("술 마셔도 돼요??", []),
        ("혈압약 시작할까 고민이에요", []),
        ("is it ok to take ibuprofen", []),
        # what the person heard said of it
        ("이부프로펜은 임신중엔 안된다고 들어서 그건 안먹었어요", []),
        ("스타틴이 근육통 생긴다고 들었어요", []),
        ("I heard statins cause muscle pain", []),
        ("무릎 아파서 진통제 물어본건데요", [("joint pain", "")]),
        ("I was asking about paracetamol", []),
        # near-misses: the statement beside it is kept; "when" is no supposition
        ("머리아파서 타이레놀 먹어도 되나요?", [("headache", "")]),
        ("의사가 당뇨라고 했어요", [("diabetes", "")]),
        ("당뇨약 먹는데 술 마셔도 돼요?", [("antidiabetic", "")]),
        ("담배 피워도 되나요? 저 고혈압 있어요", [("hypertension", "")]),
        ("계단 오르면 가슴이 답답해요", [("chest tightness", "")]),
        ("when I climb stairs my chest gets tight", [("chest tightness", "")]),
    ],
)
def test_a_supposition_or_a_leave_asked_for_stores_nothing(extractor, text, expected) -> None:
    assert stored(extractor, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the set-aside side of a contrast is never stored; the other only when it tells
        ("이부프로펜 말고 타이레놀이요", []),
        ("이부프로펜말고 타이레놀이요!!", []),
        ("not ibuprofen but paracetamol", []),
        ("이부프로펜 말고 타이레놀 먹고 있어요", [("acetaminophen", "")]),
        ("이부프로펜말고 타이레놀 먹어요ㅠ", [("acetaminophen", "")]),
        ("I take paracetamol, not ibuprofen", [("acetaminophen", "")]),
        ("경련 말고 열이 나요", [("fever", "")]),
        # near-misses: no contrast; a denial stays a denial
        ("이부프로펜 먹고 있어요", [("ibuprofen", "")]),
        ("I'm not taking ibuprofen", [("ibuprofen", "N")]),
    ],
)
def test_only_the_kept_side_of_a_contrast_is_stored(extractor, text, expected) -> None:
    assert stored(extractor, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a topic the person sets aside
        ("아니 경련 말고요", []),
        ("술 얘기 안했는데요", []),
        ("술 얘기는 안 했는데요;;", []),
        ("다이어트 얘기가 아닌데", []),
        ("I never said anything about COPD", []),
        ("i didnt mention alcohol", []),
        # near-misses: a denial of having it is a denial, stored as such
        ("I don't have COPD", [("copd", "N")]),
        ("술은 안 마셔요", [("alcohol use", "N")]),
        ("경련은 없어요", [("seizure", "N")]),
    ],
)
def test_a_topic_set_aside_is_not_a_denial(extractor, text, expected) -> None:
    assert stored(extractor, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # another person: a friend, a colleague, a neighbour
        ("친구가 근육통이 있대요", []),
        ("my friend has muscle pain", []),
        ("회사 동료가 당뇨약 먹는대요", []),
        ("옆집 아저씨가 고혈압이래요", []),
        ("남친이 요즘 두통이 심하대요", []),
        # near-misses: the person's own beside a friend's; family history of a condition
        ("친구는 두통이 있고 저는 기침을 해요", [("cough", "")]),
        ("어머니가 당뇨가 있고 저는 두통이 있어요", [("diabetes", ""), ("headache", "")]),
    ],
)
def test_what_is_said_of_another_person_is_not_stored(extractor, text, expected) -> None:
    assert stored(extractor, text) == expected


def test_a_relatives_symptom_is_not_family_history(extractor) -> None:
    said = questions.profile_slots(extractor, "저는 기침하고 남편은 두통이 있어요")
    assert [(i.name, i.family) for i in said.items] == [("cough", False)]


@pytest.mark.parametrize(
    ("text", "subject", "names"),
    [
        ("우리 애가 열이 나요. 아들이 5살이에요", "child", ["fever", "age"]),
        ("딸이 기침해요 애가 밤에만 그래요", "daughter", ["sex", "cough"]),
        # near-miss: two relatives who are not one person
        ("아들이 열이 나고 남편은 고혈압이 있어요", "son", ["sex", "fever", "hypertension"]),
    ],
)
def test_one_child_named_two_ways_is_one_person(extractor, text, subject, names) -> None:
    said = questions.profile_slots(extractor, text)
    assert said.subject == subject
    assert [i.name for i in said.items] == names
    assert [i.family for i in said.items] == [n == "hypertension" for n in names]


@pytest.mark.parametrize(
    ("text", "name", "details"),
    [
        ("2주째 기침해요", "cough", ("2주째",)),
        ("기침이 3일째 계속돼요", "cough", ("3일째",)),
        ("coughing for 3 days", "cough", ("for 3 days",)),
        ("chest gets tight on stairs, gone with rest", "chest tightness", ("on stairs",)),
        ("기침은 밤에만 나요", "cough", ("밤에만",)),
        ("임신 32주예요", "pregnancy", ("32주",)),
        ("I'm 32 weeks pregnant", "pregnancy", ("32 weeks",)),
        # near-misses: nothing beside it; a week that is not a pregnancy's
        ("기침해요", "cough", ()),
        ("임신 중인데 2주 전에 감기 걸렸어요", "pregnancy", ()),
    ],
)
def test_durations_patterns_and_pregnancy_weeks_are_kept(extractor, text, name, details) -> None:
    item = next(i for i in questions.profile_slots(extractor, text).items if i.name == name)
    assert item.details[: len(details)] == details and (details or not item.details)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("어제 넘어져서 머리를 부딪혔어요", ["fall", "head injury"]),
        ("he fell and hit his head", ["fall", "head injury"]),
        # near-misses
        ("I fell asleep on the sofa", []),
        ("낙상 예방은 어떻게 하나요?", []),
    ],
)
def test_a_fall_and_a_knock_to_the_head_are_kept(extractor, text, names) -> None:
    assert [i.name for i in questions.profile_slots(extractor, text).items] == names


@pytest.mark.parametrize(
    ("text", "context"),
    [
        ("집에서 잰 혈압이 138/86이에요", ("home",)),
        ("BP at home 140/90", ("home",)),
        ("병원에서 잰 혈압 150/95", ("clinic",)),
        ("아침 공복에 혈당 130", ("fasting",)),
        ("blood sugar 180 after lunch", ("after meal",)),
        ("혈압 130/80", ()),  # near-miss: said nowhere
    ],
)
def test_a_reading_keeps_where_and_when_it_was_taken(extractor, text, context) -> None:
    items = [i for i in questions.profile_slots(extractor, text).items if i.slot == "vitals"]
    assert items and all(i.context == context for i in items)


@pytest.mark.parametrize(
    ("text", "family"),
    [
        # a spouse or in-law is no blood kin of the speaker: never the speaker's family history
        # (the wife here is the person cared for, so hers are her own items)
        ("시어머니가 예전에 임신중독증 있었대요", []),
        ("남편이 뇌졸중이 있어요", []),
        ("my wife has kidney stones", []),
        # near-misses: blood relatives are family history; of a child, the husband is the father
        ("아버지가 당뇨가 있어요", ["diabetes"]),
        ("my mother had breast cancer", ["breast cancer"]),
    ],
)
def test_family_by_marriage_is_no_family_history(extractor, text, family) -> None:
    said = questions.profile_slots(extractor, text)
    assert [i.name for i in said.items if i.family] == family
