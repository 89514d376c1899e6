"""What model calls cost, summed per turn.

The turn opens a meter (`metered`), the model client charges each call's tokens to the meter
of the turn it runs in (`charge`), and the turn's one write adds them to its session. The
meter is a context variable: the graph's nodes run in tasks that inherit the turn's context,
so calls of chats handled at the same time never mix. The meter also holds the turn's
deadline (`INTAKE_LLM_BUDGET` from the turn's start): every model call of the turn, whichever
graph or brain makes it, ends by then (`turn_deadline`), and whether a model read danger in
the turn's message (`flag_danger`).
"""

from __future__ import annotations

import asyncio
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
    deadline: float | None = None  # event-loop time by which the turn's model calls end
    # A model's reading of the turn's message found someone in danger now (the rules' check,
    # which runs first, may not have): the turn answers with the safety reply after all.
    danger_read: bool = False


_CURRENT: ContextVar[Meter | None] = ContextVar("intake_llm_meter", default=None)


@contextmanager
def metered(budget: float | None = None) -> Iterator[Meter]:
    """A fresh meter for the calls made inside the block (and the tasks it starts), which
    must end within `budget` seconds (no bound without one)."""
    deadline = None if budget is None else asyncio.get_running_loop().time() + budget
    meter = Meter(deadline=deadline)
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


def flag_danger() -> None:
    """A model read the running turn's message as danger now (nothing outside a turn)."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.danger_read = True


def turn_deadline() -> float | None:
    """The running turn's deadline for model calls (None outside a turn or without a budget)."""
    meter = _CURRENT.get()
    return meter.deadline if meter is not None else None
