"""Benchmark: cold start of the console chat and its peak memory, next to a bare import floor.

    .venv/bin/python bench/cold_start.py [--runs 5] [--baseline-root ../before] [--json]

Each subject is a fresh process, timed from just before it is spawned:

- `floor`: `python -c "import telegram.ext, langgraph.graph"`, the libraries alone (time to
  exit);
- `console`: this checkout's `intake-bot chat --jsonl` (run as `python -m bot.cli` from its
  root) on a temporary INTAKE_DATA_DIR whose knowledge index and databases were built by an
  untimed warm-up run first; it is sent `/help` and then a first message, and closes at EOF;
- `console@<dir>` with `--baseline-root DIR`: the same for another checkout (e.g.
  `git worktree add /tmp/before <commit>`), on its own warmed data directory.

Columns: `ready` is the time to the answer to `/help` (imports, the index and the databases
opened, the graphs compiled, the morphological analyser loaded), `first turn` the time to the
answer to the first message after it (for the floor: the time to exit), `peak MB` the
process's peak resident memory (ru_maxrss of the child, from wait4). The subjects take turns
run by run (this machine's speed drifts from one minute to the next) and the median of
`--runs` runs is shown, with each figure over the floor's. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT = 600.0  # seconds; a warm-up builds the knowledge index first
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
FIRST_MESSAGE = "전세 보증금 1억을 집주인이 안 돌려줘요"
FLOOR = "import telegram.ext, langgraph.graph"  # what any bot on these libraries loads


@dataclass
class Subject:
    """One kind of process to start, and what its runs measured."""

    name: str
    root: Path | None  # a checkout whose console runs; None for the import floor
    data_dir: Path | None = None
    ready: list[float] = field(default_factory=list)  # seconds
    first_turn: list[float] = field(default_factory=list)  # seconds
    peak_mb: list[float] = field(default_factory=list)


def environment(subject: Subject) -> dict[str, str]:
    """This environment without proxies, the subject's checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if k not in PROXIES}
    env["INTAKE_LOG_LEVEL"] = "WARNING"
    if subject.root is not None:
        env["PYTHONPATH"] = str(subject.root)
        env["INTAKE_DATA_DIR"] = str(subject.data_dir)
    return env


def read_line(proc: subprocess.Popen, deadline: float) -> str:
    """The child's next output line; raises when it exits or the deadline passes first."""
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            if not line:
                break
            return line
    proc.kill()
    raise RuntimeError(f"{proc.args} gave no answer (exit status {proc.poll()}); see its log")


def wait_peak(proc: subprocess.Popen) -> float:
    """Reap the child; its peak resident memory in MB (ru_maxrss is in KiB on Linux)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
    return usage.ru_maxrss / 1024


def run_once(subject: Subject, chat_id: int) -> tuple[float, float, float]:
    """(ready s, first turn s, peak MB) of one fresh process."""
    if subject.root is None:
        command = [sys.executable, "-c", FLOOR]
        started = time.perf_counter()
        proc = subprocess.Popen(command, env=environment(subject))
        peak = wait_peak(proc)
        elapsed = time.perf_counter() - started
        return elapsed, elapsed, peak
    command = [sys.executable, "-m", "bot.cli", "chat", "--jsonl", "--chat-id", str(chat_id)]
    log = (subject.data_dir.parent / f"{subject.data_dir.name}.log").open("a")
    started = time.perf_counter()
    with log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            command,
            cwd=subject.root,
            env=environment(subject),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            encoding="utf-8",
        )
    assert proc.stdin is not None
    deadline = time.monotonic() + READY_TIMEOUT
    proc.stdin.write("/help\n")
    proc.stdin.flush()
    read_line(proc, deadline)
    ready = time.perf_counter() - started
    proc.stdin.write(FIRST_MESSAGE + "\n")
    proc.stdin.flush()
    read_line(proc, deadline)
    first_turn = time.perf_counter() - started
    proc.stdin.close()
    return ready, first_turn, wait_peak(proc)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def rows_of(subjects: list[Subject]) -> list[dict[str, Any]]:
    floor = subjects[0]
    rows = []
    for s in subjects:
        ready, first, peak = median(s.ready), median(s.first_turn), median(s.peak_mb)
        rows.append(
            {
                "subject": s.name,
                "runs": len(s.ready),
                "ready_ms": 1000 * ready,
                "first_turn_ms": 1000 * first,
                "peak_mb": peak,
                "ready_vs_floor": ready / median(floor.ready),
                "peak_vs_floor": peak / median(floor.peak_mb),
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = [
        ("subject", "subject", "{}"),
        ("runs", "runs", "{}"),
        ("ready ms", "ready_ms", "{:.0f}"),
        ("first turn ms", "first_turn_ms", "{:.0f}"),
        ("peak MB", "peak_mb", "{:.0f}"),
        ("ready / floor", "ready_vs_floor", "{:.1f}x"),
        ("peak / floor", "peak_vs_floor", "{:.1f}x"),
    ]
    table = [[title for title, _, _ in columns]]
    table += [[form.format(r[key]) for _, key, form in columns] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    for line in table:
        print("  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline-root", type=Path, help="also the console of another checkout (e.g. ../before)"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    subjects = [Subject("floor", None), Subject("console", ROOT)]
    if args.baseline_root is not None:
        root = args.baseline_root.resolve()
        subjects.append(Subject(f"console@{root.name}", root))
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        for number, s in enumerate(subjects):
            if s.root is not None:  # the index and databases built, untimed
                s.data_dir = Path(tmp) / f"data{number}"
                print(f"warming up {s.name} (builds its index) ...", file=sys.stderr)
                run_once(s, chat_id=1)
        for run in range(args.runs):
            for s in subjects:
                ready, first, peak = run_once(s, chat_id=100 + run)
                s.ready.append(ready)
                s.first_turn.append(first)
                s.peak_mb.append(peak)
            print(f"run {run + 1} of {args.runs} done", file=sys.stderr)
    rows = rows_of(subjects)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows)


if __name__ == "__main__":
    main()
