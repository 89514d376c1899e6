"""What the research assistant's sources give: PubMed articles and ClinicalTrials.gov studies,
typed, and the seams its clients and its cache share.

The clients (graphs/research/pubmed.py, graphs/research/trials.py) turn the services' wire
formats into these; the agent (graphs/research/agent.py) and the report (report.py) read only
these. Every field a service may leave out is optional.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol


class SourceUnavailable(Exception):
    """A service could not be reached or kept failing (network down, timeouts, 5xx after the
    retries): `service` is "pubmed" or "ctgov", `reason` short and free of the query."""

    def __init__(self, service: str, reason: str) -> None:
        super().__init__(f"{service}: {reason}")
        self.service = service
        self.reason = reason


class SourceError(Exception):
    """A service answered with an error of its own (an error body, a malformed answer)."""

    def __init__(self, service: str, reason: str) -> None:
        super().__init__(f"{service}: {reason}")
        self.service = service
        self.reason = reason


@dataclass(frozen=True)
class AbstractSection:
    """One labelled part of an abstract ("BACKGROUND", "RESULTS"; "" when unlabelled)."""

    label: str
    text: str


@dataclass(frozen=True)
class Article:
    """A PubMed article (efetch), or its summary (esummary: no abstract)."""

    pmid: str
    title: str
    journal: str = ""
    year: int | None = None
    authors: tuple[str, ...] = ()  # "Last FM" as PubMed lists them, in order
    abstract: tuple[AbstractSection, ...] = ()
    doi: str | None = None

    @property
    def url(self) -> str:
        return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"


@dataclass(frozen=True)
class SearchResult:
    """An esearch answer: how many match, the first ids, and how PubMed read the query."""

    count: int
    ids: tuple[str, ...]
    translation: str = ""  # QueryTranslation
    errors: tuple[str, ...] = ()  # PhraseNotFound etc. from the ErrorList


@dataclass(frozen=True)
class Site:
    """A place a trial runs."""

    facility: str = ""
    city: str = ""
    country: str = ""
    status: str = ""  # the site's recruitment status, when given


@dataclass(frozen=True)
class Trial:
    """A ClinicalTrials.gov study (API v2), the fields the report uses."""

    nct_id: str
    title: str
    status: str = ""  # overallStatus: RECRUITING, COMPLETED, ...
    phases: tuple[str, ...] = ()  # PHASE1, PHASE2, ... ; () when not applicable
    conditions: tuple[str, ...] = ()
    interventions: tuple[str, ...] = ()
    sponsor: str = ""
    start_date: str | None = None  # as given: "2023-04" or "2023-04-15"
    completion_date: str | None = None
    enrollment: int | None = None
    countries: tuple[str, ...] = ()
    sites: tuple[Site, ...] = ()

    @property
    def url(self) -> str:
        return f"https://clinicaltrials.gov/study/{self.nct_id}"


@dataclass(frozen=True)
class TrialPage:
    """One page of a /studies search."""

    trials: tuple[Trial, ...]
    next_token: str | None = None
    total: int | None = None  # totalCount, when asked for (countTotal=true)


@dataclass
class Progress:
    """What a long piece of research has done so far, for a message edited as it goes."""

    steps: list[str] = field(default_factory=list)


class ResponseCache(Protocol):
    """Raw responses kept for a while (the records database in the product, a dict in tests):
    a client looks a request up by its key (method, URL and parameters, never an API key)
    before sending it."""

    async def get(self, key: str) -> str | None:
        """The body stored under `key` while it is fresh, else None."""
        ...

    async def put(self, key: str, body: str, ttl: float) -> None:
        """Keep `body` under `key` for `ttl` seconds."""
        ...


class MemoryCache:
    """A ResponseCache in memory (tests, and the console when no database is open)."""

    def __init__(self) -> None:
        self._bodies: dict[str, tuple[str, float]] = {}
        self.hits = 0
        self.misses = 0

    async def get(self, key: str) -> str | None:
        found = self._bodies.get(key)
        if found is None or found[1] < time.monotonic():
            self.misses += 1
            return None
        self.hits += 1
        return found[0]

    async def put(self, key: str, body: str, ttl: float) -> None:
        self._bodies[key] = (body, time.monotonic() + ttl)
