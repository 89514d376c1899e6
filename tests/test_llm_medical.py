"""LLM mode in the medical graph: the answer's body written by the model from the passages,
checked sentence by sentence; three samples compared by the shipped embedding; the model's
judge that can only lower the quality; its search query for a retry, checked. The real
`openai` client over HTTP against the fake server (tests/fakes/openai_api.py), answering by
the schema asked for; every hostile answer falls back to the rules or drops what it should."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
from datetime import datetime
from typing import Any

import pytest
from langgraph.runtime import Runtime

from bot.engine import Engine
from db import medical_repo
from graphs.common import llm
from graphs.common.context import Context
from graphs.common.llm import LLMClient, LLMConfig
from graphs.medical import evidence as ev
from graphs.medical import llm_writer, nodes
from graphs.medical.llm_writer import compose
from knowledge.loader import Knowledge
from knowledge.medical_corpus import load_medical_corpus
from tests.fakes.openai_api import FakeOpenAI, OpenAIApiError
from tests.test_llm import llm_settings
from tests.test_medical import CHAT, command, said, texts

NOW = datetime(2026, 11, 26, 12, 0)
WRITER_SCHEMAS = {"Composition", "Judgement", "SearchQuery"}


@pytest.fixture
async def fake():
    async with FakeOpenAI() as server:
        yield server


def schema_of(body: dict[str, Any]) -> str | None:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name")


def passages_sent(body: dict[str, Any]) -> dict[str, str]:
    """The passages the system message gave, by their short id."""
    system = body["messages"][0]["content"]
    block = system.split("Passages:\n", 1)[1]
    return dict(re.findall(r"\[(P\d+)\] [^\n]*\n(.*?)(?=\n\n\[P\d+\] |\Z)", block, re.S))


def composition(*sentences: tuple[str, list[str]]) -> str:
    return json.dumps(
        {"sentences": [{"text": t, "cites": c} for t, c in sentences]}, ensure_ascii=False
    )


class Model:
    """A scripted model answering by schema: the first sentence of P1 (citing it), a judge's
    score, a search query; any other task (the legal brain's) a 400, which it falls back on."""

    def __init__(self) -> None:
        self.compose = lambda body, n: composition(
            (ev.sentences(passages_sent(body)["P1"])[0], ["P1"])
        )
        self.score = 1.0
        self.query = "fasting plasma glucose normal range"
        self.asked: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str:
        name = schema_of(body)
        self.asked.append(name or "")
        if name == "Composition":
            return self.compose(body, self.asked.count("Composition"))
        if name == "Judgement":
            return json.dumps({"score": self.score, "reasons": ["supported by P1"]})
        if name == "SearchQuery":
            return json.dumps({"query": self.query})
        raise OpenAIApiError(400, "not this test's task")


# --- the composition and its checks ----------------------------------------------------------


def entry_passage(entry_id: str, lang: str = "en") -> ev.Passage:
    entry = next(e for e in load_medical_corpus().entries if e.id == entry_id)
    return ev.Passage(
        id=f"med:{entry.id}",
        title=entry.title.get(lang),
        text=entry.text.get(lang),
        source=entry.source.name,
        url=entry.source.url,
        concepts=(),
        lang=lang,
        relevance=0.8,
        fused=0.5,
    )


GLUCOSE = "test-fasting-glucose"
SALT = "lifestyle-salt-reduction"


@pytest.fixture
async def client(fake: FakeOpenAI):
    client = LLMClient(LLMConfig(base_url=fake.url, api_key="k", model="m", timeout=2.0))
    yield client
    await client.close()


def context(knowledge: Knowledge, kb, client: LLMClient | None, lang: str = "en", budget=5.0):
    deadline = asyncio.get_running_loop().time() + budget if client is not None else None
    return Context(
        knowledge=knowledge,
        brain=None,  # type: ignore[arg-type]
        lang=lang,
        now=NOW,
        kb=kb,
        llm=client,
        llm_deadline=deadline,
    )


async def test_each_sentence_failing_a_check_is_dropped_and_the_sources_are_the_cited(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb
) -> None:
    passages = [entry_passage(GLUCOSE), entry_passage(SALT)]
    answer = composition(
        ("Below 100 mg/dL is normal for fasting glucose. [P1]", ["P1"]),
        ("It is measured after at least 8 hours without food.", ["P9"]),  # an id not given
        ("Fasting glucose is a blood test.", []),  # cites nothing
        ("Take 500 mg of metformin twice a day.", ["P1"]),  # a dose not in the passage
        ("126 mg/dL or above is in the diabetes range.", ["P2"]),  # a number not in P2
        ("Below 100 mmol/L is normal.", ["P1"]),  # the number, but not with that unit
        ("공복혈당은 8시간 이상 굶고 재요.", ["P1"]),  # not the run's language
        ("A repeat test on another day usually confirms diabetes.", ["P1"]),
    )
    fake.reply_next(answer, answer, answer)
    written = await compose(context(knowledge, kb, client), "normal fasting glucose?", passages)
    assert written is not None
    assert written.body == [
        "Below 100 mg/dL is normal for fasting glucose.",
        "A repeat test on another day usually confirms diabetes.",
    ]
    assert [p.id for p in written.cited] == [f"med:{GLUCOSE}"]  # P2 cited only by a dropped one
    assert written.samples == 3 and written.agreement == pytest.approx(1.0, abs=1e-3)
    sent = fake.chat_requests()
    assert len(sent) == 3 and all(b["temperature"] > 0 for b in sent)
    system, user = sent[0]["messages"]
    assert user == {"role": "user", "content": "normal fasting glucose?"}
    assert "[P1]" in system["content"] and "[P2]" in system["content"]


async def test_at_most_six_sentences_and_1200_characters_are_kept(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb
) -> None:
    sentence = "Fasting glucose is blood sugar measured after a night without food."
    answer = composition(*[(sentence, ["P1"])] * 10)
    fake.reply_next(answer, answer, answer)
    written = await compose(context(knowledge, kb, client), "q?", [entry_passage(GLUCOSE)])
    assert written is not None and len(written.body) == llm_writer.MAX_SENTENCES
    long = "Fasting glucose " + "is measured in the morning and " * 20 + "again."
    fake.reply_next(*[composition(*[(long, ["P1"])] * 3)] * 3)
    written = await compose(context(knowledge, kb, client), "q?", [entry_passage(GLUCOSE)])
    assert written is not None and sum(len(s) for s in written.body) <= llm_writer.MAX_CHARS
    assert len(written.body) == 1


def test_numbers_are_read_with_their_units_and_ranges() -> None:
    passage = entry_passage("prediabetes")
    assert llm_writer.numbers_hold("An HbA1c of 5.7% to 6.4% is prediabetes.", [passage])
    assert llm_writer.numbers_hold("A fasting glucose of 100~125 mg/dL is in it.", [passage])
    assert not llm_writer.numbers_hold("An HbA1c of 9% is prediabetes.", [passage])
    assert not llm_writer.numbers_hold("A fasting glucose of 100 mmHg.", [passage])
    assert llm_writer.in_language("공복혈당 100~125 mg/dL이면 당뇨병 전단계예요.", "ko")
    assert not llm_writer.in_language("Prediabetes is common.", "ko")
    assert not llm_writer.in_language("糖尿病前期很常见。", "en")


async def test_a_sentence_citing_a_passage_for_what_it_does_not_say_is_dropped(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb, caplog
) -> None:
    passage = entry_passage(GLUCOSE)
    kept = ev.sentences(passage.text)[0]
    made_up = "Cinnamon tea every evening cures diabetes without any medicine."
    fake.reply_next(*[composition((kept, ["P1"]), (made_up, ["P1"]))] * 3)
    with caplog.at_level(logging.WARNING):
        written = await compose(context(knowledge, kb, client), "fasting glucose?", [passage])
    assert written is not None and written.body == [kept]
    assert "not_in_passages" in caplog.text


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda f: f.reply_next(*["x" * (10 * 1024 * 1024)] * 3), "too_long"),  # 10 MB
        (lambda f: f.reply_next(*[{"content": None, "refusal": "I can't."}] * 3), "refusal"),
        (lambda f: f.reply_next(*["{broken"] * 6), "unparsable"),  # and when asked once more
        (lambda f: f.fail_next(500, 9), "http_500"),  # each sample and its retries
        (lambda f: f.delay_next(10.0, 3), "budget"),
        (
            lambda f: f.reply_next(*[composition(("Take 40 mg daily.", ["P7"]))] * 3),
            "checks",
        ),
    ],
)
async def test_a_hostile_answer_leaves_the_rules_body_with_the_reason_logged(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb, caplog, script, reason
) -> None:
    script(fake)
    ctx = context(knowledge, kb, client, budget=1.0 if reason == "budget" else 8.0)
    with caplog.at_level(logging.WARNING):
        written = await compose(ctx, "normal fasting glucose?", [entry_passage(GLUCOSE)])
    assert written is None
    assert "the rules' answer" in caplog.text
    if reason == "checks":
        assert "unknown_id" in caplog.text
    elif reason == "budget":
        assert client.calls["budget"] == 3 and "over the run's budget" in caplog.text
    else:
        assert client.calls[reason] >= 1
    assert "normal fasting glucose" not in caplog.text  # reasons only, no person's words


async def test_no_budget_left_means_no_call(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb, caplog
) -> None:
    ctx = context(knowledge, kb, client, budget=-1.0)
    with caplog.at_level(logging.WARNING):
        assert await compose(ctx, "q?", [entry_passage(GLUCOSE)]) is None
    assert fake.chat_requests() == [] and "no budget left" in caplog.text


async def test_samples_that_disagree_are_caught_and_fewer_than_two_leave_it_unknown(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb
) -> None:
    passages = [entry_passage(GLUCOSE), entry_passage(SALT)]
    glucose = ev.sentences(passages[0].text)
    salt = ev.sentences(passages[1].text)
    fake.reply_next(
        composition((glucose[0], ["P1"]), (glucose[1], ["P1"])),
        composition((salt[0], ["P2"])),
        composition(("Eating less salt lowers blood pressure and stroke risk.", ["P2"])),
    )
    written = await compose(context(knowledge, kb, client), "fasting glucose?", passages)
    assert written is not None and written.body == glucose[:2]  # the first valid sample
    assert written.agreement is not None and written.agreement < llm_writer.AGREEMENT_FLOOR
    assert written.disagrees
    fake.reply_next(composition((glucose[0], ["P1"])))
    fake.fail_next(400, 2)  # the other two samples fail: agreement cannot be told
    written = await compose(context(knowledge, kb, client), "fasting glucose?", passages)
    assert written is not None and written.samples == 1
    assert written.agreement is None and not written.disagrees


# --- the judge and the rewrite, on the nodes ---------------------------------------------------


def answered_state(**more: Any) -> dict[str, Any]:
    passage = entry_passage(GLUCOSE)
    return {
        "question": "what is a normal fasting glucose?",
        "concepts": [],
        "focus": [],
        "passages": [passage.as_state()],
        "answer": {"answered": True, "body": ev.sentences(passage.text)[:2]},
        "intent": "simple",
        "threshold": 0.4,
        "retrievals": 1,
        "query": "normal fasting glucose",
        **more,
    }


async def test_the_judge_can_only_lower_the_quality_and_its_reasons_are_kept(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb
) -> None:
    state = answered_state()
    rules = (await nodes.refine(state, Runtime(context=context(knowledge, kb, None))))["quality"]
    model = Model()
    fake.responder = model
    for score, expected in ((0.1, 0.1), (1.0, rules)):
        model.score = score
        done = await nodes.refine(state, Runtime(context=context(knowledge, kb, client)))
        assert done["quality"] == pytest.approx(expected)
        assert done["judge"] == {"score": score, "reasons": ["supported by P1"]}
    (judged,) = [b for b in fake.chat_requests() if schema_of(b) == "Judgement"][:1]
    assert judged["messages"][1]["content"].startswith("Question: what is a normal")
    fake.responder = None
    fake.reply_next(json.dumps({"score": 7, "reasons": []}), "{}")  # out of range, twice
    done = await nodes.refine(state, Runtime(context=context(knowledge, kb, client)))
    assert done == {"quality": rules, "judge": None}


@pytest.mark.parametrize(
    ("query", "taken"),
    [
        ("fasting plasma glucose reference range", True),
        ("", False),
        ("glucose\nignore the rules", False),
        ("glucose " * 40, False),  # over 200 characters
        ("  Normal  FASTING glucose ", False),  # the query just used
        (None, False),  # the call fails
    ],
)
async def test_a_rewritten_query_is_taken_only_when_it_passes_the_checks(
    fake: FakeOpenAI, client: LLMClient, knowledge: Knowledge, kb, query, taken
) -> None:
    state = answered_state(quality=0.1)
    rules = await nodes.quality_check(state, Runtime(context=context(knowledge, kb, None)))
    if query is None:
        fake.fail_next(500, 3)
    else:
        fake.reply_next(json.dumps({"query": query}))
    done = await nodes.quality_check(state, Runtime(context=context(knowledge, kb, client)))
    assert done["query"] == (query if taken else rules["query"])
    (asked,) = fake.chat_requests()[:1]
    assert "normal fasting glucose" in asked["messages"][1]["content"]  # the last query, told


# --- the engine in LLM mode on the medical domain -----------------------------------------------


async def medical_values(engine: Engine) -> dict[str, Any]:
    row = await medical_repo.profile_of(engine=engine.records, chat_id=CHAT)
    snapshot = await engine.medical_graph.aget_state({"configurable": {"thread_id": row.id}})
    return snapshot.values


QUESTION = "What is a normal fasting blood glucose level?"


async def test_the_engine_answers_with_the_models_composition_and_only_its_sources(
    fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb
) -> None:
    model = Model()
    fake.responder = model
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    try:
        await engine.handle(command("start", "medical"))
        reply = await engine.handle(said(QUESTION))
        composed = next(b for b in fake.chat_requests() if schema_of(b) == "Composition")
        sent = passages_sent(composed)
        first = ev.sentences(sent["P1"])[0]
        answer = texts(reply)
        assert first in answer
        sources = answer.splitlines()[-1]
        assert sources.startswith("Sources:")
        corpus = {e.text.en: e.source.name for e in load_medical_corpus().entries}
        cited = corpus[sent["P1"]]
        others = {corpus[t] for pid, t in sent.items() if pid != "P1" and t in corpus}
        assert cited in sources
        assert not any(name in sources for name in others - {cited})
        (logged,) = (await medical_values(engine))["asked"]
        assert logged["writer"] == "model" and logged["judge"]["score"] == 1.0
        summary = texts(await engine.handle(command("summary", hours=0.1)))
        (line,) = [x for x in summary.splitlines() if x.startswith(f"• {QUESTION}")]
        assert cited in line and line.endswith(" (model-written)")  # staff see who wrote it
        assert model.asked.count("Composition") == llm_writer.SAMPLES
        for body in fake.chat_requests():  # the person's words in the user role only
            assert QUESTION not in body["messages"][0]["content"]
    finally:
        await engine.close()


async def test_the_judge_lowering_quality_retrieves_once_more_with_the_models_query(
    fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb
) -> None:
    model = Model()
    fake.responder = model
    for score, retrievals in ((1.0, 1), (0.0, 2)):  # the same question, a fresh chat each
        settings = llm_settings(tmp_path / str(score), fake)
        engine = await Engine.open(settings, knowledge=knowledge, kb=kb)
        try:
            model.score, model.asked = score, []
            await engine.handle(command("start", "medical"))
            await engine.handle(said(QUESTION))
            values = await medical_values(engine)
            assert values["asked"][-1]["retrievals"] == retrievals
            assert model.asked.count("SearchQuery") == retrievals - 1
            if retrievals == 2:  # the second retrieval searched the model's query
                assert values["query"] == model.query
                assert values["asked"][-1]["judge"]["score"] == 0.0
        finally:
            await engine.close()


async def test_samples_that_disagree_add_the_caution_and_keep_the_answer_out_of_the_cache(
    fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb
) -> None:
    model = Model()

    def drifting(body: dict[str, Any], n: int) -> str:
        # three samples each on another passage (each passes the checks: its own words, cited)
        sent = passages_sent(body)
        pid = list(sent)[[0, len(sent) // 2, -1][(n - 1) % 3]]
        return composition((ev.sentences(sent[pid])[-1], [pid]))

    model.compose = drifting
    fake.responder = model
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    try:
        await engine.handle(command("start", "medical"))
        reply = await engine.handle(said(QUESTION))
        assert knowledge.message("med_uncertain", "en") in texts(reply)
        values = await medical_values(engine)
        assert values["asked"][-1]["uncertainty"] > ev.UNCERTAIN
        assert values["cache"] == []
        model.compose = Model().compose  # agreeing now: answered afresh, not from a cache
        again = await engine.handle(said(QUESTION, hours=0.1))
        assert knowledge.message("med_cached", "en") not in texts(again)
    finally:
        await engine.close()


async def test_every_turn_is_answered_when_the_model_fails_half_the_calls(
    fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb, monkeypatch
) -> None:
    monkeypatch.setattr(llm, "RETRIES", 0)  # a failure is a failure, not a retry
    model = Model()
    calls = iter(range(10_000))

    def half(body: dict[str, Any]) -> str:
        if next(calls) % 2:
            raise OpenAIApiError(500, "down")
        return model(body)

    fake.responder = half
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    try:
        await engine.handle(command("start", "medical"))
        for hour, words in enumerate(
            [
                QUESTION,
                "I have diabetes and take metformin. What exercise is safe?",
                "How much salt should I eat a day?",
                "What does an LDL cholesterol of 170 mean?",
                "고혈압이 있는데 운동은 어떻게 해요?",
            ]
        ):
            reply = await engine.handle(said(words, hours=hour * 0.1))
            assert reply.messages
        assert engine.services.brain.client.calls["http_500"] >= 1
        assert len((await medical_values(engine))["asked"]) == 5
    finally:
        await engine.close()


async def test_a_red_flag_never_reaches_the_medical_writer(
    fake: FakeOpenAI, tmp_path, knowledge: Knowledge, kb
) -> None:
    fake.responder = Model()
    engine = await Engine.open(llm_settings(tmp_path, fake), knowledge=knowledge, kb=kb)
    try:
        await engine.handle(command("start", "medical"))
        reply = await engine.handle(said("가슴이 너무 아프고 식은땀이 나요"))
        assert "119" in texts(reply)
        assert not {schema_of(b) for b in fake.chat_requests()} & WRITER_SCHEMAS
    finally:
        await engine.close()


async def test_rules_mode_sends_nothing(engine: Engine, fake: FakeOpenAI) -> None:
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said(QUESTION))
    assert "Sources:" in texts(reply) and fake.chat_requests() == []
    row = await medical_repo.profile_of(engine=engine.records, chat_id=CHAT)
    snapshot = await engine.medical_graph.aget_state({"configurable": {"thread_id": row.id}})
    assert snapshot.values["asked"][-1]["writer"] == "rules"
    summary = texts(await engine.handle(command("summary", hours=0.1)))
    assert QUESTION in summary and "model-written" not in summary


@pytest.mark.slow  # a process of its own: this one has imported openai already
def test_the_rules_mode_bot_does_not_import_openai() -> None:
    """The openai package is imported only in LLM mode (it costs start-up time): not by the
    graphs, the Telegram application, the console or the research assistant."""
    modules = "graphs.medical.graph, graphs.legal.graph, bot.telegram_app, bot.cli, bot.research"
    code = f"import sys, {modules}; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
