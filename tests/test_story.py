"""Details kept from every message, and a counterparty as a name plus a kind
(knowledge/story.yaml, graphs/legal/details.py)."""

from __future__ import annotations

import re

import pytest

from graphs.legal.details import Detail, detail_line, split_counterparty, story_details
from graphs.legal.story import account, told

DETAILS = [
    (
        "당근마켓에서 닉네임 해피맘한테 아이폰 샀어요",
        {("platform", "당근마켓"), ("nickname", "해피맘")},
    ),
    ("예금주는 박민수였어요", {("account_holder", "박민수")}),
    ("옆에 있던 친구가 다 봤어요", {("witness", "목격자 있음")}),
    ("경찰이 출동했어요", {("police_attended", "경찰 출동·신고")}),
    ("코뼈가 부러졌어요", {("injury", "코뼈가 부러졌")}),
    ("전치 3주 나왔어요", {("injury", "전치 3주")}),
    (
        "He broke my nose and the police came",
        {("injury", "broke my nose"), ("police_attended", "Police came or were called")},
    ),
    ("남편이 바람을 폈어요", {("affair", "배우자의 외도 언급")}),
    ("첫째가 7살이고 둘째는 3살이에요", {("child_age", "첫째가 7살"), ("child_age", "둘째는 3살")}),
    ("야구방망이로 때렸어요", {("weapon", "야구방망이")}),
    ("협박 문자가 계속 와요", {("threat_message", "협박 문자·메시지")}),
    ("응급실에 갔어요", {("medical_visit", "병원 진료 받음")}),
    (
        "I bought it on Instagram from @sunny_22",
        {("platform", "Instagram"), ("nickname", "@sunny_22")},
    ),
    ("my wife was driving", {("driver", "my wife was driving")}),
    ("his id is minho", {("nickname", "minho")}),
]
NOTHING = [
    "목격자는 없어요",
    "경찰은 안 불렀어요",
    "no witnesses",
    "칼국수 먹다가 생긴 일이에요",
    "안 다쳤어요 골절은 아니래요",
    "he didn't have a knife",
    "i told the university student affairs office on may 7",  # legal_set9 V3: no affair
    "id say 8 million is fair",  # legal_set15 B4: "I'd say", no ID
]


@pytest.mark.parametrize(("text", "expected"), DETAILS)
def test_details_are_kept_as_people_write_them(text, expected, knowledge) -> None:
    found = {(d.kind, d.value) for d in story_details(text, knowledge)}
    assert expected <= found, found


@pytest.mark.parametrize("text", NOTHING)
def test_negated_and_look_alike_words_keep_nothing(text, knowledge) -> None:
    assert story_details(text, knowledge) == []


def test_phone_and_account_numbers_are_never_kept(knowledge) -> None:
    text = "예금주는 박민수였어요 계좌 110-234-567890 전화 010-1234-5678 닉네임 해피맘"
    for detail in story_details(text, knowledge):
        assert not re.search(r"\d{4}", detail.value + detail.quote), detail


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("집주인은 이영희씨요 개인이에요", "이영희", "landlord"),
        ("친구 김철수요", "김철수", "acquaintance"),
        ("OO상사라는 회사예요", "OO상사", "company"),
        ("닉네임 @sunny_22", "@sunny_22", None),
        ("my boss Mr Kim", "Mr Kim", "employer"),
        ("전남편 박지훈", "박지훈", "family"),
        ("I don't know who", None, "unknown"),
        ("이웃집 아저씨", "이웃집 아저씨", "acquaintance"),
        ("김철수요", "김철수", None),
        ("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요", "김철수", "acquaintance"),
        # the kind is read in the clause that tells the party: this family is the neighbour's
        # (legal_set9 V2)
        (
            "바로 윗집 1303호요. 저는 1203호 살아요. 50대 남자분이랑 가족이 살아요",
            "바로 윗집 1303호",
            None,
        ),
        ("박민수요. 제 동생 친구예요", "박민수", None),
    ],
)
def test_a_counterparty_is_a_name_and_a_kind(text, name, kind, knowledge) -> None:
    assert split_counterparty(text, knowledge) == (name, kind)


def test_a_long_sentence_without_a_name_is_never_the_name(knowledge) -> None:
    name, _ = split_counterparty(
        "그 사람이 누군지는 잘 모르겠는데 아마 동네에서 본 것 같아요", knowledge
    )
    assert name is None


@pytest.mark.parametrize(
    ("lang", "line"), [("ko", "목격자: 목격자 있음"), ("en", "Witness: 목격자 있음")]
)
def test_detail_lines_carry_the_kinds_label(lang, line, knowledge) -> None:
    assert detail_line(Detail("witness", "목격자 있음", "봤어요"), lang, knowledge) == line


def test_a_long_later_message_is_kept_whole_in_the_account() -> None:
    """legal_set13 B2, B3: each later message was cut at 300 characters ("Do I have to answer
    by Decemb"), the questions after it lost from the person's own account."""
    long = (
        "Not sure. His lawyer's letter (내용증명) came on November 20. It says he wants the kids "
        "to live with him, actually with his mother (시어머니) in Daegu, and he offers me "
        "200,000,000 won for everything. It says if I don't agree to mediation by December 15 "
        "they will file in court. Do I have to answer by December 15? What happens if I don't?"
    )
    assert len(long) > 300
    story = told([], long, at="t", carries=True)
    assert account("첫 설명", story).endswith("What happens if I don't?")
    # the same message told twice is kept once
    assert told(story, long, at="t2", carries=True) == story
