"""What the person wants from the case is kept whatever the case type, in their own words,
from any message: a later wish is added beside the earlier one, a question or a wish that is no
outcome ("죽고 싶어요", "상담받고 싶어요") is not a wish, and the summary shows it."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from bot.engine import Inbound
from graphs.common.context import Context
from graphs.legal.amend import amend
from graphs.legal.summary import build_summary
from graphs.legal.wants import wishes
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge
from tests.support import NOW
from tests.test_graph import Driver
from tests.test_hardening import CHAT, graph_values


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500만원 빌려줬는데 안 갚아요. 돈만 돌려받고 싶어요", ["돈만 돌려받고 싶어요"]),
        ("처벌을 원합니다. 접근금지도 받고 싶어요", ["처벌을 원합니다.", "접근금지도 받고 싶어요"]),
        ("I just want my deposit back. Can I sue?", ["I just want my deposit back."]),
        ("그냥 밤에는 조용했으면 좋겠어요", ["그냥 밤에는 조용했으면 좋겠어요"]),
        ("돌려받고 싶은데 가능할까요?", []),  # a question: listed for the lawyer instead
        ("너무 힘들어서 죽고 싶어요", []),
        ("문제가 좀 있어서 상담받고 싶어요", []),
        ("I want to know if I can sue", []),
        ("친구한테 500만원 빌려줬어요", []),
        # legal_set19: the wish said as what comes first, or with 싶죠 / 으면 좋겠어요
        ("당연히 돈 돌려받고 싶죠. 중간에 갚은것도 있긴 해요", ["당연히 돈 돌려받고 싶죠."]),
        (
            "영업정지 취소되거나 줄었으면 좋겠어요 12월7일부터 문닫으래요",
            ["영업정지 취소되거나 줄었으면 좋겠어요"],
        ),
        (
            "이혼하고 애들 둘다 제가 키우고 양육비 받고싶어요 제일 급한건 서연이 데려오는거에요",
            [
                "이혼하고 애들 둘다 제가 키우고 양육비 받고싶어요",
                "제일 급한건 서연이 데려오는거에요",
            ],
        ),
        ("일단 소음이 멈추는게 제일이고요", ["일단 소음이 멈추는게 제일이고요"]),
        ("제일 중요한 건 아니지만 카톡도 있어요", []),
        ("집주인이 12월 20일 전에 나가면 좋겠다고 하더라고요", []),  # what another said
    ],
)
def test_wishes_are_sentences_that_say_what_the_person_wants(
    knowledge: Knowledge, text: str, expected: list[str]
) -> None:
    assert wishes(knowledge, text) == expected


async def test_a_wish_in_any_message_is_kept_and_shown_in_the_summary(
    driver: Driver, kb: KnowledgeBase
) -> None:
    # LOAN does not ask what the person wants; said anyway, it is kept for the lawyer.
    await driver.send("친구한테 2024년 3월에 500만원을 빌려줬는데 안 갚아요. 돈만 돌려받고 싶어요")
    values = await driver.values()
    assert values["sub_type"] == "LOAN"
    assert values["facts"]["desired_outcome"] == "돈만 돌려받고 싶어요"
    assert values["provenance"]["desired_outcome"]["confirmed"] is False
    await driver.send("김민수요. 지급명령도 하고 싶어요")
    facts = (await driver.values())["facts"]
    assert facts["desired_outcome"] == "돈만 돌려받고 싶어요 / 지급명령도 하고 싶어요"
    summary = build_summary(kb, await driver.values(), "ko", today=date(2026, 11, 26))
    sections = {s["title"]: s["items"] for s in summary["structured"]["sections"]}
    assert [i["value"] for i in sections["원하는 해결"]] == [facts["desired_outcome"]]
    assert "지급명령도 하고 싶어요" in summary["text"]


async def test_a_wish_already_said_is_not_asked_for(driver: Driver) -> None:
    # NEIGHBOR_DISPUTE asks what the person wants; said in the first message, it is not asked.
    await driver.send(
        "윗집 층간소음 때문에 1년째 잠을 못 자요. 그냥 밤에만이라도 조용했으면 좋겠어요"
    )
    values = await driver.values()
    assert values["sub_type"] == "NEIGHBOR_DISPUTE"
    assert "조용했으면 좋겠어요" in values["facts"]["desired_outcome"]
    asked = []
    for answer in [
        "층간소음이요",
        "1203호요",
        "작년 10월부터요",
        "관리사무소에 말했어요",
        "아니요",
    ]:
        reply = await driver.send(answer)
        asked.append(reply.get("field"))
    assert "desired_outcome" not in asked


def test_every_summary_format_ends_with_what_the_person_wants(
    knowledge: Knowledge, kb: KnowledgeBase
) -> None:
    for code in knowledge.k2.sub_types:
        keys = [k for s in kb.summary_format(code).sections for k in s.fields]
        assert keys.count("desired_outcome") == 1, code


async def test_a_wish_after_the_summary_is_added_beside_the_others(
    knowledge, brain, kb: KnowledgeBase
) -> None:
    values = {
        "sub_type": "LOAN",
        "case_type": "CIVIL",
        "facts": {"amount": 5000000, "desired_outcome": "돈만 돌려받고 싶어요"},
        "addenda": [],
    }
    ctx = Context(knowledge=knowledge, brain=brain, lang="ko", now=datetime(2026, 11, 26), kb=kb)
    updates, _ = await amend(ctx, values, "그리고 이자까지 받았으면 좋겠어요")
    assert updates["facts"]["desired_outcome"] == (
        "돈만 돌려받고 싶어요 / 그리고 이자까지 받았으면 좋겠어요"
    )
    assert updates["facts"]["amount"] == 5000000
    assert updates["addenda"][-1]["text"] == "그리고 이자까지 받았으면 좋겠어요"
    assert "이자까지" in updates["summary"]["text"]


async def test_amounts_told_instead_of_a_wish_are_kept_and_the_wish_asked_again(
    engine,
) -> None:
    """legal_set15 B3 (both modes): asked what she wants, she first explained the deductions
    ("Before I answer that, let me explain the deductions … wallpaper 1,800,000 …"); it became
    her wish and the intake closed. Her recorded messages, replayed: the amounts stay in the
    memo and the wish is asked again."""

    card = yaml.safe_load(
        (Path(__file__).parent / "data/personas/legal_set15/B3_rules.yaml").read_text("utf-8")
    )
    chat = CHAT
    await engine.use_domain(chat, "legal")
    reply = None
    for step, turn in enumerate(card["turns"][:8]):
        said = str(turn["say"])
        at = NOW + timedelta(minutes=3 * step)
        if said.startswith("choice"):
            inbound = Inbound(chat_id=chat, kind="choice", data=said[6:].strip(), user_id=1, at=at)
        else:
            inbound = Inbound(chat_id=chat, kind="text", text=said, user_id=1, at=at)
        before, reply = reply, await engine.handle(inbound)
    assert before.field == "desired_outcome"
    assert reply.field == "desired_outcome"
    state = await graph_values(engine)
    assert "desired_outcome" not in state["facts"]
    kept = {i["amount"] for i in state["memo"] if i["section"] == "money"}
    assert 6_800_000 in kept


async def test_a_wish_beside_something_not_known_answers_the_wish_question(
    driver: Driver,
) -> None:
    # legal_set19 R1: "누가 한건지는 모르겠어요" in the same answer recorded the wish as unknown
    await driver.send("윗집이 작년 11월부터 매일 밤 쿵쿵거려요 층간소음 때문에 미치겠어요")
    while (reply := await driver.send("잘 모르겠어요"))["field"] not in ("desired_outcome", None):
        pass
    assert reply["field"] == "desired_outcome"
    await driver.send(
        "일단 소음이 멈추는게 제일이고요 10월엔 제 차가 긁혀있었는데 누가 한건지는 "
        "모르겠어요. 위자료 같은거 받을수 있으면 받고 싶고요"
    )
    values = await driver.values()
    assert "desired_outcome" not in values.get("unknown", [])
    assert values["facts"]["desired_outcome"] == (
        "일단 소음이 멈추는게 제일이고요 / 위자료 같은거 받을수 있으면 받고 싶고요"
    )
