"""A health conversation is never moved to the legal intake by a message that merely sounds
legal: words of seeking care keep it, and mid-conversation the person is offered a button."""

from __future__ import annotations

from datetime import timedelta

from bot.engine import Engine, Inbound
from tests.support import NOW

CHAT = 6161


def said(value: str, *, hours: float = 0) -> Inbound:
    return Inbound(
        chat_id=CHAT, kind="text", text=value, user_id=5, at=NOW + timedelta(hours=hours)
    )


def buttons(reply) -> list[str]:
    return [c["data"] for m in reply.messages for c in m["choices"]]


async def test_seeking_care_is_a_health_message(engine: Engine) -> None:
    await engine.use_domain(CHAT, "medical")
    await engine.handle(said("아들이 열이 39도예요"))
    reply = await engine.handle(
        said("택시 불렀어요 아들 데리고 응급실 가요 가서 뭐라고 말하면 돼요?")
    )
    assert reply.state == "MEDICAL" and reply.field is None
    assert "domain:legal" not in buttons(reply)


async def test_mid_conversation_a_legal_sounding_message_gets_a_button_not_a_switch(
    engine: Engine,
) -> None:
    await engine.use_domain(CHAT, "medical")
    await engine.handle(said("77세인데 넘어져서 무릎이 아파요"))
    reply = await engine.handle(
        said("혼자사는데 애들 걱정시키기 싫어서.. 그냥 좀 누워있으면 낫겠지요?", hours=0.5)
    )
    assert reply.state == "MEDICAL" and reply.field is None
    assert buttons(reply)[-1] == "domain:legal"
    moved = await engine.handle(
        Inbound(
            chat_id=CHAT,
            kind="choice",
            data="domain:legal",
            user_id=5,
            at=NOW + timedelta(hours=0.6),
        )
    )
    assert moved.state != "MEDICAL"


async def test_a_legal_matter_told_cold_still_moves(engine: Engine) -> None:
    await engine.use_domain(CHAT, "medical")
    reply = await engine.handle(said("집주인이 전세 보증금 1억을 안 돌려줘요"))
    assert reply.state != "MEDICAL"


async def test_an_unsure_medicine_is_asked_about_without_an_empty_value(engine: Engine) -> None:
    await engine.use_domain(CHAT, "medical")
    reply = await engine.handle(said("I think I take salbutamol maybe"))
    asks = [m["text"] for m in reply.messages if m["choices"]]
    assert asks and asks[-1].startswith("Shall I note") and " as ?" not in asks[-1]
