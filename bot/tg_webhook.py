"""Webhook mode around the Application: the server started, Telegram told where to post, and the
server stopped again when the bot stops.

The server (bot/webhook.py) answers on the path of INTAKE_WEBHOOK_URL at
INTAKE_WEBHOOK_LISTEN:INTAKE_WEBHOOK_PORT, refuses a request without INTAKE_WEBHOOK_SECRET and
stores each update in the inbox before its HTTP answer (`store_batch`, bot/tg_polling.py), which
also queues it to the Application.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from telegram import Update
from telegram.ext import Application

from bot.config import Settings
from bot.engine import Engine
from bot.tg_polling import store_batch
from bot.webhook import make_app, serve, webhook_path

log = logging.getLogger(__name__)


def check_webhook_settings(settings: Settings) -> None:
    """Exit with a hint unless webhook mode has its URL and secret."""
    if not (settings.intake_webhook_url and settings.intake_webhook_secret):
        raise SystemExit(
            "webhook mode needs INTAKE_WEBHOOK_URL and INTAKE_WEBHOOK_SECRET (see README)"
        )


@contextlib.asynccontextmanager
async def webhook_served(
    app: Application, engine: Engine, settings: Settings
) -> AsyncIterator[None]:
    """Serve the webhook and register it with Telegram while the body runs; on leaving, the
    server stops, so no new update is taken while the queued ones finish."""
    url = settings.intake_webhook_url
    server = make_app(
        webhook_path(url),
        settings.intake_webhook_secret,
        lambda raws: store_batch(app, engine, raws),
    )
    runner = await serve(server, settings.intake_webhook_listen, settings.intake_webhook_port)
    try:
        await app.bot.set_webhook(
            url, secret_token=settings.intake_webhook_secret, allowed_updates=Update.ALL_TYPES
        )
        log.info(
            "bot started as @%s; webhook on %s:%s",
            app.bot.username,
            settings.intake_webhook_listen,
            settings.intake_webhook_port,
        )
        yield
    finally:
        await runner.cleanup()
