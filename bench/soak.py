"""Benchmark: crash soak — scripted intakes through the real bot process, SIGKILLed at random.

    .venv/bin/python bench/soak.py [--intakes 100] [--concurrency 10] [--seed 1] [--keep]
                                   [--failpoint-share 0.4] [--stuck-seconds 60]
                                   [--postgres [--processes 2]]

The real `intake-bot run` process talks HTTP to the fake Telegram Bot API
(`tests.fakes.bot_api.FakeBotApi`) served on 127.0.0.1 in this script's event loop; its data
directory is a temporary one (`--keep` keeps it, with one log per process start). Chats run
scripted Korean intakes the rules brain completes (loan, wage arrears, lease deposit, fraud),
`--concurrency` at a time, each a private chat whose user id is its chat id. An answer is sent
only once the bot has asked its question (a button answer is a press on the message showing
the button) and is never sent twice: as on Telegram, the bot must recover an unanswered message
from its inbox or from the unconfirmed updates.

Meanwhile a killer SIGKILLs the process at a random moment (uniform 0.3-4 s after it answered
its first message since it started, seeded by `--seed`) and restarts it. On a share of the
restarts (`--failpoint-share`) it arms `INTAKE_FAILPOINT` (`inbox_stored`, `after_graph`,
`after_records` or `after_reply`, count 1-6) so the process also dies exactly between two steps
of a turn; such a process falls back to a random kill after 4-12 s if the point is not reached.
A chat no kill has hit yet holds its last answer until the next kill, so every intake is
under way at one kill at least. A chat whose awaited message does not come within
`--stuck-seconds` of bot uptime (time spent restarting does not count) is abandoned as stuck.

First, with no kills, one reference intake per chat slot (each script at least once) runs at the
same concurrency: its facts and question-answer rows are what every soak intake of the same
script must end with (nothing is hard-coded), and its time per intake is the baseline.

`--postgres` puts the records and checkpoints on a temporary PostgreSQL server (tests/postgres.py)
and runs the bot as `intake-bot run --webhook`; `--processes N` runs N such processes on that one
database, each with its own port and data directory, the fake posting updates to them round robin
as a load balancer would (`FakeBotApi.webhook_targets`; an update a dead process did not answer
2xx is posted again, to the next one). Each process has its own killer: it is SIGKILLed (or dies
at an armed failpoint) and restarted while the others go on serving; what it stored and did not
finish is taken over by the others (the inbox sweep) or by its own restart.

Printed, from the records (records.db, or PostgreSQL) after a SIGTERM stop: facts lost (expected (key, value) pairs missing or
different in the chat's completed intake, else its latest), duplicate question-answer rows
(chatturn rows of a session whose user_text occurs more often than in the reference), intakes
stuck (abandoned, or not completed in the records), kills (random / by failpoint) and those that
landed with a turn in flight, restarts, restart-to-ready time and wall time, next to the
reference; then each defective chat with its pushes, kills, inbox rows and the bot's last words.
Exit code 0 when lost = duplicates = stuck = 0, else 1 (2 when the reference run fails). It
measures; it is not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests.fakes` is not an installed package
    sys.path.insert(0, str(ROOT))

from telegram_load import free_port, listening  # noqa: E402  (bench/, beside this script)

from knowledge.loader import Knowledge, default_knowledge  # noqa: E402
from tests.fakes.bot_api import FakeBotApi  # noqa: E402

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")
PROXY_VARIABLES += ("all_proxy",)
FAILPOINTS = ("inbox_stored", "after_graph", "after_records", "after_reply")
KILL_DELAY = (0.3, 4.0)  # seconds after the process's first answer since it started
FAILPOINT_FALLBACK = (4.0, 12.0)  # random kill when an armed point is not reached in time
FAILPOINT_COUNT = (1, 6)  # INTAKE_FAILPOINT=<point>:<n>, n uniform in this range
FIRST_ANSWER_WAIT = 10.0  # a process that answers nothing is killed anyway after this
READY_TIMEOUT = 180.0  # the first start builds the knowledge index
HOLD_TIMEOUT = 120.0  # longest a chat holds its last answer waiting for a kill
WAIT_CAP = 600.0  # absolute bound of any single wait of a chat
STOP_TIMEOUT = 20.0
REFERENCE_CHAT = 1_000
SOAK_CHAT = 2_000
WARMUP_CHAT = 999


# --- the scripted intakes -------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One message of a person: the field it answers (None: the opening description)."""

    field: str | None
    text: str | None = None
    button: str | None = None

    def shown(self) -> str:
        return f"[button {self.button}]" if self.button else repr(self.text)


@dataclass(frozen=True)
class Script:
    name: str
    sub_type: str
    steps: tuple[Step, ...]


SCRIPTS = (
    Script(
        "loan",
        "LOAN",
        (
            Step(None, "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요"),
            Step("repayment_date", "올해 6월"),
            Step("evidence", button="a:evidence:no"),
        ),
    ),
    Script(
        "wage",
        "WAGE_ARREARS",
        (
            Step(None, "사장님이 석 달째 월급을 안 줘요. 퇴직금도 못 받았어요"),
            Step("counterparty", "OO식당 사장 박민수"),
            Step("employment_start", "2023년 1월에 입사했어요"),
            Step("employment_end", "올해 9월에 그만뒀어요"),
            Step("amount", "900만원이요"),
            Step("labor_office_report", button="a:labor_office_report:no"),
            Step("evidence", button="a:evidence:no"),
        ),
    ),
    Script(
        "lease",
        "LEASE_DEPOSIT",
        (
            Step(None, "집주인이 전세 보증금 2억을 안 돌려줘요"),
            Step("lease_end_date", "작년 12월에 계약이 끝났어요"),
            Step("still_occupying", "아직 살고 있어요"),
            Step("fixed_date", button="a:fixed_date:yes"),
            Step("counterparty", "개인 집주인 박영희"),
            Step("evidence", "네 계약서랑 이체내역 있어요"),
        ),
    ),
    Script(
        "fraud",
        "FRAUD",
        (
            Step(None, "인터넷 중고거래에서 사기를 당했어요. 돈만 받고 물건을 안 보내요"),
            Step("incident_date", "2025년 10월 3일"),
            Step("counterparty", "닉네임 판매왕"),
            Step("item", "중고 자전거요"),
            Step("amount", "50만원 보냈어요"),
            Step("account_holder", "예금주는 김판매였어요"),
            Step("police_report", button="a:police_report:no"),
            Step("evidence", "송금 내역이랑 대화 기록 있어요"),
        ),
    ),
)


# --- the fake Telegram server, with signals for waiters -------------------------------------


class SoakBotApi(FakeBotApi):
    """FakeBotApi that wakes the chat's waiter on each bot message and counts polls."""

    def __init__(self) -> None:
        super().__init__()
        self.polls = 0  # getUpdates calls received
        self.sent = 0  # bot messages stored
        self.sent_clock: list[float] = []  # time.monotonic() of each bot message
        self.signals: dict[int, asyncio.Event] = defaultdict(asyncio.Event)
        self.any_signal = asyncio.Event()

    def _wake(self, chat_id: int | None = None) -> None:
        if chat_id is not None:
            self.signals[chat_id].set()
        self.any_signal.set()

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.polls += 1
        self._wake()
        return await super()._get_updates(params)

    def _store_bot_message(
        self,
        chat: dict[str, Any],
        params: dict[str, Any],
        content: dict[str, Any],
        markup: dict[str, Any] | None,
    ) -> dict[str, Any]:
        message = super()._store_bot_message(chat, params, content, markup)
        self.sent += 1
        self.sent_clock.append(time.monotonic())
        self._wake(chat["id"])
        return message

    async def wait_any(self, timeout: float) -> None:
        """Until any poll or bot message (or the timeout)."""
        self.any_signal.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.any_signal.wait(), timeout)


def text_of(message: dict[str, Any]) -> str:
    return message.get("text") or message.get("caption") or ""


def buttons(message: dict[str, Any]) -> list[str]:
    rows = message.get("reply_markup", {}).get("inline_keyboard", [])
    return [b.get("callback_data") for row in rows for b in row]


def short(text: str, limit: int = 90) -> str:
    text = text.replace("\n", " | ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- chats and kills ------------------------------------------------------------------------


@dataclass
class Kill:
    at: float
    kind: str  # random | failpoint:<point> | died rc=<n>
    in_flight: list[int]  # chats with a message pushed and not yet answered
    under_way: list[int]  # chats between their first message and their completion
    armed: str | None


@dataclass
class Chat:
    chat_id: int
    script: Script
    started: float | None = None
    finished: float | None = None
    outcome: str = "pending"  # completed | stuck
    why: str = ""
    kills: int = 0
    in_flight: bool = False
    pushed: list[str] = field(default_factory=list)  # user_text of each answer sent
    events: list[str] = field(default_factory=list)  # for the report of a defective chat

    def log(self, clock: float, what: str) -> None:
        """An event, at seconds since the start and at the wall-clock time the bot logs use."""
        now = time.time()
        wall = time.strftime("%H:%M:%S", time.localtime(now)) + f",{int(now % 1 * 1000):03d}"
        self.events.append(f"{clock:8.2f}s {wall} {what}")


class BotProcess:
    """One `intake-bot run` process (polling, or one of `--processes` webhook processes): its
    launches, readiness, and the killer that SIGKILLs and restarts it."""

    def __init__(self, h: Harness, index: int) -> None:
        self.h, self.index = h, index
        self.proc: subprocess.Popen | None = None
        self.armed: str | None = None
        self.up = False  # the current process serves and has not been killed
        self.launches = 0
        self.launched_at = 0.0
        self.sent_at_launch = 0
        self.port = free_port() if h.webhook else None
        self.data_dir = h.data_dir if index == 0 else h.data_dir.parent / f"data{index}"

    def env(self, failpoint: str | None) -> dict[str, str]:
        h = self.h
        env = {k: v for k, v in os.environ.items() if k not in PROXY_VARIABLES}
        env.pop("INTAKE_FAILPOINT", None)
        env.update(
            INTAKE_DATA_DIR=str(self.data_dir),
            TELEGRAM_BOT_TOKEN=h.fake.token,
            TELEGRAM_API_URL=f"{h.fake.url}/bot",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        if h.database_url:
            env["INTAKE_DATABASE_URL"] = h.database_url
        if self.port is not None:
            env.update(
                INTAKE_WEBHOOK_URL=h.balancer,
                INTAKE_WEBHOOK_SECRET=h.secret,
                INTAKE_WEBHOOK_LISTEN="127.0.0.1",
                INTAKE_WEBHOOK_PORT=str(self.port),
            )
        if failpoint:
            env["INTAKE_FAILPOINT"] = failpoint
        return env

    def log_path(self, launch: int) -> Path:
        suffix = f"-p{self.index}" if self.h.webhook else ""
        return self.h.log_dir / f"bot{suffix}-{launch:04d}.log"

    def ready(self, polls: int) -> bool:
        """Polling: it asked for updates; webhook: its port takes connections."""
        if self.port is None:
            return self.h.fake.polls > polls
        return listening(self.port)

    async def launch(self, failpoint: str | None) -> bool:
        """Start the bot and wait until it serves; False if it does not come up."""
        h = self.h
        self.launches += 1
        self.armed = failpoint
        polls, self.sent_at_launch = h.fake.polls, h.fake.sent
        start = self.launched_at = time.monotonic()
        command = [str(intake_bot()), "run", *(["--webhook"] if self.port else [])]
        with self.log_path(self.launches).open("wb") as log:
            self.proc = subprocess.Popen(
                command,
                env=self.env(failpoint),
                cwd=h.data_dir.parent,  # no stray .env of the caller's directory
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        while time.monotonic() - start < READY_TIMEOUT:
            if self.ready(polls):
                h.start_seconds.append(time.monotonic() - start)
                self.up = True
                return True
            if self.proc.poll() is not None:
                break
            await h.fake.wait_any(0.2)
        if self.proc.poll() is None:
            self.proc.kill()
        await self.reap()
        log_text = self.log_path(self.launches).read_text(errors="replace")
        if self.proc.returncode == -signal.SIGKILL and failpoint and "failpoint" in log_text:
            # Died where armed while finishing what it had recovered, before it served: that
            # is the kill it was armed for, not a failed start.
            h.record_kill(f"failpoint:{failpoint.split(':')[0]}", failpoint)
            return False
        tail = log_text.strip().splitlines()
        print(
            f"  ! process {self.index} launch {self.launches} did not come up "
            f"(rc={self.proc.returncode}):"
        )
        for line in tail[-8:]:
            print(f"      {line}")
        return False

    async def reap(self, timeout: float = 15.0) -> int | None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.proc.returncode

    async def start(self, failpoint: str | None = None) -> None:
        for _ in range(3):
            if await self.launch(failpoint):
                return
            failpoint = None
        self.h.broken = "a bot process did not come up three times in a row"
        self.h.all_done.set()

    async def stop(self) -> int | None:
        """SIGTERM the running process and wait for it."""
        self.up = False
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        rc = await self.reap(STOP_TIMEOUT)
        if rc is None:
            self.proc.kill()
            rc = await self.reap()
            print("  ! a bot process did not stop within 20 s of SIGTERM; killed")
        return rc

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.up

    async def killer(self) -> None:
        """Kill the process at random moments (or let an armed failpoint do it), restart it."""
        h = self.h
        while not h.all_done.is_set():
            assert self.proc is not None
            sent = self.sent_at_launch
            deadline = time.monotonic() + FIRST_ANSWER_WAIT
            while (
                h.fake.sent == sent
                and time.monotonic() < deadline
                and self.proc.poll() is None
                and not h.all_done.is_set()
            ):
                await h.fake.wait_any(0.2)
            if h.fake.sent != sent and self.launches > 1:
                h.answer_seconds.append(h.fake.sent_clock[sent] - self.launched_at)
            low, high = FAILPOINT_FALLBACK if self.armed else KILL_DELAY
            deadline = time.monotonic() + h.rng.uniform(low, high)
            while (
                time.monotonic() < deadline and self.proc.poll() is None and not h.all_done.is_set()
            ):
                await asyncio.sleep(0.01)
            if h.all_done.is_set():
                return
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGKILL)
                self.up = False
                h.record_kill("random", self.armed)
                await self.reap()
            else:
                self.up = False
                rc = self.proc.returncode
                logged = "failpoint" in self.log_path(self.launches).read_text(errors="replace")
                if rc == -signal.SIGKILL and self.armed and logged:
                    h.record_kill(f"failpoint:{self.armed.split(':')[0]}", self.armed)
                else:
                    h.record_kill(f"died rc={rc}", self.armed)
            failpoint = None
            if h.rng.random() < h.args.failpoint_share:
                count = h.rng.randint(*FAILPOINT_COUNT)
                failpoint = f"{h.rng.choice(FAILPOINTS)}:{count}"
            await self.start(failpoint)


class Harness:
    """The bot processes and the chats driven against them."""

    def __init__(
        self,
        fake: SoakBotApi,
        knowledge: Knowledge,
        data_dir: Path,
        args: argparse.Namespace,
        database_url: str | None = None,
    ) -> None:
        self.fake, self.knowledge, self.data_dir, self.args = fake, knowledge, data_dir, args
        self.database_url = database_url
        self.webhook = args.processes > 1 or args.postgres
        self.rng = random.Random(args.seed)
        self.t0 = time.monotonic()
        self.balancer = f"http://127.0.0.1:{free_port()}/tg"  # nobody listens: the fake balances
        self.secret = secrets.token_urlsafe(24)
        self.kills: list[Kill] = []
        self.kill_signal = asyncio.Event()
        self.under_way: dict[int, Chat] = {}
        self.all_done = asyncio.Event()
        self.broken = ""  # set when the product cannot be started at all
        self.log_dir = data_dir.parent / "logs"
        self.log_dir.mkdir(exist_ok=True)
        self.start_seconds: list[float] = []  # launch to ready, per launch (every process)
        self.answer_seconds: list[float] = []  # launch to the next bot message, per restart
        self.bots = [BotProcess(self, n) for n in range(args.processes)]
        if self.webhook:
            fake.webhook_targets = [f"http://127.0.0.1:{b.port}/tg" for b in self.bots]
        self.completed_text = knowledge.message("completed", "ko")
        self.error_text = knowledge.message("error", "ko")

    def clock(self) -> float:
        return time.monotonic() - self.t0

    @property
    def up(self) -> bool:
        """Some process serves (a chat's wait counts only such time)."""
        return any(b.up for b in self.bots)

    async def start(self) -> None:
        """Start every process that is not running (one after another: the first start of
        each builds its knowledge index)."""
        for bot in self.bots:
            if not self.broken and not bot.running():
                await bot.start()

    async def stop(self) -> int | None:
        """SIGTERM every process; the first non-zero exit status, else 0."""
        codes = [await bot.stop() for bot in self.bots]
        return next((rc for rc in codes if rc), codes[0])

    def kill_all(self) -> None:
        for bot in self.bots:
            if bot.proc is not None and bot.proc.poll() is None:  # never leave one running
                bot.proc.kill()
                bot.proc.wait(10)

    async def killer(self) -> None:
        await asyncio.gather(*(bot.killer() for bot in self.bots))

    def record_kill(self, kind: str, armed: str | None) -> None:
        clock = self.clock()
        in_flight = [c.chat_id for c in self.under_way.values() if c.in_flight]
        self.kills.append(Kill(clock, kind, in_flight, list(self.under_way), armed))
        for chat in self.under_way.values():
            chat.kills += 1
            chat.log(clock, f"KILL {kind}" + (" (its turn in flight)" if chat.in_flight else ""))
        self.kill_signal.set()
        self.kill_signal = asyncio.Event()

    # --- a chat ---------------------------------------------------------------------------

    async def wait_message(
        self, chat: Chat, wanted: Callable[[dict[str, Any]], bool], after: int, what: str
    ) -> dict[str, Any] | None:
        """The first bot message from index `after` on that is `wanted`; None when stuck.

        Stuck: `--stuck-seconds` of bot uptime (restarts do not count) without it, or WAIT_CAP.
        An error answer does not end the wait: it may answer another, replayed update.
        """
        signal_ = self.fake.signals[chat.chat_id]
        start = last = time.monotonic()
        uptime = 0.0
        errors_seen = 0
        while True:
            signal_.clear()
            messages = self.fake.messages(chat.chat_id)
            for message in messages[after:]:
                if wanted(message):
                    return message
            errors = sum(self.error_text in text_of(m) for m in messages[after:])
            if errors > errors_seen:
                chat.log(self.clock(), "bot answered with its error message")
                errors_seen = errors
            now = time.monotonic()
            if self.up:
                uptime += now - last
            last = now
            if uptime > self.args.stuck_seconds or now - start > WAIT_CAP or self.broken:
                chat.outcome = "stuck"
                chat.why = f"waited {uptime:.0f} s of bot uptime for {what}"
                chat.log(self.clock(), f"STUCK waiting for {what}")
                for message in messages[after:]:
                    chat.log(self.clock(), f"  bot said since: {short(text_of(message))}")
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(signal_.wait(), 0.5)

    async def hold_for_kill(self, chat: Chat) -> None:
        """Before its last answer, a chat no kill has hit yet waits for the next kill."""
        event = self.kill_signal
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), HOLD_TIMEOUT)

    async def drive(self, chat: Chat, *, hold: bool) -> None:
        """Run one scripted intake from its description to the completion message."""
        fake, script = self.fake, chat.script
        chat.started = time.monotonic()
        self.under_way[chat.chat_id] = chat
        seen = 0
        try:
            for index, step in enumerate(script.steps):
                if step.field is not None:
                    question = self.knowledge.k2.field(script.sub_type, step.field).question.ko

                    def asks(m: dict[str, Any], q: str = question, s: Step = step) -> bool:
                        return q in text_of(m) and (s.button is None or s.button in buttons(m))

                    if await self.wait_message(chat, asks, seen, f"question {step.field}") is None:
                        return
                    chat.in_flight = False
                    chat.log(self.clock(), f"asked {step.field}")
                if hold and index == len(script.steps) - 1 and chat.kills == 0:
                    await self.hold_for_kill(chat)
                messages = fake.messages(chat.chat_id)
                seen = len(messages)
                if step.button:
                    target = next(
                        (m for m in reversed(messages) if step.button in buttons(m)), None
                    )
                    if target is None:  # the bot took the button away again before the press
                        chat.outcome, chat.why = "stuck", f"button {step.button} gone"
                        return
                    update_id = fake.push_callback(
                        chat.chat_id, step.button, message_id=target["message_id"]
                    )
                else:
                    update_id = fake.push_text(chat.chat_id, step.text or "")
                chat.in_flight = True
                chat.pushed.append(step.button or step.text or "")
                chat.log(self.clock(), f"pushed step {index} {step.shown()} (update {update_id})")
            done = await self.wait_message(
                chat, lambda m: self.completed_text in text_of(m), seen, "the completion message"
            )
            if done is not None:
                chat.outcome = "completed"
                chat.finished = time.monotonic()
                chat.log(self.clock(), "completed")
        finally:
            chat.in_flight = False
            self.under_way.pop(chat.chat_id, None)

    async def run_chats(self, chats: list[Chat], *, hold: bool) -> float:
        """Drive the chats, `--concurrency` at a time; the wall time."""
        slots = asyncio.Semaphore(self.args.concurrency)

        async def one(chat: Chat) -> None:
            async with slots:
                await self.drive(chat, hold=hold)

        start = time.monotonic()
        await asyncio.gather(*(one(chat) for chat in chats))
        return time.monotonic() - start

    async def settle(self, timeout: float = 15.0) -> None:
        """Until every update is confirmed and the bot was quiet for a second (bounded)."""
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        sent = self.fake.sent
        while time.monotonic() < deadline:
            if self.fake.sent != sent:
                sent, quiet_since = self.fake.sent, time.monotonic()
            if self.fake.pending_updates == 0 and time.monotonic() - quiet_since > 1.0:
                return
            await asyncio.sleep(0.1)


def intake_bot() -> Path:
    beside = Path(sys.executable).parent / "intake-bot"
    return beside if beside.exists() else ROOT / ".venv" / "bin" / "intake-bot"


# --- what the records say -------------------------------------------------------------------


@dataclass
class Outcome:
    session: str | None
    status: str | None
    sessions: int
    facts: dict[str, str]
    answers: Counter
    inbox: list[str]  # the chat's inbox rows: update id, processed or not, failure if any


class Records:
    """The records database the bot wrote: records.db, or PostgreSQL (`url`), read only."""

    def __init__(self, path: Path | None = None, *, url: str | None = None) -> None:
        self.path, self.url = path, url

    @contextlib.contextmanager
    def rows(self) -> Any:
        """A function (sql with ? placeholders, params) -> rows as dicts."""
        if self.url:
            import psycopg
            from psycopg.rows import dict_row

            with psycopg.connect(self.url, row_factory=dict_row) as conn:
                yield lambda sql, params=(): conn.execute(sql.replace("?", "%s"), params).fetchall()
            return
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
        conn.row_factory = sqlite3.Row
        try:
            yield lambda sql, params=(): [dict(r) for r in conn.execute(sql, params).fetchall()]
        finally:
            conn.close()


def read_outcomes(records: Records, chats: list[Chat]) -> dict[int, Outcome]:
    """Per chat: its completed session (else its latest), facts, user_text counts, inbox."""
    with records.rows() as query:
        outcomes = {}
        for chat in chats:
            rows = query(
                "select id, status from chatsession where chat_id = ? order by started_at",
                (chat.chat_id,),
            )
            completed = [r for r in rows if r["status"] == "completed"]
            last = (completed or rows or [{"id": None, "status": None}])[-1]
            session, status = last["id"], last["status"]
            facts = {
                r["key"]: r["value_json"]
                for r in query(
                    "select key, value_json from casefact where session_id = ?", (session,)
                )
            }
            answers = Counter(
                r["user_text"]
                for r in query("select user_text from chatturn where session_id = ?", (session,))
            )
            inbox = []
            for r in query(
                "select * from inboxupdate where chat_id = ? order by update_id", (chat.chat_id,)
            ):
                done = "processed" if r["processed_at"] else "UNPROCESSED"
                failure = r.get("failure")
                inbox.append(
                    f"{r['update_id']} {done}" + (f" failure={failure}" if failure else "")
                )
            outcomes[chat.chat_id] = Outcome(session, status, len(rows), facts, answers, inbox)
        return outcomes


def unprocessed_inbox(records: Records) -> int:
    with records.rows() as query:
        rows = query("select count(*) as n from inboxupdate where processed_at is null")
        return rows[0]["n"]


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


# --- the run --------------------------------------------------------------------------------


@dataclass
class Run:
    reference: list[Chat]
    chats: list[Chat]
    expected: dict[str, Outcome]
    outcomes: dict[int, Outcome]
    first_start: float
    reference_wall: float
    soak_wall: float
    leftover: int
    stop_rc: int | None


async def check_reference(
    h: Harness, reference: list[Chat], records: Records
) -> dict[str, Outcome]:
    """Per script, the outcome every soak intake must reach; {} (and a report) if it failed."""
    outcomes = read_outcomes(records, reference)
    expected: dict[str, Outcome] = {}
    problems = []
    for chat in reference:
        out = outcomes[chat.chat_id]
        if chat.outcome != "completed" or out.status != "completed":
            problems.append(f"chat {chat.chat_id} ({chat.script.name}): {chat.why or out.status}")
            continue
        known = expected.setdefault(chat.script.name, out)
        if (known.facts, known.answers) != (out.facts, out.answers):
            problems.append(f"chat {chat.chat_id} ({chat.script.name}) differs from its twin")
    if not problems and len(expected) == len(SCRIPTS):
        return expected
    print("the reference run (no kills) failed; nothing to compare against:")
    for line in problems:
        print(f"  {line}")
    for chat in reference:
        if chat.outcome != "completed":
            print(f"  chat {chat.chat_id}:")
            for event in chat.events[-12:]:
                print(f"    {event}")
    return {}


async def exercise(h: Harness, records: Records) -> Run | None:
    """Start, reference run, soak with kills, clean stop."""
    fake, args = h.fake, h.args
    print(f"fake Bot API {fake.url}; data {h.data_dir}; starting the bot …", flush=True)
    await h.start()
    if h.broken:
        print(h.broken)
        return None
    first_start = h.start_seconds[0]

    # Warm-up (lazy loads of the first turn are not the reference's cost), then the reference.
    warm = Chat(WARMUP_CHAT, SCRIPTS[0])
    fake.push_text(WARMUP_CHAT, "안녕하세요")
    await h.wait_message(warm, lambda m: True, 0, "the warm-up answer")
    reference = [
        Chat(REFERENCE_CHAT + i, SCRIPTS[i % len(SCRIPTS)])
        for i in range(max(len(SCRIPTS), args.concurrency))
    ]
    print(f"reference: {len(reference)} intakes, no kills …", flush=True)
    reference_wall = await h.run_chats(reference, hold=False)
    await h.settle()
    expected = await check_reference(h, reference, records)
    if not expected:
        await h.stop()
        return None

    chats = [Chat(SOAK_CHAT + i, SCRIPTS[i % len(SCRIPTS)]) for i in range(args.intakes)]
    print(
        f"soak: {len(chats)} intakes, concurrency {args.concurrency}, seed {args.seed} …",
        flush=True,
    )
    killer = asyncio.create_task(h.killer())
    try:
        soak_wall = await h.run_chats(chats, hold=True)
    finally:
        h.all_done.set()
        await killer
    if not all(bot.running() for bot in h.bots):
        h.all_done.clear()
        await h.start()  # clean processes drain what a failpoint left behind
    await h.settle()
    stop_rc = await h.stop()
    return Run(
        reference=reference,
        chats=chats,
        expected=expected,
        outcomes=read_outcomes(records, chats),
        first_start=first_start,
        reference_wall=reference_wall,
        soak_wall=soak_wall,
        leftover=unprocessed_inbox(records),
        stop_rc=stop_rc,
    )


def story(events: list[str]) -> list[str]:
    """A defective chat's events from its last two pushes on, long runs of kills shortened."""
    pushes = [i for i, event in enumerate(events) if " pushed " in event]
    tail = events[pushes[-2] if len(pushes) > 1 else 0 :]
    out: list[str] = []
    run: list[str] = []
    for event in [*tail, ""]:
        if " KILL " in event:
            run.append(event)
            continue
        out += run if len(run) <= 4 else [*run[:2], f"  … {len(run) - 3} more kills …", run[-1]]
        run = []
        if event:
            out.append(event)
    return out


def report(h: Harness, run: Run, args: argparse.Namespace) -> int:
    """Print the table (and every defect seen); the exit code."""
    chats, expected, outcomes = run.chats, run.expected, run.outcomes
    lost: list[str] = []
    lost_open = 0  # facts lost in intakes the records still show open
    duplicates: list[str] = []
    missing: dict[int, list[str]] = {}  # answers sent whose question-answer row is absent
    duplicate_rows = extra_facts = 0
    for chat in chats:
        out, ref = outcomes[chat.chat_id], expected[chat.script.name]
        for key, value in ref.facts.items():
            if out.facts.get(key) != value:
                got = out.facts.get(key, "missing")
                lost.append(f"chat {chat.chat_id} ({chat.script.name}) {key}: {value} -> {got}")
                lost_open += out.status != "completed"
        extra_facts += len(set(out.facts) - set(ref.facts))
        for text, count in out.answers.items():
            if count > ref.answers.get(text, 0):
                duplicate_rows += count - ref.answers.get(text, 0)
                duplicates.append(
                    f"chat {chat.chat_id} ({chat.script.name}) {text!r} x{count} "
                    f"(reference x{ref.answers.get(text, 0)})"
                )
        gone = [t for t in dict.fromkeys(chat.pushed) if out.answers.get(t, 0) < ref.answers[t]]
        if gone:
            missing[chat.chat_id] = gone
        if chat.outcome == "completed" and out.status != "completed":
            chat.outcome, chat.why = "stuck", f"the bot said completed, the records {out.status}"
    stuck = [c for c in chats if c.outcome != "completed"]
    stuck_closed = [c for c in stuck if outcomes[c.chat_id].status == "completed"]

    kinds = Counter(k.kind for k in h.kills)
    points = Counter(k.kind.split(":", 1)[1] for k in h.kills if k.kind.startswith("failpoint:"))
    soak_durations = [c.finished - c.started for c in chats if c.finished and c.started]
    ref_durations = [c.finished - c.started for c in run.reference if c.finished and c.started]
    n_ref = len(run.reference)
    rows = [
        ("intakes run", f"{len(chats)}", f"{n_ref}"),
        ("intakes completed (summary received)", f"{len(chats) - len(stuck)}", f"{n_ref}"),
        ("facts lost", f"{len(lost)}", "-"),
        ("  of them in intakes left open", f"{lost_open}", "-"),
        ("duplicate question-answer rows", f"{duplicate_rows}", "-"),
        ("intakes stuck", f"{len(stuck)}", "0"),
        ("  open in the records", f"{len(stuck) - len(stuck_closed)}", "-"),
        ("  completed in the records, completion reply missing", f"{len(stuck_closed)}", "-"),
        ("intakes killed during (>= 1 kill)", f"{sum(c.kills > 0 for c in chats)}", "-"),
        ("kills", f"{len(h.kills)}", "0"),
        ("  random-time SIGKILL", f"{kinds.get('random', 0)}", "-"),
        ("  at a failpoint", f"{points.total()}", "-"),
    ]
    rows += [(f"    {point}", f"{points[point]}", "-") for point in FAILPOINTS]
    rows += [
        (f"  died otherwise ({kind})", f"{n}", "-")
        for kind, n in kinds.items()
        if kind.startswith("died")
    ]
    rows += [
        ("  with a failpoint armed", f"{sum(bool(k.armed) for k in h.kills)}", "-"),
        ("kills with a turn in flight", f"{sum(bool(k.in_flight) for k in h.kills)}", "-"),
        ("restarts", f"{len(h.start_seconds) - len(h.bots)}", "0"),
        (
            "mean restart-to-ready s",
            f"{mean(h.start_seconds[len(h.bots) :]):.2f}",
            "-",
        ),
        ("mean restart-to-first-answer s", f"{mean(h.answer_seconds):.2f}", "-"),
        ("first start s (builds the index)", "-", f"{run.first_start:.2f}"),
        ("wall time s", f"{run.soak_wall:.1f}", f"{run.reference_wall:.1f}"),
        (
            "wall s per intake",
            f"{run.soak_wall / len(chats):.2f}",
            f"{run.reference_wall / n_ref:.2f}",
        ),
        ("mean intake duration s", f"{mean(soak_durations):.2f}", f"{mean(ref_durations):.2f}"),
        ("other: answers sent with no history row", f"{sum(map(len, missing.values()))}", "0"),
        ("other: facts beyond the reference", f"{extra_facts}", "0"),
        ("other: chats with > 1 session", f"{sum(o.sessions > 1 for o in outcomes.values())}", "0"),
        ("other: inbox rows unprocessed at the end", f"{run.leftover}", "-"),
    ]
    print()
    print(
        f"crash soak: {len(chats)} intakes of {len(SCRIPTS)} scripts "
        f"({', '.join(s.name for s in SCRIPTS)}), concurrency {args.concurrency}, "
        f"seed {args.seed}, failpoint share {args.failpoint_share}; final SIGTERM rc={run.stop_rc}"
    )
    header = ("", "soak (kills)", "reference (no kills)")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(3)]
    for row in (header, *rows):
        _, *values = (cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join([row[0].ljust(widths[0]), *values]))

    if lost or duplicates or stuck or missing:
        print("\nproduct defects seen (the bot logs name chats by keyed tags, bot/chat_tags.py):")
        for line in lost[:20]:
            print(f"  fact lost: {line}")
        for line in duplicates[:20]:
            print(f"  duplicate answer row: {line}")
        shown = stuck[:12] + [c for c in chats if c.chat_id in missing and c not in stuck][:8]
        for chat in shown:
            out = outcomes[chat.chat_id]
            what = f"stuck: {chat.why}" if chat in stuck else "answer without history row"
            print(f"  chat {chat.chat_id} ({chat.script.name}) {what}")
            print(f"    records: session {out.session} status {out.status}")
            if chat.chat_id in missing:
                print(f"    answers sent with no history row: {missing[chat.chat_id]}")
            print(f"    inbox: {'; '.join(out.inbox)}")
            for event in story(chat.events):
                print(f"    {event}")
    return 1 if lost or duplicate_rows or stuck else 0


async def soak(args: argparse.Namespace, base: Path) -> int:
    data_dir = base / "data"
    if not args.postgres:
        return await soak_on(args, data_dir, Records(data_dir / "records.db"))
    from tests.postgres import PostgresServer

    with PostgresServer() as server:
        server.create_database("soak")
        url = server.url("soak")
        return await soak_on(args, data_dir, Records(url=url), url)


async def soak_on(
    args: argparse.Namespace, data_dir: Path, records: Records, url: str | None = None
) -> int:
    async with SoakBotApi() as fake:
        h = Harness(fake, default_knowledge(), data_dir, args, url)
        try:
            run = await exercise(h, records)
        finally:
            h.kill_all()
    return 2 if run is None else report(h, run, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intakes", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--failpoint-share", type=float, default=0.4, help="share of restarts with a failpoint"
    )
    parser.add_argument(
        "--stuck-seconds", type=float, default=60.0, help="bot uptime without progress = stuck"
    )
    parser.add_argument("--keep", action="store_true", help="keep the data dir and print its path")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="records and checkpoints on a temporary PostgreSQL; the bot in webhook mode",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="bot processes (more than 1 needs --postgres)"
    )
    args = parser.parse_args()
    if args.processes < 1 or (args.processes > 1 and not args.postgres):
        parser.error("--processes N > 1 needs --postgres (SQLite belongs to one process)")
    base = Path(tempfile.mkdtemp(prefix="intake-soak-"))
    code = 2
    try:
        code = asyncio.run(soak(args, base))
    finally:
        if args.keep:
            print(f"kept: {base} (data/, and logs/bot-NNNN.log: one log per process start)")
        else:
            shutil.rmtree(base, ignore_errors=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
