"""The engine: one entry point shared by every channel (Telegram, console).

Per-chat serialisation, the safety pre-check, the buttons that count, and the one write of a
handling; the legal turn, the medical turn, commands and staff views are its parts (bot/turn.py,
bot/medical.py, bot/commands.py, bot/staff.py), composed here. Nothing here knows Telegram.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import failpoints
from bot.alerts import SafetyDesk
from bot.brains import close_brain, make_brain
from bot.chat_tags import ChatTags
from bot.commands import CommandRouter, Handler
from bot.config import Settings
from bot.medical import MedicalTurns
from bot.messages import (
    CONTROL_PREFIXES,
    Document,
    Inbound,
    Reply,
    clean_inbound,
)
from bot.services import Handling, Services
from bot.staff import StaffViews
from bot.turn import LegalTurns
from db import repo
from db.engine import (
    Checkpoints,
    create_records_engine,
    dispose_records_engine,
    open_checkpoints,
)
from db.locks import ChatLocks
from graphs.common.brain import Brain
from graphs.common.text import clearly_written_in, detect_lang
from graphs.common.usage import metered
from graphs.registry import GRAPHS, LEGAL, MEDICAL
from graphs.safety.rules import Recent
from knowledge.kb import KnowledgeBase, open_index
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge, default_knowledge

__all__ = ["Document", "Engine", "Inbound", "Reply"]  # the channels' vocabulary

log = logging.getLogger(__name__)


class Engine:
    """Runs intakes for every chat on one checkpointer and one records database.

    Composed of its parts, each given the shared `Services`: the legal intake's turns
    (`LegalTurns`), the medical assistant and the choice of domain (`MedicalTurns`), staff's
    views (`StaffViews`) and the commands and steering buttons (`CommandRouter`). One
    `Handling` per inbound message is passed along their calls.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        knowledge: Knowledge,
        brain: Brain,
        records: AsyncEngine,
        checkpoints: Checkpoints,
        kb: KnowledgeBase | None = None,
        chat_tags: ChatTags | None = None,
    ) -> None:
        # Every registered graph on the one checkpointer; the medical assistant has its own
        # thread per chat beside the legal intake's sessions.
        graphs = {
            name: spec.build().compile(checkpointer=checkpoints.saver)
            for name, spec in GRAPHS.items()
        }
        self.services = Services(
            settings=settings,
            knowledge=knowledge,
            brain=brain,
            kb=kb or KnowledgeBase(knowledge),
            records=records,
            checkpoints=checkpoints,
            legal=LEGAL,
            legal_graph=graphs[LEGAL.name],
            medical_graph=graphs[MEDICAL.name],
            safety=SafetyDesk(knowledge, settings.admins),
            chat_locks=ChatLocks(records),
            chat_tag=chat_tags or ChatTags.of(settings),
        )
        self.legal = LegalTurns(self.services)
        self.medical = MedicalTurns(self.services, self.legal)
        self.staff = StaffViews(self.services, self.legal)
        self.commands = CommandRouter(self.services, self.legal, self.medical, self.staff)
        # Who answers a counted press, by the start of its data (the first that matches): the
        # buttons that steer the conversation, then each graph's own, as the registry names
        # them (graphs/registry.py); a press no rule takes answers the legal intake.
        actions: dict[str, dict[str, Handler]] = {
            LEGAL.name: {"answer": self.medical.legal_press},
            MEDICAL.name: self.medical.button_actions,
        }
        self.presses: list[tuple[str, Handler]] = [
            ("domain:", self.commands.domain_button),
            ("cmd:", self.commands.control_button),
            ("lang:", self.commands.control_button),
        ] + [
            (rule.prefix, actions[spec.name][rule.action])
            for spec in GRAPHS.values()
            for rule in spec.buttons
        ]
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)

    # --- what the channels, the CLI and the tests read of the engine ----------------------------

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def knowledge(self) -> Knowledge:
        return self.services.knowledge

    @property
    def records(self) -> AsyncEngine:
        return self.services.records

    @property
    def checkpointer(self) -> BaseCheckpointSaver:
        return self.services.checkpoints.saver

    @property
    def graph(self) -> CompiledStateGraph:
        """The legal intake's graph."""
        return self.services.legal_graph

    @property
    def medical_graph(self) -> CompiledStateGraph:
        return self.services.medical_graph

    @property
    def chat_locks(self) -> ChatLocks:
        return self.services.chat_locks

    @property
    def chat_tag(self) -> ChatTags:
        return self.services.chat_tag

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
            brain=brain or make_brain(settings, knowledge),
            records=records,
            checkpoints=checkpoints,
            kb=kb,
        )
        await engine.repair_finished()
        return engine

    async def close(self) -> None:
        """Close both databases (and the model client, in LLM mode)."""
        await close_brain(self.services.brain)
        await self.services.checkpoints.close()
        await dispose_records_engine(self.records)

    # --- what the parts offer callers -----------------------------------------------------------

    async def repair_finished(self) -> int:
        """Write the records of every intake that finished in its checkpoint but not in them."""
        return await self.legal.repair_finished()

    async def intake_state(self, session_id: str) -> dict[str, Any]:
        """An intake's state as its thread holds it ({} when the thread is gone)."""
        return await self.legal.intake_state(session_id)

    async def use_domain(self, chat_id: int, domain: str) -> None:
        """Send the chat's messages to `domain` from now on (the console's --domain)."""
        await self.medical.use_domain(chat_id, domain)

    def deadlines_of(self, record: dict[str, Any], lang: str) -> list[dict[str, Any]]:
        """The deadlines of a case record's facts as of today, on the staff's calendar."""
        return self.staff.deadlines_of(record, lang)

    async def medical_summary(
        self, profile: Any, alerts: list[dict[str, Any]], lang: str
    ) -> str | None:
        """A medical profile's pre-visit summary as of now (from its graph state)."""
        return await self.staff.medical_summary(profile, alerts, lang)

    # --- entry point -------------------------------------------------------------------------

    async def handle(
        self, inbound: Inbound, *, first: Callable[[Reply], Awaitable[bool]] | None = None
    ) -> Reply:
        """Handle one inbound message of a chat; messages of one chat run one at a time.

        What the chat is (language, buttons shown, latest session) is read once at the start;
        what the handling changed is written at the end in one transaction (`_commit`).
        `first`, where the channel can send at once (True when all was delivered): the safety
        reply goes through it the moment the rules fire, before the turn runs and any model is
        asked; the returned reply counts it in `sent`.
        """
        inbound = clean_inbound(inbound)
        async with self._locks[inbound.chat_id]:
            view = await repo.chat_view(engine=self.records, chat_id=inbound.chat_id)
            lang = view.lang or self._first_lang(inbound)
            reply = Reply(lang=lang)
            h = Handling(
                inbound=inbound,
                reply=reply,
                view=view,
                lang=None if view.lang else lang,
                first=first,
            )
            if not view.lang_chosen and (followed := self._followed_lang(inbound, lang)):
                reply.lang = h.lang = followed  # answered as they write, and remembered
            # what the model's calls of this turn cost, and by when they must all have ended
            with metered(self.settings.intake_llm_budget) as h.meter:
                try:
                    await self._dispatch(h)
                except Exception:
                    if not h.reply.alerts:
                        raise
                    h = await self._alert_stands(h)
                    reply = h.reply
            await self._commit(h, self._offered(h))
            log.info(
                "chat=%s kind=%s state=%s field=%s progress=%s messages=%d",
                self.chat_tag(inbound.chat_id),
                inbound.kind,
                reply.state,
                reply.field,
                reply.progress,
                len(reply.messages),
            )
            return reply

    async def _dispatch(self, h: Handling) -> None:
        """Safety first (over the chat's last day), a crisis held, then the refused press, the
        command, the steering button or the turn."""
        inbound, reply, view, desk = h.inbound, h.reply, h.view, self.services.safety
        recent = h.safety = Recent.load(view.safety, inbound.at)
        reply.help_coming = bool(desk.waiting_for_help(recent, inbound.at))
        holding = desk.level_still(recent, inbound.at, reply.lang) is not None
        said = self._said(inbound)
        # what to do now in the words the person wrote in (an English tourist in a Korean chat)
        lang = (detect_lang(said) if len(said.strip()) > 3 else None) or reply.lang
        reply.alerts = desk.assess(said, recent, inbound.at)
        if reply.alerts:  # what to do now comes before anything else
            reply.add(desk.reply(reply.alerts, lang))
        elif holding and recent.settled == inbound.at.isoformat():
            reply.add(self.knowledge.message("help_arrived", lang))  # the crew has them
        elif again := desk.urgency_again(said, recent, lang):
            reply.add(again)  # "can I wait?" after a red flag: the level, first
            reply.level_again = True
        if reply.alerts or reply.level_again:
            h.ahead = len(reply.messages)
            await self._send_first(h)
        if recent.crisis is not None and inbound.kind in ("text", "file"):
            self._stay_with(reply, view)  # no intake question until the person chooses
            if reply.alerts:
                await self._raise_alerts(inbound, reply)
            return
        refusal = self._press_refusal(inbound, view) if inbound.kind == "choice" else None
        if (
            refusal is not None
            and not inbound.data.startswith(CONTROL_PREFIXES)
            and await self.legal.is_replay(inbound, view)
        ):  # an answer the intake took before a crash: answered as a replay (never fed
            refusal = None  # again); a steering button is never let through this way
        domain = view.domain
        if refusal is not None:
            await self._refuse_press(h, refusal)
        elif inbound.kind == "command":
            await self.commands.command(h)
        elif inbound.kind == "choice":
            await self._press_handler(inbound.data)(h)
        else:
            if domain is None and inbound.kind in ("text", "file"):
                if view.open is None:  # a chat's first words choose where they go
                    domain = self.medical.first_domain(inbound)
                    await self.medical.set_domain(inbound.chat_id, domain, reply.lang, h)
            if domain == "medical":
                await self.medical.turn(h)
            else:
                await self.legal.turn(h)
        if h.sub_type is not None:  # what the intake stands for counts with the next messages
            desk.hold_case(recent, h.sub_type)
        if h.meter.danger_read and not reply.alerts and recent.crisis is None:
            # a model read danger the rules let through: its reply still comes first
            log.warning("chat=%s danger read by the model only", self.chat_tag(inbound.chat_id))
            reply.alerts = desk.read_danger(recent, inbound.at)
            safety = {"text": desk.reply(reply.alerts, lang), "choices": []}
            reply.messages.insert(reply.sent, safety)
        if reply.alerts:
            await self._raise_alerts(inbound, reply)

    async def _alert_stands(self, failed: Handling) -> Handling:
        """A turn that broke after its safety rules fired: the safety reply still goes out, the
        alert is still recorded and staff told, and nothing else of the turn is written (the
        person is told the rest failed, as any broken turn)."""
        inbound, reply = failed.inbound, failed.reply
        log.exception(
            "chat=%s turn failed after its safety reply: the alert stands, the rest is dropped",
            self.chat_tag(inbound.chat_id),
        )
        kept = Reply(
            messages=reply.messages[: failed.ahead],
            lang=reply.lang,
            alerts=list(reply.alerts),
            help_coming=reply.help_coming,
            keeps_question=True,  # the intake did not move: its question's buttons still count
        )
        kept.sent = min(reply.sent, failed.ahead)
        kept.add(self.knowledge.message("error", kept.lang))
        h = Handling(
            inbound=inbound,
            reply=kept,
            view=failed.view,
            lang=failed.lang,
            safety=failed.safety,
            first=failed.first,
            meter=failed.meter,
        )
        await self._raise_alerts(inbound, kept)
        return h

    async def _send_first(self, h: Handling) -> None:
        """Deliver the safety reply now, where the channel can, so it never waits for the turn
        (a model's reading can take seconds); a failed delivery leaves it to go with the rest."""
        reply = h.reply
        if h.first is None or not reply.messages:
            return
        ahead = Reply(messages=list(reply.messages), lang=reply.lang, alerts=list(reply.alerts))
        try:
            delivered = await h.first(ahead)
        except Exception as exc:  # noqa: BLE001 - the reply still goes out with the turn's
            delivered = False
            log.warning("safety reply not sent ahead: %s", type(exc).__name__)
        if not delivered:
            log.warning(
                "chat=%s safety reply not delivered ahead: it goes with the turn's reply",
                self.chat_tag(h.inbound.chat_id),
            )
            return
        reply.sent = len(ahead.messages)

    def _stay_with(self, reply: Reply, view: repo.ChatView) -> None:
        """After a suicide alert: a word of presence (unless the alert just spoke) and a button
        to carry on when the person is ready; nothing is routed or asked."""
        kn, lang = self.knowledge, reply.lang
        if not any(hit.category == "suicide" for hit in reply.alerts):
            reply.add(kn.message("crisis_stay", lang))
        reply.add(
            kn.message("crisis_resume_offer", lang),
            [{"label": kn.message("btn_crisis_resume", lang), "data": "cmd:resume"}],
        )
        if view.domain == "medical":
            reply.state = "MEDICAL"

    @staticmethod
    def _said(inbound: Inbound) -> str:
        """The person's own words in an input: a text, or a file's caption."""
        if inbound.kind == "text":
            return inbound.text
        if inbound.kind == "file":
            return str((inbound.file or {}).get("caption") or "")
        return ""

    async def _raise_alerts(self, inbound: Inbound, reply: Reply) -> None:
        """Record the safety alerts of this input (on the medical profile when the chat is in
        the medical domain, else on its latest intake) and queue the staff notices."""
        if reply.state == "MEDICAL":
            session_id: str | None = await self.medical.profile_id(inbound.chat_id) or None
        else:
            latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
            session_id = latest.id if latest else None
        reply.notices += await self.services.safety.record(
            self.records,
            chat_id=inbound.chat_id,
            chat_label=self.chat_tag(inbound.chat_id),
            session_id=session_id,
            input_id=inbound.input_id,
            hits=reply.alerts,
            at=inbound.at.astimezone(self.settings.zone),
            lang=self.settings.intake_default_lang,
        )

    async def _commit(self, h: Handling, offer: tuple[int | None, list[str]]) -> None:
        """The handling's one write: language, offer, the safety memory, and the turn's case
        changes and row or its medical profile, all in one transaction."""
        sid = h.case.session_id if h.case else None
        profile = None if h.forgotten else h.profile
        chat_id = h.inbound.chat_id
        safety = None
        if h.safety is not None and h.safety.changed and not h.forgotten:
            row_lang = h.lang or h.view.lang or self.settings.intake_default_lang
            safety = (row_lang, h.safety.dump())
        if sid is not None:
            label = f"session={sid}"
        elif profile is not None:
            label = f"profile={profile.profile_id}"
        else:
            label = f"chat={self.chat_tag(chat_id)}"
        written = await self.services.retrying(
            lambda: repo.write_turn(
                engine=self.records,
                chat_id=chat_id,
                lang=h.lang,
                offer=None if h.forgotten else offer,
                case=h.case,
                turn=h.row,
                safety=safety,
                profile=profile,
                tokens=self._tokens(h),
            ),
            label,
        )
        if sid is not None:
            self.legal.records_written(sid, written)
        if written and (sid is not None or profile is not None):
            failpoints.reach("after_records")
        for step in h.after:
            await step()

    @staticmethod
    def _tokens(h: Handling) -> tuple[str, int, int] | None:
        """(session, prompt, completion tokens) the turn's model calls cost, if any."""
        used = h.meter.used
        if not used.prompt_tokens and not used.completion_tokens or h.forgotten:
            return None
        session = h.case.session_id if h.case else h.view.latest.id if h.view.latest else None
        return (session, used.prompt_tokens, used.completion_tokens) if session else None

    # --- buttons ------------------------------------------------------------------------------

    def _press_handler(self, data: str) -> Handler:
        """Who answers a counted press with this data (the table `presses`)."""
        return next(
            (handler for prefix, handler in self.presses if data.startswith(prefix)),
            self.medical.legal_press,
        )

    @staticmethod
    def _offered(h: Handling) -> tuple[int | None, list[str]]:
        """The reply's buttons: from now the only presses that count, for this person only."""
        inbound, reply = h.inbound, h.reply
        offered = [c["data"] for m in reply.messages for c in m.get("choices") or []]
        if reply.keeps_question:
            previous = h.view.offer
            if previous is not None and previous[0] == inbound.user_id:
                kept = [d for d in previous[1] if not d.startswith(CONTROL_PREFIXES)]
                offered += [d for d in kept if d not in offered]
        return inbound.user_id, offered

    def _press_refusal(self, inbound: Inbound, view: repo.ChatView) -> str | None:
        """None for a press of a button the chat was shown last, by the person shown it; else
        the K0 key that says why it does not count."""
        offer = view.offer
        if offer is None or inbound.data not in offer[1]:
            # An answer button of an earlier question, or anything never (or no longer) shown.
            return "already_answered" if inbound.data.startswith("a:") else "stale_button"
        if offer[0] != inbound.user_id:
            log.warning(
                "chat=%s button pressed by someone it was not shown to; refused",
                self.chat_tag(inbound.chat_id),
            )
            return "stale_button"
        return None

    async def _refuse_press(self, h: Handling, refusal: str) -> None:
        """A press that does not count: say why, and show where things stand in the chat's
        current domain (a medical chat is never shown its open legal intake's question)."""
        inbound, reply = h.inbound, h.reply
        reply.refused = True
        reply.add(self.knowledge.message(refusal, reply.lang))
        if h.view.domain == "medical":
            await self.medical.open_question(inbound.chat_id, reply)
            return
        session, values, where = await self.legal.current(inbound.chat_id)
        if session is not None:
            self.legal.prompt(values, *where, reply)
            return
        latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
        if latest is not None and latest.status == "completed":
            reply.add(self.knowledge.message("session_completed", reply.lang))
            reply.state = "COMPLETED"

    # --- the chat's language ------------------------------------------------------------------

    @staticmethod
    def _followed_lang(inbound: Inbound, lang: str) -> str | None:
        """The language a chat switches to because the person plainly writes in it (a chat
        follows its writer until /lang picks a language); None to stay in `lang`."""
        written = clearly_written_in(inbound.text) if inbound.kind == "text" else None
        return written if written is not None and written != lang else None

    def _first_lang(self, inbound: Inbound) -> str:
        """A chat's language when it never had one: detected from the first text, else
        Telegram's, else the default (remembered by the handling's write)."""
        lang = detect_lang(inbound.text) if inbound.kind == "text" else None
        if lang is None and inbound.language_code:
            lang = "en" if inbound.language_code.lower().startswith("en") else "ko"
        return lang or self.settings.intake_default_lang
