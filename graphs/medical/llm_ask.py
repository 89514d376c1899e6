"""One model call of the medical graph, within the run's budget, or None for the rules.

Every call is skipped when `ctx.llm` is unset or `ctx.llm_left()` is 0, bounded by what is left
otherwise, and any failure (LLMFailure, the budget running out) is logged at WARNING with its
reason only and answered with None: the caller then takes the rules' way. The person's words
go in `user`; `system` holds only our instructions and the corpus's passages.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TypeVar

from pydantic import BaseModel

from graphs.common.context import Context
from graphs.medical.evidence import Passage

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
PASSAGES_SENT = 5  # the best passages the model sees (the rules answer from the first three)


async def ask(
    ctx: Context,
    task: str,
    schema: type[T],
    *,
    system: str,
    user: str,
    temperature: float = 0.0,
) -> T | None:
    """The model's answer of `schema`, or None (logged) when it gave nothing in time."""
    left = ctx.llm_left()
    if ctx.llm is None or left <= 0:
        if ctx.llm is not None:
            log.warning("LLM %s skipped (no budget left); the rules take this call", task)
        return None
    # Imported only in LLM mode: the openai package costs half a second of every start-up.
    from graphs.common.llm import LLMFailure

    try:
        async with asyncio.timeout(left):
            result, _ = await ctx.llm.structured(
                task, schema, system=system, user=user, timeout=left, temperature=temperature
            )
    except LLMFailure:  # the client logged its reason
        return None
    except TimeoutError:
        ctx.llm.calls["budget"] += 1
        log.warning("LLM %s: over the run's budget; the rules take this call", task)
        return None
    return result


def passage_ids(passages: list[Passage]) -> dict[str, Passage]:
    """Short ids the model cites (P1..Pn) for the passages sent, in their order."""
    return {f"P{i}": p for i, p in enumerate(passages[:PASSAGES_SENT], start=1)}


def passages_block(ids: dict[str, Passage]) -> str:
    """The passages as the model reads them: its short id, title and text."""
    return "\n\n".join(f"[{pid}] {p.title}\n{p.text}" for pid, p in ids.items())
