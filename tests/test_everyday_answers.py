"""Everyday answers as people type them, read by the rules extractor: yes/no against the
question's own wording, emphatic forms, statements that answer a question, weekdays and other
relative dates, lists of people, lengths of time given by their start, values taken back, and
amounts and dates placed in their own fields.

A wrong reading here becomes a wrong fact in a lawyer's summary, so the near-misses (what must
not be read) are tested beside the hits.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from graphs.common import normalize
from graphs.legal.extract import FactExtractor
from knowledge.loader import Knowledge
from tests.test_graph import Driver

# A Tuesday, in Seoul.
TUESDAY = datetime(2026, 11, 24, 15, 0, tzinfo=ZoneInfo("Asia/Seoul"))


@pytest.fixture(scope="module")
def extractor(knowledge: Knowledge) -> FactExtractor:
    return FactExtractor(knowledge)


def answer(extractor: FactExtractor, sub_type: str, field: str, text: str):
    ex = extractor.read(text, sub_type=sub_type, asked=field, now=TUESDAY)
    return ex.answer


def facts(extractor: FactExtractor, sub_type: str, text: str, asked: str | None = None) -> dict:
    return extractor.read(text, sub_type=sub_type, asked=asked, now=TUESDAY).facts


# --- yes / no -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "퇴직금도 받지 못하셨나요?": a yes and "not received" both mean it is unpaid.
        ("네 못받았어요", True),
        ("네 못 받았다니까요", True),
        ("아니요 못 받았어요", True),
        ("그것도 못 받았어요", True),
        ("아직이요", True),
        ("아니요 받았어요", False),
        ("퇴직금은 받았어요", False),
        ("not paid either", True),
        ("I got it", False),
    ],
)
def test_yes_no_is_read_against_the_questions_own_wording(extractor, text, expected) -> None:
    assert answer(extractor, "WAGE_ARREARS", "severance_unpaid", text) is expected


@pytest.mark.parametrize(
    ("field", "text", "expected"),
    [
        ("evidence", "있다니까요", True),
        ("evidence", "없다고요", False),
        ("evidence", "있거든요", True),
        ("evidence", "no, I don't have anything", False),
        ("police_report", "안 했다니까요", False),
        ("police_report", "not yet", False),
    ],
)
def test_emphatic_and_irritated_forms(extractor, field, text, expected) -> None:
    assert answer(extractor, "LOAN" if field == "evidence" else "FRAUD", field, text) is expected


@pytest.mark.parametrize(
    ("sub_type", "field", "text", "expected"),
    [
        ("LEASE_DEPOSIT", "still_occupying", "이미 이사 나왔어요", False),
        ("LEASE_DEPOSIT", "still_occupying", "I moved out", False),
        ("LEASE_DEPOSIT", "still_occupying", "아직 이사 안 갔어요", True),
        ("LEASE_DEPOSIT", "still_occupying", "I haven't moved out", True),
        ("ASSAULT", "injury", "코뼈가 부러졌어요", True),
        ("ASSAULT", "injury", "멍들었어요", True),
        ("ASSAULT", "injury", "안 다쳤어요", False),
        ("ASSAULT", "injury", "다치지는 않았어요", False),
        ("DRIVER_LICENSE", "needed_for_work", "필요해요", True),
        ("DRIVER_LICENSE", "needed_for_work", "필요는 없어요", False),
    ],
)
def test_a_statement_answers_a_yes_no_question(extractor, sub_type, field, text, expected) -> None:
    assert answer(extractor, sub_type, field, text) is expected


def test_a_statement_in_any_message_fills_its_yes_no_field(extractor) -> None:
    found = facts(extractor, "LEASE_DEPOSIT", "보증금을 안 줘요 저는 이미 이사 나왔어요", "deposit")
    assert found["still_occupying"] is False
    found = facts(extractor, "ASSAULT", "남편이 소주병으로 때려서 코뼈가 부러졌어요")
    assert found["injury"] is True and found["weapon"] is True
    # A negated statement is no statement of the fact.
    assert "injury" not in facts(extractor, "ASSAULT", "다친 사람 없이 말싸움만 했어요")


# --- dates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("지난주 금요일이요", "2026-11-20"),  # Friday of the previous Monday-Sunday week
        ("저번주 월요일", "2026-11-16"),
        ("이번주 월요일에요", "2026-11-23"),
        ("지지난주 금요일", "2026-11-13"),
        ("지난 금요일", "2026-11-20"),
        ("금요일에요", "2026-11-20"),
        ("last Saturday", "2026-11-21"),
        ("this Monday", "2026-11-23"),
        ("on Friday", "2026-11-20"),
        ("지지난달 말에요", "2026-09"),
        ("in May this year", "2026-05"),
        ("May last year", "2025-05"),
    ],
)
def test_weekdays_and_relative_months(text, expected) -> None:
    assert normalize.parse_date(text, now=TUESDAY) == expected


def test_a_weekday_ahead_for_a_date_that_may_lie_ahead() -> None:
    assert normalize.parse_date("다음주 수요일까지", now=TUESDAY, allow_future=True) == "2026-12-02"
    assert normalize.parse_date("next Friday", now=TUESDAY, allow_future=True) == "2026-11-27"


def test_two_dates_in_one_message_go_to_their_own_events(extractor) -> None:
    found = facts(
        extractor,
        "WAGE_ARREARS",
        "2022년 3월에 입사해서 올해 9월 말에 그만뒀는데 마지막 월급 300만원을 못 받았어요",
    )
    assert found["employment_start"] == "2022-03"
    assert found["employment_end"] == "2026-09"
    assert found["amount"] == 3_000_000


def test_a_length_of_time_given_by_its_start(extractor) -> None:
    assert answer(extractor, "DIVORCE", "marriage_duration", "2015년 5월에 결혼했어요") == 138
    assert answer(extractor, "DIVORCE", "marriage_duration", "10년 됐어요") == 120
    # A start in the future is no length of time.
    assert answer(extractor, "DIVORCE", "marriage_duration", "2030년 5월에 결혼해요") is None


# --- amounts and counts ---------------------------------------------------------------------


def test_english_shorthand_amounts(extractor) -> None:
    assert answer(extractor, "LEASE_DEPOSIT", "monthly_rent", "700k") == 700_000
    assert normalize.find_amounts("a 5km walk") == []  # a k glued to letters is no amount
    assert answer(extractor, "LEASE_DEPOSIT", "lease_type", "monthly") == "monthly"


def test_each_amount_goes_to_its_own_field(extractor) -> None:
    found = facts(
        extractor,
        "INHERITANCE",
        "예금 한 천만원? 근데 카드빚이랑 사채가 1억 넘는대요",
        "estate_amount",
    )
    ex = extractor.read(
        "예금 한 천만원? 근데 카드빚이랑 사채가 1억 넘는대요",
        sub_type="INHERITANCE",
        asked="estate_amount",
        now=TUESDAY,
    )
    assert ex.answer == 10_000_000
    assert found["debt_amount"] == 100_000_000 and found["has_debt"] is True


def test_a_value_taken_back_is_not_recorded(extractor) -> None:
    found = facts(extractor, "LOAN", "Sorry, actually it was 3.5 million won, not 3 million")
    assert found["amount"] == 3_500_000
    found = facts(extractor, "LOAN", "300만원 아니고 350만원이요")
    assert found["amount"] == 3_500_000


@pytest.mark.parametrize(
    ("field", "text", "expected"),
    [
        ("heirs_count", "엄마랑 저랑 남동생이요", 3),
        ("heirs_count", "me, my mom and my brother", 3),
        ("heirs_count", "엄마, 저, 남동생 3명이요", 3),
        ("heirs_count", "엄마랑 저랑 동생 둘이요", None),  # the list and the count disagree
        ("heirs_count", "둘이라고 했잖아요", 2),
    ],
)
def test_counts_in_words_and_lists_of_people(extractor, field, text, expected) -> None:
    assert answer(extractor, "INHERITANCE", field, text) == expected


def test_a_count_then_who_they_are_is_the_count(extractor) -> None:
    """Tester set 5 (tQ3): "두 명이에요. 첫째 아들이 10살, 둘째 딸이 7살이에요. 두 아이 모두 제가
    키우고 싶습니다." was recorded as five children (every person word of the answer counted)."""
    told = "두 명이에요. 첫째 아들이 10살, 둘째 딸이 7살이에요. 두 아이 모두 제가 키우고 싶습니다."
    assert answer(extractor, "DIVORCE", "children_count", told) == 2
    listed = "아들이랑 딸이요. 첫째가 10살이고 둘째가 7살이에요."
    assert answer(extractor, "DIVORCE", "children_count", listed) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("one, our son Jian, hes 6", 1),  # legal_set9 U4: refused
        ("it's 1, Jian, he's 6", 1),
        ("two kids, 5 and 8 years old", 2),
        ("Jian, he's 6", None),  # an age is no count of children
        ("하나요, 6살 아들", 1),
    ],
)
def test_a_count_before_the_childrens_ages(extractor, text, expected) -> None:
    assert answer(extractor, "DIVORCE", "children_count", text) == expected


def test_counts_and_lengths_of_time_in_a_story_need_their_cue(extractor) -> None:
    found = facts(extractor, "DIVORCE", "결혼한 지 10년 됐고 애가 둘이에요")
    assert found["marriage_duration"] == 120 and found["children_count"] == 2
    found = facts(extractor, "DIVORCE", "My wife and I both agree, married 3 years and no kids")
    assert found["marriage_duration"] == 36 and found["children_count"] == 0
    assert found["divorce_type"] == "consensual"
    assert "custody_wish" not in found  # "my wife" names no custody wish
    assert "children_count" not in facts(extractor, "DIVORCE", "아이폰 15 사려고 했어요")
    assert "children_count" not in facts(extractor, "DIVORCE", "작은애가 7살이에요")


def test_days_of_a_suspension(extractor) -> None:
    assert answer(extractor, "BUSINESS_SUSPENSION", "suspension_days", "60일이요") == 60
    assert answer(extractor, "BUSINESS_SUSPENSION", "suspension_days", "2개월이요") == 60
    assert answer(extractor, "BUSINESS_SUSPENSION", "suspension_days", "15") == 15


def test_blood_alcohol_is_a_decimal(extractor) -> None:
    assert answer(extractor, "DRIVER_LICENSE", "blood_alcohol", "0.087%였어요") == 0.087
    assert answer(extractor, "DRIVER_LICENSE", "blood_alcohol", "혈중알코올농도 0.12요") == 0.12
    assert answer(extractor, "DRIVER_LICENSE", "blood_alcohol", "모르겠어요") is None


# --- choices --------------------------------------------------------------------------------


def test_two_options_side_by_side_are_a_modifier_and_its_head(extractor) -> None:
    assert answer(extractor, "DEFAMATION", "publication_channel", "회사 단톡방이요") == "messenger"
    assert answer(extractor, "DEFAMATION", "publication_channel", "work group chat") == "messenger"


def test_two_options_apart_are_no_answer(extractor) -> None:
    assert answer(extractor, "ASSAULT", "party_role", "피해자인데 고소를 당했어요") is None
    assert answer(extractor, "ASSAULT", "party_role", "당연히 제가 당한거죠") == "victim"


def test_the_deceased_is_the_one_named_with_the_death(extractor) -> None:
    found = facts(extractor, "INHERITANCE", "My mother passed away and my brother took everything")
    assert "decedent_relation" not in found or found["decedent_relation"] == "parent"
    assert "decedent_relation" not in facts(extractor, "INHERITANCE", "형이 재산을 다 가져갔어요")


def test_grounds_and_ways_of_collection_from_the_story(extractor) -> None:
    assert facts(extractor, "DIVORCE", "남편이 바람을 피워서 이혼하고 싶어요")[
        "divorce_grounds"
    ] == ["affair"]
    assert "divorce_grounds" not in facts(extractor, "DIVORCE", "제 바람은 아이를 키우는 거예요")
    found = facts(extractor, "DEBT_COLLECTION", "밤마다 전화해서 욕하고 엄마한테까지 연락해요")
    assert set(found["collection_kind"]) >= {"night", "family_work"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i say already, Daesung Metal. no subcontractor", None),  # legal_set6 tX2
        ("i am not subcontractor, i am direct worker", None),
        ("하청 아니고 정규직이에요", "regular"),
        ("하청업체 소속이에요", "subcontract"),
    ],
)
def test_an_option_said_as_what_it_is_not_is_not_chosen(extractor, text, expected) -> None:
    assert answer(extractor, "INDUSTRIAL_ACCIDENT", "employment_type", text) == expected


@pytest.mark.parametrize(
    ("sub_type", "field", "text", "expected"),
    [
        # a step said as not taken (legal_set7 tV4: "I didn't call the police" recorded called)
        (
            "NEIGHBOR_DISPUTE",
            "steps_taken",
            "관리사무소에 말했어요. 경찰은 안 불렀어요",
            ["management_office"],
        ),
        (
            "NEIGHBOR_DISPUTE",
            "steps_taken",
            "I didn't call the police, I only told the management office",
            ["management_office"],
        ),
        (
            "NEIGHBOR_DISPUTE",
            "steps_taken",
            "경찰 신고는 아직 못 했고 관리실에 얘기했어요",
            ["management_office"],
        ),
        # a record said as not had
        ("LOAN", "evidence_type", "차용증은 쓰지 않았고 이체내역이 있어요", ["bank_transfer"]),
        ("LOAN", "evidence_type", "계약서는 없고 카톡만 있어요", ["messages"]),
        ("LOAN", "evidence_type", "We never signed a contract but I have texts", ["messages"]),
        # said, then denied (legal_set7 tV4 after the summary)
        (
            "NEIGHBOR_DISPUTE",
            "steps_taken",
            "it says 'Called the police' - I didn't. I told the management office",
            ["management_office"],
        ),
        # a later clause's negation is its own ("말했는데 안 해결돼요"); 안 as "inside" is none
        (
            "NEIGHBOR_DISPUTE",
            "steps_taken",
            "관리사무소에 말했는데 안 해결돼요",
            ["management_office"],
        ),
        ("NEIGHBOR_DISPUTE", "steps_taken", "경찰에 신고했는데 소용없었어요", ["police"]),
        ("ASSAULT", "evidence_type", "가게 안에 CCTV가 있어요", ["photo"]),
        # elsewhere a negated verb is the grievance itself (legal_set6 replay)
        ("CUSTODY", "custody_issue", "전남편이 양육비를 1년째 안보내요", "child_support"),
    ],
)
def test_an_option_said_as_not_done_or_not_had_is_not_chosen(
    extractor, sub_type, field, text, expected
) -> None:
    assert answer(extractor, sub_type, field, text) == expected


# --- a date answer with several dates --------------------------------------------------------


@pytest.mark.parametrize(
    ("sub_type", "field", "text", "expected"),
    [
        # the date that opens the answer, not the earlier notice told after it (legal_set6 tW3)
        (
            "TAX",
            "notice_date",
            "10월28일이요 강동세무서에서요. 그전에 9월30일에 과세예고통지?그런것도 왔었는데",
            "2026-10-28",
        ),
        # not the date whose clause tells another field's event (the start, for the last day)
        (
            "WAGE_ARREARS",
            "employment_end",
            "작년 3월에 입사해서 올해 10월 31일에 잘렸어요",
            "2026-10-31",
        ),
        # the weekday of the day told is that day, not last Saturday (tW2)
        ("TAX", "notice_date", "9월20일 토요일 밤 9시쯤이요", "2026-09-20"),
    ],
)
def test_the_date_asked_among_several(extractor, sub_type, field, text, expected) -> None:
    assert answer(extractor, sub_type, field, text) == expected


def test_several_dates_none_plainly_asked_are_not_guessed(extractor) -> None:
    # a wrong date drives a wrong deadline: neither the first nor the last is taken (a span of
    # time told is read by its end: test_a_date_asked_among_several)
    spec = extractor.knowledge.k2.fields["employment_end"]
    told = "10월 1일이랑 11월 10일에 일했어요"
    assert extractor.parse_answer(spec, told, now=TUESDAY) == (None, "date_unparsed")


# --- values told in passing that are no fact of a field ---------------------------------------


def test_a_record_is_evidence_where_they_say_they_have_it(extractor) -> None:
    # how a thing was done is no record kept ("112에 문자 보냈어요"), nor an account they hold
    assert "evidence_type" not in facts(
        extractor, "DIVORCE", "112에 문자 보냈어요 딸이랑 안방에 문잠그고 있어요", "custody_wish"
    )
    told = "일산에 아파트 있는데 남편 명의고 대출이 1억5천 남았어요 남편 사업통장은 몰라요"
    found = facts(extractor, "DIVORCE", told, "property_division")
    assert "evidence_type" not in found and "divorce_grounds" not in found  # a mortgage
    kept = facts(extractor, "DIVORCE", "카톡 대화 다 저장해 놨어요", "custody_wish")
    assert kept["evidence_type"] == ["messages"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("17살이요", 17),
        ("2명이요", None),  # a count of people is no age
        ("아들 21살 딸은 17살이요", None),  # two ages: which is asked is not guessed
    ],
)
def test_an_age_answer(extractor, text, expected) -> None:
    assert answer(extractor, "DIVORCE", "youngest_child_age", text) == expected


def test_from_the_fifth_year_on_is_no_length_of_the_marriage(extractor) -> None:
    told = "이혼하고 싶어요 결혼한지 23년 됐는데 남편이 술만 먹으면 때려요 결혼 5년차부터 그랬어요"
    assert facts(extractor, "DIVORCE", told)["marriage_duration"] == 23 * 12


@pytest.mark.parametrize(
    ("sub_type", "text", "expected"),
    [
        # the amount that opens the answer, not the discount told after it (legal_set7 tX2)
        ("FINE", "20만원이요 기간안에 내면 16만원이라고", 200_000),
        # not the lock's price told after the bike's (tX5)
        ("THEFT", "180만원 주고 샀어요 자물쇠도 3만원짜리 잘라갔구요", 1_800_000),
    ],
)
def test_the_amount_asked_among_several(extractor, sub_type, text, expected) -> None:
    assert answer(extractor, sub_type, "amount", text) == expected


def test_a_value_said_not_to_be_the_fields_is_not_placed_there(extractor) -> None:
    # legal_set8 P1: "the 450 is no deposit but the repair cost" proposed deposit → 450만원
    assert "deposit" not in facts(
        extractor, "LEASE_DEPOSIT", "450만원은 보증금이 아니라 수리비에요"
    )
    assert facts(extractor, "LEASE_DEPOSIT", "보증금은 2억3천이에요")["deposit"] == 230_000_000


def test_an_option_that_starts_a_compound_is_not_negated_with_its_head(extractor) -> None:
    """legal_set10 X1: "전세보증금 못받고있는데" was asked "전세인가요, 월세인가요?" next: what is
    not received is the deposit; the lease is still jeonse."""
    told = facts(extractor, "LEASE_DEPOSIT", "전세보증금 못받고있는데 집이 경매넘어갔어요")
    assert told["lease_type"] == "jeonse"
    assert "evidence_type" not in facts(extractor, "DAMAGES", "진단서는 못 받았어요")


@pytest.mark.parametrize(
    ("sub_type", "field", "text", "expected"),
    [
        # a span of time told: its end to a question of the end, its start to one of the start
        # (legal_set19 S3's lease end was refused with "I already have that written down")
        (
            "LEASE_DEPOSIT",
            "lease_end_date",
            "The lease was 2 years, from December 1 2024 to November 30 2026. I moved out early.",
            "2026-11-30",
        ),
        (
            "WAGE_ARREARS",
            "employment_end",
            "2024년 5월 2일부터 8월 31일까지 일했어요",
            "2024-08-31",
        ),
        (
            "WAGE_ARREARS",
            "employment_start",
            "2024년 5월 2일부터 8월 31일까지 일했어요",
            "2024-05-02",
        ),
        # the contract's day, not the balance paid later (legal_set19 S1)
        (
            "CONSUMER_REFUND",
            "incident_date",
            "we signed the contract march 14 this year and paid the deposit 1,000,000 won that "
            "day. then we paid the balance 2,300,000 on sept 20. wedding was oct 17",
            "2026-03-14",
        ),
    ],
)
def test_a_date_asked_among_several(extractor, sub_type, field, text, expected) -> None:
    assert answer(extractor, sub_type, field, text) == expected


# --- several days told to a date question ---------------------------------------------------


def days_offered(payload: dict, field: str) -> list[str]:
    return [
        c["data"].removeprefix(f"a:{field}:on:")
        for m in payload["messages"]
        for c in m.get("choices", [])
        if c["data"].startswith(f"a:{field}:on:")
    ]


@pytest.mark.parametrize("pick", ["button", "typed"])
async def test_several_days_told_to_a_date_question_are_offered_as_buttons(
    driver: Driver, pick: str
) -> None:
    # legal_set19 R4: the notice date, the disposition's date and the night of the check in one
    # answer were kept as told, and the appeal deadlines never computed
    await driver.send("음주로 면허취소됨 택배일 하는데 면허없으면 일못함 구제방법 있나요")
    asked = await driver.send("0.085 나왔어요 처음 걸린거고 사고는 없었음")
    assert asked["field"] == "notice_date"
    reply = await driver.send(
        "통지서는 11월13일 받았고 처분날짜는 11월10일로 돼있음 단속된건 10월18일 밤 11시쯤"
    )
    assert reply["field"] == "notice_date"
    assert days_offered(reply, "notice_date") == ["2026-11-13", "2026-11-10", "2026-10-18"]
    values = await driver.values()
    assert "notice_date" not in values["facts"] and not values.get("unclear")
    if pick == "button":
        chosen = await driver.send(choice="a:notice_date:on:2026-11-13")
    else:
        chosen = await driver.send("11월 13일이요")
    assert chosen["field"] != "notice_date"
    values = await driver.values()
    assert values["facts"]["notice_date"] == "2026-11-13"
    # the other days stay the memo's, each on its own event
    dated = sorted(i["date"] for i in values["memo"] if i["section"] == "chronology")
    assert dated == ["2026-10-18", "2026-11-10", "2026-11-13"]


async def test_one_day_told_beside_others_of_its_own_clause_is_no_choice(driver: Driver) -> None:
    # near-miss: a day ahead told beside the answer is no day of the past field asked
    await driver.send("음주로 면허취소됨 택배일 하는데 면허없으면 일못함 구제방법 있나요")
    await driver.send("0.085 나왔어요 처음 걸린거고 사고는 없었음")
    reply = await driver.send("11월13일에 받았어요 의견제출 기한이 12월5일까지래요")
    assert days_offered(reply, "notice_date") == []
    assert (await driver.values())["facts"]["notice_date"] == "2026-11-13"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # how often is no count, nor is "안 했어요" a spouse refusing (legal_set19 R3)
        ("남편은 맨날 늦게와서 애들 씻기는것도 한번 안했어요", {}),
        ("애가 둘이에요 한번 이혼했어요", {"children_count": 2}),
    ],
)
def test_a_number_of_times_counts_nothing_and_a_plain_no_refuses_nothing(
    extractor: FactExtractor, text: str, expected: dict
) -> None:
    assert facts(extractor, "DIVORCE", text, asked="custody_wish") == expected


def test_a_spouse_who_will_not_divorce_is_still_read(extractor: FactExtractor) -> None:
    assert answer(extractor, "DIVORCE", "divorce_type", "남편이 이혼을 안 해준대요") == "contested"


@pytest.mark.parametrize(
    ("sub_type", "field", "text", "expected"),
    [
        # "I said it already" is no part of the answer said again (legal_set19 A1, R3, S6)
        (
            "UNFAIR_DISMISSAL",
            "dismissal_reason",
            "아까 말했는데 매출 안좋아서 인원 정리한다고요",
            "매출 안좋아서 인원 정리한다고요",
        ),
        ("DIVORCE", "main_property", "방금 말했는데요 전세보증금 3억", "전세보증금 3억"),
        ("LEASE_DEPOSIT", "counterparty", "as I said, the landlord Kim", "the landlord Kim"),
        # near-miss: words of the answer that only start alike stay
        (
            "UNFAIR_DISMISSAL",
            "dismissal_reason",
            "말대꾸를 했다고 잘랐어요",
            "말대꾸를 했다고 잘랐어요",
        ),
    ],
)
def test_a_said_again_preface_is_no_part_of_the_answer(
    extractor: FactExtractor, sub_type: str, field: str, text: str, expected: str
) -> None:
    assert answer(extractor, sub_type, field, text) == expected


@pytest.mark.parametrize(
    ("sub_type", "text", "expected"),
    [
        # the option said where its cue is, another named elsewhere (legal_set19 S4)
        (
            "INHERITANCE",
            "아버지가 지난 8월에 돌아가셨는데요, 큰오빠가 유언장이 있다면서 다 갖겠대요",
            {"decedent_relation": "parent"},
        ),
        # near-miss: two named beside the cue, none chosen
        ("INHERITANCE", "아버지랑 오빠가 작년에 돌아가셨어요", {}),
        # what was ordered is goods whatever it is (legal_set19 B1)
        ("CONSUMER_REFUND", "i ordered a laptop from a korean website", {"purchase_kind": "goods"}),
    ],
)
def test_a_choice_is_read_where_the_message_says_it(
    extractor: FactExtractor, sub_type: str, text: str, expected: dict
) -> None:
    found = facts(extractor, sub_type, text)
    assert {k: found[k] for k in expected} == expected
    assert not ({"decedent_relation", "purchase_kind"} - set(expected)) & set(found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("아직이요", False),
        ("아직 신청 안 했어요", False),
        ("아직 못했어요", False),
        # 아직 as "still" says no "not yet" (legal_set19 A4: both read as no protection order)
        ("112에 문자 보냈어요 경찰 온대요 아직도 밖에서 두드리고 있어요", None),
        ("경찰 왔어요 이번엔 잠정조치 신청해준대요. 손이 아직 떨리네요", None),
    ],
)
def test_not_yet_is_no_and_still_is_nothing(
    extractor: FactExtractor, text: str, expected: bool | None
) -> None:
    assert answer(extractor, "STALKING", "protection_order", text) is expected


def test_still_going_on_is_still_read_as_yes(extractor: FactExtractor) -> None:
    assert answer(extractor, "STALKING", "stalking_ongoing", "아직도 연락와요") is True


def test_the_day_money_was_borrowed_is_no_latest_contact(extractor: FactExtractor) -> None:
    # legal_set19 R6: "6월10일에 300 빌렸는데" became the latest collection date
    found = facts(
        extractor, "DEBT_COLLECTION", "김실장한테 6월10일에 300 빌렸는데 선이자 60 떼고 받았어요"
    )
    assert "incident_date" not in found
    found = facts(extractor, "DEBT_COLLECTION", "어제 밤에 협박 문자가 왔어요")
    assert found["incident_date"] == "2026-11-23"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the other side's insurer is no type of the other side (legal_set19 B3)
        (
            "my car was hit from behind. Other driver's insurance company offers me 1,200,000 won",
            None,
        ),
        ("상대방 보험사에서 합의금 80만원 준대요", None),
        # near-miss: a company that did it is one
        ("A delivery company's truck hit my car", "company"),
    ],
)
def test_the_other_sides_insurer_is_no_type_of_the_other_side(
    extractor: FactExtractor, text: str, expected: str | None
) -> None:
    assert facts(extractor, "DAMAGES", text).get("counterparty_type") == expected


@pytest.mark.parametrize(
    ("sub_type", "text"),
    [
        # a total told among its parts, and more beside (legal_set19 S1 was offered 6,100,000)
        (
            "CONSUMER_REFUND",
            "all of it, 3,300,000 won (1m deposit + 2.3m balance). also another photographer "
            "cost us 2,800,000 so we want that extra too",
        ),
        # a price, a rate and what was paid (B1 was offered 3,285,000)
        (
            "CONSUMER_REFUND",
            "the laptop was 2,190,000 won, 365,000 per month, i already paid 730,000",
        ),
    ],
)
def test_amounts_of_different_kinds_are_never_added_up(
    extractor: FactExtractor, sub_type: str, text: str
) -> None:
    read = extractor.read(text, sub_type=sub_type, asked="amount", now=TUESDAY)
    assert read.answer is None and read.invalid == "amount_several"


async def test_several_amounts_told_to_an_amount_question_are_offered_as_buttons(
    driver: Driver,
) -> None:
    await driver.send("친구한테 돈 빌려줬는데 안 갚아요")
    while (reply := await driver.send("잘 모르겠어요"))["field"] not in ("amount", None):
        pass
    assert reply["field"] == "amount"
    reply = await driver.send("작년에 500만원 보냈고 올해 200만원 더 보냈는데 100만원만 받았어요")
    offered_now = [c["data"] for m in reply["messages"] for c in m.get("choices", [])]
    assert offered_now[:3] == ["a:amount:on:5000000", "a:amount:on:2000000", "a:amount:on:1000000"]
    await driver.send(choice="a:amount:on:5000000")
    assert (await driver.values())["facts"]["amount"] == 5_000_000


def test_driving_for_a_living_is_read_from_the_first_message(extractor: FactExtractor) -> None:
    # legal_set19 R4: asked again whether he needs to drive for work
    text = "음주로 면허취소됨 택배일 하는데 면허없으면 일못함 구제방법 있나요"
    assert facts(extractor, "DRIVER_LICENSE", text)["needed_for_work"] is True
    assert "needed_for_work" not in facts(extractor, "DRIVER_LICENSE", "음주로 면허취소됐어요")


def test_a_day_someone_was_questioned_is_no_notice_day(extractor: FactExtractor) -> None:
    # legal_set19 S6: "조사받았어요" placed the day as the notice's, offered as a correction
    said = "경찰서(관악서)에서도 10월15일에 조사받았어요"
    assert "notice_date" not in facts(extractor, "BUSINESS_SUSPENSION", said, asked="evidence")
    said = "처분서는 11월 12일에 받았어요"
    found = facts(extractor, "BUSINESS_SUSPENSION", said, asked="evidence")
    assert found["notice_date"] == "2026-11-12"
