"""Constants shared by tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)  # the fixed "message time" of test conversations
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
