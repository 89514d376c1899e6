"""The engine: one entry point shared by every channel (Telegram, console).

Per-chat serialisation, replay guard, bad-input pre-checks, the buttons that count, commands,
the graph turn, and the records written after it. Nothing here knows Telegram.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from datetime import UTC, datetime
from typing import Any, Literal

from langgraph.types import Command
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import export, failpoints
from bot.alerts import Notice, SafetyDesk
from bot.config import Settings
from db import repo
from db.engine import Checkpoints, create_records_engine, open_checkpoints, truncate_records_wal
from db.locks import ChatLocks
from graphs.common.brain import Brain
from graphs.common.context import Context
from graphs.common.intents import read_intent
from graphs.common.rules_brain import RulesBrain
from graphs.common.text import detect_lang, is_meaningless, valid_unicode
from graphs.registry import GRAPHS, GraphSpec
from knowledge.kb import KnowledgeBase, open_index
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge, default_knowledge

log = logging.getLogger(__name__)


def chat_tag(chat_id: int) -> str:
    """A stable pseudonym of a chat for logs: operators can follow one chat, not identify it."""
    return hashlib.sha256(f"intake-chat:{chat_id}".encode()).hexdigest()[:10]


MAX_INPUT_CHARS = 4000  # longer messages are cut, and the person is told
RECORD_RETRIES = (0.05, 0.2, 0.5)  # back-off between attempts to write the records
EXPORT_FORMATS = ("json", "csv", "md")
CONTROL_PREFIXES = ("cmd:", "lang:")  # buttons that steer the conversation, not answers

InboundKind = Literal["text", "choice", "command", "file", "unsupported", "edited", "start"]


@dataclass(frozen=True, kw_only=True)
class Inbound:
    """What a person sent, in channel-neutral form."""

    chat_id: int
    kind: InboundKind
    text: str = ""
    data: str = ""  # button data
    command: str = ""  # command name without the slash
    args: tuple[str, ...] = ()
    file: dict[str, Any] | None = None
    user_id: int | None = None
    input_id: str | None = None  # e.g. the Telegram update id; a replay is recognised by it
    language_code: str | None = None
    at: datetime = dc_field(default_factory=lambda: datetime.now(UTC))


def clean_inbound(inbound: Inbound) -> Inbound:
    """The inbound with every text in it valid Unicode, so no layer behind the edge trips on it."""
    file = inbound.file
    if file:
        file = {k: valid_unicode(v) if isinstance(v, str) else v for k, v in file.items()}
    return replace(
        inbound,
        text=valid_unicode(inbound.text),
        data=valid_unicode(inbound.data),
        command=valid_unicode(inbound.command),
        args=tuple(valid_unicode(a) for a in inbound.args),
        file=file,
    )


@dataclass
class Document:
    """A file to send back (an export)."""

    filename: str
    content: bytes
    caption: str = ""


@dataclass
class Reply:
    """What the channel renders: messages with buttons, and where the intake stands."""

    messages: list[dict[str, Any]] = dc_field(default_factory=list)
    field: str | None = None
    progress: int = 0
    state: str | None = None
    documents: list[Document] = dc_field(default_factory=list)
    lang: str = "ko"
    # The intake stays where it was and its question is not shown again (/summary, /forget's
    # confirmation, ...): the buttons of that question keep counting beside any new ones.
    keeps_question: bool = False
    refused: bool = False  # a button press that did not count
    alerts: list[Any] = dc_field(default_factory=list)  # safety rules that fired on the input
    notices: list[Notice] = dc_field(default_factory=list)  # messages for staff (ADMIN_IDS)

    def add(self, text: str, choices: list[dict[str, str]] | None = None) -> None:
        """Append a message."""
        self.messages.append({"text": text, "choices": choices or []})


class Engine:
    """Runs intakes for every chat on one checkpointer and one records database."""

    def __init__(
        self,
        *,
        settings: Settings,
        knowledge: Knowledge,
        brain: Brain,
        records: AsyncEngine,
        checkpoints: Checkpoints,
        kb: KnowledgeBase | None = None,
        domain: str = "legal",
    ) -> None:
        self.settings = settings
        self.knowledge = knowledge
        self.brain = brain
        self.records = records
        self.checkpoints = checkpoints
        self.checkpointer = checkpoints.saver
        self.kb = kb or KnowledgeBase(knowledge)
        self.spec: GraphSpec = GRAPHS[domain]
        self.graph = self.spec.build().compile(checkpointer=self.checkpointer)
        self.safety = SafetyDesk(knowledge, settings.admins)
        self.chat_locks = ChatLocks(records)  # a chat's turns one at a time, across processes
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        knowledge: Knowledge | None = None,
        brain: Brain | None = None,
        kb: KnowledgeBase | None = None,
        serving: bool = True,
    ) -> Engine:
        """Open the databases and the knowledge index under INTAKE_DATA_DIR (built if missing).

        Intakes whose graph finished while their records did not follow are repaired first.
        `serving=False` (staff reads such as the export command) skips the index and Kiwi.
        """
        knowledge = knowledge or default_knowledge()
        if kb is None and not serving:
            kb = KnowledgeBase(knowledge)
        if kb is None:
            index = await asyncio.to_thread(
                open_index,
                settings.intake_data_dir,
                knowledge,
                progress=sys.stderr.isatty(),
                env=settings.embedding_env,
            )
            kb = KnowledgeBase(knowledge, index)
        if serving:  # load the morphological analyser (~2 s) before the first message
            await asyncio.to_thread(get_kiwi)
        url = settings.intake_database_url
        records = await create_records_engine(
            settings.intake_data_dir, url, connections=settings.intake_concurrent_updates
        )
        checkpoints = await open_checkpoints(settings.intake_data_dir, url)
        engine = cls(
            settings=settings,
            knowledge=knowledge,
            brain=brain or RulesBrain(knowledge),
            records=records,
            checkpoints=checkpoints,
            kb=kb,
        )
        await engine.repair_finished()
        return engine

    async def close(self) -> None:
        """Close both databases."""
        await self.checkpoints.close()
        await self.records.dispose()

    # --- entry point -------------------------------------------------------------------------

    async def handle(self, inbound: Inbound) -> Reply:
        """Handle one inbound message of a chat; messages of one chat run one at a time."""
        inbound = clean_inbound(inbound)
        async with self._locks[inbound.chat_id]:
            lang = await self._lang(inbound)
            reply = Reply(lang=lang)
            reply.alerts = self.safety.check(self._said(inbound))
            if reply.alerts:  # what to do now comes before anything else
                reply.add(self.safety.reply(reply.alerts, lang))
            refusal = await self._press_refusal(inbound) if inbound.kind == "choice" else None
            if (
                refusal is not None
                and not inbound.data.startswith(CONTROL_PREFIXES)
                and await self._is_replay(inbound)
            ):  # an answer the intake took before a crash: answered as a replay (never fed
                refusal = None  # again); a steering button is never let through this way
            if refusal is not None:
                await self._refuse_press(inbound, refusal, reply)
            elif inbound.kind == "command":
                await self._command(inbound, reply)
            elif inbound.kind == "choice" and inbound.data.startswith(CONTROL_PREFIXES):
                await self._control_button(inbound, reply)
            else:
                await self._turn(inbound, reply)
            if reply.alerts:
                await self._raise_alerts(inbound, reply)
            await self._offer(inbound, reply)
            log.info(
                "chat=%s kind=%s state=%s field=%s progress=%s messages=%d",
                chat_tag(inbound.chat_id),
                inbound.kind,
                reply.state,
                reply.field,
                reply.progress,
                len(reply.messages),
            )
            return reply

    @staticmethod
    def _said(inbound: Inbound) -> str:
        """The person's own words in an input: a text, or a file's caption."""
        if inbound.kind == "text":
            return inbound.text
        if inbound.kind == "file":
            return str((inbound.file or {}).get("caption") or "")
        return ""

    async def _raise_alerts(self, inbound: Inbound, reply: Reply) -> None:
        """Record the safety alerts of this input and queue the staff notices."""
        latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
        reply.notices += await self.safety.record(
            self.records,
            chat_id=inbound.chat_id,
            chat_label=chat_tag(inbound.chat_id),
            session_id=latest.id if latest else None,
            input_id=inbound.input_id,
            hits=reply.alerts,
            at=inbound.at.astimezone(self.settings.zone),
            lang=self.settings.intake_default_lang,
        )

    # --- buttons ------------------------------------------------------------------------------

    async def _offer(self, inbound: Inbound, reply: Reply) -> None:
        """Remember the reply's buttons as the only presses that count, for this person only."""
        offered = [c["data"] for m in reply.messages for c in m.get("choices") or []]
        if reply.keeps_question:
            previous = await repo.get_offer(engine=self.records, chat_id=inbound.chat_id)
            if previous is not None and previous[0] == inbound.user_id:
                kept = [d for d in previous[1] if not d.startswith(CONTROL_PREFIXES)]
                offered += [d for d in kept if d not in offered]
        await repo.set_offer(
            engine=self.records, chat_id=inbound.chat_id, user_id=inbound.user_id, choices=offered
        )

    async def _press_refusal(self, inbound: Inbound) -> str | None:
        """None for a press of a button the chat was shown last, by the person shown it; else
        the K0 key that says why it does not count."""
        offer = await repo.get_offer(engine=self.records, chat_id=inbound.chat_id)
        if offer is None or inbound.data not in offer[1]:
            # An answer button of an earlier question, or anything never (or no longer) shown.
            return "already_answered" if inbound.data.startswith("a:") else "stale_button"
        if offer[0] != inbound.user_id:
            log.warning(
                "chat=%s button pressed by someone it was not shown to; refused",
                chat_tag(inbound.chat_id),
            )
            return "stale_button"
        return None

    async def _refuse_press(self, inbound: Inbound, refusal: str, reply: Reply) -> None:
        """A press that does not count: say why, and show where things stand."""
        reply.refused = True
        reply.add(self.knowledge.message(refusal, reply.lang))
        session, values, where = await self._current(inbound.chat_id)
        if session is not None:
            self._prompt(values, *where, reply)
            return
        latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
        if latest is not None and latest.status == "completed":
            reply.add(self.knowledge.message("session_completed", reply.lang))
            reply.state = "COMPLETED"

    # --- a turn of the intake -----------------------------------------------------------------

    async def _turn(self, inbound: Inbound, reply: Reply) -> None:
        """Feed one message to the chat's open intake (starting one if there is none)."""
        kn, lang = self.knowledge, reply.lang
        if inbound.kind == "text" and read_intent(inbound.text, kn).kind == "forget":
            self._ask_forget(reply)  # "제 정보 다 삭제해 주세요": the /forget confirmation
            return
        session = await repo.open_session(engine=self.records, chat_id=inbound.chat_id)
        if session is None:
            latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
            if latest is not None and latest.status == "completed":
                values = (await self.graph.aget_state(self._config(latest.id))).values or {}
                await self._answer_finished(latest.id, values, inbound, reply)
                return
            session = await repo.create_session(
                engine=self.records,
                chat_id=inbound.chat_id,
                user_id=inbound.user_id,
                domain=self.spec.name,
            )
            log.info("chat=%s session=%s started", chat_tag(inbound.chat_id), session.id)
        config = self._config(session.id)
        snapshot = await self.graph.aget_state(config)
        node, asked = self._waiting(snapshot)
        if node == "COMPLETED":
            # Finished while the records did not follow (see repair_finished); never feed a
            # finished thread, which would start the intake over on top of its facts.
            await self._repair(session.id, snapshot.values)
            await self._answer_finished(session.id, snapshot.values, inbound, reply)
            return
        if self._replays(snapshot.values, inbound):
            # A replay of an input the graph already consumed (a crash came before it was
            # marked processed): answer with where the intake stands, do not feed it again, and
            # write the records in case the crash came before them (the history row of an
            # input is written once).
            self._prompt(snapshot.values, node, asked, reply)
            turn = self._history_row(snapshot.values.get("asking"), inbound, reply)
            await self._write_records(session.id, snapshot.values, node, turn)
            return
        if reply.alerts and node in ("FACT_COLLECTION", "RE_QUESTION"):
            # A message of danger is not an answer: the question waits, asked gently again.
            reply.add(kn.message("safety_resume", lang))
            self._prompt(snapshot.values, node, asked, reply)
            turn = self._history_row(asked, inbound, reply)
            await self._write_records(session.id, snapshot.values, node, turn)
            return
        user_input = self._precheck(inbound, reply, node, asked)
        if user_input is None:
            self._prompt(snapshot.values or {}, node or "INIT", asked, reply)
            return
        # Relative dates (어제, 지난달, 6/1) are read on the person's calendar, not UTC's:
        # 05:00 in Seoul is still "yesterday" in UTC.
        now = inbound.at.astimezone(self.settings.zone)
        context = Context(knowledge=kn, brain=self.brain, lang=lang, now=now, kb=self.kb)
        payload: Any
        if snapshot.next:
            payload = Command(resume=user_input)
        else:
            first = None if user_input["kind"] == "start" else user_input
            payload = {"answer": first, "last_input_id": user_input.get("id")}
        result = await self.graph.ainvoke(
            payload, config, context=context, durability=self.settings.intake_durability
        )
        failpoints.reach("after_graph")
        interrupts = result.get("__interrupt__") or []
        if interrupts:
            waiting = interrupts[0].value
            reply.messages += waiting["messages"]
            reply.field, reply.progress, reply.state = (
                waiting["field"],
                waiting["progress"],
                waiting["state"],
            )
        else:
            reply.messages += result.get("outbox", [])
            reply.state, reply.field = "COMPLETED", None
            reply.progress = round(
                100 * self.spec.snapshot(kn, result, "COMPLETED")["completion_rate"]
            )
        values = {k: v for k, v in result.items() if k != "__interrupt__"}
        turn = self._history_row(asked, inbound, reply)
        await self._write_records(session.id, values, reply.state, turn)
        failpoints.reach("after_records")
        if reply.state == "COMPLETED":
            await self._prune_checkpoints(config)

    @staticmethod
    def _config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    @staticmethod
    def _replays(values: dict[str, Any] | None, inbound: Inbound) -> bool:
        """Whether `inbound` is the input the thread consumed last, delivered again."""
        return bool(values and inbound.input_id and values.get("last_input_id") == inbound.input_id)

    async def _answer_finished(
        self, session_id: str, values: dict[str, Any], inbound: Inbound, reply: Reply
    ) -> None:
        """A message to a finished intake: it is complete; but the very input that finished it,
        delivered again after a crash, gets the summary that crash kept from being sent."""
        reply.state, reply.progress = "COMPLETED", 100
        if not self._replays(values, inbound):
            if inbound.kind == "text" and not reply.alerts:
                if await self._amend(session_id, values, inbound, reply):
                    return
                reply.add(self.knowledge.message("amend_nothing", reply.lang))
                return
            reply.add(self.knowledge.message("session_completed", reply.lang))
            return
        reply.messages += values.get("outbox", [])
        turn = self._history_row(values.get("asking"), inbound, reply)
        await self._write_records(session_id, values, "COMPLETED", turn)

    async def _amend(
        self, session_id: str, values: dict[str, Any], inbound: Inbound, reply: Reply
    ) -> bool:
        """A correction, addition or question after the summary; False when it was none."""
        now = inbound.at.astimezone(self.settings.zone)
        context = Context(
            knowledge=self.knowledge, brain=self.brain, lang=reply.lang, now=now, kb=self.kb
        )
        amended = await self.spec.amend(context, values, inbound.text[:MAX_INPUT_CHARS])
        if amended is None:
            return False
        updates, messages = amended
        config = self._config(session_id)
        # Written as the finishing node's output: the thread stays finished, with the change.
        await self.graph.aupdate_state(
            config, {**updates, "last_input_id": inbound.input_id}, as_node="COMPLETED"
        )
        reply.messages += messages
        snapshot = await self.graph.aget_state(config)
        turn = self._history_row(None, inbound, reply)
        await self._write_records(session_id, snapshot.values, "COMPLETED", turn)
        await self._prune_checkpoints(config)
        if "summary" in updates:
            log.info("chat=%s session=%s summary amended", chat_tag(inbound.chat_id), session_id)
        else:  # a question back, answered or noted: the intake itself is done
            reply.add(self.knowledge.message("session_completed", reply.lang))
        return True

    async def _is_replay(self, inbound: Inbound) -> bool:
        """Whether the chat's latest intake consumed `inbound` already (a redelivery)."""
        if not inbound.input_id:
            return False
        latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
        if latest is None:
            return False
        return self._replays((await self.graph.aget_state(self._config(latest.id))).values, inbound)

    async def repair_finished(self) -> int:
        """Write the records of every intake that finished in its checkpoint but not in them.

        That happens when the last records write failed or the process died between the graph's
        last step and the write. Run at start-up and before staff read the records; a chat's own
        reads repair its intake too (`_current`).
        """
        repaired = 0
        for session in await repo.list_sessions(engine=self.records, statuses=["open"]):
            snapshot = await self.graph.aget_state({"configurable": {"thread_id": session.id}})
            if self._waiting(snapshot)[0] == "COMPLETED":
                await self._repair(session.id, snapshot.values)
                repaired += 1
        return repaired

    async def _repair(self, session_id: str, values: dict[str, Any]) -> None:
        """Write a finished intake's records (summary, status) from its last checkpoint."""
        log.warning("session=%s finished but still open in the records; repairing", session_id)
        await self._write_records(session_id, values, "COMPLETED", None)
        await self._prune_checkpoints({"configurable": {"thread_id": session_id}})

    async def _prune_checkpoints(self, config: dict[str, Any]) -> None:
        """Keep only the last checkpoint of a finished thread (the legal state has no delta
        channels: the last checkpoint holds every value)."""
        await self.checkpoints.prune(config["configurable"]["thread_id"])

    def _precheck(
        self, inbound: Inbound, reply: Reply, node: str | None, asked: str | None
    ) -> dict[str, Any] | None:
        """Turn a message into graph input, or answer bad input here and return None."""
        kn, lang = self.knowledge, reply.lang
        base = {"id": inbound.input_id} if inbound.input_id else {}
        if inbound.kind == "start":
            return {**base, "kind": "start"}
        if inbound.kind in ("unsupported", "edited"):
            reply.add(
                kn.message(
                    "not_text" if inbound.kind == "unsupported" else "edit_not_applied", lang
                )
            )
            return None
        if inbound.kind == "file":
            return {**base, "kind": "file", "file": inbound.file or {}}
        if inbound.kind == "choice":
            if node in ("FACT_COLLECTION", "RE_QUESTION") and not inbound.data.startswith(
                f"a:{asked}:"
            ):
                reply.add(
                    kn.message(
                        "already_answered" if inbound.data.startswith("a:") else "stale_button",
                        lang,
                    )
                )
                return None
            if node != "CONFIRM_CASE_TYPE" and not inbound.data.startswith("a:"):
                reply.add(kn.message("stale_button", lang))
                return None
            return {**base, "kind": "choice", "data": inbound.data}
        text = inbound.text.strip()
        if not text:
            reply.add(kn.message("empty", lang))
            return None
        if len(text) > MAX_INPUT_CHARS:
            text = text[:MAX_INPUT_CHARS]
            reply.add(kn.message("too_long", lang, limit=MAX_INPUT_CHARS))
        written = detect_lang(text)
        if written and written != lang and not is_meaningless(text) and len(text) > 3:
            reply.add(kn.message("other_language_hint", lang))
        return {**base, "kind": "text", "text": text}

    @staticmethod
    def _history_row(asked: str | None, inbound: Inbound, reply: Reply) -> dict[str, Any]:
        """The question-answer row of a turn: the field asked, what was sent, what was replied."""
        user_text = (
            inbound.text
            if inbound.kind == "text"
            else inbound.data or (inbound.file or {}).get("kind", "")
        )
        return {
            "field": asked,
            "input_id": inbound.input_id,
            "user_text": user_text[:MAX_INPUT_CHARS],
            "bot_text": "\n\n".join(m["text"] for m in reply.messages),
        }

    async def _write_records(
        self, session_id: str, values: dict[str, Any], node: str, turn: dict[str, Any] | None
    ) -> None:
        """Write the records from the graph state; retried, and on failure logged (the checkpoint holds it)."""
        snapshot = self.spec.snapshot(self.knowledge, values, node)
        if snapshot.get("summary"):
            snapshot["summary"] = await self._with_alerts(session_id, snapshot["summary"])
        for attempt, pause in enumerate((*RECORD_RETRIES, None), start=1):
            try:
                await repo.sync_case(
                    engine=self.records, session_id=session_id, snapshot=snapshot, turn=turn
                )
                return
            except Exception as exc:  # noqa: BLE001 - any storage failure is retried, then logged
                if pause is None:
                    log.error(
                        "session=%s records not written after %d attempts: %s",
                        session_id,
                        attempt,
                        type(exc).__name__,
                    )
                    return
                log.warning(
                    "session=%s records write failed (%s), retrying", session_id, type(exc).__name__
                )
                await asyncio.sleep(pause)

    async def _with_alerts(self, session_id: str, summary: dict[str, Any]) -> dict[str, Any]:
        """The staff summary with the session's safety alerts at its top."""
        alerts = (await repo.alerts_for(engine=self.records, session_ids=[session_id])).get(
            session_id, []
        )
        if not alerts:
            return summary
        lang = summary["structured"].get("language", self.settings.intake_default_lang)
        zone = self.settings.zone
        listed = ", ".join(
            f"{a['code']} {datetime.fromisoformat(a['at']).replace(tzinfo=UTC).astimezone(zone):%m-%d %H:%M}"
            for a in alerts
        )
        header = f"{self.knowledge.message('summary_risk', lang)}: {listed}"
        return {
            "text": f"{header}\n{summary['text']}",
            "structured": {**summary["structured"], "alerts": alerts},
        }

    # --- helpers ------------------------------------------------------------------------------

    @staticmethod
    def _waiting(snapshot: Any) -> tuple[str | None, str | None]:
        """(node, field) the intake waits on, from its checkpoint."""
        for task in snapshot.tasks:
            for intr in task.interrupts:
                return intr.value.get("state"), intr.value.get("field")
        if snapshot.values and not snapshot.next:
            return "COMPLETED", None
        return None, None

    def _prompt(
        self, values: dict[str, Any], node: str | None, asked: str | None, reply: Reply
    ) -> None:
        """Repeat the current question in the chat's language."""
        if node is None:
            return
        message = self.spec.current_prompt(self.knowledge, values, node, asked, reply.lang)
        if message:
            reply.messages.append(message)
        reply.state, reply.field = node, asked
        snap = self.spec.snapshot(self.knowledge, values, node)
        reply.progress = round(100 * snap["completion_rate"])

    async def _lang(self, inbound: Inbound) -> str:
        """The chat's language: chosen, else detected from the first text, else Telegram's, else default."""
        chosen = await repo.get_lang(engine=self.records, chat_id=inbound.chat_id)
        if chosen:
            return chosen
        lang = detect_lang(inbound.text) if inbound.kind == "text" else None
        if lang is None and inbound.language_code:
            lang = "en" if inbound.language_code.lower().startswith("en") else "ko"
        lang = lang or self.settings.intake_default_lang
        await repo.set_lang(engine=self.records, chat_id=inbound.chat_id, lang=lang)
        return lang

    async def _current(
        self, chat_id: int
    ) -> tuple[Any, dict[str, Any], tuple[str | None, str | None]]:
        """(open session, its state values, (waiting node, field asked)).

        An open session whose graph has finished is repaired here (its records written and
        closed), so every read of the chat sees it completed.
        """
        session = await repo.open_session(engine=self.records, chat_id=chat_id)
        if session is None:
            return None, {}, (None, None)
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": session.id}})
        where = self._waiting(snapshot)
        if where[0] == "COMPLETED":
            await self._repair(session.id, snapshot.values)
            return None, {}, (None, None)
        return session, snapshot.values or {}, where

    async def _start_new(self, inbound: Inbound, reply: Reply) -> None:
        """Close any open intake and start a fresh one with the greeting."""
        session, _, _ = await self._current(inbound.chat_id)
        if session is not None:
            await repo.close_session(engine=self.records, session_id=session.id, status="cancelled")
        await repo.create_session(
            engine=self.records,
            chat_id=inbound.chat_id,
            user_id=inbound.user_id,
            domain=self.spec.name,
        )
        await self._turn(
            Inbound(chat_id=inbound.chat_id, kind="start", user_id=inbound.user_id, at=inbound.at),
            reply,
        )

    # --- commands -----------------------------------------------------------------------------

    async def _command(self, inbound: Inbound, reply: Reply) -> None:
        """Commands work at any point and never lose what was collected."""
        kn, lang, chat_id = self.knowledge, reply.lang, inbound.chat_id
        name = inbound.command.lower()
        if name in ("export", "sessions"):
            await self._admin(inbound, reply)
            return
        session, values, where = await self._current(chat_id)
        if name == "start":
            if session is not None and values:
                snap = self.spec.snapshot(kn, values, where[0] or "INIT")
                reply.add(
                    kn.message("resume_offer", lang, percent=round(100 * snap["completion_rate"])),
                    [
                        {"label": kn.message("btn_continue", lang), "data": "cmd:continue"},
                        {"label": kn.message("btn_restart", lang), "data": "cmd:restart"},
                    ],
                )
                reply.state, reply.keeps_question = where[0], True
            else:
                await self._start_new(inbound, reply)
        elif name == "new":
            if session is not None and values.get("description"):
                # Something was told already: ask before setting it aside.
                snap = self.spec.snapshot(kn, values, where[0] or "INIT")
                reply.add(
                    kn.message("new_confirm", lang, percent=round(100 * snap["completion_rate"])),
                    [
                        {"label": kn.message("btn_new_confirm", lang), "data": "cmd:restart"},
                        {"label": kn.message("btn_new_keep", lang), "data": "cmd:continue"},
                    ],
                )
                reply.state, reply.keeps_question = where[0], True
            else:
                reply.add(kn.message("restarted", lang))
                await self._start_new(inbound, reply)
        elif name == "cancel":
            if session is None:
                reply.add(kn.message("nothing_to_cancel", lang))
                return
            await repo.close_session(engine=self.records, session_id=session.id, status="cancelled")
            log.info("chat=%s session=%s cancelled", chat_tag(chat_id), session.id)
            reply.add(
                kn.message("cancelled_undo", lang),
                [{"label": kn.message("btn_undo_cancel", lang), "data": "cmd:undo_cancel"}],
            )
        elif name == "forget":
            self._ask_forget(reply)
        elif name == "help":
            reply.add(kn.message("help", lang))
            if inbound.user_id is not None and inbound.user_id in self.settings.admins:
                reply.add(kn.message("help_staff", lang))
            self._prompt(values, *where, reply)
        elif name == "status":
            reply.add(
                self.spec.status_text(kn, values, lang)
                if session
                else kn.message("status_none", lang)
            )
            self._prompt(values, *where, reply)
        elif name == "summary":
            reply.keeps_question = True
            await self._summary(chat_id, reply, values, where)
        elif name == "lang":
            choice = inbound.args[0].lower() if inbound.args else ""
            if choice in ("ko", "en"):
                await self._set_lang(chat_id, choice, reply, values, where)
            else:
                reply.keeps_question = True
                reply.add(
                    kn.message("lang_choose", lang),
                    [
                        {"label": "한국어", "data": "lang:ko"},
                        {"label": "English", "data": "lang:en"},
                    ],
                )
        else:
            reply.add(kn.message("unknown_command", lang))
            self._prompt(values, *where, reply)

    def _ask_forget(self, reply: Reply) -> None:
        """Ask before deleting everything; the question waiting stays (its buttons count)."""
        kn, lang = self.knowledge, reply.lang
        reply.keeps_question = True
        reply.add(
            kn.message("forget_confirm", lang),
            [
                {"label": kn.message("btn_forget", lang), "data": "cmd:forget"},
                {"label": kn.message("btn_keep", lang), "data": "cmd:keep"},
            ],
        )

    async def _control_button(self, inbound: Inbound, reply: Reply) -> None:
        """Buttons that steer the conversation: continue / start over / language."""
        kn = self.knowledge
        session, values, where = await self._current(inbound.chat_id)
        if inbound.data.startswith("lang:") and inbound.data[5:] in ("ko", "en"):
            await self._set_lang(inbound.chat_id, inbound.data[5:], reply, values, where)
        elif inbound.data == "cmd:continue" and session is not None:
            reply.add(kn.message("continued", reply.lang))
            self._prompt(values, *where, reply)
        elif inbound.data == "cmd:restart" and session is not None:
            reply.add(kn.message("restarted", reply.lang))
            await self._start_new(inbound, reply)
        elif inbound.data == "cmd:forget":
            await self._forget(inbound.chat_id, reply)
        elif inbound.data == "cmd:keep":
            reply.add(kn.message("forget_kept", reply.lang))
            self._prompt(values, *where, reply)
        elif inbound.data == "cmd:undo_cancel":
            await self._undo_cancel(inbound.chat_id, reply)
        else:
            reply.add(kn.message("stale_button", reply.lang))
            self._prompt(values, *where, reply)

    async def _forget(self, chat_id: int, reply: Reply) -> None:
        """Delete the chat's records and checkpoint threads (the person asked us to forget)."""
        sessions = await repo.forget_chat(engine=self.records, chat_id=chat_id)
        # With SQLite, deleted rows are zeroed (secure_delete) and the write-ahead logs that
        # still hold the old pages are folded in and emptied: nothing of the chat stays on disk.
        await self.checkpoints.forget(sessions)
        await truncate_records_wal(self.records)
        log.info("chat=%s forgotten: %d sessions deleted", chat_tag(chat_id), len(sessions))
        reply.add(self.knowledge.message("forgotten", reply.lang))
        reply.state = None

    async def _set_lang(
        self,
        chat_id: int,
        lang: str,
        reply: Reply,
        values: dict[str, Any],
        where: tuple[str | None, str | None],
    ) -> None:
        await repo.set_lang(engine=self.records, chat_id=chat_id, lang=lang)
        reply.lang = lang
        reply.add(self.knowledge.message("lang_set", lang))
        self._prompt(values, *where, reply)

    async def _undo_cancel(self, chat_id: int, reply: Reply) -> None:
        """The undo button of /cancel: the cancelled intake is open again, at its question."""
        kn, lang = self.knowledge, reply.lang
        latest = await repo.latest_session(engine=self.records, chat_id=chat_id)
        if latest is None or not await repo.reopen_session(
            engine=self.records, session_id=latest.id
        ):
            reply.add(kn.message("cancel_undo_gone", lang))
            return
        log.info("chat=%s session=%s cancel undone", chat_tag(chat_id), latest.id)
        reply.add(kn.message("cancel_undone", lang))
        _, values, where = await self._current(chat_id)
        self._prompt(values, *where, reply)

    def deadlines_of(self, record: dict[str, Any], lang: str) -> list[dict[str, Any]]:
        """The deadlines of a case record's facts as of today on the staff's calendar, each
        with its days left and whether it is urgent."""
        today = datetime.now(self.settings.zone).date()
        found = self.spec.deadlines(
            self.knowledge, record.get("sub_case_type"), record.get("facts") or {}, lang, today
        )
        return [
            d.as_dict() | {"days_left": d.days_left(today), "urgent": d.due_soon(today)}
            for d in found
        ]

    async def _summary(
        self,
        chat_id: int,
        reply: Reply,
        values: dict[str, Any],
        where: tuple[str | None, str | None],
    ) -> None:
        """/summary: the draft of the open intake, else the latest summary, else where it stands."""
        kn, lang = self.knowledge, reply.lang
        today = datetime.now(self.settings.zone).date()
        draft = self.spec.draft_text(self.kb, values, lang, today) if values else None
        if draft is not None:
            snap = self.spec.snapshot(kn, values, where[0] or "INIT")
            reply.add(
                kn.message("summary_draft", lang, percent=round(100 * snap["completion_rate"]))
            )
            reply.add(draft)
            reply.state, reply.field = where
            return
        latest = await repo.latest_session(engine=self.records, chat_id=chat_id)
        summary = (
            await repo.get_summary(engine=self.records, session_id=latest.id) if latest else None
        )
        if summary is not None:
            reply.add(summary.summary_text)
        else:
            reply.add(kn.message("no_summary_yet", lang))

    async def _admin(self, inbound: Inbound, reply: Reply) -> None:
        """/export and /sessions, for ADMIN_IDS only; anyone else learns nothing."""
        kn, lang = self.knowledge, reply.lang
        if inbound.user_id is None or inbound.user_id not in self.settings.admins:
            log.warning(
                "chat=%s refused admin command /%s", chat_tag(inbound.chat_id), inbound.command
            )
            reply.add(kn.message("admin_only", lang))
            return
        await self.repair_finished()  # staff never see a finished intake as open
        if inbound.command.lower() == "sessions":
            sessions = await repo.list_sessions(engine=self.records, statuses=["open"])
            if not sessions:
                reply.add(kn.message("sessions_none", lang))
                return
            alerts = await repo.alerts_for(
                engine=self.records, session_ids=[s.id for s in sessions]
            )
            records = {
                s.id: await repo.case_record(engine=self.records, session=s) for s in sessions
            }
            # Days to the nearest deadline due within 30 days, per session.
            urgent = {
                sid: min(
                    (d["days_left"] for d in self.deadlines_of(record, lang) if d["urgent"]),
                    default=None,
                )
                for sid, record in records.items()
            }
            # Safety alerts first, then deadlines close by, then the rest by last activity.
            sessions.sort(key=lambda s: (not alerts.get(s.id), urgent[s.id] is None))
            lines = [kn.message("sessions_header", lang, count=len(sessions))]
            for s in sessions[:50]:
                record = records[s.id]
                case = record["sub_case_type"] or "-"
                line = kn.message(
                    "sessions_line",
                    lang,
                    chat=s.chat_id,
                    case=case,
                    percent=round(100 * s.completion_rate),
                    state=s.current_state,
                    updated=s.updated_at.strftime("%Y-%m-%d %H:%M"),
                )
                if alerts.get(s.id):
                    line += f" | {kn.message('sessions_risk', lang)}"
                if urgent[s.id] is not None:
                    line += f" | {kn.message('sessions_urgent', lang, days=urgent[s.id])}"
                lines.append(line)
            reply.add("\n".join(lines))
            return
        args = [a.lower() for a in inbound.args]
        fmt = next((a for a in args if a in EXPORT_FORMATS), "json")
        rows = await export.collect(
            engine=self.records,
            include_open="all" in args,
            deadlines_of=lambda record: self.deadlines_of(record, lang),
        )
        if not rows:
            reply.add(kn.message("export_empty", lang))
            return
        content = export.render(rows, fmt)
        stamp = inbound.at.strftime("%Y%m%d-%H%M%S")
        caption = kn.message("export_caption", lang, count=len(rows), fmt=fmt)
        reply.documents.append(
            Document(f"intake-export-{stamp}.{fmt}", content.encode("utf-8"), caption)
        )
        reply.add(caption)
