"""Command line: `intake-bot run | chat | export`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from bot.config import Settings


def setup_logging(level: str) -> None:
    """Operator logs: time, level, logger, message (ids and states only, never message text)."""
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("httpx", "httpcore", "aiosqlite", "telegram.ext.Application"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


async def _chat(settings: Settings, args: argparse.Namespace) -> None:
    from bot.console import run_console
    from bot.engine import Engine

    engine = await Engine.open(settings)
    try:
        await run_console(engine, chat_id=args.chat_id, jsonl=args.jsonl)
    finally:
        await engine.close()


async def _run(settings: Settings) -> None:
    from bot.telegram_app import run_bot

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await run_bot(settings, stop)


async def _export(settings: Settings, args: argparse.Namespace) -> None:
    from bot import export
    from db.engine import create_records_engine

    records = await create_records_engine(settings.intake_data_dir)
    try:
        rows = await export.collect(engine=records, include_open=args.all)
    finally:
        await records.dispose()
    text = export.render(rows, args.format)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {len(rows)} intakes to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `intake-bot` console script."""
    parser = argparse.ArgumentParser(
        prog="intake-bot", description="Legal intake bot (Telegram and console)."
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="run the Telegram bot (long polling)")
    chat = sub.add_parser("chat", help="offline console chat with the same engine and database")
    chat.add_argument("--jsonl", action="store_true", help="one JSON line out for each line in")
    chat.add_argument("--chat-id", type=int, default=1, help="conversation to use (default 1)")
    exp = sub.add_parser("export", help="export intake summaries")
    exp.add_argument("--format", choices=["json", "csv", "md"], default="json")
    exp.add_argument(
        "--all", action="store_true", help="include open intakes with their missing fields"
    )
    exp.add_argument("--out", help="file to write (standard output without it)")
    args = parser.parse_args(argv)

    settings = Settings()
    setup_logging(settings.intake_log_level if args.cmd == "run" else "WARNING")
    if args.cmd == "chat":
        asyncio.run(_chat(settings, args))
    elif args.cmd == "run":
        asyncio.run(_run(settings))
    else:
        asyncio.run(_export(settings, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
