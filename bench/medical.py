"""Benchmark: the medical assistant's memory, answer cache, re-retrieval and latency, in one run.

    .venv/bin/python bench/medical.py [--quick] [--index-dir DIR]

Every figure is measured in the same run and printed beside the seed's claim for it:

a. profile items with and without consolidation after 10 and 20 turns (seed: 42 -> 25), over
   20-turn chats built from the Synthea patients (tests/medical_synthea.py: the same conditions
   and medicines brought up again in other words, earlier readings before the latest);
b. profile recall and precision (slot extractor + memory, no graph) on the Synthea patients'
   messages and chats against their records, and on MTS-Dialog (validation set, the patient's
   turns of each dialogue) against a silver gold: the dialogue's note section read by the same
   extractor (MTS has no gold profile);
c. the answer cache's hit rate on one person's questions, some repeated or paraphrased
   (seed: 30 % of answers skipped), through the real graph on a temporary index built once;
d. re-retrievals by complexity with the adaptive quality threshold (as shipped) and with the
   fixed one (graphs.medical.evidence.QUALITY_THRESHOLD set to FIXED_THRESHOLD for every
   complexity, in this process only) (seed: -20 %);
e. per-turn latency of the medical graph beside the legal intake graph (both on InMemorySaver,
   same knowledge index, chats interleaved), p50 / p95 ms.

Offline: the packaged embedding and the shared data in ../shared/data. The knowledge index is
built once in a temporary directory (`--index-dir` reuses or keeps one). `--quick` runs fewer
chats and questions (under two minutes, the index build included). Not a test: nothing is
asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import re
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

from graphs.common.context import Context  # noqa: E402
from graphs.legal.graph import build_graph as build_legal_graph  # noqa: E402
from graphs.legal.rules_brain import RulesBrain  # noqa: E402
from graphs.medical import evidence, memory  # noqa: E402
from graphs.medical.graph import build_graph as build_medical_graph  # noqa: E402
from graphs.medical.slots import SlotExtractor  # noqa: E402
from knowledge.kb import KnowledgeBase, open_index  # noqa: E402
from knowledge.loader import Knowledge, default_knowledge  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from engine_throughput import ANSWERS, DESCRIPTIONS  # noqa: E402

from tests.medical_synthea import (  # noqa: E402
    REFERENCE,
    conversation,
    profile_pairs,
    profile_scores,
    read_messages,
    synthea_patients,
)
from tests.support import SHARED_DIR  # noqa: E402

MTS = SHARED_DIR / "mts_dialog" / "MTS-Dialog-ValidationSet.csv"
SEED = {
    "items": "42 -> 25 items (-40 %)",
    "cache": "30 % skipped",
    "retrievals": "-20 % re-retrievals",
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table(title: str, header: list[str], rows: list[list[str]], notes: list[str] = ()) -> None:
    print(title)
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for r in (header, *rows):
        print(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    for note in notes:
        print(f"  {note}")
    print()


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


# --- a. consolidation ---------------------------------------------------------------------------


def bench_consolidation(extractor: SlotExtractor, patients: list[dict[str, Any]]) -> None:
    counts: dict[tuple[int, bool], list[int]] = {}
    for p in patients:
        for lang in ("ko", "en"):
            messages = conversation(p, lang, turns=20)
            for turns in (10, 20):
                for consolidate in (False, True):
                    profile, _ = read_messages(messages[:turns], extractor, consolidate=consolidate)
                    counts.setdefault((turns, consolidate), []).append(len(profile["items"]))
    rows = []
    for turns in (10, 20):
        without = statistics.mean(counts[(turns, False)])
        with_ = statistics.mean(counts[(turns, True)])
        rows.append(
            [
                f"after {turns} turns",
                f"{without:.1f}",
                f"{with_:.1f}",
                f"{100 * (with_ - without) / without:+.0f} %",
                SEED["items"] if turns == 20 else "",
            ]
        )
    table(
        f"a. Profile items per chat, with and without consolidation "
        f"({len(counts[(20, True)])} chats: {len(patients)} Synthea patients x ko/en, 20 turns)",
        ["", "without", "with", "change", "seed"],
        rows,
        ["items = entries stored in the profile (every status); mean over the chats"],
    )


# --- b. recall and precision ----------------------------------------------------------------------


def mts_dialogues() -> list[dict[str, Any]]:
    with MTS.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        turns = []
        for line in row["dialogue"].splitlines():
            found = re.match(r"\s*([A-Za-z_ ]+?):\s*(.*)", line)
            if found and found[1] == "Patient" and found[2].strip():
                turns.append(found[2].strip())
        out.append({"id": row["ID"], "turns": turns, "section": row["section_text"]})
    return out


def bench_recall(extractor: SlotExtractor, patients: list[dict[str, Any]]) -> None:
    rows = []
    for source in ("messages", "20-turn chats"):
        for lang in ("ko", "en"):
            scores = []
            for p in patients:
                said = p["utterances"][lang] if source == "messages" else conversation(p, lang)
                profile, now = read_messages(said, extractor)
                scores.append(profile_scores(profile, p, now))
            rows.append(
                [
                    f"Synthea {source}, {lang}",
                    str(len(scores)),
                    "100.0 %",
                    f"{statistics.mean(s['recall'] for s in scores):.3f}",
                    f"{statistics.mean(s['precision'] for s in scores):.3f}",
                ]
            )
    dialogues = mts_dialogues()
    read = []
    for d in dialogues:
        profile, now = read_messages(d["turns"], extractor, step=timedelta(minutes=1))
        silver_profile, _ = read_messages([d["section"]], extractor, start=now)
        read.append((profile_pairs(profile, now), set(profile_pairs(silver_profile, now))))
    for label, keep in (
        ("MTS-Dialog validation, patient turns", lambda pair: True),
        ("  the same, age and sex left out", lambda pair: pair[0] != "demographics"),
    ):
        found = recalls = precisions = 0
        recall_sum = precision_sum = 0.0
        for got_all, silver_all in read:
            got = [pair for pair in got_all if keep(pair)]
            silver = {pair for pair in silver_all if keep(pair)}
            found += bool(got)
            if silver:
                recalls += 1
                recall_sum += len(silver & set(got)) / len(silver)
            if got:
                precisions += 1
                precision_sum += sum(1 for pair in got if pair in silver) / len(got)
        rows.append(
            [
                label,
                str(len(dialogues)),
                pct(found / len(dialogues)),
                f"{recall_sum / max(recalls, 1):.3f} (n={recalls})",
                f"{precision_sum / max(precisions, 1):.3f} (n={precisions})",
            ]
        )
    table(
        "b. Profile recall / precision (slot extractor + memory, current items; no graph)",
        ["", "chats", ">=1 item", "recall", "precision"],
        rows,
        [
            "Synthea gold: age, sex, current conditions and medicines mapped to the lexicon,",
            "  latest BP / glucose / HbA1c / weight / LDL (tests/medical_synthea.py); seed: none",
            "MTS-Dialog has no gold profile: the gold there is SILVER, the dialogue's note section",
            "  (section_text) read by the same extractor; recall over dialogues whose silver is",
            "  not empty, precision over dialogues where something was extracted; a note states",
            '  age and sex ("a 26-year-old female"), the patient seldom does ("I\'m twenty six")',
        ],
    )


# --- the real graph ---------------------------------------------------------------------------


class Runner:
    """The medical and legal graphs on InMemorySaver, over one knowledge index."""

    def __init__(self, kn: Knowledge, kb: KnowledgeBase) -> None:
        self.kn, self.kb = kn, kb
        self.brain = RulesBrain(kn)
        self.medical = build_medical_graph().compile(checkpointer=InMemorySaver())
        self.legal = build_legal_graph().compile(checkpointer=InMemorySaver())
        self.clock = REFERENCE
        self.serial = 0

    def context(self, lang: str) -> Context:
        self.clock += timedelta(minutes=1)
        return Context(knowledge=self.kn, brain=self.brain, lang=lang, now=self.clock, kb=self.kb)

    async def ask(self, thread: str, text: str, lang: str, graph: Any = None) -> dict[str, Any]:
        self.serial += 1
        message = {"id": str(self.serial), "kind": "text", "text": text}
        return await (graph or self.medical).ainvoke(
            {"message": message},
            {"configurable": {"thread_id": thread}},
            context=self.context(lang),
        )

    async def legal_turn(self, thread: str, text: str) -> bool:
        """One message to a legal intake; False when the intake finished with it."""
        self.serial += 1
        answer = {"kind": "text", "text": text, "id": str(self.serial)}
        config = {"configurable": {"thread_id": thread}}
        state = await self.legal.aget_state(config)
        payload: Any = Command(resume=answer) if state.next else {"answer": answer}
        result = await self.legal.ainvoke(payload, config, context=self.context("ko"))
        return bool(result.get("__interrupt__"))


# --- c. the answer cache ------------------------------------------------------------------------

# (group, question): a group's first question is new; a later one of the same group is an exact
# repeat or a paraphrase. The same workload in both languages, one person each.
CACHE_WORKLOAD = {
    "en": [
        ("htn", "What is high blood pressure?"),
        ("htn-food", "What foods should I avoid with high blood pressure?"),
        ("bp-home", "How do I measure my blood pressure at home?"),
        ("acei", "What are the side effects of lisinopril?"),
        ("prediab", "What is prediabetes?"),
        ("htn", "What is high blood pressure?"),
        ("anemia", "What causes anemia?"),
        ("iron", "What foods are rich in iron?"),
        ("migraine", "What are the symptoms of a migraine?"),
        ("htn-food", "Which foods should I stay away from if I have hypertension?"),
        ("asthma", "How is asthma treated?"),
        ("copd", "What is COPD?"),
        ("statin", "What are statins for?"),
        ("acei", "What are the side effects of lisinopril?"),
        ("metformin", "How does metformin work?"),
        ("gout", "What is gout?"),
        ("insomnia", "How can I sleep better with insomnia?"),
        ("bp-home", "How do I check my blood pressure at home?"),
        ("backpain", "What causes back pain?"),
        ("chestpain", "When should I worry about chest pain?"),
        ("constipation", "What helps with constipation?"),
        ("statin", "What do statins do?"),
        ("uti", "How do I know if I have a urinary tract infection?"),
        ("stroke", "What are the signs of a stroke?"),
        ("anemia", "What causes anemia?"),
        ("afib", "What is atrial fibrillation?"),
        ("osteo", "How can I prevent osteoporosis?"),
        ("fattyliver", "What is fatty liver disease?"),
        ("iron", "Which foods have a lot of iron?"),
        ("diuretic", "How do diuretics work?"),
        ("depression", "What are the symptoms of depression?"),
        ("stroke", "What are the warning signs of a stroke?"),
        ("dizzy", "What causes dizziness?"),
        ("copd", "What is COPD?"),
        ("salt", "How much salt can I eat a day?"),
        ("metformin", "How does metformin lower blood sugar?"),
        ("a1c", "What does an HbA1c test measure?"),
        ("depression", "What are the signs of depression?"),
        ("gout", "What is gout?"),
        ("sleep", "How many hours of sleep do adults need?"),
    ],
    "ko": [
        ("htn", "고혈압이 뭔가요?"),
        ("htn-food", "고혈압이면 어떤 음식을 피해야 하나요?"),
        ("bp-home", "집에서 혈압은 어떻게 재나요?"),
        ("acei", "리시노프릴 부작용이 뭐예요?"),
        ("prediab", "당뇨 전단계가 뭔가요?"),
        ("htn", "고혈압이 뭔가요?"),
        ("anemia", "빈혈은 왜 생기나요?"),
        ("iron", "철분이 많은 음식은 뭐가 있나요?"),
        ("migraine", "편두통 증상은 어떤가요?"),
        ("htn-food", "고혈압 있는 사람이 먹으면 안 되는 음식 알려주세요"),
        ("asthma", "천식은 어떻게 치료하나요?"),
        ("copd", "만성폐쇄성폐질환이 뭔가요?"),
        ("statin", "스타틴은 무슨 약이에요?"),
        ("acei", "리시노프릴 부작용이 뭐예요?"),
        ("metformin", "메트포르민은 어떻게 작용하나요?"),
        ("gout", "통풍이 뭔가요?"),
        ("insomnia", "불면증이 있으면 어떻게 해야 잠을 잘 자나요?"),
        ("bp-home", "집에서 혈압 측정하는 방법 알려주세요"),
        ("backpain", "허리 통증은 왜 생기나요?"),
        ("chestpain", "가슴 통증은 언제 걱정해야 하나요?"),
        ("constipation", "변비에는 뭐가 좋아요?"),
        ("statin", "스타틴은 어떤 효과가 있나요?"),
        ("uti", "요로감염인지 어떻게 알 수 있나요?"),
        ("stroke", "뇌졸중 증상은 뭔가요?"),
        ("anemia", "빈혈은 왜 생기나요?"),
        ("afib", "심방세동이 뭔가요?"),
        ("osteo", "골다공증은 어떻게 예방하나요?"),
        ("fattyliver", "지방간이 뭔가요?"),
        ("iron", "철분 많은 음식 추천해 주세요"),
        ("diuretic", "이뇨제는 어떻게 작용하나요?"),
        ("depression", "우울증 증상은 어떤가요?"),
        ("stroke", "뇌졸중 전조 증상이 뭔가요?"),
        ("dizzy", "어지러움은 왜 생기나요?"),
        ("copd", "만성폐쇄성폐질환이 뭔가요?"),
        ("salt", "소금은 하루에 얼마나 먹어도 되나요?"),
        ("metformin", "메트포르민은 혈당을 어떻게 낮추나요?"),
        ("a1c", "당화혈색소 검사는 뭘 보는 건가요?"),
        ("depression", "우울증인지 어떻게 알 수 있나요?"),
        ("gout", "통풍이 뭔가요?"),
        ("sleep", "성인은 하루에 몇 시간 자야 하나요?"),
    ],
}
CACHE_PROFILE = {
    "en": "I'm 60, I have high blood pressure and prediabetes and I take lisinopril",
    "ko": "60세 남자고 고혈압이랑 당뇨 전단계가 있어요. 리시노프릴 먹고 있어요",
}


async def bench_cache(runner: Runner, quick: bool) -> None:
    rows = []
    for lang, workload in CACHE_WORKLOAD.items():
        questions = workload[:16] if quick else workload
        thread = f"cache-{lang}"
        said = await runner.ask(thread, CACHE_PROFILE[lang], lang)
        first: dict[str, list[str]] = {}  # group -> the lines of its first (fresh) answer
        verified: set[str] = set()  # groups whose first answer went into the cache
        again = reusable = hits = wrong = 0
        for group, text in questions:
            repeat = group in first
            again += repeat
            reusable += repeat and group in verified
            result = await runner.ask(thread, text, lang)
            lines = (result.get("answer") or {}).get("lines") or []
            if not result.get("cached"):
                if not repeat:
                    first[group] = lines
                    stored = (result.get("cache") or [{}])[-1]  # the newest entry (20 are kept)
                    if stored.get("q") == text[:300]:
                        verified.add(group)
                continue
            hits += 1
            wrong += first.get(group) != lines[1:]  # after the "asked before" line
        n = len(questions)
        held = [
            len(memory.current_items(r["profile"], runner.clock, ("conditions", "medications")))
            for r in (said, result)
        ]
        rows.append(
            [
                f"{lang}, one person",
                str(n),
                f"{again} ({pct(again / n)})",
                f"{len(verified)}/{len(first)}",
                f"{hits}/{reusable}",
                f"{hits}/{again}",
                pct(hits / n),
                str(wrong),
                f"{held[0]} -> {held[1]}",
                SEED["cache"],
            ]
        )
    table(
        "c. Answer cache on repeated and paraphrased questions (real graph, one thread each)",
        [
            "",
            "questions",
            "repeats",
            "1st answers cached",
            "hits/cacheable",
            "hits/repeats",
            "answered from cache",
            "wrong reuse",
            "conditions+medicines",
            "seed",
        ],
        rows,
        [
            "repeats = questions asked before, word for word or paraphrased (the most the cache",
            "  can skip); 1st answers cached = distinct questions whose first answer was verified",
            "  (quality >= threshold, uncertainty <= 0.3) and stored; cacheable = repeats of those;",
            "  wrong reuse = a cached answer that was not this question's own; conditions+medicines",
            "  = current in the profile after the first message (the person's own) and at the end:",
            "  a new current condition or medicine changes every cached answer's fingerprint",
            "  (misses the cache)",
        ],
    )


# --- d. re-retrievals -------------------------------------------------------------------------

RETRIEVAL_QUESTIONS = [
    # mostly simple: one concept, short
    ("en", "What is metformin?"),
    ("en", "What are the side effects of lisinopril?"),
    ("en", "What is gout?"),
    ("en", "How is asthma treated?"),
    ("en", "What causes dizziness?"),
    ("en", "Is amlodipine safe?"),
    ("ko", "고혈압에 좋은 음식은 뭐예요?"),
    ("ko", "빈혈은 왜 생기나요?"),
    ("ko", "편두통 증상은 어떤가요?"),
    ("ko", "혈압에 좋은 음식 알려주세요"),
    ("ko", "아스피린은 매일 먹어도 되나요?"),
    ("ko", "변비에는 뭐가 좋아요?"),
    # mostly moderate: two concepts, or a longer question
    ("en", "Can I take ibuprofen with high blood pressure?"),
    ("en", "Is metformin safe with kidney disease?"),
    ("en", "Does simvastatin interact with amlodipine?"),
    ("en", "Can asthma cause chest tightness at night?"),
    ("en", "What foods should I avoid with high blood pressure?"),
    ("en", "Should I worry about dizziness when I take my blood pressure pills?"),
    ("ko", "당뇨가 있는데 타이레놀 먹어도 되나요?"),
    ("ko", "고지혈증 약을 먹으면 간이 나빠지나요?"),
    ("ko", "천식이 있는데 아스피린 먹어도 돼요?"),
    ("ko", "빈혈이 있으면 어지러울 수 있나요?"),
    ("ko", "임신 중인데 감기약 먹어도 되나요?"),
    ("ko", "고혈압 약 먹는데 두통이 있어요"),
    # mostly complex: three concepts or more, several clauses
    ("en", "Is it safe to exercise with prediabetes, anemia and obesity?"),
    ("en", "I have diabetes, high blood pressure and kidney disease, which painkiller is safe?"),
    ("en", "I take warfarin and aspirin and now I have a nosebleed, what should I do?"),
    ("en", "I have asthma and heart failure, can I take a beta blocker like bisoprolol?"),
    ("en", "My BP is 150/95, my sugar is 180 and my LDL is 160, what should I change first?"),
    ("en", "Can I take metformin, lisinopril and atorvastatin together with ibuprofen?"),
    ("ko", "당뇨랑 고혈압이 있고 신장도 안 좋은데 어떤 진통제가 안전한가요?"),
    ("ko", "와파린 먹는데 코피가 나고 멍이 잘 들어요. 어떻게 해야 하나요?"),
    ("ko", "고지혈증, 비만, 당뇨 전단계가 있는데 운동은 어떻게 시작하나요?"),
    ("ko", "혈압이 150에 95이고 혈당이 180인데 약을 바꿔야 하나요?"),
    ("ko", "천식이랑 역류성 식도염이 있는데 기침이 계속 나요. 무슨 약을 먹어야 하나요?"),
    ("ko", "골다공증약이랑 위장약이랑 같이 먹어도 되나요? 속쓰림이 있어요"),
]


async def retrieval_run(
    runner: Runner, graph: Any, questions: list[tuple[str, str]], fixed: bool, tag: str
) -> list[dict]:
    shipped = evidence.QUALITY_THRESHOLD
    if fixed:
        evidence.QUALITY_THRESHOLD = {k: evidence.FIXED_THRESHOLD for k in shipped}
    out = []
    try:
        for i, (lang, text) in enumerate(questions):
            # a fresh thread each: no cache, no profile
            result = await runner.ask(f"{tag}-{i}", text, lang, graph=graph)
            out.append(
                {
                    "intent": result.get("intent"),
                    "extra": max((result.get("retrievals") or 0) - 1, 0),
                    "quality": result.get("quality") or 0.0,
                }
            )
    finally:
        evidence.QUALITY_THRESHOLD = shipped
    return out


async def bench_retrievals(runner: Runner, quick: bool) -> None:
    questions = RETRIEVAL_QUESTIONS[::4] if quick else RETRIEVAL_QUESTIONS
    runs = {
        "adaptive": await retrieval_run(runner, None, questions, False, "ad"),
        "fixed": await retrieval_run(runner, None, questions, True, "fx"),
    }
    intents = [r["intent"] for r in runs["adaptive"]]
    rows = []
    for intent in ("simple", "moderate", "complex", "all"):
        picked = [i for i, x in enumerate(intents) if x != "greeting" and intent in ("all", x)]
        if not picked:
            continue
        total = {key: sum(run[i]["extra"] for i in picked) for key, run in runs.items()}
        quality = {
            key: statistics.mean(run[i]["quality"] for i in picked) for key, run in runs.items()
        }
        a, f = total["adaptive"], total["fixed"]
        rows.append(
            [
                intent,
                str(len(picked)),
                f"{evidence.QUALITY_THRESHOLD[intent]:.2f}" if intent != "all" else "by complexity",
                str(a),
                str(f),
                f"{100 * (a - f) / f:+.0f} %" if f else "-",
                f"{quality['adaptive']:.2f} / {quality['fixed']:.2f}",
                SEED["retrievals"] if intent == "all" else "",
            ]
        )
    table(
        f"d. Re-retrievals (retrievals - 1, summed) with the adaptive vs the fixed threshold "
        f"({evidence.FIXED_THRESHOLD}), {len(questions)} questions, fresh thread each",
        [
            "complexity",
            "questions",
            "adaptive thr",
            "adaptive",
            "fixed",
            "change",
            "quality a/f",
            "seed",
        ],
        rows,
        [
            "quality a/f = mean final quality, adaptive / fixed",
            "complexity as the graph classified each question (adaptive run)",
        ],
    )


# --- e. latency ---------------------------------------------------------------------------------

# The legal side's workload is engine_throughput's, so the two benchmarks drive the same turns.
LEGAL_DESCRIPTIONS, LEGAL_ANSWERS = DESCRIPTIONS, ANSWERS


async def bench_latency(runner: Runner, patients: list[dict[str, Any]], quick: bool) -> None:
    chats = [(p, lang) for p in patients for lang in ("ko", "en")]
    chats = chats[:1] if quick else chats[:12]
    medical: list[float] = []
    legal: list[float] = []
    finished = 0
    for c, (p, lang) in enumerate(chats):  # a medical chat, then a legal one of as many turns
        for text in conversation(p, lang, turns=20):
            start = time.perf_counter()
            await runner.ask(f"latency-{c}", text, lang)
            medical.append(time.perf_counter() - start)
        thread, intake = f"legal-{c}", 0
        lines = [LEGAL_DESCRIPTIONS[c % len(LEGAL_DESCRIPTIONS)]]
        lines += [LEGAL_ANSWERS[(c + i) % len(LEGAL_ANSWERS)] for i in range(19)]
        for text in lines:
            start = time.perf_counter()
            open_ = await runner.legal_turn(f"{thread}-{intake}", text)
            legal.append(time.perf_counter() - start)
            if not open_:
                intake += 1  # the intake finished: the next line starts another
                finished += 1
    rows = []
    for name, lat in (("medical graph", medical), ("legal intake graph", legal)):
        rows.append(
            [
                name,
                str(len(lat)),
                f"{1000 * statistics.median(lat):.1f}",
                f"{1000 * percentile(lat, 0.95):.1f}",
                f"{1000 * statistics.mean(lat):.1f}",
            ]
        )
    ratio = [
        "medical / legal",
        "",
        f"{statistics.median(medical) / statistics.median(legal):.2f}x",
        f"{percentile(medical, 0.95) / percentile(legal, 0.95):.2f}x",
        f"{statistics.mean(medical) / statistics.mean(legal):.2f}x",
    ]
    table(
        f"e. Per-turn latency, {len(chats)} chat(s) of 20 turns each side, interleaved "
        "(InMemorySaver, warm)",
        ["", "turns", "p50 ms", "p95 ms", "mean ms"],
        [*rows, ratio],
        [
            "medical: the Synthea chats of (a) through the whole graph (retrieval, cache);",
            "legal: a description then answers, as in bench/engine_throughput.py "
            f"({finished} intake(s) finished); seed: none",
        ],
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer chats and questions (< 2 min)")
    parser.add_argument("--index-dir", type=Path, default=None, help="reuse/keep the index here")
    args = parser.parse_args()
    began = time.perf_counter()
    extractor = SlotExtractor()
    patients = synthea_patients()
    bench_consolidation(extractor, patients)
    bench_recall(extractor, patients)
    print(f"(a and b took {time.perf_counter() - began:.0f} s)\n")

    kn = default_knowledge()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        kb = KnowledgeBase(kn, open_index(args.index_dir or Path(tmp), kn))
        kb.medical_collections()  # the medical corpus is indexed on first use: do it now
        built = time.perf_counter() - start
        runner = Runner(kn, kb)
        start = time.perf_counter()
        await runner.ask("warm-up", "고혈압이 뭔가요?", "ko")  # loads the models once
        await runner.legal_turn("warm-up", LEGAL_DESCRIPTIONS[0])
        warm = time.perf_counter() - start
        print(f"(index opened or built in {built:.1f} s; first turns {warm:.1f} s)\n")
        for name, section in (
            ("c", bench_cache(runner, args.quick)),
            ("d", bench_retrievals(runner, args.quick)),
            ("e", bench_latency(runner, patients, args.quick)),
        ):
            start = time.perf_counter()
            await section
            print(f"({name} took {time.perf_counter() - start:.0f} s)\n")
    print(f"(whole run {time.perf_counter() - began:.0f} s{', --quick' if args.quick else ''})")


if __name__ == "__main__":
    asyncio.run(main())
