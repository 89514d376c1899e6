"""Runs the people-as-they-write conversations (tests/conversations/*.yaml) through the console
(`intake-bot chat --jsonl`, one process per conversation, real SQLite files) and scores them.

A conversation is a simulated person, not a fixed transcript (the bot chooses what to ask):

```yaml
- id: ko-loan-emphatic          # unique
  lang: ko
  persona: emphatic             # upset | vague | emphatic | correcting | asks back | in danger | ...
  opening: ["작년 3월에 친구한테 300만원 빌려줬는데 안 갚아요"]   # the first messages
  gives: {0: [amount, incident_date]}   # facts stated by opening message i (asking them = repeated)
  danger: [0]                   # opening messages that must get a safety reply (others must not)
  answers:                      # what the person types when the bot asks a field
    counterparty: "친구 김철수요"
    evidence: ["있다니까요"]      # a list: successive answers when the field is asked again
  interject:                    # said when the bot first asks `after`, before answering it
    - {after: evidence, say: "이거 소송하면 이길 수 있어요?", danger: false, gives: []}
  after_summary: ["아 금액이 350만원이에요"]   # sent once the summary is out
  case_hint: "돈을 빌려줬는데 못 받았어요"     # sent if the case-type picker has no fitting button
  expect:
    sub_type: LOAN
    facts: {amount: 3000000, incident_date: {months_ago: 20}}
    must_not: {amount: [30000000]}
  known_gap: "..."              # a failure not fixed yet: expected to fail until it is
```

Expected dates are computed here with plain date arithmetic from the run's date in Asia/Seoul:
`{days_ago: N}`, `{months_ago: N}` (a `YYYY-MM` month), `{years_ago: N, month: M}` (`YYYY-MM`),
`{last_weekday: fri, weeks_back: 1}` (the Friday of the previous Monday-Sunday week: where the
bot asks which day "last Friday" means, the person presses that one),
`{this_year_month: M}`; anything else is compared as written.

A safety reply is the first message of a reply naming 112, 119, 1366 or 109 that is neither the
summary (📋) nor a question of the intake (which start with the progress line).
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml

import clock
from tests.support import BUILD_WAIT, WAIT

CONVERSATIONS = Path(__file__).resolve().parent / "conversations"
ZONE = ZoneInfo("Asia/Seoul")
MAX_TURNS = 40
HOTLINE = re.compile(r"(?<!\d)(112|119|1366|109)(?!\d)")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
UNKNOWN = {"ko": "잘 모르겠어요", "en": "I don't know"}


def load(only: str | None = None) -> list[dict[str, Any]]:
    """Every conversation of the set (or the one with id `only`), in file order."""
    found = []
    for path in sorted(CONVERSATIONS.glob("*.yaml")):
        for conv in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            conv["file"] = path.name
            found.append(conv)
    ids = [c["id"] for c in found]
    if len(ids) != len(set(ids)):
        raise ValueError("conversation ids repeat")
    return [c for c in found if only is None or c["id"] == only]


def expected_value(value: Any, today: date) -> Any:
    """A conversation's expected value, with relative dates worked out for `today`."""
    if not isinstance(value, dict):
        return value
    if "days_ago" in value:
        return (today - timedelta(days=value["days_ago"])).isoformat()
    if "months_ago" in value:
        month = today.year * 12 + today.month - 1 - value["months_ago"]
        return f"{month // 12:04d}-{month % 12 + 1:02d}"
    if "years_ago" in value:
        return f"{today.year - value['years_ago']:04d}-{value['month']:02d}"
    if "this_year_month" in value:
        return f"{today.year:04d}-{value['this_year_month']:02d}"
    if "last_weekday" in value:
        monday = today - timedelta(days=today.weekday(), weeks=value.get("weeks_back", 1))
        return (monday + timedelta(days=WEEKDAYS.index(value["last_weekday"]))).isoformat()
    return value


@dataclass
class Score:
    """What one conversation came to."""

    id: str
    right: int = 0
    wrong: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    refused: int = 0
    safety_due: int = 0
    safety_missed: list[str] = field(default_factory=list)
    safety_false: list[str] = field(default_factory=list)
    pickers: int = 0
    dates_chosen: int = 0  # "which day do you mean?" answered with a button
    unplanned: list[str] = field(default_factory=list)
    completed: bool = False
    turns: int = 0
    error: str | None = None


class Console:
    """One `intake-bot chat --jsonl` process: a line in, exactly one JSON line out."""

    def __init__(self, command: list[str], data_dir: Path, chat_id: int, cwd: Path) -> None:
        env = {**os.environ, "INTAKE_DATA_DIR": str(data_dir), "PYTHONIOENCODING": "utf-8"}
        env.pop("TELEGRAM_BOT_TOKEN", None)
        self.proc = subprocess.Popen(
            [*command, "chat", "--jsonl", "--chat-id", str(chat_id)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=env,
            cwd=cwd,
        )
        # Output lines arrive through a thread, so a reply is awaited with a limit (WAIT):
        # a console that hangs fails its conversation instead of the whole run.
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, name="console-out", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout
        for out in self.proc.stdout:
            self._lines.put(out)
        self._lines.put("")  # the console ended

    def send(self, line: str | dict[str, Any], wait: float = WAIT) -> dict[str, Any]:
        """Send one line (text, or a JSON object) and wait for the one reply line."""
        raw = json.dumps(line, ensure_ascii=False) if isinstance(line, dict) else line
        assert self.proc.stdin
        self.proc.stdin.write(raw.replace("\n", " ") + "\n")
        self.proc.stdin.flush()
        start = time.monotonic()
        try:
            out = self._lines.get(timeout=wait)
        except queue.Empty:
            raise RuntimeError(f"no reply within {wait:.0f}s (INTAKE_TEST_WAIT)") from None
        if not out:
            raise RuntimeError(f"console ended after {time.monotonic() - start:.1f}s")
        return json.loads(out)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _texts(reply: dict[str, Any]) -> list[str]:
    return [m["text"] for m in reply.get("messages", [])]


def _safety_reply(reply: dict[str, Any]) -> bool:
    texts = _texts(reply)
    if not texts:
        return False
    first = texts[0].lstrip()
    return bool(HOTLINE.search(first)) and not first.startswith(("📋", "진행 상황", "Progress"))


def _choices(reply: dict[str, Any]) -> list[str]:
    return [c["data"] for m in reply.get("messages", []) for c in m.get("choices", [])]


class Person:
    """Plays one conversation against a console and scores the replies as they come."""

    def __init__(self, conv: dict[str, Any], console: Console, today: date) -> None:
        self.conv, self.console, self.today = conv, console, today
        self.score = Score(conv["id"])
        self.given: set[str] = set()  # facts stated or validly answered so far
        self.asked_count: dict[str, int] = {}
        self.pending_interject = list(conv.get("interject") or [])
        self.last_field: str | None = None

    def say(self, line: str | dict[str, Any], *, danger: bool = False, what: str = "") -> dict:
        reply = self.console.send(line)
        self.score.turns += 1
        if isinstance(line, str) or "text" in line:
            if danger:
                self.score.safety_due += 1
                if not _safety_reply(reply):
                    self.score.safety_missed.append(what or str(line)[:40])
            elif _safety_reply(reply):
                self.score.safety_false.append(what or str(line)[:40])
        if "cmd:resume" in _choices(reply):  # held after a suicide alert: the person goes on
            reply = self.console.send({"choice": "cmd:resume"})
            self.score.turns += 1
        return reply

    def play(self) -> None:
        conv = self.conv
        danger = set(conv.get("danger") or [])
        gives = {int(k): v for k, v in (conv.get("gives") or {}).items()}
        reply: dict[str, Any] = {}
        for index, text in enumerate(conv.get("opening") or []):
            reply = self.say(text, danger=index in danger)
            self.given |= set(gives.get(index, []))
        while self.score.turns < MAX_TURNS:
            state, asked = reply.get("state"), reply.get("field")
            if state == "COMPLETED":
                self.score.completed = True
                for text in conv.get("after_summary") or []:
                    reply = self.say(text)
                return
            if state == "CONFIRM_CASE_TYPE":
                self.score.pickers += 1
                reply = self._pick(reply)
                continue
            if state == "INIT" or asked is None:
                reply = self.say(conv.get("case_hint") or (conv.get("opening") or ["?"])[0])
                continue
            reply = self._answer(asked, reply)

    def _pick(self, reply: dict[str, Any]) -> dict[str, Any]:
        want = self.conv["expect"]["sub_type"]
        offered = _choices(reply)
        if f"st:{want}" in offered:
            return self.say({"choice": f"st:{want}"})
        main = self.conv["expect"].get("case_type")
        for data in offered:
            if data.startswith("ct:") and data != "ct:*" and (main is None or data == f"ct:{main}"):
                if main is not None or self.score.pickers > 2:
                    return self.say({"choice": data})
        return self.say(self.conv.get("case_hint") or UNKNOWN[self.conv["lang"]])

    def _answer(self, asked: str, reply: dict[str, Any]) -> dict[str, Any]:
        if "a:changes:confirm" in _choices(reply):
            # The bot shows a correction the person made (old -> new): they say yes.
            return self.say({"choice": "a:changes:confirm"})
        days = [d for d in _choices(reply) if d.startswith(f"a:{asked}:on:")]
        if days:  # "which day do you mean?": the person presses the day they meant
            self.score.dates_chosen += 1
            meant = expected_value((self.conv["expect"].get("facts") or {}).get(asked), self.today)
            return self.say({"choice": next((d for d in days if d.endswith(f":{meant}")), days[0])})
        times = self.asked_count.get(asked, 0)
        if reply.get("state") == "RE_QUESTION":
            self.score.refused += 1
        elif asked in self.given and times == 0:
            self.score.repeated.append(asked)
        elif asked in self.given and asked != self.last_field:
            self.score.repeated.append(asked)
        self.asked_count[asked] = times + 1
        self.last_field = asked
        for item in list(self.pending_interject):
            if item.get("after") == asked:
                self.pending_interject.remove(item)
                reply = self.say(item["say"], danger=bool(item.get("danger")), what=item["say"])
                self.given |= set(item.get("gives") or [])
                if "a:changes:confirm" in _choices(reply):
                    reply = self.say({"choice": "a:changes:confirm"})
                if reply.get("field") != asked or reply.get("state") == "COMPLETED":
                    return reply
        if any(d.startswith(f"a:{asked}:confirm") for d in _choices(reply)):
            return self.say({"choice": f"a:{asked}:confirm"})
        answers = (self.conv.get("answers") or {}).get(asked)
        if answers is None:
            self.score.unplanned.append(asked)
            return self.say(UNKNOWN[self.conv["lang"]])
        if isinstance(answers, list):
            answer = answers[min(times, len(answers) - 1)]
        else:
            answer = answers
        self.given.add(asked)
        if isinstance(answer, dict):
            return self.say(answer)
        return self.say(str(answer))


def _facts_by_chat(command: list[str], data_dir: Path, cwd: Path) -> dict[int, dict]:
    env = {**os.environ, "INTAKE_DATA_DIR": str(data_dir)}
    out = subprocess.run(
        [*command, "export", "--all", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=WAIT,
        check=True,
    ).stdout
    rows = json.loads(out) if out.strip().startswith("[") else []
    latest: dict[int, dict] = {}
    for row in rows:  # newest first: keep the chat's latest intake that is not cancelled
        if row.get("status") != "cancelled":
            latest.setdefault(row["chat_id"], row)
    return latest


def _judge(score: Score, conv: dict[str, Any], row: dict | None, today: date) -> None:
    expect = conv.get("expect") or {}
    facts = (row or {}).get("facts") or {}
    if row and expect.get("sub_type") and row.get("sub_case_type") != expect["sub_type"]:
        score.wrong.append(f"sub_type={row.get('sub_case_type')}")
    for key, raw in (expect.get("facts") or {}).items():
        want = expected_value(raw, today)
        got = facts.get(key)
        if got is None:
            score.lost.append(key)
        elif got == want or (isinstance(want, list) and sorted(got) == sorted(want)):
            score.right += 1
        else:
            score.wrong.append(f"{key}={got!r} (want {want!r})")
    for key, values in (expect.get("must_not") or {}).items():
        for bad in values:
            if facts.get(key) == expected_value(bad, today):
                score.wrong.append(f"{key}={bad!r} (must not)")


def run(
    conversations: list[dict[str, Any]],
    data_dir: Path,
    *,
    command: list[str] | None = None,
    cwd: Path | None = None,
    workers: int = 2,
) -> list[Score]:
    """Play every conversation (each in its own chat and console process) and score it."""
    command = command or [str(Path(sys.executable).parent / "intake-bot")]
    cwd = cwd or Path.cwd()
    data_dir.mkdir(parents=True, exist_ok=True)
    today = clock.now(ZONE).date()  # the test clock (tests/conftest.py) the consoles share
    warm = Console(command, data_dir, 999_999, cwd)  # builds the index once, before the pool
    warm.send({"command": "/status"}, wait=BUILD_WAIT)
    warm.close()

    def play(item: tuple[int, dict[str, Any]]) -> Score:
        chat, conv = item
        console = Console(command, data_dir, 10_000 + chat, cwd)
        person = Person(conv, console, today)
        try:
            person.play()
        except Exception as exc:  # noqa: BLE001 - one broken conversation is reported, not fatal
            person.score.error = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            console.close()
        return person.score

    with ThreadPoolExecutor(max_workers=workers) as pool:
        scores = list(pool.map(play, enumerate(conversations)))
    rows = _facts_by_chat(command, data_dir, cwd)
    for chat, (conv, score) in enumerate(zip(conversations, scores, strict=True)):
        _judge(score, conv, rows.get(10_000 + chat), today)
    return scores


def totals(scores: list[Score]) -> dict[str, int]:
    """Figures across the set."""
    return {
        "conversations": len(scores),
        "facts_right": sum(s.right for s in scores),
        "facts_wrong": sum(len(s.wrong) for s in scores),
        "facts_lost": sum(len(s.lost) for s in scores),
        "asked_again": sum(len(s.repeated) for s in scores),
        "refused_answers": sum(s.refused for s in scores),
        "safety_due": sum(s.safety_due for s in scores),
        "safety_missed": sum(len(s.safety_missed) for s in scores),
        "safety_false_alarms": sum(len(s.safety_false) for s in scores),
        "case_pickers": sum(s.pickers for s in scores),
        "dates_chosen": sum(s.dates_chosen for s in scores),
        "completed": sum(s.completed for s in scores),
        "errors": sum(s.error is not None for s in scores),
        "turns": sum(s.turns for s in scores),
    }
