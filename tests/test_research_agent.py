"""The research assistant's loop, fixed plan, report, commands and CLI (issue 21, part 3).

PubMed and ClinicalTrials.gov are replaced here by small in-test doubles of the clients'
contract (common.md: `PubMedClient`, `TrialsClient`) returning graphs/research/types.py objects:
these are tests of the plan, the loop and the report. The model is the fake OpenAI-compatible
server over HTTP, driven by the real `LLMClient`; Telegram is the fake Bot API server driving
the real Application. The clients against their fake servers are tested in their own modules.
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bot import cli
from bot.config import Settings
from bot.research import Researcher
from graphs.common.llm import LLMClient, LLMConfig
from graphs.research import agent
from graphs.research.agent import Sources, ask, parse_reply, react, research
from graphs.research.report import DrugReport, find_subject, subject_of
from graphs.research.types import (
    AbstractSection,
    Article,
    SearchResult,
    Site,
    SourceUnavailable,
    Trial,
    TrialPage,
)
from knowledge.loader import Knowledge

TODAY = date(2026, 11, 27)
LONG_RESULTS = "Metformin lowered the risk of the primary outcome by 12 percent. " * 40


def article(pmid: str, year: int, title: str, conclusion: str | None = None) -> Article:
    sections = [
        AbstractSection("BACKGROUND", "Background text. More."),
        AbstractSection("RESULTS", LONG_RESULTS),
    ]
    if conclusion:
        sections.append(AbstractSection("CONCLUSIONS", conclusion))
    return Article(pmid=pmid, title=title, journal="J", year=year, abstract=tuple(sections))


ARTICLES = [
    article(
        "111",
        2025,
        "Metformin and cancer risk: a cohort study.",
        "Metformin use was linked to lower risk. Further trials are needed.",
    ),
    article("222", 2024, "Metformin in pregnancy."),
    article("333", 2023, "Metformin and ageing: a review.", "Evidence is limited."),
]
TRIALS = [
    Trial(
        "NCT00000001",
        "Metformin in Seoul",
        "RECRUITING",
        ("PHASE3",),
        countries=("Korea, Republic of",),
        sites=(
            Site("Seoul National University Hospital", "Seoul", "Korea, Republic of", "RECRUITING"),
        ),
    ),
    Trial(
        "NCT00000002",
        "Metformin in Boston",
        "RECRUITING",
        ("PHASE2",),
        countries=("United States",),
    ),
    Trial(
        "NCT00000003",
        "Metformin done",
        "COMPLETED",
        ("PHASE2", "PHASE3"),
        countries=("United States",),
    ),
    Trial("NCT00000004", "Metformin observational", "COMPLETED", (), countries=("France",)),
]


class FakePubMed:
    """The PubMedClient contract over fixed articles; every call recorded."""

    def __init__(
        self, *, count: int = 23, correction: str | None = None, down: bool = False
    ) -> None:
        self.count, self.correction, self.down = count, correction, down
        self.calls: list[tuple[str, Any]] = []

    def _call(self, name: str, value: Any) -> None:
        self.calls.append((name, value))
        if self.down:
            raise SourceUnavailable("pubmed", "connection refused")

    async def spell(self, term: str) -> str | None:
        self._call("spell", term)
        return self.correction

    async def search(
        self, term: str, *, retmax: int = 20, mindate=None, maxdate=None, sort="relevance"
    ) -> SearchResult:
        self._call("search", (term, mindate, maxdate, sort))
        return SearchResult(count=self.count, ids=tuple(a.pmid for a in ARTICLES))

    async def count_by_year(self, term: str, years) -> dict[int, int]:
        self._call("count_by_year", (term, tuple(years)))
        return {y: 100 + i for i, y in enumerate(years)}

    async def fetch(self, pmids) -> list[Article]:
        self._call("fetch", tuple(pmids))
        return [a for a in ARTICLES if a.pmid in pmids]

    async def summaries(self, pmids) -> list[Article]:
        return await self.fetch(pmids)

    async def aclose(self) -> None:
        self.calls.append(("aclose", None))


class FakeTrials:
    """The TrialsClient contract over fixed trials: statuses and location filter them."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def search(self, **filters: Any) -> TrialPage:
        self.calls.append(filters)
        found = [
            t for t in TRIALS if not filters.get("statuses") or t.status in filters["statuses"]
        ]
        if filters.get("location"):
            found = [t for t in found if any(filters["location"] in c for c in t.countries)]
        total = len(found) if filters.get("count_total") else None
        return TrialPage(trials=tuple(found[: filters.get("page_size", 20)]), total=total)

    async def get(self, nct_id: str) -> Trial | None:
        self.calls.append({"get": nct_id})
        return next((t for t in TRIALS if t.nct_id == nct_id), None)

    async def aclose(self) -> None:
        pass


class DownTrials(FakeTrials):
    """ClinicalTrials.gov unreachable."""

    async def search(self, **filters: Any) -> TrialPage:
        self.calls.append(filters)
        raise SourceUnavailable("ctgov", "connection refused")


@pytest.fixture
def sources() -> Sources:
    return Sources(pubmed=FakePubMed(), trials=FakeTrials())


# --- the fixed plan ---------------------------------------------------------------------------


async def test_the_fixed_plan_runs_its_steps_in_order_and_reports_each(
    sources, knowledge: Knowledge
) -> None:
    steps: list[str] = []
    report = await research(
        subject_of("metformin"), "en", sources, knowledge, on_step=steps.append, today=TODAY
    )
    # PubMed and ClinicalTrials.gov are asked side by side: each one's steps in its order
    pubmed = [
        "Searching PubMed… 23 found",
        "Reading abstracts… 3 articles",
        "Counting publications by year… 2022–2026",
    ]
    trials = ["Searching ClinicalTrials.gov… 4 found", "Recruiting trials… 2 found"]
    assert sorted(steps[:-1]) == sorted(pubmed + trials)
    assert [s for s in steps if s in pubmed[:2]] == pubmed[:2]  # the search before the reading
    assert steps[-1] == "The report is ready."
    names = [name for name, _ in sources.pubmed.calls]
    assert names[:2] == ["spell", "search"] and sorted(names[2:]) == ["count_by_year", "fetch"]
    assert sources.pubmed.calls[1][1] == ("metformin", "2022", "2026", "relevance")
    counted = next(args for name, args in sources.pubmed.calls if name == "count_by_year")
    assert counted == ("metformin", (2022, 2023, 2024, 2025, 2026))
    # all statuses counted, then the recruiting ones; in English, no Korea-only search
    assert [c.get("statuses") for c in sources.trials.calls] == [(), ("RECRUITING",)]
    assert [c.get("location") for c in sources.trials.calls] == [None, None]
    assert sources.trials.calls[0]["intervention"] == "metformin"
    assert report.articles_total == 23 and [a.pmid for a in report.articles] == [
        "111",
        "222",
        "333",
    ]
    assert report.by_status == {"RECRUITING": 2, "COMPLETED": 2}
    assert report.by_phase == {"NA": 1, "PHASE2": 2, "PHASE3": 2}
    assert [t.nct_id for t in report.recruiting] == ["NCT00000001", "NCT00000002"]


async def test_in_korean_the_steps_are_korean_and_korean_trials_come_first(
    knowledge: Knowledge,
) -> None:
    # Korea's trial listed last by the service: the report still puts it first
    TRIALS_KO = [TRIALS[1], TRIALS[0], *TRIALS[2:]]

    class Trials(FakeTrials):
        async def search(self, **filters: Any) -> TrialPage:
            page = await super().search(**filters)
            return TrialPage(
                tuple(sorted(page.trials, key=lambda t: TRIALS_KO.index(t))), total=page.total
            )

    sources = Sources(pubmed=FakePubMed(), trials=Trials())
    steps: list[str] = []
    report = await ask(
        "메트포르민 최신 연구는?", "ko", sources, knowledge, on_step=steps.append, today=TODAY
    )
    assert {"PubMed 검색 중… 23건", "모집 중인 임상시험… 2건"} <= set(steps)
    assert steps[-1] == "보고서를 만들었어요."
    assert [c.get("location") for c in sources.trials.calls] == [None, "Korea", None]
    assert report.drug == "metformin" and report.lang == "ko"
    assert [t.nct_id for t in report.recruiting] == ["NCT00000001", "NCT00000002"]
    assert report.recruiting[0].korea and not report.recruiting[1].korea


async def test_pubmeds_spelling_is_used_and_said(knowledge: Knowledge) -> None:
    sources = Sources(pubmed=FakePubMed(correction="metformin"), trials=FakeTrials())
    steps: list[str] = []
    report = await research(
        subject_of("metfromin"), "en", sources, knowledge, on_step=steps.append, today=TODAY
    )
    assert steps[0] == "Spelling: metfromin → metformin"
    assert sources.pubmed.calls[1][1][0] == "metformin"
    assert report.spelled_from == "metfromin" and report.drug == "metformin"
    assert "(searched as 'metformin' for 'metfromin')" in report.text(knowledge)


async def test_a_condition_is_searched_as_a_condition(sources, knowledge: Knowledge) -> None:
    await ask("고혈압 임상시험 뭐 있어요?", "ko", sources, knowledge, today=TODAY)
    assert sources.trials.calls[0].get("condition") == "hypertension"
    assert "intervention" not in sources.trials.calls[0]


def test_korean_drug_names_are_mapped_to_english_through_the_lexicon() -> None:
    assert find_subject("메트포르민 최신 연구는?").english == "metformin"
    assert find_subject("다이아벡스 먹는 사람 연구").english == "metformin"  # a brand
    assert find_subject("아스피린 임상시험").english == "aspirin"
    assert find_subject("what's new on Glucophage?").english == "metformin"
    assert find_subject("고혈압 연구").kind == "condition"
    assert find_subject("최신 연구 알려줘") is None
    assert subject_of("fooximab").kind == "unknown"  # searched as written


async def test_without_a_model_a_question_naming_nothing_is_refused(sources, knowledge) -> None:
    with pytest.raises(agent.NoSubject):
        await ask("what is new in medicine?", "en", sources, knowledge)
    assert sources.pubmed.calls == []


# --- the ReAct loop over the fake OpenAI server -------------------------------------------------


@pytest.fixture
async def fake():
    from tests.fakes.openai_api import FakeOpenAI

    async with FakeOpenAI() as server:
        yield server


def model(fake) -> LLMClient:
    return LLMClient(LLMConfig(base_url=fake.url, api_key="k", model="m"))


def action(name: str, value: Any, thought: str = "") -> str:
    return json.dumps({"thought": thought, "action": name, "input": value})


async def test_a_json_action_runs_its_tool_and_plain_text_ends_the_loop(
    fake, sources, knowledge
) -> None:
    fake.reply_next(
        action("search_pubmed", {"term": "metformin"}, "search first"),
        action("fetch_articles", {"pmids": ["111"]}),
        "Metformin is linked to lower cancer risk (PMID 111).",
    )
    steps: list[str] = []
    report = await react(
        "What is new on metformin?",
        "en",
        sources,
        knowledge,
        model(fake),
        on_step=steps.append,
        today=TODAY,
    )
    requests = fake.chat_requests()
    assert len(requests) == 3
    assert "search_pubmed" in requests[0]["messages"][0]["content"]  # the tools described
    observed = requests[1]["messages"][-1]["content"]
    assert observed.startswith("Observation: 23 found; ids: 111, 222, 333")
    fetched = requests[2]["messages"][-1]["content"]
    assert "PMID 111 (2025) Metformin and cancer risk" in fetched
    # observations are cut short: never a whole abstract
    assert LONG_RESULTS not in fetched and len(fetched) <= agent.OBSERVATION_CHARS + len(
        "Observation: "
    )
    assert report.answer == "Metformin is linked to lower cancer risk (PMID 111)."
    assert not report.stopped_early and [a.pmid for a in report.articles] == ["111"]
    assert steps[:3] == ["Thinking… (1/6)", "Thinking… (2/6)", "Thinking… (3/6)"]
    assert sources.pubmed.calls == [
        ("search", ("metformin", "2022", "2026", "relevance")),
        ("fetch", ("111",)),
    ]


async def test_an_unknown_tool_and_bad_json_are_observed_and_the_loop_goes_on(
    fake, sources, knowledge
) -> None:
    fake.reply_next(
        action("browse_web", {"url": "x"}),
        '{"thought": "oops", "action": ',
        action("finish", {"answer": "Nothing more to add."}),
    )
    report = await react("metformin news", "en", sources, knowledge, model(fake), today=TODAY)
    requests = fake.chat_requests()
    assert len(requests) == 3
    assert "unknown tool 'browse_web'" in requests[1]["messages"][-1]["content"]
    assert "not a valid action" in requests[2]["messages"][-1]["content"]
    assert report.answer == "Nothing more to add." and sources.pubmed.calls == []


async def test_the_step_limit_ends_with_the_best_answer_so_far(fake, sources, knowledge) -> None:
    fake.reply_next(
        action("search_pubmed", {"term": "metformin"}, "Searching."),
        action(
            "search_trials",
            {"intervention": "metformin", "status": "RECRUITING"},
            "Two trials recruit.",
        ),
        action("count_by_year", {"term": "metformin"}, "Counting."),
        action("search_pubmed", {"term": "metformin cancer"}, "never run"),
    )
    report = await react(
        "메트포르민 최신 연구는?", "ko", sources, knowledge, model(fake), today=TODAY, max_steps=3
    )
    assert len(fake.chat_requests()) == 3  # the limit, counted in model calls
    assert report.stopped_early and report.answer == "Counting."
    assert report.drug == "metformin" and report.counts_by_year[2026] == 104
    assert [t.nct_id for t in report.recruiting] == ["NCT00000001", "NCT00000002"]
    assert "(단계 한도에 닿아 지금까지 찾은 것으로 정리했어요)" in report.text(knowledge)


async def test_a_source_down_is_observed_by_the_loop(fake, knowledge) -> None:
    sources = Sources(pubmed=FakePubMed(down=True), trials=DownTrials())
    fake.reply_next(action("search_pubmed", {"term": "metformin"}), "PubMed is down.")
    report = await react("metformin", "en", sources, knowledge, model(fake), today=TODAY)
    assert "error: pubmed connection refused" in fake.chat_requests()[1]["messages"][-1]["content"]
    assert report.answer == "PubMed is down."


async def test_the_loops_calls_ask_for_free_text_and_mask_identifying_numbers(fake) -> None:
    client = LLMClient(LLMConfig(base_url=fake.url, api_key="k", model="m", mask=True))
    fake.reply_next("fine")
    text, usage = await client.reply(
        "research", [{"role": "user", "content": "metformin, call 010-1234-5678"}]
    )
    body = fake.chat_requests()[0]
    assert text == "fine" and usage.completion_tokens > 0
    assert "response_format" not in body and "tools" not in body
    assert body["messages"][0]["content"] == "metformin, call [전화번호]"


def test_replies_are_read_as_actions_plain_answers_or_bad_json() -> None:
    assert (
        parse_reply('```json\n{"action": "get_trial", "input": "NCT1"}\n```').action == "get_trial"
    )
    assert parse_reply("Plain words.") == "Plain words."
    assert parse_reply('{"thought": "no action"}') is None
    assert parse_reply("{broken") is None


# --- the report -------------------------------------------------------------------------------


def fixed_report(lang: str, drug: str = "metformin") -> DrugReport:
    return DrugReport.build(
        subject_of(drug),
        lang,
        articles=ARTICLES,
        trials=TRIALS,
        recruiting=[TRIALS[1], TRIALS[0]],
        articles_total=23,
        counts_by_year={2025: 10, 2026: 4},
        trials_total=40,
    )


def test_the_english_report_has_each_part(knowledge: Knowledge) -> None:
    text = fixed_report("en").text(knowledge)
    assert text.startswith(
        "Research report: metformin\n■ What it is for\nMetformin is usually the first medicine for type 2 diabetes"
    )
    assert "■ PubMed publications by year\n• 2025: 10\n• 2026: 4" in text
    assert (
        "• PMID 111 (2025) Metformin and cancer risk: a cohort study.\n  Metformin use was linked to lower risk."
        in text
    )
    assert (
        "• PMID 222 (2024) Metformin in pregnancy.\n  Metformin lowered the risk" in text
    )  # results when no conclusion
    assert (
        "■ Clinical trials (4 of 40 tallied)\n• By status: RECRUITING 2, COMPLETED 2\n• By phase: NA 1, PHASE2 2, PHASE3 2"
        in text
    )
    # in English the service's order is kept
    assert text.index("NCT00000002") < text.index("NCT00000001")
    assert "• Check each trial's page for eligibility and its current recruitment." in text
    assert LONG_RESULTS not in text


def test_the_korean_report_puts_korea_first_and_says_what_it_does_not_know(knowledge) -> None:
    text = fixed_report("ko").text(knowledge)
    assert text.startswith(
        "연구 보고서: 메트포르민 (metformin)\n■ 무엇에 쓰는 약/질환인지\n메트포르민은 제2형 당뇨병에"
    )
    assert text.index("NCT00000001") < text.index("NCT00000002")
    assert "■ 유의할 점" in text
    unknown = fixed_report("ko", "fooximab").text(knowledge)
    assert "■ 무엇에 쓰는 약/질환인지\n저희 지식 베이스에 없는 항목이에요." in unknown
    assert "Not in our knowledge base." in fixed_report("en", "fooximab").text(knowledge)


def test_the_markdown_and_json_renders(knowledge: Knowledge) -> None:
    report = fixed_report("en")
    md = report.markdown(knowledge)
    assert md.startswith("# Research report: metformin\n")
    assert "\n## Most relevant recent articles\n" in md
    assert "- [PMID 111](https://pubmed.ncbi.nlm.nih.gov/111/) (2025)" in md
    assert "- [NCT00000001](https://clinicaltrials.gov/study/NCT00000001) PHASE3" in md
    data = json.loads(report.to_json())
    assert data["drug"] == "metformin" and data["counts_by_year"] == {"2025": 10, "2026": 4}
    assert data["articles"][0]["pmid"] == "111" and data["trials_total"] == 40
    assert data["by_status"] == {"RECRUITING": 2, "COMPLETED": 2}
    assert data["purpose"]["en"].startswith("Metformin is usually")
    assert len(data["caveats"]) == 3


def test_a_long_report_is_split_cleanly_by_the_bots_splitter(knowledge: Knowledge) -> None:
    from bot.tg_split import TELEGRAM_TEXT_LIMIT, split_text

    report = fixed_report("en")
    report.articles = report.articles * 40
    text = report.text(knowledge)
    parts = split_text(text)
    assert len(parts) > 1 and all(len(p) <= TELEGRAM_TEXT_LIMIT for p in parts)
    lines = {line.strip() for line in text.splitlines()}
    assert all(line.strip() in lines for p in parts for line in p.splitlines())  # whole lines


# --- who may use it, and the outcomes as one line ---------------------------------------------


def staff_settings(tmp_path: Path, **more: Any) -> Settings:
    return Settings(
        intake_data_dir=tmp_path, admin_ids="1", clinician_ids="2, 3", _env_file=None, **more
    )


def test_only_admins_and_clinicians_may_research(tmp_path, knowledge) -> None:
    researcher = Researcher(staff_settings(tmp_path), knowledge, sources=None)
    assert [researcher.allowed(u) for u in (1, 2, 3, 4, None)] == [True, True, True, False, False]


async def test_bad_input_and_a_source_down_are_one_polite_line(tmp_path, knowledge) -> None:
    sources = Sources(pubmed=FakePubMed(), trials=FakeTrials())
    researcher = Researcher(staff_settings(tmp_path), knowledge, sources=sources)
    empty = await researcher.run("research", "  ", "ko")
    assert empty.line == "약 이름을 함께 보내 주세요. 예: /research 메트포르민"
    long = await researcher.run("ask", "x" * 5000, "en")
    assert (
        long.line
        == "That is too long (500 characters at most). Please send it shorter, naming the drug or condition."
    )
    nothing = await researcher.run("ask", "최신 연구 알려줘", "en")
    assert nothing.lang == "ko" and nothing.line.startswith(
        "질문에서 약이나 질환 이름을 찾지 못했어요"
    )
    assert sources.pubmed.calls == []  # nothing was sent
    researcher = Researcher(
        staff_settings(tmp_path),
        knowledge,
        sources=Sources(pubmed=FakePubMed(down=True), trials=FakeTrials()),
    )
    # one service down: the other's part, and a line naming the one missing
    part = await researcher.run("research", "metformin", "en")
    assert part.report is not None and part.report.unavailable == ("pubmed",)
    assert "PubMed could not be reached" in part.text(knowledge)
    assert "NCT00000001" in part.text(knowledge) and not part.report.articles
    # both down: one polite line
    researcher = Researcher(
        staff_settings(tmp_path),
        knowledge,
        sources=Sources(pubmed=FakePubMed(down=True), trials=DownTrials()),
    )
    down = await researcher.run("research", "metformin", "en")
    assert down.report is None and down.line == "PubMed can't be reached. Please try again later."


# --- the command line -------------------------------------------------------------------------


def run_cli(
    monkeypatch, capsys, tmp_path, argv: list[str], sources: Sources
) -> tuple[int, str, str]:
    monkeypatch.setenv("INTAKE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("bot.research.build_sources", lambda settings, cache=None: sources)
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_prints_the_report_or_its_json(monkeypatch, capsys, tmp_path) -> None:
    sources = Sources(pubmed=FakePubMed(), trials=FakeTrials())
    code, out, _ = run_cli(monkeypatch, capsys, tmp_path, ["research", "metformin"], sources)
    assert code == 0 and out.startswith("Research report: metformin\n") and "PMID 111" in out
    code, out, _ = run_cli(
        monkeypatch, capsys, tmp_path, ["ask", "메트포르민 최신 연구는?", "--json"], sources
    )
    data = json.loads(out)
    assert code == 0 and data["drug"] == "metformin" and data["lang"] == "ko"
    assert ("aclose", None) in sources.pubmed.calls  # the clients are closed


def test_the_cli_says_bad_input_and_an_unreachable_source_in_one_line(
    monkeypatch, capsys, tmp_path
) -> None:
    sources = Sources(pubmed=FakePubMed(down=True), trials=DownTrials())
    code, out, err = run_cli(monkeypatch, capsys, tmp_path, ["research", "metformin"], sources)
    assert (code, out, err) == (2, "", "PubMed can't be reached. Please try again later.\n")
    code, out, err = run_cli(monkeypatch, capsys, tmp_path, ["ask", "y" * 5000], sources)
    assert code == 2 and err.startswith("That is too long") and "Traceback" not in err
    code, out, err = run_cli(monkeypatch, capsys, tmp_path, ["research"], sources)
    assert code == 2 and err == "Please add a drug name, for example: /research metformin\n"


# --- over Telegram: the real Application against the fake Bot API -------------------------------


class HeldPubMed(FakePubMed):
    """PubMed that answers its search only once `gate` is set: research under way."""

    def __init__(self, gate: asyncio.Event) -> None:
        super().__init__()
        self.gate = gate

    async def search(self, term: str, **options: Any) -> SearchResult:
        await self.gate.wait()
        return await super().search(term, **options)


@pytest.mark.slow
async def test_research_over_telegram_for_staff_only_without_holding_the_chat(
    tmp_path: Path, knowledge: Knowledge, brain, kb
) -> None:
    from bot.engine import Engine
    from bot.telegram_app import build_application
    from bot.tg_polling import start_polling
    from tests.fakes.bot_api import FakeBotApi

    patient, clinician = 5001, 9002
    async with FakeBotApi() as tg:
        settings = Settings(
            intake_data_dir=tmp_path / "data",
            telegram_bot_token=tg.token,
            telegram_api_url=f"{tg.url}/bot",
            admin_ids="9001",
            clinician_ids=str(clinician),
            intake_typing_delay=0,
            _env_file=None,
        )
        engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
        app = build_application(settings, engine)
        gate = asyncio.Event()
        sources = Sources(pubmed=HeldPubMed(gate), trials=FakeTrials())
        app.bot_data.research = Researcher(settings, knowledge, sources=sources)

        def texts(chat: int) -> list[str]:
            return [m.get("text") or "" for m in tg.messages(chat)]

        stop = asyncio.Event()
        try:
            async with app:
                await app.start()
                poller = await start_polling(app, engine, stop)
                try:
                    tg.push_command(patient, "research", "metformin")
                    refusal = knowledge.message("research_staff_only", "ko")
                    await tg.wait_for(lambda: refusal in texts(patient), what="refusal")
                    tg.push_command(patient, "ask", "메트포르민 최신 연구는?", language_code="en")
                    refusal_en = knowledge.message("research_staff_only", "en")
                    await tg.wait_for(lambda: refusal_en in texts(patient), what="refusal in en")
                    tg.push_command(clinician, "research", "메트포르민")
                    started = "🔎 메트포르민 연구를 찾고 있어요…"
                    await tg.wait_for(lambda: started in texts(clinician), what="progress")
                    # PubMed is still searching: the chat's next message is answered meanwhile
                    tg.push_command(clinician, "help")
                    help_text = knowledge.message("help", "ko")
                    await tg.wait_for(
                        lambda: any(help_text in t for t in texts(clinician)), what="help"
                    )
                    assert not tg.documents(clinician)
                    gate.set()
                    await tg.wait_for(lambda: tg.documents(clinician), what="report file")
                finally:
                    stop.set()
                    poller.cancel()
                    await asyncio.gather(poller, return_exceptions=True)
                    await app.stop()
        finally:
            await app.bot_data.research.aclose()
            await engine.close()
        shown = texts(clinician)
        progress = shown[0]  # one message, edited as the steps ran
        assert progress.startswith(started + "\n")
        for line in ("PubMed 검색 중… 23건", "논문 초록 읽는 중… 3편", "모집 중인 임상시험… 2건"):
            assert line in progress.splitlines()
        assert progress.endswith("보고서를 만들었어요.")
        report = next(t for t in shown if t.startswith("연구 보고서: 메트포르민 (metformin)"))
        assert "PMID 111 (2025)" in report and "NCT00000001" in report
        document = tg.documents(clinician)[0]
        assert document["file_name"] == "research-metformin.md"
        assert document["content"].decode().startswith("# 연구 보고서: 메트포르민 (metformin)")
        assert sources.pubmed.calls[0] == ("spell", "metformin")  # only the drug was sent


async def test_help_names_the_research_commands_to_clinicians_only(
    tmp_path: Path, knowledge: Knowledge, brain, kb
) -> None:
    from bot.engine import Engine, Inbound

    settings = staff_settings(tmp_path / "data")
    engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    try:
        shown = {}
        for user in (2, 4):
            inbound = Inbound(chat_id=user, kind="command", command="help", user_id=user)
            reply = await engine.handle(inbound)
            shown[user] = [m["text"] for m in reply.messages]
    finally:
        await engine.close()
    research_help = knowledge.message("help_research", "ko")
    assert research_help in shown[2] and research_help not in shown[4]
    assert knowledge.message("help_staff", "ko") not in shown[2]  # not an admin
