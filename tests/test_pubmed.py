"""The PubMed E-utilities client: real recorded answers (tests/data/pubmed) read into articles,
and the real client over HTTP against the fake E-utilities server on 127.0.0.1
(tests/fakes/eutils.py): the parameters NCBI asks for, the rate limiter, retries, timeouts,
error bodies, the cache and bad input. Rate limits and back-off are counted on an injected
clock, never timed. Tests using the `fake` fixture start a server and are `slow`
(tests/conftest.py); the readers, the limiter and the input checks run without one.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lxml import etree

from graphs.research.pubmed import (
    IDS_PER_REQUEST,
    MAX_TERM_CHARS,
    PubMedClient,
    RateLimiter,
    cache_key,
)
from graphs.research.pubmed_xml import (
    parse_xml,
    read_articles,
    read_search,
    read_spelling,
    read_summaries,
)
from graphs.research.types import AbstractSection, SourceError, SourceUnavailable
from tests.fakes.eutils import FakeEutils

DATA = Path(__file__).resolve().parent / "data" / "pubmed"


def recorded(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


class FakeClock:
    """Time that passes only when the code under test sleeps; every sleep is kept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class ManualCache:
    """A ResponseCache on the test's own clock, keeping the keys it was asked for."""

    def __init__(self) -> None:
        self.now = 0.0
        self.bodies: dict[str, tuple[str, float]] = {}

    async def get(self, key: str) -> str | None:
        found = self.bodies.get(key)
        return found[0] if found and found[1] > self.now else None

    async def put(self, key: str, body: str, ttl: float) -> None:
        self.bodies[key] = (body, self.now + ttl)


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------ the recorded answers


def test_a_search_with_hits_reads_count_ids_and_translation() -> None:
    result = read_search(parse_xml(recorded("esearch1.xml")))
    assert result.count == 63 and len(result.ids) == 20
    assert result.ids[:2] == ("41282813", "41148224") and result.ids[-1] == "37810457"
    assert result.translation == '"biopython"[All Fields]' and result.errors == ()


def test_a_search_without_hits_keeps_its_error_list() -> None:
    result = read_search(parse_xml(recorded("esearch8.xml")))
    assert (result.count, result.ids) == (0, ())
    assert result.errors == ("PhraseNotFound: abcXYZ",)


def test_the_large_search_with_a_history_key_reads_its_hundred_ids() -> None:
    result = read_search(parse_xml(recorded("esearch2.xml")))
    assert result.count == 42249 and len(result.ids) == 100 == len(set(result.ids))
    assert result.translation.endswith("AND 2025/09/27:2025/11/26[Date - Entry]")


def test_summaries_read_journal_year_and_authors_without_abstracts() -> None:
    first, second = read_summaries(parse_xml(recorded("esummary1.xml")))
    assert first.pmid == "11850928"
    assert first.title == "Zirconium granuloma following treatment of rhus dermatitis."
    assert (first.journal, first.year) == ("Arch Dermatol", 1965)
    assert first.authors == ("LoPresti PJ", "Hambrick GW Jr")
    assert first.abstract == () and first.url == "https://pubmed.ncbi.nlm.nih.gov/11850928/"
    assert (second.pmid, second.year, len(second.authors)) == ("11482001", 2001, 3)


def test_a_structured_abstract_keeps_its_labelled_sections_in_order() -> None:
    (article,) = read_articles(parse_xml(recorded("pubmed4.xml")))
    assert article.pmid == "27797938" and article.year == 2016 and article.journal == "Gut"
    assert article.title.startswith("Leucocyte telomere length, genetic variants at the TERT gene")
    assert [s.label for s in article.abstract] == ["OBJECTIVE", "DESIGN", "RESULTS", "CONCLUSIONS"]
    assert "p trend =0.048" not in article.abstract[2].text  # <sub> joins its word
    assert "ptrend=0.048" in article.abstract[2].text
    assert article.doi == "10.1136/gutjnl-2016-312510"
    assert article.authors[:2] == ("Bao Y", "Prescott J") and len(article.authors) == 22


def test_nlm_categories_label_the_sections_and_inline_tags_become_plain_text() -> None:
    (article,) = read_articles(parse_xml(recorded("pubmed5.xml")))
    assert [s.label for s in article.abstract][:2] == ["OBJECTIVES", "METHODS"]
    assert "OR Q3 =4.15" not in article.abstract[2].text and "ORQ3=4.15" in article.abstract[2].text
    text = " ".join(s.text for s in article.abstract)
    assert "(TSH >4.5 mIU/L)" in text and "ptrend <0.01)" in text and "&" not in text


def test_entities_inline_markup_and_mathml_become_plain_words() -> None:
    (article,) = read_articles(parse_xml(recorded("pubmed6.xml")))
    assert article.title.startswith('A "Blood Relationship" Between the Overlooked')
    (section,) = article.abstract
    assert section.label == ""
    assert 'disused "Minimum Lactate Equivalent" (LEmin)' in section.text
    assert "( V.O2max ) 67.6 ± 4.1 ml·kg-1·min-1]" in section.text  # MathML without spaces
    assert "(P < 0.001; ES: 3.54)" in section.text
    assert "mml" not in section.text and "&" not in section.text


def test_a_collective_author_is_listed_by_its_name() -> None:
    (article,) = read_articles(parse_xml(recorded("pubmed7.xml")))
    assert article.authors[0] == "Guo F"
    assert article.authors[-1] == "Canadian Respiratory Research Network"
    assert article.doi == "10.1117/1.JMI.5.2.026002" and article.year == 2018


def test_sets_of_several_articles_with_dois_only_in_the_id_list() -> None:
    first, second = read_articles(parse_xml(recorded("pubmed1.xml")))
    assert (first.pmid, first.year, first.doi, first.abstract) == ("12091962", 1990, None, ())
    assert first.journal == "Soc Justice" and first.authors == ("Olivero JM",)
    assert second.doi == "10.1016/0005-2795(76)90109-4"
    assert second.abstract == (AbstractSection("", second.abstract[0].text),)
    cryo, mri = read_articles(parse_xml(recorded("pubmed2.xml")))
    assert "(P < 0.001)" in cryo.abstract[0].text and cryo.doi == "10.1006/cryo.2001.2328"
    assert mri.authors[-1] == "De Luca F"


def test_a_medline_date_gives_the_year_when_there_is_no_other() -> None:
    body = (
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><Journal>"
        "<JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>"
        "</JournalIssue><Title>J</Title></Journal><ArticleTitle>T</ArticleTitle></Article>"
        "</MedlineCitation></PubmedArticle></PubmedArticleSet>"
    )
    (article,) = read_articles(parse_xml(body))
    assert (article.year, article.journal, article.doi) == (1998, "J", None)


def test_espell_gives_its_correction_or_none_when_there_is_nothing_to_correct() -> None:
    root = parse_xml(recorded("espell.xml"))  # carries an empty <ERROR/>, which is no error
    assert read_spelling(root, "biopythooon") == "biopython"
    assert read_spelling(root, "Biopython") is None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("<eSearchResult><ERROR>Invalid query syntax</ERROR></eSearchResult>", "Invalid query"),
        ('{"error":"API key invalid","api-key":"x"}', "API key invalid"),
        ("<eSummaryResult><ERROR>Invalid uid 0 at position=0</ERROR></eSummaryResult>", "uid"),
        ("<ERROR>Empty id list - nothing todo</ERROR>", "Empty id list"),
        ("<PubmedArticleSet><PubmedArticle>", "malformed answer"),
        ("<html><body>Bad Gateway</body></html>", "unexpected answer"),
    ],
)
def test_error_bodies_and_malformed_answers_raise_source_error(body: str, reason: str) -> None:
    with pytest.raises(SourceError) as caught:
        read_search(parse_xml(body)) if "Summary" not in body else read_summaries(parse_xml(body))
    assert reason in caught.value.reason and caught.value.service == "pubmed"


def test_the_parser_never_expands_an_external_entity(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    body = (
        f'<?xml version="1.0"?><!DOCTYPE eSpellResult [<!ENTITY x SYSTEM "{secret.as_uri()}">]>'
        "<eSpellResult><Query>q</Query><CorrectedQuery>&x;</CorrectedQuery></eSpellResult>"
    )
    root = parse_xml(body)
    assert read_spelling(root, "q") is None
    assert "TOP-SECRET" not in etree.tostring(root, encoding="unicode")


# ------------------------------------------------------------------ limiter and input, no server


@pytest.mark.parametrize(("rate", "calls", "waited"), [(3, 10, 3.0), (10, 10, 0.0), (10, 25, 2.0)])
async def test_the_limiter_lets_at_most_rate_starts_in_any_second(
    rate: int, calls: int, waited: float
) -> None:
    clock = FakeClock()
    limiter = RateLimiter(rate, clock=clock, sleep=clock.sleep)
    starts = []
    for _ in range(calls):
        await limiter.wait()
        starts.append(clock.now)
    assert all(starts[i + rate] - starts[i] >= 1.0 for i in range(len(starts) - rate))
    assert sum(clock.sleeps) == pytest.approx(waited)


async def test_calls_at_once_still_share_the_limit() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def one() -> None:
        await limiter.wait()
        starts.append(clock.now)

    await asyncio.gather(*(one() for _ in range(7)))
    assert starts == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.search(""),
        lambda c: c.search("   \n"),
        lambda c: c.search("metformin " * 500),  # 5,000 characters
        lambda c: c.search("metformin", retmax=-1),
        lambda c: c.search("metformin", sort="newest"),
        lambda c: c.search("metformin", mindate="last year"),
        lambda c: c.count_by_year("metformin", [2023, 99]),
        lambda c: c.count_by_year("", [2023]),
        lambda c: c.fetch(["123", "PMC123"]),
        lambda c: c.summaries("12345"),
        lambda c: c.spell("x" * (MAX_TERM_CHARS + 1)),
    ],
)
async def test_bad_input_raises_value_error_before_any_request(call) -> None:
    client = PubMedClient(base_url=f"http://127.0.0.1:{closed_port()}", retries=0)
    try:
        with pytest.raises(ValueError):
            await call(client)
        assert client.requests == 0
    finally:
        await client.aclose()


async def test_an_unreachable_service_is_source_unavailable_after_each_retry() -> None:
    clock = FakeClock()
    client = PubMedClient(
        base_url=f"http://127.0.0.1:{closed_port()}", retries=2, clock=clock, sleep=clock.sleep
    )
    with pytest.raises(SourceUnavailable) as caught:
        await client.search("metformin")
    await client.aclose()
    assert "cannot connect" in caught.value.reason and "metformin" not in str(caught.value)
    assert (client.requests, client.retried, clock.sleeps) == (3, 2, [0.5, 1.0])


async def test_no_ids_asks_nothing() -> None:
    client = PubMedClient(base_url=f"http://127.0.0.1:{closed_port()}")
    assert await client.fetch([]) == [] and await client.summaries([]) == []
    assert client.requests == 0
    await client.aclose()


def test_the_cache_key_is_sorted_and_holds_no_key_or_email() -> None:
    key = cache_key("esearch.fcgi", {"term": "a b", "db": "pubmed", "api_key": "K", "email": "e"})
    assert key == "pubmed:esearch.fcgi?db=pubmed&term=a+b"


# ------------------------------------------------------------------ over HTTP, the fake server


@pytest.fixture
async def fake() -> AsyncIterator[FakeEutils]:
    async with FakeEutils() as server:
        yield server


def client_for(fake: FakeEutils, **options) -> tuple[PubMedClient, FakeClock]:
    clock = FakeClock()
    options.setdefault("timeout", 5.0)
    return PubMedClient(base_url=fake.url, clock=clock, sleep=clock.sleep, **options), clock


async def test_a_search_sends_what_ncbi_asks_and_reads_the_answer(fake: FakeEutils) -> None:
    fake.search("biopython", "esearch1.xml")
    client, _ = client_for(fake, api_key="KEY", email="staff@example.org")
    result = await client.search("biopython", retmax=5, mindate="2020", sort="pub_date")
    await client.aclose()
    assert result.count == 63 and result.ids[0] == "41282813"
    (params,) = fake.requests_to("esearch.fcgi")
    assert params == {
        "db": "pubmed",
        "term": "biopython",
        "retmax": "5",
        "sort": "pub_date",
        "datetype": "pdat",
        "mindate": "2020",
        "maxdate": "3000",
        "tool": "intake-bot",
        "email": "staff@example.org",
        "api_key": "KEY",
    }


async def test_without_key_or_email_neither_is_sent_and_tool_always_is(fake: FakeEutils) -> None:
    client, _ = client_for(fake, tool="clinic-research")
    result = await client.search("zzqx drug")
    await client.aclose()
    assert result.count == 0 and result.errors == ("PhraseNotFound: zzqx drug",)
    (params,) = fake.requests_to("esearch.fcgi")
    assert params["tool"] == "clinic-research" and "email" not in params
    assert "api_key" not in params and "datetype" not in params


async def test_count_by_year_asks_once_per_year_for_the_count_alone(fake: FakeEutils) -> None:
    fake.count("metformin", {2022: 7, 2023: 12, 2024: 0})
    client, _ = client_for(fake)
    counts = await client.count_by_year("metformin", [2024, 2022, 2023, 2023])
    await client.aclose()
    assert counts == {2022: 7, 2023: 12, 2024: 0} and list(counts) == [2022, 2023, 2024]
    sent = fake.requests_to("esearch.fcgi")
    assert [(p["rettype"], p["mindate"], p["maxdate"], p["datetype"]) for p in sent] == [
        ("count", "2022", "2022", "pdat"),
        ("count", "2023", "2023", "pdat"),
        ("count", "2024", "2024", "pdat"),
    ]


async def test_summaries_and_fetch_over_http_keep_the_order_asked(fake: FakeEutils) -> None:
    client, _ = client_for(fake)
    summaries = await client.summaries(["11482001", "11850928"])
    articles = await client.fetch(["29963580", "27797938", "99999999", "27797938"])
    await client.aclose()
    assert [s.pmid for s in summaries] == ["11482001", "11850928"]
    assert [a.pmid for a in articles] == ["29963580", "27797938"]  # unknown ids left out
    assert articles[1].abstract[0].label == "OBJECTIVE"
    fetch_params = fake.requests_to("efetch.fcgi")[0]
    assert fetch_params["id"] == "29963580,27797938,99999999"
    assert (fetch_params["rettype"], fetch_params["retmode"], fetch_params["db"]) == (
        "abstract",
        "xml",
        "pubmed",
    )


async def test_a_long_id_list_goes_in_batches(fake: FakeEutils) -> None:
    client, _ = client_for(fake)
    ids = [str(10_000_000 + n) for n in range(IDS_PER_REQUEST + 1)] + ["27797938"]
    articles = await client.fetch(ids)
    await client.aclose()
    assert [a.pmid for a in articles] == ["27797938"]
    assert [len(p["id"].split(",")) for p in fake.requests_to("efetch.fcgi")] == [
        IDS_PER_REQUEST,
        2,
    ]


async def test_spell_over_http(fake: FakeEutils) -> None:
    fake.spell("biopythooon", "espell.xml")
    client, _ = client_for(fake)
    assert await client.spell("biopythooon") == "biopython"
    assert await client.spell("metformin") is None
    await client.aclose()
    assert [p["term"] for p in fake.requests_to("espell.fcgi")] == ["biopythooon", "metformin"]


@pytest.mark.parametrize(("api_key", "waited"), [(None, 2.0), ("KEY", 0.0)])
async def test_one_clients_calls_share_the_rate_limit(
    fake: FakeEutils, api_key: str | None, waited: float
) -> None:
    client, clock = client_for(fake, api_key=api_key)
    await client.count_by_year("metformin", range(2015, 2022))  # 7 requests
    await client.spell("metformin")
    await client.summaries(["11850928"])  # 9 in all
    await client.aclose()
    assert len(fake.requests) == client.requests == 9
    assert sum(clock.sleeps) == pytest.approx(waited)  # 3/s: starts at 0,0,0,1,1,1,2,2,2


async def test_429_and_500_are_retried_with_back_off_then_answered(fake: FakeEutils) -> None:
    fake.search("biopython", "esearch1.xml")
    fake.fail_next(429, 500)
    client, clock = client_for(fake)
    result = await client.search("biopython")
    await client.aclose()
    assert result.count == 63
    assert (len(fake.requests), client.requests, client.retried) == (3, 3, 2)
    assert clock.sleeps == [0.5, 1.0]


async def test_failing_after_the_last_retry_is_source_unavailable(fake: FakeEutils) -> None:
    fake.fail_next(503, 429, 500, 502, 500)
    client, clock = client_for(fake, retries=3)
    with pytest.raises(SourceUnavailable) as caught:
        await client.fetch(["27797938"])
    await client.aclose()
    assert caught.value.reason == "HTTP 502 after 4 attempts"
    assert len(fake.requests) == client.requests == 4 and clock.sleeps == [0.5, 1.0, 2.0]


async def test_a_timeout_is_retried_and_then_source_unavailable(fake: FakeEutils) -> None:
    fake.search("biopython", "esearch1.xml")
    fake.hang_next(1)
    client, _ = client_for(fake, timeout=0.3, retries=1)
    assert (await client.search("biopython")).count == 63
    fake.hang_next(2)
    with pytest.raises(SourceUnavailable) as caught:
        await client.search("biopython", retmax=3)
    await client.aclose()
    assert caught.value.reason == "timed out after 2 attempts" and len(fake.requests) == 4


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (200, "<eSearchResult><ERROR>Search Backend failed</ERROR></eSearchResult>", "Backend"),
        (400, '{"error":"API key invalid","api-key":"KEY"}', "API key invalid"),
        (400, "", "HTTP 400"),
        (200, "<eSearchResult><Count>3", "malformed answer"),
    ],
)
async def test_an_error_body_is_source_error_not_retried_not_cached(
    fake: FakeEutils, status: int, body: str, reason: str
) -> None:
    fake.search("biopython", "esearch1.xml")
    fake.answer_next(body, status)
    cache = ManualCache()
    client, _ = client_for(fake, cache=cache)
    with pytest.raises(SourceError) as caught:
        await client.search("biopython")
    assert reason in caught.value.reason and len(fake.requests) == 1 and not cache.bodies
    assert (await client.search("biopython")).count == 63  # asked again, answered
    await client.aclose()
    assert len(fake.requests) == 2


async def test_the_cache_answers_a_repeat_until_it_expires(fake: FakeEutils) -> None:
    cache = ManualCache()
    client, _ = client_for(fake, cache=cache, ttl=60, api_key="KEY", email="e@example.org")
    first = await client.fetch(["30108519"])
    again = await client.fetch(["30108519"])
    assert again == first and client.requests == len(fake.requests) == 1
    (key,) = cache.bodies
    assert "KEY" not in key and "example.org" not in key and "30108519" in key
    cache.now = 61
    assert await client.fetch(["30108519"]) == first
    await client.aclose()
    assert client.requests == len(fake.requests) == 2
