"""Benchmark: reply latency under load, the real bot process next to a bare PTB echo bot.

    .venv/bin/python bench/telegram_load.py [--chats 50] [--turns 8] [--seed 1]
        [--only intake|echo] [--json] [--code ../before] [--webhook-processes 2]

Both bots run as processes polling the fake Telegram Bot API (`tests.fakes.bot_api`) served on
127.0.0.1 in this script's event loop, one after the other in the same run: first a bare
python-telegram-bot echo bot (its default settings: one update at a time), then `intake-bot run`
(offline rules brain, SQLite under a temporary INTAKE_DATA_DIR). `--chats` simulated people
write at once: each starts within the first 3 s, sends a message, waits for the bot's first reply message, thinks 1-3 s
(seeded) and writes again, `--turns` times; in about one turn of ten a person sends two
messages back to back (a correction). The intake bot gets the legal descriptions and answers
of bench/engine_throughput.py; the echo bot numbered texts.

Printed per bot: messages offered per second, p50/p95/p99 latency from a message's arrival at
the fake server to the bot's first reply message in that chat, errors (no reply in 30 s, or
an error status the fake returned to the bot), replies out of order (echo: echoed texts out of
sending order; intake: a chat whose question-answer rows in records.db are not in the order of
the updates' ids), and the intake bot's p95 over the echo bot's. `--webhook-processes N` adds
N `intake-bot run --webhook` processes on one temporary PostgreSQL database (tests/postgres.py),
this script posting each update to them in turn as a load balancer in front of them would (the
latency then runs from the POST). It measures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests.fakes` is not an installed package
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from engine_throughput import script  # noqa: E402

from tests.fakes.bot_api import FakeBotApi  # noqa: E402

REPLY_TIMEOUT = 30.0
THINK = (1.0, 3.0)
BURST_SHARE = 0.1
FIRST_CHAT = 3_000
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

ECHO_BOT = """
import sys
from telegram.ext import ApplicationBuilder, MessageHandler, filters

async def echo(update, context):
    await update.effective_message.reply_text(update.effective_message.text)

url = sys.argv[1]
app = (
    ApplicationBuilder().token(sys.argv[2]).base_url(url + "/bot")
    .base_file_url(url + "/file/bot").build()
)
app.add_handler(MessageHandler(filters.TEXT, echo))
app.run_polling(poll_interval=0.0, timeout=10)
"""


class LoadApi(FakeBotApi):
    """The fake, noting when each chat got a message; in webhook mode a pushed update is handed
    to the person's coroutine to POST, not queued for getUpdates."""

    def __init__(self) -> None:
        super().__init__()
        self.sent_at: dict[int, list[float]] = {}
        self.webhook_mode = False
        self.outbox: list[dict[str, Any]] = []

    def push_update(self, update: dict[str, Any]) -> int:
        if not self.webhook_mode:
            return super().push_update(update)
        update = dict(update, update_id=update.get("update_id") or self._last_update_id + 1)
        self._last_update_id = max(self._last_update_id, update["update_id"])
        self.known(update)
        self.outbox.append(update)
        return update["update_id"]

    def _store_bot_message(self, chat: dict[str, Any], *args: Any) -> dict[str, Any]:
        self.sent_at.setdefault(chat["id"], []).append(time.perf_counter())
        return super()._store_bot_message(chat, *args)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROXIES}
    return {**env, "NO_PROXY": "127.0.0.1,localhost", **extra}


async def start_bot(
    kind: str, fake: LoadApi, data_dir: Path, code: Path | None = None
) -> subprocess.Popen:
    """The bot process, once it polls (`code`: the intake bot of another checkout)."""
    if kind == "echo":
        command = [sys.executable, "-c", ECHO_BOT, fake.url, fake.token]
        env = environment({})
    else:
        command = [str(Path(sys.executable).parent / "intake-bot"), "run"]
        if code is not None:  # its modules first on the path: that checkout's bot runs
            command = [sys.executable, "-m", "bot.cli", "run"]
        env = environment(
            {
                **({"PYTHONPATH": str(code)} if code is not None else {}),
                "INTAKE_DATA_DIR": str(data_dir),
                "TELEGRAM_BOT_TOKEN": fake.token,
                "TELEGRAM_API_URL": f"{fake.url}/bot",
                "INTAKE_LOG_LEVEL": "WARNING",
            }
        )
    log = (data_dir.parent / f"{kind}.log").open("ab")
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
    await fake.wait_for(lambda: bool(fake.calls_to("getUpdates")), 180, what=f"{kind} polling")
    return proc


async def stop_bot(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.to_thread(proc.wait, 20)
    except subprocess.TimeoutExpired:
        proc.kill()


class Balancer:
    """Stands for Telegram posting to one URL behind a load balancer: round robin over ports."""

    def __init__(self, ports: list[int], secret: str) -> None:
        import httpx

        self.urls = [f"http://127.0.0.1:{port}/telegram" for port in ports]
        self.secret = secret
        self.client = httpx.AsyncClient(timeout=REPLY_TIMEOUT, trust_env=False)
        self.next = 0
        self.failed = 0

    async def post(self, update: dict[str, Any]) -> None:
        url = self.urls[self.next % len(self.urls)]
        self.next += 1
        headers = {"X-Telegram-Bot-Api-Secret-Token": self.secret}
        response = await self.client.post(url, json=update, headers=headers)
        self.failed += response.status_code != 200


async def person(
    kind: str,
    fake: LoadApi,
    chat: int,
    turns: int,
    rng: random.Random,
    out: dict[str, Any],
    balancer: Balancer | None = None,
) -> None:
    lines = script(chat, turns) if kind == "intake" else [f"m{chat}-{i}" for i in range(turns)]
    await asyncio.sleep(rng.uniform(0, THINK[1]))  # people do not all start at the same instant
    i = 0
    while i < len(lines):
        burst = i + 1 < len(lines) and rng.random() < BURST_SHARE
        sending = lines[i : i + (2 if burst else 1)]
        before = len(fake.sent_at.get(chat, []))
        pushed = time.perf_counter()
        for line in sending:
            update_id = fake.push_text(chat, line, user_id=chat)
            if balancer is not None:
                update = next(u for u in fake.outbox if u["update_id"] == update_id)
                fake.outbox.remove(update)
                await balancer.post(update)
        out["offered"] += len(sending)
        deadline = pushed + REPLY_TIMEOUT
        while len(fake.sent_at.get(chat, [])) <= before and time.perf_counter() < deadline:
            await asyncio.sleep(0.002)
        replies = fake.sent_at.get(chat, [])
        if len(replies) > before:
            out["latencies"].append(replies[before] - pushed)
        else:
            out["errors"] += 1
        i += len(sending)
        await asyncio.sleep(rng.uniform(*THINK))


def echo_out_of_order(fake: LoadApi, chats: list[int]) -> int:
    wrong = 0
    for chat in chats:
        echoed = [m.get("text") or "" for m in fake.messages(chat)]
        order = [int(t.rsplit("-", 1)[1]) for t in echoed if t.startswith(f"m{chat}-")]
        wrong += order != sorted(order)
    return wrong


def intake_out_of_order(data_dir: Path) -> int:
    with sqlite3.connect(data_dir / "records.db") as db:
        rows = db.execute(
            "select s.chat_id, t.input_id from chatturn t join chatsession s on s.id = t.session_id"
            " where t.input_id is not null order by t.id"
        ).fetchall()
    seen: dict[int, list[int]] = {}
    for chat, input_id in rows:
        seen.setdefault(chat, []).append(int(input_id))
    return sum(ids != sorted(ids) for ids in seen.values())


async def run(
    kind: str, chats: int, turns: int, seed: int, code: Path | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"offered": 0, "latencies": [], "errors": 0}
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        async with LoadApi() as fake:
            proc = await start_bot(kind, fake, data_dir, code)
            # One warm-up message, so first-use costs (Kiwi, the graph) are not measured.
            warm = FIRST_CHAT - 1
            fake.push_text(warm, "안녕하세요", user_id=warm)
            await fake.wait_for(lambda: bool(fake.sent_at.get(warm)), 60, what="warm-up reply")
            rng = random.Random(seed)
            ids = [FIRST_CHAT + c for c in range(chats)]
            started = time.perf_counter()
            await asyncio.gather(
                *(person(kind, fake, chat, turns, random.Random(rng.random()), out) for chat in ids)
            )
            out["elapsed"] = time.perf_counter() - started
            await asyncio.sleep(0.5)
            out["fake_errors"] = len(fake.errors)
            await stop_bot(proc)
            out["out_of_order"] = (
                echo_out_of_order(fake, ids) if kind == "echo" else intake_out_of_order(data_dir)
            )
    return out


async def run_webhook(processes: int, chats: int, turns: int, seed: int) -> dict[str, Any]:
    """`processes` x `intake-bot run --webhook` on one temporary PostgreSQL database."""
    import socket

    import psycopg

    from tests.postgres import PostgresServer

    out: dict[str, Any] = {"offered": 0, "latencies": [], "errors": 0}
    secret = "load-bench"
    with tempfile.TemporaryDirectory() as tmp, PostgresServer() as server:
        url = server.create_database("load")
        async with LoadApi() as fake:
            fake.webhook_mode = True
            ports, procs = [], []
            for n in range(processes):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", 0))
                    ports.append(sock.getsockname()[1])
                data_dir = Path(tmp) / f"p{n}" / "data"
                data_dir.mkdir(parents=True)
                env = environment(
                    {
                        "INTAKE_DATA_DIR": str(data_dir),
                        "INTAKE_DATABASE_URL": url,
                        "TELEGRAM_BOT_TOKEN": fake.token,
                        "TELEGRAM_API_URL": f"{fake.url}/bot",
                        "INTAKE_LOG_LEVEL": "WARNING",
                        "INTAKE_WEBHOOK_URL": "https://bot.example.org/telegram",
                        "INTAKE_WEBHOOK_PORT": str(ports[-1]),
                        "INTAKE_WEBHOOK_SECRET": secret,
                    }
                )
                log = (data_dir.parent / "bot.log").open("ab")
                command = [str(Path(sys.executable).parent / "intake-bot"), "run", "--webhook"]
                procs.append(
                    subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
                )
            balancer = Balancer(ports, secret)
            for port in ports:  # each process listens once its engine is open
                for _ in range(1800):
                    try:
                        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                            break
                    except OSError:
                        await asyncio.sleep(0.1)
            warm = FIRST_CHAT - 1
            for n in range(processes):  # warm each process up
                update_id = fake.push_text(warm - n, "안녕하세요", user_id=warm - n)
                update = next(u for u in fake.outbox if u["update_id"] == update_id)
                fake.outbox.remove(update)
                balancer.next = n
                await balancer.post(update)
            await fake.wait_for(
                lambda: all(fake.sent_at.get(warm - n) for n in range(processes)),
                60,
                what="warm-up",
            )
            rng = random.Random(seed)
            ids = [FIRST_CHAT + c for c in range(chats)]
            started = time.perf_counter()
            await asyncio.gather(
                *(
                    person("intake", fake, chat, turns, random.Random(rng.random()), out, balancer)
                    for chat in ids
                )
            )
            out["elapsed"] = time.perf_counter() - started
            await asyncio.sleep(0.5)
            out["fake_errors"] = len(fake.errors) + balancer.failed
            await balancer.client.aclose()
            for proc in procs:
                await stop_bot(proc)
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "select s.chat_id, t.input_id from chatturn t join chatsession s"
                " on s.id = t.session_id where t.input_id is not null order by t.id"
            ).fetchall()
    seen: dict[int, list[int]] = {}
    for chat, input_id in rows:
        seen.setdefault(chat, []).append(int(input_id))
    out["out_of_order"] = sum(ids != sorted(ids) for ids in seen.values())
    return out


def summary(kind: str, chats: int, r: dict[str, Any]) -> dict[str, Any]:
    lat = [1000 * x for x in r["latencies"]]
    return {
        "bot": kind,
        "chats": chats,
        "messages": r["offered"],
        "msgs_per_s": r["offered"] / r["elapsed"],
        "p50_ms": statistics.median(lat) if lat else float("nan"),
        "p95_ms": percentile(lat, 0.95),
        "p99_ms": percentile(lat, 0.99),
        "errors": r["errors"] + r["fake_errors"],
        "out_of_order": r["out_of_order"],
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=["intake", "echo"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--code", type=Path, help="also the intake bot of another checkout (e.g. ../before)"
    )
    parser.add_argument(
        "--webhook-processes",
        type=int,
        default=0,
        help="also N `run --webhook` processes on one temporary PostgreSQL database",
    )
    args = parser.parse_args()
    kinds = [args.only] if args.only else ["echo", "intake"]
    rows = [summary(k, args.chats, await run(k, args.chats, args.turns, args.seed)) for k in kinds]
    if args.code is not None:
        other = await run("intake", args.chats, args.turns, args.seed, args.code.resolve())
        rows.append(summary(f"intake@{args.code.name}", args.chats, other))
    if args.webhook_processes:
        hooked = await run_webhook(args.webhook_processes, args.chats, args.turns, args.seed)
        rows.append(summary(f"intake {args.webhook_processes}x webhook+pg", args.chats, hooked))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    header = [
        "bot",
        "chats",
        "messages",
        "msgs/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "errors",
        "out of order",
    ]
    table = [
        [r["bot"], str(r["chats"]), str(r["messages"]), f"{r['msgs_per_s']:.1f}",
         f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}", f"{r['p99_ms']:.1f}", str(r["errors"]),
         str(r["out_of_order"])]
        for r in rows
    ]  # fmt: skip
    widths = [max(len(x[i]) for x in (header, *table)) for i in range(len(header))]
    for line in (header, *table):
        print("  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)))
    echo = next((r for r in rows if r["bot"] == "echo"), None)
    for r in rows:
        if echo is not None and r is not echo:
            print(f"{r['bot']} p95 / echo p95: {r['p95_ms'] / echo['p95_ms']:.1f}x")


if __name__ == "__main__":
    asyncio.run(main())
