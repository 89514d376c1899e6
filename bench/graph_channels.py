"""Benchmark: does the number of checkpointed channels, or routing by conditional edges, cost a
turn much? Measured on bare LangGraph graphs, same run.

    .venv/bin/python bench/graph_channels.py [--turns 300] [--rounds 3]

Four two-node graphs on AsyncSqliteSaver (durability "exit", as the engine runs), each turn an
interrupt resumed: 44 channels (the legal state's count) or 3, routed by a conditional edge (as
the legal graph is) or by a `Command(goto=...)` returned from the node. Prints the median of
the rounds' turn p50 for each, and each against the first (44 channels, conditional edges).
Not a test: nothing is asserted. It is the measurement behind keeping the legal state's keys as
they are (issue 19 asked for fewer channels; the difference is a fraction of a millisecond).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any, TypedDict

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt

KEYS = [f"k{i}" for i in range(44 - 3)]  # plus __start__, __pregel_tasks and the branch ones
Wide = TypedDict("Wide", dict.fromkeys(KEYS, Any), total=False)  # type: ignore[misc]


class Narrow(TypedDict, total=False):
    k0: Any
    k1: Any
    k2: Any


def step(state: dict[str, Any]) -> dict[str, Any]:
    """Wait for the answer, count it and keep it."""
    answer = interrupt({"turn": state.get("k0") or 0})
    return {"k0": (state.get("k0") or 0) + 1, "k1": answer}


def goes_to(state: dict[str, Any]) -> str:
    return "B" if (state.get("k0") or 0) % 2 else "A"


def build(schema: type, command: bool) -> StateGraph:
    graph = StateGraph(schema)
    if command:

        async def node(state: dict[str, Any]) -> Command:
            update = step(state)
            return Command(update=update, goto=goes_to({**state, **update}))

        graph.add_node("A", node, destinations=("A", "B"))
        graph.add_node("B", node, destinations=("A", "B"))
    else:

        async def plain(state: dict[str, Any]) -> dict[str, Any]:
            return step(state)

        async def route(state: dict[str, Any]) -> str:
            return goes_to(state)

        graph.add_node("A", plain)
        graph.add_node("B", plain)
        graph.add_conditional_edges("A", route)
        graph.add_conditional_edges("B", route)
    graph.add_edge(START, "A")
    return graph


async def turn_p50(schema: type, command: bool, turns: int) -> float:
    """Median milliseconds of one resumed turn of one thread."""
    with tempfile.TemporaryDirectory() as tmp:
        async with aiosqlite.connect(f"{tmp}/checkpoints.db") as conn:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            graph = build(schema, command).compile(checkpointer=saver)
            keys = KEYS if schema is Wide else list(Narrow.__annotations__)
            first = {k: ["a value", {"with": "a dict"}] for k in keys} | {"k0": 0}
            config = {"configurable": {"thread_id": "t"}}
            await graph.ainvoke(first, config, durability="exit")
            latencies = []
            for i in range(turns):
                start = time.perf_counter()
                await graph.ainvoke(Command(resume=f"answer {i}"), config, durability="exit")
                latencies.append(time.perf_counter() - start)
    return statistics.median(latencies) * 1000


async def main(turns: int, rounds: int) -> None:
    cases = [
        ("44 channels, conditional edges", Wide, False),
        ("44 channels, Command(goto)", Wide, True),
        ("3 channels, conditional edges", Narrow, False),
        ("3 channels, Command(goto)", Narrow, True),
    ]
    results: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for _ in range(rounds):  # interleaved: this machine's speed drifts from minute to minute
        for name, schema, command in cases:
            results[name].append(await turn_p50(schema, command, turns))
    base = statistics.median(results[cases[0][0]])
    print(f"{turns} turns x {rounds} rounds, median of the rounds' turn p50")
    for name, values in results.items():
        p50 = statistics.median(values)
        print(f"{name:32} {p50:6.2f} ms  {p50 / base:5.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.turns, args.rounds))
