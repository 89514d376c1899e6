"""Benchmark: reply latency under load, the real bot process next to a bare PTB echo bot.

    .venv/bin/python bench/telegram_load.py [--chats 50] [--turns 8] [--seed 1]
        [--only intake|echo] [--json] [--code ../before]
        [--webhook [--processes 2] [--database-url URL]] [--webhook-processes N]

Both bots run as processes against the fake Telegram Bot API (`tests.fakes.bot_api`) served on
127.0.0.1 in this script's event loop, one after the other in the same run: first a bare
python-telegram-bot echo bot (a MessageHandler and `run_polling()`, PTB's defaults otherwise:
one update at a time), then `intake-bot run` (offline rules brain, SQLite under a fresh
temporary INTAKE_DATA_DIR), each polling.

`--chats` simulated people write at once: each starts within the first 3 s, sends a message,
waits for the bot's reply, thinks 1-3 s (seeded) and writes again, `--turns` times; in about
one turn of ten a person sends two messages back to back (correcting themselves) and waits for
the replies to both. The intake bot gets the legal descriptions and answers of
bench/engine_throughput.py, the echo bot numbered texts.

Latency: from pushing a turn's (first) message into the fake to the first message the bot sends
to that chat afterwards, both stamped in the fake. A turn is over once the bot has answered every
message of it (echo: each text echoed; intake: at least one message per input) and the chat has
been quiet (no message, no typing) for 0.3 s. Errors: a turn not answered within 30 s, an error
status the fake returned to the bot, and (webhook) a POST of an update the bot did not answer
2xx. Out of order: echo, a chat whose echoed texts are not in sending order; intake, a chat whose
`chatturn` rows (records database), in row-id order, do not have increasing update ids.

`--webhook` runs the intake bot instead as `--processes` x `intake-bot run --webhook` on one
PostgreSQL database (`--database-url`, else a temporary server from tests/postgres.py), the fake
itself posting updates round robin to the processes (`FakeBotApi.webhook_targets`, a load
balancer), the latency then including the delivery. `--webhook-processes N` (the older spelling)
measures that next to the polling intake bot. It measures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests.fakes` is not an installed package
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from engine_throughput import script  # noqa: E402

from tests.fakes.bot_api import FakeBotApi  # noqa: E402

REPLY_TIMEOUT = 30.0  # seconds a turn may wait for its replies before it counts as an error
QUIET = 0.3  # seconds without bot activity in the chat that end a turn
THINK = (1.0, 3.0)  # seconds a person thinks between turns; also the spread of their starts
BURST_SHARE = 0.1  # turns of two messages back to back
START_TIMEOUT = 300.0  # a fresh INTAKE_DATA_DIR builds its knowledge index first
FIRST_CHAT = 3_000
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
INTAKE_BOT = Path(sys.executable).parent / "intake-bot"

ECHO_BOT = """
import sys
from telegram.ext import ApplicationBuilder, MessageHandler, filters

async def echo(update, context):
    await update.effective_message.reply_text(update.effective_message.text)

url, token = sys.argv[1], sys.argv[2]
app = ApplicationBuilder().token(token).base_url(url + "/bot").base_file_url(url + "/file/bot")
app = app.build()
app.add_handler(MessageHandler(filters.TEXT, echo))
app.run_polling()
"""


class LoadApi(FakeBotApi):
    """The fake, stamping each bot message and chat action per chat and waking that chat's
    simulated person, so waiting costs no polling and the stamps are the server's."""

    def __init__(self, first_update_id: int | None = None) -> None:
        super().__init__()
        if first_update_id is not None:  # clear of a reused database's earlier runs
            self._last_update_id = first_update_id - 1
        self.sent_at: defaultdict[int, list[float]] = defaultdict(list)  # per bot message
        self.active_at: dict[int, float] = {}  # the chat's last bot message or chat action
        self._activity: defaultdict[int, asyncio.Event] = defaultdict(asyncio.Event)

    def _touch(self, chat_id: int, at: float) -> None:
        self.active_at[chat_id] = at
        self._activity[chat_id].set()

    def _store_bot_message(self, chat: dict[str, Any], *args: Any) -> dict[str, Any]:
        message = super()._store_bot_message(chat, *args)
        now = time.perf_counter()
        self.sent_at[chat["id"]].append(now)
        self._touch(chat["id"], now)
        return message

    def _send_chat_action(self, params: dict[str, Any]) -> bool:
        result = super()._send_chat_action(params)
        self._touch(self._require_chat(params)["id"], time.perf_counter())
        return result

    async def until(self, chat: int, done: Callable[[], bool], deadline: float) -> bool:
        """Wait for bot activity in the chat until `done()` (True) or the deadline (False)."""
        while not done():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return False
            event = self._activity[chat]
            event.clear()  # no await since done() was checked: no wake-up is lost
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)
        return True

    async def quiet(self, chat: int, deadline: float) -> None:
        """Wait until the chat has had no bot activity for QUIET seconds (or the deadline)."""
        while (now := time.perf_counter()) < deadline:
            left = self.active_at.get(chat, 0.0) + QUIET - now
            if left <= 0:
                return
            self._activity[chat].clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._activity[chat].wait(), min(left, deadline - now))


@dataclass
class Load:
    """What the simulated people saw during one bot's run."""

    offered: int = 0  # messages pushed
    latencies: list[float] = field(default_factory=list)  # seconds, one per answered turn
    unanswered: int = 0  # turns without all their replies within REPLY_TIMEOUT
    api_errors: int = 0  # error answers of the fake to the bot
    webhook_errors: int = 0  # webhook POSTs the bot answered other than 2xx, or not at all
    out_of_order: int = 0
    elapsed: float = float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def environment(extra: dict[str, str]) -> dict[str, str]:
    """This environment without proxies (httpx would send loopback traffic to them)."""
    env = {k: v for k, v in os.environ.items() if k not in PROXIES}
    return {**env, "NO_PROXY": "127.0.0.1,localhost", **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as stderr:
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)


async def wait_ready(
    fake: FakeBotApi, procs: list[subprocess.Popen], logs: list[Path], ready: Callable[[], bool]
) -> None:
    """Until `ready()`; fail with the log's tail if a process exits first."""
    deadline = time.perf_counter() + START_TIMEOUT
    while not ready():
        for proc, log in zip(procs, logs, strict=True):
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{proc.args} exited with {proc.returncode}:\n{tail}")
        if time.perf_counter() > deadline:
            raise RuntimeError(f"bots not ready after {START_TIMEOUT}s\n{fake.describe()}")
        await asyncio.sleep(0.1)


async def stop_bots(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            await asyncio.to_thread(proc.wait, 20)
        except subprocess.TimeoutExpired:
            proc.kill()


def lines_for(kind: str, chat: int, turns: int) -> list[str]:
    return script(chat, turns) if kind == "intake" else [f"m{chat}-{i}" for i in range(turns)]


def replies_since(fake: LoadApi, chat: int, before: int, count: int) -> Callable[[], bool]:
    return lambda: len(fake.sent_at[chat]) - before >= count


def echoed(fake: FakeBotApi, chat: int, texts: list[str]) -> Callable[[], bool]:
    return lambda: set(texts) <= {m.get("text") for m in fake.messages(chat)}


async def person(
    kind: str, fake: LoadApi, chat: int, turns: int, rng: random.Random, load: Load
) -> None:
    """One person writing `turns` messages, waiting for the replies and thinking in between."""
    lines = lines_for(kind, chat, turns)
    await asyncio.sleep(rng.uniform(0, THINK[1]))  # people do not all start at the same instant
    i = 0
    while i < len(lines):
        burst = i + 1 < len(lines) and rng.random() < BURST_SHARE
        sending = lines[i : i + (2 if burst else 1)]
        i += len(sending)
        before = len(fake.sent_at[chat])
        pushed = time.perf_counter()
        for line in sending:
            fake.push_text(chat, line, user_id=chat)
        load.offered += len(sending)
        deadline = pushed + REPLY_TIMEOUT
        replied = await fake.until(chat, replies_since(fake, chat, before, 1), deadline)
        if replied:
            load.latencies.append(fake.sent_at[chat][before] - pushed)
        if kind == "echo":
            answered = echoed(fake, chat, sending)
        else:  # at least one message per input
            answered = replies_since(fake, chat, before, len(sending))
        if not (replied and await fake.until(chat, answered, deadline)):
            load.unanswered += 1
        await fake.quiet(chat, deadline)
        await asyncio.sleep(rng.uniform(*THINK))


async def drive(
    kind: str, fake: LoadApi, chats: list[int], turns: int, seed: int, load: Load
) -> None:
    """All people at once; errors are those of this window only."""
    rng = random.Random(seed)
    errors_before = len(fake.errors)
    started = time.perf_counter()
    await asyncio.gather(
        *(person(kind, fake, chat, turns, random.Random(rng.random()), load) for chat in chats)
    )
    load.elapsed = time.perf_counter() - started
    await asyncio.sleep(0.5)  # a late error answer still counts
    load.api_errors = len(fake.errors) - errors_before


async def warm_up(fake: LoadApi, chats: list[int]) -> None:
    """One message per chat, so first-use costs (Kiwi, the graph) are not measured."""
    for chat in chats:
        fake.push_text(chat, "안녕하세요", user_id=chat)
    await fake.wait_for(lambda: all(fake.sent_at[chat] for chat in chats), 120, what="warm-up")


def echo_out_of_order(fake: LoadApi, chats: list[int]) -> int:
    wrong = 0
    for chat in chats:
        echoed = [m.get("text") or "" for m in fake.messages(chat)]
        order = [int(t.rsplit("-", 1)[1]) for t in echoed if t.startswith(f"m{chat}-")]
        wrong += order != sorted(order)
    return wrong


TURN_ORDER_SQL = (
    "select s.chat_id, t.input_id from chatturn t join chatsession s on s.id = t.session_id"
    " where t.input_id is not null order by t.id"
)


def chats_out_of_order(rows: Iterable[tuple[int, str]], chats: set[int]) -> int:
    """Chats whose turns, in row-id order, do not answer increasing update ids."""
    seen: dict[int, list[int]] = defaultdict(list)
    for chat, input_id in rows:
        if chat in chats and str(input_id).isdigit():
            seen[chat].append(int(input_id))
    return sum(ids != sorted(ids) for ids in seen.values())


def sqlite_out_of_order(data_dir: Path, chats: set[int]) -> int:
    with contextlib.closing(sqlite3.connect(data_dir / "records.db")) as db:
        return chats_out_of_order(db.execute(TURN_ORDER_SQL).fetchall(), chats)


# --- polling: the echo bot and `intake-bot run` ----------------------------------------------


def polling_command(
    kind: str, fake: FakeBotApi, data_dir: Path, code: Path | None
) -> tuple[list[str], dict[str, str]]:
    if kind == "echo":
        return [sys.executable, "-c", ECHO_BOT, fake.url, fake.token], environment({})
    command = [str(INTAKE_BOT), "run"]
    extra = {
        "INTAKE_DATA_DIR": str(data_dir),
        "TELEGRAM_BOT_TOKEN": fake.token,
        "TELEGRAM_API_URL": f"{fake.url}/bot",
        "INTAKE_LOG_LEVEL": "WARNING",
    }
    if code is not None:  # its modules first on the path: that checkout's bot runs
        command = [sys.executable, "-m", "bot.cli", "run"]
        extra["PYTHONPATH"] = str(code)
    return command, environment(extra)


async def run_polling(
    kind: str, chats: int, turns: int, seed: int, code: Path | None = None
) -> Load:
    load = Load()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        log = Path(tmp) / f"{kind}.log"
        async with LoadApi() as fake:
            command, env = polling_command(kind, fake, data_dir, code)
            proc = spawn(command, env, log)
            ids = [FIRST_CHAT + c for c in range(chats)]
            try:
                await wait_ready(fake, [proc], [log], lambda: bool(fake.calls_to("getUpdates")))
                await warm_up(fake, [FIRST_CHAT - 1])
                await drive(kind, fake, ids, turns, seed, load)
            finally:
                await stop_bots([proc])
            if kind == "echo":
                load.out_of_order = echo_out_of_order(fake, ids)
            else:
                load.out_of_order = sqlite_out_of_order(data_dir, set(ids))
    return load


# --- webhook: K x `intake-bot run --webhook` on one PostgreSQL database ----------------------
# Kept apart: the bot's webhook side is still being written; this path is tried once it exists.


def webhook_env(
    fake: FakeBotApi, data_dir: Path, database_url: str, port: int, **more: str
) -> dict[str, str]:
    return environment(
        {
            "INTAKE_DATA_DIR": str(data_dir),
            "INTAKE_DATABASE_URL": database_url,
            "TELEGRAM_BOT_TOKEN": fake.token,
            "TELEGRAM_API_URL": f"{fake.url}/bot",
            "INTAKE_LOG_LEVEL": "WARNING",
            "INTAKE_WEBHOOK_LISTEN": "127.0.0.1",
            "INTAKE_WEBHOOK_PORT": str(port),
            **more,
        }
    )


def postgres_out_of_order(database_url: str, chats: set[int]) -> int:
    import psycopg

    with psycopg.connect(database_url) as conn:
        return chats_out_of_order(conn.execute(TURN_ORDER_SQL).fetchall(), chats)


async def run_webhook_on(
    database_url: str, processes: int, chats: int, turns: int, seed: int
) -> Load:
    load = Load()
    # Fresh update and chat ids, so a database reused from an earlier run (its inbox, its
    # intakes) does not take this run's updates for repeats or continue old conversations.
    stamp = int(time.time())
    first_chat = FIRST_CHAT + (stamp % 100_000) * 1_000
    with tempfile.TemporaryDirectory() as tmp:
        async with LoadApi(first_update_id=stamp * 1_000) as fake:
            balancer = f"http://127.0.0.1:{free_port()}/tg"  # nobody listens: the fake balances
            ports = [free_port() for _ in range(processes)]
            fake.webhook_targets = [f"http://127.0.0.1:{port}/tg" for port in ports]
            secret = secrets.token_urlsafe(24)
            procs: list[subprocess.Popen] = []
            logs: list[Path] = []
            ids = [first_chat + c for c in range(chats)]
            for n, port in enumerate(ports):
                logs.append(Path(tmp) / f"p{n}" / "bot.log")
                env = webhook_env(
                    fake,
                    Path(tmp) / f"p{n}" / "data",
                    database_url,
                    port,
                    INTAKE_WEBHOOK_URL=balancer,
                    INTAKE_WEBHOOK_SECRET=secret,
                )
                procs.append(spawn([str(INTAKE_BOT), "run", "--webhook"], env, logs[-1]))
            try:
                await wait_ready(
                    fake,
                    procs,
                    logs,
                    lambda: (
                        len(fake.calls_to("setWebhook")) >= processes
                        and all(listening(port) for port in ports)
                    ),
                )
                # One chat per process: the round robin hands each process one warm-up.
                await warm_up(fake, [first_chat - 1 - n for n in range(processes)])
                attempts_before = len(fake.webhook_attempts)
                await drive("intake", fake, ids, turns, seed, load)
                load.webhook_errors = sum(
                    not (status and 200 <= status < 300)
                    for _, _, status in fake.webhook_attempts[attempts_before:]
                )
            finally:
                await stop_bots(procs)
    load.out_of_order = postgres_out_of_order(database_url, set(ids))
    return load


async def run_webhook(
    database_url: str | None, processes: int, chats: int, turns: int, seed: int
) -> Load:
    if database_url:
        return await run_webhook_on(database_url, processes, chats, turns, seed)
    from tests.postgres import PostgresServer

    with PostgresServer() as server:
        url = server.create_database("load")
        return await run_webhook_on(url, processes, chats, turns, seed)


# --- the table ---------------------------------------------------------------------------


def summary(bot: str, chats: int, turns: int, load: Load) -> dict[str, Any]:
    ms = [1000 * x for x in load.latencies]
    return {
        "bot": bot,
        "chats": chats,
        "turns": turns,
        "messages": load.offered,
        "msgs_per_s": load.offered / load.elapsed,
        "p50_ms": statistics.median(ms) if ms else float("nan"),
        "p95_ms": percentile(ms, 0.95),
        "p99_ms": percentile(ms, 0.99),
        "errors": load.unanswered + load.api_errors + load.webhook_errors,
        "unanswered": load.unanswered,
        "api_errors": load.api_errors,
        "webhook_errors": load.webhook_errors,
        "out_of_order": load.out_of_order,
    }


def add_ratio(rows: list[dict[str, Any]]) -> None:
    """Each row's p95 over the echo bot's, when the echo bot ran."""
    echo = next((r for r in rows if r["bot"] == "echo"), None)
    for r in rows:
        r["p95_vs_echo"] = r["p95_ms"] / echo["p95_ms"] if echo else float("nan")


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = [
        ("bot", "bot", "{}"),
        ("chats", "chats", "{}"),
        ("turns", "turns", "{}"),
        ("messages", "messages", "{}"),
        ("msgs/s offered", "msgs_per_s", "{:.1f}"),
        ("p50 ms", "p50_ms", "{:.0f}"),
        ("p95 ms", "p95_ms", "{:.0f}"),
        ("p99 ms", "p99_ms", "{:.0f}"),
        ("errors", "errors", "{}"),
        ("out of order", "out_of_order", "{}"),
        ("p95 / echo p95", "p95_vs_echo", "{:.1f}x"),
    ]
    table = [[title for title, _, _ in columns]]
    table += [
        [form.format(r[key]) if r[key] == r[key] else "-" for _, key, form in columns]  # NaN: -
        for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    for line in table:
        print("  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=["intake", "echo"])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--code", type=Path, help="also the intake bot of another checkout (e.g. ../before)"
    )
    parser.add_argument(
        "--webhook", action="store_true", help="the intake bot as webhook processes on PostgreSQL"
    )
    parser.add_argument("--processes", type=int, default=2, help="webhook processes (--webhook)")
    parser.add_argument(
        "--database-url", help="PostgreSQL for --webhook (default: a temporary server)"
    )
    parser.add_argument(
        "--webhook-processes",
        type=int,
        default=0,
        help="also N webhook processes, next to the polling intake bot",
    )
    args = parser.parse_args()
    shape = (args.chats, args.turns, args.seed)
    rows = []
    if args.only != "intake":
        rows.append(summary("echo", args.chats, args.turns, await run_polling("echo", *shape)))
    if args.only != "echo":
        if args.webhook:
            load = await run_webhook(args.database_url, args.processes, *shape)
            rows.append(summary(f"intake {args.processes}x webhook", args.chats, args.turns, load))
        else:
            rows.append(
                summary("intake", args.chats, args.turns, await run_polling("intake", *shape))
            )
        if args.code is not None:
            load = await run_polling("intake", *shape, code=args.code.resolve())
            rows.append(summary(f"intake@{args.code.name}", args.chats, args.turns, load))
        if args.webhook_processes and not args.webhook:
            load = await run_webhook(args.database_url, args.webhook_processes, *shape)
            name = f"intake {args.webhook_processes}x webhook"
            rows.append(summary(name, args.chats, args.turns, load))
    add_ratio(rows)
    if args.json:  # NaN (no latency measured) as null, which JSON knows
        plain = [{k: None if v != v else v for k, v in r.items()} for r in rows]
        print(json.dumps(plain, indent=2))
    else:
        print_table(rows)


if __name__ == "__main__":
    asyncio.run(main())
