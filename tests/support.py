"""Constants shared by tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)  # the fixed "message time" of test conversations
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
