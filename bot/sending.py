"""Sending after a turn: the send is retried, never the turn.

A reply goes out after its turn has changed the intake and the records. A send that is slow
(python-telegram-bot gives up after 5 s), meets a dropped connection or Telegram's flood
control is tried again, with back-off, a bounded number of times, waiting as long as a
RetryAfter asks; one that still fails is raised to the caller, which logs it and lets the
update end as handled. Failing the update instead would set it aside after its change was
applied and tell the person to try again, which applies it a second time.

A send that timed out may have reached Telegram all the same, so a retry can show a message
twice: better than a reply lost.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from telegram.error import BadRequest, NetworkError, RetryAfter

log = logging.getLogger(__name__)

T = TypeVar("T")

SEND_ATTEMPTS = 4  # the first try and three more
BACKOFF = (1.0, 2.0, 4.0)  # seconds before the second, third and fourth attempt
MAX_RETRY_AFTER = 60.0  # flood control asking for longer: given up, not waited for


def retry_after_seconds(error: RetryAfter) -> float:
    """How long Telegram asks to wait (an int or a timedelta, by PTB_TIMEDELTA)."""
    with warnings.catch_warnings():  # PTB warns that the int form is deprecated
        warnings.simplefilter("ignore")
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def pause_before_retry(error: Exception, attempt: int) -> float | None:
    """Seconds to wait before trying again after `attempt` failed with `error`; None when
    trying again cannot help (a refusal such as a bad request or a blocked bot, the last
    attempt spent, or flood control asking for over MAX_RETRY_AFTER)."""
    if attempt >= SEND_ATTEMPTS:
        return None
    if isinstance(error, RetryAfter):
        wait = retry_after_seconds(error)
        return wait if wait <= MAX_RETRY_AFTER else None
    if isinstance(error, NetworkError) and not isinstance(error, BadRequest):
        return BACKOFF[min(attempt, len(BACKOFF)) - 1]  # TimedOut, a dropped connection
    return None


async def send_retrying(send: Callable[[], Awaitable[T]], *, method: str) -> T:
    """`await send()` (one Bot API request), tried again while that can help; the last error
    is raised. `method` names the request in logs (which carry no text and no chat)."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return await send()
        except (NetworkError, RetryAfter) as error:
            wait = pause_before_retry(error, attempt)
            if wait is None:
                raise
            log.warning(
                "%s failed (%s), attempt %d of %d; trying again in %.1f s",
                method,
                type(error).__name__,
                attempt,
                SEND_ATTEMPTS,
                wait,
            )
        await asyncio.sleep(wait)
