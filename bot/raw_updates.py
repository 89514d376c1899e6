"""An update as Telegram sent it, read before (or without) python-telegram-bot.

The edges (the webhook, `getUpdates`) take only what can be an update: a JSON object whose
`update_id` is an integer in the 64-bit signed range the inbox stores (never a bool: `true` is
not update 1), parsed within bounds of size and nesting, so a hostile or broken body is refused
with a reason instead of failing deep inside. For an update set aside, only its kind and chat
are kept (`update_type`, `chat_id_of`): enough to diagnose it, never the person's words.
"""

from __future__ import annotations

import json
from typing import Any

from telegram import Update

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # what the inbox's BIGINT columns hold
MAX_BODY = 1024 * 1024  # bytes; Telegram's updates are far smaller
# Levels of objects and arrays; a real update stays under 15 (a pressed button's keyboard:
# update > callback_query > message > reply_markup > rows > row > button > web_app).
MAX_DEPTH = 48
UPDATE_TYPES = frozenset(Update.ALL_TYPES)


class NotAnUpdate(ValueError):
    """A body that is not an update the bot could take; the message says why (no content)."""


def is_int64(value: Any) -> bool:
    """An integer (not a bool) that fits a signed 64-bit column."""
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def update_id_of(raw: Any) -> int | None:
    """The update id of a raw update, or None when it has none the inbox could store."""
    if not isinstance(raw, dict):
        return None
    update_id = raw.get("update_id")
    return update_id if is_int64(update_id) else None


def nesting_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How many objects and arrays deep `value` goes (a scalar is 0), counted without
    recursion; counting stops once it passes `limit`."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def parse_update(body: bytes) -> dict[str, Any]:
    """The update in a request body; raises NotAnUpdate saying why it is none.

    Too large, not UTF-8 JSON, nested deeper than any update (a body nested thousands deep
    makes the JSON decoder raise RecursionError, caught here), not an object, or without an
    update id the inbox can store.
    """
    if len(body) > MAX_BODY:
        raise NotAnUpdate("too large")
    try:
        raw = json.loads(body)
    except RecursionError as exc:
        raise NotAnUpdate("nested too deep") from exc
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an over-long integer
        raise NotAnUpdate("not JSON") from exc
    if nesting_depth(raw) > MAX_DEPTH:
        raise NotAnUpdate("nested too deep")
    if update_id_of(raw) is None:
        raise NotAnUpdate("not an update")
    return raw


def update_type(raw: dict[str, Any]) -> str | None:
    """The kind of an update (message, callback_query, ...), or "other" for a kind this
    python-telegram-bot does not know; None when it carries nothing but its id."""
    kinds = [key for key in raw if key != "update_id"]
    if not kinds:
        return None
    return next((key for key in kinds if key in UPDATE_TYPES), "other")


def chat_id_of(raw: dict[str, Any]) -> int | None:
    """The chat an update belongs to, read from the raw JSON as far as it goes: the chat of
    its object or of that object's message, else its sender (a private chat's id is its
    person's). None when no such id is there."""
    for key in raw:
        item = raw[key]
        if key == "update_id" or not isinstance(item, dict):
            continue
        message = item.get("message")
        for holder, field in (
            (item, "chat"),
            (message, "chat"),
            (item, "from"),
            (item, "user"),
        ):
            owner = holder.get(field) if isinstance(holder, dict) else None
            found = owner.get("id") if isinstance(owner, dict) else None
            if is_int64(found):
                return found
    return None
