"""The one clock of the product: every "now" the bot, the records and the channels read.

In production it is the system clock. For tests only, `INTAKE_TEST_CLOCK` sets it:

    INTAKE_TEST_CLOCK=2026-11-29T23:50:00+09:00            starts at that instant in this process
    INTAKE_TEST_CLOCK=2026-11-29T23:50:00+09:00@1764400000  ... as it was at that Unix time, so a
                                                            test and the processes it starts
                                                            share one clock

From its start the test clock runs at a sixtieth of real speed (a real minute is one second): a
run of any length stays on the calendar day it was set to, while timestamps still increase
(records ordered by time keep their order). It never goes back within a process.

This module imports nothing of the project, so every layer may use it (tests/test_layers.py).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import UTC, datetime, timedelta, tzinfo

ENV = "INTAKE_TEST_CLOCK"
RATE = 1 / 60  # test-clock seconds per real second

log = logging.getLogger("clock")
_lock = threading.Lock()
_parsed: tuple[str, datetime, float] | None = None  # (setting, instant, anchor) of the last read
_last: datetime | None = None  # the last test-clock reading: it never goes back


def _setting(raw: str) -> tuple[datetime, float]:
    """(instant, anchor) of a setting; a ValueError names what is wrong."""
    instant_text, _, anchor_text = raw.strip().partition("@")
    try:
        instant = datetime.fromisoformat(instant_text)
    except ValueError:
        raise ValueError(f"{ENV}: not an ISO 8601 instant: {instant_text!r}") from None
    if instant.tzinfo is None:
        raise ValueError(f"{ENV}: the instant needs a UTC offset, e.g. +09:00")
    try:
        anchor = float(anchor_text) if anchor_text else time.time()
    except ValueError:
        raise ValueError(f"{ENV}: not a Unix time after '@': {anchor_text!r}") from None
    log.warning("the clock is set for tests (%s): it starts at %s", ENV, instant.isoformat())
    return instant, anchor


def now(tz: tzinfo = UTC) -> datetime:
    """The current time as an aware datetime in `tz` (UTC by default)."""
    global _parsed, _last
    raw = os.environ.get(ENV)
    if not raw:
        return datetime.now(tz)
    with _lock:
        if _parsed is None or _parsed[0] != raw:
            _parsed = (raw, *_setting(raw))
            _last = None
        _, instant, anchor = _parsed
        reading = instant + timedelta(seconds=max(0.0, time.time() - anchor) * RATE)
        if _last is not None and reading <= _last:
            reading = _last + timedelta(microseconds=1)
        _last = reading
    return reading.astimezone(tz)


def setting(instant: datetime, *, anchor: float | None = None) -> str:
    """The `INTAKE_TEST_CLOCK` value that starts the clock at `instant` (aware), anchored now
    (or at `anchor`), for a test to put in its environment and its child processes'."""
    if instant.tzinfo is None:
        raise ValueError("the instant needs a time zone")
    return f"{instant.isoformat()}@{time.time() if anchor is None else anchor:.6f}"
