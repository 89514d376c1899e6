"""A turn of the intake: the person's message through the graph, and the records after it.

The turn reads what it needs of the chat once (`repo.chat_view`, in `Engine.handle`) and leaves
what it changed (`repo.case_changes` between the case snapshots before and after it) on the
`Handling` for the one write at its end; a repair writes a snapshot over what is stored
(`repo.sync_case`), through the same statements.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from langgraph.types import Command

from bot import failpoints
from bot.messages import MAX_INPUT_CHARS, Inbound, Reply
from bot.services import Handling, Services, thread_config
from db import repo
from graphs.common.intents import read_intent
from graphs.common.text import detect_lang, is_meaningless
from graphs.legal.retype import PREFIX as RETYPE
from knowledge.loader import Knowledge

log = logging.getLogger("bot.engine")


# Threads whose standing after their last run is kept in memory (a few KB each).
STANDINGS_KEPT = 1024


@dataclass(frozen=True)
class Standing:
    """Where a thread stands: its state values, the node and field it waits on (node
    "COMPLETED" once finished, None before its first run), and whether a step is still to run
    (an interrupt waits, or a step was cut short)."""

    values: dict[str, Any]
    node: str | None
    asked: str | None
    pending: bool

    @classmethod
    def of(cls, snapshot: Any) -> Standing:
        """From a checkpoint's StateSnapshot."""
        for task in snapshot.tasks:
            for intr in task.interrupts:
                return cls(
                    snapshot.values or {},
                    intr.value.get("state"),
                    intr.value.get("field"),
                    bool(snapshot.next),
                )
        if snapshot.values and not snapshot.next:
            return cls(snapshot.values, "COMPLETED", None, False)
        return cls(snapshot.values or {}, None, None, bool(snapshot.next))

    @classmethod
    def after_run(cls, values: dict[str, Any], interrupts: list[Any]) -> Standing:
        """From a run's result: it waits at its interrupt, or it finished."""
        if interrupts:
            waiting = interrupts[0].value
            return cls(values, waiting["state"], waiting["field"], True)
        return cls(values, "COMPLETED", None, False)


def ask_forget(knowledge: Knowledge, reply: Reply) -> None:
    """Ask before deleting everything; the question waiting stays (its buttons count)."""
    lang = reply.lang
    reply.keeps_question = True
    reply.add(
        knowledge.message("forget_confirm", lang),
        [
            {"label": knowledge.message("btn_forget", lang), "data": "cmd:forget"},
            {"label": knowledge.message("btn_keep", lang), "data": "cmd:keep"},
        ],
    )


class LegalTurns:
    """The legal intake's turns: its threads, where each stands, and its session records."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.spec = services.legal
        self.graph = services.legal_graph
        # Where this process's last run left each recent thread (see `standing`).
        self.standings: OrderedDict[str, Standing] = OrderedDict()
        # Sessions whose last records write failed: their next turn rewrites them whole.
        self.dirty: set[str] = set()

    async def turn(self, h: Handling, inbound: Inbound | None = None) -> None:
        """Feed one message (the handling's, unless another is given) to the chat's open
        intake, starting one if there is none."""
        sv, reply = self.services, h.reply
        inbound = inbound or h.inbound
        kn, lang = sv.knowledge, reply.lang
        if inbound.kind == "text" and read_intent(inbound.text, kn).kind == "forget":
            ask_forget(kn, reply)  # "제 정보 다 삭제해 주세요": the /forget confirmation
            return
        if h.fresh:  # read at the start of the handling
            session, latest = h.view.open, h.view.latest
        else:
            session = await repo.open_session(engine=sv.records, chat_id=inbound.chat_id)
            latest = session
            if session is None:
                latest = await repo.latest_session(engine=sv.records, chat_id=inbound.chat_id)
        if session is None:
            if latest is not None and latest.status == "completed":
                values = (await self.standing(latest.id)).values
                h.sub_type = values.get("sub_type")
                await self._answer_finished(latest.id, values, inbound, reply)
                return
            session = await repo.create_session(
                engine=sv.records,
                chat_id=inbound.chat_id,
                user_id=inbound.user_id,
                domain=self.spec.name,
            )
            log.info("chat=%s session=%s started", sv.chat_tag(inbound.chat_id), session.id)
        config = thread_config(session.id)
        standing = await self.standing(session.id)
        node, asked = standing.node, standing.asked
        if node is None and standing.pending and standing.values:
            # Killed after a step's checkpoint and before its question (the interrupt) was
            # stored: run the pending step, which asks it again, before anything else.
            log.warning("session=%s resumed a step cut short by a crash", session.id)
            self.standings.pop(session.id, None)
            await self.graph.ainvoke(
                None,
                config,
                context=sv.context(inbound, lang),
                durability=sv.settings.intake_durability,
            )
            standing = await self.standing(session.id)
            node, asked = standing.node, standing.asked
        if node == "COMPLETED":
            # Finished while the records did not follow (see repair_finished); never feed a
            # finished thread, which would start the intake over on top of its facts.
            await self.repair(session.id, standing.values)
            await self._answer_finished(session.id, standing.values, inbound, reply)
            return
        if self.replays(standing.values, inbound):
            # A replay of an input the graph already consumed (a crash came before it was
            # marked processed): answer with where the intake stands, do not feed it again, and
            # write the records in case the crash came before them (the history row of an
            # input is written once).
            self.prompt(standing.values, node, asked, reply)
            turn = self._history_row(standing.values.get("asking"), inbound, reply)
            await self._write_records(session.id, standing.values, node, turn)
            return
        h.sub_type = standing.values.get("sub_type")
        user_input = self._precheck(inbound, reply, node, asked)
        if user_input is None:
            self.prompt(standing.values, node or "INIT", asked, reply)
            return
        if reply.alerts and node in ("FACT_COLLECTION", "RE_QUESTION"):
            # A message of danger is no answer: the question waits, asked gently again; what
            # it tells and asks is still kept (read as `danger`: nothing asked back of it).
            reply.add(kn.message("safety_resume", lang))
            user_input["danger"] = True
            # only a danger already answered, told again: the answer beside it may be kept
            user_input["danger_again"] = all(hit.again for hit in reply.alerts)
        elif reply.alerts and node in (None, "INIT"):
            # a first message that fired a rule telling of a case type (a threat to spread
            # intimate images): the intake takes that type
            told = {rule.code: rule.case for rule in kn.safety.rules if rule.case}
            case = next((told[h.code] for h in reply.alerts if h.code in told), None)
            if case is not None:
                user_input["case"] = case
        context = sv.context(inbound, lang)
        payload: Any
        if standing.pending:
            payload = Command(resume=user_input)
        else:
            first = None if user_input["kind"] == "start" else user_input
            payload = {"answer": first, "last_input_id": user_input.get("id")}
        self.standings.pop(session.id, None)  # until the run below has ended well
        result = await self.graph.ainvoke(
            payload, config, context=context, durability=sv.settings.intake_durability
        )
        failpoints.reach("after_graph")
        interrupts = result.get("__interrupt__") or []
        values = {k: v for k, v in result.items() if k != "__interrupt__"}
        h.sub_type = values.get("sub_type")
        self._keep_standing(session.id, Standing.after_run(values, interrupts))
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
        turn = self._history_row(asked, inbound, reply)
        before = (standing.values, node or "INIT")
        if not await self._stage(h, session, before, values, turn):
            await self._write_records(session.id, values, reply.state, turn)
            failpoints.reach("after_records")
        if reply.state == "COMPLETED":  # once the records that say so are written
            h.after.append(lambda: self._prune_checkpoints(session.id))

    async def standing(self, thread_id: str) -> Standing:
        """Where a thread stands: as this process's last run of it left it when that is known
        to be current, else read from its checkpoint."""
        known = self.standings.get(thread_id)
        if known is not None:
            self.standings.move_to_end(thread_id)
            return known
        return Standing.of(await self.graph.aget_state(thread_config(thread_id)))

    def _keep_standing(self, thread_id: str, standing: Standing) -> None:
        """Remember where a run left a thread, when no other process can move it meanwhile
        (a database of this process's own); the least recently used are let go."""
        if self.services.chat_locks.shared:
            return
        self.standings[thread_id] = standing
        self.standings.move_to_end(thread_id)
        while len(self.standings) > STANDINGS_KEPT:
            self.standings.popitem(last=False)

    def let_go(self, thread_ids: list[str]) -> None:
        """Forget where these threads stood (their checkpoints are being deleted)."""
        for thread_id in thread_ids:
            self.standings.pop(thread_id, None)

    async def _stage(
        self,
        h: Handling,
        session: Any,
        before: tuple[dict[str, Any], str],
        values: dict[str, Any],
        turn: dict[str, Any],
    ) -> bool:
        """Leave what the turn changed for the handling's one write; False when the records
        may not match the state before the turn (a failed write, a crash between the graph and
        the records), and must be written whole."""
        old = repo.CaseSnapshot.of(self.spec.snapshot(self.services.knowledge, *before))
        if (
            session.id in self.dirty
            or session.current_state != before[1]
            or abs(session.completion_rate - old.completion_rate) > 1e-9
        ):
            return False
        new = await self._case(session.id, values, h.reply.state)
        h.case = repo.case_changes(session.id, old, new, session.current_state)
        h.row = turn
        return True

    def records_written(self, session_id: str, written: bool) -> None:
        """The handling's write of a session's changes went in, or (`written` False) did not:
        then the checkpoint holds the turn, and the next one rewrites the records whole."""
        if written:
            self.dirty.discard(session_id)
        else:
            self.dirty.add(session_id)

    @staticmethod
    def replays(values: dict[str, Any] | None, inbound: Inbound) -> bool:
        """Whether `inbound` is the input the thread consumed last, delivered again."""
        return bool(values and inbound.input_id and values.get("last_input_id") == inbound.input_id)

    async def _answer_finished(
        self, session_id: str, values: dict[str, Any], inbound: Inbound, reply: Reply
    ) -> None:
        """A message to a finished intake: it is complete; but the very input that finished it,
        delivered again after a crash, gets the summary that crash kept from being sent."""
        kn = self.services.knowledge
        reply.state, reply.progress = "COMPLETED", 100
        if not self.replays(values, inbound):
            confirming = inbound.kind == "choice" and inbound.data.startswith("a:changes:")
            # a message that raised an alert is read too: what it tells and asks is kept
            if inbound.kind == "text" or confirming:
                if await self._amend(session_id, values, inbound, reply):
                    return
                if not reply.alerts:  # after a safety reply, nothing more to say
                    reply.add(kn.message("amend_nothing", reply.lang))
                return
            reply.add(kn.message("session_completed", reply.lang))
            return
        reply.messages += values.get("outbox", [])
        turn = self._history_row(values.get("asking"), inbound, reply)
        await self._write_records(session_id, values, "COMPLETED", turn)

    async def _amend(
        self, session_id: str, values: dict[str, Any], inbound: Inbound, reply: Reply
    ) -> bool:
        """A correction, addition or question after the summary; False when it was none."""
        sv = self.services
        amended = await self.spec.amend(
            replace(sv.context(inbound, reply.lang), danger=bool(reply.alerts)),
            values,
            inbound.text[:MAX_INPUT_CHARS] if inbound.kind == "text" else "",
            inbound.data if inbound.kind == "choice" else "",
        )
        if amended is None:
            return False
        updates, messages = amended
        config = thread_config(session_id)
        self.standings.pop(session_id, None)
        # Written as the finishing node's output: the thread stays finished, with the change.
        await self.graph.aupdate_state(
            config, {**updates, "last_input_id": inbound.input_id}, as_node="COMPLETED"
        )
        reply.messages += messages
        snapshot = await self.graph.aget_state(config)
        turn = self._history_row(None, inbound, reply)
        await self._write_records(session_id, snapshot.values, "COMPLETED", turn)
        await self._prune_checkpoints(session_id)
        if "summary" in updates:
            log.info("chat=%s session=%s summary amended", sv.chat_tag(inbound.chat_id), session_id)
        elif "proposed" not in updates and not reply.alerts:
            # a question back, answered or noted: it is done. Never after a safety reply
            # ("should i really call 112?" was told to start a new intake: legal_set13 B4)
            reply.add(sv.knowledge.message("after_summary_more", reply.lang))
        return True

    async def is_replay(self, inbound: Inbound, view: repo.ChatView) -> bool:
        """Whether the chat's latest intake consumed `inbound` already (a redelivery)."""
        if not inbound.input_id:
            return False
        latest = view.latest
        if latest is None:
            return False
        return self.replays((await self.standing(latest.id)).values, inbound)

    async def current(
        self, chat_id: int
    ) -> tuple[Any, dict[str, Any], tuple[str | None, str | None]]:
        """(open session, its state values, (waiting node, field asked)).

        An open session whose graph has finished is repaired here (its records written and
        closed), so every read of the chat sees it completed.
        """
        session = await repo.open_session(engine=self.services.records, chat_id=chat_id)
        if session is None:
            return None, {}, (None, None)
        standing = await self.standing(session.id)
        if standing.node == "COMPLETED":
            await self.repair(session.id, standing.values)
            return None, {}, (None, None)
        return session, standing.values, (standing.node, standing.asked)

    def prompt(
        self, values: dict[str, Any], node: str | None, asked: str | None, reply: Reply
    ) -> None:
        """Repeat the current question in the chat's language."""
        if node is None:
            return
        kn = self.services.knowledge
        message = self.spec.current_prompt(kn, values, node, asked, reply.lang)
        if message:
            reply.messages.append(message)
        reply.state, reply.field = node, asked
        snap = self.spec.snapshot(kn, values, node)
        reply.progress = round(100 * snap["completion_rate"])

    async def repair_finished(self) -> int:
        """Write the records of every intake that finished in its checkpoint but not in them.

        That happens when the last records write failed or the process died between the graph's
        last step and the write. Run at start-up and before staff read the records; a chat's own
        reads repair its intake too (`current`).
        """
        repaired = 0
        for session in await repo.list_sessions(engine=self.services.records, statuses=["open"]):
            snapshot = await self.graph.aget_state(thread_config(session.id))
            if Standing.of(snapshot).node == "COMPLETED":
                await self.repair(session.id, snapshot.values)
                repaired += 1
        return repaired

    async def repair(self, session_id: str, values: dict[str, Any]) -> None:
        """Write a finished intake's records (summary, status) from its last checkpoint."""
        log.warning("session=%s finished but still open in the records; repairing", session_id)
        await self._write_records(session_id, values, "COMPLETED", None)
        await self._prune_checkpoints(session_id)

    async def intake_state(self, session_id: str) -> dict[str, Any]:
        """An intake's state as its thread holds it ({} when the thread is gone)."""
        return dict((await self.standing(session_id)).values or {})

    async def _prune_checkpoints(self, thread_id: str) -> None:
        """Keep only the last checkpoint of a finished thread (the legal state has no delta
        channels: the last checkpoint holds every value)."""
        self.standings.pop(thread_id, None)
        await self.services.checkpoints.prune(thread_id)

    def _precheck(
        self, inbound: Inbound, reply: Reply, node: str | None, asked: str | None
    ) -> dict[str, Any] | None:
        """Turn a message into graph input, or answer bad input here and return None."""
        kn, lang = self.services.knowledge, reply.lang
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
            # the question's, a correction's yes/no, or a case type offered in its place
            answers = (f"a:{asked}:", "a:changes:", RETYPE)
            if node in ("FACT_COLLECTION", "RE_QUESTION") and not inbound.data.startswith(answers):
                reply.add(
                    kn.message(
                        "already_answered" if inbound.data.startswith("a:") else "stale_button",
                        lang,
                    )
                )
                return None
            if node != "CONFIRM_CASE_TYPE" and not inbound.data.startswith(("a:", RETYPE)):
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
        """Write a session's records whole from the graph state (repairs, replays, amendments):
        the changes from what is stored; retried, and on failure logged (the checkpoint holds
        it)."""
        sv = self.services
        snapshot = await self._case(session_id, values, node)
        written = await sv.retrying(
            lambda: repo.sync_case(
                engine=sv.records, session_id=session_id, snapshot=snapshot, turn=turn
            ),
            f"session={session_id}",
        )
        self.records_written(session_id, written)

    async def _case(self, session_id: str, values: dict[str, Any], node: str) -> repo.CaseSnapshot:
        """The case snapshot the records are written from: the graph state's, the session's
        safety alerts at the top of its summary."""
        snapshot = repo.CaseSnapshot.of(self.spec.snapshot(self.services.knowledge, values, node))
        if snapshot.summary is None:
            return snapshot
        return replace(snapshot, summary=await self._with_alerts(session_id, snapshot.summary))

    async def _with_alerts(self, session_id: str, summary: repo.Summary) -> repo.Summary:
        """The staff summary with the session's safety alerts at its top."""
        sv = self.services
        alerts = (await repo.alerts_for(engine=sv.records, session_ids=[session_id])).get(
            session_id, []
        )
        if not alerts:
            return summary
        lang = summary.structured.get("language", sv.settings.intake_default_lang)
        zone = sv.settings.zone
        listed = ", ".join(
            f"{a['code']} {datetime.fromisoformat(a['at']).replace(tzinfo=UTC).astimezone(zone):%m-%d %H:%M}"
            for a in alerts
        )
        header = f"{sv.knowledge.message('summary_risk', lang)}: {listed}"
        return repo.Summary(
            text=f"{header}\n{summary.text}", structured={**summary.structured, "alerts": alerts}
        )
