"""Benchmark: the legal intake in LLM mode against a fake model, next to the rules alone.

    .venv/bin/python bench/llm.py [--chats 5] [--turns 8] [--latency 0.2] [--fail 0.2]
                                  [--domain legal|medical] [--index-dir DIR]
                                  [--base-url URL [--model NAME] [--budget S]]

Both runs in the same process, one after the other, chats one at a time, on fresh SQLite files: the rules brain
(the baseline), then the LLM brain against the fake OpenAI-compatible server of the tests
(tests/fakes/openai_api.py) over real HTTP, answering every call after `--latency` seconds, a
share `--fail` of them with HTTP 500 (after the client's retries: a fallback). The fake model
reads nothing a rules reader would not (an empty reading, LOAN for a case type, one sentence of
the amount for the summary's account), so what is
measured is the cost of the calls, not their judgement. Prints, per user turn: model calls
(median and mean), turn latency p50/p95, prompt and completion tokens, the share of calls
that fell back to the rules, and the same latencies for the rules alone. `--domain medical`
plays health questions to the medical assistant instead (one knowledge index for both runs,
built in a temporary directory or kept in `--index-dir`): the fake model composes the answer
from the first passage it is given, judges it 0.9 and writes a query when asked, so a turn's
calls are three samples, a judge and, on a retry, a rewrite and three more. `--base-url`
runs LLM mode against a real OpenAI-compatible server instead of the fake (e.g. the local model
of scripts/local_llm.sh, with a `--budget` in seconds a slow model needs), and the medical lane
then also prints what the answers were, side by side: questions answered, answers written by
the model (checked) or the rules, sources cited per answer, answers flagged uncertain. Not a
test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine_throughput import percentile  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.engine import Engine, Inbound  # noqa: E402
from db import medical_repo  # noqa: E402
from knowledge.kb import KnowledgeBase, open_index  # noqa: E402
from knowledge.loader import default_knowledge  # noqa: E402
from tests.fakes.openai_api import FakeOpenAI, OpenAIApiError  # noqa: E402

NOW = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)
SCRIPT = [
    "작년 3월에 친구한테 300만원 빌려줬는데 아직도 안 갚아요",
    "김민수요",
    "2025년 3월 5일이요",
    "올해 6월 말까지 갚기로 했어요",
    "카톡이랑 녹음 있어요",
    "네",
    "모르겠어요",
    "아니요",
]


MEDICAL_SCRIPT = [
    "What is a normal fasting blood glucose level?",
    "I have diabetes and take metformin. What exercise is safe?",
    "How much salt should I eat a day?",
    "What does an LDL cholesterol of 170 mean?",
    "고혈압이 있는데 운동은 어떻게 해요?",
    "메트포르민 부작용이 뭐예요?",
    "When should I check my blood pressure?",
    "How can I sleep better?",
]


def composed(body: dict[str, Any]) -> str:
    """The first sentence of the first passage given, citing it (it passes every check)."""
    block = body["messages"][0]["content"].split("Passages:\n", 1)[1]
    text = block.split("\n", 2)[1]
    first = text.split(". ")[0].rstrip(".") + "."
    return json.dumps({"sentences": [{"text": first, "cites": ["P1"]}]}, ensure_ascii=False)


def responder(fail: float, rng: random.Random):
    def answer(body: dict[str, Any]) -> str | dict[str, Any]:
        if rng.random() < fail:
            raise OpenAIApiError(500, "scripted failure")
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
        if name == "LLMClassification":
            return json.dumps({"sub_type": "LOAN", "confidence": 0.8, "alternatives": []})
        if name == "LLMNarrative":  # the summary's account in brief: one checked sentence
            told = {"text": "의뢰인은 3,000,000원을 빌려주었습니다.", "fields": ["amount"]}
            return json.dumps({"sentences": [told]}, ensure_ascii=False)
        if name == "Composition":
            return composed(body)
        if name == "Judgement":
            return json.dumps({"score": 0.9, "reasons": ["supported"]})
        if name == "SearchQuery":
            return json.dumps({"query": "medical guidance"})
        return json.dumps({"clauses": [], "values": [], "unknown": False})

    return answer


async def questions_asked(engine: Engine, chat_id: int) -> list[dict[str, Any]]:
    """The medical assistant's log of a chat's questions (answered, writer, sources, ...)."""
    row = await medical_repo.profile_of(engine=engine.records, chat_id=chat_id)
    if row is None:
        return []
    config = {"configurable": {"thread_id": row.id}}
    snapshot = await engine.services.medical_graph.aget_state(config)
    return list((snapshot.values or {}).get("asked") or [])


def answers(asked: list[dict[str, Any]]) -> dict[str, float]:
    """What the medical answers were: answered, by whom, sources per answer, flagged uncertain."""
    questions = [a for a in asked if not a.get("urgent")]
    answered = [a for a in questions if a.get("answered")]
    return {
        "questions": len(questions),
        "answered": len(answered),
        "by the model": sum(1 for a in answered if a.get("writer") == "model"),
        "sources per answer": (
            sum(len(a.get("sources") or []) for a in answered) / len(answered) if answered else 0
        ),
        "flagged uncertain": sum(1 for a in answered if (a.get("uncertainty") or 0) > 0.5),
    }


async def run(
    settings: Settings, chats: int, turns: int, kb: KnowledgeBase | None = None
) -> dict[str, Any]:
    """Chats one after another (a turn's own cost; calls counted per turn)."""
    engine = await Engine.open(settings, kb=kb) if kb else await Engine.open(settings)
    client = getattr(engine.services.brain, "client", None)
    latencies: list[float] = []
    calls: list[int] = []
    asked: list[dict[str, Any]] = []
    script = MEDICAL_SCRIPT if kb else SCRIPT
    try:
        for number in range(1, chats + 1):
            if kb:  # the medical assistant, chosen as a person would
                start = Inbound(
                    chat_id=number,
                    kind="command",
                    command="start",
                    args=("medical",),
                    at=NOW - timedelta(minutes=1),
                )
                await engine.handle(start)
            for i, line in enumerate((script * 3)[:turns]):
                at = NOW + timedelta(minutes=i)
                before = sum(client.calls.values()) if client else 0
                start = time.perf_counter()
                await engine.handle(Inbound(chat_id=number, kind="text", text=line, at=at))
                latencies.append(time.perf_counter() - start)
                calls.append((sum(client.calls.values()) if client else 0) - before)
            if kb:
                asked += await questions_asked(engine, number)
        return {"latencies": latencies, "client": client, "calls": calls, "asked": asked}
    finally:
        await engine.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model answer")
    parser.add_argument("--fail", type=float, default=0.2, help="share of calls answered 500")
    parser.add_argument("--domain", choices=("legal", "medical"), default="legal")
    parser.add_argument("--index-dir", type=Path, default=None, help="reuse/keep the index here")
    parser.add_argument("--base-url", help="a real OpenAI-compatible /v1 instead of the fake")
    parser.add_argument("--model", default="local", help="the model named with --base-url")
    parser.add_argument("--budget", type=float, default=8.0, help="INTAKE_LLM_BUDGET, seconds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kb = None
        if args.domain == "medical":
            knowledge = default_knowledge()
            kb = KnowledgeBase(knowledge, open_index(args.index_dir or Path(tmp), knowledge))
        base = {"intake_data_dir": Path(tmp) / "rules", "_env_file": None}
        rules = await run(Settings(**base), args.chats, args.turns, kb)
        if args.base_url:  # a real server: its own latency and failures
            settings = Settings(
                intake_data_dir=Path(tmp) / "llm",
                intake_llm="on",
                intake_llm_base_url=args.base_url,
                intake_llm_model=args.model,
                intake_llm_budget=args.budget,
                intake_llm_timeout=args.budget,
                _env_file=None,
            )
            llm = await run(settings, args.chats, args.turns, kb)
            requests = sum(llm["client"].calls.values())
            report(args, rules, llm, requests)
            return
        async with FakeOpenAI() as fake:
            fake.latency = args.latency
            fake.responder = responder(args.fail, random.Random(7))
            settings = Settings(
                intake_data_dir=Path(tmp) / "llm",
                intake_llm="on",
                intake_llm_base_url=fake.url,
                intake_llm_model="fake",
                _env_file=None,
            )
            llm = await run(settings, args.chats, args.turns, kb)
            requests = len(fake.chat_requests())
    report(args, rules, llm, requests)


def report(
    args: argparse.Namespace, rules: dict[str, Any], llm: dict[str, Any], requests: int
) -> None:
    turns = args.chats * args.turns
    client = llm["client"]
    calls = sum(client.calls.values())
    fell_back = calls - client.calls["ok"]
    per_turn = requests / turns
    model = (
        f"model at {args.base_url} ({args.model}), budget {args.budget}s"
        if args.base_url
        else f"model latency {args.latency}s, {args.fail:.0%} failing"
    )
    print(f"{args.domain}: {args.chats} chats x {args.turns} turns, {model}")
    print(f"{'':24}{'rules (baseline)':>18}{'LLM mode':>12}")
    for name, q in (("turn latency p50", 0.5), ("turn latency p95", 0.95)):
        a, b = percentile(rules["latencies"], q), percentile(llm["latencies"], q)
        print(f"{name:24}{a * 1000:>15.1f} ms{b * 1000:>9.1f} ms")
    print(
        f"{'model calls per turn':24}{0:>18}{calls / turns:>12.2f}  (HTTP requests {per_turn:.2f})"
    )
    print(f"{'prompt tokens per turn':24}{0:>18}{client.usage.prompt_tokens / turns:>12.0f}")
    print(f"{'completion tokens/turn':24}{0:>18}{client.usage.completion_tokens / turns:>12.0f}")
    print(
        f"{'calls fallen back':24}{'':>18}{fell_back / max(calls, 1):>12.0%}  {dict(client.calls)}"
    )
    print(f"{'median calls per turn':24}{'':>18}{statistics.median(llm['calls']):>12}")
    if args.domain == "medical":
        ours, theirs = answers(rules["asked"]), answers(llm["asked"])
        for name in ours:
            print(f"{name:24}{ours[name]:>18.3g}{theirs[name]:>12.3g}")


if __name__ == "__main__":
    asyncio.run(main())
