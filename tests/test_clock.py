"""The one clock (clock/__init__.py): the system clock, or for tests the instant INTAKE_TEST_CLOCK
sets, shared with the processes a test starts, slowed so a run stays on its calendar day."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

import clock
from bot.messages import Inbound
from db.models import utcnow

SEOUL = ZoneInfo("Asia/Seoul")
INSTANT = datetime(2026, 11, 29, 23, 50, tzinfo=SEOUL)


def test_unset_it_is_the_system_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(clock.ENV, raising=False)
    assert abs(clock.now() - datetime.now(UTC)) < timedelta(seconds=5)
    assert clock.now(SEOUL).utcoffset() == timedelta(hours=9)


def test_set_it_starts_at_the_instant_and_runs_slowed(monkeypatch: pytest.MonkeyPatch) -> None:
    ten_minutes_ago = time.time() - 600
    monkeypatch.setenv(clock.ENV, clock.setting(INSTANT, anchor=ten_minutes_ago))
    read = clock.now(SEOUL)
    # ten real minutes are ten clock seconds: still 23:50 on the 29th
    assert timedelta(seconds=9) < read - INSTANT < timedelta(seconds=12)
    assert read.date().isoformat() == "2026-11-29"
    assert clock.now().tzinfo == UTC and clock.now() > read


def test_it_never_goes_back_and_readings_stay_distinct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clock.ENV, clock.setting(INSTANT, anchor=time.time() + 3600))
    readings = [clock.now() for _ in range(200)]  # an anchor ahead holds the clock at the instant
    assert readings[0] == INSTANT
    assert all(a < b for a, b in zip(readings, readings[1:], strict=False))


def test_the_records_and_a_message_read_the_same_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clock.ENV, clock.setting(INSTANT))
    assert utcnow().astimezone(SEOUL).date() == INSTANT.date()
    message = Inbound(chat_id=1, kind="text", text="어제 맞았어요")
    assert message.at.astimezone(SEOUL).replace(second=0, microsecond=0) == INSTANT


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("2026-11-29 23:50", "UTC offset"),
        ("tomorrow", "not an ISO 8601 instant"),
        ("2026-11-29T23:50:00+09:00@soon", "not a Unix time"),
    ],
)
def test_a_wrong_setting_says_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    monkeypatch.setenv(clock.ENV, value)
    with pytest.raises(ValueError, match=says):
        clock.now()


@pytest.mark.slow
def test_a_process_started_with_the_setting_shares_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    setting = clock.setting(INSTANT, anchor=time.time() - 120)
    monkeypatch.setenv(clock.ENV, setting)
    out = subprocess.run(
        [sys.executable, "-c", "import clock; print(clock.now().isoformat())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    theirs, ours = datetime.fromisoformat(out.strip()), clock.now()
    assert abs(theirs - ours) < timedelta(seconds=1)
    assert theirs.astimezone(SEOUL).date() == INSTANT.date()
