"""ClinicalTrials.gov API v2: search studies and read one, typed as `Trial`.

`GET /studies` (query.cond, query.intr, query.term, query.locn, filter.overallStatus,
pageSize, pageToken, countTotal) and `GET /studies/{nctId}`, as JSON. Answers are parsed from
the documented study structure (protocolSection and its modules); any module may be missing.
429, 5xx, timeouts and broken connections are retried with exponential back-off, then
`SourceUnavailable`; an error body (v2 answers a bad request with 400 and a plain-text or JSON
message) or a malformed answer is `SourceError`. Bad input is a `ValueError` before any request.
Successful bodies go to an optional `ResponseCache`, keyed by URL and sorted parameters.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

import httpx

from graphs.research.types import (
    ResponseCache,
    Site,
    SourceError,
    SourceUnavailable,
    Trial,
    TrialPage,
)

CTGOV_URL = "https://clinicaltrials.gov/api/v2"
SERVICE = "ctgov"
NCT_ID = re.compile(r"NCT\d{8}")
MAX_QUERY = 1_000  # characters in one search text; the service's own limit is not documented
MAX_PAGE_SIZE = 1_000  # the API's largest pageSize
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF = 0.5  # seconds before the first retry, doubled for each next one
MAX_WAIT = 30.0  # the longest pause between two tries, whatever Retry-After asks
Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")
STATUSES = frozenset(
    {
        "ACTIVE_NOT_RECRUITING",
        "COMPLETED",
        "ENROLLING_BY_INVITATION",
        "NOT_YET_RECRUITING",
        "RECRUITING",
        "SUSPENDED",
        "TERMINATED",
        "WITHDRAWN",
        "AVAILABLE",
        "NO_LONGER_AVAILABLE",
        "TEMPORARILY_NOT_AVAILABLE",
        "APPROVED_FOR_MARKETING",
        "WITHHELD",
        "UNKNOWN",
    }
)


def _text(name: str, value: str | None) -> str | None:
    """A search text stripped, or None when not given; empty or too long is a ValueError."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        raise ValueError(f"empty {name}")
    if len(value) > MAX_QUERY:
        raise ValueError(f"{name} too long ({len(value)} characters, at most {MAX_QUERY})")
    return value


def _statuses(statuses: Sequence[str]) -> str | None:
    """filter.overallStatus: the statuses upper-cased and comma-joined (None for none)."""
    if isinstance(statuses, str):
        statuses = [statuses]
    wanted = [s.strip().upper().replace(" ", "_") for s in statuses]
    unknown = [s for s in wanted if s not in STATUSES]
    if unknown:
        raise ValueError(f"unknown trial status {unknown[0]!r}")
    return ",".join(dict.fromkeys(wanted)) or None


def check_nct_id(value: str) -> str:
    """An NCT id upper-cased (NCT + 8 digits), else ValueError."""
    found = value.strip().upper() if isinstance(value, str) else ""
    if not NCT_ID.fullmatch(found):
        raise ValueError("a trial id is NCT followed by 8 digits")
    return found


def search_params(
    *,
    condition: str | None = None,
    intervention: str | None = None,
    term: str | None = None,
    statuses: Sequence[str] = (),
    location: str | None = None,
    page_size: int = 20,
    page_token: str | None = None,
    count_total: bool = False,
) -> dict[str, str]:
    """The query parameters of a /studies search, checked (ValueError on bad input)."""
    texts = {
        "query.cond": _text("condition", condition),
        "query.intr": _text("intervention", intervention),
        "query.term": _text("term", term),
        "query.locn": _text("location", location),
    }
    if all(v is None for v in texts.values()):
        raise ValueError("a trial search needs a condition, an intervention, a term or a place")
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    params = {k: v for k, v in texts.items() if v is not None}
    status = _statuses(statuses)
    if status:
        params["filter.overallStatus"] = status
    params["pageSize"] = str(page_size)
    if page_token:
        params["pageToken"] = page_token
    if count_total:
        params["countTotal"] = "true"
    params["format"] = "json"
    return params


# --- parsing the v2 study structure ------------------------------------------------------------


def _module(parent: Any, name: str) -> dict[str, Any]:
    found = parent.get(name) if isinstance(parent, dict) else None
    return found if isinstance(found, dict) else {}


def _strings(values: Any) -> tuple[str, ...]:
    return tuple(v for v in values if isinstance(v, str) and v) if isinstance(values, list) else ()


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _date(struct: dict[str, Any]) -> str | None:
    return struct.get("date") if isinstance(struct.get("date"), str) else None


def _sites(locations: Any) -> tuple[Site, ...]:
    if not isinstance(locations, list):
        return ()
    return tuple(
        Site(
            facility=_str(place.get("facility")),
            city=_str(place.get("city")),
            country=_str(place.get("country")),
            status=_str(place.get("status")),
        )
        for place in locations
        if isinstance(place, dict)
    )


def parse_study(study: Any) -> Trial:
    """One study of the v2 JSON as a Trial; a study without an NCT id is a SourceError."""
    protocol = _module(study, "protocolSection")
    ident = _module(protocol, "identificationModule")
    nct = ident.get("nctId")
    if not isinstance(nct, str) or not nct:
        raise SourceError(SERVICE, "a study without an NCT id")
    status = _module(protocol, "statusModule")
    design = _module(protocol, "designModule")
    enrollment = _module(design, "enrollmentInfo").get("count")
    arms = _module(protocol, "armsInterventionsModule")
    interventions = arms.get("interventions")
    sites = _sites(_module(protocol, "contactsLocationsModule").get("locations"))
    return Trial(
        nct_id=nct,
        title=_str(ident.get("briefTitle")) or _str(ident.get("officialTitle")),
        status=_str(status.get("overallStatus")),
        phases=tuple(p for p in _strings(design.get("phases")) if p != "NA"),
        conditions=_strings(_module(protocol, "conditionsModule").get("conditions")),
        interventions=tuple(
            dict.fromkeys(
                i["name"]
                for i in (interventions if isinstance(interventions, list) else ())
                if isinstance(i, dict) and isinstance(i.get("name"), str) and i["name"]
            )
        ),
        sponsor=_str(
            _module(_module(protocol, "sponsorCollaboratorsModule"), "leadSponsor").get("name")
        ),
        start_date=_date(_module(status, "startDateStruct")),
        completion_date=_date(_module(status, "completionDateStruct")),
        enrollment=enrollment if type(enrollment) is int else None,
        countries=tuple(dict.fromkeys(s.country for s in sites if s.country)),
        sites=sites,
    )


def parse_page(body: Any) -> TrialPage:
    """A /studies answer ({"studies": [...], "nextPageToken", "totalCount"}) as a TrialPage."""
    if not isinstance(body, dict) or not isinstance(body.get("studies", []), list):
        raise SourceError(SERVICE, "malformed answer: no list of studies")
    token = body.get("nextPageToken")
    total = body.get("totalCount")
    return TrialPage(
        trials=tuple(parse_study(s) for s in body.get("studies", [])),
        next_token=token if isinstance(token, str) and token else None,
        total=total if type(total) is int else None,
    )


def _error_reason(response: httpx.Response) -> str:
    """The service's own message from an error body (JSON or plain text), short."""
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        found = body.get("message") or body.get("error") or body.get("detail")
        text = found if isinstance(found, str) else text
    message = " ".join(text.split())[:200] or response.reason_phrase
    return f"HTTP {response.status_code}: {message}"


class _NotFound(Exception):
    """The registry has no study of that id (a 404 of /studies/{nctId})."""


def _retry_after(response: httpx.Response) -> float | None:
    """The seconds a 429 or 503 asks to wait (Retry-After in seconds), if it says."""
    asked = response.headers.get("Retry-After", "").strip()
    return float(asked) if asked.isdigit() else None


class TrialsClient:
    """An async ClinicalTrials.gov API v2 client (see the module docstring).

    `retries`: how many times a failed request is tried again (so `retries + 1` requests at
    most); `requests` counts the requests sent, cache hits not included, and `retried` those
    of them sent again. `sleep` waits between tries (tests pass one that only records).
    """

    def __init__(
        self,
        *,
        base_url: str = CTGOV_URL,
        cache: ResponseCache | None = None,
        ttl: float = 21_600,
        timeout: float = 10.0,
        retries: int = 3,
        http: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.cache = cache
        self.ttl = ttl
        self.timeout = timeout
        self.retries = max(0, retries)
        self.requests = 0
        self.retried = 0
        self._sleep = sleep
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(
            timeout=timeout, headers={"Accept": "application/json"}
        )

    async def search(
        self,
        *,
        condition: str | None = None,
        intervention: str | None = None,
        term: str | None = None,
        statuses: Sequence[str] = (),
        location: str | None = None,
        page_size: int = 20,
        page_token: str | None = None,
        count_total: bool = False,
    ) -> TrialPage:
        """One page of studies matching every filter given."""
        params = search_params(
            condition=condition,
            intervention=intervention,
            term=term,
            statuses=statuses,
            location=location,
            page_size=page_size,
            page_token=page_token,
            count_total=count_total,
        )
        return await self._read("/studies", params, parse_page)

    async def search_all(self, *, limit: int = 100, **filters: Any) -> list[Trial]:
        """Up to `limit` studies, following nextPageToken from page to page."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        filters.setdefault("page_size", min(limit, 100))
        found: list[Trial] = []
        seen_tokens: set[str] = set()
        while len(found) < limit:
            page = await self.search(**filters)
            found.extend(page.trials)
            token = page.next_token
            if token is None or not page.trials or token in seen_tokens:
                break  # the last page (a token seen before would loop for ever)
            seen_tokens.add(token)
            filters["page_token"] = token
        return found[:limit]

    async def get(self, nct_id: str) -> Trial | None:
        """One study by its NCT id; None when the registry has no such study."""
        wanted = check_nct_id(nct_id)
        try:
            return await self._read(f"/studies/{wanted}", {"format": "json"}, parse_study)
        except _NotFound:
            return None

    async def aclose(self) -> None:
        """Close the HTTP client when this client made it."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> TrialsClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    # --- the wire ---------------------------------------------------------------------------

    def cache_key(self, path: str, params: Mapping[str, str]) -> str:
        """What a request is cached under: method, URL and sorted parameters."""
        return f"GET {self.base_url}{path}?{urlencode(sorted(params.items()))}"

    async def _read(self, path: str, params: dict[str, str], read: Callable[[Any], T]) -> T:
        """`read` of a GET's JSON, from the cache when fresh; a 404 of one study is _NotFound.
        Only an answer that reads well is cached; a cached one that does not is fetched anew."""
        key = self.cache_key(path, params)
        cached = await self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            with contextlib.suppress(ValueError, SourceError):
                return read(json.loads(cached))
        response = await self._send(path, params)
        if response.status_code == 404 and path != "/studies":
            raise _NotFound
        if response.status_code != 200:
            raise SourceError(SERVICE, _error_reason(response))
        try:
            body = response.json()
        except ValueError:
            raise SourceError(SERVICE, "malformed answer: not JSON") from None
        result = read(body)
        if self.cache is not None:
            await self.cache.put(key, response.text, self.ttl)
        return result

    async def _send(self, path: str, params: dict[str, str]) -> httpx.Response:
        """A GET, tried again on 429, 5xx, timeouts and broken connections."""
        failure, wait = "", 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                self.retried += 1
                await self._sleep(min(wait, MAX_WAIT))
            self.requests += 1
            wait = BACKOFF * 2**attempt
            try:
                response = await self._http.get(
                    self.base_url + path, params=params, timeout=self.timeout
                )
            except httpx.TimeoutException:
                failure = "timed out"
                continue
            except httpx.ConnectError:
                failure = "cannot connect"
                continue
            except httpx.RequestError as exc:  # the connection broke, a body undecodable
                failure = f"request failed ({type(exc).__name__})"
                continue
            if response.status_code not in RETRY_STATUSES:
                return response
            failure = f"HTTP {response.status_code}"
            asked = _retry_after(response)
            if asked is not None:
                wait = max(wait, asked)
        raise SourceUnavailable(SERVICE, f"{failure} after {self.retries + 1} tries")
