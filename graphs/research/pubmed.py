"""PubMed through NCBI's E-utilities: search, count by year, summaries, abstracts, spelling.

The client follows NCBI's usage rules: every request names the `tool` and, when given, the
`email` and `api_key`; at most 3 requests a second without a key and 10 with one, counted by a
limiter all of one client's calls share. A 429, a 5xx, a timeout or a refused connection is
tried again after an exponential back-off (`retries` times), then `SourceUnavailable`; an error
body is `SourceError`. Answers are kept in the optional `ResponseCache` for `ttl` seconds under
the endpoint and its sorted parameters (never the key or the email) and read from there exactly
as a fresh answer is. The XML is read by graphs/research/pubmed_xml.py.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar
from urllib.parse import urlencode

import httpx
from lxml import etree

from graphs.research.pubmed_xml import (
    SERVICE,
    parse_xml,
    read_articles,
    read_search,
    read_spelling,
    read_summaries,
)
from graphs.research.types import (
    Article,
    ResponseCache,
    SearchResult,
    SourceError,
    SourceUnavailable,
)

EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
MAX_TERM_CHARS = 1_000  # a longer query is refused before any request (NCBI answers 414 or worse)
MAX_RETMAX = 10_000  # esearch returns at most this many ids
IDS_PER_REQUEST = 200  # NCBI asks for POST above about 200 ids; longer lists go in batches
RATE_WITHOUT_KEY = 3  # requests per second (NCBI's usage rules)
RATE_WITH_KEY = 10
BACKOFF = 0.5  # seconds before the first retry; doubled each time, at most BACKOFF_CAP
BACKOFF_CAP = 8.0
SORTS = frozenset({"relevance", "pub_date", "Author", "JournalName"})
_DATE = re.compile(r"^\d{4}(/\d{1,2}(/\d{1,2})?)?$")
_PMID = re.compile(r"^\d{1,9}$")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

T = TypeVar("T")
Root = etree._Element
Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class RateLimiter:
    """At most `rate` starts in any `per` seconds, shared by every call that awaits `wait`.

    Time comes from `clock` and waiting from `sleep`, so tests count instead of waiting."""

    def __init__(
        self,
        rate: int,
        per: float = 1.0,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if rate < 1:
            raise ValueError("rate must be at least 1")
        self.rate = rate
        self.per = per
        self._clock = clock
        self._sleep = sleep
        self._starts: deque[float] = deque(maxlen=rate)
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        """Return when one more request may start, and count it."""
        async with self._lock:
            if len(self._starts) == self.rate:
                free_at = self._starts[0] + self.per
                now = self._clock()
                if now < free_at:
                    await self._sleep(free_at - now)
            self._starts.append(self._clock())


class PubMedClient:
    """NCBI E-utilities for PubMed (esearch, esummary, efetch, espell) over async httpx."""

    def __init__(
        self,
        *,
        base_url: str = EUTILS_URL,
        api_key: str | None = None,
        email: str | None = None,
        tool: str = "intake-bot",
        cache: ResponseCache | None = None,
        ttl: float = 86_400,
        timeout: float = 10.0,
        retries: int = 3,
        http: httpx.AsyncClient | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key or None
        self.email = email or None
        self.tool = tool
        self.cache = cache
        self.ttl = ttl
        self.retries = max(0, retries)
        rate = RATE_WITH_KEY if self.api_key else RATE_WITHOUT_KEY
        self.limiter = RateLimiter(rate, clock=clock, sleep=sleep)
        self._sleep = sleep
        self._timeout = timeout
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=timeout, follow_redirects=True)
        self.requests = 0  # HTTP requests sent (cache hits not counted)
        self.retried = 0  # of those, sent again after a 429, a 5xx, a timeout or no connection

    # ---------------------------------------------------------------- the endpoints

    async def search(
        self,
        term: str,
        *,
        retmax: int = 20,
        mindate: str | None = None,
        maxdate: str | None = None,
        sort: str = "relevance",
    ) -> SearchResult:
        """esearch: how many articles match `term`, the first `retmax` ids, PubMed's reading."""
        params = {
            "db": "pubmed",
            "term": _term(term),
            "retmax": _retmax(retmax),
            "sort": _sort(sort),
        }
        params |= _dates(mindate, maxdate)
        return await self._get("esearch.fcgi", params, read_search)

    async def count_by_year(self, term: str, years: Sequence[int]) -> dict[int, int]:
        """Publications matching `term` in each of `years` (one count-only esearch each)."""
        term = _term(term)
        wanted = sorted({_year(y) for y in years})
        counts = {}
        for year in wanted:
            params = {"db": "pubmed", "term": term, "rettype": "count"}
            params |= _dates(str(year), str(year))
            counts[year] = (await self._get("esearch.fcgi", params, read_search)).count
        return counts

    async def summaries(self, pmids: Sequence[str]) -> list[Article]:
        """esummary: title, journal, year and authors of each article (no abstracts)."""
        articles: list[Article] = []
        for batch in _batches(_pmids(pmids)):
            params = {"db": "pubmed", "id": ",".join(batch)}
            articles += await self._get("esummary.fcgi", params, read_summaries)
        return articles

    async def fetch(self, pmids: Sequence[str]) -> list[Article]:
        """efetch: the whole records, abstracts with their labelled sections and DOIs."""
        articles: list[Article] = []
        for batch in _batches(_pmids(pmids)):
            params = {
                "db": "pubmed",
                "id": ",".join(batch),
                "rettype": "abstract",
                "retmode": "xml",
            }
            articles += await self._get("efetch.fcgi", params, read_articles)
        return articles

    async def spell(self, term: str) -> str | None:
        """espell: PubMed's correction of `term`, or None when it has none."""
        term = _term(term)
        params = {"db": "pubmed", "term": term}
        return await self._get("espell.fcgi", params, partial(read_spelling, term=term))

    async def aclose(self) -> None:
        """Close the HTTP client if this client opened it."""
        if self._own_http:
            await self._http.aclose()

    async def __aenter__(self) -> PubMedClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ---------------------------------------------------------------- one request

    async def _get(self, endpoint: str, params: dict[str, str], read: Callable[[Root], T]) -> T:
        """`endpoint`'s answer read by `read`, from the cache or the service (then cached)."""
        key = cache_key(endpoint, params)
        if self.cache is not None:
            body = await self.cache.get(key)
            if body is not None:
                return read(parse_xml(body))
        body = await self._send(endpoint, params)
        result = read(parse_xml(body))  # an error body raises here and is never cached
        if self.cache is not None:
            await self.cache.put(key, body, self.ttl)
        return result

    async def _send(self, endpoint: str, params: dict[str, str]) -> str:
        """The body of a successful answer, after retries; SourceUnavailable when none came."""
        url = f"{self.base_url}/{endpoint}"
        query = params | self._identity()
        reason = "no answer"
        for attempt in range(self.retries + 1):
            if attempt:
                self.retried += 1
                await self._sleep(min(BACKOFF * 2 ** (attempt - 1), BACKOFF_CAP))
            await self.limiter.wait()
            self.requests += 1
            try:
                response = await self._http.get(url, params=query, timeout=self._timeout)
            except httpx.TimeoutException:
                reason = "timed out"
                continue
            except httpx.TransportError:
                reason = "cannot connect"
                continue
            if response.status_code in RETRY_STATUSES:
                reason = f"HTTP {response.status_code}"
                continue
            if response.status_code >= 400:
                raise _client_error(response)
            return response.text
        raise SourceUnavailable(SERVICE, f"{reason} after {self.retries + 1} attempts")

    def _identity(self) -> dict[str, str]:
        """tool, email and api_key, as NCBI asks every request to carry them."""
        identity = {"tool": self.tool}
        if self.email:
            identity["email"] = self.email
        if self.api_key:
            identity["api_key"] = self.api_key
        return identity


def _client_error(response: httpx.Response) -> SourceError:
    """A 4xx answer as SourceError, with the reason its body gives when it gives one."""
    try:
        parse_xml(response.text)
    except SourceError as error:
        if error.reason != "malformed answer":
            return error
    return SourceError(SERVICE, f"HTTP {response.status_code}")


def cache_key(endpoint: str, params: dict[str, str]) -> str:
    """The cache's key for a request: service, endpoint and sorted parameters (no secrets)."""
    kept = sorted((k, v) for k, v in params.items() if k not in ("api_key", "email"))
    return f"{SERVICE}:{endpoint}?{urlencode(kept)}"


# -------------------------------------------------------------------- input checks


def _term(term: str) -> str:
    cleaned = " ".join(str(term).split())
    if not cleaned:
        raise ValueError("empty query")
    if len(cleaned) > MAX_TERM_CHARS:
        raise ValueError(f"query longer than {MAX_TERM_CHARS} characters")
    return cleaned


def _retmax(retmax: int) -> str:
    if not 0 <= int(retmax) <= MAX_RETMAX:
        raise ValueError(f"retmax must be between 0 and {MAX_RETMAX}")
    return str(int(retmax))


def _sort(sort: str) -> str:
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(sorted(SORTS))}")
    return sort


def _dates(mindate: str | None, maxdate: str | None) -> dict[str, str]:
    """mindate/maxdate on the publication date; NCBI needs both, so a missing one is open."""
    if mindate is None and maxdate is None:
        return {}
    for date in (mindate, maxdate):
        if date is not None and not _DATE.match(date):
            raise ValueError("dates are YYYY, YYYY/MM or YYYY/MM/DD")
    return {"datetype": "pdat", "mindate": mindate or "1800", "maxdate": maxdate or "3000"}


def _year(year: int) -> int:
    if isinstance(year, bool) or not isinstance(year, int) or not 1800 <= year <= 2200:
        raise ValueError("years are whole numbers from 1800 to 2200")
    return year


def _pmids(pmids: Sequence[str]) -> list[str]:
    """The ids in order without repeats; anything that is no PMID raises ValueError."""
    if isinstance(pmids, str):
        raise ValueError("PMIDs come as a list")
    cleaned = [str(p).strip() for p in pmids]
    bad = [p for p in cleaned if not _PMID.match(p)]
    if bad:
        raise ValueError(f"not a PMID: {bad[0][:20]!r}")
    return list(dict.fromkeys(cleaned))


def _batches(ids: list[str]) -> list[list[str]]:
    return [ids[i : i + IDS_PER_REQUEST] for i in range(0, len(ids), IDS_PER_REQUEST)]
