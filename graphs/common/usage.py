"""What model calls cost, summed per turn.

The turn opens a meter (`metered`), the model client charges each call's tokens to the meter
of the turn it runs in (`charge`), and the turn's one write adds them to its session. The
meter is a context variable: the graph's nodes run in tasks that inherit the turn's context,
so calls of chats handled at the same time never mix.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    """Tokens of one call (or of several, added up), as the response's `usage` gives them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass
class Meter:
    """The tokens a turn's model calls cost so far."""

    used: Usage = Usage()
    calls: int = 0


_CURRENT: ContextVar[Meter | None] = ContextVar("intake_llm_meter", default=None)


@contextmanager
def metered() -> Iterator[Meter]:
    """A fresh meter for the calls made inside the block (and the tasks it starts)."""
    meter = Meter()
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def charge(usage: Usage) -> None:
    """Add a call's tokens to the running turn's meter (nothing outside a turn)."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.used += usage
        meter.calls += 1
