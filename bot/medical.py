"""The medical assistant in the engine: which domain a chat's messages go to, the medical turn,
and the medical commands (/profile, /summary, /status) and buttons (`MedicalTurns`, composed by
`Engine`).

A chat has one medical profile (db/medical_repo.py) whose id is its medical graph thread; the
legal intake keeps its own sessions and threads, so a chat can have both at once.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta
from typing import Any

from bot import failpoints
from bot.messages import MAX_INPUT_CHARS, Inbound, Reply
from bot.services import Handling, Services, thread_config
from bot.turn import LegalTurns
from db import medical_repo, repo
from graphs.common.text import detect_lang
from graphs.medical import memory, records
from graphs.medical.nodes import RED_FLAG, WHILE_WAITING, extractor
from graphs.medical.standing import profile_terms

log = logging.getLogger("bot.engine")

DOMAINS = ("legal", "medical")
# What makes a first message clearly medical: it names a condition, symptom, medicine or reading.
MEDICAL_SLOTS = ("conditions", "symptoms", "medications", "vitals", "labs")
RECENT_TALK = timedelta(hours=2)  # a health conversation still going on
CLEARLY_LEGAL = 0.75  # classifier confidence that moves a health conversation without asking


class MedicalTurns:
    """Which domain a chat's messages go to, the medical turn, its commands and buttons."""

    def __init__(self, services: Services, legal: LegalTurns) -> None:
        self.services = services
        self.graph = services.medical_graph
        self.legal = legal  # where a legal matter told to the assistant goes
        # What the medical graph's buttons do, by the action the registry gives them
        # (graphs/registry.py MEDICAL.buttons).
        self.button_actions = {"remove_item": self.remove_item, "answer": self.turn}

    # --- which domain ------------------------------------------------------------------------

    def _domain_buttons(self, lang: str) -> list[dict[str, str]]:
        kn = self.services.knowledge
        return [
            {"label": kn.message("btn_domain_legal", lang), "data": "domain:legal"},
            {"label": kn.message("btn_domain_medical", lang), "data": "domain:medical"},
        ]

    def offer_domains(self, reply: Reply, key: str = "choose_domain", **values: Any) -> None:
        """Ask where the chat's messages go (Legal / Medical buttons)."""
        reply.keeps_question = True
        reply.add(
            self.services.knowledge.message(key, reply.lang, **values),
            self._domain_buttons(reply.lang),
        )

    async def use_domain(self, chat_id: int, domain: str) -> None:
        """Send the chat's messages to `domain` from now on (the console's --domain)."""
        sv = self.services
        lang = await repo.get_lang(engine=sv.records, chat_id=chat_id)
        await self.set_domain(chat_id, domain, lang or sv.settings.intake_default_lang)

    async def set_domain(
        self, chat_id: int, domain: str, lang: str, h: Handling | None = None
    ) -> None:
        """Send the chat's messages to `domain` from now on (and so the handling `h` sees)."""
        await repo.set_domain(
            engine=self.services.records, chat_id=chat_id, domain=domain, lang=lang
        )
        if h is not None:
            h.view.domain = domain
        log.info("chat=%s domain=%s", self.services.chat_tag(chat_id), domain)

    def first_domain(self, inbound: Inbound) -> str:
        """Where a chat's first message goes: the medical assistant when it clearly speaks of
        health (a condition, symptom, medicine or reading) and not of a legal matter; the legal
        intake otherwise."""
        if inbound.kind != "text":
            return "legal"
        said = extractor().extract(inbound.text[:MAX_INPUT_CHARS])
        medical = [i for i in said.items if i.slot in MEDICAL_SLOTS and not i.family]
        if not medical:
            return "legal"
        return "medical" if not self._sounds_legal(inbound.text) else "legal"

    def _sounds_legal(self, text: str, *, clearly: bool = False) -> bool:
        """A legal matter named outright (the case-type criteria's strong words); `clearly`:
        beyond doubt, as a health conversation needs before it is moved."""
        classifier = getattr(self.services.brain, "classifier", None)
        if classifier is None:
            return False
        try:
            found = classifier.classify(text)
        except Exception:  # noqa: BLE001 - a classifier problem only costs the routing hint
            return False
        return bool(found.confident) and (not clearly or found.confidence >= CLEARLY_LEGAL)

    # --- the medical turn --------------------------------------------------------------------

    async def start(self, h: Handling) -> None:
        """Open the chat's profile (once) and greet."""
        inbound, reply = h.inbound, h.reply
        await medical_repo.open_profile(
            engine=self.services.records, chat_id=inbound.chat_id, user_id=inbound.user_id
        )
        reply.add(self.services.knowledge.message("med_greeting", reply.lang))
        reply.state = "MEDICAL"

    async def values_of(self, chat_id: int) -> tuple[Any, dict[str, Any]]:
        """(the chat's profile row, its medical thread's state); (None, {}) before any."""
        profile = await medical_repo.profile_of(engine=self.services.records, chat_id=chat_id)
        if profile is None:
            return None, {}
        snapshot = await self.graph.aget_state(thread_config(profile.id))
        return profile, snapshot.values or {}

    async def open_question(self, chat_id: int, reply: Reply) -> None:
        """Show what the medical assistant waits on: its yes / no question with its buttons
        (kept in the state with the replies of the run that asked it), else a short prompt."""
        _, values = await self.values_of(chat_id)
        asking = []
        if values.get("pending"):
            asking = [m for m in values.get("outbox") or [] if m.get("choices")]
        reply.messages += asking or [
            {"text": self.services.knowledge.message("med_prompt", reply.lang), "choices": []}
        ]
        reply.state = "MEDICAL"

    async def legal_press(self, h: Handling) -> None:
        """A counted press of a button the legal intake offered answers the legal intake,
        which the chat follows from then on: a press goes to the domain that offered it."""
        if h.view.domain == "medical":
            await self.set_domain(h.inbound.chat_id, "legal", h.reply.lang, h)
        await self.legal.turn(h)

    async def turn(self, h: Handling) -> None:
        """One message (or button) through the medical graph; the profile it leaves is written
        in the handling's one write (`Engine._commit`)."""
        sv, inbound, reply = self.services, h.inbound, h.reply
        kn, lang = sv.knowledge, reply.lang
        reply.state = "MEDICAL"
        if inbound.kind in ("unsupported", "edited", "file", "start"):
            key = "edit_not_applied" if inbound.kind == "edited" else "not_text"
            if inbound.kind != "start":
                reply.add(kn.message(key, lang))
            return
        message: dict[str, Any] = {"id": inbound.input_id, "kind": inbound.kind}
        offer_legal = False
        if inbound.kind == "choice":
            message["data"] = inbound.data
        else:
            text = inbound.text.strip()
            if not text:
                reply.add(kn.message("empty", lang))
                return
            if len(text) > MAX_INPUT_CHARS:
                text = text[:MAX_INPUT_CHARS]
                reply.add(kn.message("too_long", lang, limit=MAX_INPUT_CHARS))
            offer_legal = False
            if not reply.alerts and self._sounds_legal(text) and not self._names_health(text):
                if not self._sounds_legal(text, clearly=True) and await self._talking_health(
                    inbound
                ):
                    offer_legal = True  # mid-conversation and not beyond doubt: asked
                else:
                    # A legal matter told outright goes to the legal intake as its description,
                    # as a chat's first words would; the health profile stays as it is.
                    await self.set_domain(inbound.chat_id, "legal", lang, h)
                    reply.add(kn.message("domain_switched_legal", lang))
                    await self.legal.turn(h)
                    return
            message["text"] = text
            written = detect_lang(text)
            chosen = h.view.lang_chosen  # /lang wins
            if written and written != lang and len(text) > 3 and not chosen:
                lang = reply.lang = written  # answered as they write; /profile, /summary too
                h.lang = written
        profile = await medical_repo.open_profile(
            engine=sv.records, chat_id=inbound.chat_id, user_id=inbound.user_id
        )
        config = thread_config(profile.id)
        before = (await self.graph.aget_state(config)).values or {}
        if inbound.input_id and before.get("last_input_id") == inbound.input_id:
            self._replay(h, profile.id, before)
            return
        recent = h.safety
        # The ambulance may be on its way: what to do meanwhile, not the general corpus (also
        # after a 119-now alert said again while waiting: "it's hard to breathe, sit or lie?").
        waiting = []
        if (  # also on the alert's own message: what to do while the ambulance comes
            inbound.kind == "text"
            and (reply.help_coming or reply.alerts)
            and all(hit.category == "medical" for hit in reply.alerts)
        ):
            waiting = sv.safety.waiting_for_help(recent, inbound.at)
        if any(hit.now for hit in reply.alerts):  # what to do now came first: no answer
            message["urgent"] = RED_FLAG
        elif waiting:
            message["urgent"] = WHILE_WAITING
            message["sources"] = sv.safety.sources([group for group, _ in waiting])
        elif reply.level_again:  # "can I wait?": the level, again, is the answer
            message["urgent"] = RED_FLAG
        context = sv.context(inbound, reply.lang)
        result = await self.graph.ainvoke(
            {"message": message},
            config,
            context=context,
            durability=sv.settings.intake_durability,
        )
        failpoints.reach("after_graph")
        outbox = result.get("outbox") or []
        if reply.level_again:  # the level was the answer: no "could not find" after it
            nothing = kn.message("med_no_answer", lang)
            outbox = [{**m, "text": m["text"].replace(nothing, "").strip()} for m in outbox]
            outbox = [m for m in outbox if m["text"] or m.get("choices")]
        if waiting:
            reply.messages += self._while_help_comes(
                waiting, message["text"], result, reply, context.now
            )
        elif not reply.alerts and not reply.level_again and outbox:
            still = sv.safety.level_still(recent, inbound.at, lang)
            if still:  # a red flag of the last hours: no answer may seem to undercut it
                reply.add(still)
        reply.messages += outbox
        if inbound.kind == "text" and offer_legal:
            button = {"label": kn.message("btn_domain_legal", lang), "data": "domain:legal"}
            reply.add(kn.message("legal_offer_from_medical", lang), [button])
        self._stage_profile(h, profile.id, result, context.now)
        self._keep_profile_terms(h, result.get("profile"), context.now)

    def _while_help_comes(
        self,
        waiting: list[tuple[str, str]],
        text: str,
        result: dict[str, Any],
        reply: Reply,
        now: datetime,
    ) -> list[dict[str, Any]]:
        """After a 119-now alert: the level (unless just said again), the steps of each group
        raised, and when asked, what not to give and what to tell the crew."""
        kn, lang, desk = self.services.knowledge, reply.lang, self.services.safety
        said_again = reply.level_again or reply.alerts  # the level was just said
        texts = [] if said_again else [kn.message("level_still_waiting", lang)]
        texts += desk.first_aid([group for group, _ in waiting], lang)
        said = extractor().extract(text)
        if desk.asks(text, "asks_give") or any(i.slot == "medications" for i in said.items):
            texts.append(kn.message("first_aid_gives", lang))
        if desk.asks(text, "asks_handover"):
            happened = [(desk.title(group, lang), self._clock_time(at)) for group, at in waiting]
            profile = result.get("profile") or memory.new_profile()
            texts.append(records.handover_text(kn, profile, happened, lang, now))
        return [{"text": t, "choices": []} for t in texts]

    def _clock_time(self, iso: str) -> str:
        """An ISO time as the chat's clock shows it ("14:05")."""
        zone = self.services.settings.zone
        at = datetime.fromisoformat(iso)
        if at.tzinfo is None:
            at = at.replace(tzinfo=zone)
        return at.astimezone(zone).strftime("%H:%M")

    def _keep_profile_terms(self, h: Handling, profile: dict[str, Any] | None, now: Any) -> None:
        """What the profile now stands for in the safety rules, kept with the chat's safety
        memory (a sign said later completes a rule with it)."""
        if h.safety is None:
            return
        terms = self.services.knowledge.safety.profile_terms
        h.safety.set_standing(profile_terms(profile or memory.new_profile(), now, terms))

    def _replay(self, h: Handling, profile_id: str, values: dict[str, Any]) -> None:
        """The message the graph took last, delivered again (the process died, or the records
        write failed, before its turn was written or its reply sent): its replies, kept in the
        state, are sent again and the profile (with the safety memory's terms of it) written
        from the state; the graph is not run again, so the question is counted once."""
        sv, inbound = self.services, h.inbound
        log.warning(
            "chat=%s medical input answered again after a crash", sv.chat_tag(inbound.chat_id)
        )
        h.reply.messages += values.get("outbox") or []
        now = inbound.at.astimezone(sv.settings.zone)
        self._stage_profile(h, profile_id, values, now)
        self._keep_profile_terms(h, values.get("profile"), now)

    @staticmethod
    def _names_health(text: str) -> bool:
        """The text names a condition, symptom, medicine or reading, or seeking care."""
        said = extractor().extract(text)
        if any(i.slot in MEDICAL_SLOTS for i in said.items):
            return True
        return any(re.search(p, text, re.I) for p in extractor().lexicon.cues.care)

    async def _talking_health(self, inbound: Inbound) -> bool:
        """The chat spoke of health in the last two hours (a question asked or an item said):
        a message that sounds legal then gets a button to move, never a silent switch."""
        _, values = await self.values_of(inbound.chat_id)
        now = inbound.at
        said = [q.get("at") for q in values.get("asked") or []]
        said += [i.get("last_said") for i in (values.get("profile") or {}).get("items", [])]
        for at in filter(None, said):
            when = datetime.fromisoformat(at)
            if when.tzinfo is None:
                when = when.replace(tzinfo=self.services.settings.zone)
            if now - when <= RECENT_TALK:
                return True
        return False

    async def profile_id(self, chat_id: int) -> str:
        """The id of the chat's medical profile ("" before it has one)."""
        profile = await medical_repo.profile_of(engine=self.services.records, chat_id=chat_id)
        return profile.id if profile is not None else ""

    @staticmethod
    def _stage_profile(
        h: Handling,
        profile_id: str,
        values: dict[str, Any],
        now: datetime,
        summary_text: str | None = None,
    ) -> None:
        """Leave the profile as the medical state holds it for the handling's one write."""
        profile = values.get("profile") or memory.new_profile()
        h.profile = repo.ProfileSnapshot.of(
            profile_id=profile_id,
            subject=profile.get("subject", "self"),
            items=records.stored_items(profile, now),
            asked=values.get("asked") or [],
            summary_text=summary_text,
        )

    # --- medical commands and buttons -----------------------------------------------------------

    async def profile_command(self, h: Handling) -> None:
        """/profile: what the assistant remembers, each item with a button to delete it."""
        kn, reply = self.services.knowledge, h.reply
        reply.state = "MEDICAL"
        now = h.at.astimezone(self.services.settings.zone)
        _, values = await self.values_of(h.inbound.chat_id)
        profile = values.get("profile") or memory.new_profile()
        text = records.profile_text(kn, profile, reply.lang, now)
        if text is None:
            reply.add(kn.message("med_profile_empty", reply.lang))
        else:
            reply.add(text, records.removable(profile, reply.lang))

    async def summary_command(self, h: Handling) -> None:
        """/summary: the pre-visit summary, kept with the profile."""
        sv, reply = self.services, h.reply
        kn, lang = sv.knowledge, reply.lang
        reply.state = "MEDICAL"
        now = h.at.astimezone(sv.settings.zone)
        profile_row, values = await self.values_of(h.inbound.chat_id)
        alerts = []
        if profile_row is not None:
            alerts = (await repo.alerts_for(engine=sv.records, session_ids=[profile_row.id])).get(
                profile_row.id, []
            )
        text = records.summary_text(kn, values, alerts, lang, now)
        if text is None:
            reply.add(kn.message("med_summary_empty", lang))
            return
        reply.add(text)
        if profile_row is not None:  # kept with the profile, in the handling's one write
            self._stage_profile(h, profile_row.id, values, now, summary_text=text)

    async def status_command(self, h: Handling) -> None:
        """/status: how many items are remembered and questions asked."""
        kn, reply = self.services.knowledge, h.reply
        reply.state = "MEDICAL"
        _, values = await self.values_of(h.inbound.chat_id)
        profile = values.get("profile") or memory.new_profile()
        count = len([i for i in profile.get("items", []) if i["name"] not in memory.PAIRS.values()])
        reply.add(
            kn.message(
                "med_status", reply.lang, count=count, questions=len(values.get("asked") or [])
            )
        )

    async def help_command(self, h: Handling) -> None:
        """/help: the greeting, which says what the assistant does."""
        h.reply.state = "MEDICAL"
        h.reply.add(self.services.knowledge.message("med_greeting", h.reply.lang))

    async def cancel_command(self, h: Handling) -> None:
        """/cancel: the assistant has nothing to cancel (/forget deletes the profile)."""
        h.reply.state = "MEDICAL"
        h.reply.add(self.services.knowledge.message("nothing_to_cancel", h.reply.lang))

    async def remove_item(self, h: Handling) -> None:
        """A /profile delete button: the item (a blood pressure pair together) is forgotten."""
        sv, inbound, reply = self.services, h.inbound, h.reply
        kn, lang = sv.knowledge, reply.lang
        reply.state = "MEDICAL"
        key = inbound.data.removeprefix(records.REMOVE)
        profile_row, values = await self.values_of(inbound.chat_id)
        if profile_row is None:
            reply.add(kn.message("med_item_gone", lang))
            return
        before = values.get("profile") or memory.new_profile()
        gone = next((i for i in before.get("items", []) if i["key"] == key), None)
        profile, removed = memory.remove(before, key)
        if gone is not None and gone["name"] in memory.PAIRS:  # a blood pressure pair
            profile, _ = memory.remove(
                profile, key.removesuffix(gone["name"]) + memory.PAIRS[gone["name"]]
            )
        if not removed or gone is None:
            reply.add(kn.message("med_item_gone", lang))
            return
        config = thread_config(profile_row.id)
        cache = [e for e in values.get("cache") or [] if key not in e["used_keys"]]
        await self.graph.aupdate_state(
            config, {"profile": profile, "cache": cache}, as_node="store_response"
        )
        now = inbound.at.astimezone(sv.settings.zone)
        self._stage_profile(h, profile_row.id, {**values, "profile": profile}, now)
        self._keep_profile_terms(h, profile, now)
        name = records.item_label(gone, before, lang)
        log.info("chat=%s profile item removed", sv.chat_tag(inbound.chat_id))
        reply.add(kn.message("med_item_removed", lang, name=name))
