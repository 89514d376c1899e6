"""A fake Telegram Bot API server on 127.0.0.1 that speaks the real wire format.

The real ``telegram.ext.Application`` runs against it unchanged: point ``base_url`` and
``base_file_url`` at ``FakeBotApi.url`` (or use ``FakeBotApi.application_builder()``), push
updates from the test, and read back what the bot sent. Errors use the real API's status codes
and descriptions so the bot's error paths run as they would in production.

After ``setWebhook`` the fake delivers updates as Telegram does: an HTTP POST of each update to
the webhook URL (or, round robin, to ``FakeBotApi.webhook_targets``), kept and retried until the
bot answers 2xx; ``getUpdates`` then answers 409 until ``deleteWebhook``.

``slow_down`` and ``flood_control`` make the next calls of a method slow (a client that gives up
first leaves it undone) or refused with 429 and ``retry_after``, as a busy Telegram does.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import itertools
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from telegram.ext import ApplicationBuilder
from telegram.request import HTTPXRequest, RequestData

import clock
from tests.support import WAIT

DEFAULT_TOKEN = "123456:TEST"
LOOPBACK = "127.0.0.1"
MAX_TEXT_LENGTH = 4096
MAX_CAPTION_LENGTH = 1024
MAX_CALLBACK_DATA_BYTES = 64
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # getFile refuses bigger files, like the real API
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
DEFAULT_GROUP_USER_ID = 1_000_001
WEBHOOK_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
WEBHOOK_MAX_CONNECTIONS = 40  # setWebhook's default; the API allows 1-100
WEBHOOK_TIMEOUT = 30.0  # seconds a delivery may take before it counts as failed
LOOPBACK_HOSTS = frozenset({LOOPBACK, "localhost", "::1"})
WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete "
    "the webhook first"
)

# Parameters whose form value is a plain string; every other value arrives JSON-encoded
# (PTB json.dumps()es ints, bools, lists and dicts but sends str as is).
STRING_PARAMS = frozenset(
    """text caption parse_mode action callback_query_id inline_message_id file_id url
    language_code business_connection_id message_effect_id secret_token ip_address
    document photo thumbnail""".split()
)
CHAT_ACTIONS = frozenset(
    """typing upload_photo record_video upload_video record_voice upload_voice upload_document
    choose_sticker find_location record_video_note upload_video_note""".split()
)
MESSAGE_UPDATE_KEYS = tuple(
    """message edited_message channel_post edited_channel_post business_message
    edited_business_message""".split()
)
INLINE_BUTTON_ACTIONS = tuple(
    """url callback_data web_app login_url switch_inline_query switch_inline_query_current_chat
    switch_inline_query_chosen_chat copy_text callback_game pay""".split()
)
HTML_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)


def _now() -> int:
    """Telegram's server time (Unix seconds) on the product's clock, as the tests set it."""
    return int(clock.now().timestamp())


QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"

_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)([^<>]*)>")
_ATTR_RE = re.compile(r"""([A-Za-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_CHAR_REF_RE = re.compile(r"&(#[0-9]+|#[xX][0-9A-Fa-f]+|lt|gt|amp|quot);")
_NAMED_REFS = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_COMMAND_RE = re.compile(r"[a-z0-9_]{1,32}")


class BotApiError(Exception):
    """An error answer of the Bot API: ``{"ok": false, "error_code", "description"}``, with
    ``parameters`` (e.g. ``retry_after``) when the real API gives them."""

    def __init__(
        self, description: str, error_code: int = 400, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.description = description
        self.error_code = error_code
        self.parameters = parameters


@dataclass
class UploadedFile:
    """One multipart file part of a request, as the server received it."""

    file_name: str
    mime_type: str
    content: bytes = field(repr=False)

    def __repr__(self) -> str:
        return f"UploadedFile({self.file_name!r}, {self.mime_type!r}, {len(self.content)} bytes)"


@dataclass
class _StoredFile:
    file_id: str
    file_unique_id: str
    file_path: str
    file_size: int
    content: bytes | None  # None: a file from a raw payload; served as filler bytes

    def data(self) -> bytes:
        if self.content is not None:
            return self.content
        seed = self.file_id.encode()
        return (seed * (self.file_size // len(seed) + 1))[: self.file_size]


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _unique_id(file_id: str) -> str:
    return "AQAD" + hashlib.sha1(file_id.encode()).hexdigest()[:12]


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Strip Telegram's HTML subset into plain text plus entities (UTF-16 offsets).

    Raises BotApiError like the real API for tags Telegram does not support (``<br>``, ``<p>``)
    and for unbalanced tags, so a formatting bug fails in tests rather than in production.
    """

    def fail(reason: str, index: int) -> BotApiError:
        offset = len(source[:index].encode())
        return BotApiError(f"Bad Request: can't parse entities: {reason} at byte offset {offset}")

    out: list[str] = []
    position = 0  # in UTF-16 code units, the unit of Telegram entity offsets
    stack: list[tuple[str, str | None, int, dict[str, Any]]] = []
    entities: list[dict[str, Any]] = []
    index = 0
    while index < len(source):
        char = source[index]
        if char == "<":
            tag = _TAG_RE.match(source, index)
            if tag is None:
                raise fail('Unexpected character "<"', index)
            name, rest = tag.group(2).lower(), tag.group(3)
            if tag.group(1):
                if not stack or stack[-1][0] != name:
                    expected = f', expected "</{stack[-1][0]}>"' if stack else ""
                    raise fail(f'Unmatched end tag "</{name}>"{expected}', index)
                _, entity_type, start, extra = stack.pop()
                if entity_type and position > start:
                    entities.append(
                        {"type": entity_type, "offset": start, "length": position - start, **extra}
                    )
            else:
                entity_type = HTML_ENTITY_TYPES.get(name)
                attrs = {k.lower(): a or b or c for k, a, b, c in _ATTR_RE.findall(rest)}
                if entity_type is None or (name == "span" and attrs.get("class") != "tg-spoiler"):
                    raise fail(f'Unsupported start tag "{name}"', index)
                extra: dict[str, Any] = {}
                if name == "a":
                    entity_type = "text_link" if attrs.get("href") else None
                    extra = {"url": attrs.get("href", "")} if entity_type else {}
                elif name == "tg-emoji":
                    extra = {"custom_emoji_id": attrs.get("emoji-id", "")}
                elif name == "blockquote" and "expandable" in rest.lower().split():
                    entity_type = "expandable_blockquote"
                stack.append((name, entity_type, position, extra))
            index = tag.end()
            continue
        if char == "&" and (ref := _CHAR_REF_RE.match(source, index)):
            code = ref.group(1)
            if code in _NAMED_REFS:
                char = _NAMED_REFS[code]
            else:
                char = chr(int(code[2:], 16) if code[1] in "xX" else int(code[1:]))
            index = ref.end()
        else:
            index += 1
        out.append(char)
        position += _utf16_len(char)
    if stack:
        raise BotApiError(
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag "
            f'"{stack[-1][0]}"'
        )
    entities.sort(key=lambda entity: (entity["offset"], -entity["length"]))
    return "".join(out), entities


def modernize_payload(obj: Any) -> Any:
    """Fill fields that today's Bot API always sends but old recorded payloads lack.

    PTB 22 requires them (e.g. ``file_unique_id``, ``Sticker.type``) and, when an update fails to
    parse, only logs it and fetches the same update again forever.
    """
    if isinstance(obj, list):
        return [modernize_payload(item) for item in obj]
    if not isinstance(obj, dict):
        return obj
    result = {key: modernize_payload(value) for key, value in obj.items()}
    if "thumb" in result and "thumbnail" not in result:
        result["thumbnail"] = result.pop("thumb")
    if "file_id" in result:
        result.setdefault("file_unique_id", _unique_id(result["file_id"]))
    if isinstance(result.get("sticker"), dict):
        sticker = result["sticker"]
        sticker.setdefault("type", "regular")
        sticker.setdefault("is_animated", False)
        sticker.setdefault("is_video", False)
    if isinstance(result.get("animation"), dict):
        for key in ("width", "height", "duration"):
            result["animation"].setdefault(key, 0)
    if isinstance(result.get("from"), dict):
        result["from"].setdefault("is_bot", False)
        result["from"].pop("type", None)  # a stray field in some recorded payloads
    return result


class LoopbackOnlyRequest(HTTPXRequest):
    """An HTTPXRequest that refuses every host but 127.0.0.1, so a misdirected bot fails loudly.

    It also ignores proxy environment variables (httpx would otherwise send loopback traffic to a
    proxy). Refused URLs are kept in ``refused``; ``FakeBotApi.stop()`` asserts it stays empty.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("httpx_kwargs", {"trust_env": False})
        super().__init__(**kwargs)
        self.refused: list[str] = []

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[int, bytes]:
        if urlsplit(url).hostname != LOOPBACK:
            self.refused.append(url)
            raise RuntimeError(
                f"network is off in tests: refused {method} {url}; point the bot at FakeBotApi"
            )
        return await super().do_request(url, method, request_data, *args, **kwargs)


def _short(params: dict[str, Any], limit: int = 240) -> str:
    text = json.dumps(params, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _decode_param(name: str, value: Any) -> Any:
    if not isinstance(value, str) or name in STRING_PARAMS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # e.g. chat_id="@channelusername"


def _check_reply_markup(markup: Any) -> dict[str, Any] | None:
    """Validate a reply_markup the way the real API does for the mistakes bots really make."""
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise BotApiError("Bad Request: can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise BotApiError(
                'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup should be an '
                "Array of Arrays"
            )
        for button in itertools.chain.from_iterable(rows):
            if not isinstance(button, dict) or not button.get("text"):
                raise BotApiError("Bad Request: can't parse inline keyboard button: text is empty")
            if sum(action in button for action in INLINE_BUTTON_ACTIONS) != 1:
                raise BotApiError(
                    "Bad Request: can't parse inline keyboard button: Text buttons are "
                    "unallowed in the inline keyboard"
                )
            data = button.get("callback_data")
            if "callback_data" in button and not (
                isinstance(data, str) and 1 <= len(data.encode()) <= MAX_CALLBACK_DATA_BYTES
            ):
                raise BotApiError("Bad Request: BUTTON_DATA_INVALID")
        return markup
    if "keyboard" in markup or markup.get("remove_keyboard") or markup.get("force_reply"):
        return markup
    raise BotApiError("Bad Request: can't parse reply keyboard markup JSON object")


def _inline_only(markup: dict[str, Any] | None) -> dict[str, Any] | None:
    # A Message only ever carries an inline keyboard; reply keyboards belong to the chat.
    return markup if markup and "inline_keyboard" in markup else None


class FakeBotApi:
    """A scripted Telegram Bot API server for end-to-end tests of the real bot application."""

    def __init__(self, token: str = DEFAULT_TOKEN, bot_user: dict[str, Any] | None = None):
        self.token = token
        self.bot_user: dict[str, Any] = bot_user or {
            "id": int(token.split(":", 1)[0]),
            "is_bot": True,
            "first_name": "Test Bot",
            "username": "test_intake_bot",
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }
        self.url = ""
        self.calls: list[tuple[str, dict[str, Any]]] = []  # every (method, params), in order
        self.errors: list[tuple[str, dict[str, Any], str]] = []  # (method, params, description)
        self.downloads: list[str] = []  # file paths fetched from the file route
        self.deleted: list[tuple[int, int]] = []  # (chat_id, message_id) removed by deleteMessage
        self.confirmed_up_to = 0  # highest update_id confirmed by a getUpdates offset
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.webhook: dict[str, Any] | None = None  # url and secret_token set by setWebhook
        # Test hook: deliver round robin to these URLs instead of the webhook URL (a balancer in
        # front of several bot processes).
        self.webhook_targets: list[str] | None = None
        # Every webhook POST: (target URL, update_id, HTTP status or None for no connection).
        self.webhook_attempts: list[tuple[str, int, int | None]] = []
        self.webhook_max_connections = WEBHOOK_MAX_CONNECTIONS
        self.webhook_backoff = (0.1, 2.0)  # seconds before the first retry, and the cap (doubling)
        self._webhook_wake = asyncio.Event()
        self._webhook_loop: asyncio.Task[None] | None = None
        self._webhook_session: aiohttp.ClientSession | None = None
        self._webhook_in_flight: dict[int, asyncio.Task[None]] = {}  # update_id -> its POST
        self._webhook_failures: dict[int, int] = defaultdict(int)  # update_id -> failed POSTs
        self._webhook_retry_at: dict[int, float] = {}  # update_id -> loop time of next POST
        self._webhook_turn = itertools.count()
        self._webhook_last_error: tuple[int, str] | None = None  # (unix time, message)
        self._updates: list[dict[str, Any]] = []  # pending, sorted by update_id
        self._last_update_id = 10_000
        self._chats: dict[int, dict[str, Any]] = {}
        self._last_message_id: dict[int, int] = defaultdict(int)
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._sent: dict[int, list[int]] = defaultdict(list)
        self._documents: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self._photos: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self._chat_actions: dict[int, list[str]] = defaultdict(list)
        self._reply_keyboards: dict[int, dict[str, Any]] = {}
        self._files: dict[str, _StoredFile] = {}
        self._file_counter = itertools.count(1)
        self._callbacks: dict[str, dict[str, Any] | None] = {}  # query id -> answer params
        self._callback_by_update: dict[int, str] = {}
        self._poll_ids = itertools.count(1)
        self._active_poll = 0
        self._update_event = asyncio.Event()
        self._closing = False
        self._runner: web.AppRunner | None = None
        self._guarded_requests: list[LoopbackOnlyRequest] = []
        # Test hooks (slow_down, flood_control): method -> what its next calls meet, in order.
        self._hold_ups: dict[str, list[tuple[str, float]]] = defaultdict(list)
        self.abandoned: list[tuple[str, dict[str, Any]]] = []  # slowed calls whose client left
        self._methods: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]] = {
            name.lower(): (name, handler)
            for name, handler in [
                ("getMe", self._get_me),
                ("getUpdates", self._get_updates),
                ("deleteWebhook", self._delete_webhook),
                ("setWebhook", self._set_webhook),
                ("getWebhookInfo", self._get_webhook_info),
                ("setMyCommands", self._set_my_commands),
                ("getMyCommands", self._get_my_commands),
                ("deleteMyCommands", self._delete_my_commands),
                ("sendMessage", self._send_message),
                ("editMessageText", self._edit_message_text),
                ("editMessageReplyMarkup", self._edit_message_reply_markup),
                ("answerCallbackQuery", self._answer_callback_query),
                ("sendChatAction", self._send_chat_action),
                ("getFile", self._get_file),
                ("sendDocument", self._send_document),
                ("sendPhoto", self._send_photo),
                ("deleteMessage", self._delete_message),
                ("close", self._true),
                ("logOut", self._true),
            ]
        }

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Serve on an ephemeral port of 127.0.0.1 and set ``url``."""
        app = web.Application(client_max_size=MAX_UPLOAD_BYTES + 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle_method)
        app.router.add_get("/file/bot{token}/{file_path:.+}", self._handle_download)
        # handler_cancellation: a long poll whose client went away (PTB cancels it on stop)
        # ends at once instead of lingering until its timeout.
        self._runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=1.0, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://{LOOPBACK}:{port}"

    async def stop(self) -> None:
        """Release long polls, stop serving, and fail if a guarded request left loopback."""
        self._closing = True
        self._wake_pollers()
        await self._stop_webhook_delivery()
        if self._webhook_session is not None:
            await self._webhook_session.close()
            self._webhook_session = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        refused = [url for request in self._guarded_requests for url in request.refused]
        if refused:
            raise AssertionError(f"the bot tried to reach outside the fake: {refused}")

    async def __aenter__(self) -> FakeBotApi:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def application_builder(self) -> ApplicationBuilder:
        """An ApplicationBuilder wired to this fake, whose requests refuse any other host."""
        request = LoopbackOnlyRequest(connection_pool_size=64)
        updates_request = LoopbackOnlyRequest(connection_pool_size=1)
        self._guarded_requests += [request, updates_request]
        return (
            ApplicationBuilder()
            .token(self.token)
            .base_url(f"{self.url}/bot")
            .base_file_url(f"{self.url}/file/bot")
            .request(request)
            .get_updates_request(updates_request)
        )

    # ---------------------------------------------------------------- HTTP layer

    async def _handle_method(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _error_response(401, "Unauthorized")
        name = request.match_info["method"]
        canonical, handler = self._methods.get(name.lower(), (name, None))
        try:
            params = await _read_params(request)
        except BotApiError as error:
            self.calls.append((canonical, {}))
            return self._error(canonical, {}, error)
        self.calls.append((canonical, params))
        if handler is None:
            return self._error(canonical, params, BotApiError("Not Found", 404))
        hold_up = self._hold_ups[canonical.lower()]
        kind, value = hold_up.pop(0) if hold_up else ("", 0.0)
        if kind == "flood":
            seconds = int(value)
            error = BotApiError(
                f"Too Many Requests: retry after {seconds}", 429, {"retry_after": seconds}
            )
            return self._error(canonical, params, error)
        if kind == "slow":
            try:  # a client that gives up first closes the connection: the call is cancelled
                await asyncio.sleep(value)
            except asyncio.CancelledError:
                self.abandoned.append((canonical, params))
                raise
        try:
            result = handler(params)
            if asyncio.iscoroutine(result):
                result = await result
        except BotApiError as error:
            return self._error(canonical, params, error)
        return web.json_response({"ok": True, "result": result}, dumps=_dumps)

    def _error(self, method: str, params: dict[str, Any], error: BotApiError) -> web.Response:
        self.errors.append((method, params, error.description))
        return _error_response(error.error_code, error.description, error.parameters)

    async def _handle_download(self, request: web.Request) -> web.Response:
        path = request.match_info["file_path"]
        stored = next((f for f in self._files.values() if f.file_path == path), None)
        if request.match_info["token"] != self.token or stored is None:
            return _error_response(404, "Not Found")
        self.downloads.append(path)
        return web.Response(body=stored.data(), content_type="application/octet-stream")

    # ---------------------------------------------------------------- Bot API methods

    def _true(self, params: dict[str, Any]) -> bool:
        return True

    def _get_me(self, params: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(self.bot_user)

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise BotApiError(WEBHOOK_CONFLICT, 409)
        self._confirm(int(params.get("offset") or 0))
        limit = min(max(int(params.get("limit") or 100), 1), 100)
        timeout = float(params.get("timeout") or 0)
        # Like the real API, a newer getUpdates ends an older one still waiting with 409.
        poll_id = next(self._poll_ids)
        self._active_poll = poll_id
        self._wake_pollers()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self.webhook is not None:  # set while this poll waited
                raise BotApiError(WEBHOOK_CONFLICT, 409)
            if self._active_poll != poll_id:
                raise BotApiError(
                    "Conflict: terminated by other getUpdates request; make sure that only one "
                    "bot instance is running",
                    409,
                )
            remaining = deadline - loop.time()
            if self._updates or self._closing or remaining <= 0:
                return copy.deepcopy(self._updates[:limit])
            event = self._update_event
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)

    async def _delete_webhook(self, params: dict[str, Any]) -> bool:
        """Back to polling: deliveries stop (one cut short stays pending), getUpdates works."""
        if params.get("drop_pending_updates") and self._updates:
            self._confirm(self._updates[-1]["update_id"] + 1)
        self.webhook = None
        await self._stop_webhook_delivery()
        return True

    async def _set_webhook(self, params: dict[str, Any]) -> bool:
        """Record the webhook as the real API validates it (HTTPS URL, secret_token's alphabet)
        and start delivering pending and future updates to it (see ``_deliver_webhook``).

        Unlike the real API, plain http:// is accepted on loopback, where a test serves no TLS.
        An update a test POSTs to the bot itself (``known()``) is never queued, so never
        delivered twice.
        """
        url = str(params.get("url") or "")
        if not url:
            return await self._delete_webhook(params)
        parts = urlsplit(url)
        if parts.scheme != "https" and not (
            parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS
        ):
            raise BotApiError("Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
            raise BotApiError("Bad Request: secret token contains unallowed characters")
        if params.get("drop_pending_updates") and self._updates:
            self._confirm(self._updates[-1]["update_id"] + 1)
        self.webhook = {"url": url, "secret_token": secret}
        self.webhook_max_connections = min(
            max(int(params.get("max_connections") or WEBHOOK_MAX_CONNECTIONS), 1), 100
        )
        self._wake_pollers()  # a long poll still waiting ends with 409
        if self._webhook_session is None:
            self._webhook_session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),  # in-flight POSTs are capped here
                timeout=aiohttp.ClientTimeout(total=WEBHOOK_TIMEOUT),
            )
        if self._webhook_loop is None or self._webhook_loop.done():
            self._webhook_loop = asyncio.create_task(self._deliver_webhook())
        return True

    def _get_webhook_info(self, params: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "url": (self.webhook or {}).get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": self.pending_updates,
        }
        if self.webhook is not None:
            info["max_connections"] = self.webhook_max_connections
            if self._webhook_last_error is not None:
                info["last_error_date"], info["last_error_message"] = self._webhook_last_error
        return info

    @staticmethod
    def _commands_key(params: dict[str, Any]) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), params.get("language_code") or ""

    def _set_my_commands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise BotApiError("Bad Request: can't parse commands JSON object")
        for command in commands:
            if not _COMMAND_RE.fullmatch(str(command.get("command", ""))):
                raise BotApiError("Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise BotApiError("Bad Request: command description must be 1-256 characters")
        self.commands[self._commands_key(params)] = commands
        return True

    def _get_my_commands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return copy.deepcopy(self.commands.get(self._commands_key(params), []))

    def _delete_my_commands(self, params: dict[str, Any]) -> bool:
        self.commands.pop(self._commands_key(params), None)
        return True

    def _send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._require_chat(params)
        text, entities = self._format(
            params.get("text"), params, "entities", MAX_TEXT_LENGTH, "message text", "message"
        )
        markup = self._apply_reply_markup(chat["id"], params)
        content: dict[str, Any] = {"text": text}
        if entities:
            content["entities"] = entities
        if params.get("link_preview_options"):
            content["link_preview_options"] = params["link_preview_options"]
        return self._store_bot_message(chat, params, content, markup)

    def _edit_message_text(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._editable_message(params)
        if "text" not in message:
            raise BotApiError("Bad Request: there is no text in the message to edit")
        text, entities = self._format(
            params.get("text"), params, "entities", MAX_TEXT_LENGTH, "message text", "message"
        )
        # As in the real API, an edit without reply_markup removes the inline keyboard.
        markup = self._edit_markup(params)
        if (text, entities or None, markup) == (
            message["text"],
            message.get("entities"),
            message.get("reply_markup"),
        ):
            raise BotApiError(NOT_MODIFIED)
        message["text"] = text
        _set_or_drop(message, "entities", entities or None)
        _set_or_drop(message, "reply_markup", markup)
        message["edit_date"] = _now()
        return copy.deepcopy(message)

    def _edit_message_reply_markup(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._editable_message(params)
        markup = self._edit_markup(params)
        if markup == message.get("reply_markup"):
            raise BotApiError(NOT_MODIFIED)
        _set_or_drop(message, "reply_markup", markup)
        message["edit_date"] = _now()
        return copy.deepcopy(message)

    def _answer_callback_query(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if query_id not in self._callbacks or self._callbacks[query_id] is not None:
            raise BotApiError(QUERY_INVALID)  # unknown, or answered already
        if len(str(params.get("text") or "")) > 200:
            raise BotApiError("Bad Request: MESSAGE_TOO_LONG")
        self._callbacks[query_id] = params
        return True

    def _send_chat_action(self, params: dict[str, Any]) -> bool:
        chat = self._require_chat(params)
        action = params.get("action")
        if action not in CHAT_ACTIONS:
            raise BotApiError("Bad Request: wrong parameter action in request")
        self._chat_actions[chat["id"]].append(action)
        return True

    def _get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        stored = self._files.get(str(params.get("file_id", "")))
        if stored is None:
            raise BotApiError("Bad Request: invalid file_id")
        if stored.file_size > MAX_DOWNLOAD_BYTES:
            raise BotApiError("Bad Request: file is too big")
        return {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": stored.file_size,
            "file_path": stored.file_path,
        }

    def _send_document(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._require_chat(params)
        upload = self._upload(params, "document")
        caption, entities = self._caption(params)
        stored, name, mime = upload
        document = {
            "file_name": name,
            "mime_type": mime,
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": stored.file_size,
        }
        markup = self._apply_reply_markup(chat["id"], params)
        message = self._store_bot_message(
            chat, params, {"document": document, **_caption_fields(caption, entities)}, markup
        )
        self._documents[chat["id"]].append(
            {
                "file_name": name,
                "content": stored.data(),
                "caption": caption,
                "mime_type": mime,
                "message_id": message["message_id"],
            }
        )
        return message

    def _send_photo(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._require_chat(params)
        stored, name, _ = self._upload(params, "photo")
        caption, entities = self._caption(params)
        # The fake does not decode images: one size with a plausible resolution.
        size = {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": stored.file_size,
            "width": 800,
            "height": 800,
        }
        markup = self._apply_reply_markup(chat["id"], params)
        message = self._store_bot_message(
            chat, params, {"photo": [size], **_caption_fields(caption, entities)}, markup
        )
        self._photos[chat["id"]].append(
            {
                "file_name": name,
                "content": stored.data(),
                "caption": caption,
                "message_id": message["message_id"],
            }
        )
        return message

    def _delete_message(self, params: dict[str, Any]) -> bool:
        chat = self._require_chat(params)
        key = (chat["id"], int(params.get("message_id") or 0))
        if self._messages.pop(key, None) is None:
            raise BotApiError("Bad Request: message to delete not found")
        self.deleted.append(key)
        return True

    # ---------------------------------------------------------------- method helpers

    def _require_chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if chat_id in (None, ""):
            raise BotApiError("Bad Request: chat_id is empty")
        if isinstance(chat_id, str) and chat_id.lstrip("-").isdigit():
            chat_id = int(chat_id)
        chat = self._chats.get(chat_id) if isinstance(chat_id, int) else None
        if chat is None:
            # A bot can only write to chats that wrote to it first: push an update first.
            raise BotApiError("Bad Request: chat not found")
        return chat

    def _format(
        self,
        text: Any,
        params: dict[str, Any],
        entities_param: str,
        limit: int,
        empty_name: str,
        long_name: str,
    ) -> tuple[str, list[dict[str, Any]]]:
        if text is None or str(text) == "":
            raise BotApiError(f"Bad Request: {empty_name} is empty")
        text = str(text)
        entities = params.get(entities_param) or []
        if str(params.get("parse_mode") or "").upper() == "HTML":
            text, entities = parse_html(text)
        # Markdown modes are passed through unparsed; the fake only understands HTML.
        if not text.strip():
            raise BotApiError(f"Bad Request: {empty_name} is empty")
        if _utf16_len(text) > limit:  # Telegram counts UTF-16 code units
            raise BotApiError(f"Bad Request: {long_name} is too long")
        return text, entities

    def _caption(self, params: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
        if params.get("caption") in (None, ""):
            return None, []
        return self._format(
            params["caption"],
            params,
            "caption_entities",
            MAX_CAPTION_LENGTH,
            "message caption",
            "message caption",
        )

    def _apply_reply_markup(self, chat_id: int, params: dict[str, Any]) -> dict[str, Any] | None:
        markup = _check_reply_markup(params.get("reply_markup"))
        if markup and "keyboard" in markup:
            self._reply_keyboards[chat_id] = markup
        elif markup and markup.get("remove_keyboard"):
            self._reply_keyboards.pop(chat_id, None)
        return _inline_only(markup)

    def _edit_markup(self, params: dict[str, Any]) -> dict[str, Any] | None:
        markup = _check_reply_markup(params.get("reply_markup"))
        if markup is not None and "inline_keyboard" not in markup:
            raise BotApiError("Bad Request: inline keyboard expected")
        return markup

    def _editable_message(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("inline_message_id"):
            raise BotApiError("Bad Request: the fake Bot API has no inline messages")
        chat = self._require_chat(params)
        message = self._messages.get((chat["id"], int(params.get("message_id") or 0)))
        if message is None:
            raise BotApiError("Bad Request: message to edit not found")
        if message.get("from", {}).get("id") != self.bot_user["id"]:
            raise BotApiError("Bad Request: message can't be edited")
        return message

    def _upload(self, params: dict[str, Any], name: str) -> tuple[_StoredFile, str, str]:
        value = params.get(name)
        if isinstance(value, str) and value.startswith("attach://"):
            value = params.get(value.removeprefix("attach://"))
        if isinstance(value, UploadedFile):
            if not value.content:
                raise BotApiError("Bad Request: file must be non-empty")
            suffix = "." + value.file_name.rsplit(".", 1)[-1] if "." in value.file_name else ""
            fields = self._register_file(value.content, kind=f"{name}s", suffix=suffix)
            return self._files[fields["file_id"]], value.file_name, value.mime_type
        if isinstance(value, str) and value in self._files:
            stored = self._files[value]
            return stored, stored.file_path.rsplit("/", 1)[-1], "application/octet-stream"
        raise BotApiError("Bad Request: wrong file identifier/HTTP URL specified")

    def _store_bot_message(
        self,
        chat: dict[str, Any],
        params: dict[str, Any],
        content: dict[str, Any],
        markup: dict[str, Any] | None,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat["id"]),
            "from": {key: self.bot_user[key] for key in ("id", "is_bot", "first_name", "username")},
            "chat": copy.deepcopy(chat),
            "date": _now(),
        }
        reply_to = (params.get("reply_parameters") or {}).get("message_id") or params.get(
            "reply_to_message_id"
        )
        if reply_to:
            original = self._messages.get((chat["id"], int(reply_to)))
            if original is not None:
                replied = copy.deepcopy(original)
                replied.pop("reply_to_message", None)
                message["reply_to_message"] = replied
            elif not (params.get("reply_parameters") or {}).get("allow_sending_without_reply"):
                raise BotApiError("Bad Request: message to be replied not found")
        message.update(content)
        if markup is not None:
            message["reply_markup"] = markup
        self._messages[(chat["id"], message["message_id"])] = message
        self._sent[chat["id"]].append(message["message_id"])
        return copy.deepcopy(message)

    def _next_message_id(self, chat_id: int) -> int:
        self._last_message_id[chat_id] += 1
        return self._last_message_id[chat_id]

    def _register_file(
        self,
        content: bytes | None,
        *,
        kind: str,
        suffix: str = "",
        file_id: str | None = None,
        file_size: int | None = None,
    ) -> dict[str, Any]:
        number = next(self._file_counter)
        file_id = file_id or f"FAKE{kind.upper().replace('/', '')}{number:06d}"
        stored = _StoredFile(
            file_id=file_id,
            file_unique_id=_unique_id(file_id),
            file_path=f"{kind}/file_{number}{suffix}",
            file_size=len(content) if content is not None else int(file_size or 0),
            content=content,
        )
        self._files[file_id] = stored
        return {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": stored.file_size,
        }

    def _confirm(self, offset: int) -> None:
        if offset > 0:
            self.confirmed_up_to = max(self.confirmed_up_to, offset - 1)
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        elif offset < 0:
            # A negative offset keeps only the last -offset updates and forgets the rest.
            dropped, self._updates = self._updates[:offset], self._updates[offset:]
            if dropped:
                self.confirmed_up_to = max(self.confirmed_up_to, dropped[-1]["update_id"])

    def _wake_pollers(self) -> None:
        self._update_event.set()
        self._update_event = asyncio.Event()
        self._webhook_wake.set()

    # ---------------------------------------------------------------- webhook delivery

    async def _deliver_webhook(self) -> None:
        """Hand pending updates to ``_post_update`` while a webhook is set.

        A chat's updates go one at a time, in update_id order: the next is sent only after
        the bot answered 2xx to the one before (a failed one is retried first). Real Telegram
        keeps a chat's order almost always, and the bot relies on it through its inbox, so the
        fake keeps it always; different chats are delivered in parallel, up to
        ``webhook_max_connections`` POSTs in flight.
        """
        loop = asyncio.get_running_loop()
        while self.webhook is not None and not self._closing:
            self._webhook_wake.clear()
            now = loop.time()
            next_retry: float | None = None
            waiting_chats: set[tuple[str, int]] = set()  # chats with an earlier update pending
            for update in list(self._updates):
                chat = _order_key(update)
                if chat is not None:
                    if chat in waiting_chats:
                        continue
                    waiting_chats.add(chat)
                update_id = update["update_id"]
                if update_id in self._webhook_in_flight:
                    continue
                retry_at = self._webhook_retry_at.get(update_id, 0.0)
                if retry_at > now:
                    next_retry = retry_at if next_retry is None else min(next_retry, retry_at)
                    continue
                if len(self._webhook_in_flight) >= self.webhook_max_connections:
                    break  # a finishing POST wakes this loop
                self._webhook_in_flight[update_id] = asyncio.create_task(self._post_update(update))
            timeout = None if next_retry is None else max(next_retry - loop.time(), 0.0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._webhook_wake.wait(), timeout)

    def _webhook_target(self) -> str:
        if self.webhook_targets:
            turn = next(self._webhook_turn)
            return self.webhook_targets[turn % len(self.webhook_targets)]
        return str((self.webhook or {}).get("url", ""))

    async def _post_update(self, update: dict[str, Any]) -> None:
        """POST one update; a 2xx confirms it, anything else keeps it for a later retry."""
        update_id = update["update_id"]
        url = self._webhook_target()
        status: int | None = None
        try:
            headers = {"Content-Type": "application/json"}
            secret = (self.webhook or {}).get("secret_token")
            if secret:
                headers[WEBHOOK_SECRET_HEADER] = str(secret)
            if urlsplit(url).hostname not in LOOPBACK_HOSTS:
                error = f"the fake delivers to loopback only, not to {url}"
            else:
                assert self._webhook_session is not None
                try:
                    async with self._webhook_session.post(
                        url, data=_dumps(update).encode(), headers=headers
                    ) as response:
                        await response.read()
                        status = response.status
                        error = f"Wrong response from the webhook: {status} {response.reason}"
                except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                    error = f"Connection failed: {type(exc).__name__}: {exc}"
            self.webhook_attempts.append((url, update_id, status))
            if status is not None and 200 <= status < 300:
                self._updates = [u for u in self._updates if u["update_id"] != update_id]
                self._webhook_failures.pop(update_id, None)
                self._webhook_retry_at.pop(update_id, None)
                # Confirmed up to the oldest update still pending (or everything pushed).
                floor = self._updates[0]["update_id"] - 1 if self._updates else self._last_update_id
                self.confirmed_up_to = max(self.confirmed_up_to, floor)
            else:
                self._webhook_failures[update_id] += 1
                first, cap = self.webhook_backoff
                delay = min(first * 2 ** (self._webhook_failures[update_id] - 1), cap)
                self._webhook_retry_at[update_id] = asyncio.get_running_loop().time() + delay
                self._webhook_last_error = (int(time.time()), error)
        finally:
            self._webhook_in_flight.pop(update_id, None)
            self._webhook_wake.set()

    async def _stop_webhook_delivery(self) -> None:
        tasks = [t for t in (self._webhook_loop, *self._webhook_in_flight.values()) if t]
        current = asyncio.current_task()
        for task in tasks:
            if task is not current:
                task.cancel()
        await asyncio.gather(*(t for t in tasks if t is not current), return_exceptions=True)
        self._webhook_loop = None
        self._webhook_in_flight.clear()
        self._webhook_retry_at.clear()

    # ---------------------------------------------------------------- pushing updates

    @property
    def pending_updates(self) -> int:
        """Updates pushed but not yet confirmed by a getUpdates offset."""
        return len(self._updates)

    def push_update(self, update: dict[str, Any]) -> int:
        """Queue a raw update dict (update_id assigned if missing) and return its update_id."""
        update = copy.deepcopy(update)
        if "update_id" not in update:
            update["update_id"] = self._last_update_id + 1
        update_id = int(update["update_id"])
        if update_id <= self.confirmed_up_to:
            raise ValueError(
                f"update_id {update_id} is already confirmed (confirmed_up_to="
                f"{self.confirmed_up_to}); the bot would never receive it"
            )
        self._last_update_id = max(self._last_update_id, update_id)
        self._remember(update)
        self._updates.append(update)
        self._updates.sort(key=lambda u: u["update_id"])
        self._wake_pollers()
        return update_id

    def known(self, update: dict[str, Any]) -> dict[str, Any]:
        """An update the test delivers itself (a webhook POST): its chat and user become known
        to the fake, as if Telegram had sent it, so the bot can answer there."""
        self._remember(copy.deepcopy(update))
        return update

    def push_text(
        self,
        chat_id: int,
        text: str,
        *,
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's text message."""
        return self._push_message(
            chat_id,
            {"text": text},
            user_id=user_id,
            first_name=first_name,
            language_code=language_code,
        )

    def push_command(
        self,
        chat_id: int,
        command: str,
        args: str = "",
        *,
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's ``/command args`` message with its bot_command entity."""
        command = "/" + command.removeprefix("/")
        text = f"{command} {args}" if args else command
        entity = {"offset": 0, "length": _utf16_len(command), "type": "bot_command"}
        return self._push_message(
            chat_id,
            {"text": text, "entities": [entity]},
            user_id=user_id,
            first_name=first_name,
            language_code=language_code,
        )

    def push_callback(
        self,
        chat_id: int,
        data: str,
        *,
        message_id: int,
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
        check_button: bool = True,
    ) -> int:
        """A press on an inline button of a bot message, as it is displayed now."""
        message = self._messages.get((chat_id, message_id))
        if message is None:
            raise ValueError(f"no message {message_id} in chat {chat_id} to press a button on")
        buttons = [
            button.get("callback_data")
            for button in itertools.chain.from_iterable(
                message.get("reply_markup", {}).get("inline_keyboard", [])
            )
        ]
        if check_button and data not in buttons:
            raise ValueError(
                f"message {message_id} has no button with callback_data {data!r}; it has {buttons}"
            )
        query_id = str(4_382_000_000_000_000_000 + len(self._callbacks))
        user = self._user(chat_id, user_id, first_name, language_code)
        update_id = self.push_update(
            {
                "callback_query": {
                    "id": query_id,
                    "from": user,
                    "message": copy.deepcopy(message),
                    "chat_instance": str(int(_unique_id(f"chat{chat_id}")[4:], 16)),
                    "data": data,
                }
            }
        )
        self._callbacks[query_id] = None
        self._callback_by_update[update_id] = query_id
        return update_id

    def push_inline_callback(self, user_id: int, data: str) -> int:
        """A press on a button of an inline-mode message: no message and no chat, only its id."""
        query_id = str(4_382_000_000_000_000_000 + len(self._callbacks))
        update_id = self.push_update(
            {
                "callback_query": {
                    "id": query_id,
                    "from": self._user(user_id, user_id, "Test", "ko"),
                    "inline_message_id": f"inline-{query_id}",
                    "chat_instance": str(user_id),
                    "data": data,
                }
            }
        )
        self._callbacks[query_id] = None
        self._callback_by_update[update_id] = query_id
        return update_id

    def push_photo(
        self,
        chat_id: int,
        *,
        caption: str | None = None,
        file_bytes: bytes = b"\xff\xd8\xff\xe0fake jpeg\xff\xd9",
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's photo: PhotoSize list smallest first, each size downloadable as file_bytes."""
        sizes = []
        for width, height in ((90, 90), (320, 320), (800, 800)):
            fields = self._register_file(file_bytes, kind="photos", suffix=".jpg")
            sizes.append({**fields, "width": width, "height": height})
        content: dict[str, Any] = {"photo": sizes}
        if caption is not None:
            content["caption"] = caption
        return self._push_message(
            chat_id, content, user_id=user_id, first_name=first_name, language_code=language_code
        )

    def push_document(
        self,
        chat_id: int,
        *,
        file_name: str,
        mime_type: str,
        caption: str | None = None,
        file_bytes: bytes = b"%PDF-1.4 fake document",
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's document upload."""
        suffix = "." + file_name.rsplit(".", 1)[-1] if "." in file_name else ""
        fields = self._register_file(file_bytes, kind="documents", suffix=suffix)
        content: dict[str, Any] = {
            "document": {"file_name": file_name, "mime_type": mime_type, **fields}
        }
        if caption is not None:
            content["caption"] = caption
        return self._push_message(
            chat_id, content, user_id=user_id, first_name=first_name, language_code=language_code
        )

    def push_sticker(
        self,
        chat_id: int,
        *,
        emoji: str = "👍",
        set_name: str = "TestStickers",
        file_bytes: bytes = b"RIFF\x00\x00\x00\x00WEBPfake sticker",
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's static sticker, shaped like message_with_sticker.json in today's API."""
        thumbnail = self._register_file(file_bytes, kind="thumbnails", suffix=".webp")
        sticker = {
            "width": 512,
            "height": 512,
            "emoji": emoji,
            "set_name": set_name,
            "is_animated": False,
            "is_video": False,
            "type": "regular",
            "thumbnail": {**thumbnail, "width": 128, "height": 128},
            **self._register_file(file_bytes, kind="stickers", suffix=".webp"),
        }
        return self._push_message(
            chat_id,
            {"sticker": sticker},
            user_id=user_id,
            first_name=first_name,
            language_code=language_code,
        )

    def push_voice(
        self,
        chat_id: int,
        *,
        duration: int = 2,
        file_bytes: bytes = b"OggS\x00fake voice",
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's voice note."""
        fields = self._register_file(file_bytes, kind="voice", suffix=".oga")
        voice = {"duration": duration, "mime_type": "audio/ogg", **fields}
        return self._push_message(
            chat_id,
            {"voice": voice},
            user_id=user_id,
            first_name=first_name,
            language_code=language_code,
        )

    def push_location(
        self,
        chat_id: int,
        *,
        latitude: float = 37.5665,
        longitude: float = 126.978,
        user_id: int | None = None,
        first_name: str = "Test",
        language_code: str | None = "ko",
    ) -> int:
        """A user's shared location (Seoul City Hall unless told otherwise)."""
        return self._push_message(
            chat_id,
            {"location": {"latitude": latitude, "longitude": longitude}},
            user_id=user_id,
            first_name=first_name,
            language_code=language_code,
        )

    def push_raw(
        self,
        payload: dict[str, Any],
        *,
        chat_id: int,
        user_id: int | None = None,
        modernize: bool = True,
    ) -> int:
        """Queue a recorded update (e.g. from shared/data/telegram) moved into ``chat_id``.

        The update gets a fresh update_id, its message a fresh message_id, and its chat and sender
        ids are rewritten; ``modernize`` fills fields today's API sends but old recordings lack.
        A teloxide ``{"source_test", "payload"}`` line is unwrapped.
        """
        if "payload" in payload and "update_id" not in payload:
            payload = payload["payload"]
        update = copy.deepcopy(payload)
        update.pop("update_id", None)
        for key in MESSAGE_UPDATE_KEYS:
            if isinstance(update.get(key), dict):
                self._move_message(update[key], chat_id, user_id, new_id=True)
        for key, value in update.items():
            if isinstance(value, dict) and key not in MESSAGE_UPDATE_KEYS:
                if isinstance(value.get("from"), dict):
                    value["from"]["id"] = _sender_id(chat_id, user_id)
                if isinstance(value.get("message"), dict):
                    self._move_message(value["message"], chat_id, user_id, new_id=False)
        if modernize:
            update = modernize_payload(update)
            if isinstance(update.get("callback_query"), dict):
                update["callback_query"].setdefault("chat_instance", str(chat_id))
        return self.push_update(update)

    def _move_message(
        self, message: dict[str, Any], chat_id: int, user_id: int | None, *, new_id: bool
    ) -> None:
        chat = message.get("chat") or {}
        original_chat_id = chat.get("id")
        original_user_id = (message.get("from") or {}).get("id")
        if chat_id < 0 and chat.get("type") == "private":
            chat = {"id": chat_id, "type": "group", "title": "Test group"}
        message["chat"] = {**chat, "id": chat_id}
        if isinstance(message.get("from"), dict) and original_user_id == original_chat_id:
            message["from"]["id"] = _sender_id(chat_id, user_id)
        elif isinstance(message.get("from"), dict) and user_id is not None:
            message["from"]["id"] = user_id
        if new_id:
            message["message_id"] = self._next_message_id(chat_id)
        reply = message.get("reply_to_message")
        if isinstance(reply, dict) and (reply.get("chat") or {}).get("id") == original_chat_id:
            reply["chat"] = {**reply["chat"], "id": chat_id}
            if (reply.get("from") or {}).get("id") == original_user_id:
                reply["from"]["id"] = message.get("from", {}).get("id")

    def _user(
        self, chat_id: int, user_id: int | None, first_name: str, language_code: str | None
    ) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": _sender_id(chat_id, user_id),
            "is_bot": False,
            "first_name": first_name,
        }
        if language_code:
            user["language_code"] = language_code
        return user

    def _push_message(
        self,
        chat_id: int,
        content: dict[str, Any],
        *,
        user_id: int | None,
        first_name: str,
        language_code: str | None,
    ) -> int:
        user = self._user(chat_id, user_id, first_name, language_code)
        chat = self._chats.get(chat_id) or (
            {"id": chat_id, "first_name": first_name, "type": "private"}
            if chat_id > 0
            else {"id": chat_id, "title": "Test group", "type": "group"}
        )
        message = {
            "message_id": self._next_message_id(chat_id),
            "from": user,
            "chat": copy.deepcopy(chat),
            "date": _now(),
            **content,
        }
        return self.push_update({"message": message})

    def _remember(self, update: dict[str, Any]) -> None:
        """Learn the chats, messages and files an update shows, as Telegram knows them."""
        messages = [update[key] for key in MESSAGE_UPDATE_KEYS if isinstance(update.get(key), dict)]
        for message in messages:
            chat = message.get("chat")
            if isinstance(chat, dict) and isinstance(chat.get("id"), int):
                self._chats.setdefault(chat["id"], copy.deepcopy(chat))
                if isinstance(message.get("message_id"), int):
                    key = (chat["id"], message["message_id"])
                    self._messages[key] = copy.deepcopy(message)
                    last = self._last_message_id[chat["id"]]
                    self._last_message_id[chat["id"]] = max(last, message["message_id"])
        for value in update.values():  # my_chat_member, chat_member, ...: the chat exists
            chat = value.get("chat") if isinstance(value, dict) else None
            if isinstance(chat, dict) and isinstance(chat.get("id"), int):
                self._chats.setdefault(chat["id"], copy.deepcopy(chat))
        for file_fields in _file_objects(update):
            if file_fields["file_id"] not in self._files:
                self._register_file(
                    None,
                    kind="raw",
                    file_id=file_fields["file_id"],
                    file_size=file_fields.get("file_size") or 1024,
                )

    # ---------------------------------------------------------------- slow and refused calls

    def slow_down(self, method: str, seconds: float, *, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` wait ``seconds`` before they are carried out,
        as a congested Telegram does. A client that gives up first (its read time-out) closes
        the connection and the call is never carried out (it lands in ``abandoned``)."""
        self._hold_ups[method.lower()] += [("slow", seconds)] * times

    def flood_control(self, method: str, retry_after: int, *, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` are refused as Telegram's flood control does:
        429 "Too Many Requests: retry after N" with ``parameters.retry_after``."""
        self._hold_ups[method.lower()] += [("flood", float(retry_after))] * times

    # ---------------------------------------------------------------- reading what the bot did

    def messages(self, chat_id: int) -> list[dict[str, Any]]:
        """Messages the bot sent to the chat and has not deleted, as they look now, in order."""
        keys = [(chat_id, message_id) for message_id in self._sent.get(chat_id, [])]
        return [copy.deepcopy(self._messages[key]) for key in keys if key in self._messages]

    def documents(self, chat_id: int) -> list[dict[str, Any]]:
        """Documents the bot sent: file_name, content (bytes), caption, mime_type, message_id."""
        return copy.deepcopy(self._documents.get(chat_id, []))

    def photos(self, chat_id: int) -> list[dict[str, Any]]:
        """Photos the bot sent: file_name, content (bytes), caption, message_id."""
        return copy.deepcopy(self._photos.get(chat_id, []))

    def chat_actions(self, chat_id: int) -> list[str]:
        """Chat actions (``typing``, ...) the bot sent to the chat, in order."""
        return list(self._chat_actions.get(chat_id, []))

    def reply_keyboard(self, chat_id: int) -> dict[str, Any] | None:
        """The custom reply keyboard the chat shows now (ReplyKeyboardMarkup), if any."""
        return copy.deepcopy(self._reply_keyboards.get(chat_id))

    def callback_answer(self, update_id: int) -> dict[str, Any] | None:
        """The answerCallbackQuery params for a push_callback update, or None if unanswered."""
        return copy.deepcopy(self._callbacks.get(self._callback_by_update.get(update_id, "")))

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        """Params of every call of one method (name matched case-insensitively)."""
        return [params for name, params in self.calls if name.lower() == method.lower()]

    async def wait_for(
        self, predicate: Callable[[], bool], timeout: float = WAIT, *, what: str = ""
    ) -> None:
        """Poll until predicate() is true; else, after ``timeout`` seconds (by default the tests'
        generous limit, tests.support.WAIT), fail with a dump of what the bot did.

        A predicate raising LookupError (``messages(chat)[1]`` before it exists) counts as false.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            with contextlib.suppress(LookupError):
                if predicate():
                    return
            if loop.time() > deadline:
                label = f" for {what}" if what else ""
                raise AssertionError(
                    f"timed out after {timeout}s waiting{label}\n{self.describe()}"
                )
            await asyncio.sleep(0.01)

    async def wait_for_messages(
        self, chat_id: int, count: int, timeout: float = WAIT
    ) -> list[dict[str, Any]]:
        """Wait until the bot has sent at least ``count`` messages to the chat; return them all."""
        try:
            await self.wait_for(
                lambda: len(self.messages(chat_id)) >= count,
                timeout,
                what=f"{count} bot message(s) in chat {chat_id}",
            )
        except AssertionError as error:
            sent = [m.get("text", m.get("caption")) for m in self.messages(chat_id)]
            raise AssertionError(
                f"{error}\nbot messages in chat {chat_id} so far: {sent}"
            ) from None
        return self.messages(chat_id)

    def describe(self) -> str:
        """A readable dump of recent traffic, for assertion messages."""
        polls = len(self.calls_to("getUpdates"))
        lines = [
            f"fake Bot API at {self.url}: {len(self.calls)} calls ({polls} getUpdates), "
            f"pending_updates={self.pending_updates} {[u['update_id'] for u in self._updates]}, "
            f"confirmed_up_to={self.confirmed_up_to}"
        ]
        if self.webhook is not None:
            failed = sum(
                not (status and 200 <= status < 300) for _, _, status in self.webhook_attempts
            )
            lines.append(
                f"webhook mode: {self.webhook['url']} targets={self.webhook_targets} "
                f"{len(self.webhook_attempts)} POSTs ({failed} not 2xx), "
                f"last error: {self._webhook_last_error}"
            )
        elif polls == 0:
            lines.append("the bot never called getUpdates: is the updater polling?")
        elif self._updates:
            lines.append(
                "updates stay pending: if getUpdates keeps running, PTB may fail to parse them "
                "(see its log)"
            )
        recent = [(name, params) for name, params in self.calls if name != "getUpdates"][-20:]
        lines.append("recent calls besides getUpdates:")
        lines += [f"  {name} {_short(params)}" for name, params in recent] or ["  (none)"]
        if self.errors:
            lines.append("error answers:")
            lines += [f"  {name}: {description}" for name, _, description in self.errors[-10:]]
        return "\n".join(lines)


def _order_key(update: dict[str, Any]) -> tuple[str, int] | None:
    """The chat whose order an update keeps in webhook delivery (else its sender), if any."""
    for value in update.values():
        if not isinstance(value, dict):
            continue
        for holder in (value, value.get("message")):
            chat = holder.get("chat") if isinstance(holder, dict) else None
            if isinstance(chat, dict) and isinstance(chat.get("id"), int):
                return ("chat", chat["id"])
        sender = value.get("from")
        if isinstance(sender, dict) and isinstance(sender.get("id"), int):
            return ("user", sender["id"])
    return None


def _sender_id(chat_id: int, user_id: int | None) -> int:
    # In a private chat the user id equals the chat id; groups get a fixed test user.
    if user_id is not None:
        return user_id
    return chat_id if chat_id > 0 else DEFAULT_GROUP_USER_ID


def _file_objects(obj: Any) -> Iterator[dict[str, Any]]:
    if isinstance(obj, list):
        for item in obj:
            yield from _file_objects(item)
    elif isinstance(obj, dict):
        if isinstance(obj.get("file_id"), str):
            yield obj
        for value in obj.values():
            yield from _file_objects(value)


def _set_or_drop(message: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        message.pop(key, None)
    else:
        message[key] = value


def _caption_fields(caption: str | None, entities: list[dict[str, Any]]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if caption is not None:
        fields["caption"] = caption
    if entities:
        fields["caption_entities"] = entities
    return fields


def _dumps(obj: Any) -> str:
    """JSON as the Bot API sends it: UTF-8, with what UTF-8 cannot carry (a lone surrogate)
    escaped as \\uXXXX."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True)
    return text


def _error_response(
    code: int, description: str, parameters: dict[str, Any] | None = None
) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        body["parameters"] = parameters
    return web.json_response(body, status=code, dumps=_dumps)


async def _read_params(request: web.Request) -> dict[str, Any]:
    """Merge query string and body (JSON, urlencoded or multipart) into decoded params."""
    raw: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            try:
                body = await request.json()
            except ValueError as error:
                raise BotApiError("Bad Request: can't parse JSON body") from error
            if not isinstance(body, dict):
                raise BotApiError("Bad Request: JSON body must be an object")
            raw.update(body)
        else:
            form = await request.post()
            for key, value in form.items():
                if isinstance(value, web.FileField):
                    raw[key] = UploadedFile(
                        file_name=value.filename,
                        mime_type=value.content_type,
                        content=value.file.read(),
                    )
                else:
                    raw[key] = value
    return {key: _decode_param(key, value) for key, value in raw.items()}
