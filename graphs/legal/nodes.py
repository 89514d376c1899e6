"""Nodes of the legal intake graph. Each returns only the keys it changes.

Code before an `interrupt()` runs again when the graph resumes, so nothing here sends a message
or writes a record: replies go to `outbox` / the interrupt payload, records are written by the
engine after the graph returns.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graphs.common.brain import ReadContext
from graphs.common.context import Context
from graphs.common.intents import answer_question, declines_types, read_intent, says_wrong_type
from graphs.common.normalize import (
    find_amounts,
    find_dates,
    is_future,
    parse_yes_no,
    phrase_polarity,
)
from graphs.common.normalize.amounts import TOTAL_SAID, bare_in_man
from graphs.common.reading import MODEL, Reading, Role
from graphs.common.text import detect_lang, is_meaningless
from graphs.legal import memo as legal_memo
from graphs.legal import prompts, retype, wants
from graphs.legal import story as told_story
from graphs.legal.asked import asked_sentences, question_back, questions_of
from graphs.legal.changes import (
    bare_number_corrections,
    beside_paired,
    change,
    field_cues,
    kept_as_said,
    name_corrections,
    numbers_taken_back,
    paired_corrections,
    removals_kept,
    removed_options,
    same_value,
    sort_facts,
    taken_back_field,
    unnamed_choices,
)
from graphs.legal.details import people, split_counterparty
from graphs.legal.fields import next_field, percent, progress
from graphs.legal.state import LegalState, Message
from graphs.legal.summary import build_summary
from graphs.legal.years import story_years, years_asked
from knowledge.loader import Knowledge
from knowledge.models import FieldSpec

MAX_DESCRIPTION = 4000  # characters of the person's description kept in state
FAILURES_BEFORE_UNKNOWN = 3  # the first answer and two re-asks
# A plain answer the field's reader cannot normalise is kept as told on its first telling, for
# the lawyer, and not refused: "3월22일에 112신고했는데 경고만 하고 끝났어요. 고소는 아직 안했어요"
# to a yes/no, "On Instagram, it was a crypto platform" to a list of channels. A value read but
# not allowed (a future date, a zero amount), an answer too short to be one and a message about
# other facts are asked again.
KEPT_AS_TOLD = frozenset(
    {"yesno", "choice", "amount_unparsed", "date_unparsed", "int", "duration", "decimal"}
)
MAX_CANDIDATES = 3  # case types offered as buttons when unsure
# The picker is never a loop: the second "none of these" (or one at the list of main types), or
# a third round of it, leads to the free-form intake (K1's free-form sub-type).
MAX_DECLINES = 2
MAX_PICKER_ROUNDS = 3
EVIDENCE_KIND_OF_FILE = {"photo": "photo", "document": "other"}
# Why an answer did not fit its field, when the message carried another field's fact instead:
# then it answered something else (counted as a miss, not shown as an invalid answer).
ANSWERED_ELSEWHERE = frozenset(
    {
        None,
        "amount_unparsed",
        "date_unparsed",
        "text",
        "yesno",
        "choice",
        "int",
        "duration",
        "decimal",
    }
)


def waiting(
    kn: Knowledge, state: LegalState, outbox: list[Message], node: str, field: str | None = None
) -> dict[str, Any]:
    """The interrupt payload: replies of this turn, the field asked, progress, the waiting node."""
    done = (
        percent(*progress(kn.k2, state["sub_type"], state.get("facts", {})))
        if state.get("sub_type")
        else 0
    )
    return {"messages": outbox, "field": field, "progress": done, "state": node}


def received(reply: dict[str, Any]) -> dict[str, Any]:
    """State keys set when an input arrives: the input, and its id (so a replay is recognised)."""
    return {"answer": reply, "last_input_id": reply.get("id")}


def _text(answer: dict[str, Any] | None) -> str:
    return (answer or {}).get("text", "").strip() if (answer or {}).get("kind") == "text" else ""


def merge_facts(
    facts: dict[str, Any],
    found: dict[str, Any],
    corrections: list[dict[str, Any]],
    *,
    shown: bool = False,
) -> list[tuple[str, Any, Any]]:
    """Store found facts (latest statement wins); return the (field, old, new) changes. Kinds
    told add up to those recorded, except for a change `shown` old → new and confirmed: the
    list shown is the one kept ("이미 퍼뜨림 빼주세요" confirmed kept it: legal_set16 A4)."""
    changes = []
    for key, value in found.items():
        old = facts.get(key)
        if isinstance(old, list) and isinstance(value, list) and not shown:
            value = [*old, *(v for v in value if v not in old)]  # more kinds add up
        if key in facts and old != value:
            changes.append((key, old, value))
            corrections.append({"field": key, "old": old, "new": value})
        facts[key] = value
    return changes


async def greet_user(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Greet, show the privacy notice, and wait until the person describes the problem."""
    ctx = runtime.context
    kn, lang = ctx.knowledge, ctx.lang
    outbox = list(state.get("outbox", []))
    if not state.get("greeted"):
        outbox += [prompts.say(kn, lang, "greeting"), prompts.say(kn, lang, "privacy_notice")]
    answer = state.get("answer")
    text = _text(answer)
    greeting = text.lower().strip(" !.?~") in {
        g.lower() for gs in kn.lexicon.greetings.values() for g in gs
    }
    intent = read_intent(text, kn) if text else None
    if intent is not None and intent.kind in ("out_of_scope", "small_talk", "spam", "thanks"):
        talk = converse(kn, "", text, lang, state) or ([], [])
        outbox += talk[0]
        outbox.append(prompts.say(kn, lang, "ask_description"))
        reply = interrupt(waiting(kn, state, outbox, "INIT"))
        return {**received(reply), "outbox": [], "greeted": True}
    if text and not is_meaningless(text) and not greeting:
        return {
            "description": text[:MAX_DESCRIPTION],
            "danger_case": (answer or {}).get("case"),
            "outbox": outbox,
            "greeted": True,
            "answer": None,
        }
    if answer and answer.get("kind") == "file":
        outbox.append(prompts.say(kn, lang, "evidence_before_case"))
    elif text and not greeting:
        outbox.append(prompts.say(kn, lang, "not_understood"))
    outbox.append(prompts.say(kn, lang, "ask_description"))
    reply = interrupt(waiting(kn, state, outbox, "INIT"))
    return {**received(reply), "outbox": [], "greeted": True}


async def classify_case(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Classify the description (unless the person picked a type) and keep the facts it gives."""
    ctx = runtime.context
    kn, lang = ctx.knowledge, ctx.lang
    description = state["description"]
    sub_type, confidence = state.get("sub_type"), state.get("confidence", 1.0)
    if sub_type is None and state.get("danger_case") in kn.k2.sub_types:
        # "전남친이 제 영상 가지고 협박해요 … 올린대요" fired IMAGE_THREAT: that is the case,
        # whatever else its words point to (legal_set9 W1 was taken for defamation)
        sub_type, confidence = state["danger_case"], 1.0
    if sub_type is None:
        result = await ctx.brain.classify_case(description)
        if not result.confident or result.top is None:
            candidates = _candidates(state, result, ctx)
            # a story typed at the picker that still points to no type is taken as told, not
            # met with "tell me a little more" again (legal_set18 S1, A1 told it twice)
            if not _picker_exhausted(state) and (candidates or not state.get("picker_rounds")):
                said = await ctx.brain.read(description, sub_type="", asked=None, now=ctx.now)
                _, asked = asked_along(kn, "", said, lang, state.get("questions", []), whole=True)
                return {
                    "candidates": candidates,
                    "confidence": result.confidence,
                    "questions": asked,  # the first words may ask something already
                }
            sub_type = kn.k1.free_form  # declined or not found often enough: taken as told
        else:
            sub_type = result.top.sub_type
        confidence = result.confidence
    facts = dict(state.get("facts", {}))
    reading, told, found = await _read_description(state, sub_type, ctx, ctx.now)
    facts.update(found)
    wished = wants.with_wishes(kn, facts, description)  # "돌려받고 싶어요", whatever the type
    if wished is not None:
        facts[wants.FIELD] = wished
    story = state.get("story", [])
    facts["action_description"] = told_story.account(description, story)
    details, _ = told_story.with_details(kn, state.get("details", []), description)
    memo = legal_memo.added(state.get("memo", []), told)
    main_label, sub_label = prompts.case_labels(kn, sub_type, lang)
    outbox = list(state.get("outbox", []))
    emotions = [*state.get("emotions", []), *reading.emotions]
    outbox += _empathy(kn, lang, state.get("emotions", []), emotions, sub_type)
    if kn.k1.sub_type(sub_type)[1].free_form:
        outbox.append(prompts.say(kn, lang, "free_form_intake"))
    else:
        outbox.append(
            prompts.say(kn, lang, "classified", case_label=main_label, sub_label=sub_label)
        )
    if found:
        listed = prompts.describe_facts(kn, sub_type, found, lang)
        outbox.append(prompts.say(kn, lang, "already_given", facts=listed))
    # "…돈을 안 갚아요. 이거 소송하면 이길 수 있어요?": the question is the lawyer's to answer
    asked_now, questions = asked_along(
        kn, sub_type, reading, lang, state.get("questions", []), whole=True
    )
    outbox += asked_now
    at = ctx.now.isoformat()
    suggested = suggestions(kn, reading, facts)  # only a model read them: confirmed first
    choice = date_choice(reading, facts, description)  # "last Saturday" on a Sunday: asked first
    choice = choice and choice | {"at": at}
    return {
        **(
            {"proposed": [c | {"quote": description[:160]} for c in suggested]} if suggested else {}
        ),
        **({"pending": choice} if choice else {}),
        "case_type": kn.k1.sub_type(sub_type)[0].code,
        "memo": memo,
        "sub_type": sub_type,
        "confidence": confidence,
        "facts": facts,
        "provenance": told_story.noted(
            state.get("provenance", {}),
            [*found, *([wants.FIELD] if wished is not None else [])],
            quote=description,
            at=at,
            confirmed=False,
        ),
        "approx": sorted(set(state.get("approx", [])) | _approx(reading, found)),
        "details": details,
        "emotions": emotions,
        "questions": questions,
        "outbox": outbox,
    }


async def _read_description(
    state: LegalState, sub_type: str, ctx: Context, now: datetime
) -> tuple[Reading, list[dict[str, Any]], dict[str, Any]]:
    """The description read for the sub-type's fields, as of `now` (when it was told): the
    reading, its memo items, and the key fields they hold up."""
    kn, description = ctx.knowledge, state["description"]
    reading = await ctx.brain.read(description, sub_type=sub_type, asked=None, now=now)
    reading = years_asked(  # "12월" in a story of 2024: which year
        reading, state.get("memo", []), description, now=now, recorded=state.get("facts", {})
    )
    found = {k: v for k, v in reading.facts.items() if k in kn.k2.fields}
    at = now.isoformat()
    told = legal_memo.merged(
        legal_memo.message_items(
            kn, description, at=at, now=now, reading=reading, sub_type=sub_type
        ),
        reading.items,
        at=at,
        text=description,
    )
    told = story_years(told, state.get("memo", []), now=now)
    found = legal_memo.checked_keys(
        kn, sub_type, found, told, cued=reading.cued, placed=reading.placed
    )
    return reading, told, split_party(kn, found, description, dict(state.get("facts", {})))


def _picker_exhausted(state: LegalState) -> bool:
    """Whether the person has declined the types offered, or gone round the picker, enough."""
    return (
        state.get("declined", 0) >= MAX_DECLINES
        or state.get("picker_rounds", 0) >= MAX_PICKER_ROUNDS
    )


def _candidates(state: LegalState, result: Any, ctx: Context) -> list[str]:
    """The sub-types to offer as buttons, never one the person declined; none (the main
    types) when the words point to none."""
    declined = set(state.get("declined_types", []))
    candidates = [c.sub_type for c in result.candidates if c.sub_type not in declined]
    # The rules found legal cues but are unsure: retrieval over K1 fills the buttons.
    # (A description with no cue at all gets the main types instead.)
    retrieved = ctx.knowledge_base.case_candidates(state["description"]) if candidates else []
    free_form = ctx.knowledge.k1.free_form
    for code in retrieved:
        if (
            code not in candidates
            and code not in declined
            and code != free_form
            and len(candidates) < MAX_CANDIDATES
        ):
            candidates.append(code)
    return candidates


async def _declined(state: LegalState, text: str, ctx: Context) -> dict[str, Any]:
    """None of the offered types fits: the main types next, and the free-form intake at the
    second decline (or a decline of the main types themselves). A typed decline that also says
    what it is about ("스토킹이요 여기 없는데요") is taken by those words when they are clear,
    else classified again with them."""
    declined = state.get("declined", 0) + 1
    update: dict[str, Any] = {
        "declined": declined,
        "declined_types": [*state.get("declined_types", []), *(state.get("candidates") or [])],
        "browse": None,
        "outbox": [],
    }
    said = await ctx.brain.classify_case(text) if text else None
    if said is not None and said.candidates:
        description = f"{state['description']}\n{text}"[:MAX_DESCRIPTION]
        update.update(description=description, candidates=None)
        if said.confident and said.top is not None:  # what they say it is, over the first words
            update.update(sub_type=said.top.sub_type, confidence=said.confidence)
        return update
    main_types_shown = not state.get("candidates") and not state.get("browse")
    if declined >= MAX_DECLINES or main_types_shown:
        return {**update, "sub_type": ctx.knowledge.k1.free_form, "confidence": 0.0}
    return {**update, "candidates": []}


async def confirm_case_type(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Offer likely case types as buttons; wait for a pick or a fuller description."""
    ctx = runtime.context
    kn, lang = ctx.knowledge, ctx.lang
    candidates, browse = state.get("candidates") or [], state.get("browse")
    outbox = list(state.get("outbox", []))
    if not candidates and not browse and not state.get("picker_rounds"):
        # (once a story was typed at the picker, "tell me a little more" is not asked again)
        outbox.append(prompts.say(kn, lang, "describe_more"))
    choices = prompts.case_type_choices(kn, lang, candidates=candidates, browse=browse)
    outbox.append(prompts.message(kn.message("choose_case_type", lang), choices))
    reply = interrupt(waiting(kn, state, outbox, "CONFIRM_CASE_TYPE"))
    seen = {"last_input_id": reply.get("id")}
    data, text = reply.get("data", "") if reply.get("kind") == "choice" else "", _text(reply)
    known = {sub.code for _, sub in kn.k1.all_sub_types()}
    if data.startswith("st:") and data[3:] in known:
        return {**seen, "sub_type": data[3:], "confidence": 1.0, "browse": None, "outbox": []}
    if data == "ct:*" or (text and declines_types(text, kn)):
        return {**seen, **await _declined(state, text, ctx)}
    if data.startswith("ct:") and data[3:] in {ct.code for ct in kn.k1.case_types}:
        return {**seen, "browse": data[3:], "outbox": []}
    talk = converse(kn, "", text, lang, state) if text else None
    if talk is not None and read_intent(text, kn).kind != "question":
        return {**seen, "outbox": talk[0]}  # out of scope or small talk: said so, picker stays
    if text:  # a question asked at the picker is the lawyer's too ("상담 받으면 돈 들어요?")
        said = await ctx.brain.read(text, sub_type="", asked=None, now=ctx.now)
        _, asked = asked_along(kn, "", said, lang, state.get("questions", []), whole=True)
        seen["questions"] = asked
    if text and not is_meaningless(text):
        description = f"{state['description']}\n{text}"[:MAX_DESCRIPTION]
        return {
            **seen,
            "description": description,
            "candidates": None,
            "browse": None,
            "picker_rounds": state.get("picker_rounds", 0) + 1,
            "outbox": [],
        }
    key = "stale_button" if data else "not_understood"
    if reply.get("kind") == "file":
        key = "evidence_before_type"
    return {**seen, "outbox": [prompts.say(kn, lang, key)]}


async def ask_next_fact(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask for the first required fact not yet given nor unknown, and settle the answer when it
    comes (`settle_answer`); finish when there is none."""
    ctx = runtime.context
    kn, lang = ctx.knowledge, ctx.lang
    sub_type, facts = state["sub_type"], state.get("facts", {})
    if state.get("retype"):  # "this is not a lease": which type it is, before anything
        return await _ask_retype(state, ctx)
    pending = state.get("pending")
    key = (
        pending["field"]
        if pending
        else next_field(kn.k2, sub_type, facts, state.get("unknown", []))
    )
    if key is None and state.get("proposed") and state.get("asking"):
        key = state["asking"]  # the last answer proposed a correction: confirmed before the end
    if key is None:
        return {"asking": None, "answer": None}
    spec = ctx.knowledge_base.question(sub_type, key)
    if state.get("proposed"):  # a correction read from free text: confirmed before anything
        ask = prompts.confirm_changes(kn, sub_type, state["proposed"], lang, state.get("memo", []))
    elif pending and pending.get("options"):
        ask = prompts.choose_date(kn, sub_type, pending, lang)
    elif pending:
        ask = prompts.confirm_question(kn, sub_type, pending, lang)
    else:
        ask = prompts.question_for(kn, spec, state, key, lang)
    outbox = [*state.get("outbox", []), ask]
    reply = interrupt(waiting(kn, state, outbox, "FACT_COLLECTION", key))
    return await settle_answer(state, reply, key, ctx)


async def _ask_retype(state: LegalState, ctx: Context) -> dict[str, Any]:
    """Offer the change of case type the last message asked for; a reply that is no answer to
    it withdraws the offer and answers the question asked before."""
    kn = ctx.knowledge
    key = state.get("asking") or next_field(
        kn.k2, state["sub_type"], state.get("facts", {}), state.get("unknown", [])
    )
    outbox = [*state.get("outbox", []), retype.question(kn, state, ctx.lang)]
    reply = interrupt(waiting(kn, state, outbox, "FACT_COLLECTION", key))
    settled = retype.settle(kn, ctx, state, reply)
    if settled is not None and settled.get("sub_type"):
        # the account is read again for the fields of the type it now is (as of when it was
        # told); what a later message recorded stands
        told_at = min((i["at"] for i in state.get("memo", []) if i.get("at")), default=None)
        now = datetime.fromisoformat(told_at) if told_at else ctx.now
        _, _, found = await _read_description({**state, **settled}, settled["sub_type"], ctx, now)
        found = {k: v for k, v in found.items() if k not in settled["facts"]}
        settled["facts"] = {**found, **settled["facts"]}
        settled["provenance"] = told_story.noted(
            settled["provenance"],
            list(found),
            quote=state["description"],
            at=now.isoformat(),
            confirmed=False,
        )
        settled["asking"] = next_field(
            kn.k2, settled["sub_type"], settled["facts"], settled["unknown"]
        )
        if found:
            listed = prompts.describe_facts(kn, settled["sub_type"], found, ctx.lang)
            settled["outbox"] = [
                *settled["outbox"],
                prompts.say(kn, ctx.lang, "already_given", facts=listed),
            ]
    if settled is not None:
        return {"last_input_id": reply.get("id"), "asking": key, **settled}
    if key is None:  # nothing was left to ask: the summary next
        return {"last_input_id": reply.get("id"), "retype": None, "asking": None, "outbox": []}
    return {"retype": None, **await settle_answer({**state, "retype": None}, reply, key, ctx)}


async def settle_answer(
    state: LegalState, reply: dict[str, Any], key: str, ctx: Context
) -> dict[str, Any]:
    """The updates of an answer to the question about `key`, read and applied in the step that
    received it: the node that asked resumes from its start (the question is only built again,
    cheaply), and the answer is read once; the next question is the next step."""
    asked = {**state, "answer": reply, "asking": key, "outbox": [], "invalid": None}
    updates = await validate_answer(asked, ctx)  # type: ignore[arg-type]
    updates = {"last_input_id": reply.get("id"), "asking": key, "outbox": [], **updates}
    # Only what changed is written: a channel written again with its value is checkpointed
    # again (a new blob per channel on PostgreSQL) for nothing.
    return {k: v for k, v in updates.items() if k not in state or state.get(k) != v}


class Miss(StrEnum):
    """Why an answer gave the asked field no value, beside the extractor's reason codes (which
    name the K0 message that asks again: "amount_unparsed", "date_future", ...)."""

    ELSEWHERE = "elsewhere"  # it told another field's fact instead: a miss, no "invalid" reply
    STALE = "stale"  # a button of an earlier question
    PICK = "pick"  # one option of a multi-choice field: more may follow
    DONE = "done"  # "done" pressed on a multi-choice field


@dataclasses.dataclass
class _Answer:
    """One answer being settled: the state it changes, and what was read of it."""

    facts: dict[str, Any]
    unknown: list[str]
    corrections: list[dict[str, Any]]
    provenance: dict[str, Any]
    outbox: list[Message]
    asides: list[dict[str, Any]]
    at: str
    update: dict[str, Any] = dataclasses.field(default_factory=lambda: {"invalid": None})
    confirming: bool = False  # a change shown to confirm was passed over by this message
    value: Any = None  # the asked field's value
    reason: str | None = None  # why there is none (a Miss or the extractor's code)
    said_unknown: bool = False
    aside: bool = False  # it answered something else: the question comes again, no miss
    restated_note: Message | None = None  # "already written down", when only that was said
    rest: str = ""  # what follows a "no" to the changes shown, read as a message of its own
    text: str = ""
    quote: str = ""
    approx: set[str] = dataclasses.field(default_factory=set)
    summed: bool = False  # the asked amount adds up parts the person listed: confirmed first
    in_man: str = ""  # the bare number read as counted in 만 ("50이요"): confirmed first
    retype: bool = False  # it says the case type is wrong: a change is offered first

    @classmethod
    def of(cls, state: LegalState, ctx: Context) -> _Answer:
        return cls(
            facts=dict(state.get("facts", {})),
            unknown=list(state.get("unknown", [])),
            corrections=list(state.get("corrections", [])),
            provenance=dict(state.get("provenance", {})),
            outbox=list(state.get("outbox", [])),
            asides=list(state.get("asides", [])),
            at=ctx.now.isoformat(),
        )

    def settled(self, **extra: Any) -> dict[str, Any]:
        """The updates of an answer settled early (a confirmation, a stale button)."""
        return {**self.update, **extra}


async def validate_answer(state: LegalState, ctx: Context) -> dict[str, Any]:
    """Settle a confirmation that was waiting, else read the answer (`state["answer"]`, to the
    question about `state["asking"]`), then apply it: store every fact it gives and decide
    whether the question comes again (`invalid`)."""
    kn, lang, answer = ctx.knowledge, ctx.lang, state.get("answer") or {}
    work = _Answer.of(state, ctx)
    if answer.get("kind") == "file":
        files = _record_file(state, answer["file"], state["asking"], work.facts, work.outbox, ctx)
        return work.settled(**files)
    if answer.get("danger"):  # after a safety reply: kept, and nothing waiting is settled by it
        await _read_text(state, answer.get("text", ""), work, ctx)
        _only_kept(state, answer.get("text", ""), work, kn, again=bool(answer.get("danger_again")))
        return _apply(state, answer, work, ctx)
    settled = _confirmed(state, answer, work, ctx)
    if settled is not None:
        return settled
    if _declines_again(kn, state["sub_type"], answer):  # "목록에 없다니까요" once free-form
        return work.settled(outbox=[*work.outbox, prompts.say(kn, lang, "free_form_noted")])
    if answer.get("kind") == "choice":
        settled = _read_choice(state, answer, work, ctx)
        if settled is not None:
            return settled
    else:
        await _read_text(state, work.rest or answer.get("text", ""), work, ctx)
        if work.retype:  # the type is wrong, they say: the change is offered before this answer
            work.update["retype"] = await retype.offer(kn, ctx, state, work.text)
            work.value, work.reason, work.aside = None, None, True
    return _apply(state, answer, work, ctx)


def _confirmed(
    state: LegalState, answer: dict[str, Any], work: _Answer, ctx: Context
) -> dict[str, Any] | None:
    """The updates when the answer settles what waited for a yes or no (changes shown old → new,
    or a value read unsure); None when it said something else, which is then read afresh."""
    kn, lang, key = ctx.knowledge, ctx.lang, state["asking"]
    proposed = state.get("proposed") or []
    if proposed:
        work.update["proposed"] = []
        verdict = _verdict(kn, answer, "changes", lang, strict=True)
        rest = ""
        if verdict is None and (verdict := _leading_verdict(kn, answer)) is not None:
            rest = _text(answer).split(maxsplit=1)[1]
            # what follows the yes / no joins the account for the lawyer
            story = told_story.told(state.get("story", []), _text(answer), at=work.at, carries=True)
            work.update["story"] = story
            work.facts["action_description"] = told_story.account(
                state.get("description", ""), story
            )
        if verdict is False and any(ch.isdigit() for ch in rest):
            # "아니요 … 800,000원 아니고 500,000원이요", "No, not quite. The deposit is 230
            # million in total": the changes shown are refused, and what follows is read as
            # any message (a correction in it is shown anew; legal_set9 T1, T3)
            work.outbox.append(prompts.say(kn, lang, "changes_kept"))
            work.confirming, work.rest = True, rest
        elif verdict is not None:
            if verdict:
                fields = [c for c in proposed if not legal_memo.is_item(c["field"])]
                for made in fields:
                    merge_facts(
                        work.facts, {made["field"]: made["new"]}, work.corrections, shown=True
                    )
                if len(fields) < len(proposed):  # a memo item's value, confirmed
                    work.update["memo"] = legal_memo.with_fixes(state.get("memo", []), proposed)
                work.provenance = told_story.noted(
                    work.provenance,
                    [c["field"] for c in fields],
                    quote=proposed[0].get("quote", ""),
                    at=work.at,
                    confirmed=True,
                )
                applied = "changes_applied" if _changes(proposed) else "additions_applied"
                work.outbox.append(prompts.say(kn, lang, applied))
            else:
                # A change refused is no fact: the person said the reading was wrong ("아버지
                # 성함은 정춘식" offered as the scammer); the message itself stays in the account,
                # so a lawyer still reads their words (legal_set12 R1, R3, R5, S1).
                kept = "changes_kept" if _changes(proposed) else "additions_declined"
                work.outbox.append(prompts.say(kn, lang, kept))
            return work.settled(
                facts=work.facts,
                corrections=work.corrections,
                provenance=work.provenance,
                asides=work.asides,
                outbox=work.outbox,
            )
        else:
            # Something else was said: the change is not made (kept for the lawyer), and the
            # message is read for what it tells, not as an answer to a question it never saw.
            work.asides += [_as_aside(c, work.at) for c in _changes(proposed)]
            work.update["asides"] = work.asides
            work.confirming = True
    pending = state.get("pending")
    if pending is None:
        return None
    work.update["pending"] = None
    if pending.get("options"):
        return _date_chosen(state, pending, answer, work, ctx)
    verdict = _verdict(kn, answer, key, lang)
    if verdict is None:
        return None  # something else was said: read it as a fresh answer
    if verdict:  # the person confirmed what was read
        merge_facts(work.facts, {key: pending["value"]}, work.corrections)
        work.provenance = told_story.noted(
            work.provenance, [key], quote=pending["quote"], at=work.at, confirmed=True
        )
    else:
        work.outbox.append(prompts.say(kn, lang, "confirm_denied"))
    return work.settled(
        facts=work.facts,
        corrections=work.corrections,
        provenance=work.provenance,
        outbox=work.outbox,
    )


def _read_choice(
    state: LegalState, answer: dict[str, Any], work: _Answer, ctx: Context
) -> dict[str, Any] | None:
    """Read a button press; the updates when it settles the turn by itself (a stale button, one
    option of several picked), else None with the value read into `work`."""
    kn, lang, sub_type, key = ctx.knowledge, ctx.lang, state["sub_type"], state["asking"]
    data = answer.get("data", "")
    picked = list(state.get("picked", []))
    work.value, work.reason, work.said_unknown, picking = _pressed(kn, sub_type, key, data, picked)
    if work.reason == Miss.STALE:
        return work.settled(outbox=[*work.outbox, prompts.say(kn, lang, "stale_button")])
    if picking is not None:  # an option of a multi-choice field: ask for more or "done"
        return work.settled(picked=picking)
    work.quote = _pressed_label(kn, sub_type, key, data, lang)
    return None


async def _read_text(state: LegalState, text: str, work: _Answer, ctx: Context) -> None:
    """Read a typed answer into `work`: the asked field's value (or why not), every other fact
    it gives under the correction rules, what the person wants, details, questions back."""
    kn, lang, sub_type, key = ctx.knowledge, ctx.lang, state["sub_type"], state["asking"]
    facts, update = work.facts, work.update
    work.text = work.quote = text
    context = read_context(kn, state, key, lang)
    ex = await ctx.brain.read(text, sub_type=sub_type, asked=key, now=ctx.now, context=context)
    work.retype = retype.said_wrong(kn, ctx.brain, state, text, ex)
    memo_now = update.get("memo", state.get("memo", []))
    ex = years_asked(ex, memo_now, text, now=ctx.now, recorded=facts)  # "3월 12일" in 2024
    other = {k: v for k, v in ex.facts.items() if k in kn.k2.fields and k != key}
    told = legal_memo.merged(
        legal_memo.message_items(kn, text, at=work.at, now=ctx.now, reading=ex, sub_type=sub_type),
        ex.items,
        at=work.at,
        text=text,
    )
    told = story_years(told, memo_now, now=ctx.now)  # "24년 5월10일 … 6월3일": 2024's
    memo_fixes, told = memo_corrections(kn, state.get("memo", []), ex, told, text)
    other = legal_memo.checked_keys(kn, sub_type, other, told, cued=ex.cued, placed=ex.placed)
    # a date no word of its field placed, in an answer to another question, is the memo's
    # (chronology), never a key field by default ("사고는없어요 동탄 음주단속에 걸린거에요 11월1일
    # 밤에" to "was there an accident?": legal_set15 A4 got it as the notice date, the appeal
    # deadline 17 days early)
    other = {
        k: v for k, v in other.items() if k in ex.cued or kn.k2.field(sub_type, k).kind != "date"
    }
    other = split_party(kn, other, text, facts)
    # A recorded fact changes only through a confirmed correction of that field; another
    # value of its kind (a date of another event, an offer beside the loss) stays in the memo.
    kinds = {k: kn.k2.field(sub_type, k).kind for k in {*other, *facts} if k in kn.k2.fields}
    other, removing = removed_options(kn, facts, other, text)
    other = unnamed_choices(kn, sub_type, facts, other, text)
    read = sort_facts(facts, other, ex, kinds, asked=key, text=text)
    read.proposed += removing
    merge_facts(facts, read.new, work.corrections)
    # a pair of values ("not 2026-09-20 but 2025-06-03") says which recorded value changes
    paired = paired_corrections(
        facts, kinds, text, now=ctx.now, memo=update.get("memo", state.get("memo", []))
    )
    read.settle_pairs(paired)
    named = {c["field"] for c in [*paired, *read.proposed]}
    proposed_now = [
        *paired,
        *read.proposed,
        *(c for c in bare_number_corrections(facts, kinds, text) if c["field"] not in named),
    ]
    named |= {c["field"] for c in proposed_now}
    proposed_now += [c for c in name_fixes(kn, sub_type, facts, text) if c["field"] not in named]
    proposed_now += item_fixes(kn, update.get("memo", state.get("memo", [])), ex, ctx.now, lang)
    proposed_now += [c for c in memo_fixes if c["field"] not in {p["field"] for p in proposed_now}]
    proposed_now += suggestions(
        kn, ex, facts, asked=key, named=named, approx=state.get("approx", [])
    )
    proposed_now = kept_as_said(proposed_now, text, now=ctx.now)  # "80만원 맞아요": no change
    proposed_now = removals_kept(kn, proposed_now, text)  # "카톡은 지워주세요": the others kept
    proposed_now = beside_paired(
        proposed_now,
        paired,
        memo=update.get("memo", state.get("memo", [])),
        cues=field_cues(kn, sub_type, facts),
    )
    if proposed_now:
        update["proposed"] = [c | {"quote": text[:160]} for c in proposed_now]
    fresh = list(read.new)
    wished = wants.with_wishes(kn, facts, text) if key != wants.FIELD else None
    if wished is not None:  # what the person wants, added beside what they wanted before
        facts[wants.FIELD] = wished
        fresh.append(wants.FIELD)
    work.provenance = told_story.noted(
        work.provenance, fresh, quote=text, at=work.at, confirmed=False
    )
    work.approx = _approx(ex, other)
    details, new_details = told_story.with_details(kn, state.get("details", []), text)
    told = legal_memo.without_fixed(told, proposed_now, state.get("memo", []))
    memo = legal_memo.added(
        state.get("memo", []), told, restating=bool(memo_fixes) or ex.correction
    )
    if memo != state.get("memo", []):
        update["memo"] = memo
    story = told_story.told(
        state.get("story", []),
        text,
        at=work.at,
        carries=bool(
            fresh
            or new_details
            or ex.other_values
            or read.elsewhere
            or read.proposed
            or proposed_now
            or work.rest
        ),
    )
    facts["action_description"] = told_story.account(state.get("description", ""), story)
    emotions = [*state.get("emotions", []), *ex.emotions]
    work.outbox += _empathy(kn, lang, state.get("emotions", []), emotions, None)
    update.update(emotions=emotions, details=details, story=story)
    work.value, work.reason, work.said_unknown = ex.answer, ex.invalid, ex.unknown
    work.summed = ex.answer_summed
    if kn.k2.field(sub_type, key).kind == "amount" and not work.said_unknown:
        _amount_in_man(kn.k2.field(sub_type, key), ex, text, lang, work)
    choice = date_choice(ex, facts, text)
    if choice is None and work.reason == "date_unparsed" and not work.said_unknown:
        choice = dates_told(key, told, text)
    if choice is None and work.reason == "amount_several" and not work.said_unknown:
        choice = amounts_told(key, text)
    if choice is not None:  # words that fit two days: the person chooses before it is kept
        update["pending"] = choice | {"at": work.at}
        work.aside = work.aside or choice["field"] == key
        work.reason = None if choice["field"] == key else work.reason
    asked_kind = kn.k2.field(sub_type, key).kind
    corrected = taken_back_field(facts, ex, kinds, asked_kind)
    if work.value is not None and corrected is not None and corrected != key:
        # "3월 아니고 4월 5일이에요" while another date is asked: the March on record is
        # corrected (once confirmed); the question asked comes again.
        update["proposed"] = [
            *update.get("proposed", []),
            change(corrected, facts[corrected], work.value, text) | {"quote": text[:160]},
        ]
        work.value, work.reason, work.aside = None, None, True
    if ex.correction and other and asked_kind == "text":
        work.value, work.reason = None, None  # a correction of another fact, not this answer
    if key == wants.FIELD and work.said_unknown and wants.wishes(kn, text):
        # "일단 소음이 멈추는게 제일이고요 … 누가 한건지는 모르겠어요 … 위자료 받고 싶고요"
        # (legal_set19 R1): the unknown is another thing's, the wishes answer
        work.said_unknown, work.value = False, None
    if key == wants.FIELD and work.value is None and not work.said_unknown:
        # the wish said beside a correction or a name of another field ("무조건 처벌이고
        # 손해배상도 2000만원은 받아야겠어요. … 최동원이 시킨거 같은데": legal_set12 R3, R5
        # were asked again): its sentences answer the question
        said = wants.wishes(kn, text)
        if said:
            work.value, work.reason = " / ".join(said), None
    model_said = next(
        (
            v.said
            for v in ex.values
            if v.role is Role.ANSWER and v.field == key and v.confidence == MODEL and v.said
        ),
        None,
    )
    if key == wants.FIELD and isinstance(work.value, str) and model_said:
        # the words a model read as the wish answer it: no rule of the wish's words refuses it
        # (legal_set19 model notes A 0017: "보증금 1억 8천 돌려받는게 제일이고 …" was asked again)
        work.value = " ".join(model_said.split())
    elif key == wants.FIELD and isinstance(work.value, str):
        # "남은돈 2200만원 돌려받고 싶어요. 2024년 1월 15일에 500만원 … 갚았거든요. 근데
        # 시어머니가 …" (legal_set10 Z1): the wish is the sentences that say one; the rest is
        # read as the story it is (the memo, the account)
        said = wants.wishes(kn, text)
        if said and len(" / ".join(said)) < len(work.value):
            work.value = " / ".join(said)
        elif not said and sum(i["section"] == "money" for i in told) >= 2:
            # no wish in it, amounts told instead ("Before I answer that, let me explain the
            # deductions … wallpaper 1,800,000 …": legal_set15 B3 had it as her wish): the
            # story is kept (the memo, the account), the question comes again
            work.value, work.reason = None, Miss.ELSEWHERE
    if work.value is not None and key == "counterparty":
        work.value = split_party(kn, {key: work.value}, text, facts).get(key, work.value)
        if "counterparty_type" in facts and "counterparty_type" not in state.get("facts", {}):
            work.provenance = told_story.noted(
                work.provenance, ["counterparty_type"], quote=text, at=work.at, confirmed=False
            )
    talk = (
        converse(kn, sub_type, text, lang, state, ex)
        if work.value is None and not work.said_unknown and not work.retype
        else None
    )
    if talk is not None:  # a question back, small talk, out of scope: not a wrong answer
        messages, questions = talk
        work.outbox += messages
        update["questions"] = questions
        work.aside = True
    else:  # an answer (or a fact) that also asks something: the question is kept too
        messages, questions = asked_along(
            kn, sub_type, ex, lang, state.get("questions", []), whole=True
        )
        if work.retype:  # "can you fix the category?" asks the bot, not the lawyer
            before = len(state.get("questions", []))
            questions = [
                *questions[:before],
                *(q for q in questions[before:] if not says_wrong_type(q["text"], kn)),
            ]
        if len(questions) > len(state.get("questions", [])):
            work.outbox += messages
            update["questions"] = questions
    if work.value is None and not work.said_unknown and other and work.reason in ANSWERED_ELSEWHERE:
        # The message told something else, not this: kept (or corrected) above; this field
        # is asked again and the miss counts, so restating or correcting cannot loop.
        work.reason = Miss.ELSEWHERE
        if read.same == other:  # nothing new at all: say it is already written down
            work.restated_note = (
                # "112에 전화했어요 … 아직 밖에서 소리지르고 있어요" right after a safety reply
                # (legal_set15 A3, R6 were told "already written down, answer this question")
                prompts.say(kn, lang, "safety_resume")
                if _danger_near(state, work.at)
                else _already_recorded(kn, sub_type, read.same, lang)
            )
    if key in ex.facts or work.value is not None:
        work.approx |= _approx(ex, {key: work.value})


def _amount_in_man(spec: FieldSpec, ex: Reading, text: str, lang: str, work: _Answer) -> None:
    """The asked amount as Korean speech gives it: never an amount a word of another field
    placed ("보증금 5천에 월세 45만원": the 45만원 is the rent, not the deposit asked), and a
    bare number counted in 만 ("빌린건 50이요", "보증금 5천에") when no amount is written, the
    one after the field's own word or the only one, kept once the person confirms it."""
    others = {
        v.value
        for v in ex.values
        if v.role is Role.FACT and v.cued and v.field not in (None, ex.asked)
    }
    if work.value in others and not any(v.role is Role.ANSWER and v.cued for v in ex.values):
        work.value, work.reason = None, "amount_unparsed"
    if work.value is not None:
        return
    bare = bare_in_man(text, korean=lang == "ko")
    lowered = text.lower()
    after_cue = [
        m
        for m in bare
        if any(c and c.lower() in lowered[max(0, m.start - 8) : m.start] for c in spec.cues)
        # or its total named ("총 800정도요 여러번 나눠서 … 300만원 … 150": legal_set15 R1)
        or any(0 <= m.start - t.end() <= 3 for t in TOTAL_SAID.finditer(lowered))
    ]
    alone = bare if len(bare) == 1 and work.reason != "amount_several" else []
    # the number that opens the answer is it ("300이요 근데 8월1일에 200 더 빌렸어요 … 585만원
    # 넘게 갚았는데": legal_set19 R6 was asked again)
    opening = [m for m in bare[:1] if not re.sub(r"[\s,.~!?-]", "", text[: m.start])]
    chosen = after_cue if len(after_cue) == 1 else opening or alone
    if chosen:
        work.value, work.reason = chosen[0].value, None
        work.in_man = text[chosen[0].start : chosen[0].end]


def _only_kept(
    state: LegalState, text: str, work: _Answer, kn: Knowledge, *, again: bool = False
) -> None:
    """A message that raised a safety alert, read: its facts, details, wishes and questions
    are kept, and the message joins the account; a value of the question asked said beside
    the danger ("아니요 그런건 안했어요 잠깐만요 지금 그사람 …": a no, a date, an amount) is
    kept too, never one to confirm nor words taken as a text answer. It proposes nothing and
    adds no reply of its own (the safety reply came first, the next question follows)."""
    outbox, update = list(state.get("outbox", [])), work.update
    update.pop("proposed", None)
    update.pop("pending", None)
    work.outbox = outbox
    if work.value is None or not _said_of_its_own(kn, state, text, work.value, again=again):
        work.value, work.aside = None, True
    work.reason, work.said_unknown = None, False
    work.restated_note = None
    update["danger_at"] = work.at
    story = told_story.told(state.get("story", []), text, at=work.at, carries=True)
    update["story"] = story
    work.facts["action_description"] = told_story.account(state.get("description", ""), story)


def _said_of_its_own(
    kn: Knowledge, state: LegalState, text: str, value: Any, *, again: bool = False
) -> bool:
    """Whether the asked field's value read from a message that raised an alert is said of
    that field and sure: a date, an amount, an option, a count; a yes or no only by the
    field's own phrases ("접근금지는 신청 안했어요"), never a leading "아니요" that may answer
    something else the message tells ("아니요 신고는 안했어요 … 지금 건물 앞에 와있어요" to "지금도
    계속되나요?"); never the message itself as a text answer. `again`: the alert was only a
    danger answered before, told again beside an answer to the question ("no, im scared to go
    to police … will the police make me show the video??" to "reported to the police?", "I just
    want the video gone … and my money back" to what they want: legal_set18 B3 had three such
    answers refused in each mode): a plain yes or no, and a wish said as one, are kept."""
    spec = kn.k2.field(state["sub_type"], state["asking"])
    if spec.kind == "text":
        return again and state["asking"] == wants.FIELD and bool(wants.wishes(kn, text))
    if spec.kind == "yesno" and again:
        return True  # (a question asked after the answer does not make it unsure)
    if _unsure(kn, text):
        return False
    if spec.kind == "yesno":
        statements = spec.says + spec.answers
        said = phrase_polarity(text.lower(), true=statements.affirm, false=statements.deny)
        return said is not None and said == value
    return True


def _apply(
    state: LegalState, answer: dict[str, Any], work: _Answer, ctx: Context
) -> dict[str, Any]:
    """Store the asked field's value, or count the miss and say why it comes again."""
    kn, lang, sub_type, key = ctx.knowledge, ctx.lang, state["sub_type"], state["asking"]
    facts, update, value, reason = work.facts, work.update, work.value, work.reason
    text = work.text
    if update.get("proposed") and value is None and not work.said_unknown:
        # A correction to confirm comes first: the miss counts (no loop), the question waits.
        attempts = {**state.get("attempts", {}), key: state.get("attempts", {}).get(key, 0) + 1}
        update["attempts"] = attempts
        reason = None
        if attempts[key] >= FAILURES_BEFORE_UNKNOWN:
            work.unknown.append(key)
    elif work.confirming and value is None and reason != Miss.ELSEWHERE:
        reason = None  # the question was not asked this turn: no miss, it comes next
    label = kn.k2.field(sub_type, key).label.get(lang)
    picked = list(state.get("picked", []))
    if value is not None and picked and isinstance(value, list):
        value = [*picked, *(v for v in value if v not in picked)]  # typed kinds join the picks
    if value is not None or work.said_unknown:
        update["picked"] = []
    aside = work.aside
    if (
        value is not None
        and answer.get("kind") == "text"
        and not answer.get("danger")  # (kept beside a danger only when sure: _only_kept)
        and (_unsure(kn, text) or work.summed or work.in_man)
    ):
        # "한 천만원?", "아마 작년 3월이었나", or parts added up ("3월에 1000만원, 5월에
        # 500만원"): read, but confirmed with a button before it is kept.
        update["pending"] = {"field": key, "value": value, "quote": text[:160]}
        update["pending"] |= {"summed": True} if work.summed else {}
        update["pending"] |= {"in_man": work.in_man} if work.in_man else {}
        value, aside = None, True
    if value is not None:
        merge_facts(facts, {key: value}, work.corrections)
        work.provenance = told_story.noted(
            work.provenance,
            [key],
            quote=work.quote,
            at=work.at,
            confirmed=answer.get("kind") == "choice",
        )
    elif work.said_unknown:
        work.unknown.append(key)
        work.outbox.append(prompts.say(kn, lang, "noted_unknown", field=label))
    elif not aside and reason is not None:  # (answered something else: asked again, no miss)
        _missed(state, work, reason, label, kn, lang)
    approx_now = set(state.get("approx", []))
    for changed in {k for k, _ in facts.items() if facts.get(k) != state.get("facts", {}).get(k)}:
        approx_now.discard(changed)  # a value said again is as precise as its latest telling
    return {
        **update,
        "facts": facts,
        "unknown": work.unknown,
        "corrections": work.corrections,
        "provenance": work.provenance,
        "approx": sorted(approx_now | work.approx),
        "outbox": work.outbox,
    }


def _missed(
    state: LegalState, work: _Answer, reason: str, label: str, kn: Knowledge, lang: str
) -> None:
    """Count a miss of the asked field: recorded unknown (with the person's own words) after
    FAILURES_BEFORE_UNKNOWN, else asked again with why."""
    key, text, update = state["asking"], work.text, work.update
    attempts = {**state.get("attempts", {}), key: state.get("attempts", {}).get(key, 0) + 1}
    update["attempts"] = attempts
    plain = (
        reason in KEPT_AS_TOLD
        and not _tells_else(kn, text)
        # what follows a danger tells of it, no answer ("경찰 왔어요.. 태민이 데리고 갔어요" to
        # "is there evidence?" was kept as the evidence: legal_set19 A4)
        and not _danger_near(state, work.at)
        # "5년 아니고 23년" to "is there property?": a number put right, no answer to keep
        and not (reason in ("yesno", "choice") and numbers_taken_back(text))
    )
    as_told = _own_words(state, text) if plain else ""
    if as_told or attempts[key] >= FAILURES_BEFORE_UNKNOWN:
        work.unknown.append(key)
        words = as_told or _own_words(state, text if reason != Miss.ELSEWHERE else "")
        if words:  # what they said is kept for staff, not turned into "unknown"
            update["unclear"] = {**state.get("unclear", {}), key: words}
            work.provenance = told_story.noted(
                work.provenance, [key], quote=words, at=work.at, confirmed=False
            )
            work.outbox.append(
                prompts.say(kn, lang, "recorded_unclear", field=label, words=words[:60])
            )
        else:
            work.outbox.append(prompts.say(kn, lang, "recorded_unknown", field=label))
    elif work.restated_note is not None:
        work.outbox.append(work.restated_note)
    elif reason != Miss.ELSEWHERE:  # (a message about another fact was answered above)
        answer = state.get("answer") or {}
        shown = answer.get("text", "")[:40] if reason == "date_future" else ""
        if reason == "amount_several":
            spec = kn.k2.field(state["sub_type"], key)
            shown = ", ".join(
                prompts.format_value(kn, spec, m.value, lang) for m in find_amounts(text)[:8]
            )
        update["invalid"] = {"field": key, "reason": reason, "value": shown}
        if text:  # kept to show staff the person's own words should the field stay unread
            update["tried"] = {**state.get("tried", {}), key: text[:200]}


def suggestions(
    kn: Knowledge,
    reading: Reading,
    facts: dict[str, Any],
    *,
    asked: str | None = None,
    named: set[str] | frozenset[str] = frozenset(),
    approx: Collection[str] = (),
) -> list[dict[str, Any]]:
    """Values only a model read (`Reading.suggested`), as changes for the person to confirm
    (`prompts.confirm_changes`) before any is recorded: a field not recorded from nothing, a
    recorded one old → new (`refined`; `approx`: the fields recorded as approximate)."""
    out = []
    for key, value in reading.suggested.items():
        if key not in kn.k2.fields or key == asked or key in named:
            continue
        if facts.get(key) is None:
            out.append({"field": key, "old": None, "new": value})
            continue
        if key == "action_description":
            continue  # the account is the person's words, never a model's value to refine
        new = refined(
            kn.k2.fields[key],
            facts[key],
            value,
            corrects=key in reading.cued or reading.correction,
            approx=key in approx,
        )
        if new is not None:
            out.append(change(key, facts[key], new, reading.text))
    return out


def refined(spec: FieldSpec, old: Any, said: Any, *, corrects: bool, approx: bool = False) -> Any:
    """What a recorded field becomes by a value a model read in context, None for no change:
    a correction's value as said; more options of a multi-choice field added to those recorded
    ("we also have photos"); a longer text field's words beside the recorded ones (the injury,
    then the surgery); another value of any other field in its place (the company's name after
    "our factory", the exact amount or day after an approximate one). Another amount or date
    for an exact one is no refinement but another fact ("i think i should get around 8,000,000"
    after the 9,400,000 owed: legal_set15 B1 was asked to replace it, and with an offer)."""
    if same_value(old, said):
        return None
    if spec.kind in ("amount", "date") and not corrects and not approx:
        return None
    if isinstance(old, list) and isinstance(said, list) and not corrects:
        more = [code for code in said if code not in old]
        return [*old, *more] if more else None
    if spec.kind == "text" and not spec.short and not corrects and isinstance(old, str):
        return None if str(said) in old else f"{old} / {said}"
    return said


def date_choice(reading: Reading, facts: dict[str, Any], text: str) -> dict[str, Any] | None:
    """A date whose words fit two days ("last Saturday" said on a Sunday, "지난 주말"), as a
    question to settle (`pending` with its `options`) before anything is recorded: the asked
    field's first, else a field with no value yet; None when there is none."""
    for key, value in reading.choices.items():
        if key == reading.asked or key not in facts:
            return {
                "field": key,
                "options": [value.value, *value.alternatives],
                "said": value.said,
                "quote": text[:160],
            }
    return None


def dates_told(key: str, told: list[dict[str, Any]], text: str) -> dict[str, Any] | None:
    """Several days told in an answer to a date question, none of them plainly the one asked
    ("통지서는 11월13일 받았고 처분날짜는 11월10일로 돼있음 단속된건 10월18일": legal_set19 R4,
    R5, S6 were kept as told, with no deadline): a button for each, in the order told; None
    when fewer than two, or too many to offer."""
    days = {
        str(item["date"]): True
        for item in told
        if item.get("section") == "chronology" and item.get("date") and not item.get("planned")
    }
    if not 2 <= len(days) <= 4:
        return None
    return {
        "field": key,
        "options": list(days),
        "several": True,
        "quote": text[:160],
    }


def amounts_told(key: str, text: str) -> dict[str, Any] | None:
    """Several amounts told in an answer to an amount question, none plainly the one asked
    ("300이요 근데 8월1일에 200 더 빌렸어요 … 585만원 넘게 갚았는데 아직 1100 남았대요":
    legal_set19 R6 was asked to type it again): a button for each, in the order told."""
    amounts = list(dict.fromkeys(m.value for m in find_amounts(text)))
    if not 2 <= len(amounts) <= 4:
        return None
    return {"field": key, "options": amounts, "several": True, "quote": text[:160]}


def _date_chosen(
    state: LegalState,
    pending: dict[str, Any],
    answer: dict[str, Any],
    work: _Answer,
    ctx: Context,
) -> dict[str, Any] | None:
    """The updates when the person chose one of the days offered (a button, or a date typed
    that reads one way); None when they said something else, which is then read afresh."""
    key, options = pending["field"], pending["options"]
    spec = ctx.knowledge.k2.field(state["sub_type"], key)
    chosen = None
    if answer.get("kind") == "choice":
        data = answer.get("data", "")
        said = data.removeprefix(f"a:{key}:on:")
        chosen = next(
            (
                o
                for i, o in enumerate(options)
                if prompts.option_data(o, i) == said and said != data
            ),
            None,
        )
    elif spec.kind == "date":  # "아 어제요", "the 21st of November"
        ahead = spec.allow_future
        found = find_dates(_text(answer), now=ctx.now, allow_future=ahead)
        if len(found) == 1 and not found[0].alternatives:
            day = str(found[0].value)
            chosen = day if ahead or not is_future(day, now=ctx.now) else None
    elif spec.kind == "amount":  # one of the amounts offered, typed
        found = find_amounts(_text(answer), asked=True)
        chosen = found[0].value if len(found) == 1 and found[0].value in options else None
    if chosen is None:
        return None
    merge_facts(work.facts, {key: chosen}, work.corrections)
    work.provenance = told_story.noted(
        work.provenance, [key], quote=pending["quote"], at=work.at, confirmed=True
    )
    memo = state.get("memo", [])
    one_day = spec.kind == "date" and not pending.get("several")  # (not one of several days)
    dated = legal_memo.with_day_chosen(memo, pending, chosen) if one_day else memo
    return work.settled(
        facts=work.facts,
        corrections=work.corrections,
        provenance=work.provenance,
        outbox=work.outbox,
        **({"memo": dated} if dated != memo else {}),
    )


def _changes(proposed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proposed changes of recorded values (not values suggested for empty fields)."""
    return [c for c in proposed if c.get("old") is not None]


def _as_aside(change: dict[str, Any], at: str) -> dict[str, Any]:
    """A correction not confirmed, kept for the lawyer beside the recorded value."""
    return {
        "field": change["field"],
        "value": change["new"],
        "recorded": change["old"],
        "quote": change.get("quote", ""),
        "at": at,
    }


def _declines_again(kn: Knowledge, sub_type: str, answer: dict[str, Any]) -> bool:
    """A free-form intake's question answered with "none of these (types)": no answer, no miss."""
    text = _text(answer)
    free_form = kn.k1.sub_type(sub_type)[1].free_form
    return bool(text) and free_form and declines_types(text, kn, names_list=True)


def _unsure(kn: Knowledge, text: str) -> bool:
    """Whether the person sounds unsure of what they said (a value asked back, a hedge)."""
    lowered = text.strip().lower()
    if lowered.endswith("?") and read_intent(text, kn).kind != "question":
        return True
    return any(hedge in lowered for hedge in kn.lexicon.hedges.get(detect_lang(text) or "ko", []))


def _verdict(
    kn: Knowledge, answer: dict[str, Any], key: str, lang: str, *, strict: bool = False
) -> bool | None:
    """True / False for a confirmation (button or a typed yes / no); None for anything else.

    `strict`: only a short typed yes / no counts ("네", "아니요 그대로요"), not a sentence that
    happens to end in one ("7월까지 갚기로 했어요")."""
    if answer.get("kind") == "choice":
        return {f"a:{key}:confirm": True, f"a:{key}:deny": False}.get(answer.get("data", ""))
    words = _text(answer).lower().strip(" .!~")
    if not words or (strict and (len(words) > 12 or any(ch.isdigit() for ch in words))):
        return None
    # a yes in either language ("네" in an English intake is still a yes)
    yes = [w for ws in kn.lexicon.yes.values() for w in ws]
    no = [w for ws in kn.lexicon.no.values() for w in ws]
    return parse_yes_no(words, yes=yes, no=no)


def _leading_verdict(kn: Knowledge, answer: dict[str, Any]) -> bool | None:
    """A yes / no that opens a longer message to the changes shown ("아니요 보증금은 2억
    맞아요, 500은 새집 계약금이에요"): the verdict on them, not an answer to anything else."""
    words = _text(answer).split()
    if len(words) < 2:
        return None
    head = words[0].strip(" .,!~?").lower()
    yes = [w for ws in kn.lexicon.yes.values() for w in ws]
    no = [w for ws in kn.lexicon.no.values() for w in ws]
    return parse_yes_no(head, yes=yes, no=no) if head else None


def name_fixes(
    kn: Knowledge, sub_type: str, facts: dict[str, Any], text: str
) -> list[dict[str, Any]]:
    """Corrections of recorded names and labels the message gives (`changes.name_corrections`),
    the fields named by their labels (the sub-type's and the general one)."""
    labels = {}
    for key in facts:
        if key not in kn.k2.fields or not kn.k2.field(sub_type, key).short:
            continue
        specs = (kn.k2.field(sub_type, key), kn.k2.fields[key])
        labels[key] = list(
            dict.fromkeys(t for spec in specs for t in (spec.label.ko, spec.label.en))
        )
    if not labels:
        return []
    return name_corrections(facts, labels, people(text, kn), text)


RECORD_CHARS = 4000  # of the record given to a model as context


def _latest_fitting(items: list[str], room: int) -> list[str]:
    """The memo's lines that fit in `room` characters, whole: the latest ones, in their order,
    after a line saying how many earlier ones are left out (a line cut mid-item hid the id of
    the item a correction was about: legal_set9 T3)."""
    kept: list[str] = []
    for line in reversed(items):
        if len(line) + 1 > room - 40:
            break
        kept.insert(0, line)
        room -= len(line) + 1
    left = len(items) - len(kept)
    return [f"- ({left} earlier memo items not shown)", *kept] if left else kept


def read_context(
    kn: Knowledge, state: dict[str, Any], key: str | None, lang: str, *, finished: bool = False
) -> ReadContext:
    """What a model reads a message in: the record so far (key fields, then memo items), the
    question just asked (or that the summary was shown) and the asked field's options."""
    sub_type = state["sub_type"]
    lines = []
    for field, value in state.get("facts", {}).items():
        if field == "action_description" or field not in kn.k2.fields:
            continue
        spec = kn.k2.field(sub_type, field)
        lines.append(
            f"- {field} ({spec.label.get('en')}): {prompts.format_value(kn, spec, value, 'en')}"
        )
    told = (legal_memo.record_line(item, 60) for item in state.get("memo", []))
    items = [line for line in told if line]
    lines += _latest_fitting(items, RECORD_CHARS - sum(len(line) + 1 for line in lines))
    question, options = "", ()
    if key is not None and not finished:
        spec = kn.k2.field(sub_type, key)
        question = prompts.question_for(kn, spec, state, key, lang)["text"]
        options = tuple(f"{o.value} ({o.label.get('en')})" for o in spec.options)
    elif finished and state.get("proposed"):  # the changes shown, waiting for a yes
        memo = state.get("memo", [])
        question = prompts.confirm_changes(kn, sub_type, state["proposed"], lang, memo)["text"]
    return ReadContext(
        record="\n".join(lines),
        last_message=question,
        options=options,
        finished=finished,
    )


def memo_corrections(
    kn: Knowledge,
    memo: list[dict[str, Any]],
    reading: Reading,
    told: list[dict[str, Any]],
    text: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Corrections of memo items the rules read in a message (an amount, a date or a party's
    name taken back, with the new one), and the message's items without the new values they
    carry (those are the corrections, not new facts)."""
    fixes, told = legal_memo.taken_back_fixes(memo, reading, told, quote=text[:160])
    for fix in legal_memo.party_fixes(memo, text, people(text, kn)):
        if fix["field"] not in {f["field"] for f in fixes}:
            fixes.append(fix | {"quote": text[:160]})
    renamed = {str(f["new"]) for f in fixes if isinstance(f["new"], str)}
    told = [i for i in told if not (i["section"] == "parties" and i["name"] in renamed)]
    return fixes, told


def item_fixes(
    kn: Knowledge, memo: list[dict[str, Any]], reading: Reading, now: Any, lang: str
) -> list[dict[str, Any]]:
    """Changes of memo items a model read in context ("6월, 9월에 받은 것도 작년이고요"), each
    read with the item's own reader, and items the person asks to delete (the model's, else
    the rules' `legal_memo.removals`), shown old → new before anything is made."""
    proposed = []
    for fix in reading.item_fixes:
        made = (
            legal_memo.item_removal(kn, memo, fix["item"], lang)
            if fix.get("remove")
            else legal_memo.item_fix(kn, memo, fix["item"], fix["said"], now=now)
        )
        if made is not None and made["field"] not in {p["field"] for p in proposed}:
            proposed.append(made | {"quote": reading.text[:160]})
    if not any(p.get("remove") for p in proposed):
        proposed += [
            made | {"quote": reading.text[:160]}
            for made in legal_memo.removals(kn, memo, reading.text, lang)
            if made["field"] not in {p["field"] for p in proposed}
        ]
    return proposed


def typed_verdict(kn: Knowledge, text: str, lang: str) -> bool | None:
    """A short typed yes / no ("네", "아니요 그대로요", "yes"), None for anything else."""
    return _verdict(kn, {"kind": "text", "text": text}, "changes", lang, strict=True)


def _tells_else(kn: Knowledge, text: str) -> bool:
    """Whether a message that answers the question asked with nothing readable says something
    else instead (a wish, a question): no answer to keep as told, the question comes again."""
    return bool(wants.wishes(kn, text)) or bool(re.search(r"[?？]", text))


def _own_words(state: LegalState, text: str) -> str:
    """The person's last words for a field they could not be read from (for staff to check)."""
    words = text.strip()
    if not words or is_meaningless(words):  # an earlier attempt may still be the person's words
        words = (state.get("tried") or {}).get(state.get("asking") or "", "")
    letters = re.sub(r"[\W_]", "", words)
    if is_meaningless(words) or len(letters) <= 2 or len(set(letters)) <= 2:  # "음...", "가가가…"
        return ""
    return " ".join(words.split())[:120]


def _pressed_label(kn: Knowledge, sub_type: str, key: str, data: str, lang: str) -> str:
    """The label of a pressed answer button: the person's words when they press."""
    raw = data.split(":", 2)[-1]
    spec = kn.k2.field(sub_type, key)
    if raw in ("yes", "no"):
        return kn.message(f"btn_{raw}", lang)
    labels = {o.value: o.label.get(lang) for o in spec.options}
    return labels.get(raw, raw)


def _approx(reading: Reading, found: dict[str, Any]) -> set[str]:
    """Fields among `found` whose value the person gave as approximate ("약 300만원")."""
    return {key for key in found if key in reading.approx}


def split_party(
    kn: Knowledge, found: dict[str, Any], text: str, facts: dict[str, Any]
) -> dict[str, Any]:
    """A counterparty as a name (or a short description) and its kind, never a sentence."""
    value = found.get("counterparty")
    if not isinstance(value, str):
        return found
    name, kind = split_counterparty(value, kn)
    if name is None and kind is None:
        name, kind = split_counterparty(text, kn)
    updated = dict(found)
    if name:
        updated["counterparty"] = name
    if kind and "counterparty_type" not in facts and "counterparty_type" not in found:
        facts["counterparty_type"] = kind
    return updated


def _empathy(
    kn: Knowledge,
    lang: str,
    before: list[dict[str, str]],
    after: list[dict[str, str]],
    sub_type: str | None,
) -> list[Message]:
    """A brief word for a feeling the person just expressed (once per kind), or a loss."""
    shown = {e["kind"] for e in before}
    messages = []
    if sub_type == "INHERITANCE":
        messages.append(prompts.say(kn, lang, "condolence"))
    for emotion in after:
        kind = emotion["kind"]
        if kind not in shown and f"empathy_{kind}" in kn.k0.messages:
            messages.append(prompts.say(kn, lang, f"empathy_{kind}"))
            shown.add(kind)
            break  # one word of feeling is enough in one turn
    return messages


def converse(
    kn: Knowledge,
    sub_type: str,
    text: str,
    lang: str,
    state: LegalState,
    reading: Reading | None = None,
) -> tuple[list[Message], list[dict[str, Any]]] | None:
    """(replies, the person's questions) for a message that asks back, chats or is out of
    scope; None for anything else (an answer, or an answer that could not be read)."""
    intent = read_intent(text, kn)
    questions = list(state.get("questions", []))
    if intent.kind == "question":
        answer = answer_question(kn, sub_type, intent, lang)
        known = {q["text"] for q in questions}
        questions += [
            question_back(q, answer) for q in questions_of(reading, text) if q not in known
        ]
        if answer is not None:
            return [prompts.say(kn, lang, "question_general_info", answer=answer)], questions
        return [prompts.say(kn, lang, "question_noted")], questions
    if intent.kind == "out_of_scope":
        key = "out_of_scope_medical" if intent.topic == "medical" else "out_of_scope_other"
        return [prompts.say(kn, lang, key)], questions
    if intent.kind in ("small_talk", "spam"):
        return [prompts.say(kn, lang, "small_talk")], questions
    if intent.kind == "thanks":
        return [prompts.say(kn, lang, "thanks_reply")], questions
    return None


def asked_along(
    kn: Knowledge,
    sub_type: str,
    reading: Reading,
    lang: str,
    questions: list[dict[str, Any]],
    *,
    whole: bool = False,
) -> tuple[list[Message], list[dict[str, Any]]]:
    """Questions asked inside a message that also told something ("네 신고했어요. 이거 다
    갚아야돼요??"): each clause the Reading says asks is listed for the lawyer and answered from
    K3 where it can be. A whole message that is a question is `converse`'s, unless `whole` (the
    first message, which is the description as well)."""
    messages, listed = [], list(questions)
    known = {q["text"] for q in listed}
    for sentence in asked_sentences(reading):
        if (sentence == reading.text.strip() and not whole) or sentence in known:
            continue
        answer = answer_question(kn, sub_type, read_intent(sentence, kn), lang)
        listed.append(question_back(sentence, answer))
        known.add(sentence)
        key = "question_general_info" if answer is not None else "question_noted"
        messages.append(prompts.say(kn, lang, key, **({"answer": answer} if answer else {})))
    return messages[:1], listed  # one reply is enough; every question is listed


DANGER_NEAR = timedelta(minutes=30)  # how long after a safety reply a message is read as of it


def _danger_near(state: LegalState, at: str) -> bool:
    """Whether a message came soon after one that raised a safety alert."""
    raised = state.get("danger_at")
    if not raised:
        return False
    try:
        return datetime.fromisoformat(at) - datetime.fromisoformat(raised) <= DANGER_NEAR
    except (TypeError, ValueError):
        return False


def _already_recorded(kn: Knowledge, sub_type: str, facts: dict[str, Any], lang: str) -> Message:
    """'Already written down: deposit 120,000,000원' for facts a message only restated."""
    listed = ", ".join(
        f"{kn.k2.field(sub_type, k).label.get(lang)} "
        f"{prompts.format_value(kn, kn.k2.field(sub_type, k), v, lang)}"
        for k, v in facts.items()
    )
    return prompts.say(kn, lang, "already_recorded", facts=listed)


def _choice_value(kn, sub_type: str, key: str, data: str) -> tuple[Any, str | None, bool]:
    """(value, reason, unknown) of a pressed answer button; reason 'stale' for another question's."""
    parts = data.split(":", 2)
    if len(parts) != 3 or parts[0] != "a" or parts[1] != key:
        return None, Miss.STALE, False
    raw = parts[2]
    if raw == "unknown":
        return None, None, True
    spec = kn.k2.field(sub_type, key)
    if spec.kind == "yesno" and raw in ("yes", "no"):
        return raw == "yes", None, False
    if spec.kind == "multi_choice" and raw == "done":
        return None, Miss.DONE, False
    if raw in {o.value for o in spec.options}:
        return ([raw], Miss.PICK, False) if spec.kind == "multi_choice" else (raw, None, False)
    return None, Miss.STALE, False


def _pressed(
    kn: Knowledge, sub_type: str, key: str, data: str, picked: list[str]
) -> tuple[Any, str | None, bool, list[str] | None]:
    """(value, reason, unknown, picks to ask again with) of a pressed answer button.

    A multi-choice option joins the picks, and the question is asked again with them until
    "done" (or until every option is picked): the picks are then the answer.
    """
    value, reason, said_unknown = _choice_value(kn, sub_type, key, data)
    if reason == Miss.PICK:
        picks = [*picked, *(v for v in value if v not in picked)]
        if len(picks) < len(kn.k2.field(sub_type, key).options):
            return None, None, False, picks
        return picks, None, False, None
    if reason == Miss.DONE or (said_unknown and picked):  # (an old "I don't know" button too)
        return (picked, None, False, None) if picked else (None, "choice", False, None)
    return value, reason, said_unknown, None


def _record_file(
    state, file: dict[str, Any], key: str, facts, outbox, ctx: Context
) -> dict[str, Any]:
    """Keep a photo or document as evidence; it answers the evidence questions."""
    kn, lang = ctx.knowledge, ctx.lang
    files = list(state.get("evidence_files", []))
    if all(f["file_unique_id"] != file["file_unique_id"] for f in files):
        files.append({**file, "at": ctx.now.isoformat()})
    facts["evidence"] = True
    kind = EVIDENCE_KIND_OF_FILE.get(file.get("kind", ""), "other")
    kinds = list(facts.get("evidence_type") or [])
    if kind not in kinds:
        kinds.append(kind)
    facts["evidence_type"] = kinds
    kind_label = kn.k2.field(state["sub_type"], "evidence_type")
    shown = prompts.format_value(kn, kind_label, [kind], lang)
    outbox = [*outbox, prompts.say(kn, lang, "evidence_received", kind=shown)]
    return {"facts": facts, "evidence_files": files, "outbox": outbox}


async def ask_again(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Say why the last answer could not be used, ask the same question again, and settle the
    answer when it comes (`settle_answer`)."""
    ctx = runtime.context
    kn, lang = ctx.knowledge, ctx.lang
    invalid, sub_type = state["invalid"], state["sub_type"]
    key = invalid["field"]
    again = state.get("attempts", {}).get(key, 0) >= 2  # the second re-ask is worded otherwise
    reason = prompts.reason_text(kn, sub_type, invalid, lang, again=again)
    spec = ctx.knowledge_base.question(sub_type, key)
    ask = prompts.question_for(kn, spec, state, key, lang, reason=reason)
    reply = interrupt(waiting(kn, state, [*state.get("outbox", []), ask], "RE_QUESTION", key))
    return await settle_answer(state, reply, key, ctx)


async def write_summary(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the summary in the sub-type's K4 format with its K3 information (in LLM mode
    with the model's account in brief, checked by the rules)."""
    ctx = runtime.context
    narrative = None
    if ctx.llm is not None:
        # Imported in LLM mode only: the openai package costs half a second of a start-up.
        from graphs.legal.llm_summary import narrate

        narrative = (await narrate(ctx, dict(state))).sentences
    summary = build_summary(
        ctx.knowledge_base, dict(state), ctx.lang, today=ctx.now.date(), narrative=narrative
    )
    outbox = [
        *state.get("outbox", []),
        prompts.say(ctx.knowledge, ctx.lang, "summary_intro"),
        prompts.message(summary["text"]),
    ]
    return {"summary": summary, "outbox": outbox}


async def close_intake(state: LegalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Close the intake; `/new` starts another."""
    ctx = runtime.context
    return {
        "status": "completed",
        "outbox": [*state.get("outbox", []), prompts.say(ctx.knowledge, ctx.lang, "completed")],
    }
