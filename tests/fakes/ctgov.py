"""A fake ClinicalTrials.gov API v2 on 127.0.0.1 that speaks the real wire format.

The real client (graphs/research/trials.py) runs against it unchanged: pass
``base_url=fake.url`` ("http://127.0.0.1:PORT/api/v2"). It serves ``GET /api/v2/studies`` and
``GET /api/v2/studies/{nctId}`` from the hand-written studies in ``tests/data/ctgov/studies/``
(see the README there), or from the studies a test passes. Searching is the real API's in
spirit: every word of ``query.cond`` (conditions, keywords, titles), ``query.intr``
(interventions and their other names), ``query.term`` (anywhere in the study) and
``query.locn`` (facility, city, state, country) must occur, case-insensitively;
``filter.overallStatus`` takes a comma- or pipe-separated list; pages are ``pageSize`` long
with an opaque ``nextPageToken`` valid for the same query only; ``countTotal=true`` adds
``totalCount``. A parameter it does not know, a bad value or a token it did not issue is a 400
with a plain-text message, like the real service.

Tests script 429/5xx answers, error bodies, malformed JSON and answers slower than the client's
timeout, and read back every request (path and parameters) in ``requests``. A sync test serves
from a background thread: ``with FakeCtGov().run_in_thread() as fake: ...``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from tests.support import WAIT

LOOPBACK = "127.0.0.1"
STUDIES_DIR = Path(__file__).resolve().parent.parent / "data" / "ctgov" / "studies"
DEFAULT_PAGE_SIZE = 10  # the real API's default
MAX_PAGE_SIZE = 1000
KNOWN_PARAMS = frozenset(
    {
        "query.cond",
        "query.intr",
        "query.term",
        "query.locn",
        "filter.overallStatus",
        "pageSize",
        "pageToken",
        "countTotal",
        "format",
    }
)
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
NCT_ID = re.compile(r"NCT\d{8}")


def load_studies(folder: Path = STUDIES_DIR) -> list[dict[str, Any]]:
    """The fixture studies, in NCT id order."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("NCT*.json"))]


def _protocol(study: dict[str, Any]) -> dict[str, Any]:
    return study.get("protocolSection", {})


def nct_of(study: dict[str, Any]) -> str:
    return _protocol(study)["identificationModule"]["nctId"]


def _texts(study: dict[str, Any], area: str) -> str:
    """The text a search area looks in, lower-cased."""
    p = _protocol(study)
    ident = p.get("identificationModule", {})
    titles = [ident.get("briefTitle", ""), ident.get("officialTitle", ""), ident.get("acronym", "")]
    if area == "query.cond":
        module = p.get("conditionsModule", {})
        parts = [*module.get("conditions", []), *module.get("keywords", []), *titles]
    elif area == "query.intr":
        parts = []
        for item in p.get("armsInterventionsModule", {}).get("interventions", []):
            parts += [item.get("name", ""), *item.get("otherNames", [])]
    elif area == "query.locn":
        parts = []
        for place in p.get("contactsLocationsModule", {}).get("locations", []):
            parts += [place.get(k, "") for k in ("facility", "city", "state", "country")]
    else:  # query.term: anywhere
        return json.dumps(study, ensure_ascii=False).lower()
    return " | ".join(parts).lower()


def matches(study: dict[str, Any], area: str, query: str) -> bool:
    """Every word of the query occurs in the area's text (case-insensitive)."""
    text = _texts(study, area)
    return all(word in text for word in query.lower().split())


class BadRequest(Exception):
    """A 400 with the service's plain-text message."""


class FakeCtGov:
    """A scripted ClinicalTrials.gov API v2 for tests of the real client."""

    def __init__(self, studies: Iterable[dict[str, Any]] | None = None) -> None:
        self.studies = [copy.deepcopy(s) for s in (load_studies() if studies is None else studies)]
        self.url = ""  # "http://127.0.0.1:PORT/api/v2" once started
        # Every request in order: {"path", "params" (name -> value)}.
        self.requests: list[dict[str, Any]] = []
        self.latency = 0.0  # seconds every answer takes (a benchmark's set delay)
        self._lock = threading.Lock()  # scripting happens on the test's thread in thread mode
        self._scripted: deque[tuple[str, Any]] = deque()  # the next answers' scripts, in order
        self._tokens: dict[str, tuple[tuple[tuple[str, str], ...], int]] = {}
        self._token_ids = itertools.count(1)
        self._runner: web.AppRunner | None = None

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Serve on an ephemeral port of 127.0.0.1 and set ``url``."""
        app = web.Application()
        app.router.add_get("/api/v2/studies", self._handle_search)
        app.router.add_get("/api/v2/studies/{nct}", self._handle_study)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://{LOOPBACK}:{port}/api/v2"

    async def stop(self) -> None:
        """Stop serving; later connections are refused."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeCtGov:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[FakeCtGov]:
        """Serve from a background thread on its own event loop, for blocking callers."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the test's thread below
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop())
                loop.close()

        thread = threading.Thread(target=serve, name="fake-ctgov", daemon=True)
        thread.start()
        if not ready.wait(WAIT):
            raise RuntimeError("the fake ClinicalTrials.gov server did not start in time")
        if failure:
            thread.join()
            raise failure[0]
        try:
            yield self
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(WAIT)

    # ---------------------------------------------------------------- scripting

    def fail_next(self, status: int, count: int = 1, retry_after: int | None = None) -> None:
        """Answer the next ``count`` requests with HTTP ``status`` (429, 500, 503, ...)."""
        with self._lock:
            self._scripted.extend([("fail", (status, retry_after))] * count)

    def error_next(
        self, status: int = 400, body: str = "", content_type: str = "text/plain"
    ) -> None:
        """Answer the next request with an error body of the service's own."""
        with self._lock:
            self._scripted.append(("error", (status, body, content_type)))

    def malformed_next(self) -> None:
        """Answer the next request with 200 and a body that is not valid JSON."""
        with self._lock:
            self._scripted.append(("malformed", None))

    def stall_next(self, seconds: float, count: int = 1) -> None:
        """Answer the next ``count`` requests only after ``seconds`` (past a client's timeout)."""
        with self._lock:
            self._scripted.extend([("stall", seconds)] * count)

    def search_requests(self) -> list[dict[str, str]]:
        """The parameters of every /studies request received, in order."""
        return [r["params"] for r in self.requests if r["path"] == "/api/v2/studies"]

    # ---------------------------------------------------------------- handlers

    async def _receive(self, request: web.Request) -> web.Response | None:
        """Record the request, wait the latency, then play its script: an answer or None."""
        self.requests.append({"path": request.path, "params": dict(request.query)})
        with self._lock:
            kind, detail = self._scripted.popleft() if self._scripted else ("", None)
        if self.latency:
            await asyncio.sleep(self.latency)
        if kind == "stall":
            await asyncio.sleep(detail)
        elif kind == "fail":
            status, retry_after = detail
            headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
            return web.Response(status=status, text=f"Scripted failure {status}", headers=headers)
        elif kind == "error":
            status, body, content_type = detail
            return web.Response(status=status, text=body, content_type=content_type)
        elif kind == "malformed":
            return web.Response(
                text='{"studies": [{"protocolSection": ', content_type="application/json"
            )
        return None

    async def _handle_study(self, request: web.Request) -> web.Response:
        scripted = await self._receive(request)
        if scripted is not None:
            return scripted
        nct = request.match_info["nct"]
        try:
            self._check_params(request.query, {"format"})
        except BadRequest as error:
            return web.Response(status=400, text=str(error))
        if not NCT_ID.fullmatch(nct):
            return web.Response(status=400, text=f"The NCT number {nct} is not valid")
        for study in self.studies:
            if nct_of(study) == nct:
                return web.json_response(study)
        return web.Response(status=404, text=f"Study {nct} not found")

    async def _handle_search(self, request: web.Request) -> web.Response:
        scripted = await self._receive(request)
        if scripted is not None:
            return scripted
        try:
            return web.json_response(self._search(request.query))
        except BadRequest as error:
            return web.Response(status=400, text=str(error))

    def _check_params(self, query: Any, allowed: Iterable[str]) -> None:
        for name in query:
            if name not in allowed:
                raise BadRequest(f"Unknown parameter: {name}")
        if query.get("format", "json") != "json":
            raise BadRequest("format: only json is served by this fake")

    def _search(self, query: Any) -> dict[str, Any]:
        """The /studies answer for the parameters, or BadRequest."""
        self._check_params(query, KNOWN_PARAMS)
        found = self._filtered(query)
        size = self._page_size(query.get("pageSize"))
        # A token stands for the same search further on (asking for the count may change)
        signature = tuple(
            sorted((k, v) for k, v in query.items() if k not in ("pageToken", "countTotal"))
        )
        start = 0
        token = query.get("pageToken")
        if token is not None:
            issued = self._tokens.get(token)
            if issued is None or issued[0] != signature:
                raise BadRequest("pageToken: not a token of this query")
            start = issued[1]
        answer: dict[str, Any] = {}
        count_total = query.get("countTotal", "false").lower()
        if count_total not in ("true", "false"):
            raise BadRequest("countTotal: true or false")
        if count_total == "true":
            answer["totalCount"] = len(found)
        answer["studies"] = found[start : start + size]
        if start + size < len(found):
            next_token = f"tok{next(self._token_ids):04d}x"
            self._tokens[next_token] = (signature, start + size)
            answer["nextPageToken"] = next_token
        return answer

    def _filtered(self, query: Any) -> list[dict[str, Any]]:
        found = list(self.studies)
        for area in ("query.cond", "query.intr", "query.term", "query.locn"):
            if area in query:
                found = [s for s in found if matches(s, area, query[area])]
        if "filter.overallStatus" in query:
            wanted = {s.strip() for s in re.split(r"[,|]", query["filter.overallStatus"])}
            unknown = sorted(wanted - STATUSES)
            if unknown:
                raise BadRequest(f"filter.overallStatus: unknown value {unknown[0]}")
            found = [
                s
                for s in found
                if _protocol(s).get("statusModule", {}).get("overallStatus") in wanted
            ]
        return found

    @staticmethod
    def _page_size(raw: str | None) -> int:
        if raw is None:
            return DEFAULT_PAGE_SIZE
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE_SIZE:
            raise BadRequest(f"pageSize: between 1 and {MAX_PAGE_SIZE}")
        return int(raw)
