"""Whom a corpus entry fits (graphs/medical/fit.py) and where a description leads
(graphs/medical/leads.py), as pure functions over a person and what a question asks about."""

from __future__ import annotations

import pytest

from graphs.medical.fit import Person, age_group, asked_of, fits
from graphs.medical.leads import led_entries
from knowledge.medical_corpus import by_id

MAN = Person(sex="male", age_group="adult")
WOMAN_50 = Person(sex="female", age_group="adult")
PREGNANT = Person(sex="female", age_group="adult", pregnant=True, held=frozenset({"pregnancy"}))
CHILD_5 = Person(age_group="child")
UNKNOWN = Person()
NO_COPD = Person(denied=frozenset({"copd"}))


@pytest.mark.parametrize(
    ("entry", "person", "question", "tags", "expected"),
    [
        ("pregnancy-medicines-ask-first", MAN, "임신 중 약은요?", ["pregnancy"], False),
        ("pregnancy-medicines-ask-first", WOMAN_50, "진통제 먹어도 돼요?", ["analgesic"], False),
        ("pregnancy-medicines-ask-first", WOMAN_50, "임신 중 진통제는요?", [], True),
        ("pregnancy-medicines-ask-first", PREGNANT, "진통제 먹어도 돼요?", ["analgesic"], True),
        ("lifestyle-weight-management", CHILD_5, "애 몸무게 18키로", ["weight management"], False),
        ("lifestyle-weight-management", UNKNOWN, "살 빼려면?", ["weight management"], True),
        ("lifestyle-weight-management", PREGNANT, "체중 관리는요?", ["weight management"], False),
        ("child-febrile-seizure", CHILD_5, "5살 아이가 열이 나요", ["fever"], False),
        ("child-febrile-seizure", CHILD_5, "열나다 경련했어요", ["fever", "seizure"], True),
        ("symptom-fever-children", UNKNOWN, "열이 나요", ["fever"], False),
        ("symptom-fever-children", UNKNOWN, "우리 애가 열이 나요", ["fever"], True),
        ("fever-infant-under-3-months", CHILD_5, "열이 나요", ["fever"], False),
        ("fever-infant-under-3-months", UNKNOWN, "생후 2개월 아기 열", ["fever"], True),
        ("symptom-fever-adults", CHILD_5, "열이 나요", ["fever"], False),
        ("lifestyle-exercise-older-adults", WOMAN_50, "운동은요?", ["exercise"], False),
        ("copd-flare-ups", NO_COPD, "COPD 없어요", ["copd"], False),
        ("copd-flare-ups", UNKNOWN, "COPD 악화는요?", ["copd"], True),
        ("symptom-headache", MAN, "머리가 아파요", ["headache"], True),
    ],
)
def test_an_entry_fits_only_whom_it_applies_to(
    entry: str, person: Person, question: str, tags: list[str], expected: bool
) -> None:
    assert fits(by_id(entry).applies_to, person, asked_of(question, tags)) is expected


BABY_3_WEEKS = Person(age_group="infant")
TODDLER_2 = Person(age_group="child")
BOY_5 = Person(sex="male", age_group="child")
PREGNANT_34 = Person(sex="female", age_group="adult", pregnant=True, held=frozenset({"pregnancy"}))
MAN_45 = Person(sex="male", age_group="adult")
WOMAN_80_ON_WARFARIN = Person(
    sex="female", age_group="older", held=frozenset({"warfarin", "vitamin k antagonist"})
)
MAN_NO_DIABETES = Person(sex="male", age_group="adult", denied=frozenset({"diabetes"}))
WITH_DIABETES = Person(age_group="adult", held=frozenset({"diabetes"}))

VOMITING = ("토해요", ["vomiting"])
SLEEP = ("잠을 잘 못 자요", ["trouble sleeping"])
EXERCISE = ("운동은 어떻게 해요?", ["exercise"])


@pytest.mark.parametrize(
    ("entry", "person", "asked", "expected"),
    [
        # adult vomiting (drinking, early pregnancy): never a baby or a child
        ("symptom-nausea-vomiting", BABY_3_WEEKS, VOMITING, False),
        ("symptom-nausea-vomiting", TODDLER_2, VOMITING, False),
        ("symptom-nausea-vomiting", BOY_5, VOMITING, False),
        ("symptom-nausea-vomiting", UNKNOWN, ("3주 된 신생아가 토해요", ["vomiting"]), False),
        ("symptom-nausea-vomiting", PREGNANT_34, VOMITING, True),
        ("symptom-nausea-vomiting", MAN_45, VOMITING, True),
        ("symptom-nausea-vomiting", UNKNOWN, VOMITING, True),  # the adult writing
        ("child-dehydration", BABY_3_WEEKS, VOMITING, True),
        ("child-dehydration", MAN_45, VOMITING, False),
        # adult fever, sleep, dizziness, painkiller texts
        ("symptom-fever-adults", TODDLER_2, ("열이 나요", ["fever"]), False),
        ("symptom-fever-adults", BABY_3_WEEKS, ("열이 나요", ["fever"]), False),
        ("symptom-fever-adults", MAN_45, ("열이 나요", ["fever"]), True),
        ("child-fever-at-home", TODDLER_2, ("열이 나요", ["fever"]), True),
        ("medicine-acetaminophen", TODDLER_2, ("해열제요", ["acetaminophen"]), False),
        ("lifestyle-sleep-habits", BABY_3_WEEKS, SLEEP, False),
        ("lifestyle-sleep-habits", UNKNOWN, ("우리 애가 잠을 안 자요", []), False),
        ("lifestyle-sleep-habits", MAN_45, SLEEP, True),
        ("insomnia-overview", TODDLER_2, SLEEP, False),
        ("symptom-dizziness", BOY_5, ("어지럽대요", ["dizziness"]), False),
        ("symptom-dizziness", WOMAN_80_ON_WARFARIN, ("어지러워요", ["dizziness"]), True),
        ("symptom-headache", BABY_3_WEEKS, ("머리가 아파요", ["headache"]), False),
        ("symptom-headache", BOY_5, ("머리가 아프대요", ["headache"]), True),
        # children's cold care is no husband's; the general cough text is anyone's
        ("child-cough-and-cold", MAN_45, ("기침해요", ["cough"]), False),
        ("symptom-cough", MAN_45, ("기침해요", ["cough"]), True),
        ("symptom-cough", BABY_3_WEEKS, ("기침해요", ["cough"]), True),
        ("emergency-choking", BABY_3_WEEKS, ("목에 걸렸어요", ["choking"]), True),
        # "when you have diabetes": only for one who has it or asks about it
        ("lifestyle-exercise-with-diabetes", MAN_NO_DIABETES, EXERCISE, False),
        ("lifestyle-exercise-with-diabetes", MAN_45, EXERCISE, False),
        ("lifestyle-exercise-with-diabetes", WITH_DIABETES, EXERCISE, True),
        (
            "lifestyle-exercise-with-diabetes",
            UNKNOWN,
            ("당뇨 운동", ["diabetes", "exercise"]),
            True,
        ),
        ("lifestyle-diet-diabetes", MAN_NO_DIABETES, ("식단은요?", ["diet"]), False),
        ("lifestyle-physical-activity-adults", MAN_NO_DIABETES, EXERCISE, True),
        # pregnancy is no man's; a pregnant woman asking about her baby is still an adult
        ("pregnancy-morning-sickness", MAN_45, ("입덧은요?", ["pregnancy", "nausea"]), False),
        ("pregnancy-morning-sickness", PREGNANT_34, VOMITING, True),
        ("medicine-nsaids", UNKNOWN, ("임신 중인데 아기한테 진통제 괜찮아요?", ["nsaid"]), True),
        # dementia and older adults' services are no child's; falls are the older adult's
        ("memory-concerns-and-caregiving", BOY_5, ("기억을 못 해요", ["memory"]), False),
        ("dementia-overview", BOY_5, ("할머니 치매요", ["dementia"]), False),
        ("dementia-overview", WOMAN_80_ON_WARFARIN, ("치매요", ["dementia"]), True),
        ("lifestyle-falls-prevention", MAN_45, ("넘어졌어요", ["falls"]), False),
        ("lifestyle-falls-prevention", WOMAN_80_ON_WARFARIN, ("넘어졌어요", ["falls"]), True),
        # warfarin and its INR test: the one taking it, never a child
        ("test-inr", WOMAN_80_ON_WARFARIN, ("피검사 결과요", []), True),
        ("test-inr", MAN_45, ("피검사 결과요", []), False),
        ("medicine-warfarin", BOY_5, ("할머니 약 와파린", ["warfarin"]), False),
    ],
)
def test_each_population_gets_only_the_entries_written_for_it(
    entry: str, person: Person, asked: tuple[str, list[str]], expected: bool
) -> None:
    question, tags = asked
    assert fits(by_id(entry).applies_to, person, asked_of(question, tags)) is expected


@pytest.mark.parametrize(
    ("age", "group"), [(0.2, "infant"), (5, "child"), (17, "child"), (40, "adult"), (72, "older")]
)
def test_age_groups(age: float, group: str) -> None:
    assert age_group(age) == group


ON_GLIMEPIRIDE = Person(age_group="older", held=frozenset({"glimepiride", "sulfonylurea"}))


@pytest.mark.parametrize(
    ("question", "tags", "person", "entry"),
    [
        (
            "손이 떨리고 식은땀이 나요",
            ["tremor", "sweating"],
            ON_GLIMEPIRIDE,
            "emergency-hypoglycaemia",
        ),
        ("아버지가 갑자기 헛소리를 하세요", ["confusion"], UNKNOWN, "delirium-sudden-confusion"),
        (
            "My chest gets tight when I climb stairs",
            ["chest tightness"],
            UNKNOWN,
            "angina-chest-tightness-on-exertion",
        ),
        ("When should I call 119?", [], UNKNOWN, "emergency-when-to-call-119"),
        ("애 몸무게 18키로", ["weight management"], CHILD_5, "child-medicines-by-weight"),
    ],
)
def test_a_description_leads_to_its_entry(
    question: str, tags: list[str], person: Person, entry: str
) -> None:
    assert entry in led_entries(question, asked_of(question, tags), person)


@pytest.mark.parametrize(
    ("question", "tags", "person"),
    [
        ("손이 떨리고 식은땀이 나요", ["tremor", "sweating"], UNKNOWN),  # no sulfonylurea
        ("헛소리를 하세요", ["confusion"], UNKNOWN),  # not sudden
        ("몸무게 60키로예요", ["weight management"], UNKNOWN),  # an adult's weight
        ("I called 119 yesterday", [], UNKNOWN),  # no question of when
    ],
)
def test_a_near_description_leads_nowhere(question: str, tags: list[str], person: Person) -> None:
    assert led_entries(question, asked_of(question, tags), person) == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("I have kidney disease, what painkiller can i take", set()),
        ("아이고 허리야 진통제 뭐 먹어요", set()),
        ("딸기 먹고 두드러기가 났어요", set()),
        ("since the baby was born 5 weeks ago i feel so low", {"infant", "postpartum"}),
        # near-misses: a child named
        ("my kid has a fever", {"child"}),
        ("우리 아이가 열이 나요", {"child"}),
        ("딸이 기침을 해요", {"child"}),
    ],
)
def test_the_populations_a_question_names(text: str, named: set[str]) -> None:
    from knowledge.medical_answering import load_answering

    assert set(load_answering().populations_named(text.lower())) == named
