"""Benchmark: one research report against the fake PubMed and ClinicalTrials.gov servers.

    .venv/bin/python bench/research.py [--latency 0.2] [--drug metformin] [--api-key]

The real clients (graphs/research/pubmed.py, trials.py) over HTTP against the tests' fake
E-utilities and ClinicalTrials.gov servers (tests/fakes/eutils.py, ctgov.py; recorded PubMed
answers and the API v2 fixtures in tests/data), each answering after `--latency` seconds.
Prints, for an English and a Korean question: requests per report (PubMed, ClinicalTrials.gov),
the time to the report next to the sequential sum of the same requests' delays (what asking
one after another would cost at least), and, asked again, the requests sent and the cache's
hit rate. PubMed's limit of 3 requests a second (10 with `--api-key`) holds throughout.
Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import Settings  # noqa: E402
from bot.research import build_sources  # noqa: E402
from graphs.research.agent import research  # noqa: E402
from graphs.research.report import subject_of  # noqa: E402
from graphs.research.types import MemoryCache  # noqa: E402
from knowledge.loader import default_knowledge  # noqa: E402
from tests.fakes.ctgov import FakeCtGov  # noqa: E402
from tests.fakes.eutils import FakeEutils  # noqa: E402

TOP = ["41282813", "41148224", "41011574", "40959146", "40937394"]


async def one(drug: str, lang: str, latency: float, api_key: bool) -> list[str]:
    kn = default_knowledge()
    async with FakeEutils() as eutils, FakeCtGov() as ctgov:
        eutils.latency = ctgov.latency = latency
        term = subject_of(drug).english
        eutils.search(term, "esearch1.xml")
        eutils.fetch_file("efetch.fcgi", TOP, "pubmed1.xml")
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(
                intake_data_dir=Path(tmp),
                intake_pubmed_url=eutils.url,
                intake_ctgov_url=ctgov.url,
                ncbi_api_key="bench-key" if api_key else None,
                _env_file=None,
            )
            cache = MemoryCache()
            sources = build_sources(settings, cache)
            try:
                start = time.perf_counter()
                await research(subject_of(drug), lang, sources, kn)
                took = time.perf_counter() - start
                pubmed, trials = len(eutils.requests), len(ctgov.requests)
                cache.hits = cache.misses = 0
                start = time.perf_counter()
                await research(subject_of(drug), lang, sources, kn)
                again = time.perf_counter() - start
                sent_again = len(eutils.requests) + len(ctgov.requests) - pubmed - trials
                rate = cache.hits / max(1, cache.hits + cache.misses)
            finally:
                await sources.aclose()
    sequential = (pubmed + trials) * latency
    return [
        f"{drug} ({lang}): requests {pubmed + trials} (PubMed {pubmed}, "
        f"ClinicalTrials.gov {trials})",
        f"  time to the report {took * 1000:8.0f} ms   sequential sum of the requests' delays "
        f"{sequential * 1000:6.0f} ms   ratio {took / sequential if sequential else 0:.2f}",
        f"  asked again: {sent_again} requests sent, cache hit rate {rate:.0%}, "
        f"{again * 1000:.0f} ms",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--drug", default="metformin")
    parser.add_argument("--api-key", action="store_true", help="NCBI's 10 requests a second")
    args = parser.parse_args()
    limit = "10/s (API key)" if args.api_key else "3/s (no API key)"
    print(f"latency {args.latency}s per request, PubMed limit {limit}")
    for drug, lang in ((args.drug, "en"), ("메트포르민", "ko")):
        for line in await one(drug, lang, args.latency, args.api_key):
            print(line)


if __name__ == "__main__":
    asyncio.run(main())
