"""The research assistant for staff (`/research`, `/ask`, `intake-bot research|ask`): who may
use it, the sources built from the settings, and every outcome as a report or one polite line.

Only the drug or the question leaves for NCBI and ClinicalTrials.gov, never anything about a
person the bot talks to. Nothing here knows Telegram (bot/tg_research.py renders it there).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from bot.config import Settings
from bot.messages import Document
from graphs.research.agent import (
    MAX_QUERY_CHARS,
    NoSubject,
    OnStep,
    Sources,
    ask,
    check_query,
    question_lang,
    research,
)
from graphs.research.report import SERVICE_NAMES, DrugReport, find_subject, subject_of
from graphs.research.types import MemoryCache, ResponseCache, SourceError, SourceUnavailable
from knowledge.loader import Knowledge

if TYPE_CHECKING:  # the openai package is imported only in LLM mode
    from graphs.common.llm import LLMClient

log = logging.getLogger(__name__)

Command = Literal["research", "ask"]


def build_sources(settings: Settings, cache: ResponseCache | None = None) -> Sources:
    """The real PubMed and ClinicalTrials.gov clients, from the settings (INTAKE_PUBMED_URL,
    NCBI_API_KEY, NCBI_EMAIL, INTAKE_CTGOV_URL). Imported here, when first needed."""
    from graphs.research.pubmed import PubMedClient
    from graphs.research.trials import TrialsClient

    cache = cache if cache is not None else MemoryCache()
    key = settings.ncbi_api_key.get_secret_value() if settings.ncbi_api_key else None
    return Sources(
        pubmed=PubMedClient(
            base_url=settings.intake_pubmed_url,
            api_key=key or None,
            email=settings.ncbi_email or None,
            cache=cache,
        ),
        trials=TrialsClient(base_url=settings.intake_ctgov_url, cache=cache),
    )


@dataclass
class Outcome:
    """A report, or the one line that says why there is none."""

    lang: str
    report: DrugReport | None = None
    line: str | None = None

    def text(self, kn: Knowledge) -> str:
        return self.report.text(kn) if self.report is not None else self.line or ""

    def document(self, kn: Knowledge) -> Document | None:
        """The report as a Markdown file."""
        if self.report is None:
            return None
        name = "".join(c if c.isalnum() else "-" for c in self.report.drug.lower())[:40]
        caption = kn.message("research_file_caption", self.lang, subject=self.report.drug)
        return Document(f"research-{name}.md", self.report.markdown(kn).encode("utf-8"), caption)


class Researcher:
    """The research assistant of one process: its sources (built on first use) and the model
    (LLM mode)."""

    def __init__(
        self,
        settings: Settings,
        knowledge: Knowledge,
        *,
        sources: Sources | None = None,
        llm: LLMClient | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        self.settings = settings
        self.knowledge = knowledge
        self._sources = sources
        self.llm = llm
        self.cache = cache  # the records database's (db.repo.RecordsCache); else in memory

    @property
    def sources(self) -> Sources:
        if self._sources is None:
            self._sources = build_sources(self.settings, self.cache)
        return self._sources

    def allowed(self, user_id: int | None) -> bool:
        """ADMIN_IDS and CLINICIAN_IDS only."""
        return user_id is not None and user_id in self.settings.research_staff

    async def aclose(self) -> None:
        if self._sources is not None:
            await self._sources.aclose()

    def check(self, command: Command, query: str, lang: str) -> Outcome | None:
        """The polite line for input that cannot be researched (empty, too long, a question
        naming no drug or condition without a model), before anything is sent; else None."""
        kn, lang = self.knowledge, question_lang(query, lang)
        try:
            query = check_query(query)
        except ValueError:
            if query.strip():
                line = kn.message("research_too_long", lang, limit=MAX_QUERY_CHARS)
                return Outcome(lang, line=line)
            usage = "research_usage" if command == "research" else "ask_usage"
            return Outcome(lang, line=kn.message(usage, lang))
        if command == "ask" and self.llm is None and find_subject(query) is None:
            return Outcome(lang, line=kn.message("ask_no_subject", lang))
        return None

    async def run(
        self, command: Command, query: str, lang: str, on_step: OnStep | None = None
    ) -> Outcome:
        """`/research DRUG` or `/ask QUESTION`: the report in the language of the words (else
        `lang`), or one polite line (bad input, nothing named, a service down or erring)."""
        kn = self.knowledge
        refused = self.check(command, query, lang)
        if refused is not None:
            return refused
        lang, query = question_lang(query, lang), check_query(query)
        usage = "research_usage" if command == "research" else "ask_usage"
        try:
            if command == "research":
                report = await research(subject_of(query), lang, self.sources, kn, on_step=on_step)
            else:
                report = await ask(query, lang, self.sources, kn, llm=self.llm, on_step=on_step)
        except NoSubject:
            return Outcome(lang, line=kn.message("ask_no_subject", lang))
        except SourceUnavailable as exc:
            log.warning("research: %s unavailable (%s)", exc.service, exc.reason)
            service = SERVICE_NAMES.get(exc.service, exc.service)
            return Outcome(lang, line=kn.message("research_unavailable", lang, service=service))
        except SourceError as exc:
            log.warning("research: %s error (%s)", exc.service, exc.reason)
            service = SERVICE_NAMES.get(exc.service, exc.service)
            line = kn.message("research_source_error", lang, service=service, reason=exc.reason)
            return Outcome(lang, line=line)
        except ValueError:  # a client refused the input before sending it
            return Outcome(lang, line=kn.message(usage, lang))
        return Outcome(lang, report=report)
