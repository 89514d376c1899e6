"""State of the legal intake graph: small, JSON-able, ids and facts only."""

from __future__ import annotations

from typing import Any, TypedDict


class Message(TypedDict):
    """One reply to the person: text and optional buttons."""

    text: str
    choices: list[dict[str, str]]  # [{"label": ..., "data": ...}]


class UserInput(TypedDict, total=False):
    """What the person sent, as the engine hands it to the graph."""

    id: str  # unique id of the inbound message (Telegram update id), to recognise a replay
    kind: str  # text | choice | file
    text: str
    danger: bool  # it raised a safety alert: read for what it tells, never as the answer
    danger_again: bool  # the alerts it raised were all of a danger answered before, told again
    data: str  # button data for a choice
    file: dict[str, Any]  # kind, file_id, file_unique_id, file_name, mime_type, caption


class LegalState(TypedDict, total=False):
    """Checkpointed state of one legal intake."""

    greeted: bool  # greeting and privacy notice shown
    description: str  # the person's own account of the problem (capped)
    danger_case: str | None  # the sub-type a safety rule the description fired tells of
    danger_at: str  # when a message last raised a safety alert (ISO time)
    case_type: str | None  # CIVIL | CRIMINAL | FAMILY | ADMINISTRATIVE | OTHER
    sub_type: str | None  # K1 sub-type code, e.g. LOAN
    confidence: float  # classifier confidence (1.0 when the person picked the type)
    candidates: list[str] | None  # sub-types offered as buttons; None = classify again
    browse: str | None  # main type whose sub-types are being shown as buttons
    declined: int  # times the person said none of the offered types fits (2 -> free-form)
    declined_types: list[str]  # the sub-types offered when they said none fits: not again
    picker_rounds: int  # fuller descriptions typed at the picker that still did not settle it
    facts: dict[str, Any]  # canonical key -> normalised value
    unknown: list[str]  # required fields recorded as unknown
    attempts: dict[str, int]  # failed answers per field (3 -> unknown)
    asking: str | None  # field being asked now
    picked: list[str]  # options pressed so far for the multi-choice field being asked
    answer: UserInput | None  # latest input, waiting to be validated
    invalid: dict[str, Any] | None  # {"field", "reason", "value"} of the last invalid answer
    emotions: list[dict[str, str]]  # feelings expressed, kept apart from facts
    corrections: list[dict[str, Any]]  # {"field", "old", "new"}: facts the person changed
    evidence_files: list[dict[str, Any]]  # metadata of files sent as evidence
    outbox: list[Message]  # replies produced in the current turn
    provenance: dict[str, dict[str, Any]]  # field -> {"quote", "at", "confirmed"}: its source
    approx: list[str]  # fields whose value the person gave as approximate ("한 2주 전쯤")
    details: list[dict[str, str]]  # {"kind", "value", "quote"}: names, witnesses, injuries, …
    story: list[dict[str, str]]  # {"text", "at"}: later messages that added to the account
    # what the person asked back, for the lawyer: {"text", "answered" (by the lawyer: false),
    # "general_info" (the bot gave general information from K3)}
    questions: list[dict[str, Any]]
    unclear: dict[str, str]  # field -> the person's own words it could not be read from
    tried: dict[str, str]  # field -> the last answer that could not be read
    pending: dict[str, Any] | None  # {"field", "value", "quote"}: a reading awaiting a yes
    amendments: list[dict[str, Any]]  # {"field", "old", "new", "at"} after the summary
    # Corrections read from free text, waiting for the person's yes: {"field", "old", "new",
    # "quote"} (graphs/legal/changes.py); applied only when confirmed.
    proposed: list[dict[str, Any]]
    # Values said for a recorded field that do not correct it (another event's date, an offer
    # beside the loss): {"field", "value", "recorded", "quote", "at"}, kept for the lawyer.
    asides: list[dict[str, Any]]
    # What the person added after the summary that changes no field: {"text", "at"}.
    addenda: list[dict[str, Any]]
    # The lawyer's memo (graphs/legal/memo.py): chronology, money, parties, steps and evidence
    # items, each {"id", "section", …, "quote", "at", "confirmed"}; key fields point at them.
    memo: list[dict[str, Any]]
    # A change of case type offered, waiting for a pick (graphs/legal/retype.py):
    # {"candidates", "browse", "quote", "at"}; the type the person chose to keep; the changes.
    retype: dict[str, Any] | None
    type_kept: str | None
    type_changes: list[dict[str, Any]]  # {"old", "new", "quote", "at"}
    summary: dict[str, Any] | None  # {"text", "structured"} once written
    status: str  # open | completed
    last_input_id: str | None  # id of the last input the graph consumed
