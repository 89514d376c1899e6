"""After the summary: corrections and additions update it, and questions still get answered.

The summary invites corrections ("틀린 곳이 있으면 알려 주세요"), so a finished intake keeps
listening: what a later message changes or adds is merged, the summary is written again and
marked amended, and staff see each change with its time.
"""

from __future__ import annotations

from typing import Any

from graphs.common.context import Context
from graphs.legal import prompts
from graphs.legal import story as told_story
from graphs.legal.nodes import converse, merge_facts, split_party
from graphs.legal.state import Message
from graphs.legal.summary import build_summary


async def amend(
    ctx: Context, values: dict[str, Any], text: str
) -> tuple[dict[str, Any], list[Message]] | None:
    """(state updates, replies) for a message to a finished intake; None when it neither
    changes nor adds anything nor asks anything."""
    kn, lang, sub_type = ctx.knowledge, ctx.lang, values.get("sub_type")

    if not sub_type or not text.strip():
        return None
    at = ctx.now.isoformat()
    ex = await ctx.brain.extract_facts(text, sub_type=sub_type, asked=None, now=ctx.now)
    before = dict(values.get("facts", {}))
    facts = dict(before)
    found = {k: v for k, v in ex.facts.items() if k in kn.k2.fields and k != "action_description"}
    found = split_party(kn, found, text, facts)
    corrections = list(values.get("corrections", []))
    changes = merge_facts(facts, found, corrections)
    added = [k for k in found if k not in before]
    details, new_details = told_story.with_details(kn, values.get("details", []), text)
    if not changes and not added and not new_details:
        talk = converse(kn, sub_type, text, lang, values)  # type: ignore[arg-type]
        if talk is None or not talk[1] or talk[1] == values.get("questions", []):
            return None  # only a question back is answered after the summary
        messages, questions = talk
        return {"questions": questions}, messages
    story = told_story.told(values.get("story", []), text, at=at, carries=True)
    facts["action_description"] = told_story.account(values.get("description", ""), story)
    amendments = [
        *values.get("amendments", []),
        *({"field": f, "old": old, "new": new, "at": at} for f, old, new in changes),
        *({"field": k, "old": None, "new": facts[k], "at": at} for k in added),
        *({"field": "detail", "old": None, "new": d["value"], "at": at} for d in new_details),
    ]
    updates: dict[str, Any] = {
        "facts": facts,
        "unknown": [k for k in values.get("unknown", []) if k not in found],
        "corrections": corrections,
        "amendments": amendments,
        "provenance": told_story.noted(
            values.get("provenance", {}),
            [f for f, _, _ in changes] + added,
            quote=text,
            at=at,
            confirmed=False,
        ),
        "details": details,
        "story": story,
    }
    summary = build_summary(ctx.knowledge_base, {**values, **updates}, lang, today=ctx.now.date())
    updates["summary"] = summary
    return updates, [prompts.say(kn, lang, "amended"), prompts.message(summary["text"])]
