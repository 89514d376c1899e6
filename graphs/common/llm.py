"""An OpenAI-compatible model for the readers, every failure a fallback the caller can take.

`LLMClient.structured` asks for one JSON object of a pydantic model's shape, in one of three
ways servers support (`json_schema`, the default; `function_calling`; `json_mode` with the
schema in the instructions), and gives back the validated object and the tokens it cost — or
raises `LLMFailure` with a short reason: a timeout, an HTTP error after the client's retries
(429 and 5xx are retried with back-off by the `openai` client), a refusal, an answer cut short
(`finish_reason` "length"), an answer too long, or JSON that does not fit after asking once
more. After `BREAK_AFTER` failures in a row the client stops calling for `BREAK_SECONDS` (a
circuit breaker), so a dead endpoint costs a turn nothing. Calls run at most `concurrency`
at once. The person's words only ever travel in the user role; before they leave for an
endpoint that is not on this machine, identifying numbers are masked (`mask_private`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from ipaddress import ip_address
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import openai
from pydantic import BaseModel, ValidationError

from graphs.common.usage import Usage, charge

log = logging.getLogger(__name__)

Structured = Literal["json_schema", "function_calling", "json_mode"]
T = TypeVar("T", bound=BaseModel)
BREAK_AFTER = 5  # failures in a row that open the circuit
BREAK_SECONDS = 30.0  # how long it stays open
MAX_ANSWER_CHARS = 32_000  # a structured reading is far shorter; more is a runaway answer
RETRIES = 2  # the openai client's own retries of 408/409/429/5xx and connection errors

# Identifying numbers masked before text leaves the machine: a resident registration number,
# a card number, a phone number, an account number (runs of digits with dashes).
_PRIVATE = (
    ("[주민번호]", re.compile(r"(?<!\d)\d{6}\s?-\s?[1-8]\d{6}(?!\d)")),
    ("[카드번호]", re.compile(r"(?<!\d)\d{4}[- ]\d{4}[- ]\d{4}[- ]\d{4}(?!\d)")),
    ("[전화번호]", re.compile(r"(?<!\d)(?:\+?82[- ]?)?0?1[016789][- ]?\d{3,4}[- ]?\d{4}(?!\d)")),
    ("[전화번호]", re.compile(r"(?<!\d)0[2-6]\d?[- ]\d{3,4}[- ]\d{4}(?!\d)")),
    ("[계좌번호]", re.compile(r"(?<!\d)\d{2,6}-\d{2,6}-\d{2,8}(?:-\d{1,4})?(?!\d)")),
    ("[계좌번호]", re.compile(r"(?<![\d,.])\d{10,16}(?![\d,.])")),
)


def mask_private(text: str) -> str:
    """`text` with resident registration, card, phone and account numbers replaced by labels."""
    for label, pattern in _PRIVATE:
        text = pattern.sub(label, text)
    return text


def is_local(base_url: str) -> bool:
    """Whether an endpoint is on this machine (loopback): nothing leaves it."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


class LLMFailure(Exception):
    """A call that gave nothing usable; `reason` is short and carries no personal data; `usage`
    the tokens an answer that came but could not be used still cost."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage if usage is not None else Usage()


@dataclass(frozen=True)
class LLMConfig:
    """What the client needs (bot/config.py fills it from INTAKE_LLM_* settings)."""

    base_url: str
    api_key: str
    model: str
    structured: Structured = "json_schema"
    timeout: float = 20.0  # seconds per call
    concurrency: int = 4
    mask: bool | None = None  # None: mask when the endpoint is not on this machine
    models: dict[str, str] = field(default_factory=dict)  # a model per task, when cheaper


class LLMClient:
    """One per process: the `openai` async client, a concurrency limit and a circuit breaker."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "none",  # local servers take any key
            timeout=config.timeout,
            max_retries=RETRIES,
        )
        self._gate = asyncio.Semaphore(config.concurrency)
        self._failures_in_row = 0
        self._open_until = 0.0
        self.masking = config.mask if config.mask is not None else not is_local(config.base_url)
        self.calls: Counter[str] = Counter()  # "ok", and each failure reason
        self.usage = Usage()

    async def close(self) -> None:
        await self._client.close()

    async def structured(
        self,
        task: str,
        schema: type[T],
        *,
        system: str,
        user: str,
        timeout: float | None = None,
        temperature: float = 0.0,
    ) -> tuple[T, Usage]:
        """One object of `schema` for `user` (the person's words) under `system` (ours); a
        `temperature` above 0 for samples meant to differ (the medical answer's agreement)."""
        if time.monotonic() < self._open_until:
            self.calls["circuit_open"] += 1
            raise LLMFailure("circuit_open")
        text = mask_private(user) if self.masking else user
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self._instructions(system, schema)},
            {"role": "user", "content": text},
        ]
        spent = Usage()
        try:
            async with self._gate:
                for attempt in (1, 2):
                    content, usage = await self._call(task, schema, messages, timeout, temperature)
                    spent += usage
                    try:
                        result = schema.model_validate_json(content)
                    except ValidationError as exc:
                        if attempt == 2:
                            raise LLMFailure("unparsable") from exc
                        # Asked once more, with what was wrong (no words of the person's).
                        messages += [
                            {"role": "assistant", "content": content[:2000]},
                            {"role": "system", "content": _fix_note(exc)},
                        ]
                        continue
                    self._succeeded(spent)
                    return result, spent
        except LLMFailure as failure:
            spent += failure.usage  # an answer cut short, refused or too long cost its tokens
            self._failed(task, failure.reason, spent)
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def reply(
        self, task: str, messages: list[dict[str, str]], *, timeout: float | None = None
    ) -> tuple[str, Usage]:
        """The model's free-text answer to a conversation (the research loop reads JSON actions
        out of it itself, and takes plain text as the final answer); the same breaker, gate and
        masking of the user's words as `structured`."""
        if time.monotonic() < self._open_until:
            self.calls["circuit_open"] += 1
            raise LLMFailure("circuit_open")
        sent = [
            {**m, "content": mask_private(m["content"])}
            if self.masking and m["role"] == "user"
            else m
            for m in messages
        ]
        try:
            async with self._gate:
                content, usage = await self._call(task, None, sent, timeout)
        except LLMFailure as failure:
            self._failed(task, failure.reason, failure.usage)
            raise
        self._succeeded(usage)
        return content, usage

    # --- one call ----------------------------------------------------------------------------

    async def _call(
        self,
        task: str,
        schema: type[BaseModel] | None,
        messages: list[dict[str, Any]],
        timeout: float | None,
        temperature: float = 0.0,
    ) -> tuple[str, Usage]:
        options: dict[str, Any] = {}
        mode = self.config.structured if schema is not None else "text"
        name = schema.__name__ if schema is not None else ""
        if schema is None:
            pass  # free text: no response format asked for
        elif mode == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema.model_json_schema()},
            }
        elif mode == "function_calling":
            options["tools"] = [
                {
                    "type": "function",
                    "function": {"name": name, "parameters": schema.model_json_schema()},
                }
            ]
            options["tool_choice"] = {"type": "function", "function": {"name": name}}
        elif mode == "json_mode":
            options["response_format"] = {"type": "json_object"}
        try:
            response = await self._client.chat.completions.create(
                model=self.config.models.get(task, self.config.model),
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                timeout=min(timeout, self.config.timeout) if timeout else self.config.timeout,
                **options,
            )
        except openai.APITimeoutError as exc:
            raise LLMFailure("timeout") from exc
        except openai.APIStatusError as exc:
            raise LLMFailure(f"http_{exc.status_code}") from exc
        except openai.APIConnectionError as exc:
            raise LLMFailure("connection") from exc
        except (openai.OpenAIError, ValueError, TypeError) as exc:  # a body the SDK cannot read
            raise LLMFailure("bad_response") from exc
        usage = Usage(
            getattr(response.usage, "prompt_tokens", 0) or 0,
            getattr(response.usage, "completion_tokens", 0) or 0,
        )
        if not response.choices:
            raise LLMFailure("no_choice", usage)
        choice = response.choices[0]
        if choice.finish_reason == "length":
            raise LLMFailure("truncated", usage)
        message = choice.message
        if getattr(message, "refusal", None):
            raise LLMFailure("refusal", usage)
        if mode == "function_calling" and message.tool_calls:
            call = message.tool_calls[0]
            content = getattr(getattr(call, "function", None), "arguments", None)
        else:
            content = message.content
        if not isinstance(content, str) or not content.strip():
            raise LLMFailure("empty", usage)
        if len(content) > MAX_ANSWER_CHARS:
            raise LLMFailure("too_long", usage)
        return content, usage

    def _instructions(self, system: str, schema: type[BaseModel]) -> str:
        if self.config.structured != "json_mode":
            return system
        shape = json.dumps(schema.model_json_schema(), ensure_ascii=False)
        return (
            f"{system}\n\nAnswer with one JSON object of this JSON schema, nothing else:\n{shape}"
        )

    # --- the breaker and the counts -----------------------------------------------------------

    def _succeeded(self, usage: Usage) -> None:
        self._failures_in_row = 0
        self.calls["ok"] += 1
        self.usage += usage
        charge(usage)

    def _failed(self, task: str, reason: str, usage: Usage) -> None:
        self.calls[reason] += 1
        self.usage += usage
        charge(usage)
        self._failures_in_row += 1
        if self._failures_in_row >= BREAK_AFTER:
            self._open_until = time.monotonic() + BREAK_SECONDS
            self._failures_in_row = 0
            log.warning(
                "LLM: %d failures in a row; no calls for %.0f s", BREAK_AFTER, BREAK_SECONDS
            )
        log.warning("LLM %s failed (%s); the rules take this call", task, reason)


def _fix_note(exc: ValidationError) -> str:
    """What was wrong with an answer, for the second try: places and kinds, not values."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'answer'}: {error['msg']}"
        for error in exc.errors()[:5]
    )
    return f"That answer did not fit the schema ({problems}). Answer again with valid JSON only."
