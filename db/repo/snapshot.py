"""What a session's case rows should hold, as one typed value: the `CaseSnapshot`.

Both ways of writing a case go through it: a turn writes the changes between the snapshots
before and after it, a repair the changes between what is stored and the snapshot it was given
(db/repo/cases.py). The graph hands plain JSON data (graphs/legal/records.py `case_snapshot`),
read here once by `CaseSnapshot.of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from db.repo.tx import dumps


@dataclass(frozen=True)
class Fact:
    """One fact of a case with its provenance, as its `CaseFact` row holds it."""

    value: Any  # the normalised value (JSON data); None when recorded unknown
    unknown: bool = False  # the person could not say: recorded as unknown
    quote: str | None = None  # the person's own words the value was read from
    said_at: str | None = None  # ISO time of the message
    confirmed: bool | None = None  # the person confirmed the reading (a button or a yes)

    def row(self, session_id: str, key: str) -> dict[str, Any]:
        """The `CaseFact` row of this fact (without its update time)."""
        return {
            "session_id": session_id,
            "key": key,
            "value_json": dumps(self.value),
            "status": "unknown" if self.unknown else "answered",
            "quote": self.quote,
            "said_at": self.said_at,
            "confirmed": self.confirmed,
        }


@dataclass(frozen=True)
class Party:
    """The counterparty of a case (a `CaseParty` row, role "counterparty")."""

    name: str | None = None
    party_type: str | None = None

    def __bool__(self) -> bool:
        """A party is recorded once it has a name or a type."""
        return bool(self.name or self.party_type)


@dataclass(frozen=True)
class EvidenceFile:
    """A file the person sent as evidence (a `CaseEvidence` row)."""

    kind: str  # photo | document
    file_id: str
    file_unique_id: str  # the same file sent twice is one row
    received_at: datetime
    file_name: str | None = None
    mime_type: str | None = None
    caption: str | None = None

    def row(self, session_id: str) -> dict[str, Any]:
        return {
            "session_id": session_id,
            "kind": self.kind,
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_name": self.file_name,
            "mime_type": self.mime_type,
            "caption": self.caption,
            "received_at": self.received_at,
        }


@dataclass(frozen=True)
class Summary:
    """The summary handed to staff: its text (K4 format) and its structured data."""

    text: str
    structured: dict[str, Any]

    def values(self) -> dict[str, Any]:
        """The `CaseSummary` columns it writes (compared in this form: JSON as stored)."""
        return {"summary_text": self.text, "structured_json": dumps(self.structured)}


@dataclass(frozen=True)
class CaseSnapshot:
    """What a session's case rows should be: the session row's standing, the case, its facts
    with their provenance, what is still missing, the counterparty, the evidence files and the
    summary. `CaseSnapshot()` is a session as `create_session` opens it."""

    state: str = "INIT"  # the graph node the intake waits in
    status: str = "open"  # open | completed (| cancelled, never set from a snapshot)
    completion_rate: float = 0.0  # answered required fields / required fields
    case_type: str | None = None
    sub_type: str | None = None
    confidence: float = 0.0
    description: str = ""
    emotions: tuple[Any, ...] = ()  # feelings expressed, kept apart from the facts
    facts: dict[str, Fact] = field(default_factory=dict)  # by canonical key
    missing: tuple[tuple[str, str], ...] = ()  # (key, reason: not_answered | unknown), in order
    counterparty: Party = Party()
    evidence: tuple[EvidenceFile, ...] = ()
    summary: Summary | None = None

    @classmethod
    def of(cls, plain: dict[str, Any]) -> CaseSnapshot:
        """From the graph's plain snapshot (graphs/legal/records.py `case_snapshot`)."""
        unknown = set(plain.get("unknown") or [])
        detail = plain.get("facts_detail") or {}
        party = plain.get("counterparty") or {}
        summary = plain.get("summary")
        return cls(
            state=plain["state"],
            status=plain["status"],
            completion_rate=plain["completion_rate"],
            case_type=plain.get("case_type"),
            sub_type=plain.get("sub_type"),
            confidence=plain.get("confidence") or 0.0,
            description=plain.get("description") or "",
            emotions=tuple(plain.get("emotions") or ()),
            facts={
                key: Fact(
                    value=value,
                    unknown=key in unknown,
                    quote=(detail.get(key) or {}).get("quote"),
                    said_at=(detail.get(key) or {}).get("at"),
                    confirmed=(detail.get(key) or {}).get("confirmed"),
                )
                for key, value in (plain.get("facts") or {}).items()
            },
            missing=tuple(
                (key, "unknown" if key in unknown else "not_answered")
                for key in plain.get("missing") or []
            ),
            counterparty=Party(name=party.get("name"), party_type=party.get("party_type")),
            evidence=tuple(
                EvidenceFile(
                    kind=item["kind"],
                    file_id=item["file_id"],
                    file_unique_id=item["file_unique_id"],
                    received_at=datetime.fromisoformat(item["at"]),
                    file_name=item.get("file_name"),
                    mime_type=item.get("mime_type"),
                    caption=item.get("caption"),
                )
                for item in plain.get("evidence_files") or []
            ),
            summary=Summary(summary["text"], summary["structured"]) if summary else None,
        )

    def master(self) -> dict[str, Any]:
        """The `CaseMaster` columns it writes (without the update time)."""
        return {
            "case_type": self.case_type,
            "sub_case_type": self.sub_type,
            "confidence": self.confidence,
            "description": self.description,
            "emotions_json": dumps(list(self.emotions)),
        }
