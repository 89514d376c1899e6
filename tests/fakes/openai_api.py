"""A fake OpenAI-compatible server on 127.0.0.1 that speaks the real wire format.

The real ``openai`` client runs against it unchanged: pass ``base_url=fake.url``. It serves
``POST /v1/embeddings`` (deterministic vectors from hashed character trigrams, so similar texts
are close; ``encoding_format`` "float" or "base64" like the real API) and
``POST /v1/chat/completions`` (scripted replies, echo by default). Tests script HTTP errors and
malformed bodies, and read back every request without its API key.

The sync ``openai.OpenAI`` client blocks its thread, so sync tests serve from a background
thread with its own event loop: ``with FakeOpenAI().run_in_thread() as fake: ...``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import hashlib
import itertools
import math
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

from aiohttp import web

from tests.support import WAIT

LOOPBACK = "127.0.0.1"
DEFAULT_DIMENSIONS = 64
MAX_EMBEDDING_INPUTS = 2048  # the real API's limit on inputs per request
SECRET_HEADERS = frozenset({"authorization", "api-key"})
ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", None),
}


class OpenAIApiError(Exception):
    """An error answer in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param

    def response(self) -> web.Response:
        error_type, code = ERROR_TYPES.get(self.status, ("server_error", None))
        body = {"message": self.message, "type": error_type, "param": self.param, "code": code}
        return web.json_response({"error": body}, status=self.status)


def trigram_embedding(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """Hash the text's character trigrams into ``dimensions`` buckets, L2-normalised.

    Values are rounded to float32 so the "float" and "base64" encodings carry the same numbers.
    """
    padded = f"  {' '.join(text.lower().split())}  "
    counts = [0.0] * dimensions
    for start in range(len(padded) - 2):
        # blake2b, not hash(): str hashes are salted per process and the vectors must not be.
        digest = hashlib.blake2b(padded[start : start + 3].encode(), digest_size=8).digest()
        counts[int.from_bytes(digest, "little") % dimensions] += 1.0
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    packed = struct.pack(f"<{dimensions}f", *(c / norm for c in counts))
    return list(struct.unpack(f"<{dimensions}f", packed))


def _base64_floats(vector: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def _count_tokens(texts: list[str]) -> int:
    return sum(max(1, len(text.split())) for text in texts)


class FakeOpenAI:
    """A scripted OpenAI-compatible API for tests of the real ``openai`` client."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        dimensions: int = DEFAULT_DIMENSIONS,
        chat_model: str = "fake-chat",
    ) -> None:
        self.api_key = api_key  # when set, other bearer tokens get 401 like the real API
        self.dimensions = dimensions  # embedding size unless a request asks for ``dimensions``
        self.chat_model = chat_model
        self.url = ""  # "http://127.0.0.1:PORT/v1" once started
        # Every request in order: {"path", "json", "headers" (no key), "authorization": bool}.
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # scripting happens on the test's thread in thread mode
        self._failures: deque[int] = deque()  # statuses of the next answers to fail
        self._malformed = 0  # how many next answers are invalid JSON
        self._replies: deque[str | dict[str, Any]] = deque()
        self._tampers: deque[Callable[[dict[str, Any]], None]] = deque()
        self._delays: deque[float] = deque()  # seconds before the next chat answers
        self.latency = 0.0  # seconds every chat answer takes (a model's speed), besides delays
        # Answers chat requests no reply was queued for: body -> reply (str or message dict);
        # it may raise OpenAIApiError. Unset: the last user message is echoed.
        self.responder: Callable[[dict[str, Any]], str | dict[str, Any]] | None = None
        self._completion_ids = itertools.count(1)
        self._runner: web.AppRunner | None = None

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Serve on an ephemeral port of 127.0.0.1 and set ``url``."""
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._handle_embeddings)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://{LOOPBACK}:{port}/v1"

    async def stop(self) -> None:
        """Stop serving; later connections are refused."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[FakeOpenAI]:
        """Serve from a background thread on its own event loop, for blocking (sync) clients."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the test's thread below
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop())
                loop.close()

        thread = threading.Thread(target=serve, name="fake-openai", daemon=True)
        thread.start()
        if not ready.wait(WAIT):
            raise RuntimeError("the fake OpenAI server did not start in time")
        if failure:
            thread.join()
            raise failure[0]
        try:
            yield self
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(WAIT)

    # ---------------------------------------------------------------- scripting

    def fail_next(self, status: int, count: int = 1) -> None:
        """Answer the next ``count`` requests with HTTP ``status`` in OpenAI's error shape."""
        with self._lock:
            self._failures.extend([status] * count)

    def malformed_next(self) -> None:
        """Answer the next request with a body that is not valid JSON."""
        with self._lock:
            self._malformed += 1

    def tamper_next(self, edit: Callable[[dict[str, Any]], None]) -> None:
        """Let ``edit`` change the next successful answer's JSON in place before it is sent.

        For answers a real server might give but this one would not: items out of order, one
        vector missing, a NaN.
        """
        with self._lock:
            self._tampers.append(edit)

    def reply_next(self, *replies: str | dict[str, Any]) -> None:
        """Queue chat replies: a str is the assistant's content, a dict the whole message."""
        with self._lock:
            self._replies.extend(replies)

    def delay_next(self, seconds: float, count: int = 1) -> None:
        """Answer the next ``count`` chat requests only after ``seconds`` (a slow model)."""
        with self._lock:
            self._delays.extend([seconds] * count)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat completion requests received, in order."""
        return [r["json"] for r in self.requests if r["path"] == "/v1/chat/completions"]

    def embed(self, text: str, dimensions: int | None = None) -> list[float]:
        """The vector this server returns for ``text``, for assertions."""
        return trigram_embedding(text, dimensions or self.dimensions)

    # ---------------------------------------------------------------- handlers

    async def _receive(self, request: web.Request) -> dict[str, Any]:
        """Record the request, then play any scripted failure; return its JSON body."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        authorization = headers.get("authorization", "")
        self.requests.append(
            {
                "path": request.path,
                "json": copy.deepcopy(body),
                "headers": {k: v for k, v in headers.items() if k not in SECRET_HEADERS},
                "authorization": "authorization" in headers,
            }
        )
        with self._lock:
            status = self._failures.popleft() if self._failures else None
        if status is not None:
            raise OpenAIApiError(status, f"Scripted failure with status {status}.")
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            raise OpenAIApiError(401, "Incorrect API key provided.")
        if not isinstance(body, dict):
            raise OpenAIApiError(400, "We could not parse the JSON body of your request.")
        return body

    def _answer(self, body: dict[str, Any]) -> web.Response:
        with self._lock:
            edit = self._tampers.popleft() if self._tampers else None
        if edit is not None:
            edit(body)
        return web.json_response(body)

    def _take_malformed(self) -> bool:
        with self._lock:
            if self._malformed:
                self._malformed -= 1
                return True
        return False

    async def _handle_embeddings(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await self._receive(request)
            texts, dimensions, encoding = self._embedding_params(body)
        except OpenAIApiError as error:
            return error.response()
        if self._take_malformed():
            return web.Response(
                text='{"object": "list", "data": [', content_type="application/json"
            )
        data = []
        for index, text in enumerate(texts):
            vector = trigram_embedding(text, dimensions)
            embedding = _base64_floats(vector) if encoding == "base64" else vector
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = _count_tokens(texts)
        return self._answer(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    def _embedding_params(self, body: dict[str, Any]) -> tuple[list[str], int, str]:
        """Validate an embeddings request like the real API: (texts, dimensions, encoding)."""
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise OpenAIApiError(400, "You must provide a model parameter.", "model")
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if (
            not isinstance(texts, list)
            or not texts
            or not all(isinstance(text, str) and text for text in texts)
        ):
            raise OpenAIApiError(400, "'$.input' is invalid. Please check the API reference.")
        if len(texts) > MAX_EMBEDDING_INPUTS:
            raise OpenAIApiError(400, f"'$.input' must have at most {MAX_EMBEDDING_INPUTS} items.")
        encoding = body.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            raise OpenAIApiError(400, f"Invalid encoding_format: {encoding!r}.", "encoding_format")
        dimensions = body.get("dimensions", self.dimensions)
        if not isinstance(dimensions, int) or dimensions < 1:
            raise OpenAIApiError(400, "Invalid dimensions.", "dimensions")
        return texts, dimensions, encoding

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await self._receive(request)
            messages = body.get("messages")
            if not isinstance(messages, list) or not messages:
                raise OpenAIApiError(400, "'messages' must be a non-empty array.", "messages")
            if body.get("stream"):
                raise OpenAIApiError(400, "The fake does not stream; script it first.", "stream")
        except OpenAIApiError as error:
            return error.response()
        with self._lock:
            delay = self._delays.popleft() if self._delays else 0.0
        if delay:
            await asyncio.sleep(delay)
        if self._take_malformed():
            return web.Response(text='{"id": "chatcmpl-', content_type="application/json")
        with self._lock:
            reply = self._replies.popleft() if self._replies else None
        if self.latency:
            await asyncio.sleep(self.latency)
        if reply is None and self.responder is not None:
            try:
                reply = self.responder(body)
            except OpenAIApiError as error:
                return error.response()
        if reply is None:
            reply = _echo(messages)
        message = (
            {"role": "assistant", "content": reply, "refusal": None}
            if isinstance(reply, str)
            else {"role": "assistant", "content": None, "refusal": None, **reply}
        )
        prompt_tokens = _count_tokens([str(m.get("content") or "") for m in messages])
        completion_tokens = _count_tokens([str(message.get("content") or "")])
        return self._answer(
            {
                "id": f"chatcmpl-fake{next(self._completion_ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or self.chat_model,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "logprobs": None,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )


def _echo(messages: list[Any]) -> str:
    """The content of the last user message, as text."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""
