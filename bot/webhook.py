"""Webhook mode: Telegram POSTs each update to INTAKE_WEBHOOK_URL; the update is stored in the
inbox before the HTTP answer, so an acknowledged update survives a crash.

Every request must carry Telegram's `X-Telegram-Bot-Api-Secret-Token` with INTAKE_WEBHOOK_SECRET
(compared in constant time); anything else is refused with 403 and never touches the inbox.
A body that is not an update gets 400 (Telegram does not retry it): not JSON, too large, nested
deeper than any update, not an object, or without an integer update id in the inbox's 64-bit
range (bot/raw_updates.py); only a storage failure gets 500, so Telegram delivers the update
again. Several processes may serve one URL behind a balancer
on one PostgreSQL database: the inbox drops a second delivery, and the chat lock and the inbox
order keep each chat's turns single and in order (bot/updates.py).
"""

from __future__ import annotations

import hmac
import logging
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from bot.raw_updates import MAX_BODY, NotAnUpdate, parse_update

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def webhook_path(url: str) -> str:
    """The path the server answers on: that of the public URL (e.g. /telegram)."""
    return urlsplit(url).path or "/"


def make_app(path: str, secret: str, store: Any) -> web.Application:
    """The aiohttp application: `await store([raw_update])` stores and queues one update."""

    async def receive(request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), secret.encode()):
            log.warning("webhook request without the right secret token; refused")
            return web.Response(status=403, text="forbidden")
        try:
            raw = parse_update(await request.read())
        except web.HTTPRequestEntityTooLarge:  # over client_max_size, refused while read
            return _refused("too large")
        except NotAnUpdate as exc:
            return _refused(str(exc))
        try:
            await store([raw])
        except Exception:  # noqa: BLE001 - not stored: Telegram must send it again
            log.exception("update %s could not be stored; answered 500", raw["update_id"])
            return web.Response(status=500, text="not stored")
        return web.Response(status=200, text="ok")

    # One byte more than an update may have, so that parse_update itself says "too large".
    app = web.Application(client_max_size=MAX_BODY + 1)
    app.router.add_post(path, receive)
    return app


def _refused(reason: str) -> web.Response:
    """400: Telegram gives the body up instead of sending it again and again."""
    log.warning("webhook body refused: %s", reason)
    return web.Response(status=400, text=reason)


async def serve(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Start listening; the caller cleans the runner up."""
    runner = web.AppRunner(app, access_log=None)  # access lines would carry nothing useful
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
