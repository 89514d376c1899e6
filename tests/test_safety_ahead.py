"""The safety reply never waits for a model: where the channel can send at once (Telegram), it
goes out the moment the rules fire, before the turn runs and any model is asked (issue 29, item
5). In LLM mode a reading can take seconds; 112 advice for "남편이 지금 칼을 들고" must not.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.engine import Engine
from bot.messages import Reply
from knowledge.loader import Knowledge
from tests.fakes.bot_api import FakeBotApi
from tests.fakes.openai_api import FakeOpenAI
from tests.test_llm import llm_settings, reading, text
from tests.test_telegram_e2e import (  # noqa: F401 - fixtures: the index copy, no proxies
    CHAT,
    Bot,
    built_index,
    no_proxy,
    texts,
    wait_text,
)

DANGER = "남편이 지금 칼을 들고 위협하고 있어요"


@pytest.fixture
async def fake():
    async with FakeOpenAI() as server:
        yield server


async def test_the_engine_hands_the_safety_reply_over_before_the_model_is_asked(
    fake: FakeOpenAI, tmp_path: Path, knowledge: Knowledge, kb
) -> None:
    settings = llm_settings(tmp_path, fake, intake_llm_timeout=10.0, intake_llm_budget=20.0)
    engine = await Engine.open(settings, knowledge=knowledge, kb=kb)
    try:
        # The first words are the danger: the turn goes on to classify and read them by model.
        fake.reply_next(json.dumps({"sub_type": "DOMESTIC_VIOLENCE", "confidence": 0.9}), reading())
        fake.delay_next(2.0)  # the model takes its time
        handed: list[tuple[int, list[str]]] = []

        async def first(ahead: Reply) -> bool:
            handed.append((len(fake.chat_requests()), [m["text"] for m in ahead.messages]))
            return True

        reply = await engine.handle(text(DANGER + " 이혼하고 싶어요"), first=first)
        [(asked_then, sent)] = handed
        assert asked_then == 0  # no model request had been made when it was handed over
        assert "112" in sent[0]
        assert fake.chat_requests()  # the turn went on to ask the model
        assert reply.sent == len(sent) and [m["text"] for m in reply.messages[: reply.sent]] == sent
        assert len(reply.messages) > reply.sent  # the intake's own reply follows

        # A channel that could not deliver: the safety reply goes with the turn's reply.
        async def broken(ahead: Reply) -> bool:
            return False

        again = await engine.handle(text("지금도 칼 들고 있어요", minutes=1), first=broken)
        assert again.sent == 0 and "112" in again.messages[0]["text"]

        # No safety reply: nothing goes ahead.
        calm = await engine.handle(text("작년부터 그랬어요", minutes=2), first=first)
        assert calm.sent == 0 and len(handed) == 1
    finally:
        await engine.close()


@pytest.mark.slow
async def test_in_telegram_112_arrives_while_the_model_is_still_reading(
    fake: FakeOpenAI, tmp_path: Path, knowledge: Knowledge
) -> None:
    async with FakeBotApi() as telegram:
        bot = Bot(telegram, tmp_path / "data")
        bot.settings = llm_settings(
            tmp_path,
            fake,
            telegram_bot_token=telegram.token,
            telegram_api_url=f"{telegram.url}/bot",
            intake_typing_delay=0,
            intake_llm_timeout=15.0,
            intake_llm_budget=30.0,
        )
        await bot.start()
        try:
            await telegram.wait_for(lambda: bool(telegram.calls_to("deleteWebhook")), what="start")
            fake.latency = 6.0  # every model answer takes six seconds
            loop = asyncio.get_running_loop()
            pushed = loop.time()
            telegram.push_text(CHAT, DANGER + " 이혼하고 싶어요")
            await wait_text(telegram, CHAT, "112")
            took = loop.time() - pushed
            assert took < 5.0, f"the safety reply took {took:.1f}s"
            assert "112" in texts(telegram, CHAT)[0]  # before anything else, the greeting too
            # the turn's own reply comes once the model answered, and the safety reply is not
            # sent twice
            await telegram.wait_for(lambda: len(telegram.messages(CHAT)) > 1, what="the turn")
            assert loop.time() - pushed >= 6.0 and fake.chat_requests()
            await asyncio.sleep(0.5)
            assert sum("112" in t for t in texts(telegram, CHAT)) == 1
        finally:
            fake.latency = 0.0
            await bot.stop()
