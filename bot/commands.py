"""The person's commands (/start /new /cancel /forget /help /status /summary /lang /profile, and
staff's /export /sessions), routed from one table, and the buttons that steer the conversation
(continue, start over, forget, keep, language, undo, Legal / Medical)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from bot.medical import DOMAINS, MedicalTurns
from bot.messages import Inbound
from bot.services import Handling, Services
from bot.staff import StaffViews
from bot.turn import LegalTurns, ask_forget
from db import repo
from db.engine import truncate_records_wal

log = logging.getLogger("bot.engine")

Handler = Callable[[Handling], Awaitable[None]]
# Where the legal intake stands: (open session, its state values, (waiting node, field asked)).
Standing = tuple[Any, dict[str, Any], tuple[str | None, str | None]]
Control = Callable[[Handling, Standing], Awaitable[None]]  # a steering button's handler


@dataclass(frozen=True)
class Route:
    """Who answers a command: in the legal intake, and in the medical assistant (None: as in
    the legal intake, the reply staying with the assistant)."""

    legal: Handler
    medical: Handler | None = None


class CommandRouter:
    """Commands, from one table, and the buttons that steer the conversation."""

    def __init__(
        self, services: Services, legal: LegalTurns, medical: MedicalTurns, staff: StaffViews
    ) -> None:
        self.services = services
        self.legal = legal
        self.medical = medical
        # Command name -> who answers it; a name not here is an unknown command.
        self.routes: dict[str, Route] = {
            "start": Route(self._start, self._start),  # chooses or switches the domain
            "new": Route(self._new, self._new),  # likewise
            "cancel": Route(self._cancel, medical.cancel_command),
            "forget": Route(self._ask_forget),
            "help": Route(self._help, medical.help_command),
            "status": Route(self._status, medical.status_command),
            "summary": Route(self._summary, medical.summary_command),
            "profile": Route(self._unknown, medical.profile_command),
            "lang": Route(self._lang),
            "export": Route(staff.export_file),  # ADMIN_IDS only
            "sessions": Route(staff.sessions_view),  # ADMIN_IDS only
        }
        self.unknown = Route(self._unknown)
        # Steering button data -> who answers it; data not here is a stale button.
        self.controls: dict[str, Control] = {
            "lang:ko": partial(self._set_lang, lang="ko"),
            "lang:en": partial(self._set_lang, lang="en"),
            "cmd:continue": self._continue,  # an open intake's question again
            "cmd:restart": self._restart,  # the open intake started over
            "cmd:forget": lambda h, _: self._forget(h),  # /forget confirmed
            "cmd:keep": self._keep,  # /forget declined
            "cmd:undo_cancel": lambda h, _: self._undo_cancel(h),  # /cancel undone
            "cmd:resume": self._resume_after_crisis,  # carry on after a suicide alert
        }

    async def command(self, h: Handling) -> None:
        """A command: answered in the chat's domain; commands work at any point and never lose
        what was collected."""
        route = self.routes.get(h.inbound.command.lower(), self.unknown)
        if h.view.domain == "medical":
            if route.medical is not None:
                await route.medical(h)
                return
            h.reply.state = "MEDICAL"
        await route.legal(h)

    # --- choosing the domain ------------------------------------------------------------------

    async def _to_domain_named(self, h: Handling, legal: Handler) -> bool:
        """`/start medical`, `/new legal`, `/start intake` (the deep link a group chat is given:
        the legal intake): the chat goes there, and `legal` answers there; False without one."""
        args = [a.lower() for a in h.inbound.args]
        wanted = next((a for a in args if a in ("legal", "medical", "intake")), None)
        if wanted is None:
            return False
        wanted = "legal" if wanted == "intake" else wanted
        await self.medical.set_domain(h.inbound.chat_id, wanted, h.reply.lang, h)
        if wanted == "medical":
            await self.medical.start(h)
        else:
            await legal(h)
        return True

    async def _start(self, h: Handling) -> None:
        """/start: a new chat chooses its domain; else each domain's own start."""
        if await self._to_domain_named(h, self._start_legal):
            return
        if h.view.domain is None and h.view.open is None:
            self.medical.offer_domains(h.reply)
        elif h.view.domain == "medical":
            await self.medical.start(h)
        else:
            await self._start_legal(h)

    async def _new(self, h: Handling) -> None:
        """/new: in the medical assistant, a choice of domain; in the intake, a new one."""
        if await self._to_domain_named(h, self._new_legal):
            return
        if h.view.domain == "medical":
            kn, lang = self.services.knowledge, h.reply.lang
            current = kn.message("domain_medical_name", lang)
            self.medical.offer_domains(h.reply, "switch_domain", current=current)
        else:
            await self._new_legal(h)

    async def domain_button(self, h: Handling) -> None:
        """A Legal / Medical button: the chat's messages go there from now on."""
        kn, inbound, reply = self.services.knowledge, h.inbound, h.reply
        domain = inbound.data.removeprefix("domain:")
        if domain not in DOMAINS:
            reply.add(kn.message("stale_button", reply.lang))
            return
        await self.medical.set_domain(inbound.chat_id, domain, reply.lang, h)
        if domain == "medical":
            await self.medical.start(h)
            return
        session, values, where = await self.legal.current(inbound.chat_id)
        if session is not None:
            reply.add(kn.message("continued", reply.lang))
            self.legal.prompt(values, *where, reply)
        else:
            await self._start_intake(h)

    # --- the intake's commands ----------------------------------------------------------------

    async def _start_intake(self, h: Handling) -> None:
        """Close any open intake and start a fresh one with the greeting."""
        sv, inbound = self.services, h.inbound
        session, _, _ = await self.legal.current(inbound.chat_id)
        if session is not None:
            await repo.close_session(engine=sv.records, session_id=session.id, status="cancelled")
        h.sessions_changed()
        await repo.create_session(
            engine=sv.records,
            chat_id=inbound.chat_id,
            user_id=inbound.user_id,
            domain=self.legal.spec.name,
        )
        start = Inbound(
            chat_id=inbound.chat_id, kind="start", user_id=inbound.user_id, at=inbound.at
        )
        await self.legal.turn(h, start)

    async def _start_legal(self, h: Handling) -> None:
        """/start in the intake: continue or start over when one is under way."""
        kn, lang, reply = self.services.knowledge, h.reply.lang, h.reply
        session, values, where = await self.legal.current(h.inbound.chat_id)
        if session is None or not values:
            await self._start_intake(h)
            return
        snap = self.legal.spec.snapshot(kn, values, where[0] or "INIT")
        reply.add(
            kn.message("resume_offer", lang, percent=round(100 * snap["completion_rate"])),
            [
                {"label": kn.message("btn_continue", lang), "data": "cmd:continue"},
                {"label": kn.message("btn_restart", lang), "data": "cmd:restart"},
            ],
        )
        reply.state, reply.keeps_question = where[0], True

    async def _new_legal(self, h: Handling) -> None:
        """/new in the intake: a new one, asked first when something was told already."""
        kn, lang, reply = self.services.knowledge, h.reply.lang, h.reply
        session, values, where = await self.legal.current(h.inbound.chat_id)
        if session is None or not values.get("description"):
            reply.add(kn.message("restarted", lang))
            await self._start_intake(h)
            return
        snap = self.legal.spec.snapshot(kn, values, where[0] or "INIT")
        reply.add(
            kn.message("new_confirm", lang, percent=round(100 * snap["completion_rate"])),
            [
                {"label": kn.message("btn_new_confirm", lang), "data": "cmd:restart"},
                {"label": kn.message("btn_new_keep", lang), "data": "cmd:continue"},
                # or switch to the medical assistant, the intake kept as it is
                {"label": kn.message("btn_domain_medical", lang), "data": "domain:medical"},
            ],
        )
        reply.state, reply.keeps_question = where[0], True

    async def _cancel(self, h: Handling) -> None:
        """/cancel: the open intake is closed, with a button to undo it."""
        sv, reply, chat_id = self.services, h.reply, h.inbound.chat_id
        kn, lang = sv.knowledge, reply.lang
        session, _, _ = await self.legal.current(chat_id)
        if session is None:
            reply.add(kn.message("nothing_to_cancel", lang))
            return
        await repo.close_session(engine=sv.records, session_id=session.id, status="cancelled")
        h.sessions_changed()
        log.info("chat=%s session=%s cancelled", sv.chat_tag(chat_id), session.id)
        reply.add(
            kn.message("cancelled_undo", lang),
            [{"label": kn.message("btn_undo_cancel", lang), "data": "cmd:undo_cancel"}],
        )

    async def _ask_forget(self, h: Handling) -> None:
        """/forget: asked first."""
        await self.legal.current(h.inbound.chat_id)  # a finished intake is repaired first
        ask_forget(self.services.knowledge, h.reply)

    async def _help(self, h: Handling) -> None:
        """/help (and staff's commands for ADMIN_IDS, the research ones for CLINICIAN_IDS), then
        the question again."""
        sv, reply, inbound = self.services, h.reply, h.inbound
        _, values, where = await self.legal.current(inbound.chat_id)
        reply.add(sv.knowledge.message("help", reply.lang))
        if inbound.user_id is not None and inbound.user_id in sv.settings.admins:
            reply.add(sv.knowledge.message("help_staff", reply.lang))
        elif inbound.user_id is not None and inbound.user_id in sv.settings.clinicians:
            reply.add(sv.knowledge.message("help_research", reply.lang))
        self.legal.prompt(values, *where, reply)

    async def _status(self, h: Handling) -> None:
        """/status: what the intake holds, then the question again."""
        kn, reply = self.services.knowledge, h.reply
        session, values, where = await self.legal.current(h.inbound.chat_id)
        reply.add(
            self.legal.spec.status_text(kn, values, reply.lang)
            if session
            else kn.message("status_none", reply.lang)
        )
        self.legal.prompt(values, *where, reply)

    async def _summary(self, h: Handling) -> None:
        """/summary: the draft of the open intake, else the latest summary, else where it stands."""
        sv, reply, chat_id = self.services, h.reply, h.inbound.chat_id
        kn, lang = sv.knowledge, reply.lang
        _, values, where = await self.legal.current(chat_id)
        reply.keeps_question = True
        today = sv.now().date()
        draft = self.legal.spec.draft_text(sv.kb, values, lang, today) if values else None
        if draft is not None:
            snap = self.legal.spec.snapshot(kn, values, where[0] or "INIT")
            reply.add(
                kn.message("summary_draft", lang, percent=round(100 * snap["completion_rate"]))
            )
            reply.add(draft)
            reply.state, reply.field = where
            return
        latest = await repo.latest_session(engine=sv.records, chat_id=chat_id)
        summary = (
            await repo.get_summary(engine=sv.records, session_id=latest.id) if latest else None
        )
        if summary is not None:
            reply.add(summary.summary_text)
        else:
            reply.add(kn.message("no_summary_yet", lang))

    async def _lang(self, h: Handling) -> None:
        """/lang ko|en sets the chat's language; /lang alone offers the choice."""
        kn, reply, inbound = self.services.knowledge, h.reply, h.inbound
        standing = await self.legal.current(inbound.chat_id)
        choice = inbound.args[0].lower() if inbound.args else ""
        if choice in ("ko", "en"):
            await self._set_lang(h, standing, lang=choice)
            return
        reply.keeps_question = True
        reply.add(
            kn.message("lang_choose", reply.lang),
            [
                {"label": "한국어", "data": "lang:ko"},
                {"label": "English", "data": "lang:en"},
            ],
        )

    async def _unknown(self, h: Handling) -> None:
        """A command nobody answers: said so, then the question again."""
        _, values, where = await self.legal.current(h.inbound.chat_id)
        h.reply.add(self.services.knowledge.message("unknown_command", h.reply.lang))
        self.legal.prompt(values, *where, h.reply)

    # --- steering buttons ---------------------------------------------------------------------

    async def control_button(self, h: Handling) -> None:
        """Buttons that steer the conversation, answered from the table `controls` with where
        the legal intake stands; data not there is a stale button."""
        standing = await self.legal.current(h.inbound.chat_id)
        await self.controls.get(h.inbound.data, self._stale_control)(h, standing)

    async def _continue(self, h: Handling, standing: Standing) -> None:
        """Continue the open intake, at its question."""
        session, values, where = standing
        if session is None:
            await self._stale_control(h, standing)
            return
        h.reply.add(self.services.knowledge.message("continued", h.reply.lang))
        self.legal.prompt(values, *where, h.reply)

    async def _restart(self, h: Handling, standing: Standing) -> None:
        """Start the open intake over; with none open (a finished one, whose "new matter" reply
        offers this button: legal_set15 R5 was told it no longer worked), start a new one."""
        if standing[0] is None:
            if h.view.domain == "medical":
                await self._stale_control(h, standing)
                return
            await self._start_intake(h)
            return
        h.reply.add(self.services.knowledge.message("restarted", h.reply.lang))
        await self._start_intake(h)

    async def _keep(self, h: Handling, standing: Standing) -> None:
        """/forget's "keep": nothing is deleted; back to the question."""
        _, values, where = standing
        h.reply.add(self.services.knowledge.message("forget_kept", h.reply.lang))
        self.legal.prompt(values, *where, h.reply)

    async def _stale_control(self, h: Handling, standing: Standing) -> None:
        """A steering button that means nothing now: say so, and show the question."""
        _, values, where = standing
        h.reply.add(self.services.knowledge.message("stale_button", h.reply.lang))
        self.legal.prompt(values, *where, h.reply)

    async def _resume_after_crisis(self, h: Handling, standing: Standing) -> None:
        """The person chose to carry on after a suicide alert: back to where the chat stood."""
        kn, reply = self.services.knowledge, h.reply
        session, values, where = standing
        if h.safety is not None:
            h.safety.end_crisis()
        reply.add(kn.message("crisis_resumed", reply.lang))
        if h.view.domain == "medical":
            reply.add(kn.message("med_prompt", reply.lang))
            reply.state = "MEDICAL"
        elif session is not None:
            self.legal.prompt(values, *where, reply)
        elif h.view.latest is not None:
            # The intake was finished before the crisis: what they add is still taken in (the
            # summary's addenda), never a new intake that asks it all again.
            reply.add(kn.message("resumed_after_summary", reply.lang))
            reply.state = "COMPLETED"
        else:
            self.medical.offer_domains(reply)

    async def _forget(self, h: Handling) -> None:
        """Delete the chat's records and checkpoint threads (the person asked us to forget)."""
        sv, chat_id = self.services, h.inbound.chat_id
        sessions = await repo.forget_chat(engine=sv.records, chat_id=chat_id)
        h.sessions_changed(forgotten=True)
        # With SQLite, deleted rows are zeroed (secure_delete) and the write-ahead logs that
        # still hold the old pages are folded in and emptied: nothing of the chat stays on disk.
        self.legal.let_go(sessions)
        await sv.checkpoints.forget(sessions)
        await truncate_records_wal(sv.records)
        log.info("chat=%s forgotten: %d sessions deleted", sv.chat_tag(chat_id), len(sessions))
        h.reply.add(sv.knowledge.message("forgotten", h.reply.lang))
        h.reply.state = None

    async def _set_lang(self, h: Handling, standing: Standing, *, lang: str) -> None:
        """The chat's language from now on (/lang ko, a language button); back to the question."""
        sv = self.services
        _, values, where = standing
        await repo.set_lang(engine=sv.records, chat_id=h.inbound.chat_id, lang=lang, chosen=True)
        h.lang = lang  # the handling's write keeps this choice
        h.reply.lang = lang
        h.reply.add(sv.knowledge.message("lang_set", lang))
        self.legal.prompt(values, *where, h.reply)

    async def _undo_cancel(self, h: Handling) -> None:
        """The undo button of /cancel: the cancelled intake is open again, at its question."""
        sv, reply, chat_id = self.services, h.reply, h.inbound.chat_id
        kn, lang = sv.knowledge, reply.lang
        latest = await repo.latest_session(engine=sv.records, chat_id=chat_id)
        h.sessions_changed()
        if latest is None or not await repo.reopen_session(engine=sv.records, session_id=latest.id):
            reply.add(kn.message("cancel_undo_gone", lang))
            return
        log.info("chat=%s session=%s cancel undone", sv.chat_tag(chat_id), latest.id)
        reply.add(kn.message("cancel_undone", lang))
        _, values, where = await self.legal.current(chat_id)
        self.legal.prompt(values, *where, reply)
