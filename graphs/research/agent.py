"""The research assistant's work: a fixed plan (rules mode) or a ReAct loop on the model.

Both use one `Sources` (a PubMed client and a ClinicalTrials.gov client, built in bot/ from the
settings) and gather what the tools return in `Findings`, from which the `DrugReport` is built.
Progress goes to `on_step(text)` (a K0 line in the asker's language) after each step.

The fixed plan: PubMed's spelling check, a relevance search of the last years, the top
articles fetched, publications counted by year, trials searched (all statuses, then the
recruiting ones, in Korea first when the question was Korean), the report.

The loop (LLM mode): the model answers with a JSON action `{"thought", "action", "input"}`
naming one of TOOLS; the tool runs and a short observation (ids, titles, counts, never whole
abstracts) is added to the conversation. A plain-text reply is the final answer; bad JSON or an
unknown tool is observed and the loop goes on; at `max_steps` it ends with what it has.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

import clock
from graphs.research.report import DrugReport, Subject, article_line, find_subject
from graphs.research.types import (
    Article,
    SearchResult,
    SourceError,
    SourceUnavailable,
    Trial,
    TrialPage,
)
from knowledge.loader import Knowledge

if TYPE_CHECKING:  # the openai package is imported only in LLM mode
    from graphs.common.llm import LLMClient

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500  # a drug or a question; longer is refused before any request
TOP_ARTICLES = 5  # articles fetched and shown
YEARS = 5  # publication counts for this many years, this one included
RECRUITING_SHOWN = 10
TRIALS_TALLIED = 100  # trials the status and phase counts are taken from
MAX_STEPS = 6  # model calls of one loop
OBSERVATION_CHARS = 900
KOREA = "Korea"

OnStep = Callable[[str], Awaitable[None] | None]


class PubMedSource(Protocol):
    async def search(
        self,
        term: str,
        *,
        retmax: int = 20,
        mindate: str | None = None,
        maxdate: str | None = None,
        sort: str = "relevance",
    ) -> SearchResult: ...
    async def count_by_year(self, term: str, years: Sequence[int]) -> dict[int, int]: ...
    async def fetch(self, pmids: Sequence[str]) -> list[Article]: ...
    async def spell(self, term: str) -> str | None: ...
    async def aclose(self) -> None: ...


class TrialsSource(Protocol):
    async def search(self, **filters: Any) -> TrialPage: ...
    async def get(self, nct_id: str) -> Trial | None: ...
    async def aclose(self) -> None: ...


@dataclass
class Sources:
    """Where the research reads: PubMed and ClinicalTrials.gov (real clients, or test doubles)."""

    pubmed: PubMedSource
    trials: TrialsSource

    async def aclose(self) -> None:
        await self.pubmed.aclose()
        await self.trials.aclose()


class NoSubject(ValueError):
    """A question that names no drug or condition the lexicon knows (rules mode)."""


def check_query(text: str) -> str:
    """The query with its spaces tidied; ValueError when empty or too long."""
    text = " ".join(text.split())
    if not text:
        raise ValueError("empty")
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError("too long")
    return text


def question_lang(text: str, default: str = "en") -> str:
    """ "ko" when the question is written in Korean, else `default`."""
    return "ko" if re.search(r"[가-힣]", text) else default


@dataclass
class Findings:
    """What the tools returned so far: the report is built from it."""

    term: str | None = None  # the first PubMed term searched
    articles_total: int | None = None
    counts_by_year: dict[int, int] = field(default_factory=dict)
    articles: dict[str, Article] = field(default_factory=dict)  # by PMID, in order
    trials_total: int | None = None
    trials: dict[str, Trial] = field(default_factory=dict)  # by NCT id
    recruiting: dict[str, Trial] = field(default_factory=dict)
    spelled_from: str | None = None

    def empty(self) -> bool:
        return not (self.articles_total is not None or self.trials or self.counts_by_year)

    def report(self, subject: Subject, lang: str, **more: Any) -> DrugReport:
        return DrugReport.build(
            subject,
            lang,
            articles=list(self.articles.values())[:TOP_ARTICLES],
            trials=list(self.trials.values()),
            recruiting=list(self.recruiting.values())[:RECRUITING_SHOWN],
            articles_total=self.articles_total,
            counts_by_year=dict(self.counts_by_year),
            trials_total=self.trials_total,
            spelled_from=self.spelled_from,
            **more,
        )


class Progress:
    """K0 progress lines in the asker's language, each passed to `on_step`."""

    def __init__(self, kn: Knowledge, lang: str, on_step: OnStep | None) -> None:
        self.kn, self.lang, self.on_step = kn, lang, on_step
        self.lines: list[str] = []

    async def __call__(self, key: str, **values: Any) -> None:
        text = self.kn.message(key, self.lang, **values)
        self.lines.append(text)
        if self.on_step is not None:
            result = self.on_step(text)
            if inspect.isawaitable(result):
                await result


# --- the fixed plan ---------------------------------------------------------------------------


async def research(
    subject: Subject,
    lang: str,
    sources: Sources,
    kn: Knowledge,
    *,
    on_step: OnStep | None = None,
    today: date | None = None,
) -> DrugReport:
    """The fixed plan for one drug or condition (rules mode, and the model's fallback).

    After the spelling check, PubMed (search; then the top articles and the counts by year at
    once) and ClinicalTrials.gov (all statuses, and recruiting ones — Korea first for a Korean
    question — at once) are asked side by side. One service down leaves the other's part of
    the report, with a line naming the one that could not be reached; both down (or a service
    erring) raise as before."""
    step = Progress(kn, lang, on_step)
    found = Findings()
    term = check_query(subject.english)
    try:
        corrected = await sources.pubmed.spell(term)
    except SourceUnavailable:
        corrected = None  # the searches below say whether PubMed is down
    if corrected and corrected.lower() != term.lower():
        await step("research_step_spell", asked=term, term=corrected)
        found.spelled_from, term = term, corrected
        subject = replace(subject, english=corrected)
    years = _years(today)

    async def pubmed_part() -> None:
        await _search_pubmed(sources, found, term, today or clock.now().date())
        await step("research_step_pubmed", count=found.articles_total)
        top = list(found.articles)[:TOP_ARTICLES]

        async def read() -> None:
            await _fetch(sources, found, top)
            await step("research_step_fetch", count=len(found.articles))

        async def count() -> None:
            found.counts_by_year = await sources.pubmed.count_by_year(term, years)
            await step("research_step_years", first=years[0], last=years[-1])

        await asyncio.gather(read(), count())

    async def trials_part() -> None:
        about = {"condition" if subject.kind == "condition" else "intervention": term}
        where = [KOREA, None] if lang == "ko" else [None]

        async def tallied() -> TrialPage:
            page = await _trials_page(sources, about)
            await step("research_step_trials", count=page.total or len(page.trials))
            return page

        async def recruiting() -> list[TrialPage]:
            pages = await asyncio.gather(
                *(_trials_page(sources, about, ("RECRUITING",), loc) for loc in where)
            )
            shown = {t.nct_id for p in pages for t in p.trials if t.status == "RECRUITING"}
            await step("research_step_recruiting", count=len(shown))
            return list(pages)

        every, open_now = await asyncio.gather(tallied(), recruiting())
        _record_trials(found, every, ())
        for page in open_now:  # in order: Korea's recruiting ones first
            _record_trials(found, page, ("RECRUITING",))

    outcomes = await asyncio.gather(pubmed_part(), trials_part(), return_exceptions=True)
    down = [o for o in outcomes if isinstance(o, SourceUnavailable)]
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, SourceUnavailable):
            raise outcome
    if len(down) == len(outcomes):
        raise down[0]
    report = found.report(subject, lang, unavailable=tuple(d.service for d in down))
    await step("research_step_done")
    return report


def _years(today: date | None) -> list[int]:
    year = (today or clock.now().date()).year
    return list(range(year - YEARS + 1, year + 1))


async def _search_pubmed(sources: Sources, found: Findings, term: str, today: date) -> str:
    """A relevance search of the last YEARS years; the ids kept in order."""
    first = today.year - YEARS + 1
    result = await sources.pubmed.search(
        term, retmax=20, mindate=str(first), maxdate=str(today.year), sort="relevance"
    )
    found.term = found.term or term
    found.articles_total = result.count
    for pmid in result.ids:
        found.articles.setdefault(pmid, Article(pmid=pmid, title=""))
    return f"{result.count} found; ids: {', '.join(result.ids[:20]) or 'none'}" + (
        f"; notes: {'; '.join(result.errors)}" if result.errors else ""
    )


async def _fetch(sources: Sources, found: Findings, pmids: Sequence[str]) -> str:
    """The articles with their abstracts; one short line each."""
    pmids = [p for p in pmids if p][:TOP_ARTICLES]
    if not pmids:
        return "no ids to fetch"
    fetched = await sources.pubmed.fetch(pmids)
    for article in fetched:
        found.articles[article.pmid] = article
    # ids the search gave but nothing came back for are dropped (no empty titles shown)
    for pmid in [p for p, a in found.articles.items() if not a.title]:
        del found.articles[pmid]
    return "\n".join(
        f"PMID {a.pmid} ({a.year or '?'}) {a.title[:150]} | {article_line(a)[:160]}"
        for a in fetched
    )


async def _trials_page(
    sources: Sources,
    about: dict[str, str],
    statuses: Sequence[str] = (),
    location: str | None = None,
) -> TrialPage:
    """One page of trials: all statuses for the tallies (with the total), or recruiting ones."""
    recruiting = list(statuses) == ["RECRUITING"]
    return await sources.trials.search(
        **about,
        statuses=tuple(statuses),
        location=location,
        page_size=RECRUITING_SHOWN if recruiting else TRIALS_TALLIED,
        count_total=not statuses,
    )


def _record_trials(found: Findings, page: TrialPage, statuses: Sequence[str]) -> str:
    """Keep a page's trials (all statuses give the tallies, recruiting ones are listed); the
    page in short, for the model."""
    if not statuses:
        found.trials_total = page.total if page.total is not None else len(page.trials)
        for trial in page.trials:
            found.trials.setdefault(trial.nct_id, trial)
    for trial in page.trials:
        if trial.status == "RECRUITING":
            found.recruiting.setdefault(trial.nct_id, trial)
    total = f"total {page.total}; " if page.total is not None else ""
    return total + "\n".join(
        f"{t.nct_id} {t.status} {'/'.join(t.phases) or 'NA'} {t.title[:120]}"
        for t in page.trials[:10]
    )


async def _search_trials(
    sources: Sources,
    found: Findings,
    about: dict[str, str],
    *,
    statuses: Sequence[str] = (),
    location: str | None = None,
) -> str:
    """One page of trials, kept (the model's search_trials tool)."""
    page = await _trials_page(sources, about, statuses, location)
    return _record_trials(found, page, statuses)


# --- the ReAct loop ---------------------------------------------------------------------------

TOOLS = {
    "search_pubmed": 'PubMed relevance search of the last 5 years. input: {"term": "metformin"}',
    "fetch_articles": 'Titles and key lines of PubMed articles. input: {"pmids": ["123", "456"]}',
    "count_by_year": 'PubMed publications per year, last 5 years. input: {"term": "metformin"}',
    "search_trials": 'ClinicalTrials.gov studies. input: {"intervention" or "condition" or '
    '"term": "...", "status": "RECRUITING" (optional), "location": "Korea" (optional)}',
    "get_trial": 'One ClinicalTrials.gov study. input: {"nct_id": "NCT01234567"}',
    "finish": 'The final answer. input: {"answer": "..."}',
}


def system_prompt() -> str:
    """The loop's instructions: the tools and the answer format."""
    tools = "\n".join(f"- {name}: {about}" for name, about in TOOLS.items())
    return (
        "You are a research assistant for clinicians. Answer the question with PubMed and "
        "ClinicalTrials.gov, one tool at a time. Reply with one JSON object only: "
        '{"thought": "...", "action": "<tool>", "input": {...}}. Tools:\n'
        f"{tools}\n"
        "When you know enough, use finish (or reply in plain text). Cite PMIDs and NCT ids; "
        "never give treatment advice; answer in the language of the question."
    )


@dataclass(frozen=True)
class Action:
    thought: str
    action: str
    input: Any


def parse_reply(text: str) -> Action | str | None:
    """An Action from a JSON reply; the text itself when it is plain text (the final answer);
    None when it looks like JSON but is not a valid action."""
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, re.S)
    body = fenced.group(1) if fenced else stripped
    if not body.startswith("{"):
        return stripped
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("action"), str):
        return None
    return Action(str(data.get("thought") or ""), data["action"].strip(), data.get("input"))


def _arg(value: Any, *names: str) -> Any:
    """The tool input's named argument (a bare string or list stands for the first name)."""
    if isinstance(value, dict):
        return next((value[n] for n in names if value.get(n)), None)
    return value


class Loop:
    """One ReAct run: the conversation, the findings and the tools over `sources`."""

    def __init__(self, sources: Sources, today: date | None = None) -> None:
        self.sources = sources
        self.today = today or clock.now().date()
        self.found = Findings()

    async def run_tool(self, action: Action) -> str:
        """The observation of one action (errors are observations too)."""
        tool = getattr(self, f"_tool_{action.action}", None)
        if action.action == "finish" or tool is None:
            return f"unknown tool {action.action!r}; the tools are: {', '.join(TOOLS)}"
        try:
            return (await tool(action.input))[:OBSERVATION_CHARS]
        except (ValueError, TypeError) as exc:
            return f"error: bad input ({exc})"
        except (SourceUnavailable, SourceError) as exc:
            return f"error: {exc.service} {exc.reason}"

    async def _tool_search_pubmed(self, value: Any) -> str:
        term = check_query(str(_arg(value, "term", "query") or ""))
        return await _search_pubmed(self.sources, self.found, term, self.today)

    async def _tool_fetch_articles(self, value: Any) -> str:
        pmids = _arg(value, "pmids", "ids") or list(self.found.articles)
        pmids = [pmids] if isinstance(pmids, str) else [str(p) for p in pmids]
        return await _fetch(self.sources, self.found, pmids)

    async def _tool_count_by_year(self, value: Any) -> str:
        term = check_query(str(_arg(value, "term", "query") or ""))
        counts = await self.sources.pubmed.count_by_year(term, _years(self.today))
        self.found.counts_by_year = counts
        return ", ".join(f"{y}: {n}" for y, n in sorted(counts.items()))

    async def _tool_search_trials(self, value: Any) -> str:
        value = value if isinstance(value, dict) else {"term": value}
        about = {
            k: check_query(str(value[k]))
            for k in ("intervention", "condition", "term")
            if value.get(k)
        }
        if not about:
            raise ValueError("name an intervention, condition or term")
        status = value.get("status")
        statuses = [str(status).upper()] if status else []
        location = str(value["location"]) if value.get("location") else None
        return await _search_trials(
            self.sources, self.found, about, statuses=statuses, location=location
        )

    async def _tool_get_trial(self, value: Any) -> str:
        nct_id = str(_arg(value, "nct_id", "id") or "")
        trial = await self.sources.trials.get(nct_id)
        if trial is None:
            return f"{nct_id}: no such study"
        self.found.trials.setdefault(trial.nct_id, trial)
        if trial.status == "RECRUITING":
            self.found.recruiting.setdefault(trial.nct_id, trial)
        return (
            f"{trial.nct_id} {trial.status} {'/'.join(trial.phases) or 'NA'} {trial.title[:150]}; "
            f"conditions: {', '.join(trial.conditions[:5])}; countries: {', '.join(trial.countries[:8])}"
        )


async def react(
    question: str,
    lang: str,
    sources: Sources,
    kn: Knowledge,
    llm: LLMClient,
    *,
    on_step: OnStep | None = None,
    today: date | None = None,
    max_steps: int = MAX_STEPS,
) -> DrugReport:
    """The ReAct loop on the model; at the step limit, the best answer so far."""
    from graphs.common.llm import LLMFailure  # LLM mode only: it imports the openai package

    question = check_query(question)
    step = Progress(kn, lang, on_step)
    loop = Loop(sources, today)
    subject = find_subject(question)
    messages = [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": question},
    ]
    answer, thought, stopped = None, "", True
    for n in range(1, max_steps + 1):
        await step("research_step_think", step=n, limit=max_steps)
        try:
            text, _ = await llm.reply("research", messages)
        except LLMFailure as failure:
            log.warning("research loop: the model failed (%s)", failure.reason)
            if loop.found.empty() and subject is not None:
                return await research(subject, lang, sources, kn, on_step=on_step, today=today)
            break
        parsed = parse_reply(text)
        if isinstance(parsed, str):
            answer, stopped = parsed, False
            break
        if parsed is not None and parsed.action == "finish":
            answer = str(_arg(parsed.input, "answer") or parsed.thought or "")
            stopped = False
            break
        if parsed is None:
            observation = 'error: not a valid action; reply {"thought", "action", "input"}'
        else:
            thought = parsed.thought or thought
            observation = await loop.run_tool(parsed)
        messages += [
            {"role": "assistant", "content": text[:2000]},
            {"role": "user", "content": f"Observation: {observation}"},
        ]
    if subject is None:
        term = loop.found.term or question
        subject = Subject(asked=question, english=term)
    report = loop.found.report(
        subject, lang, answer=answer or thought or None, stopped_early=stopped
    )
    await step("research_step_done")
    return report


async def ask(
    question: str,
    lang: str,
    sources: Sources,
    kn: Knowledge,
    *,
    llm: LLMClient | None = None,
    on_step: OnStep | None = None,
    today: date | None = None,
) -> DrugReport:
    """`/ask`: the loop when there is a model; else the fixed plan for the drug or condition
    the question names (NoSubject when it names none)."""
    question = check_query(question)
    if llm is not None:
        return await react(question, lang, sources, kn, llm, on_step=on_step, today=today)
    subject = find_subject(question)
    if subject is None:
        raise NoSubject("no drug or condition named")
    return await research(subject, lang, sources, kn, on_step=on_step, today=today)
