"""Constants shared by tests."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)  # the fixed "message time" of test conversations
# The most a test waits for an event (a process printed it is ready, a server accepts
# connections, a reply was sent) before it fails. Tests wait for the event itself, so this only
# bounds a hang: a slow or loaded machine makes the suite slower, never red. INTAKE_TEST_WAIT
# (seconds) overrides it.
WAIT = float(os.environ.get("INTAKE_TEST_WAIT") or 180)
# The limit for a command that builds the whole knowledge index (about 40 s of CPU by itself).
BUILD_WAIT = 4 * WAIT
# The public data the tests read, copied from ../shared/data with its licences (a clone alone
# passes its tests): Telegram payloads, the Synthea patients, the first 300 MedQuAD answers.
SHARED_DATA = Path(__file__).resolve().parent / "data" / "shared"
# ../shared/data itself, for benchmarks only (MTS-Dialog is not copied).
SHARED_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def confusions(results: list[tuple[dict[str, str], Any]], key: str) -> str:
    """One line per labelled case whose top classification misses `key` ("sub_type" or
    "case_type"): wanted, got, the ranked candidates and the text."""
    lines = []
    for case, result in results:
        got = getattr(result.top, key) if result.top else None
        if got != case[key]:
            ranked = ", ".join(f"{c.sub_type}={c.score:.2f}" for c in result.candidates)
            lines.append(f"  want {case[key]:<20} got {got!s:<20} [{ranked}] {case['text']}")
    return "\n".join(lines)
