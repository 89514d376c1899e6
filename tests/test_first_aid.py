"""While help comes: after a 119-now alert, a health question gets the first-aid steps of the
rules raised (knowledge/safety.yaml `first_aid`), not the general corpus, through the real engine."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.engine import Engine, Inbound
from knowledge.loader import Knowledge, load_knowledge
from knowledge.models import SafetyRules
from tests.support import NOW

CHAT = 6262


def said(value: str, *, hours: float = 0, chat: int = CHAT) -> Inbound:
    return Inbound(
        chat_id=chat, kind="text", text=value, user_id=6, at=NOW + timedelta(hours=hours)
    )


def codes(reply) -> list[str]:
    return [hit.code for hit in reply.alerts]


def texts(reply) -> str:
    return "\n".join(m["text"] for m in reply.messages)


def steps(knowledge: Knowledge, group: str, lang: str) -> list[str]:
    return [step.get(lang) for step in knowledge.safety.first_aid[group].steps]


async def test_aspirin_after_a_stroke_gets_the_stroke_steps_not_the_corpus(
    engine: Engine, knowledge: Knowledge
) -> None:
    question = "옆집 아줌마가 뇌졸중엔 아스피린 먹이라던데 집에 있는 아스피린 먹일까요?"
    await engine.use_domain(CHAT + 1, "medical")
    general = await engine.handle(said(question, chat=CHAT + 1))
    corpus = max((m["text"] for m in general.messages), key=len)  # the general answer
    await engine.use_domain(CHAT, "medical")
    alert = await engine.handle(said("아버지가 갑자기 말이 어눌하고 한쪽 팔에 힘이 없어요"))
    assert codes(alert) == ["STROKE"]
    reply = await engine.handle(said(question, hours=0.2))
    assert codes(reply) == []
    body = texts(reply)
    assert reply.messages[0]["text"] == knowledge.message("level_still_waiting", "ko")
    assert all(step in body for step in steps(knowledge, "stroke", "ko"))
    assert "아스피린을 포함해 어떤 약도" in body
    assert knowledge.message("first_aid_gives", "ko") in body
    assert "https://www.nhs.uk/conditions/stroke/" in body
    assert corpus not in body
    assert "일반 정보일 뿐" not in body


async def test_a_low_sugar_that_cannot_swallow_gets_no_sweets(
    engine: Engine, knowledge: Knowledge
) -> None:
    await engine.use_domain(CHAT, "medical")
    alert = await engine.handle(
        said("남편이 당뇨인데 혈당이 45고 정신이 없고 말이 이상해요. 삼키질 못해요")
    )
    assert "HYPOGLYCAEMIA" in codes(alert)
    reply = await engine.handle(
        said("119 불렀어요 구급차 오는동안 뭐 해야돼요? 사탕 더 먹여요?", hours=0.1)
    )
    body = texts(reply)
    assert "입으로 아무것도(사탕·음료 포함) 주지 마세요" in body
    assert "사탕 3" not in body and "3~4개" not in body and "candy" not in body.lower()
    assert knowledge.message("first_aid_gives", "ko") in body
    assert knowledge.message("med_prompt", "ko") not in body  # no "ask me anything" after it


async def test_an_evening_medicine_while_waiting_gets_the_no_medicine_line(
    engine: Engine, knowledge: Knowledge
) -> None:
    await engine.use_domain(CHAT, "medical")
    await engine.handle(said("아버지가 갑자기 말이 어눌하고 한쪽 팔에 힘이 없어요"))
    reply = await engine.handle(
        said("119 불렀어요. 근데 지금 엘리퀴스 저녁약 드려도 되는건가요?", hours=0.3)
    )
    assert knowledge.message("first_aid_gives", "ko") in texts(reply)


async def test_lie_down_or_sit_up_after_anaphylaxis_gets_the_position_steps(
    engine: Engine, knowledge: Knowledge
) -> None:
    await engine.use_domain(CHAT, "medical")
    alert = await engine.handle(
        said("my throat is tight and my lips are swelling after eating peanuts")
    )
    assert codes(alert) == ["ANAPHYLAXIS"]
    reply = await engine.handle(
        said("should i lie down or sit up while i wait? its a bit hard to breathe", hours=0.1)
    )
    body = texts(reply)
    assert "Lie them down with their legs raised; if breathing is hard, sit them up" in body
    assert "Don't let them stand up or walk" in body
    assert "https://www.nhs.uk/conditions/anaphylaxis/" in body
    assert "While you wait for the ambulance (a severe allergic reaction" in body


async def test_what_to_tell_the_crew_lists_the_profile(
    engine: Engine, knowledge: Knowledge
) -> None:
    await engine.use_domain(CHAT, "medical")
    await engine.handle(said("저는 72세 남자고 고혈압이 있어서 암로디핀 먹어요"))
    await engine.handle(said("갑자기 말이 어눌하고 한쪽 팔에 힘이 없어요", hours=1))
    reply = await engine.handle(
        said("구급대원한테 뭐라고 말해요? 참 저 페니실린 알레르기 있어요", hours=1.2)
    )
    assert codes(reply) == []
    body = texts(reply)
    assert knowledge.message("handover_header", "ko") in body
    handover = next(m["text"] for m in reply.messages if m["text"].startswith("구급대원에게"))
    assert "뇌졸중 의심 증상" in handover  # what raised the alert, in plain words
    assert "암로디핀" in handover and "페니실린 알레르기" in handover
    assert "알레르기: 페니실린 알레르기" in handover
    assert "72세" in handover
    assert "말이 어눌하고" not in handover  # not the person's words


async def test_three_hours_later_a_question_gets_a_normal_answer(
    engine: Engine, knowledge: Knowledge
) -> None:
    await engine.use_domain(CHAT, "medical")
    await engine.handle(said("아버지가 갑자기 말이 어눌하고 한쪽 팔에 힘이 없어요"))
    later = await engine.handle(said("아스피린은 어떤 약이에요?", hours=3))
    body = texts(later)
    assert "구급차를 기다리는 동안" not in body
    assert knowledge.message("first_aid_gives", "ko") not in body
    assert later.messages[0]["text"] == knowledge.message("level_still_medical", "ko")


async def test_a_be_seen_today_alert_does_not_switch_it_on(engine: Engine) -> None:
    await engine.use_domain(CHAT, "medical")
    first = await engine.handle(said("아스피린 먹고 있는데 어제부터 변이 까맣게 나와요"))
    assert codes(first) == ["BLACK_STOOL"]
    asked = await engine.handle(said("철분제를 먹어도 되나요?", hours=0.2))
    assert "구급차를 기다리는 동안" not in texts(asked)


def test_every_119_now_rule_has_a_first_aid_group(knowledge: Knowledge) -> None:
    safety = knowledge.safety
    medical = [rule for rule in safety.rules if rule.category == "medical"]
    assert len(medical) >= 20
    for rule in medical:
        group = safety.first_aid[rule.first_aid]
        assert 3 <= len(group.steps) <= 5 and group.source.url.startswith("https://")
    assert not [r.code for r in safety.rules if r.category != "medical" and r.first_aid]


def test_a_119_now_rule_without_a_group_does_not_load() -> None:
    data = load_knowledge().safety.model_dump()
    stroke = next(r for r in data["rules"] if r["code"] == "STROKE")
    stroke["first_aid"] = None
    with pytest.raises(ValueError, match="STROKE.first_aid"):
        SafetyRules.model_validate(data)
    stroke["first_aid"] = "no_such_group"
    with pytest.raises(ValueError, match="unknown group"):
        SafetyRules.model_validate(data)


@pytest.mark.parametrize(
    ("arrived", "stands_down"),
    [
        ("응급실 도착했어요", True),
        ("병원이라니까요 119 그만 얘기하세요", True),
        ("we're at the hospital now, they took him in", True),
        ("응급상황 아니에요!! 저는 괜찮아요", True),
        # near-misses: asking whether to go, or on the way
        ("병원에 가야돼요?", False),
        ("구급차 기다리는 중이에요", False),
    ],
)
async def test_once_help_has_come_the_alert_stands_down(
    engine: Engine, arrived: str, stands_down: bool
) -> None:
    await engine.use_domain(CHAT, "medical")
    await engine.handle(said("아빠가 갑자기 말이 어눌하고 오른팔에 힘이 없어요"))
    told = await engine.handle(said(arrived, hours=0.3))
    assert ("다행이에요" in texts(told) or "glad" in texts(told)) is stands_down
    later = await engine.handle(said("혈압약은 계속 드셔도 되나요?", hours=0.5))
    held = "구급차를 기다리는 동안" in texts(later) or "119" in texts(later)
    assert held is not stands_down, texts(later)


async def test_the_alerts_own_message_says_what_to_do_while_waiting(
    engine: Engine, knowledge: Knowledge
) -> None:
    await engine.use_domain(CHAT, "medical")
    alert = await engine.handle(said("아버지가 갑자기 말이 어눌하고 오른팔에 힘이 없어요"))
    assert codes(alert) == ["STROKE"]
    body = texts(alert)
    assert body.startswith("지금 바로 119에 전화하세요")
    assert all(step in body for step in steps(knowledge, "stroke", "ko"))
    assert "https://www.nhs.uk/conditions/stroke/" in body  # sourced
    assert "피로" not in body  # an arm without strength is no tiredness
