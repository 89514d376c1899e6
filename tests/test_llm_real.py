"""LLM mode against a real model: Qwen2.5-Coder-1.5B-Instruct on llama.cpp's server, both from
PyPI (the `llm` extra; tests/llm_model.py), started once on 127.0.0.1 by the `llm_server`
fixture (or the server INTAKE_LLM_BASE_URL names). `-m llm` runs these alone.

The model is small and weak on Korean meaning, so these tests hold the plumbing, the checks and
the fallback, never its judgement: what it answers is an object of the schema or a failure
with its reason, counted; what the brain records of its reading are words of the message, in
fields of the case type, that pass the rules' readers; a case type is one of K1; an intake in
LLM mode completes with every message answered, the tokens counted; the medical reader records
the rules' items or, to be confirmed, what the rules read of the model's words. Each model call takes
seconds, so there are few of them (about a dozen)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from datetime import datetime

import pytest

from bot.config import Settings
from bot.engine import Engine
from graphs.common.context import Context
from graphs.common.llm import LLMClient, LLMConfig, LLMFailure
from graphs.common.reading import Role
from graphs.legal.llm_brain import LLMBrain, LLMClassification
from graphs.legal.llm_summary import narrate
from graphs.legal.narrative_checks import Record, check_sentence
from graphs.legal.rules_brain import RulesBrain
from graphs.medical import llm_reader, llm_writer, memory, questions
from graphs.medical.about import extractor
from knowledge.loader import Knowledge
from tests.llm_model import LLMEndpoint
from tests.support import WAIT
from tests.test_hardening import choice, session_of, text
from tests.test_llm_medical import GLUCOSE, SALT, entry_passage
from tests.test_llm_summary import loan_state

pytestmark = pytest.mark.llm

NOW = datetime(2026, 11, 26, 12, 0)
CLASSIFY = "Classify the person's legal problem as one code: LOAN, FRAUD or WAGE_ARREARS."


def client_for(server: LLMEndpoint, **options) -> LLMClient:
    # A call may wait for the ones before it on a busy machine: bounded by WAIT, not by speed.
    return LLMClient(
        LLMConfig(
            base_url=server.base_url,
            api_key=server.api_key,
            model=server.model,
            timeout=WAIT,
            **options,
        )
    )


@pytest.mark.parametrize("mode", ["json_schema", "json_mode", "function_calling"])
async def test_each_way_of_asking_for_json_gives_an_object_of_the_schema_or_a_counted_failure(
    llm_server: LLMEndpoint, mode: str
) -> None:
    client = client_for(llm_server, structured=mode)
    try:
        result, usage = await client.structured(
            "classify", LLMClassification, system=CLASSIFY, user="친구한테 돈 빌려줬는데 안 갚아요"
        )
    except LLMFailure as failure:
        # Only json_schema is enforced by the server (a grammar). In json_mode this model tends
        # to echo the schema's shape, and llama.cpp does not hold it to a named tool
        # (tool_choice): it answers in plain text. Either does not fit, is asked once more, and
        # the call fails with its reason, counted, and the tokens spent counted too.
        assert mode != "json_schema", f"json_schema is enforced, yet: {failure.reason}"
        assert failure.reason == "unparsable" and client.calls == {"unparsable": 1}
        assert client.usage.prompt_tokens > 0 and client.usage.completion_tokens > 0
        return
    finally:
        await client.close()
    assert isinstance(result, LLMClassification)  # validated against the schema
    assert 0 <= result.confidence <= 1 and result.sub_type
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert client.usage == usage and client.calls == {"ok": 1}


@pytest.fixture
async def llm_brain(llm_server: LLMEndpoint, knowledge: Knowledge):
    client = client_for(llm_server)
    yield LLMBrain(knowledge, client, rules=RulesBrain(knowledge), budget=WAIT)
    await client.close()


@pytest.mark.parametrize(
    ("message", "asked"),
    [
        ("I lent my coworker Tom 2 million won last May", None),
        ("올해 6월 말까지 갚기로 했어요", "repayment_date"),
    ],
)
async def test_what_the_brain_takes_of_a_real_reading_is_words_of_the_message_the_rules_accept(
    llm_brain: LLMBrain, message: str, asked: str | None
) -> None:
    said = await llm_brain.read(message, sub_type="LOAN", asked=asked, now=NOW)
    rules = await llm_brain.rules.read(message, sub_type="LOAN", asked=asked, now=NOW)
    client = llm_brain.client
    assert client.calls["ok"] + sum(v for k, v in client.calls.items() if k != "ok") == 1
    assert client.usage.prompt_tokens > 0  # counted, answered or not
    fields = set(llm_brain.rules.extractor.field_keys("LOAN"))
    lowered = " ".join(message.lower().split())
    spec_of = llm_brain.knowledge.k2.field
    for value in said.values:
        if value in rules.values:
            continue  # the rules' own reading
        # The model's: words of the message, a field of LOAN, a value the rules' readers give.
        assert value.field in fields, value
        assert value.said and " ".join(value.said.lower().split()) in lowered, value
        parsed, invalid = llm_brain.rules.extractor.parse_answer(
            spec_of("LOAN", value.field), value.said, now=NOW
        )
        assert invalid is None and parsed == value.value, value
    for key, recorded in said.facts.items():
        assert key in fields
        if key not in rules.facts:  # only the model found it: checked as above
            assert any(v.field == key and v.value == recorded for v in said.values)
    if said.answer is not None and said.answer != rules.answer:
        assert any(v.role is Role.ANSWER and v.field == asked for v in said.values)


async def test_a_real_classification_names_only_k1_sub_types(
    llm_brain: LLMBrain, knowledge: Knowledge
) -> None:
    said = await llm_brain.classify_case(
        "중고나라에서 노트북 사려고 50만원 보냈는데 연락이 끊겼어요"
    )
    codes = {sub.code for _, sub in knowledge.k1.all_sub_types()}
    assert said.candidates and {c.sub_type for c in said.candidates} <= codes
    assert said.confidence <= 0.9  # the model's say is never certainty
    assert llm_brain.client.calls.total() == 1  # one call, answered or a counted failure


# The person's answers, by the field the intake asks; any other question gets "모르겠어요".
ANSWERS = {
    "counterparty": "친구 김철수요",
    "amount": "300만원이요",
    "incident_date": "작년 3월이요",
    "repayment_date": "올해 6월 말까지요",
    "counterparty_type": "친구예요",
}


async def test_a_loan_intake_in_llm_mode_completes_with_every_message_answered(
    llm_server: LLMEndpoint, tmp_path, knowledge: Knowledge, kb
) -> None:
    settings = Settings(
        intake_data_dir=tmp_path / "data",
        intake_llm="on",
        intake_llm_base_url=llm_server.base_url,
        intake_llm_api_key=llm_server.api_key or None,
        intake_llm_model=llm_server.model,
        intake_llm_timeout=WAIT,  # the model's answers are taken, however busy the machine
        intake_llm_budget=WAIT,
        _env_file=None,
    )
    engine = await Engine.open(settings, knowledge=knowledge, kb=kb)
    try:
        brain = engine.services.brain
        assert isinstance(brain, LLMBrain)
        reply = await engine.handle(text("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요"))
        for minute in range(1, 10):
            assert reply.messages, "every message is answered"
            if reply.state == "COMPLETED":
                break
            buttons = reply.messages[-1]["choices"]
            if buttons:  # a choice: "no" where there is one, else the first
                data = next((b["data"] for b in buttons if b["data"].endswith(":no")), None)
                reply = await engine.handle(choice(data or buttons[0]["data"]))
            else:
                words = ANSWERS.get(reply.field or "", "모르겠어요")
                reply = await engine.handle(text(words, minutes=minute))
        assert reply.state == "COMPLETED"
        state = await engine.intake_state((await session_of(engine)).id)
        assert state["sub_type"] == "LOAN" and state["status"] == "completed"
        # The model classified and read (an answer cut short at the test server's token limit
        # would be a counted failure, and the rules' reading taken).
        assert brain.client.calls["ok"] >= 1 and brain.client.calls.total() >= 2
        assert brain.client.usage.prompt_tokens > 0 and brain.client.usage.completion_tokens > 0
    finally:
        await engine.close()


async def test_a_real_medical_reading_records_only_words_of_the_message_the_rules_accept(
    llm_server: LLMEndpoint, knowledge: Knowledge
) -> None:
    message = "I take metformin and my blood pressure was 150/95 this morning"
    ruled = questions.profile_slots(extractor(), message)
    client = client_for(llm_server)
    ctx = Context(
        knowledge=knowledge,
        brain=RulesBrain(knowledge),
        lang="en",
        now=NOW,
        llm=client,
        llm_deadline=asyncio.get_running_loop().time() + WAIT,
    )
    try:
        said = await llm_reader.read(ctx, extractor(), message, ruled)
    finally:
        await client.close()
    assert client.calls.total() == 1  # one call: answered, or failed with its reason, counted
    if not client.calls["ok"]:
        assert said is ruled  # the rules' reading alone
        return
    ours = {(i.slot, i.name): i for i in ruled.items}
    for item in said.items:
        if item.source == "rules":  # the rules' own, at most made unsure by the model
            assert item in (
                ours[(item.slot, item.name)],
                replace(ours[(item.slot, item.name)], unsure=True),
            )
            continue
        # Only the model's: read by the rules from words of the message, to be confirmed.
        assert item.source == "model" and item.unsure and memory.status_of(item) == "current"
        assert (item.slot, item.name) not in ours
        if isinstance(item.value, int | float):
            assert f"{item.value:g}" in message
        else:
            assert item.text.lower() in message.lower()


async def test_a_real_summary_narrative_is_checked_sentences_or_the_rules_with_a_reason(
    llm_server: LLMEndpoint, knowledge: Knowledge, caplog
) -> None:
    client = client_for(llm_server)
    state = loan_state()
    try:
        ctx = Context(
            knowledge=knowledge,
            brain=RulesBrain(knowledge),
            lang="ko",
            now=NOW,
            llm=client,
            llm_deadline=asyncio.get_running_loop().time() + WAIT,
        )
        told = await narrate(ctx, state)
    finally:
        await client.close()
    # one call, asked once more when its answer did not fit the schema, or a counted failure
    assert 1 <= client.calls.total() <= 2
    if told.sentences is None:  # the rules' narrative, and why, logged
        assert told.reason and f"the rules write the narrative ({told.reason}" in caplog.text
        return
    record = Record.of(knowledge, state, "ko", NOW, state["description"])
    for sentence in told.sentences:  # every sentence kept passes every check
        cited = sentence.get("items", [])
        assert (
            check_sentence(knowledge, record, sentence["text"], sentence["fields"], cited) is None
        )
    assert len(told.sentences) * 2 >= len(told.sentences) + sum(told.dropped.values())


async def test_a_real_medical_composition_is_checked_or_the_rules_answer_with_a_reason(
    llm_server: LLMEndpoint, knowledge: Knowledge, kb, caplog, monkeypatch
) -> None:
    """One English question, one sample (agreement is the fake's to test): what comes back is
    sentences that passed every check, citing only the passages given, or None with a reason
    logged (the rules' body then)."""
    monkeypatch.setattr(llm_writer, "SAMPLES", 1)
    client = client_for(llm_server)
    passages = [entry_passage(GLUCOSE), entry_passage(SALT)]
    ctx = Context(
        knowledge=knowledge,
        brain=RulesBrain(knowledge),
        lang="en",
        now=NOW,
        kb=kb,
        llm=client,
        llm_deadline=asyncio.get_running_loop().time() + WAIT,
    )
    try:
        with caplog.at_level(logging.WARNING):
            written = await llm_writer.compose(ctx, "What is a normal fasting glucose?", passages)
    finally:
        await client.close()
    assert client.calls.total() == 1  # one call, answered or a counted failure
    if written is None:
        assert "the rules' answer" in caplog.text
        return
    assert written.body and len(written.body) <= llm_writer.MAX_SENTENCES
    assert {p.id for p in written.cited} <= {p.id for p in passages} and written.cited
    for sentence in written.body:
        assert llm_writer.in_language(sentence, "en")
        assert llm_writer.numbers_hold(sentence, written.cited)
