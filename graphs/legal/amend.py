"""After the summary: a finished intake keeps listening, and changes only what is confirmed.

The summary invites corrections ("틀린 곳이 있으면 알려 주세요"). A later message is read for
corrections of recorded fields under the same rules as during the intake
(graphs/legal/changes.py): a correction — the recorded value taken back, or the field named by
its own cue — and a field still missing given by its cue are shown old → new with yes / keep
buttons and applied only on yes; several in one message are confirmed together. Anything else
changes no field:
- a question back is answered from K3 where it can be and listed for the lawyer;
- a value that differs from a recorded one without correcting it, a correction that could not
  be read, or more of the story is kept as an addendum for the lawyer, in the person's words
  (a wish, "처벌도 원해요", is also added beside what the person wanted before);
- another matter (the classifier is sure of another case type) is kept as an addendum too, and
  a new intake is offered with a button.
Noise (a bare "ㅋㅋ", "?") changes nothing and is not kept.
"""

from __future__ import annotations

from typing import Any

from graphs.common.context import Context
from graphs.common.text import is_meaningless
from graphs.legal import memo as legal_memo
from graphs.legal import prompts, wants
from graphs.legal import story as told_story
from graphs.legal.changes import (
    bare_number_corrections,
    beside_paired,
    change,
    field_cues,
    kept_as_said,
    paired_corrections,
    removals_kept,
    removed_options,
    sort_facts,
    unnamed_choices,
)
from graphs.legal.labelled import labelled_fixes
from graphs.legal.nodes import (
    asked_along,
    converse,
    item_fixes,
    memo_corrections,
    merge_facts,
    name_fixes,
    read_context,
    split_party,
    suggestions,
    typed_verdict,
)
from graphs.legal.state import Message
from graphs.legal.summary import build_summary, still_true
from graphs.legal.years import story_years

MAX_ADDENDUM = 2000  # characters of one addendum kept (a whole message as people write them)
MAX_ADDENDA = 30  # addenda kept per intake (the oldest are dropped past it)
NEW_MATTER_CONFIDENCE = 0.6  # how sure the classifier must be that a message is another matter
# Kinds whose value in free text is placed by the field's own words (an option, yes / no).
_WORDED_KINDS = frozenset({"choice", "multi_choice", "yesno"})
NEW_INTAKE_BUTTON = "cmd:restart"  # the /new confirmation's "start a new intake" button


async def amend(
    ctx: Context, values: dict[str, Any], text: str = "", data: str = ""
) -> tuple[dict[str, Any], list[Message]] | None:
    """(state updates, replies) for a message (or the yes / keep press `data`) to a finished
    intake; None when it asks, changes and adds nothing (noise)."""
    kn, lang, sub_type = ctx.knowledge, ctx.lang, values.get("sub_type")
    if not sub_type:
        return None
    at = ctx.now.isoformat()
    if data:
        return await _settle(ctx, values, data, at)
    if not text.strip() or is_meaningless(text):
        return None
    verdict = typed_verdict(kn, text, lang) if values.get("proposed") else None
    if verdict is not None:  # "네" typed to the changes shown counts as pressing yes
        return await _settle(ctx, values, "a:changes:confirm" if verdict else "a:changes:deny", at)
    context = read_context(kn, values, None, lang, finished=True)
    ex = await ctx.brain.read(text, sub_type=sub_type, asked=None, now=ctx.now, context=context)
    facts = dict(values.get("facts", {}))
    memo_before = values.get("memo", [])
    found = {k: v for k, v in ex.facts.items() if k in kn.k2.fields and k != "action_description"}
    items = legal_memo.merged(
        legal_memo.message_items(kn, text, at=at, now=ctx.now, reading=ex, sub_type=sub_type),
        ex.items,
        at=at,
        text=text,
    )
    items = story_years(items, values.get("memo", []), now=ctx.now)
    memo_fixes, items = memo_corrections(kn, values.get("memo", []), ex, items, text)
    found = legal_memo.checked_keys(kn, sub_type, found, items, cued=ex.cued, placed=ex.placed)
    found = split_party(kn, found, text, facts)
    kinds = {k: kn.k2.field(sub_type, k).kind for k in {*found, *facts} if k in kn.k2.fields}
    found, removing = removed_options(kn, facts, found, text)
    found = unnamed_choices(kn, sub_type, facts, found, text)
    read = sort_facts(facts, found, ex, kinds, text=text)
    read.proposed += removing
    memo = legal_memo.added(
        values.get("memo", []), items, restating=bool(memo_fixes) or ex.correction
    )
    told = {"memo": memo} if memo != values.get("memo", []) else {}
    # a pair of values ("not 2026-09-20 but 2025-06-03") says which recorded value changes
    paired = paired_corrections(facts, kinds, text, now=ctx.now, memo=values.get("memo", []))
    read.settle_pairs(paired)
    proposed = [*paired, *read.proposed]
    named = {p["field"] for p in proposed}
    proposed += [p for p in bare_number_corrections(facts, kinds, text) if p["field"] not in named]
    named |= {p["field"] for p in proposed}
    proposed += [p for p in name_fixes(kn, sub_type, facts, text) if p["field"] not in named]
    named |= {p["field"] for p in proposed}
    # "혈중알코올농도는 0.081이에요", "경찰 신고 예 아니고 아니요": a field's label and its value
    proposed += labelled_fixes(kn, sub_type, facts, text, now=ctx.now, named=named)
    # a correction or a refinement only a model read in context ("상대방 수사관 아니고
    # 김민수요"): shown old → new like any other, never applied before the yes
    proposed += suggestions(kn, ex, facts, named=named, approx=values.get("approx", []))
    named |= {p["field"] for p in proposed}
    for key, value in read.new.items():
        # A field still missing is filled only by a value said of it ("보증금은 1억이에요"):
        # a bare "3.14" or "어제요" after the summary dates nothing.
        if key in ex.cued or kinds.get(key) in _WORDED_KINDS:
            proposed.append(change(key, facts.get(key), value))
    # A question asked beside what the message tells ("... 경찰에 사기로 신고하면 안돼요?") is
    # listed for the lawyer whatever else the message does.
    _, asked = asked_along(kn, sub_type, ex, lang, values.get("questions", []), whole=True)
    listed = {"questions": asked} if asked != values.get("questions", []) else {}
    proposed += item_fixes(kn, memo, ex, ctx.now, lang)
    proposed += [c for c in memo_fixes if c["field"] not in {p["field"] for p in proposed}]
    fixed = legal_memo.without_fixed(items, proposed, values.get("memo", []))
    if fixed != items:  # the new value of an item's change is no item of its own
        memo = legal_memo.added(values.get("memo", []), fixed, restating=True)
        told = {"memo": memo} if memo != values.get("memo", []) else {}
    proposed = kept_as_said(proposed, text, now=ctx.now)  # "80만원 맞아요": no change of it
    proposed = removals_kept(kn, proposed, text)  # "카톡은 지워주세요": the others kept
    proposed = beside_paired(proposed, paired, memo=memo, cues=field_cues(kn, sub_type, facts))
    if proposed:
        # Shown to confirm; the message itself is kept for the lawyer whatever the answer.
        proposed = [p | {"quote": text[:160]} for p in proposed]
        updates = {"proposed": proposed, "addenda": _added(values, text, at), **listed, **told}
        return updates, [
            prompts.confirm_changes(kn, sub_type, proposed, lang, told.get("memo", memo))
        ]
    talk = converse(kn, sub_type, text, lang, values, ex)  # type: ignore[arg-type]
    answered: list[Message] = []
    if talk is not None:
        messages, questions = talk
        if not questions or questions == values.get("questions", []):
            return None  # thanks, small talk: nothing to keep
        if not told and wants.with_wishes(kn, facts, text) is None:
            # answered where K3 can, listed, and kept for the lawyer
            return {"questions": questions, "addenda": _added(values, text, at)}, messages
        # a question beside a wish or new items ("what i want: divorce, custody … and can i
        # take the kids to the US after?": legal_set12 B4 kept neither): both kept
        answered, listed = messages, {"questions": questions}
    # Nothing to change: kept for the lawyer as the person said it.
    updates: dict[str, Any] = {"addenda": _added(values, text, at), **listed}
    key = "addendum_unread_correction" if ex.correction else "addendum_kept"
    messages: list[Message] = [prompts.say(kn, lang, key)]
    # a model that read the message in context has said whether it is another matter: no
    # classification call for it; the rules' brain classifies
    # a danger told after the summary is this person's, whatever its matter (legal_set10 X3: a
    # man coming over tonight was sent to "a new intake" after the safety reply)
    another = not ctx.danger and (
        ex.new_matter if ex.new_matter is not None else await _another_matter(ctx, sub_type, text)
    )
    if not another:  # another matter's amounts and dates are not this case's
        updates.update(told)
        ids = {i["id"] for i in memo_before}
        fresh = [i for i in told.get("memo", []) if i["id"] not in ids]
        briefs = [b for b in (legal_memo.item_brief(kn, i, lang) for i in fresh) if b]
        if briefs and not ex.correction:  # named, so the person sees it was kept
            messages = [prompts.say(kn, lang, "addendum_items", items=", ".join(briefs[:6]))]
    wished = None if another else wants.with_wishes(kn, facts, text)
    if wished is not None:  # "처벌도 원해요": beside what was wanted before, changing nothing
        updates["facts"] = {**facts, wants.FIELD: wished}
        updates["provenance"] = told_story.noted(
            values.get("provenance", {}), [wants.FIELD], quote=text, at=at, confirmed=False
        )
    if another:
        messages.append(
            prompts.message(
                kn.message("addendum_new_matter", lang),
                [{"label": kn.message("btn_new_intake", lang), "data": NEW_INTAKE_BUTTON}],
            )
        )
    summary = await _rebuilt(ctx, values, updates)
    updates["summary"] = summary
    return updates, [*answered, *messages]


async def _settle(
    ctx: Context, values: dict[str, Any], data: str, at: str
) -> tuple[dict[str, Any], list[Message]] | None:
    """The person's yes or keep for the changes shown: applied (and the summary rewritten) or
    dropped, their message staying among the additions."""
    kn, lang = ctx.knowledge, ctx.lang
    proposed = values.get("proposed") or []
    if not proposed or data not in ("a:changes:confirm", "a:changes:deny"):
        return None
    if data == "a:changes:deny":  # refused: no fact, and the message stays in the account
        return {"proposed": []}, [prompts.say(kn, lang, "changes_kept")]
    facts = dict(values.get("facts", {}))
    corrections = list(values.get("corrections", []))
    before = dict(facts)
    quote = proposed[0].get("quote", "")
    items = [p for p in proposed if legal_memo.is_item(p["field"])]
    proposed = [p for p in proposed if not legal_memo.is_item(p["field"])]
    changes = merge_facts(facts, {p["field"]: p["new"] for p in proposed}, corrections, shown=True)
    added = [p["field"] for p in proposed if before.get(p["field"]) is None]
    story = told_story.told(values.get("story", []), quote, at=at, carries=True)
    facts["action_description"] = told_story.account(values.get("description", ""), story)
    updates: dict[str, Any] = {
        "proposed": [],
        "facts": facts,
        "unknown": [k for k in values.get("unknown", []) if k not in added],
        "corrections": corrections,
        "amendments": [
            *values.get("amendments", []),
            *({"field": f, "old": old, "new": new, "at": at} for f, old, new in changes),
            *({"field": k, "old": None, "new": facts[k], "at": at} for k in added),
        ],
        "provenance": told_story.noted(
            values.get("provenance", {}),
            [p["field"] for p in proposed],
            quote=quote,
            at=at,
            confirmed=True,
        ),
        "story": story,
    }
    if items:  # memo items corrected: the new value, confirmed, the old kept beside it
        updates["memo"] = legal_memo.with_fixes(values.get("memo", []), items)
        updates["amendments"] += [
            {"field": p["field"], "old": p["old"], "new": p["new"], "at": at} for p in items
        ]
    summary = await _rebuilt(ctx, values, updates)
    updates["summary"] = summary
    return updates, [prompts.say(kn, lang, "amended"), prompts.message(summary["text"])]


async def _rebuilt(ctx: Context, values: dict[str, Any], updates: dict[str, Any]) -> dict[str, Any]:
    """The summary written again after the summary: the model's checked account keeps every
    sentence whose facts and memo items did not change (it is never silently lost), and in LLM
    mode is written again, checked as the first was, when a change touched any of them."""
    after = {**values, **updates}
    written = ((values.get("summary") or {}).get("structured") or {}).get("narrative")
    narrative = still_true(written, values, after)
    if ctx.llm is not None and written and len(narrative or []) < len(written):
        # Imported in LLM mode only, as in write_summary.
        from graphs.legal.llm_summary import narrate

        narrative = (await narrate(ctx, after)).sentences or narrative
    return build_summary(
        ctx.knowledge_base, after, ctx.lang, today=ctx.now.date(), narrative=narrative
    )


def _added(values: dict[str, Any], text: str, at: str) -> list[dict[str, Any]]:
    addenda = [*values.get("addenda", []), {"text": text.strip()[:MAX_ADDENDUM], "at": at}]
    return addenda[-MAX_ADDENDA:]


async def _another_matter(ctx: Context, sub_type: str, text: str) -> bool:
    """Whether the classifier is sure the message tells of another kind of matter."""
    result = await ctx.brain.classify_case(text)
    return (
        result.top is not None
        and result.confident
        and result.confidence >= NEW_MATTER_CONFIDENCE
        and result.top.sub_type != sub_type
    )
