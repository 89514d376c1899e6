"""Property-based tests of the engine: arbitrary inputs, in any order, in any chat.

Hypothesis generates conversations - lists of steps over a few chats - and feeds them to the
real engine (`Engine.handle`, the entry point every channel uses) on real SQLite files:

- texts: arbitrary Unicode (lone surrogates, control characters, empty, blank, up to ~5000
  characters) and realistic Korean/English answers and case descriptions;
- button presses: arbitrary data, realistic forms ("a:evidence:yes", "st:LOAN", "cmd:forget",
  "lang:xx", ...) and, above all, the buttons the bot actually offered in its last reply to that
  chat, so that intakes really progress (to completion, restarts, forgetting);
- files (photos, documents) with arbitrary ids and captions;
- commands: every command of the Telegram channel and arbitrary names, with arbitrary
  arguments, from the admin and from others;
- unsupported and edited messages; input ids fresh, none, or one used earlier on a new input;
  and redeliveries of an earlier input exactly as it was (what a crash-recovery replay sends).

After every step these must hold:

1. no exception escapes `Engine.handle`;
2. the input gets a reply: a message with non-blank text, or a document;
3. recorded facts never disappear: the (session, key) pairs of the chat's `casefact` rows before
   a step are a subset of those after it (values may be corrected, keys do not vanish), except
   after a confirmed forget - a press of "cmd:forget" answered with the K0 "forgotten" message
   in a chat shown the forget confirmation since its last forget - after which the chat has no
   rows left;
4. every text of a reply (messages, button labels and data, document captions) is valid
   Unicode that encodes to UTF-8: no lone surrogate leaks out;
5. the records follow the graph: each of the chat's sessions has fact rows for exactly the facts
   (and unknowns) its checkpoint holds, so no records write fails silently.

One engine serves the whole test (a fresh one per example is too slow); each example uses
chats of its own, so examples do not see each other's conversations. The records write's
back-off pauses are set to zero here: a failing write is still retried, just without sleeping.

INTAKE_PROPERTY_EXAMPLES (default 200) sets the number of examples, for longer runs.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from bot import messages as messages_module
from bot.config import Settings
from bot.engine import Engine, Inbound, Reply
from bot.telegram_app import COMMANDS
from db.engine import records_path
from db.models import CaseFact, ChatSession
from graphs.legal.rules_brain import RulesBrain
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge
from tests.support import NOW

EXAMPLES = int(os.environ.get("INTAKE_PROPERTY_EXAMPLES", "200"))
MAX_STEPS = 24
CHATS = 4  # chats per example
ADMIN = 777  # in ADMIN_IDS below, as in the conftest settings
OTHER_USER = 5

# --- what people send --------------------------------------------------------------------------

DESCRIPTIONS = [  # descriptions that start an intake
    "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요",
    "전세 보증금 1억 2000만원을 집주인이 안 돌려줘요",
    "사장님이 석 달째 월급을 안 줘요",
    "회사에서 퇴직금을 안 줘요",
    "My landlord won't return my deposit of 5 million won. The lease ended last month.",
]
REALISTIC_TEXTS = [
    "300만원",
    "1억 2000만원",
    "5 million won",
    "올해 6월",
    "작년 3월",
    "어제",
    "last month",
    "네",
    "아니요",
    "있다니까요",
    "몰라요",
    "yes",
    "no",
    "I don't know",
    "친구 김철수",
    "회사",
    "안녕하세요",
    "아 그게 아니라 금액은 500만원이에요",
    *DESCRIPTIONS,
]

REALISTIC_DATA = [
    "a:evidence:yes",
    "a:evidence:no",
    "a:evidence:unknown",
    "a:evidence_type:done",
    "a:evidence_type:contract",
    "a:counterparty_type:company",
    "a:repayment_date:unknown",
    "a:amount:unknown",
    "st:LOAN",
    "st:DEPOSIT",
    "st:WAGE",
    "st:NOPE",
    "ct:CIVIL",
    "ct:CRIMINAL",
    "ct:*",
    "ct:",
    "cmd:forget",
    "cmd:keep",
    "cmd:continue",
    "cmd:restart",
    "cmd:",
    "lang:en",
    "lang:ko",
    "lang:xx",
    "lang:",
    "a::",
    "a:",
]

# Buttons that steer the conversation, pressed whether or not they were offered.
CONTROL_DATA = ["cmd:forget", "cmd:keep", "cmd:continue", "cmd:restart", "lang:en", "lang:ko"]
ODD_STRINGS = ["\udc00", "\ud800", "a\udfffb", "\x00", "\x1b[31m", "\u202e", "\ufeff", " \t\n "]


def weighted(*branches: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the branches, each drawn about `weight` times as often as a weight-1 one.

    (`st.one_of` would not do: it drops repeated strategies, so repeating is no weighting.)
    """
    pool = [strategy for weight, strategy in branches for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


# Every code point, lone surrogates included (hypothesis leaves them out by default).
any_char = st.characters(exclude_categories=())
any_text = st.text(alphabet=any_char)
long_text = st.builds(
    lambda piece, n: (piece * n)[:5000],
    st.text(alphabet=any_char, min_size=1, max_size=8),
    st.integers(min_value=500, max_value=5000),
)
odd_texts = weighted(
    (2, any_text),
    (1, st.sampled_from(ODD_STRINGS)),
    (
        1,
        st.builds(
            lambda a, b: a + b, st.sampled_from(REALISTIC_TEXTS), st.sampled_from(ODD_STRINGS)
        ),
    ),
    (1, long_text),
)
button_data = weighted(
    (2, st.sampled_from(REALISTIC_DATA)),
    (1, st.text(alphabet=any_char, max_size=64)),
    (
        1,
        st.builds(
            lambda field_, value: f"a:{field_}:{value}",
            st.sampled_from(["amount", "evidence", "evidence_type", "repayment_date", "x"]),
            st.text(alphabet=any_char, max_size=12),
        ),
    ),
)
command_names = weighted(
    (4, st.sampled_from(COMMANDS)),
    (1, st.just("forget")),  # so that confirmed forgets happen often enough
    (1, st.sampled_from(["", "START", "Export", "start@intake_bot", "헬프", "\udc00", "lang "])),
    (1, st.text(alphabet=any_char, max_size=16)),
)
command_args = st.lists(
    st.one_of(
        st.sampled_from(["json", "csv", "md", "all", "ALL", "ko", "en", "EN", "xx", ""]),
        st.text(alphabet=any_char, max_size=12),
    ),
    max_size=3,
).map(tuple)
file_dicts = st.builds(
    lambda kind, file_id, unique, caption, name, mime: {
        "kind": kind,
        "file_id": file_id,
        "file_unique_id": unique,
        "caption": caption,
        **({"file_name": name, "mime_type": mime} if kind == "document" else {}),
    },
    st.sampled_from(["photo", "document"]),
    st.text(alphabet=any_char, max_size=20),
    st.one_of(st.sampled_from(["u1", "u2", "u3"]), st.text(alphabet=any_char, max_size=12)),
    st.one_of(st.none(), st.sampled_from(REALISTIC_TEXTS), any_text),
    st.one_of(st.none(), st.sampled_from(["계약서.pdf", "차용증.jpg"]), any_text),
    st.one_of(st.none(), st.sampled_from(["application/pdf", "image/jpeg"]), any_text),
)
# Who sends it: the chat's own person (mostly), the admin, someone else, or nobody known.
users = st.sampled_from(["owner"] * 6 + ["admin", "other", "none"])
# The input id: none, a fresh one, or one used earlier in the example (a replay).
input_ids = weighted(
    (1, st.none()),
    (2, st.just("fresh")),
    (1, st.integers(min_value=0, max_value=50).map(lambda i: ("repeat", i))),
)
language_codes = st.one_of(st.none(), st.sampled_from(["ko", "en", "en-US", "ru", ""]), any_text)


@dataclass(frozen=True)
class Step:
    """One thing a person does; `pick` chooses among the buttons last offered to the chat."""

    chat: int  # 0 .. CHATS-1, offset per example
    kind: str  # text | choice | offered | file | command | unsupported | edited | replay
    text: str = ""
    data: str = ""
    pick: int = 0
    command: str = ""
    args: tuple[str, ...] = ()
    file: dict[str, Any] | None = None
    user: str = "owner"
    input_id: Any = None
    language_code: str | None = None


# Mostly the first chat, so that its intake gets far; the others interleave.
chats = st.sampled_from([0] * 12 + [1, 1, 2, 3])
common = {"chat": chats, "user": users, "input_id": input_ids, "language_code": language_codes}


steps = weighted(
    (5, st.builds(Step, kind=st.just("offered"), pick=st.integers(0, 20), **common)),
    (4, st.builds(Step, kind=st.just("text"), text=st.sampled_from(REALISTIC_TEXTS), **common)),
    (1, st.builds(Step, kind=st.just("text"), text=st.sampled_from(DESCRIPTIONS), **common)),
    (3, st.builds(Step, kind=st.just("text"), text=odd_texts, **common)),
    (2, st.builds(Step, kind=st.just("choice"), data=button_data, **common)),
    (1, st.builds(Step, kind=st.just("choice"), data=st.sampled_from(CONTROL_DATA), **common)),
    (1, st.builds(Step, kind=st.just("file"), file=file_dicts, **common)),
    (
        2,
        st.builds(
            Step, kind=st.just("command"), command=command_names, args=command_args, **common
        ),
    ),
    (1, st.builds(Step, kind=st.sampled_from(["unsupported", "edited"]), **common)),
    (1, st.builds(Step, kind=st.just("replay"), pick=st.integers(0, 30), **common)),
)
# Short conversations and long ones (which get intakes to the end and past it); a failure is
# shrunk to a short one when it can be.
conversations = st.one_of(
    st.lists(steps, min_size=1, max_size=8), st.lists(steps, min_size=8, max_size=MAX_STEPS)
)

# --- the checks --------------------------------------------------------------------------------


@dataclass
class ChatView:
    """What the test knows of one chat: its last reply, and the facts recorded so far."""

    owner: int
    last_offer: list[str] = field(default_factory=list)  # button data of the last reply
    shown_to: int | None = None  # who the last reply answered
    forget_offered: bool = False  # shown the forget confirmation since the last forget
    facts: set[tuple[str, str]] = field(default_factory=set)


def fact_keys(db: sqlite3.Connection, chat_id: int) -> set[tuple[str, str]]:
    """(session id, key) of every fact recorded for any session of the chat."""
    rows = db.execute(
        f"SELECT f.session_id, f.key FROM {CaseFact.__tablename__} f "
        f"JOIN {ChatSession.__tablename__} s ON s.id = f.session_id WHERE s.chat_id = ?",
        (chat_id,),
    )
    return set(rows.fetchall())


def session_ids(db: sqlite3.Connection, chat_id: int) -> list[str]:
    rows = db.execute(f"SELECT id FROM {ChatSession.__tablename__} WHERE chat_id = ?", (chat_id,))
    return [row[0] for row in rows.fetchall()]


def reply_strings(reply: Reply) -> list[str]:
    """Every text a channel would show or send back of a reply."""
    out: list[str] = []
    for message in reply.messages:
        out.append(message["text"])
        for choice in message.get("choices") or []:
            out += [choice["label"], choice["data"]]
    for document in reply.documents:
        out += [document.caption, document.filename]
    return out


def offered(reply: Reply) -> list[str]:
    return [c["data"] for m in reply.messages for c in m.get("choices") or []]


class Driver:
    """Runs conversations on one engine and checks the properties after every step."""

    def __init__(self, engine: Engine, knowledge: Knowledge, db: sqlite3.Connection) -> None:
        self.engine, self.knowledge, self.db = engine, knowledge, db
        self.chat_base = itertools.count(1_000, CHATS)  # fresh chats for every example
        self.fresh_ids = itertools.count(1)
        self.inputs = 0
        self.seen: Counter[str] = Counter()  # reply states and events, printed at the end
        self.forgotten = {self.knowledge.message("forgotten", lang) for lang in ("ko", "en")}

    def inbound(self, step: Step, chat_id: int, view: ChatView, used_ids: list[str]) -> Inbound:
        user = {"owner": view.owner, "admin": ADMIN, "other": OTHER_USER, "none": None}[step.user]
        if step.input_id == "fresh" or (isinstance(step.input_id, tuple) and not used_ids):
            input_id: str | None = f"in-{next(self.fresh_ids)}"
            used_ids.append(input_id)
        elif isinstance(step.input_id, tuple):
            input_id = used_ids[-1 - step.input_id[1] % len(used_ids)]  # 0: the latest
        else:
            input_id = None
        base: dict[str, Any] = {
            "chat_id": chat_id,
            "user_id": user,
            "input_id": input_id,
            "language_code": step.language_code,
            "at": NOW + timedelta(minutes=len(used_ids)),
        }
        if step.kind == "offered":
            if view.last_offer:
                data = view.last_offer[step.pick % len(view.last_offer)]
                if step.user == "owner":  # pressed by the person the buttons were shown to
                    base["user_id"] = view.shown_to
            else:  # nothing on offer: an old button of some other question
                data = REALISTIC_DATA[step.pick % len(REALISTIC_DATA)]
            return Inbound(kind="choice", data=data, **base)
        if step.kind == "choice":
            return Inbound(kind="choice", data=step.data, **base)
        if step.kind == "text":
            return Inbound(kind="text", text=step.text, **base)
        if step.kind == "file":
            return Inbound(kind="file", file=step.file, **base)
        if step.kind == "command":
            return Inbound(kind="command", command=step.command, args=step.args, **base)
        if step.kind == "replay":  # nothing sent yet to replay
            return Inbound(kind="unsupported", **base)
        return Inbound(kind=step.kind, **base)  # type: ignore[arg-type]

    async def run(self, conversation: list[Step]) -> None:
        base = next(self.chat_base)
        views = {i: ChatView(owner=base + i) for i in range(CHATS)}
        used_ids: list[str] = []
        sent: list[Inbound] = []
        for number, step in enumerate(conversation):
            if step.kind == "replay" and sent:  # a redelivery: an earlier input, as it was
                inbound = sent[-1 - step.pick % len(sent)]  # 0: the latest
            else:
                inbound = self.inbound(step, base + step.chat, views[step.chat], used_ids)
                sent.append(inbound)
            chat_id, view = inbound.chat_id, views[inbound.chat_id - base]
            note(f"step {number}: {inbound!r}")
            self.inputs += 1
            # 1. No exception escapes the engine (one that does fails the test here).
            reply = await self.engine.handle(inbound)
            note(f"  -> state={reply.state} field={reply.field} lang={reply.lang}")
            self.seen[f"state {reply.state}"] += 1
            for message in reply.messages:
                note(f"     {message['text']!r:.200} {offered(Reply(messages=[message]))}")

            # 4. Everything shown is valid Unicode, encodable to UTF-8.
            for text in reply_strings(reply):
                assert isinstance(text, str), f"step {number}: a reply text is {type(text)}"
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise AssertionError(
                        f"step {number}: reply text is not valid Unicode ({exc}): {text!r:.300}"
                    ) from exc

            # 2. Every input gets an answer.
            assert any(m["text"].strip() for m in reply.messages) or reply.documents, (
                f"step {number}: no reply to {inbound!r}: {reply!r}"
            )

            # 3. Recorded facts never disappear, unless the person confirmed a forget.
            after = fact_keys(self.db, chat_id)
            forgot = (
                inbound.kind == "choice"
                and inbound.data == "cmd:forget"
                and any(m["text"] in self.forgotten for m in reply.messages)
            )
            self.seen["steps with facts recorded before"] += bool(view.facts)
            self.seen["forgets"] += forgot
            if forgot and view.forget_offered:
                assert not after, f"step {number}: facts left after a forget: {sorted(after)}"
                view.forget_offered = False
            else:
                lost = view.facts - after
                assert not lost, (
                    f"step {number}: recorded facts disappeared after {inbound!r}"
                    f"{' (a forget nobody was asked to confirm)' if forgot else ''}: "
                    f"{sorted(lost)}; replied {[m['text'][:80] for m in reply.messages]}"
                )
            view.facts = after

            # 5. The records follow the graph: each session's fact rows are the facts (and the
            # unknowns) its checkpoint holds - none silently left unwritten.
            for session_id in session_ids(self.db, chat_id):
                config = {"configurable": {"thread_id": session_id}}
                values = (await self.engine.graph.aget_state(config)).values or {}
                held = set(values.get("facts") or {}) | set(values.get("unknown") or [])
                recorded = {key for sid, key in after if sid == session_id}
                assert recorded == held, (
                    f"step {number}: the records of session {session_id} do not follow its "
                    f"checkpoint: not written {sorted(held - recorded)}, "
                    f"not in the checkpoint {sorted(recorded - held)}"
                )

            view.last_offer, view.shown_to = offered(reply), inbound.user_id
            if "cmd:forget" in view.last_offer:
                view.forget_offered = True


@pytest.mark.slow  # EXAMPLES whole generated conversations through one engine: thousands of turns
def test_engine_properties_hold_for_any_inputs(
    tmp_path: Path,
    knowledge: Knowledge,
    brain: RulesBrain,
    kb: KnowledgeBase,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(messages_module, "RECORD_RETRIES", (0, 0, 0))
    settings = Settings(intake_data_dir=tmp_path / "data", admin_ids=str(ADMIN), _env_file=None)
    loop = asyncio.new_event_loop()
    engine = loop.run_until_complete(Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb))
    db = sqlite3.connect(records_path(settings.intake_data_dir))
    driver = Driver(engine, knowledge, db)

    @hsettings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        print_blob=True,  # a failure prints the @reproduce_failure line that replays it
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    @given(conversation=conversations)
    def conversations_keep_the_properties(conversation: list[Step]) -> None:
        loop.run_until_complete(driver.run(conversation))

    try:
        conversations_keep_the_properties()
    finally:
        print(f"\nengine inputs driven: {driver.inputs}; {sorted(driver.seen.items())}")
        db.close()
        loop.run_until_complete(engine.close())
        loop.close()
