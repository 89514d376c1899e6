"""The medical assistant in the engine: which domain a chat's messages go to, the medical turn,
and the medical commands (/profile, /summary, /status) and buttons (mixed into `Engine`).

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
from bot.turn import HANDLING
from db import medical_repo, repo
from graphs.common.context import Context
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


class MedicalSteps:
    """Domains and the medical turn (mixed into `Engine`)."""

    # --- which domain ------------------------------------------------------------------------

    def _domain_buttons(self, lang: str) -> list[dict[str, str]]:
        kn = self.knowledge
        return [
            {"label": kn.message("btn_domain_legal", lang), "data": "domain:legal"},
            {"label": kn.message("btn_domain_medical", lang), "data": "domain:medical"},
        ]

    def _offer_domains(self, reply: Reply, key: str = "choose_domain", **values: Any) -> None:
        reply.keeps_question = True
        reply.add(
            self.knowledge.message(key, reply.lang, **values), self._domain_buttons(reply.lang)
        )

    async def use_domain(self, chat_id: int, domain: str) -> None:
        """Send the chat's messages to `domain` from now on (the console's --domain)."""
        lang = await repo.get_lang(engine=self.records, chat_id=chat_id)
        await self._set_domain(chat_id, domain, lang or self.settings.intake_default_lang)

    async def _set_domain(self, chat_id: int, domain: str, lang: str) -> None:
        await repo.set_domain(engine=self.records, chat_id=chat_id, domain=domain, lang=lang)
        handling = HANDLING.get()
        if handling is not None:
            handling.view.domain = domain
        log.info("chat=%s domain=%s", self.chat_tag(chat_id), domain)

    def _first_domain(self, inbound: Inbound) -> str:
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
        classifier = getattr(self.brain, "classifier", None)
        if classifier is None:
            return False
        try:
            found = classifier.classify(text)
        except Exception:  # noqa: BLE001 - a classifier problem only costs the routing hint
            return False
        return bool(found.confident) and (not clearly or found.confidence >= CLEARLY_LEGAL)

    async def _domain_button(self, inbound: Inbound, reply: Reply) -> None:
        """A Legal / Medical button: the chat's messages go there from now on."""
        domain = inbound.data.removeprefix("domain:")
        if domain not in DOMAINS:
            reply.add(self.knowledge.message("stale_button", reply.lang))
            return
        await self._set_domain(inbound.chat_id, domain, reply.lang)
        if domain == "medical":
            await self._medical_start(inbound, reply)
            return
        session, values, where = await self._current(inbound.chat_id)
        if session is not None:
            reply.add(self.knowledge.message("continued", reply.lang))
            self._prompt(values, *where, reply)
        else:
            await self._start_new(inbound, reply)

    # --- the medical turn --------------------------------------------------------------------

    async def _medical_start(self, inbound: Inbound, reply: Reply) -> None:
        await medical_repo.open_profile(
            engine=self.records, chat_id=inbound.chat_id, user_id=inbound.user_id
        )
        reply.add(self.knowledge.message("med_greeting", reply.lang))
        reply.state = "MEDICAL"

    def _medical_context(self, inbound: Inbound, lang: str) -> Context:
        return self._context(inbound, lang)

    async def _medical_values(self, chat_id: int) -> tuple[Any, dict[str, Any]]:
        profile = await medical_repo.profile_of(engine=self.records, chat_id=chat_id)
        if profile is None:
            return None, {}
        snapshot = await self.medical_graph.aget_state(self._config(profile.id))
        return profile, snapshot.values or {}

    async def _medical_open_question(self, chat_id: int, reply: Reply) -> None:
        """Show what the medical assistant waits on: its yes / no question with its buttons
        (kept in the state with the replies of the run that asked it), else a short prompt."""
        _, values = await self._medical_values(chat_id)
        asking = []
        if values.get("pending"):
            asking = [m for m in values.get("outbox") or [] if m.get("choices")]
        reply.messages += asking or [
            {"text": self.knowledge.message("med_prompt", reply.lang), "choices": []}
        ]
        reply.state = "MEDICAL"

    async def _medical_turn(self, inbound: Inbound, reply: Reply) -> None:
        """One message (or button) through the medical graph, and the profile written after it."""
        kn, lang = self.knowledge, reply.lang
        if inbound.kind == "choice" and not inbound.data.startswith("m:"):
            # A counted press of a button the legal intake offered answers the legal intake,
            # which the chat follows from then on: a press goes to the domain that offered it.
            await self._set_domain(inbound.chat_id, "legal", lang)
            await self._turn(inbound, reply)
            return
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
                    await self._set_domain(inbound.chat_id, "legal", lang)
                    reply.add(kn.message("domain_switched_legal", lang))
                    await self._turn(inbound, reply)
                    return
            message["text"] = text
            written = detect_lang(text)
            handling = HANDLING.get()
            chosen = handling is not None and handling.view.lang_chosen  # /lang wins
            if written and written != lang and len(text) > 3 and not chosen:
                lang = reply.lang = written  # answered as they write; /profile, /summary too
                if handling is not None:
                    handling.lang = written
        profile = await medical_repo.open_profile(
            engine=self.records, chat_id=inbound.chat_id, user_id=inbound.user_id
        )
        config = self._config(profile.id)
        before = (await self.medical_graph.aget_state(config)).values or {}
        if inbound.input_id and before.get("last_input_id") == inbound.input_id:
            await self._medical_replay(inbound, reply, profile.id, before)
            return
        recent = getattr(HANDLING.get(), "safety", None)
        # The ambulance may be on its way: what to do meanwhile, not the general corpus (also
        # after a 119-now alert said again while waiting: "it's hard to breathe, sit or lie?").
        waiting = []
        if (  # also on the alert's own message: what to do while the ambulance comes
            inbound.kind == "text"
            and (reply.help_coming or reply.alerts)
            and all(hit.category == "medical" for hit in reply.alerts)
        ):
            waiting = self.safety.waiting_for_help(recent, inbound.at)
        if any(hit.now for hit in reply.alerts):  # what to do now came first: no answer
            message["urgent"] = RED_FLAG
        elif waiting:
            message["urgent"] = WHILE_WAITING
            message["sources"] = self.safety.sources([group for group, _ in waiting])
        elif reply.level_again:  # "can I wait?": the level, again, is the answer
            message["urgent"] = RED_FLAG
        context = self._medical_context(inbound, reply.lang)
        result = await self.medical_graph.ainvoke(
            {"message": message},
            config,
            context=context,
            durability=self.settings.intake_durability,
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
            still = self.safety.level_still(recent, inbound.at, lang)
            if still:  # a red flag of the last hours: no answer may seem to undercut it
                reply.add(still)
        reply.messages += outbox
        if inbound.kind == "text" and offer_legal:
            button = {"label": kn.message("btn_domain_legal", lang), "data": "domain:legal"}
            reply.add(kn.message("legal_offer_from_medical", lang), [button])
        await self._write_profile(profile.id, result, context.now)
        self._keep_profile_terms(result.get("profile"), context.now)
        failpoints.reach("after_records")

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
        kn, lang, desk = self.knowledge, reply.lang, self.safety
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
        at = datetime.fromisoformat(iso)
        if at.tzinfo is None:
            at = at.replace(tzinfo=self.settings.zone)
        return at.astimezone(self.settings.zone).strftime("%H:%M")

    def _keep_profile_terms(self, profile: dict[str, Any] | None, now: Any) -> None:
        """What the profile now stands for in the safety rules, kept with the chat's safety
        memory (a sign said later completes a rule with it)."""
        handling = HANDLING.get()
        if handling is None or handling.safety is None:
            return
        terms = self.knowledge.safety.profile_terms
        handling.safety.set_standing(profile_terms(profile or memory.new_profile(), now, terms))

    async def _medical_replay(
        self, inbound: Inbound, reply: Reply, profile_id: str, values: dict[str, Any]
    ) -> None:
        """The message the graph took last, delivered again (the process died before its reply
        was sent): its replies, kept in the state, are sent again and the profile written from
        the state; the graph is not run again, so the question is counted once."""
        log.warning(
            "chat=%s medical input answered again after a crash", self.chat_tag(inbound.chat_id)
        )
        reply.messages += values.get("outbox") or []
        await self._write_profile(profile_id, values, inbound.at.astimezone(self.settings.zone))

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
        _, values = await self._medical_values(inbound.chat_id)
        now = inbound.at
        said = [q.get("at") for q in values.get("asked") or []]
        said += [i.get("last_said") for i in (values.get("profile") or {}).get("items", [])]
        for at in filter(None, said):
            when = datetime.fromisoformat(at)
            if when.tzinfo is None:
                when = when.replace(tzinfo=self.settings.zone)
            if now - when <= RECENT_TALK:
                return True
        return False

    async def _profile_id(self, chat_id: int) -> str:
        profile = await medical_repo.profile_of(engine=self.records, chat_id=chat_id)
        return profile.id if profile is not None else ""

    async def _write_profile(self, profile_id: str, values: dict[str, Any], now: Any) -> None:
        profile = values.get("profile") or memory.new_profile()
        await self._retrying(
            lambda: medical_repo.sync_profile(
                engine=self.records,
                profile_id=profile_id,
                subject=profile.get("subject", "self"),
                items=records.stored_items(profile, now),
                asked=values.get("asked") or [],
            ),
            f"profile={profile_id}",
        )

    # --- medical commands and buttons -----------------------------------------------------------

    async def _medical_command(self, inbound: Inbound, reply: Reply) -> bool:
        """/profile, /summary, /status, /help and /cancel in the medical domain; False for any
        other command (handled as in the legal intake)."""
        kn, lang = self.knowledge, reply.lang
        name = inbound.command.lower()
        reply.state = "MEDICAL"
        now = inbound.at.astimezone(self.settings.zone)
        profile_row, values = await self._medical_values(inbound.chat_id)
        profile = values.get("profile") or memory.new_profile()
        if name == "profile":
            text = records.profile_text(kn, profile, lang, now)
            if text is None:
                reply.add(kn.message("med_profile_empty", lang))
            else:
                reply.add(text, records.removable(profile, lang))
            return True
        if name == "summary":
            alerts = []
            if profile_row is not None:
                alerts = (
                    await repo.alerts_for(engine=self.records, session_ids=[profile_row.id])
                ).get(profile_row.id, [])
            text = records.summary_text(kn, values, alerts, lang, now)
            if text is None:
                reply.add(kn.message("med_summary_empty", lang))
                return True
            reply.add(text)
            if profile_row is not None:
                await medical_repo.sync_profile(
                    engine=self.records,
                    profile_id=profile_row.id,
                    subject=profile.get("subject", "self"),
                    items=records.stored_items(profile, now),
                    asked=values.get("asked") or [],
                    summary_text=text,
                )
            return True
        if name == "status":
            count = len(
                [i for i in profile.get("items", []) if i["name"] not in memory.PAIRS.values()]
            )
            reply.add(
                kn.message(
                    "med_status", lang, count=count, questions=len(values.get("asked") or [])
                )
            )
            return True
        if name == "help":
            reply.add(kn.message("med_greeting", lang))
            return True
        if name == "cancel":
            reply.add(kn.message("nothing_to_cancel", lang))
            return True
        return False

    async def _medical_button(self, inbound: Inbound, reply: Reply) -> None:
        """A medical button: delete a profile item, or yes / no to what the graph asked."""
        kn, lang = self.knowledge, reply.lang
        reply.state = "MEDICAL"
        if inbound.data.startswith("m:del:"):
            key = inbound.data.removeprefix("m:del:")
            profile_row, values = await self._medical_values(inbound.chat_id)
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
            config = self._config(profile_row.id)
            cache = [e for e in values.get("cache") or [] if key not in e["used_keys"]]
            await self.medical_graph.aupdate_state(
                config, {"profile": profile, "cache": cache}, as_node="store_response"
            )
            now = inbound.at.astimezone(self.settings.zone)
            await self._write_profile(profile_row.id, {**values, "profile": profile}, now)
            self._keep_profile_terms(profile, now)
            name = records.item_label(gone, before, lang)
            log.info("chat=%s profile item removed", self.chat_tag(inbound.chat_id))
            reply.add(kn.message("med_item_removed", lang, name=name))
            return
        await self._medical_turn(inbound, reply)
