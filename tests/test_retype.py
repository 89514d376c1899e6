"""Changing the case type mid-intake (graphs/legal/retype.py): a person who says the type being
taken is wrong is offered the types their words point to, the other types and keeping it; a pick
changes the type, keeps what they told and asks what the new type needs. Held-out conversations
behind it: legal_set17 S1 (a wedding hall taken for a lease), R4 (harassment and dismissal taken
for defamation), R6 (stalking taken for tax); none of them could change it."""

from __future__ import annotations

from datetime import date

import pytest
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from bot.engine import Engine
from db.models import CaseMaster
from graphs.common.reading import Reading
from graphs.legal.retype import said_wrong
from graphs.legal.summary import build_summary
from tests.test_engine import choice, facts_of, text
from tests.test_free_form import offered
from tests.test_graph import Driver, texts

TAX_STALKER = (
    "예전 고객이었던 최영란이라는 분이 올해 5월부터 계속 사무실에 찾아오고 집까지 따라와요. "
    "작년에 그분 세무조사 건을 맡았었는데 추징금이 나오니까 수임료 300만원 돌려달라고 해요"
)


def wrong(knowledge, brain, sub_type: str, said: str, **state) -> bool:
    return said_wrong(knowledge, brain, {"sub_type": sub_type, **state}, said, Reading(text=said))


@pytest.mark.parametrize(
    ("sub_type", "said"),
    [
        # the type denied by its own words, and what it is instead
        ("TAX", "아니요 세금 문제가 아니라 그분이 저를 스토킹하는 문제에요"),
        ("DIVORCE", "이혼 얘기가 아니고요 아버지 돌아가시고 상속 문제예요"),
        ("DEFAMATION", "제가 말하고 싶은건 명예훼손이 아니라 성희롱이랑 해고 문제에요"),
        ("LEASE_DEPOSIT", "its not a rent thing. its a wedding hall booking contract"),
        ("LOAN", "This is not a loan matter at all, he sold me a fake car online"),
        # or in words of its own, whatever the type
        ("ASSAULT", "분류가 잘못된 것 같아요"),
        ("WAGE_ARREARS", "상담 유형 바꿔주세요 이웃이랑 누수 분쟁이에요"),
        ("GOODS_PAYMENT", "can you fix the category please"),
        ("FINE", "wrong topic, this is about my landlord"),
    ],
)
def test_a_type_said_to_be_wrong_is_read(knowledge, brain, sub_type, said) -> None:
    assert wrong(knowledge, brain, sub_type, said)


@pytest.mark.parametrize(
    ("sub_type", "said"),
    [
        # a value put right is no word on the type (held-out messages of earlier sets)
        ("DAMAGES", "영수증 다시보니까 수리비 85가 아니라 95만원이네요"),
        ("WAGE_ARREARS", "Steven Park. He's an individual, not a company."),
        ("ASSAULT", "That's wrong, I have NOT gone to the police. It was a report to Naver"),
        ("ASSAULT", "폭행은 아니고 밀친 정도예요"),
        ("DIVORCE", "그리고 이혼사유에 경제문제는 아니에요 대출은 식당 대출이고"),
        ("INHERITANCE", "아 사망일 2010 아니에요 그건 할머니고요"),
        ("SCHOOL_VIOLENCE", "그리고 학폭위는 2025년이 아니라 올해 12월 11일이에요."),
        # another type denied is not this one's
        ("LOAN", "사기 사건은 아니고요 그냥 친구라 빌려준 거예요"),
    ],
)
def test_a_value_put_right_is_no_change_of_type(knowledge, brain, sub_type, said) -> None:
    assert not wrong(knowledge, brain, sub_type, said)


def test_once_kept_only_words_of_their_own_offer_it_again(knowledge, brain) -> None:
    denied = "세금 문제가 아니라 스토킹 문제에요"
    assert not wrong(knowledge, brain, "TAX", denied, type_kept="TAX")
    assert wrong(knowledge, brain, "TAX", "유형을 바꿔 주세요", type_kept="TAX")
    assert wrong(knowledge, brain, "TAX", denied, type_kept="FINE")  # kept was another type


async def test_the_person_changes_the_type_and_keeps_what_they_told(
    driver: Driver, knowledge
) -> None:
    first = await driver.send(TAX_STALKER)
    assert (await driver.values())["sub_type"] == "TAX"
    asked = first["field"]
    offer = await driver.send("아니요 세금 문제가 아니라 그분이 저를 스토킹하는 문제에요")
    assert "rt:st:STALKING" in offered(offer) and "rt:keep" in offered(offer)
    assert "rt:all" in offered(offer)
    values = await driver.values()
    assert values["sub_type"] == "TAX" and values["retype"]["candidates"][0] == "STALKING"
    assert asked not in values["facts"]  # the message is no answer to the tax question
    assert not values.get("questions")  # nor a question for the lawyer

    changed = await driver.send(choice="rt:st:STALKING")
    values = await driver.values()
    assert (values["sub_type"], values["case_type"]) == ("STALKING", "CRIMINAL")
    assert "'세금'에서 '스토킹'" in texts(changed)
    # the account is read again for the new type: who it is, when it began
    assert values["facts"]["counterparty"] == "최영란"
    assert values["facts"]["incident_date"] == "2026-05"
    # the tax fields are gone ("고지된 세액: 300만원" was the fee she wants back)
    assert "amount" not in values["facts"]
    assert not any(k.startswith("tax") for k in values["facts"])
    assert "300만원" in " ".join(i["quote"] for i in values["memo"])  # their words stay
    assert values["type_changes"][0]["old"] == "TAX"
    assert values["type_changes"][0]["new"] == "STALKING"
    assert changed["field"] not in values["facts"] and changed["field"] is not None


async def test_keeping_the_type_asks_the_question_again(driver: Driver, knowledge) -> None:
    first = await driver.send(TAX_STALKER)
    await driver.send("세금 상담 아니라니까요. 스토킹 상담 받고싶어요")
    kept = await driver.send(choice="rt:keep")
    assert kept["field"] == first["field"]
    assert knowledge.message("retype_kept", "ko", current="세금") in texts(kept)
    assert (await driver.values())["sub_type"] == "TAX"
    # the same denial again is taken as told; words of their own offer the change again
    again = await driver.send("세금 문제가 아니라 스토킹 문제에요")
    assert not any(d.startswith("rt:") for d in offered(again))
    asked = await driver.send("사건 유형을 바꿔 주세요")
    assert "rt:all" in offered(asked)


async def test_browsing_the_other_types_and_the_free_form_intake(driver: Driver) -> None:
    await driver.send(TAX_STALKER)
    await driver.send("분류가 잘못됐어요")
    main = await driver.send(choice="rt:all")
    assert "rt:ct:CRIMINAL" in offered(main) and "rt:st:OTHER" in offered(main)
    subs = await driver.send(choice="rt:ct:CRIMINAL")
    assert "rt:st:STALKING" in offered(subs) and "rt:st:FRAUD" in offered(subs)
    await driver.send(choice="rt:all")
    await driver.send(choice="rt:st:OTHER")
    values = await driver.values()
    assert values["sub_type"] == "OTHER" and values["type_changes"][-1]["new"] == "OTHER"


async def test_a_reply_that_is_no_pick_answers_the_question_asked(driver: Driver) -> None:
    first = await driver.send("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요")
    asked = first["field"]
    offer = await driver.send("이거 대여금 문제가 아니라 사기 사건이에요")
    assert any(d.startswith("rt:") for d in offered(offer))
    reply = await driver.send("2025년 12월 31일까지 갚기로 했어요")
    values = await driver.values()
    assert values["sub_type"] == "LOAN" and not values.get("retype")
    assert asked in values["facts"] and reply["field"] != asked


async def test_the_engine_takes_the_offered_buttons(engine: Engine) -> None:
    await engine.handle(text(TAX_STALKER))
    offer = await engine.handle(text("세금 문제가 아니라 스토킹 문제에요", minutes=1))
    assert any(c["data"] == "rt:st:STALKING" for m in offer.messages for c in m["choices"])
    changed = await engine.handle(choice("rt:st:STALKING"))
    assert "스토킹" in "\n".join(m["text"] for m in changed.messages)
    assert changed.state == "FACT_COLLECTION"
    async with AsyncSession(engine.records) as db:
        case = (await db.exec(select(CaseMaster))).one()
        assert (case.case_type, case.sub_case_type) == ("CRIMINAL", "STALKING")
    assert "amount" not in await facts_of(engine)  # the tax assessed, dropped with its type


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_summary_lists_the_change_with_the_persons_words(knowledge, kb, lang) -> None:
    said = "세금 문제가 아니라 스토킹 문제에요"
    state = {
        "sub_type": "STALKING",
        "case_type": "CRIMINAL",
        "facts": {"counterparty": "최영란"},
        "type_changes": [{"old": "TAX", "new": "STALKING", "quote": said, "at": "2026-11-28"}],
    }
    summary = build_summary(kb, state, lang, today=date(2026, 11, 28))
    assert summary["structured"]["type_changes"][0]["old"] == "TAX"
    [line] = [x for x in summary["text"].splitlines() if said in x]
    tax, stalking = (knowledge.k1.sub_type(c)[1].label.get(lang) for c in ("TAX", "STALKING"))
    assert f"{tax} → {stalking}" in line
    assert knowledge.message("summary_type_changed", lang) in line
    assert (
        said
        not in build_summary(kb, {**state, "type_changes": []}, lang, today=date(2026, 11, 28))[
            "text"
        ]
    )
