"""Benchmark: simulated chats through the engine vs a bare one-node LangGraph graph, same run.

    .venv/bin/python bench/engine_throughput.py [--chats 50] [--turns 10] [--durability exit]
        [--rounds 3] [--postgres]

Prints, for the intake engine (offline rules brain, real SQLite files: records + checkpoints)
and for a bare one-node graph on AsyncSqliteSaver (the baseline): turns per second, p50/p95
turn latency, and checkpoint bytes written per turn at turn 1 and at turn 30 of a long chat,
with the ratio engine / baseline; first for one chat alone (the cost of a turn), then for
`--chats` chats at once. Each is measured in `--rounds` rounds, engine and baseline alternating,
and each side's median round is shown (this machine's speed drifts by tens of per cent from one
minute to the next). `--postgres` adds the same on PostgreSQL (records and checkpoints in a
temporary server started with tests/postgres.py; the baseline on AsyncPostgresSaver). Not a
test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from bot.config import Settings
from bot.engine import Engine, Inbound
from db import repo
from db.engine import checkpoints_path

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
DESCRIPTIONS = [
    "작년 3월에 친구 김철수한테 300만원 빌려줬는데 아직도 안 갚아요",
    "집주인이 전세 보증금 2억을 계약 끝났는데 안 돌려줘요",
    "사장님이 석 달째 월급을 안 줘요",
    "중고거래 사기를 당했어요. 50만원 보냈는데 물건이 안 와요",
    "남편과 이혼하고 싶어요. 결혼한 지 10년 됐고 아이가 둘이에요",
]
ANSWERS = [
    "모르겠어요",
    "네",
    "2024년 5월",
    "300만원",
    "카톡이랑 녹음 있어요",
    "아니요",
    "김영희",
    "2명",
    "3년",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def thread_bytes(conn: aiosqlite.Connection, thread_id: str) -> int:
    """Bytes of checkpoints and pending writes stored for one thread (rows are only added)."""
    q1 = "select coalesce(sum(length(checkpoint) + length(metadata)), 0) from checkpoints where thread_id = ?"
    q2 = "select coalesce(sum(length(value)), 0) from writes where thread_id = ?"
    a = (await (await conn.execute(q1, (thread_id,))).fetchone())[0]
    b = (await (await conn.execute(q2, (thread_id,))).fetchone())[0]
    return a + b


# --- the intake engine ---------------------------------------------------------------------


def script(chat: int, turns: int) -> list[str]:
    """A chat: a description, then answers (some unusable, so re-asks happen)."""
    lines = [DESCRIPTIONS[chat % len(DESCRIPTIONS)]]
    lines += [ANSWERS[(chat + i) % len(ANSWERS)] for i in range(turns - 1)]
    return lines


async def engine_chat(engine: Engine, chat: int, turns: int, latencies: list[float]) -> None:
    for i, line in enumerate(script(chat, turns)):
        inbound = Inbound(chat_id=chat, kind="text", text=line, at=NOW + timedelta(minutes=i))
        start = time.perf_counter()
        reply = await engine.handle(inbound)
        latencies.append(time.perf_counter() - start)
        if reply.state == "COMPLETED":  # start another intake in the same chat
            await engine.handle(Inbound(chat_id=chat, kind="command", command="new", at=NOW))


async def engine_long_chat_bytes(engine: Engine, data_dir: Path) -> tuple[int, int]:
    """Checkpoint bytes written by turn 1 and by turn 30 of one long intake."""
    chat = 10_000
    lines = ["작년 3월에 친구 김철수한테 300만원 빌려줬는데 아직도 안 갚아요"]
    lines += [f"아 금액은 {300 + i}만원이에요" for i in range(29)]  # corrections keep it open
    conn = await aiosqlite.connect(str(checkpoints_path(data_dir)))
    sizes = []
    thread: str | None = None  # the intake's thread id, known once the first turn opened it
    try:
        for i, line in enumerate(lines):
            before = await thread_bytes(conn, thread) if thread else 0
            await engine.handle(
                Inbound(chat_id=chat, kind="text", text=line, at=NOW + timedelta(minutes=i))
            )
            if thread is None:
                session = await repo.open_session(engine=engine.records, chat_id=chat)
                if session is None:
                    raise RuntimeError("the long chat did not open an intake")
                thread = session.id
            sizes.append(await thread_bytes(conn, thread) - before)
    finally:
        await conn.close()
    return sizes[0], sizes[29]


async def bench_engine(
    chats: int, turns: int, durability: str, url: str | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            intake_data_dir=Path(tmp),
            intake_durability=durability,
            intake_database_url=url,
            _env_file=None,
        )
        engine = await Engine.open(settings)
        await engine.handle(
            Inbound(chat_id=-1, kind="text", text="워밍업: 친구가 돈을 안 갚아요", at=NOW)
        )
        latencies: list[float] = []
        start = time.perf_counter()
        await asyncio.gather(*(engine_chat(engine, c, turns, latencies) for c in range(chats)))
        elapsed = time.perf_counter() - start
        first, thirtieth = (
            await engine_long_chat_bytes(engine, Path(tmp)) if url is None else (0, 0)
        )
        await engine.close()
    return {
        "turns": len(latencies),
        "elapsed": elapsed,
        "latencies": latencies,
        "bytes": (first, thirtieth),
    }


# --- the baseline: a bare one-node graph ---------------------------------------------------


class BareState(TypedDict, total=False):
    turn: int
    last: str


async def echo(state: BareState) -> dict[str, Any]:
    """Wait for the user and remember the answer."""
    answer = interrupt({"turn": state.get("turn", 0)})
    return {"turn": state.get("turn", 0) + 1, "last": answer}


def bare_graph(saver: AsyncSqliteSaver):
    graph = StateGraph(BareState)
    graph.add_node("echo", echo)
    graph.add_edge(START, "echo")
    graph.add_edge("echo", "echo")
    return graph.compile(checkpointer=saver)


async def bench_bare_postgres(chats: int, turns: int, durability: str, url: str) -> dict[str, Any]:
    """The baseline on AsyncPostgresSaver (checkpoint bytes not measured there)."""
    async with AsyncConnectionPool(
        url,
        min_size=2,
        max_size=16,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    ) as pool:
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        graph = bare_graph(saver)
        latencies: list[float] = []

        async def chat(c: int) -> None:
            config = {"configurable": {"thread_id": f"t{c}"}}
            for i, line in enumerate(script(c, turns)):
                payload: Any = {"turn": 0} if i == 0 else Command(resume=line)
                start = time.perf_counter()
                await graph.ainvoke(payload, config, durability=durability)
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(chat(c) for c in range(chats)))
        elapsed = time.perf_counter() - start
    return {"turns": len(latencies), "elapsed": elapsed, "latencies": latencies, "bytes": (0, 0)}


async def bench_bare(chats: int, turns: int, durability: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        conn = await aiosqlite.connect(str(Path(tmp) / "checkpoints.db"))
        await conn.execute("PRAGMA busy_timeout=5000")
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        graph = bare_graph(saver)
        latencies: list[float] = []

        async def chat(c: int) -> None:
            config = {"configurable": {"thread_id": f"t{c}"}}
            for i, line in enumerate(script(c, turns)):
                payload: Any = {"turn": 0} if i == 0 else Command(resume=line)
                start = time.perf_counter()
                await graph.ainvoke(payload, config, durability=durability)
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(chat(c) for c in range(chats)))
        elapsed = time.perf_counter() - start
        sizes = []
        config = {"configurable": {"thread_id": "long"}}
        for i in range(30):
            before = await thread_bytes(conn, "long")
            await graph.ainvoke(
                {"turn": 0} if i == 0 else Command(resume=f"answer {i}"),
                config,
                durability=durability,
            )
            sizes.append(await thread_bytes(conn, "long") - before)
        await conn.close()
    return {
        "turns": len(latencies),
        "elapsed": elapsed,
        "latencies": latencies,
        "bytes": (sizes[0], sizes[29]),
    }


def row(name: str, r: dict[str, Any]) -> list[str]:
    lat = r["latencies"]
    return [
        name,
        f"{r['turns'] / r['elapsed']:.1f}",
        f"{1000 * statistics.median(lat):.1f}",
        f"{1000 * percentile(lat, 0.95):.1f}",
        str(r["bytes"][0]),
        str(r["bytes"][1]),
    ]


def table(title: str, rows: list[list[str]]) -> None:
    header = ["", "turns/s", "p50 ms", "p95 ms", "ckpt B turn 1", "ckpt B turn 30"]
    ratio = ["engine / bare"]
    for i in range(1, 6):
        a, b = float(rows[0][i]), float(rows[1][i])
        ratio.append(f"{a / b:.2f}x" if b else "-")
    print(title)
    widths = [max(len(r[i]) for r in (header, *rows, ratio)) for i in range(len(header))]
    for r in (header, *rows, ratio):
        print(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    print()


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The round whose turns per second is the median of the rounds (odd rounds: a real one)."""
    ordered = sorted(runs, key=lambda r: r["turns"] / r["elapsed"])
    return ordered[len(ordered) // 2]


async def measure(
    chats: int,
    turns: int,
    durability: str,
    rounds: int,
    fresh_database: Callable[[], str] | None = None,
) -> None:
    """`rounds` rounds of the engine then the baseline, alternating so that a slower spell of
    the machine hits both; each side's median round is printed. `fresh_database` (PostgreSQL)
    gives the URL of an empty database, one for each run."""
    where = "PostgreSQL" if fresh_database else "SQLite"
    engines, bares = [], []
    for _ in range(rounds):
        if fresh_database:
            engines.append(await bench_engine(chats, turns, durability, fresh_database()))
            bares.append(await bench_bare_postgres(chats, turns, durability, fresh_database()))
        else:
            engines.append(await bench_engine(chats, turns, durability))
            bares.append(await bench_bare(chats, turns, durability))
    engine, bare = median_run(engines), median_run(bares)
    table(
        f"{where}: {chats} chats x {turns} turns, durability={durability}, "
        f"{engine['turns']} engine turns, median of {rounds} rounds",
        [row("intake engine", engine), row("bare 1-node graph", bare)],
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--durability", choices=["exit", "async", "sync"], default="exit")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per side (median shown)")
    parser.add_argument("--postgres", action="store_true", help="also on a temporary PostgreSQL")
    parser.add_argument(
        "--postgres-admin-url",
        help="also on this server instead: fresh databases are made through this URL",
    )
    args = parser.parse_args()
    sizes = ((1, 60), (args.chats, args.turns))
    for chats, turns in sizes:
        await measure(chats, turns, args.durability, args.rounds)
    if args.postgres_admin_url:
        import psycopg

        base = args.postgres_admin_url.rsplit("/", 1)[0]

        def fresh_database() -> str:
            name = f"bench_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(args.postgres_admin_url, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            return f"{base}/{name}"

        for chats, turns in sizes:
            await measure(chats, turns, args.durability, args.rounds, fresh_database)
    elif args.postgres:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests/
        from tests.postgres import PostgresServer

        with PostgresServer() as server:

            def fresh_database() -> str:
                name = f"bench_{uuid.uuid4().hex[:8]}"
                server.create_database(name)
                return server.url(name)

            for chats, turns in sizes:
                await measure(chats, turns, args.durability, args.rounds, fresh_database)


if __name__ == "__main__":
    asyncio.run(main())
