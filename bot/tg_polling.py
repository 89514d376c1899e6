"""Taking updates in durably: each getUpdates batch (or webhook POST) is stored in the inbox
(db) before it is confirmed to Telegram, then queued to the Application.

An update python-telegram-bot cannot read is set aside in the inbox, alone. After a crash the
stored, unfinished updates are recovered (`recover_inbox`); with several processes on one
database, those a dead process left are taken over (`sweep_inbox`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import warnings
from typing import Any

from telegram import Update
from telegram.error import EndPointNotFound, InvalidToken, NetworkError
from telegram.ext import Application
from telegram.warnings import PTBUserWarning

from bot import failpoints
from bot.engine import Engine
from bot.raw_updates import chat_id_of, update_id_of, update_type
from bot.updates import chat_key
from db import repo

log = logging.getLogger(__name__)

POLL_TIMEOUT = 25  # seconds of Telegram long polling
POLL_READ_MARGIN = 10  # seconds a long poll may take beyond its timeout before it is abandoned
MAX_BACKOFF = 30.0
SWEEP_EVERY = 10.0  # seconds between looks for updates a dead process left (shared database)
SWEEP_AGE = 20.0  # an update stored this long ago and still unfinished is taken over


def read_update(raw: dict[str, Any], bot: Any) -> tuple[Update | None, str | None]:
    """(the update, None), or (None, why not) for an update python-telegram-bot cannot read."""
    try:
        return Update.de_json(copy.deepcopy(raw), bot), None
    except Exception as exc:  # noqa: BLE001 - whatever the payload, it is set aside, not fatal
        return None, f"unreadable: {type(exc).__name__}"


async def recover_inbox(app: Application, engine: Engine) -> int:
    """Process updates stored but not finished before a crash, oldest first."""
    pending = await repo.inbox_pending(engine=engine.records)
    for row in pending:
        update, failure = read_update(json.loads(row.payload_json), app.bot)
        if update is None:
            log.error("stored update %s %s; set aside", row.update_id, failure)
            await repo.inbox_mark_failed(
                engine=engine.records, update_id=row.update_id, reason=failure or ""
            )
            continue
        await app.update_queue.put(update)
    if pending:
        log.info("recovered %d unprocessed updates from the inbox", len(pending))
    return len(pending)


async def fetch_updates(bot: Any, offset: int | None, timeout: int) -> list[Any]:
    """One long poll of getUpdates, as the raw JSON Telegram sent.

    Raw, so that an update is stored exactly as sent and one that python-telegram-bot cannot
    read is set aside alone (`Bot.get_updates` would fail the whole batch, again and again).
    """
    params: dict[str, Any] = {"timeout": timeout, "allowed_updates": Update.ALL_TYPES}
    if offset is not None:
        params["offset"] = offset
    with warnings.catch_warnings():  # PTB suggests get_updates, which parses: see above
        warnings.simplefilter("ignore", PTBUserWarning)
        result = await bot.do_api_request(
            "getUpdates", api_kwargs=params, read_timeout=timeout + POLL_READ_MARGIN
        )
    return result if isinstance(result, list) else []


async def store_batch(app: Application, engine: Engine, raw_updates: list[Any]) -> int | None:
    """Store a batch in the inbox (one transaction), queue the new readable updates.

    An update python-telegram-bot cannot read is stored set aside, without its payload.

    Returns the offset that confirms the batch, or None when it held no update id at all.
    """
    entries, read = [], []
    for raw in raw_updates:
        update_id = update_id_of(raw)
        if update_id is None:
            log.error("an item without a storable update_id; skipped")
            continue
        update, failure = read_update(raw, app.bot)
        if update is None:  # set aside: its chat as far as the raw JSON tells, for /forget
            chat_id = chat_id_of(raw)
        else:  # the key the chat's lock and catch-up use: a press without a chat is its sender's
            chat_id = chat_key(update)
        entries.append(repo.InboxEntry(update_id, chat_id, raw, failure, update_type(raw)))
        read.append((update_id, update, failure))
    stored = await repo.inbox_add_batch(engine=engine.records, updates=entries)
    failpoints.reach("inbox_stored")
    shared = engine.chat_locks.shared
    for update_id, update, failure in read:
        if update_id not in stored:  # stored before, or twice in this batch
            if (
                shared
                and update is not None
                and not await repo.inbox_is_processed(engine=engine.records, update_id=update_id)
            ):  # delivered again after the process that stored it died: taken over here (the
                await app.update_queue.put(update)  # chat lock and the inbox run it once)
                continue
            log.info("update %s delivered twice; dropped", update_id)
            continue
        stored.discard(update_id)
        if update is None:
            log.error("update %s %s; set aside in the inbox", update_id, failure)
        else:
            await app.update_queue.put(update)
    return max((e[0] for e in entries), default=-1) + 1 if entries else None


async def poll_updates(
    app: Application, engine: Engine, stop: asyncio.Event, *, timeout: int = POLL_TIMEOUT
) -> None:
    """Long-poll getUpdates; store each batch in the inbox before the next call confirms it.

    No update and no failure ends the loop: network and storage errors are logged and retried
    with back-off (an unstored batch is simply not confirmed, so Telegram sends it again). Only
    a rejected token ends it, and `run_bot` then takes the process down.
    """
    last = await repo.inbox_max_update_id(engine=engine.records)
    offset = last + 1 if last is not None else None
    backoff = 1.0
    while not stop.is_set():
        try:
            raw_updates = await fetch_updates(app.bot, offset, timeout)
            offset = await store_batch(app, engine, raw_updates) or offset
            backoff = 1.0
            continue
        except (InvalidToken, EndPointNotFound):  # the token was rejected (do_api_request's
            raise  # word for a 401/404 once the bot is initialised): nothing to retry
        except NetworkError as exc:  # TimedOut included
            log.warning("getUpdates failed (%s); retrying in %.0f s", type(exc).__name__, backoff)
        except Exception:  # noqa: BLE001 - storage or anything else: logged, never fatal
            log.exception("polling step failed; the batch stays unconfirmed; retrying")
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF)


async def start_polling(
    app: Application, engine: Engine, stop: asyncio.Event
) -> asyncio.Task[None]:
    """Drop any webhook (Telegram serves getUpdates only without one) and poll in a task."""
    await app.bot.delete_webhook()
    log.info("bot started as @%s; polling", app.bot.username)
    return asyncio.create_task(poll_updates(app, engine, stop))


async def sweep_inbox(app: Application, engine: Engine, stop: asyncio.Event) -> None:
    """Several processes: take over stored updates left unfinished by a process that died.

    Each is queued here; the chat lock and the inbox order process it once, in its place.
    """
    queued: dict[int, float] = {}
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        await asyncio.sleep(SWEEP_EVERY)
        try:
            stale = await repo.inbox_pending(engine=engine.records, older_than=SWEEP_AGE)
        except Exception:  # noqa: BLE001 - storage trouble: logged, tried again later
            log.exception("inbox sweep failed; trying again")
            continue
        now = loop.time()
        queued = {k: at for k, at in queued.items() if now - at < 6 * SWEEP_EVERY}
        for row in stale:
            if row.update_id in queued:
                continue
            update, _ = read_update(json.loads(row.payload_json), app.bot)
            if update is not None:
                queued[row.update_id] = now
                log.info("update %s left unfinished; taken over", row.update_id)
                await app.update_queue.put(update)
