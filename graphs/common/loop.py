"""Route functions run on the event loop (shared by the graphs)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any


def on_loop(route: Callable[[Any], Any]) -> Callable[[Any], Awaitable[Any]]:
    """A pure route run on the event loop: LangGraph runs a plain function of an async graph in
    a worker thread, a hop that cost more than the route itself (its Literal is kept)."""

    @functools.wraps(route)
    async def run(state: Any) -> Any:
        return route(state)

    return run
