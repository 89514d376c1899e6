"""The research assistant end to end: the real PubMed and ClinicalTrials.gov clients over HTTP
against the fake E-utilities and ClinicalTrials.gov servers (tests/fakes/eutils.py,
tests/fakes/ctgov.py), through `intake-bot research|ask` as a process and through Telegram
(the real python-telegram-bot Application against the fake Bot API). Nothing is doubled here:
the clients, the plan, the report and the records database's response cache are the product's.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from bot.config import Settings
from knowledge.loader import Knowledge
from tests.fakes.ctgov import FakeCtGov
from tests.fakes.eutils import FakeEutils
from tests.support import WAIT

INTAKE_BOT = Path(sys.executable).parent / "intake-bot"
TOP = ["41282813", "41148224", "41011574", "40959146", "40937394"]  # esearch1.xml's first ids

pytestmark = pytest.mark.slow  # servers and processes


@pytest.fixture
async def services():
    async with FakeEutils() as eutils, FakeCtGov() as ctgov:
        eutils.search("metformin", "esearch1.xml")
        eutils.count("metformin", {2022: 410, 2023: 452, 2024: 470, 2025: 501, 2026: 398})
        eutils.fetch_file("efetch.fcgi", TOP, "pubmed1.xml")
        yield eutils, ctgov


async def intake_bot(data_dir: Path, *args: str, **env: str) -> tuple[int, str, str]:
    """`intake-bot ARGS` as a process; (exit code, standard output, standard error)."""
    proc = await asyncio.create_subprocess_exec(
        str(INTAKE_BOT),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "INTAKE_DATA_DIR": str(data_dir), "NCBI_EMAIL": "", **env},
    )
    out, err = await asyncio.wait_for(proc.communicate(), WAIT)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_the_cli_reports_from_both_services_and_the_same_question_again_sends_nothing(
    services, tmp_path: Path
) -> None:
    eutils, ctgov = services
    env = {"INTAKE_PUBMED_URL": eutils.url, "INTAKE_CTGOV_URL": ctgov.url}
    code, out, err = await intake_bot(tmp_path, "research", "metformin", "--json", **env)
    assert code == 0, err
    report = json.loads(out)
    assert report["drug"] == "metformin" and report["articles_total"] == 63
    by_year = {int(year): n for year, n in report["counts_by_year"].items()}
    assert by_year == {2022: 410, 2023: 452, 2024: 470, 2025: 501, 2026: 398}
    assert report["articles"] and all(a["pmid"] for a in report["articles"])
    assert report["trials_seen"] >= 1 and report["by_status"]
    assert all(t["nct_id"].startswith("NCT99") for t in report["recruiting"])
    searched = eutils.requests_to("esearch.fcgi")
    assert searched and all(p["tool"] == "intake-bot" for p in searched)
    assert all("metformin" in p["term"] for p in searched)  # only the drug left the machine
    sent = len(eutils.requests) + len(ctgov.requests)
    # the same question again: every response comes from the records database
    code, again, err = await intake_bot(tmp_path, "research", "metformin", "--json", **env)
    assert code == 0, err
    assert json.loads(again)["articles"] == report["articles"]
    assert len(eutils.requests) + len(ctgov.requests) == sent


async def test_the_cli_says_the_services_cannot_be_reached_in_one_line(tmp_path: Path) -> None:
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens
    env = {"INTAKE_PUBMED_URL": f"{closed}/eutils", "INTAKE_CTGOV_URL": f"{closed}/api/v2"}
    code, out, err = await intake_bot(tmp_path, "ask", "메트포르민 최신 연구는?", **env)
    assert (code, out) == (2, "")
    assert "연결할 수 없어요" in err or "can't be reached" in err, err
    assert "Traceback" not in err


async def test_one_service_down_leaves_the_others_part_of_the_report(
    services, tmp_path: Path
) -> None:
    eutils, _ = services
    env = {"INTAKE_PUBMED_URL": eutils.url, "INTAKE_CTGOV_URL": "http://127.0.0.1:9/api/v2"}
    code, out, err = await intake_bot(tmp_path, "research", "metformin", **env)
    assert code == 0, err
    assert "ClinicalTrials.gov could not be reached" in out
    assert "PMID" in out


async def test_research_over_telegram_with_the_real_clients(
    services, tmp_path: Path, knowledge: Knowledge, brain, kb
) -> None:
    from bot.engine import Engine
    from bot.telegram_app import build_application
    from bot.tg_polling import start_polling
    from tests.fakes.bot_api import FakeBotApi

    eutils, ctgov = services
    clinician = 9002
    async with FakeBotApi() as tg:
        settings = Settings(
            intake_data_dir=tmp_path / "data",
            telegram_bot_token=tg.token,
            telegram_api_url=f"{tg.url}/bot",
            clinician_ids=str(clinician),
            intake_pubmed_url=eutils.url,
            intake_ctgov_url=ctgov.url,
            intake_typing_delay=0,
            _env_file=None,
        )
        engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
        app = build_application(settings, engine)
        stop = asyncio.Event()
        try:
            async with app:
                await app.start()
                poller = await start_polling(app, engine, stop)
                try:
                    tg.push_command(clinician, "research", "metformin", language_code="en")
                    await tg.wait_for(lambda: tg.documents(clinician), what="report file")
                    # a question in Korean: the drug searched in English, the report in Korean
                    tg.push_command(clinician, "ask", "메트포르민 최신 연구는?")
                    await tg.wait_for(
                        lambda: len(tg.documents(clinician)) == 2, what="the second report"
                    )
                finally:
                    stop.set()
                    poller.cancel()
                    await asyncio.gather(poller, return_exceptions=True)
                    await app.stop()
        finally:
            await app.bot_data.research.aclose()
            await engine.close()
        shown = [m.get("text") or "" for m in tg.messages(clinician)]
        assert any("PMID" in t for t in shown)
        assert any("NCT99" in t for t in shown)
        document = tg.documents(clinician)[0]
        assert document["content"].decode().count("https://pubmed.ncbi.nlm.nih.gov/") >= 1
        korean = tg.documents(clinician)[1]["content"].decode()
        assert korean.startswith("# 연구 보고서: 메트포르민 (metformin)")
        searched = {p["term"] for p in eutils.requests_to("esearch.fcgi")}
        assert searched == {"metformin"}  # the Korean name went out in English
        assert any(p.get("query.locn") == "Korea" for p in ctgov.search_requests())
