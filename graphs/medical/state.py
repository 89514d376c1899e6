"""State of the medical assistant graph (one thread per chat, checkpointed like the legal one).

What lasts between messages: the profile, the answer cache, the questions asked, what is
pending (a reading to confirm, an item to reconfirm) and the question deferred meanwhile.
Everything else is one run's scratch, reset by its first node and cleared by its last.
"""

from __future__ import annotations

from typing import Any, TypedDict


class MedicalState(TypedDict, total=False):
    # --- kept between messages ---
    profile: dict[str, Any]  # see graphs/medical/memory.py
    cache: list[dict[str, Any]]  # verified answers: question, vector, used keys, fingerprint
    asked: list[dict[str, Any]]  # every question: text, sources, uncertainty, cached, at
    pending: dict[str, Any] | None  # {"kind": "confirm" | "reconfirm", "key": item key}
    deferred: str | None  # the question that waits for a reconfirmation's answer
    last_seen: str | None  # ISO time of the person's previous message
    last_input_id: str | None  # the input the thread consumed last (replay guard)
    last_entries: list[str]  # the passage ids the last answer drew on (a rejection drops them)
    excluded: list[str]  # passage ids rejected, kept out while the question stays the same
    # --- one run ---
    message: dict[str, Any]  # the input: {"id", "kind": text | choice, "text", "data"}
    question: str  # the text answered (the message, or the deferred question)
    notes: list[str]  # lines said before the answer ("기록해 둘게요: …")
    confirm: list[dict[str, Any]] | None  # buttons asking about an unsure reading
    concepts: list[str]  # canonical medical concepts the question names (or the one before)
    focus: list[str]  # what the question asks about beyond them: exercise, diet (topics)
    tags: list[str]  # the corpus concept tags of both (a medicine's class included)
    context_tags: list[str]  # the tags of the person's current conditions (and age group)
    intent: str  # greeting | clarify | simple | moderate | complex
    clarify: str | None  # what a "clarify" turn asks: which medicine, or which measure
    k: int
    threshold: float
    query: str  # the query sent to retrieval (rewritten on a retry)
    passages: list[dict[str, Any]]
    retrievals: int
    consistency: float
    uncertainty: float
    quality: float
    judge: dict[str, Any] | None  # LLM mode: the model's {"score", "reasons"} of the answer
    previous_quality: float | None
    answer: dict[str, Any] | None  # {"lines", "sources", "used_keys", "answered"}
    cached: bool
    outbox: list[dict[str, Any]]  # the replies of this run
    extraction: dict[str, Any] | None  # the slots the message gave (SlotExtraction as data)
    reconfirm: str | None  # the key of a stale item to ask about before answering
    qvec: bytes | None  # the question's vector (float16), for the cache
    stalled: bool  # the last retrieval found nothing new
    context_profile: list[str]  # the profile lines within the context budget
    person: dict[str, Any]  # whom the question is about: sex, age group, pregnancy, held tags
    asked_about: list[str]  # what the question asks about: its tags, the populations it names
    warnings: list[str]  # the ids of the interactions it touches (the answer leads with them)
    led: dict[str, float]  # passage id → the relevance an entry led to keeps (leads, warnings)
