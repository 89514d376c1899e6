"""A correction told as a field's label and its value (graphs/legal/labelled.py): the form the
bot suggests when it could not tell what to change, for every kind of value. Cases from
legal_set8 (S3, S5, S2: each refused or left unchanged when played)."""

from __future__ import annotations

from datetime import datetime

import pytest

from graphs.legal.labelled import labelled_fixes
from knowledge.loader import Knowledge

NOW = datetime(2026, 11, 29, 12, 0)


@pytest.mark.parametrize(
    ("sub_type", "facts", "text", "field", "new"),
    [
        (
            "SCHOOL_VIOLENCE",
            {"police_report": True},
            "경찰 신고 예 아니고 아니요요",
            "police_report",
            False,
        ),
        (
            "SCHOOL_VIOLENCE",
            {"police_report": True},
            "경찰 신고·고소 여부는 아니요예요",
            "police_report",
            False,
        ),
        (
            "DRIVER_LICENSE",
            {"blood_alcohol": 0.087},
            "통지서 다시보니까 혈중알코올농도 0.087 아니고 0.081이네요",
            "blood_alcohol",
            0.081,
        ),
        (
            "DRIVER_LICENSE",
            {"blood_alcohol": 0.087},
            "혈중알코올농도는 0.081이에요",
            "blood_alcohol",
            0.081,
        ),
        (
            "IMAGE_ABUSE",
            {"images_spread": True},
            "no i mean the 'already shared' line should be NO. nothing has been posted.",
            "images_spread",
            False,
        ),
    ],
)
def test_a_label_and_its_value_propose_the_change(
    knowledge: Knowledge, sub_type, facts, text, field, new
) -> None:
    assert labelled_fixes(knowledge, sub_type, facts, text, now=NOW) == [
        {"field": field, "old": facts[field], "new": new}
    ]


@pytest.mark.parametrize(
    ("sub_type", "facts", "text"),
    [
        ("DRIVER_LICENSE", {"blood_alcohol": 0.087}, "혈중알코올농도는 0.087 맞아요."),  # the same
        ("DRIVER_LICENSE", {"blood_alcohol": 0.087}, "0.081이에요"),  # no label: not this reader's
        ("SCHOOL_VIOLENCE", {"police_report": True}, "경찰 신고는 어떻게 하는 거예요?"),  # no value
        # the value the label is said not to be is no new value (legal_set8 Q3)
        ("LOAN", {"amount": 8_000_000}, "The amount lent is not 8 million. He owes me 21 million."),
    ],
)
def test_nothing_is_proposed_without_a_new_value_after_the_label(
    knowledge: Knowledge, sub_type, facts, text
) -> None:
    assert labelled_fixes(knowledge, sub_type, facts, text, now=NOW) == []


def test_a_field_already_proposed_is_left_to_that_proposal(knowledge: Knowledge) -> None:
    facts = {"police_report": True}
    text = "경찰 신고는 아니요예요"
    assert (
        labelled_fixes(knowledge, "SCHOOL_VIOLENCE", facts, text, now=NOW, named={"police_report"})
        == []
    )
