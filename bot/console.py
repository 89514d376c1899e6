"""Console channel: the same engine and database as Telegram, for the offline demo and scripts."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
from typing import Any, TextIO

from bot.engine import Engine, Inbound, Reply
from graphs.common.text import valid_unicode

log = logging.getLogger(__name__)

CONSOLE_USER_ID = 0
# What Telegram marks as a bot command at the start of a message: "/help", "/lang@intake_bot en"
_COMMAND = re.compile(r"/[A-Za-z0-9_]{1,32}(?:@\w+)?(?:\s|$)")


def parse_line(line: str, chat_id: int) -> Inbound:
    """A console line: plain text, or a JSON object {"text"}, {"choice"} or {"command"}."""
    stripped = line.strip()
    obj: Any = None
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            obj = None
    if isinstance(obj, dict):
        if "choice" in obj:
            return Inbound(
                chat_id=chat_id, kind="choice", data=str(obj["choice"]), user_id=CONSOLE_USER_ID
            )
        if "command" in obj:
            return parse_command(str(obj["command"]), chat_id)
        if "text" in obj and _COMMAND.match(str(obj["text"]).strip()):
            # a text that opens with "/help" is a command, as Telegram marks it one (legal_set17
            # S1's "/help" was kept as the answer to the question asked)
            return parse_command(str(obj["text"]), chat_id)
        if "text" in obj:
            return Inbound(
                chat_id=chat_id, kind="text", text=str(obj["text"]), user_id=CONSOLE_USER_ID
            )
    if stripped.startswith("/") and len(stripped) > 1:
        return parse_command(stripped, chat_id)
    return Inbound(chat_id=chat_id, kind="text", text=line.rstrip("\n"), user_id=CONSOLE_USER_ID)


def parse_command(text: str, chat_id: int) -> Inbound:
    """'/export json all' -> command 'export' with args; '/' or '' is an unknown command ''."""
    name, *args = text.strip().lstrip("/").split() or [""]
    return Inbound(
        chat_id=chat_id,
        kind="command",
        command=name.split("@")[0],
        args=tuple(args),
        user_id=CONSOLE_USER_ID,
    )


def reply_json(reply: Reply) -> str:
    """One output line of --jsonl mode."""
    messages = [
        {
            "text": m["text"],
            "choices": [{"label": c["label"], "data": c["data"]} for c in m.get("choices", [])],
        }
        for m in reply.messages
    ]
    return json.dumps(
        {
            "messages": messages,
            "field": reply.field,
            "progress": reply.progress,
            "state": reply.state,
            "alerts": [hit.code for hit in reply.alerts],  # safety rules the input fired
        },
        ensure_ascii=False,
    )


def print_human(reply: Reply, out: TextIO) -> list[dict[str, str]]:
    """Print replies with numbered choices; return the choices of the last message."""
    choices: list[dict[str, str]] = []
    for m in reply.messages:
        out.write(f"\n🤖 {m['text']}\n")
        choices = m.get("choices", [])
        for number, choice in enumerate(choices, start=1):
            out.write(f"   {number}) {choice['label']}\n")
    out.flush()
    return choices


async def _answer(engine: Engine, inbound: Inbound) -> Reply:
    """The engine's reply; should the engine fail, the person is told and the console goes on."""
    try:
        return await engine.handle(inbound)
    except Exception:  # noqa: BLE001 - one bad turn must not end the conversation
        log.exception("console turn failed")
        reply = Reply()
        reply.add(engine.knowledge.message("error", engine.settings.intake_default_lang))
        return reply


async def run_console(
    engine: Engine,
    *,
    chat_id: int,
    jsonl: bool,
    domain: str | None = None,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
) -> None:
    """Read lines until EOF; the conversation stays resumable."""
    loop = asyncio.get_running_loop()
    for stream in (stdin, stdout):  # bytes that are not UTF-8 never end the console
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    choices: list[dict[str, str]] = []
    if domain is not None and jsonl:  # chosen before the first line, with no output line of its own
        await engine.use_domain(chat_id, domain)
    if not jsonl:
        stdout.write(
            "intake-bot console — type your answer, a number to pick a choice, /help, Ctrl-D to quit\n"
        )
        start = "/start" if domain is None else f"/start {domain}"
        choices = print_human(await _answer(engine, parse_command(start, chat_id)), stdout)
    while True:
        if not jsonl:
            stdout.write("\n> ")
            stdout.flush()
        line = await loop.run_in_executor(None, stdin.readline)
        if not line:
            break
        line = valid_unicode(line)
        if jsonl:
            reply = await _answer(engine, parse_line(line, chat_id))
            stdout.write(reply_json(reply) + "\n")
            stdout.flush()
            continue
        text = line.strip()
        if text.isdigit() and choices and 1 <= int(text) <= len(choices):
            inbound = Inbound(
                chat_id=chat_id,
                kind="choice",
                data=choices[int(text) - 1]["data"],
                user_id=CONSOLE_USER_ID,
            )
        else:
            inbound = parse_line(line, chat_id)
        choices = print_human(await _answer(engine, inbound), stdout)
