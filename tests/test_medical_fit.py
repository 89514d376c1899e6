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
