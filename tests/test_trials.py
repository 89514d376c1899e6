"""The ClinicalTrials.gov API v2 client (graphs/research/trials.py) against the fake server
(tests/fakes/ctgov.py) over real HTTP on 127.0.0.1, and its response cache in memory and in the
records database on a real SQLite file.

The fixtures (tests/data/ctgov/studies/, see the README there) are seven studies written for
this project from the documented v2 structure; they exercise identificationModule (nctId,
briefTitle, officialTitle as the fallback title), statusModule (overallStatus, start and
completion dates at day and month precision, a missing completion date), designModule (phases
4, 3, 2+3, 2, NA and none; enrollmentInfo.count, missing and 0), conditionsModule,
armsInterventionsModule (intervention names), sponsorCollaboratorsModule.leadSponsor and
contactsLocationsModule.locations (sites in Korea in three studies, several countries, sites
without a status, a study without locations). Retries and the cache are checked by counting
requests, not by timing.
"""

from __future__ import annotations

import asyncio
import json
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from db.engine import create_records_engine, dispose_records_engine
from db.repo import RecordsCache
from db.repo.research_cache import cache_key
from graphs.research.trials import MAX_QUERY, MAX_WAIT, TrialsClient, parse_page, parse_study
from graphs.research.types import MemoryCache, Site, SourceError, SourceUnavailable, Trial
from tests.fakes.ctgov import STUDIES_DIR, FakeCtGov

KOREA = "Korea, Republic of"


def fixture(nct: str) -> dict:
    return json.loads((STUDIES_DIR / f"{nct}.json").read_text(encoding="utf-8"))


@pytest.fixture
async def fake():
    async with FakeCtGov() as server:
        yield server


class Pauses(list):
    """A sleep that only records how long it was asked to wait: retries are counted, not timed."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client_for(fake: FakeCtGov, **options) -> TrialsClient:
    options.setdefault("sleep", Pauses())
    return TrialsClient(base_url=fake.url, **options)


def ids(trials) -> list[str]:
    return [t.nct_id for t in trials]


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- parsing the v2 structure ------------------------------------------------------------------


def test_a_recruiting_korean_study_is_read_whole() -> None:
    assert parse_study(fixture("NCT99000001")) == Trial(
        nct_id="NCT99000001",
        title="Metformin for Adults With Prediabetes in Korea",
        status="RECRUITING",
        phases=("PHASE4",),
        conditions=("Prediabetic State", "Type 2 Diabetes Mellitus"),
        interventions=("Metformin extended-release", "Lifestyle advice"),
        sponsor="Seoul Metropolitan Diabetes Research Group",
        start_date="2025-03-02",
        completion_date="2028-06",
        enrollment=840,
        countries=(KOREA,),
        sites=(
            Site("Seoul National University Hospital", "Seoul", KOREA, "RECRUITING"),
            Site("Severance Hospital", "Seoul", KOREA, "RECRUITING"),
            Site("Pusan National University Hospital", "Busan", KOREA, "NOT_YET_RECRUITING"),
        ),
    )


@pytest.mark.parametrize(
    ("nct", "status", "phases", "enrollment", "completion", "countries"),
    [
        ("NCT99000002", "COMPLETED", ("PHASE3",), 412, "2023-08-31", ("United States", "Canada")),
        (
            "NCT99000003",
            "ACTIVE_NOT_RECRUITING",
            ("PHASE2", "PHASE3"),
            300,
            "2026-12",
            (KOREA, "Japan"),
        ),
        ("NCT99000004", "RECRUITING", (), 150, "2027-06", ("United Kingdom",)),  # NA
        ("NCT99000005", "COMPLETED", ("PHASE2",), None, None, ()),  # missing modules
        ("NCT99000006", "NOT_YET_RECRUITING", ("PHASE3",), 620, "2029-03", ("Germany", KOREA)),
        ("NCT99000007", "WITHDRAWN", (), 0, "2025-05", ("Sweden",)),  # observational: no phases
    ],
)
def test_each_fixture_is_read(nct, status, phases, enrollment, completion, countries) -> None:
    trial = parse_study(fixture(nct))
    assert (trial.nct_id, trial.status, trial.phases) == (nct, status, phases)
    assert (trial.enrollment, trial.completion_date, trial.countries) == (
        enrollment,
        completion,
        countries,
    )
    assert trial.title and trial.sponsor and trial.conditions and trial.interventions
    assert len(trial.sites) >= len(trial.countries)  # distinct countries, in the sites' order
    assert trial.url == f"https://clinicaltrials.gov/study/{nct}"


def test_a_study_without_a_brief_title_takes_its_official_title() -> None:
    trial = parse_study(fixture("NCT99000005"))
    assert trial.title.startswith("Metformin in Women With Polycystic Ovary Syndrome")
    assert trial.start_date == "2018-02" and trial.sites == ()


def test_an_answer_without_studies_or_ids_is_a_source_error() -> None:
    with pytest.raises(SourceError, match="NCT id"):
        parse_study({"protocolSection": {"statusModule": {"overallStatus": "RECRUITING"}}})
    with pytest.raises(SourceError, match="malformed"):
        parse_page({"studies": {"nctId": "NCT99000001"}})
    with pytest.raises(SourceError, match="malformed"):
        parse_page(["NCT99000001"])
    page = parse_page({"studies": [], "totalCount": 0})
    assert page.trials == () and page.next_token is None and page.total == 0


def test_odd_types_in_a_study_are_left_out_not_raised() -> None:
    study = fixture("NCT99000001")
    protocol = study["protocolSection"]
    protocol["designModule"] = {"phases": "PHASE4", "enrollmentInfo": {"count": "840"}}
    protocol["contactsLocationsModule"]["locations"].append("Seoul")
    protocol["armsInterventionsModule"]["interventions"].append({"type": "DRUG"})
    trial = parse_study(study)
    assert trial.phases == () and trial.enrollment is None
    assert len(trial.sites) == 3 and len(trial.interventions) == 2


# --- bad input: refused before any request ----------------------------------------------------


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"condition": ""},
        {"condition": "   "},
        {"term": "metformin " * 500},  # 5,000 characters
        {"condition": "diabetes", "intervention": ""},
        {"condition": "diabetes", "statuses": ["RECRUITNG"]},
        {"condition": "diabetes", "page_size": 0},
        {"condition": "diabetes", "page_size": 1001},
    ],
)
async def test_bad_searches_raise_value_error_before_any_request(filters) -> None:
    client = TrialsClient(base_url=f"http://127.0.0.1:{closed_port()}/api/v2", retries=0)
    with pytest.raises(ValueError):
        await client.search(**filters)
    with pytest.raises(ValueError):
        await client.search_all(**filters)
    assert client.requests == 0
    await client.aclose()


@pytest.mark.parametrize(
    "bad", ["", "NCT123", "NCT1234567", "NCT123456789", "12345678", "NCTABCDEFGH"]
)
async def test_a_malformed_trial_id_raises_value_error_before_any_request(bad: str) -> None:
    client = TrialsClient(base_url=f"http://127.0.0.1:{closed_port()}/api/v2", retries=0)
    with pytest.raises(ValueError, match="NCT followed by 8 digits"):
        await client.get(bad)
    assert client.requests == 0
    await client.aclose()


async def test_a_long_query_is_refused_with_its_length() -> None:
    client = TrialsClient(base_url=f"http://127.0.0.1:{closed_port()}/api/v2")
    with pytest.raises(ValueError, match=f"5000 characters, at most {MAX_QUERY}"):
        await client.search(term="x" * 5000)
    await client.aclose()


async def test_an_unreachable_service_is_unavailable_after_every_try() -> None:
    client = TrialsClient(
        base_url=f"http://127.0.0.1:{closed_port()}/api/v2", retries=2, sleep=Pauses()
    )
    with pytest.raises(SourceUnavailable) as raised:
        await client.search(condition="diabetes")
    assert raised.value.service == "ctgov" and raised.value.reason == "cannot connect after 3 tries"
    assert "diabetes" not in str(raised.value)  # the reason is free of the query
    assert client.requests == 3
    await client.aclose()


# --- over HTTP against the fake ----------------------------------------------------------------


async def test_a_search_sends_the_documented_parameters(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        page = await client.search(
            condition="type 2 diabetes",
            intervention="metformin",
            term="adults",
            statuses=["recruiting", "NOT_YET_RECRUITING"],
            location="Korea",
            page_size=5,
            count_total=True,
        )
    assert fake.search_requests() == [
        {
            "query.cond": "type 2 diabetes",
            "query.intr": "metformin",
            "query.term": "adults",
            "filter.overallStatus": "RECRUITING,NOT_YET_RECRUITING",
            "query.locn": "Korea",
            "pageSize": "5",
            "countTotal": "true",
            "format": "json",
        }
    ]
    assert ids(page.trials) == ["NCT99000001"] and page.total == 1 and page.next_token is None


async def test_statuses_and_location_filter_the_studies(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        recruiting = await client.search(term="metformin", statuses=["RECRUITING"])
        in_korea = await client.search(condition="diabetes", location=KOREA)
        recruiting_in_korea = await client.search(
            condition="diabetes", location="korea", statuses=["RECRUITING", "NOT_YET_RECRUITING"]
        )
        finished = await client.search(intervention="metformin", statuses=["COMPLETED"])
    assert ids(recruiting.trials) == ["NCT99000001", "NCT99000004"]
    assert ids(in_korea.trials) == ["NCT99000001", "NCT99000003", "NCT99000006"]
    assert all(KOREA in t.countries for t in in_korea.trials)
    assert ids(recruiting_in_korea.trials) == ["NCT99000001", "NCT99000006"]
    assert ids(finished.trials) == ["NCT99000002", "NCT99000005"]


async def test_an_intervention_search_is_narrower_than_a_term_search(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        as_term = await client.search(term="metformin", page_size=20)
        as_drug = await client.search(intervention="metformin", page_size=20)
    # NCT99000006 names metformin only as the background therapy, NCT99000004 only in its title
    assert "NCT99000006" in ids(as_term.trials) and "NCT99000006" not in ids(as_drug.trials)
    assert "NCT99000004" in ids(as_term.trials) and "NCT99000004" not in ids(as_drug.trials)


async def test_search_all_follows_next_page_tokens(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        everything = await client.search_all(condition="diabetes", page_size=2)
        assert client.requests == 3  # 6 studies, 2 a page
        first_three = await client.search_all(condition="diabetes", page_size=2, limit=3)
        assert client.requests == 3 + 2  # stops once it has the limit
    assert ids(everything) == [
        "NCT99000001",
        "NCT99000002",
        "NCT99000003",
        "NCT99000004",
        "NCT99000006",
        "NCT99000007",
    ]
    assert ids(first_three) == ids(everything)[:3]
    sent = fake.search_requests()
    assert "pageToken" not in sent[0]
    assert sent[1]["pageToken"] and sent[2]["pageToken"] != sent[1]["pageToken"]
    assert {r["query.cond"] for r in sent} == {"diabetes"}


async def test_one_page_and_its_token(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        first = await client.search(condition="diabetes", page_size=4, count_total=True)
        second = await client.search(condition="diabetes", page_size=4, page_token=first.next_token)
    assert len(first.trials) == 4 and first.total == 6 and first.next_token
    assert ids(second.trials) == ["NCT99000006", "NCT99000007"] and second.next_token is None
    assert second.total is None  # totalCount only when asked for


async def test_get_reads_one_study_and_none_for_a_missing_id(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        found = await client.get(" nct99000003 ")
        missing = await client.get("NCT99999999")
        assert client.requests == 2
    assert found == parse_study(fixture("NCT99000003"))
    assert missing is None
    assert [r["path"] for r in fake.requests] == [
        "/api/v2/studies/NCT99000003",
        "/api/v2/studies/NCT99999999",
    ]


async def test_429_and_5xx_are_retried_until_an_answer(fake: FakeCtGov) -> None:
    fake.fail_next(503)
    fake.fail_next(429, retry_after=7)
    fake.fail_next(500)
    pauses = Pauses()
    async with client_for(fake, retries=3, sleep=pauses) as client:
        page = await client.search(condition="gestational diabetes")
        assert (client.requests, client.retried) == (4, 3)
    assert ids(page.trials) == ["NCT99000003"]
    assert pauses == [0.5, 7, 2.0]  # doubling back-off; a 429's Retry-After when longer
    assert len(fake.search_requests()) == 4


async def test_a_long_retry_after_is_capped(fake: FakeCtGov) -> None:
    fake.fail_next(429, retry_after=3600)
    pauses = Pauses()
    async with client_for(fake, sleep=pauses) as client:
        assert await client.get("NCT99000001") is not None
    assert pauses == [MAX_WAIT]


async def test_unavailable_after_the_last_retry(fake: FakeCtGov) -> None:
    fake.fail_next(502, count=10)
    async with client_for(fake, retries=2) as client:
        with pytest.raises(SourceUnavailable, match="HTTP 502 after 3 tries"):
            await client.search(condition="diabetes")
        assert client.requests == 3
    assert len(fake.requests) == 3


async def test_a_timeout_is_retried_then_unavailable(fake: FakeCtGov) -> None:
    fake.stall_next(5.0)
    async with client_for(fake, timeout=0.3, retries=1) as client:
        trial = await client.get("NCT99000002")  # the second try answers
        assert trial is not None and client.requests == 2
    fake.stall_next(5.0, count=2)
    async with client_for(fake, timeout=0.3, retries=1) as client:
        with pytest.raises(SourceUnavailable, match="timed out after 2 tries"):
            await client.get("NCT99000002")
        assert client.requests == 2


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        ("Unknown parameter: query.foo", "text/plain", "HTTP 400: Unknown parameter: query.foo"),
        (
            '{"message": "pageToken is not valid"}',
            "application/json",
            "HTTP 400: pageToken is not valid",
        ),
    ],
)
async def test_an_error_body_is_a_source_error_not_retried(
    fake: FakeCtGov, body: str, content_type: str, reason: str
) -> None:
    fake.error_next(400, body, content_type)
    async with client_for(fake) as client:
        with pytest.raises(SourceError) as raised:
            await client.search(condition="diabetes")
        assert client.requests == 1
    assert raised.value.service == "ctgov" and raised.value.reason == reason


async def test_the_fakes_own_400_reaches_the_caller(fake: FakeCtGov) -> None:
    async with client_for(fake) as client:
        with pytest.raises(SourceError, match="pageToken"):
            await client.search(condition="diabetes", page_token="made-up")


async def test_a_malformed_answer_is_a_source_error(fake: FakeCtGov) -> None:
    fake.malformed_next()
    cache = MemoryCache()
    async with client_for(fake, cache=cache) as client:
        with pytest.raises(SourceError, match="not JSON"):
            await client.search(condition="diabetes")
        fake.error_next(200, '{"studies": {"nctId": "NCT99000001"}}', "application/json")
        with pytest.raises(SourceError, match="no list of studies"):
            await client.search(condition="diabetes")
        page = await client.search(condition="diabetes")  # nothing broken was cached
    assert page.trials and client.requests == 3


async def test_a_client_given_its_http_leaves_it_open(fake: FakeCtGov) -> None:
    async with httpx.AsyncClient() as http:
        client = client_for(fake, http=http)
        assert await client.get("NCT99000001") is not None
        await client.aclose()
        assert not http.is_closed


# --- the response cache ------------------------------------------------------------------------


async def test_the_memory_cache_answers_a_repeated_search(fake: FakeCtGov) -> None:
    cache = MemoryCache()
    async with client_for(fake, cache=cache) as client:
        first = await client.search(condition="diabetes", location="Korea")
        again = await client.search(location="Korea", condition="diabetes")
        assert client.requests == 1 and cache.hits == 1
        other = await client.search(condition="diabetes", location="Japan")
        assert client.requests == 2
        trial = await client.get("NCT99000001")
        assert await client.get("NCT99000001") == trial and client.requests == 3
    assert again == first and ids(other.trials) == ["NCT99000003"]
    assert len(fake.requests) == 3


async def test_a_damaged_cache_entry_is_fetched_again(fake: FakeCtGov) -> None:
    cache = MemoryCache()
    async with client_for(fake, cache=cache) as client:
        key = client.cache_key("/studies/NCT99000002", {"format": "json"})
        await cache.put(key, '{"protocolSection": ', 60)
        trial = await client.get("NCT99000002")
        assert trial is not None and client.requests == 1
        assert await client.get("NCT99000002") == trial and client.requests == 1  # stored anew


async def test_an_expired_memory_entry_is_sent_again(fake: FakeCtGov) -> None:
    cache = MemoryCache()
    async with client_for(fake, cache=cache, ttl=0) as client:
        await client.search(condition="diabetes")
        await asyncio.sleep(0.01)  # past the zero time to live
        await client.search(condition="diabetes")
        assert client.requests == 2 and cache.hits == 0


class Clock:
    """A settable now for the records cache."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 1, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def records(tmp_path: Path):
    engine = await create_records_engine(tmp_path)  # SQLite, migrated to the head
    yield engine
    await dispose_records_engine(engine)


async def test_the_records_cache_answers_a_repeated_search(fake: FakeCtGov, records) -> None:
    clock = Clock()
    cache = RecordsCache(records, clock=clock)
    async with client_for(fake, cache=cache, ttl=3600) as client:
        first = await client.search(condition="diabetes", statuses=["RECRUITING"])
        assert await client.search(condition="diabetes", statuses=["RECRUITING"]) == first
        assert client.requests == 1
        clock.now += timedelta(seconds=3599)
        await client.search(condition="diabetes", statuses=["RECRUITING"])
        assert client.requests == 1  # still fresh
        clock.now += timedelta(seconds=2)
        again = await client.search(condition="diabetes", statuses=["RECRUITING"])
        assert client.requests == 2 and again == first  # expired: sent again, stored again
    async with client_for(fake, cache=RecordsCache(records, clock=clock)) as fresh:
        await fresh.search(condition="diabetes", statuses=["RECRUITING"])
        assert fresh.requests == 0  # another client (a restart) on the same records


async def test_the_records_cache_stores_hashes_upserts_and_prunes(records) -> None:
    clock = Clock()
    cache = RecordsCache(records, clock=clock)
    key = "GET https://clinicaltrials.gov/api/v2/studies?query.cond=diabetes"
    assert await cache.get(key) is None
    await cache.put(key, '{"studies": []}', 60)
    await cache.put(key, '{"studies": [1]}', 600)  # replaces, with its new time to live
    await cache.put("other", "{}", 10)
    assert await cache.get(key) == '{"studies": [1]}'
    async with records.connect() as conn:
        stored = (await conn.execute(text("select key from researchresponse"))).scalars().all()
    assert sorted(stored) == sorted([cache_key(key), cache_key("other")])
    assert all(len(k) == 64 and "diabetes" not in k for k in stored)
    clock.now += timedelta(seconds=61)
    assert await cache.get("other") is None
    assert await cache.get(key) == '{"studies": [1]}'
    assert await cache.prune() == 1
    clock.now += timedelta(seconds=600)
    assert await cache.get(key) is None
    assert await cache.prune() == 1
    async with records.connect() as conn:
        left = (await conn.execute(text("select count(*) from researchresponse"))).scalar()
    assert left == 0
