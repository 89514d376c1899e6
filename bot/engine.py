"""The engine: one entry point shared by every channel (Telegram, console).

Per-chat serialisation, replay guard, bad-input pre-checks, the buttons that count, commands,
the graph turn, and the records written after it. Nothing here knows Telegram.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections import OrderedDict, defaultdict
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.alerts import SafetyDesk
from bot.chat_tags import ChatTags
from bot.commands import Commands
from bot.config import Settings
from bot.medical import MedicalSteps
from bot.messages import (
    CONTROL_PREFIXES,
    Document,
    Inbound,
    Reply,
    clean_inbound,
)
from bot.staff import StaffViews
from bot.turn import HANDLING, Handling, Standing, TurnSteps
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
from graphs.legal.rules_brain import RulesBrain
from graphs.medical.graph import build_graph as build_medical_graph
from graphs.registry import GRAPHS, GraphSpec
from graphs.safety.rules import Recent
from knowledge.kb import KnowledgeBase, open_index
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge, default_knowledge

__all__ = ["Document", "Engine", "Inbound", "Reply"]  # the channels' vocabulary

log = logging.getLogger(__name__)


class Engine(TurnSteps, Commands, MedicalSteps, StaffViews):
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
        chat_tags: ChatTags | None = None,
    ) -> None:
        self.settings = settings
        # How logs name a chat: a keyed hash, the key this installation's (bot/chat_tags.py).
        self.chat_tag = chat_tags or ChatTags.of(settings)
        self.knowledge = knowledge
        self.brain = brain
        self.records = records
        self.checkpoints = checkpoints
        self.checkpointer = checkpoints.saver
        self.kb = kb or KnowledgeBase(knowledge)
        self.spec: GraphSpec = GRAPHS[domain]
        self.graph = self.spec.build().compile(checkpointer=self.checkpointer)
        # The medical assistant: its own graph and thread per chat, on the same checkpointer.
        self.medical_graph = build_medical_graph().compile(checkpointer=self.checkpointer)
        self.safety = SafetyDesk(knowledge, settings.admins)
        self.chat_locks = ChatLocks(records)  # a chat's turns one at a time, across processes
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        # Sessions whose last records write failed: their next turn rewrites them whole.
        self._dirty: set[str] = set()
        # Where this process's last run left each recent thread (see TurnSteps._standing).
        self._standings: OrderedDict[str, Standing] = OrderedDict()

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
        await dispose_records_engine(self.records)

    # --- entry point -------------------------------------------------------------------------

    async def handle(self, inbound: Inbound) -> Reply:
        """Handle one inbound message of a chat; messages of one chat run one at a time.

        What the chat is (language, buttons shown, latest session) is read once at the start;
        what the handling changed is written at the end in one transaction (`_commit`).
        """
        inbound = clean_inbound(inbound)
        async with self._locks[inbound.chat_id]:
            view = await repo.chat_view(engine=self.records, chat_id=inbound.chat_id)
            lang = view.lang or self._first_lang(inbound)
            handling = Handling(view=view, lang=None if view.lang else lang)
            if not view.lang_chosen and (followed := self._followed_lang(inbound, lang)):
                lang = handling.lang = followed  # answered as they write, and remembered
            token = HANDLING.set(handling)
            try:
                reply = Reply(lang=lang)
                await self._dispatch(inbound, reply, view)
                await self._commit(inbound.chat_id, handling, self._offered(inbound, reply, view))
            finally:
                HANDLING.reset(token)
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

    async def _dispatch(self, inbound: Inbound, reply: Reply, view: repo.ChatView) -> None:
        """Safety first (over the chat's last day), a crisis held, then the refused press, the
        command, the steering button or the turn."""
        recent = Recent.load(view.safety, inbound.at)
        handling = HANDLING.get()
        if handling is not None:
            handling.safety = recent
        reply.help_coming = bool(self.safety.waiting_for_help(recent, inbound.at))
        holding = self.safety.level_still(recent, inbound.at, reply.lang) is not None
        said = self._said(inbound)
        # what to do now in the words the person wrote in (an English tourist in a Korean chat)
        lang = (detect_lang(said) if len(said.strip()) > 3 else None) or reply.lang
        reply.alerts = self.safety.assess(said, recent, inbound.at)
        if reply.alerts:  # what to do now comes before anything else
            reply.add(self.safety.reply(reply.alerts, lang))
        elif holding and recent.settled == inbound.at.isoformat():
            reply.add(self.knowledge.message("help_arrived", lang))  # the crew has them
        elif again := self.safety.urgency_again(said, recent, lang):
            reply.add(again)  # "can I wait?" after a red flag: the level, first
            reply.level_again = True
        if recent.crisis is not None and inbound.kind in ("text", "file"):
            self._stay_with(reply, view)  # no intake question until the person chooses
            if reply.alerts:
                await self._raise_alerts(inbound, reply)
            return
        refusal = self._press_refusal(inbound, view) if inbound.kind == "choice" else None
        if (
            refusal is not None
            and not inbound.data.startswith(CONTROL_PREFIXES)
            and await self._is_replay(inbound, view)
        ):  # an answer the intake took before a crash: answered as a replay (never fed
            refusal = None  # again); a steering button is never let through this way
        domain = view.domain
        if refusal is not None:
            await self._refuse_press(inbound, refusal, reply)
        elif inbound.kind == "command":
            await self._domain_command(inbound, reply, view)
        elif inbound.kind == "choice" and inbound.data.startswith("domain:"):
            await self._domain_button(inbound, reply)
        elif inbound.kind == "choice" and inbound.data.startswith(CONTROL_PREFIXES):
            await self._control_button(inbound, reply)
        elif inbound.kind == "choice" and inbound.data.startswith("m:"):
            await self._medical_button(inbound, reply)
        else:
            if domain is None and inbound.kind in ("text", "file"):
                if view.open is None:  # a chat's first words choose where they go
                    domain = self._first_domain(inbound)
                    await self._set_domain(inbound.chat_id, domain, reply.lang)
            if domain == "medical":
                await self._medical_turn(inbound, reply)
            else:
                await self._turn(inbound, reply)
        if reply.alerts:
            await self._raise_alerts(inbound, reply)

    async def _domain_command(self, inbound: Inbound, reply: Reply, view: repo.ChatView) -> None:
        """/start and /new choose or switch the domain; other commands act on the domain in
        use (the medical ones first when it is medical)."""
        name, args = inbound.command.lower(), [a.lower() for a in inbound.args]
        # `/start intake` is the deep link a group chat is given: the legal intake.
        wanted = next((a for a in args if a in ("legal", "medical", "intake")), None)
        wanted = "legal" if wanted == "intake" else wanted
        if name in ("start", "new") and wanted is not None:
            await self._set_domain(inbound.chat_id, wanted, reply.lang)
            if wanted == "medical":
                await self._medical_start(inbound, reply)
            else:
                await self._command(inbound, reply)
            return
        if name == "start" and view.domain is None and view.open is None:
            self._offer_domains(reply)
            return
        if name == "start" and view.domain == "medical":
            await self._medical_start(inbound, reply)
            return
        if name == "new" and view.domain == "medical":
            current = self.knowledge.message("domain_medical_name", reply.lang)
            self._offer_domains(reply, "switch_domain", current=current)
            return
        if view.domain == "medical" and await self._medical_command(inbound, reply):
            return
        await self._command(inbound, reply)

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
            session_id: str | None = await self._profile_id(inbound.chat_id) or None
        else:
            latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
            session_id = latest.id if latest else None
        reply.notices += await self.safety.record(
            self.records,
            chat_id=inbound.chat_id,
            chat_label=self.chat_tag(inbound.chat_id),
            session_id=session_id,
            input_id=inbound.input_id,
            hits=reply.alerts,
            at=inbound.at.astimezone(self.settings.zone),
            lang=self.settings.intake_default_lang,
        )

    # --- buttons ------------------------------------------------------------------------------

    @staticmethod
    def _offered(
        inbound: Inbound, reply: Reply, view: repo.ChatView
    ) -> tuple[int | None, list[str]]:
        """The reply's buttons: from now the only presses that count, for this person only."""
        offered = [c["data"] for m in reply.messages for c in m.get("choices") or []]
        if reply.keeps_question:
            previous = view.offer
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

    async def _refuse_press(self, inbound: Inbound, refusal: str, reply: Reply) -> None:
        """A press that does not count: say why, and show where things stand in the chat's
        current domain (a medical chat is never shown its open legal intake's question)."""
        reply.refused = True
        reply.add(self.knowledge.message(refusal, reply.lang))
        handling = HANDLING.get()
        if handling is not None and handling.view.domain == "medical":
            await self._medical_open_question(inbound.chat_id, reply)
            return
        session, values, where = await self._current(inbound.chat_id)
        if session is not None:
            self._prompt(values, *where, reply)
            return
        latest = await repo.latest_session(engine=self.records, chat_id=inbound.chat_id)
        if latest is not None and latest.status == "completed":
            reply.add(self.knowledge.message("session_completed", reply.lang))
            reply.state = "COMPLETED"

    # --- helpers ------------------------------------------------------------------------------

    @staticmethod
    def _waiting(snapshot: Any) -> tuple[str | None, str | None]:
        """(node, field) the intake waits on, from its checkpoint."""
        standing = Standing.of(snapshot)
        return standing.node, standing.asked

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
        standing = await self._standing(session.id)
        if standing.node == "COMPLETED":
            await self._repair(session.id, standing.values)
            return None, {}, (None, None)
        return session, standing.values, (standing.node, standing.asked)
