"""A way out of the case-type picker: "none of these" (the button, or typed in any reasonable
wording) leads, at the second decline at the latest, to the free-form intake (K1's OTHER),
whose summary tells staff to classify it. Never a loop of the picker."""

from __future__ import annotations

from pathlib import Path

from tests.test_graph import Driver, texts


def offered(payload: dict) -> list[str]:
    return [c["data"] for m in payload["messages"] for c in m.get("choices", [])]


def picker(payload: dict) -> bool:
    return payload["state"] == "CONFIRM_CASE_TYPE" or any(
        d.startswith(("st:", "ct:")) for d in offered(payload)
    )


async def test_three_declines_in_a_row_end_in_the_free_form_intake(driver: Driver, knowledge):
    first = await driver.send("회사 그만뒀는데 돈을 못 받았어요")
    assert first["state"] == "CONFIRM_CASE_TYPE" and "ct:*" in offered(first)
    second = await driver.send(choice="ct:*")  # none of these: the main types
    assert second["state"] == "CONFIRM_CASE_TYPE"
    assert "ct:CIVIL" in offered(second) and "st:OTHER" in offered(second)
    third = await driver.send("해당 없음")  # none of those either: taken as told
    assert third["state"] == "FACT_COLLECTION" and not picker(third)
    assert knowledge.message("free_form_intake", "ko") in texts(third)
    values = await driver.values()
    assert values["sub_type"] == "OTHER" and values["case_type"] == "OTHER"
    asked = third["field"]
    # A third decline is no answer and no miss, and the picker does not come back.
    again = await driver.send("목록에 없다니까요")
    assert again["field"] == asked and not picker(again)
    assert knowledge.message("free_form_noted", "ko") in texts(again)
    assert asked not in (await driver.values())["facts"]
    assert not (await driver.values()).get("attempts")
    stale = await driver.send(choice="ct:*")
    assert stale["field"] == asked and not picker(stale)
    assert knowledge.message("stale_button", "ko") in texts(stale)


async def test_declining_the_main_types_is_enough(driver: Driver) -> None:
    first = await driver.send("문제가 좀 있어서 상담받고 싶어요")
    assert first["state"] == "CONFIRM_CASE_TYPE" and "ct:*" not in offered(first)
    reply = await driver.send("여기 없어요")
    assert reply["state"] == "FACT_COLLECTION" and not picker(reply)
    assert (await driver.values())["sub_type"] == "OTHER"


async def test_other_among_the_main_types_goes_straight_to_the_free_form_intake(
    driver: Driver,
) -> None:
    await driver.send("문제가 좀 있어서 상담받고 싶어요")
    reply = await driver.send(choice="st:OTHER")
    assert reply["state"] == "FACT_COLLECTION"
    assert (await driver.values())["sub_type"] == "OTHER"


async def test_a_decline_that_says_what_it_is_about_is_classified_with_it(driver: Driver) -> None:
    # The tester's stalking victim: "스토킹이요 여기 없는데요" used to bring the same picker back.
    first = await driver.send("회사 그만뒀는데 돈을 못 받았어요")
    assert first["state"] == "CONFIRM_CASE_TYPE"
    reply = await driver.send("스토킹이요 여기 없는데요")
    assert reply["state"] == "FACT_COLLECTION"
    assert (await driver.values())["sub_type"] == "STALKING"


async def test_typed_descriptions_that_never_settle_it_end_in_the_free_form_intake(
    driver: Driver,
) -> None:
    reply = await driver.send("문제가 좀 있어서 상담받고 싶어요")
    rounds = 0
    while reply["state"] == "CONFIRM_CASE_TYPE":
        rounds += 1
        assert rounds <= 3, "the picker loops"
        reply = await driver.send("그냥 좀 복잡한 일이에요 설명하기 어려워요")
    assert (await driver.values())["sub_type"] == "OTHER"


async def test_none_of_these_in_english(tmp_path: Path, knowledge, brain) -> None:
    d = Driver(tmp_path / "en.db", knowledge, brain, lang="en")
    await d.open()
    try:
        reply = await d.send("I have a problem with a company and need some help")
        assert reply["state"] == "CONFIRM_CASE_TYPE"
        for words in ("none of these fit", "it's not on the list"):
            if reply["state"] == "CONFIRM_CASE_TYPE":
                reply = await d.send(words)
        assert reply["state"] == "FACT_COLLECTION"
        assert knowledge.message("free_form_intake", "en") in texts(reply)
    finally:
        await d.close()


async def test_the_free_form_intake_completes_and_asks_staff_to_classify(
    driver: Driver,
) -> None:
    first = await driver.send("동호회 총무가 회비 장부를 안 보여줘요")
    assert first["state"] == "CONFIRM_CASE_TYPE"  # no listed type has its cues
    reply = await driver.send("여기 없는 일이에요")
    answers = {
        "story_detail": "3년 동안 매달 회비를 냈는데 어디에 썼는지 물어봐도 총무가 장부를 안 보여줘요",
        "counterparty": "동호회 총무 박OO이요",
        "incident_date": "지난달 초에 처음 물어봤어요",
        "money_involved": "네 회비가 걸려 있어요",
        "amount": "90만원이요",
        "desired_outcome": "장부를 보고 쓴 데를 확인하고 싶어요",
        "evidence": "네 있어요",
        "evidence_type": "회비 이체 내역이랑 단톡방 대화요",
    }
    asked = []
    while reply["state"] != "COMPLETED":
        asked.append(reply["field"])
        reply = await driver.send(answers[reply["field"]])
    values = await driver.values()
    assert values["facts"]["amount"] == 900_000
    summary = values["summary"]
    assert summary["structured"]["case_type"] == "OTHER"
    assert summary["structured"]["needs_classification"] is True
    assert "분류 필요" in summary["text"]
    assert "총무가 회비 장부를 안 보여줘요" in summary["text"]  # the person's account for staff


async def test_a_short_account_is_asked_for_more(driver: Driver) -> None:
    await driver.send("문제가 좀 있어서 상담받고 싶어요")
    reply = await driver.send(choice="st:OTHER")
    assert reply["field"] == "story_detail"


async def test_a_story_typed_at_the_picker_is_never_met_with_tell_me_more_again(
    driver: Driver, knowledge
) -> None:
    """legal_set18 S1 declined the types offered and then told his whole story, twice, and got
    "could you tell me a little more?" and the main types again each time: a story typed at
    the picker offers the types it points to (never the declined ones), or is taken as told."""
    first = await driver.send("회사 그만뒀는데 돈을 못 받았어요")
    assert first["state"] == "CONFIRM_CASE_TYPE" and "ct:*" in offered(first)
    declined = {d[3:] for d in offered(first) if d.startswith("st:")}
    more = knowledge.message("describe_more", "ko")
    assert more in texts(await driver.send(choice="ct:*"))
    story = await driver.send("합정동 아이언짐이요 3월 2일에 1년권 96만원 냈는데 문 닫았어요")
    assert more not in texts(story) and "ct:CIVIL" not in offered(story)
    values = await driver.values()
    if story["state"] == "FACT_COLLECTION":  # taken as told, its facts kept
        assert values["sub_type"] == "OTHER" and values["facts"]["incident_date"] == "2026-03-02"
    else:
        shown = {d[3:] for d in offered(story) if d.startswith("st:")}
        assert shown and not shown & declined


async def test_after_a_decline_a_new_story_offers_its_own_types_never_the_declined(
    driver: Driver,
) -> None:
    first = await driver.send("회사 그만뒀는데 돈을 못 받았어요")
    declined = [d for d in offered(first) if d.startswith("st:")]
    await driver.send(choice="ct:*")
    reply = await driver.send("사장이 제 명의로 대출을 받고 돈을 가로챘어요 사기 같아요")
    shown = [d for d in offered(reply) if d.startswith("st:")]
    if reply["state"] == "CONFIRM_CASE_TYPE":
        assert shown and not set(shown) & set(declined)
    else:  # or the words were clear enough to take
        assert (await driver.values())["sub_type"] not in {d[3:] for d in declined}


async def test_after_a_story_and_a_decline_the_main_types_come_without_tell_me_more(
    driver: Driver, knowledge
) -> None:
    """A story typed at the picker, then "none of these": the main types, not "could you tell
    me a little more?" again (what they told is the story)."""
    await driver.send("좀 억울한 일이 있어서요")
    story = await driver.send(
        "합정동 아이언짐 헬스장이요 3월 2일에 1년권 96만원 냈는데 문 닫았어요"
    )
    assert story["state"] == "CONFIRM_CASE_TYPE"  # its words point to types to offer
    main = await driver.send(choice="ct:*")
    assert knowledge.message("describe_more", "ko") not in texts(main)
    assert "st:OTHER" in offered(main)
    done = await driver.send(choice="st:OTHER")
    values = await driver.values()
    assert done["state"] == "FACT_COLLECTION" and values["facts"]["money_involved"] is True
