"""The profile memory (graphs/medical/memory.py): decay per slot, consolidation, the latest
value winning with history kept, family items apart, reconfirmation, the cache fingerprint;
and the evidence arithmetic of the answer loop (graphs/medical/evidence.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from graphs.medical import evidence as ev
from graphs.medical import memory, questions
from graphs.medical.nodes import route_after_quality
from graphs.medical.render import josa
from graphs.medical.slots import SlotExtractor

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


@pytest.fixture(scope="module")
def extractor() -> SlotExtractor:
    return SlotExtractor()


def told(extractor: SlotExtractor, *messages: tuple[float, str], consolidate: bool = True):
    profile = memory.new_profile()
    for hours, text in messages:
        profile, _ = memory.remember(
            profile,
            extractor.extract(text),
            at=T0 + timedelta(hours=hours),
            consolidate=consolidate,
        )
    return profile


def item(profile: dict, key: str) -> dict:
    return next(i for i in profile["items"] if i["key"] == key)


@pytest.mark.parametrize(
    ("slot", "rate"),
    [
        ("vitals", 0.1),
        ("labs", 0.05),
        ("symptoms", 0.02),
        ("medications", 0.005),
        ("conditions", 0.001),
    ],
)
def test_freshness_decays_at_the_seeds_rate(slot: str, rate: float) -> None:
    said = {"slot": slot, "last_said": T0.isoformat(), "checked_at": None}
    for hours in (1, 10, 100):
        assert memory.freshness(said, T0 + timedelta(hours=hours)) == pytest.approx(
            math.exp(-rate * hours)
        )


@pytest.mark.parametrize(
    ("text", "hours_current", "hours_stale"),
    [
        ("혈압이 150에 95", 10, 20),  # vitals: under a day
        ("두통이 있어요", 48, 24 * 4),  # symptoms: days
        ("메트포르민 먹어요", 24 * 7, 24 * 21),  # medications: weeks
        ("당뇨가 있어요", 24 * 30, 24 * 90),  # conditions: months
    ],
)
def test_items_stop_being_current_as_they_decay(
    extractor, text, hours_current, hours_stale
) -> None:
    profile = told(extractor, (0, text))
    first = profile["items"][0]
    assert memory.is_current(first, T0 + timedelta(hours=hours_current))
    assert not memory.is_current(first, T0 + timedelta(hours=hours_stale))


def test_mentions_of_one_thing_are_one_item_with_more_importance(extractor) -> None:
    profile = told(
        extractor, (0, "두통이 있어요"), (1, "두통이 심해요"), (2, "요즘도 두통이 있어요")
    )
    headaches = [i for i in profile["items"] if i["name"] == "headache"]
    assert len(headaches) == 1
    assert headaches[0]["mentions"] == 3
    assert headaches[0]["importance"] == pytest.approx(memory.BASE_IMPORTANCE["symptoms"] + 0.2)
    raw = told(
        extractor,
        (0, "두통이 있어요"),
        (1, "두통이 심해요"),
        (2, "요즘도 두통이 있어요"),
        consolidate=False,
    )
    assert len([i for i in raw["items"] if i["name"] == "headache"]) == 3


def test_a_new_reading_wins_and_the_old_one_is_kept(extractor) -> None:
    profile = told(extractor, (0, "혈압 140/90"), (5, "혈압 120/80"))
    sys = item(profile, "vitals:bp_sys")
    assert sys["value"] == 120 and [h["value"] for h in sys["history"]] == [140]
    assert memory.display_value(sys, profile) == "120/80"


def test_family_items_are_kept_apart_from_the_patients(extractor) -> None:
    profile = told(extractor, (0, "어머니가 당뇨가 있으세요"), (1, "저는 당뇨는 없어요"))
    assert item(profile, "family:conditions:diabetes")["status"] == "family"
    assert item(profile, "conditions:diabetes")["status"] == "denied"
    assert memory.current_items(profile, T0 + timedelta(hours=2), ("conditions",)) == []


def test_stopping_a_medicine_moves_it_to_the_past(extractor) -> None:
    profile = told(extractor, (0, "혈압약 먹어요"), (24, "혈압약은 끊었어요"))
    stopped = item(profile, "medications:antihypertensive")
    assert stopped["status"] == "past" and stopped["history"]


def test_reconfirmation_asks_the_most_important_stale_item_once(extractor) -> None:
    profile = told(extractor, (0, "당뇨가 있고 메트포르민 먹어요"))
    soon, later = T0 + timedelta(days=3), T0 + timedelta(days=20)
    assert memory.to_reconfirm(profile, soon) is None
    asked = memory.to_reconfirm(profile, later)
    assert asked is not None and asked["key"] == "medications:metformin"
    unanswered = memory.settle(profile, asked["key"], None, later)
    assert memory.to_reconfirm(unanswered, later + timedelta(hours=1)) is None
    kept = memory.settle(profile, asked["key"], True, later)
    assert memory.is_current(item(kept, "medications:metformin"), later)
    assert memory.to_reconfirm(kept, later + timedelta(days=1)) is None
    assert memory.to_reconfirm(kept, later + timedelta(days=20))["key"] == "medications:metformin"
    stopped = memory.settle(profile, asked["key"], False, later)
    assert item(stopped, "medications:metformin")["status"] == "past"


def test_the_fingerprint_changes_with_the_items_it_covers(extractor) -> None:
    profile = told(extractor, (0, "당뇨가 있고 메트포르민 먹어요"))
    keys = ["conditions:diabetes", "medications:metformin"]
    now = T0 + timedelta(hours=1)
    before = memory.fingerprint(profile, keys, now)
    assert memory.fingerprint(profile, keys, now) == before
    changed = memory.settle(profile, "medications:metformin", False, now)
    assert memory.fingerprint(changed, keys, now) != before
    other = told(extractor, (0, "두통이 있어요"))
    assert memory.fingerprint(other, keys, now) != before


@pytest.mark.parametrize(
    ("word", "pair", "expected"),
    [
        ("메트포르민", "을/를", "을"),
        ("아스피린", "을/를", "을"),
        ("인슐린", "을/를", "을"),
        ("타이레놀", "을/를", "을"),
        ("당뇨병", "이/가", "이"),
        ("고지혈증", "이/가", "이"),
        ("두통약", "을/를", "을"),
        ("혈압약", "이/가", "이"),
        ("아토르바스타틴", "을/를", "을"),
        ("비타민", "이/가", "이"),
        ("오메가", "을/를", "를"),
        ("천식", "이/가", "이"),
        ("빈혈", "이/가", "이"),
        ("위염", "이/가", "이"),
        ("COPD", "이/가", "(이)가"),
    ],
)
def test_korean_particles(word: str, pair: str, expected: str) -> None:
    assert josa(word, pair) == expected


def passage(pid: str, relevance: float, concepts=("x",), text="a b c", fused=0.03) -> ev.Passage:
    return ev.Passage(pid, pid, text, "S", "", tuple(concepts), "en", relevance, fused)


def test_uncertainty_falls_with_relevance_and_agreement() -> None:
    weak = ev.uncertainty([passage("a", 0.2)], 0.2)
    strong = ev.uncertainty([passage("a", 0.65)], 0.9)
    assert strong < ev.UNCERTAIN < weak
    assert ev.uncertainty([], 1.0) == 1.0


def test_the_duplicate_guard_drops_near_copies() -> None:
    taken = [passage("a", 0.5, text="metformin lowers blood sugar in type 2 diabetes")]
    found = [
        passage("a", 0.5, text="anything"),
        passage("b", 0.5, text="metformin lowers blood sugar in type 2 diabetes"),
        passage("c", 0.5, text="insulin is a hormone made by the pancreas"),
    ]
    assert [p.id for p in ev.new_only(taken, found)] == ["c"]


@pytest.mark.parametrize(
    ("state", "route"),
    [
        (
            {"answer": {"answered": True}, "quality": 0.9, "threshold": 0.55, "retrievals": 1},
            "store_response",
        ),
        (
            {"answer": {"answered": True}, "quality": 0.3, "threshold": 0.55, "retrievals": 1},
            "retrieve",
        ),
        (
            {"answer": {"answered": True}, "quality": 0.3, "threshold": 0.55, "retrievals": 3},
            "store_response",
        ),
        (  # no progress: the retry improved quality by less than 0.05
            {
                "answer": {"answered": True},
                "quality": 0.32,
                "previous_quality": 0.3,
                "threshold": 0.55,
                "retrievals": 2,
            },
            "store_response",
        ),
        (  # nothing new found by the retry (the duplicate guard)
            {
                "answer": {"answered": True},
                "quality": 0.3,
                "threshold": 0.55,
                "retrievals": 2,
                "stalled": True,
            },
            "store_response",
        ),
        (  # the passages disagree: retrieve again though quality is fine
            {
                "answer": {"answered": True},
                "quality": 0.9,
                "threshold": 0.55,
                "retrievals": 1,
                "consistency": 0.3,
            },
            "retrieve",
        ),
    ],
)
def test_the_adaptive_quality_loop(state: dict, route: str) -> None:
    assert route_after_quality(state) == route


def test_a_fixed_threshold_retries_more_than_the_adaptive_one_for_simple_questions() -> None:
    simple = {"answer": {"answered": True}, "quality": 0.5, "threshold": 0.4, "retrievals": 1}
    assert route_after_quality(simple) == "store_response"
    assert route_after_quality(simple, threshold=ev.FIXED_THRESHOLD) == "retrieve"


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("What is gout?", ""),
        ("통풍이 뭔가요?", ""),
        ("How does metformin work?", ""),
        ("고혈압은 완치가 되나요?", ""),
        ("메트포르민 부작용이 뭐예요", ""),
        ("메트포르민 먹는데 운동해도 되나요?", "메트포르민 먹는데 운동해도 되나요?"),
        ("I take metformin, can I exercise?", "I take metformin, can I exercise?"),
        ("요즘 발이 저려요. 왜 그럴까요?", "요즘 발이 저려요."),  # as written
        ("열이 나요", "열이 나요"),
        ("식은땀이 나요", "식은땀이 나요"),
        ("체중은 66킬로 나가요", "체중은 66킬로 나가요"),
        ("당뇨가 있는데요 운동은 뭐가 좋을까요?", "당뇨가 있는데요"),
    ],
)
def test_a_question_about_a_topic_tells_nothing_about_the_person(text: str, told: str) -> None:
    assert questions.split(text)[0] == told


def test_a_reading_in_a_question_is_kept_to_be_confirmed(extractor) -> None:
    said = questions.profile_slots(extractor, "What does an HbA1c of 8.2 mean? What is gout?")
    assert [(i.name, i.value, i.unsure) for i in said.items] == [("hba1c", 8.2, True)]


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        # what is asked permission for is not what the person takes or does
        ("Can he take ibuprofen for his back pain?", ["back pain"]),
        ("당뇨약 먹는데 술 마셔도 돼요?", ["antidiabetic"]),
        ("타이레놀 같이 먹어도 되나요? 저 와파린 먹고 있어요", ["warfarin"]),
        ("담배 피워도 되나요? 저 고혈압 있어요", ["hypertension"]),
        # a question tells nothing of the person but what it calls theirs ("my metformin")
        ("can I drink alcohol with metformin?", []),
        ("can I drink alcohol with my metformin?", ["metformin"]),
        # ...while what they say they take or do is kept
        ("이부프로펜 먹고 있어요", ["ibuprofen"]),
        ("저 술 마셔요", ["alcohol use"]),
        ("I smoke, should I quit?", ["smoking"]),
        ("I take metformin, can I exercise?", ["metformin"]),
    ],
)
def test_what_is_asked_permission_for_is_not_stored(extractor, text: str, stored) -> None:
    assert [i.name for i in questions.profile_slots(extractor, text).items] == stored


@pytest.mark.parametrize(
    ("text", "readings"),
    [
        (
            "혈압 140/90인데 괜찮은 건가요? 아 잘못 말했어요 130/85요",
            [("bp_sys", 130), ("bp_dia", 85)],
        ),
        ("혈압 140/90 아니 130/85요", [("bp_sys", 130), ("bp_dia", 85)]),
        ("my bp was 140/90, sorry I mean 130/85", [("bp_sys", 130), ("bp_dia", 85)]),
        ("공복혈당 180 아니고 150이요", [("glucose", 150)]),
        ("체온 38.5도 아니 37.5도", [("temp", 37.5)]),
        # no correction: a second measure, or a correction of something else
        ("혈압 140/90이고 맥박 80이에요", [("bp_sys", 140), ("bp_dia", 90), ("hr", 80)]),
        ("BP 150/95, actually my pulse was 90", [("bp_sys", 150), ("bp_dia", 95), ("hr", 90)]),
        ("혈압 140/90 아니 130이요", [("bp_sys", 140), ("bp_dia", 90)]),  # a pair, not one number
    ],
)
def test_a_reading_taken_back_in_the_same_message_is_replaced(extractor, text, readings) -> None:
    said = questions.profile_slots(extractor, text)
    assert [(i.name, i.value) for i in said.items if i.slot in ("vitals", "labs")] == readings
