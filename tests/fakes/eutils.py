"""A fake NCBI E-utilities server on 127.0.0.1 that serves recorded real answers.

The real client (graphs/research/pubmed.py) runs against it unchanged: pass
``base_url=fake.url``. It serves ``esearch.fcgi``, ``esummary.fcgi``, ``efetch.fcgi`` and
``espell.fcgi`` (GET or POST) from the recorded responses in ``tests/data/pubmed/``:

- ``esearch``: the file scripted for the term (``fake.search("metformin", "esearch1.xml")``);
  with ``rettype=count`` the same file's ``<Count>`` alone, or the count scripted for the term
  and the year of ``mindate`` (``fake.count("metformin", {2023: 12})``). An unscripted term gets
  the recorded no-hits answer (``esearch8.xml``) with the term in its ``PhraseNotFound``.
- ``esummary`` / ``efetch``: the recorded DocSums / articles of the ids asked for, in the order
  asked, picked out of ``esummary1.xml`` / ``pubmed*.xml`` (ids it does not hold are left out,
  as the service does), unless a file is scripted for those ids (``fake.fetch_file(...)``).
- ``espell``: ``espell.xml`` for the term scripted (``fake.spell("biopythooon", "espell.xml")``),
  else an answer with no correction.

Tests script failures for the next requests (``fail_next(429, 500)``, ``hang_next(2)``, any
body with ``answer_next(body, status)``), set a ``latency`` for every answer, and read back
every request in ``requests`` (path, method and parameters).
"""

from __future__ import annotations

import asyncio
import copy
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import Any
from xml.sax.saxutils import escape

from aiohttp import web
from lxml import etree

LOOPBACK = "127.0.0.1"
DATA = Path(__file__).resolve().parent.parent / "data" / "pubmed"
XML = "text/xml"
ENDPOINTS = ("esearch.fcgi", "esummary.fcgi", "efetch.fcgi", "espell.fcgi")
# What the service answers when it is over its rate (an HTTP 429 with a JSON body).
RATE_LIMITED = '{"error":"API rate limit exceeded","api-key":"127.0.0.1","count":"4","limit":"3"}\n'
SERVER_ERROR = "<html><body><h1>500 Internal Server Error</h1></body></html>"


def recorded(name: str) -> str:
    """A recorded response of tests/data/pubmed, as the service sent it."""
    return (DATA / name).read_text(encoding="utf-8")


def _parse(text: str) -> etree._Element:
    return etree.fromstring(text.encode("utf-8"), etree.XMLParser(load_dtd=False, no_network=True))


def _head(text: str) -> str:
    """The XML declaration and DOCTYPE of a recorded file, to serve pieces of it as it would."""
    return text[: text.index(">", text.index("<!DOCTYPE")) + 1] + "\n"


class FakeEutils:
    """Scripted E-utilities over HTTP, answering from the recorded files."""

    def __init__(self, data: Path = DATA) -> None:
        self.data = data
        self.url = ""  # "http://127.0.0.1:PORT/entrez/eutils" once started
        self.requests: list[dict[str, Any]] = []  # {"path", "method", "params"} in order
        self.latency = 0.0  # seconds before every answer
        self._searches: dict[str, str] = {}  # term -> file
        self._counts: dict[tuple[str, int], int] = {}  # (term, year) -> count
        self._spellings: dict[str, str] = {}  # term -> file
        self._id_files: dict[tuple[str, str], str] = {}  # (endpoint, "id,id") -> file
        self._next: deque[tuple[int, str, str] | None] = deque()  # scripted answers; None hangs
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._articles, self._article_head = self._index(
            "pubmed*.xml", "PubmedArticle", "MedlineCitation/PMID"
        )
        self._docsums, self._docsum_head = self._index("esummary*.xml", "DocSum", "Id")

    def _index(self, pattern: str, tag: str, id_path: str) -> tuple[dict[str, Any], str]:
        """Every recorded record of `tag` by its id, and a file head to serve them under."""
        records: dict[str, Any] = {}
        head = ""
        for path in sorted(self.data.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            head = head or _head(text)
            for record in _parse(text).iter(tag):
                pmid = record.findtext(id_path)
                records.setdefault((pmid or "").strip(), record)
        return records, head

    # ---------------------------------------------------------------- scripting

    def search(self, term: str, file: str) -> None:
        """esearch for `term` answers the recorded `file`."""
        self._searches[term] = file

    def count(self, term: str, by_year: dict[int, int]) -> None:
        """A count-only esearch for `term` within one year answers that year's count."""
        for year, count in by_year.items():
            self._counts[(term, year)] = count

    def spell(self, term: str, file: str) -> None:
        self._spellings[term] = file

    def fetch_file(self, endpoint: str, ids: list[str], file: str) -> None:
        """`endpoint` ("efetch.fcgi" or "esummary.fcgi") for exactly `ids` answers `file`."""
        self._id_files[(endpoint, ",".join(ids))] = file

    def fail_next(self, *statuses: int) -> None:
        """The next requests answer these statuses (429 with NCBI's JSON body, 5xx a page)."""
        for status in statuses:
            body = RATE_LIMITED if status == 429 else SERVER_ERROR
            self._next.append((status, body, "application/json" if status == 429 else "text/html"))

    def answer_next(self, body: str, status: int = 200, content_type: str = XML) -> None:
        """The next request answers this body (an error body, a malformed answer)."""
        self._next.append((status, body, content_type))

    def hang_next(self, times: int = 1) -> None:
        """The next `times` requests get no answer until the server stops (a timeout)."""
        self._next.extend([None] * times)

    def requests_to(self, endpoint: str) -> list[dict[str, str]]:
        """The parameters of every request to `endpoint`, in order."""
        return [r["params"] for r in self.requests if r["path"] == endpoint]

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        app = web.Application()
        for endpoint in ENDPOINTS:
            app.router.add_route("*", f"/entrez/eutils/{endpoint}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://{LOOPBACK}:{port}/entrez/eutils"

    async def stop(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeEutils:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ---------------------------------------------------------------- answers

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        params = dict(request.query)
        if request.method == "POST":
            params |= dict(await request.post())
        endpoint = request.path.rsplit("/", 1)[-1]
        self.requests.append({"path": endpoint, "method": request.method, "params": params})
        if self.latency:
            await asyncio.sleep(self.latency)
        if self._next:
            scripted = self._next.popleft()
            if scripted is None:
                await self._release.wait()
                return web.Response(status=503)
            status, body, content_type = scripted
            return web.Response(status=status, text=body, content_type=content_type)
        answer = {
            "esearch.fcgi": self._esearch,
            "esummary.fcgi": self._esummary,
            "efetch.fcgi": self._efetch,
            "espell.fcgi": self._espell,
        }[endpoint]
        return web.Response(text=answer(params), content_type=XML)

    def _esearch(self, params: dict[str, str]) -> str:
        term = params.get("term", "")
        if params.get("rettype") == "count":
            return self._count(term, params)
        if term in self._searches:
            return recorded(self._searches[term])
        return recorded("esearch8.xml").replace("abcXYZ", escape(term))

    def _count(self, term: str, params: dict[str, str]) -> str:
        year = params.get("mindate", "")[:4]
        scripted = self._counts.get((term, int(year))) if year.isdigit() else None
        if scripted is None:
            file = self._searches.get(term, "esearch8.xml")
            scripted = int(_parse(recorded(file)).findtext("Count") or 0)
        head = _head(recorded("esearch1.xml"))
        return f"{head}<eSearchResult><Count>{scripted}</Count></eSearchResult>\n"

    def _esummary(self, params: dict[str, str]) -> str:
        ids = params.get("id", "")
        if ("esummary.fcgi", ids) in self._id_files:
            return recorded(self._id_files[("esummary.fcgi", ids)])
        return self._pick(ids, self._docsums, self._docsum_head, "eSummaryResult")

    def _efetch(self, params: dict[str, str]) -> str:
        ids = params.get("id", "")
        if ("efetch.fcgi", ids) in self._id_files:
            return recorded(self._id_files[("efetch.fcgi", ids)])
        return self._pick(ids, self._articles, self._article_head, "PubmedArticleSet")

    @staticmethod
    def _pick(ids: str, records: dict[str, Any], head: str, root_tag: str) -> str:
        root = etree.Element(root_tag)
        for pmid in ids.split(","):
            if pmid.strip() in records:
                root.append(copy.deepcopy(records[pmid.strip()]))
        return head + etree.tostring(root, encoding="unicode") + "\n"

    def _espell(self, params: dict[str, str]) -> str:
        term = params.get("term", "")
        if term in self._spellings:
            return recorded(self._spellings[term])
        return (
            '<?xml version="1.0"?>\n<eSpellResult><Database>pubmed</Database>'
            f"<Query>{escape(term)}</Query><CorrectedQuery></CorrectedQuery>"
            "<SpelledQuery/><ERROR/></eSpellResult>\n"
        )
