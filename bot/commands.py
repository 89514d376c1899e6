"""The person's commands (/start /new /cancel /forget /help /status /summary /lang) and the
buttons that steer the conversation (continue, start over, forget, keep, language, undo)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from bot.messages import (
    Inbound,
    Reply,
)
from bot.turn import HANDLING
from db import repo
from db.engine import truncate_records_wal

log = logging.getLogger("bot.engine")


class Commands:
    """Commands and steering buttons (mixed into `Engine`)."""

    @staticmethod
    def _sessions_changed(*, forgotten: bool = False) -> None:
        """Sessions were opened, closed or deleted: what the handling read of them is stale
        (and after /forget, no language is written back for the chat)."""
        handling = HANDLING.get()
        if handling is not None:
            handling.fresh = False
            if forgotten:
                handling.lang = None
                handling.forgotten = True

    async def _start_new(self, inbound: Inbound, reply: Reply) -> None:
        """Close any open intake and start a fresh one with the greeting."""
        session, _, _ = await self._current(inbound.chat_id)
        if session is not None:
            await repo.close_session(engine=self.records, session_id=session.id, status="cancelled")
        self._sessions_changed()
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
                        # or switch to the medical assistant, the intake kept as it is
                        {"label": kn.message("btn_domain_medical", lang), "data": "domain:medical"},
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
            self._sessions_changed()
            log.info("chat=%s session=%s cancelled", self.chat_tag(chat_id), session.id)
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
        elif inbound.data == "cmd:resume":
            self._resume_after_crisis(reply, session, values, where)
        else:
            reply.add(kn.message("stale_button", reply.lang))
            self._prompt(values, *where, reply)

    def _resume_after_crisis(
        self, reply: Reply, session: Any, values: dict[str, Any], where: tuple[Any, Any]
    ) -> None:
        """The person chose to carry on after a suicide alert: back to where the chat stood."""
        kn, handling = self.knowledge, HANDLING.get()
        if handling is not None and handling.safety is not None:
            handling.safety.end_crisis()
        reply.add(kn.message("crisis_resumed", reply.lang))
        if handling is not None and handling.view.domain == "medical":
            reply.add(kn.message("med_prompt", reply.lang))
            reply.state = "MEDICAL"
        elif session is not None:
            self._prompt(values, *where, reply)
        elif handling is not None and handling.view.latest is not None:
            # The intake was finished before the crisis: what they add is still taken in (the
            # summary's addenda), never a new intake that asks it all again.
            reply.add(kn.message("resumed_after_summary", reply.lang))
            reply.state = "COMPLETED"
        else:
            self._offer_domains(reply)

    async def _forget(self, chat_id: int, reply: Reply) -> None:
        """Delete the chat's records and checkpoint threads (the person asked us to forget)."""
        sessions = await repo.forget_chat(engine=self.records, chat_id=chat_id)
        self._sessions_changed(forgotten=True)
        # With SQLite, deleted rows are zeroed (secure_delete) and the write-ahead logs that
        # still hold the old pages are folded in and emptied: nothing of the chat stays on disk.
        for session_id in sessions:
            self._standings.pop(session_id, None)
        await self.checkpoints.forget(sessions)
        await truncate_records_wal(self.records)
        log.info("chat=%s forgotten: %d sessions deleted", self.chat_tag(chat_id), len(sessions))
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
        await repo.set_lang(engine=self.records, chat_id=chat_id, lang=lang, chosen=True)
        if (handling := HANDLING.get()) is not None:  # the handling's write keeps this choice
            handling.lang = lang
        reply.lang = lang
        reply.add(self.knowledge.message("lang_set", lang))
        self._prompt(values, *where, reply)

    async def _undo_cancel(self, chat_id: int, reply: Reply) -> None:
        """The undo button of /cancel: the cancelled intake is open again, at its question."""
        kn, lang = self.knowledge, reply.lang
        latest = await repo.latest_session(engine=self.records, chat_id=chat_id)
        self._sessions_changed()
        if latest is None or not await repo.reopen_session(
            engine=self.records, session_id=latest.id
        ):
            reply.add(kn.message("cancel_undo_gone", lang))
            return
        log.info("chat=%s session=%s cancel undone", self.chat_tag(chat_id), latest.id)
        reply.add(kn.message("cancel_undone", lang))
        _, values, where = await self._current(chat_id)
        self._prompt(values, *where, reply)

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
