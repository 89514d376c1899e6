"""The whole story of an intake: where each fact came from, every message's details, the
person's questions and the words kept for staff when a reading was not possible.

Pure functions on plain state values; the nodes call them and return what changed.
"""

from __future__ import annotations

from typing import Any

from graphs.legal.details import story_details
from knowledge.loader import Knowledge

QUOTE_CHARS = 160  # of the person's words kept as a fact's source
# Of one later message kept in the story: all of a message as people write them (300 cut
# "Do I have to answer by Decemb", legal_set13 B2, B3: the person's words are the record).
STORY_TEXT_CHARS = 2000
STORY_MAX = 40  # later messages kept in the story
DESCRIPTION_MAX = 12000  # characters of 사건 경위 (first account, later details, corrections)
# A later message worth adding to the story: it carries details or facts, or is this long.
STORY_MIN_CHARS = 25


def noted(
    provenance: dict[str, Any],
    keys: list[str] | set[str],
    *,
    quote: str,
    at: str,
    confirmed: bool,
) -> dict[str, Any]:
    """Provenance with `keys` now coming from `quote` said `at` (confirmed or read)."""
    updated = dict(provenance)
    for key in keys:
        updated[key] = {"quote": quote.strip()[:QUOTE_CHARS], "at": at, "confirmed": confirmed}
    return updated


def confirmed(provenance: dict[str, Any], key: str) -> dict[str, Any]:
    """Provenance with `key` confirmed by the person."""
    if key not in provenance:
        return provenance
    return {**provenance, key: {**provenance[key], "confirmed": True}}


def with_details(
    kn: Knowledge, details: list[dict[str, str]], text: str
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(all details, the new ones) after reading `text` for names, witnesses, injuries, …"""
    seen = {(d["kind"], d["value"]) for d in details}
    new = []
    for detail in story_details(text, kn):
        if (detail.kind, detail.value) not in seen:
            seen.add((detail.kind, detail.value))
            new.append({"kind": detail.kind, "value": detail.value, "quote": detail.quote})
    return [*details, *new], new


def told(story: list[dict[str, str]], text: str, *, at: str, carries: bool) -> list[dict[str, str]]:
    """The story with a later message added when it carries something (details, facts, length)."""
    text = " ".join(text.split())
    if not text or (not carries and len(text) < STORY_MIN_CHARS):
        return story
    if any(item["text"] == text[:STORY_TEXT_CHARS] for item in story):
        return story
    return [*story, {"text": text[:STORY_TEXT_CHARS], "at": at}][-STORY_MAX:]


def account(description: str, story: list[dict[str, str]]) -> str:
    """사건 경위: the first account, then every later message that added to it (corrections
    included), in order."""
    lines = [description.strip()]
    lines += [f"· {item['text']}" for item in story]
    text = "\n".join(line for line in lines if line)
    return text[:DESCRIPTION_MAX]
