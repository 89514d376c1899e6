"""Changing the case type mid-intake.

A person who says the type being taken is wrong ("can you fix the category", "세금 문제가 아니라
그분이 저를 스토킹하는 문제에요", legal_set17 S1, R4, R6) is offered the types their words point to,
the other types, and keeping it; a pick changes the type. What they told stays: the memo, the
account and the questions back whole, the facts of every field the new type also asks. The old
type's other fields are dropped from the facts (their words stay in the memo), and the change is
listed for the lawyer.

Where a message goes: `validate_answer` (nodes) asks `said_wrong` of each typed answer and puts
the `offer` in state; `ask_next_fact` shows `question` before anything else and hands the reply
to `settle`.
"""

from __future__ import annotations

from typing import Any

from graphs.common.brain import Brain
from graphs.common.context import Context
from graphs.common.intents import declines_types, denials, says_wrong_type
from graphs.common.reading import Reading
from graphs.legal import memo as legal_memo
from graphs.legal import prompts
from graphs.legal.fields import next_field
from graphs.legal.state import LegalState, Message
from knowledge.loader import Knowledge

PREFIX = "rt:"
KEEP = "rt:keep"
BROWSE = "rt:all"
SUB = "rt:st:"
MAIN = "rt:ct:"
MAX_OFFERED = 3
# Fields every type keeps whatever it asks: the account the person gave.
ALWAYS_KEPT = frozenset({"action_description"})


def said_wrong(kn: Knowledge, brain: Brain, state: LegalState, text: str, ex: Reading) -> bool:
    """Whether the message says the case type being taken is wrong: in words of its own, by
    the model reading it in context, or by denying the type ("not a rent thing", "명예훼손이
    아니라 성희롱이랑 해고 문제에요"): the words denied are the type's own cues, made a kind of
    matter, and the rest of the message does not point to the same type. After the person chose to keep
    the type, only words of their own offer the change again."""
    sub_type = state["sub_type"]
    if says_wrong_type(text, kn):
        return True
    if state.get("type_kept") == sub_type:
        return False
    if ex.wrong_type:
        return True
    denied, rest = denials(text, kn)
    named = [
        (d, brain.cues(d.what)) for d in denied if d.kind_of_matter
    ]  # the words denied, and the types they name
    if any(d.instead_said and said.top and said.top.sub_type == sub_type for d, said in named):
        return True  # "명예훼손이 아니라 성희롱이랑 해고 문제에요": named, and told otherwise
    if not any(any(c.sub_type == sub_type for c in said.candidates) for _, said in named):
        return False
    top = brain.cues(rest).top  # what the message says it is instead: not the same type
    return top is None or top.sub_type != sub_type


async def offer(kn: Knowledge, ctx: Context, state: LegalState, text: str) -> dict[str, Any]:
    """The change to offer: the types the message points to (the person's new words first,
    then the whole account's cues), never the one being taken."""
    current = state["sub_type"]
    said = await ctx.brain.classify_case(text)
    codes = [c.sub_type for c in said.candidates]
    codes += [
        c.sub_type for c in ctx.brain.cues(f"{state.get('description', '')}\n{text}").candidates
    ]
    offered = [c for c in dict.fromkeys(codes) if c not in (current, kn.k1.free_form)]
    return {
        "candidates": offered[:MAX_OFFERED],
        "browse": None,
        "quote": text[:160],
        "at": ctx.now.isoformat(),
    }


def question(kn: Knowledge, state: LegalState, lang: str) -> Message:
    """The offer as a message with buttons: the types offered (or a main type's sub-types, or
    the main types), the other types, and keeping the type being taken."""
    current = state["sub_type"]
    shown = state["retype"]
    _, current_label = prompts.case_labels(kn, current, lang)
    browse = shown.get("browse")
    choices: list[dict[str, str]] = []
    if browse == "*":
        for ct in kn.k1.case_types:
            subs = [s for s in ct.sub_types if s.code != current]
            if not subs:
                continue
            data = f"{SUB}{subs[0].code}" if len(subs) == 1 else f"{MAIN}{ct.code}"
            choices.append({"label": ct.label.get(lang), "data": data})
    elif browse:
        main = next(ct for ct in kn.k1.case_types if ct.code == browse)
        choices = [
            {"label": s.label.get(lang), "data": f"{SUB}{s.code}"}
            for s in main.sub_types
            if s.code != current
        ]
    else:
        for code in shown.get("candidates", []):
            main_label, sub_label = prompts.case_labels(kn, code, lang)
            choices.append({"label": f"{main_label} · {sub_label}", "data": f"{SUB}{code}"})
    if browse != "*":
        choices.append({"label": kn.message("btn_retype_browse", lang), "data": BROWSE})
    choices.append(
        {"label": kn.message("btn_retype_keep", lang, current=current_label), "data": KEEP}
    )
    return prompts.message(kn.message("retype_offer", lang, current=current_label), choices)


def settle(
    kn: Knowledge, ctx: Context, state: LegalState, reply: dict[str, Any]
) -> dict[str, Any] | None:
    """The updates of the reply to the offer; None when it is no answer to it (a message read
    as an answer to the question that was asked before, the offer withdrawn)."""
    current, lang = state["sub_type"], ctx.lang
    shown = state["retype"]
    data = reply.get("data", "") if reply.get("kind") == "choice" else ""
    text = reply.get("text", "") if reply.get("kind") == "text" else ""
    known = {sub.code for _, sub in kn.k1.all_sub_types()}
    _, current_label = prompts.case_labels(kn, current, lang)
    kept = {
        "retype": None,
        "type_kept": current,
        "outbox": [prompts.say(kn, lang, "retype_kept", current=current_label)],
    }
    if data == KEEP or (data.startswith(SUB) and data[len(SUB) :] == current):
        return kept
    if data == BROWSE:
        return {"retype": {**shown, "browse": "*"}, "outbox": []}
    if data.startswith(MAIN) and data[len(MAIN) :] in {ct.code for ct in kn.k1.case_types}:
        return {"retype": {**shown, "browse": data[len(MAIN) :]}, "outbox": []}
    if data.startswith(SUB) and data[len(SUB) :] in known:
        return retyped(kn, ctx, state, data[len(SUB) :])
    if text and declines_types(text, kn):  # "none of these": the other types, then free form
        if shown.get("browse") == "*":
            return retyped(kn, ctx, state, kn.k1.free_form)
        return {"retype": {**shown, "browse": "*"}, "outbox": []}
    if text:  # a type typed by name ("스토킹이요"): taken when the words are clear
        said = ctx.brain.cues(text)
        if said.confident and said.top is not None and said.top.sub_type != current:
            return retyped(kn, ctx, state, said.top.sub_type)
    return None


def retyped(kn: Knowledge, ctx: Context, state: LegalState, new: str) -> dict[str, Any]:
    """The state once the type is `new`: the facts of the fields it asks kept, the others
    dropped (the memo keeps their words), the change listed, its first question next."""
    old, lang = state["sub_type"], ctx.lang
    keep = {req.key for req in kn.k2.sub_types[new].required_fields()} | ALWAYS_KEPT

    def kept(mapping: dict[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (mapping or {}).items() if k in keep}

    facts = kept(state.get("facts"))
    unknown = [k for k in state.get("unknown", []) if k in keep]
    pending = state.get("pending")
    _, old_label = prompts.case_labels(kn, old, lang)
    _, new_label = prompts.case_labels(kn, new, lang)
    shown = state.get("retype") or {}
    outbox = [prompts.say(kn, lang, "retyped", old=old_label, new=new_label)]
    if kn.k1.sub_type(new)[1].free_form:
        outbox.append(prompts.say(kn, lang, "free_form_intake"))
    return {
        "retype": None,
        "type_kept": None,
        "sub_type": new,
        "case_type": kn.k1.sub_type(new)[0].code,
        "confidence": 1.0,
        "facts": facts,
        "unknown": unknown,
        "attempts": kept(state.get("attempts")),
        "provenance": kept(state.get("provenance")),
        "unclear": kept(state.get("unclear")),
        "tried": kept(state.get("tried")),
        "approx": [k for k in state.get("approx", []) if k in keep],
        "picked": [],
        "pending": pending if pending and pending.get("field") in keep else None,
        "proposed": [
            p
            for p in state.get("proposed", [])
            if p["field"] in keep or legal_memo.is_item(p["field"])
        ],
        "corrections": [c for c in state.get("corrections", []) if c["field"] in keep],
        "invalid": None,
        "type_changes": [
            *state.get("type_changes", []),
            {"old": old, "new": new, "quote": shown.get("quote", ""), "at": ctx.now.isoformat()},
        ],
        "asking": next_field(kn.k2, new, facts, unknown),
        "outbox": outbox,
    }
