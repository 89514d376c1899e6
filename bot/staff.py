"""Staff views for ADMIN_IDS: /sessions (open intakes, risk and deadlines first) and /export."""

from __future__ import annotations

import logging
from typing import Any

from bot import export
from bot.messages import EXPORT_FORMATS, Document
from bot.services import Handling, Services, thread_config
from bot.turn import LegalTurns
from db import medical_repo, repo
from graphs.medical import records as medical_records

log = logging.getLogger("bot.engine")


class StaffViews:
    """/sessions and /export, and the deadlines staff see."""

    def __init__(self, services: Services, legal: LegalTurns) -> None:
        self.services = services
        self.legal = legal  # finished intakes are repaired before staff read them

    def deadlines_of(self, record: dict[str, Any], lang: str) -> list[dict[str, Any]]:
        """The deadlines of a case record's facts as of today on the staff's calendar, each
        with its days left and whether it is urgent."""
        today = self.services.now().date()
        found = self.services.legal.deadlines(
            self.services.knowledge,
            record.get("sub_case_type"),
            record.get("facts") or {},
            lang,
            today,
            record.get("memo") or [],
        )
        return [
            d.as_dict() | {"days_left": d.days_left(today), "urgent": d.due_soon(today)}
            for d in found
        ]

    async def medical_summary(
        self, profile: Any, alerts: list[dict[str, Any]], lang: str
    ) -> str | None:
        """A medical profile's pre-visit summary as of now (from its graph state)."""
        sv = self.services
        values = (await sv.medical_graph.aget_state(thread_config(profile.id))).values or {}
        return medical_records.summary_text(sv.knowledge, values, alerts, lang, sv.now())

    async def _profile_alerts(self, profiles: list[Any]) -> dict[str, list[dict]]:
        return await repo.alerts_for(
            engine=self.services.records, session_ids=[p.id for p in profiles]
        )

    def _medical_lines(self, profiles: list[Any], alerts: dict[str, list[dict]], lang: str) -> str:
        """/sessions' medical part: profiles with a red flag first, then by last activity."""
        kn = self.services.knowledge
        ordered = sorted(profiles, key=lambda p: not alerts.get(p.id))
        lines = [kn.message("sessions_medical_header", lang, count=len(profiles))]
        for p in ordered[:50]:
            line = kn.message(
                "sessions_medical_line",
                lang,
                chat=p.chat_id,
                updated=p.updated_at.strftime("%Y-%m-%d %H:%M"),
            )
            if alerts.get(p.id):
                line += f" | {kn.message('sessions_risk', lang)}"
            lines.append(line)
        return "\n".join(lines)

    async def _admitted(self, h: Handling) -> bool:
        """ADMIN_IDS only; anyone else learns nothing. Staff never see a finished intake as
        open: such intakes are repaired first."""
        sv, inbound = self.services, h.inbound
        if inbound.user_id is None or inbound.user_id not in sv.settings.admins:
            log.warning(
                "chat=%s refused admin command /%s", sv.chat_tag(inbound.chat_id), inbound.command
            )
            h.reply.add(sv.knowledge.message("admin_only", h.reply.lang))
            return False
        await self.legal.repair_finished()
        return True

    async def sessions_view(self, h: Handling) -> None:
        """/sessions: open intakes (safety alerts, then deadlines close by, first) and the
        medical profiles."""
        if not await self._admitted(h):
            return
        sv, reply = self.services, h.reply
        kn, lang = sv.knowledge, reply.lang
        sessions = await repo.list_sessions(engine=sv.records, statuses=["open"])
        profiles = await medical_repo.list_profiles(engine=sv.records)
        if not sessions and not profiles:
            reply.add(kn.message("sessions_none", lang))
            return
        if not sessions:
            reply.add(self._medical_lines(profiles, await self._profile_alerts(profiles), lang))
            return
        alerts = await repo.alerts_for(engine=sv.records, session_ids=[s.id for s in sessions])
        records = {s.id: await repo.case_record(engine=sv.records, session=s) for s in sessions}
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
            if s.llm_prompt_tokens or s.llm_completion_tokens:
                line += " | " + kn.message(
                    "sessions_tokens",
                    lang,
                    prompt=s.llm_prompt_tokens,
                    completion=s.llm_completion_tokens,
                )
            lines.append(line)
        if profiles:
            lines.append(self._medical_lines(profiles, await self._profile_alerts(profiles), lang))
        reply.add("\n".join(lines))

    async def export_file(self, h: Handling) -> None:
        """/export [csv|json|...] [all]: the finished intakes (and with `all` the open ones) as
        a file."""
        if not await self._admitted(h):
            return
        sv, inbound, reply = self.services, h.inbound, h.reply
        kn, lang = sv.knowledge, reply.lang
        args = [a.lower() for a in inbound.args]
        fmt = next((a for a in args if a in EXPORT_FORMATS), "json")
        rows = await export.collect(
            engine=sv.records,
            include_open="all" in args,
            deadlines_of=lambda record: self.deadlines_of(record, lang),
            medical_summary=lambda profile, alerts: self.medical_summary(profile, alerts, lang),
            intake_state=self.legal.intake_state,
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
