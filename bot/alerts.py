"""The safety pre-check: every message, in every state, before any graph.

A rule that fires puts its reply first in the turn, is recorded (code, time, message id) and
is sent to staff (ADMIN_IDS) as a notice the channel delivers; the intake then goes on. In LLM
mode a model's reading that finds danger the rules did not raises the same reply (`READ_DANGER`),
after the model answered: the rules' reply never waits for it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from db import repo
from graphs.common.normalize import find_dates
from graphs.common.text import sentences
from graphs.safety.rules import Recent, SafetyCheck, SafetyHit, Trace
from knowledge.loader import Knowledge

log = logging.getLogger(__name__)

STILL_HOLDS = timedelta(hours=6)  # an alert's level is repeated before answers this long
# After a 119-now alert the person may be waiting for the ambulance in the chat: for this long a
# health message that raises nothing new gets the first-aid steps instead of the general corpus.
FIRST_AID_HOLDS = timedelta(hours=2)
# Terms saying help has come (at the hospital, the crew here, the police here): the alerts
# raised so far stand down, and are not fired again by the danger told again.
HELP_TERMS = frozenset({"in_care", "police_came"})
HELP_UNLESS = frozenset({"past", "hypothetical", "denied"})  # help told of another time
# The code of an alert raised because a model read danger in a message the rules let through.
READ_DANGER = "DANGER_READ"


def _tells_earlier_day(text: str, at: datetime) -> bool:
    """Whether the message dates what it tells to an earlier day ("3월22일에")."""
    return any(
        isinstance(m.value, str)
        and len(m.value) >= 7
        and m.value < at.date().isoformat()[: len(m.value)]
        for m in find_dates(text, now=at)
    )


@dataclass(frozen=True)
class Notice:
    """A message to someone other than the person writing (staff)."""

    chat_id: int
    text: str


class SafetyDesk:
    """Checks messages against knowledge/safety.yaml, records alerts and writes staff notices."""

    def __init__(self, knowledge: Knowledge, admins: frozenset[int]) -> None:
        self.knowledge = knowledge
        self.checker = SafetyCheck(knowledge.safety)
        self.admins = admins

    def check(self, text: str) -> list[SafetyHit]:
        """The rules that fire on `text`, most urgent first."""
        return self.checker.check(text) if text and text.strip() else []

    def urgency_again(self, text: str, recent: Recent, lang: str) -> str | None:
        """A question of how soon ("can I wait?", "오바인가요?") after a medical red flag of
        the last day: the level given then, said again (None otherwise)."""
        if not text or not any("asks_urgency" in t for t, _ in self.checker.read(text).clauses):
            return None
        levels = ("medical", "medical_today", "medical_days")
        categories = {r.code: r.category for r in self.checker.rules.rules}
        raised = {categories.get(code) for code in recent.raised if recent.holds(code)}
        level = next((c for c in levels if c in raised), None)
        return self.knowledge.message(f"urgency_again_{level}", lang) if level else None

    def level_still(self, recent: Recent | None, now: datetime, lang: str) -> str | None:
        """After a 119-now or be-seen-today alert of the last hours, the line that says it
        still holds (put before any general answer, which must never seem to undercut it)."""
        if recent is None or not recent.raised:
            return None
        categories = {r.code: r.category for r in self.checker.rules.rules}
        fresh = {
            categories.get(code)
            for code, at in recent.raised.items()
            if now - datetime.fromisoformat(at) <= STILL_HOLDS and recent.holds(code)
        }
        for level in ("medical", "medical_today"):
            if level in fresh:
                return self.knowledge.message(f"level_still_{level}", lang)
        return None

    def waiting_for_help(self, recent: Recent | None, now: datetime) -> list[tuple[str, str]]:
        """The first-aid groups of the 119-now rules raised within FIRST_AID_HOLDS, most urgent
        first and each once, with when the first of its rules was raised (ISO time)."""
        if recent is None:
            return []
        waiting: dict[str, str] = {}
        for rule in self.checker.rules.rules:
            at = recent.raised.get(rule.code)
            if rule.first_aid is None or at is None or now - _aware(at, now) > FIRST_AID_HOLDS:
                continue
            if not recent.holds(rule.code):  # help has come since: no more waiting steps
                continue
            if rule.first_aid not in waiting or at < waiting[rule.first_aid]:
                waiting[rule.first_aid] = at
        return list(waiting.items())

    def first_aid(self, groups: list[str], lang: str) -> list[str]:
        """Each group's steps under its title, with the line naming their source."""
        kn, texts = self.knowledge, []
        for name in groups:
            group = self.checker.rules.first_aid[name]
            lines = [kn.message("first_aid_header", lang, title=group.title.get(lang))]
            lines += [f"• {step.get(lang)}" for step in group.steps]
            source = group.source
            lines.append(kn.message("first_aid_source", lang, name=source.name, url=source.url))
            texts.append("\n".join(lines))
        return texts

    def sources(self, groups: list[str]) -> list[str]:
        """The names of the groups' sources, each once (what a summary cites)."""
        return list(dict.fromkeys(self.checker.rules.first_aid[g].source.name for g in groups))

    def title(self, group: str, lang: str) -> str:
        """A first-aid group's situation in plain words ("signs of a stroke")."""
        return self.checker.rules.first_aid[group].title.get(lang)

    def asks(self, text: str, term: str) -> bool:
        """A clause of `text` holds the term (a cue such as asks_give)."""
        return any(term in terms for terms, _ in self.checker.read(text).clauses)

    def assess(self, text: str, recent: Recent, at: datetime) -> list[SafetyHit]:
        """The rules that fire on `text` with the chat's last day (`recent`, updated with this
        message): what completes a rule over messages is raised once an episode."""
        if not text or not text.strip():
            return []
        trace = self.checker.read(text)
        # the rules raised and still holding, unless this message says help has come (now: not
        # "3월22일에 … 경찰이 와서 경고만 하고 끝났어요", the police of an earlier day)
        helped = self._helped(text, trace, at)
        holding = set() if helped else {c for c in recent.raised if recent.holds(c)}
        hits = self.checker.check_trace(
            trace,
            earlier=recent.earlier(),
            standing=[*recent.standing, *recent.case],
            holding=holding,
        )
        hits = self._no_lower_level(recent.fresh(hits), recent)
        # a rule raised and still holding that fires again is the same danger told again
        hits = [replace(h, again=True) if h.code in holding else h for h in hits]
        recent.note(trace, hits, self.checker.carry, at)
        if not hits and helped:
            recent.settle(at)  # "응급실 도착했어요", "not an emergency": the alerts stand down
        return hits

    def read_danger(self, recent: Recent, at: datetime) -> list[SafetyHit]:
        """The alert for a message a model read as danger now where the rules read none (LLM
        mode): the danger category's reply and numbers, raised and noted like a rule's."""
        rule = next(r for r in self.checker.rules.rules if r.category == "danger")
        hits = [SafetyHit(READ_DANGER, rule.category, tuple(rule.hotlines))]
        recent.note(Trace(()), hits, self.checker.carry, at)
        return hits

    def _helped(self, text: str, trace: Trace, at: datetime) -> bool:
        """Whether a sentence of the message says help has come now ("경찰 와서 그 사람
        갔어요"), not on an earlier day it dates ("9월 15일에도 … 경찰이 경고만 했어요" beside it
        leaves the first sentence standing)."""
        if not any(terms & HELP_TERMS and not g & HELP_UNLESS for terms, g in trace.clauses):
            return False
        for sentence in sentences(text):
            clauses = self.checker.read(sentence).clauses
            if any(t & HELP_TERMS and not g & HELP_UNLESS for t, g in clauses) and not (
                _tells_earlier_day(sentence, at)
            ):
                return True
        return False

    def hold_case(self, recent: Recent, sub_type: str | None) -> None:
        """Keep the terms the chat's legal intake stands for: in a stalking intake, "지금 1층
        현관에 와 있대요" is the stalker at the door though this message names no one."""
        recent.set_case(self.checker.rules.case_terms.get(sub_type or "", []))

    def _no_lower_level(self, hits: list[SafetyHit], recent: Recent) -> list[SafetyHit]:
        """A be-seen-today or within-days alert is not raised beside or after (within the
        day) a more urgent medical one: it would read as the danger lessening."""
        categories = {r.code: r.category for r in self.checker.rules.rules}
        levels = {categories.get(code) for code in recent.raised if recent.holds(code)}
        levels |= {h.category for h in hits}
        order = ("medical", "medical_today", "medical_days")
        top = next((i for i, level in enumerate(order) if level in levels), None)
        if top is None:
            return hits
        return [h for h in hits if h.category not in order or order.index(h.category) <= top]

    def reply(self, hits: list[SafetyHit], lang: str) -> str:
        """What to do now (or when to be seen), in the person's language; a rule completed by
        earlier messages says so first."""
        text = self.checker.reply(hits, lang)
        # a sign completed by earlier messages says so ("앞서 말씀하신 증상과 함께 보면…"):
        # a health sign's wording, not a danger's
        if all(hit.building and hit.category.startswith("medical") for hit in hits):
            text = self.knowledge.message("med_red_flag_building", lang) + "\n" + text
        return text

    async def record(
        self,
        records: AsyncEngine,
        *,
        chat_id: int,
        chat_label: str,
        session_id: str | None,
        input_id: str | None,
        hits: list[SafetyHit],
        at: datetime,
        lang: str,
    ) -> list[Notice]:
        """Record the alerts of one message (once per message) and the notices for staff."""
        fresh = await repo.add_alerts(
            engine=records,
            chat_id=chat_id,
            session_id=session_id,
            input_id=input_id,
            alerts=[(hit.code, hit.category) for hit in hits],
        )
        if not fresh:  # the same message delivered again: alerted once
            return []
        log.warning(
            "chat=%s safety alert %s (%s)",
            chat_label,
            ",".join(hit.code for hit in hits),
            hits[0].category,
        )
        # Staff learn which rule fired, when and in which chat; the words stay in the records.
        notice = self.checker.notice(hits, lang, chat=chat_id, when=at.strftime("%Y-%m-%d %H:%M"))
        return [Notice(admin, notice) for admin in sorted(self.admins)]


def _aware(iso: str, now: datetime) -> datetime:
    """An ISO time as a datetime comparable with `now` (a naive one is taken in its zone)."""
    at = datetime.fromisoformat(iso)
    return at.replace(tzinfo=now.tzinfo) if at.tzinfo is None else at
