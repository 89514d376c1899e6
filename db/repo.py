"""Data access: keyword-only functions over the record tables. No graph or Telegram knowledge here."""

from __future__ import annotations

import asyncio
import functools
import json
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import BigInteger, Engine, bindparam, delete, func, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import (
    CaseEvidence,
    CaseFact,
    CaseMaster,
    CaseMissingField,
    CaseParty,
    CaseSummary,
    ChatOffer,
    ChatPreference,
    ChatSession,
    ChatTurn,
    InboxUpdate,
    MedicalProfile,
    MedicalQuestion,
    ProfileItem,
    SafetyAlert,
    StateTransition,
    utcnow,
)

# Tables whose rows belong to one session (all reference chatsession.id).
SESSION_TABLES = (
    CaseFact,
    CaseParty,
    CaseEvidence,
    CaseMissingField,
    CaseSummary,
    StateTransition,
    ChatTurn,
    CaseMaster,
)


T = TypeVar("T")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _insert(engine: AsyncEngine, table: Any) -> Any:
    """INSERT with the dialect's ON CONFLICT clauses (SQLite and PostgreSQL share their form)."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


_WRITE_LOCKS: weakref.WeakKeyDictionary[AsyncEngine, asyncio.Lock] = weakref.WeakKeyDictionary()
# SQLite only: a plain (sqlite3) engine on the same file, for the turn's read and write in one
# worker-thread call each (see `attach_sync_engine`).
_SYNC_ENGINES: weakref.WeakKeyDictionary[AsyncEngine, Engine] = weakref.WeakKeyDictionary()


def attach_sync_engine(engine: AsyncEngine, sync: Engine) -> None:
    """Give a SQLite records engine its plain twin for the hot path (db/engine.py does)."""
    _SYNC_ENGINES[engine] = sync


def plain_engine(engine: AsyncEngine) -> Engine | None:
    """The plain sqlite3 twin of a SQLite records engine (None for PostgreSQL)."""
    return _SYNC_ENGINES.get(engine)


def _write_lock(engine: AsyncEngine) -> asyncio.Lock:
    return _WRITE_LOCKS.setdefault(engine, asyncio.Lock())


@asynccontextmanager
async def writing(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    """A session for a write transaction; one writer at a time per process.

    SQLite has a single writer. A deferred transaction that reads and then writes fails at
    once with "database is locked" when another writer got there first (the busy timeout
    does not apply to that upgrade), so writers of this process queue here instead.
    """
    if engine.dialect.name != "sqlite":  # PostgreSQL takes many writers
        async with AsyncSession(engine) as db:
            yield db
        return
    async with _write_lock(engine), AsyncSession(engine) as db:
        yield db


# --- preferences ---------------------------------------------------------------------------


async def get_lang(*, engine: AsyncEngine, chat_id: int) -> str | None:
    """The chat's chosen language, or None when it never chose one."""
    async with AsyncSession(engine) as db:
        pref = await db.get(ChatPreference, chat_id)
        return pref.lang if pref else None


async def set_lang(*, engine: AsyncEngine, chat_id: int, lang: str, chosen: bool = False) -> None:
    """Remember the chat's language; `chosen` when the person picked it (/lang): it then stays
    whatever they write in."""
    values = {"lang": lang, **({"lang_chosen": True} if chosen else {})}
    async with writing(engine) as db:
        stmt = _insert(engine, ChatPreference).values(chat_id=chat_id, **values)
        await db.exec(stmt.on_conflict_do_update(index_elements=["chat_id"], set_=values))
        await db.commit()


async def set_domain(*, engine: AsyncEngine, chat_id: int, domain: str, lang: str) -> None:
    """Remember which domain (legal, medical) the chat's messages go to."""
    async with writing(engine) as db:
        stmt = _insert(engine, ChatPreference).values(chat_id=chat_id, lang=lang, domain=domain)
        await db.exec(
            stmt.on_conflict_do_update(index_elements=["chat_id"], set_={"domain": domain})
        )
        await db.commit()


# --- buttons offered ---------------------------------------------------------------------


async def get_offer(*, engine: AsyncEngine, chat_id: int) -> tuple[int | None, list[str]] | None:
    """(user id, callback data) of the buttons the chat was shown last, or None."""
    async with AsyncSession(engine) as db:
        offer = await db.get(ChatOffer, chat_id)
        return (offer.user_id, json.loads(offer.choices_json)) if offer else None


async def set_offer(
    *, engine: AsyncEngine, chat_id: int, user_id: int | None, choices: list[str]
) -> None:
    """Remember the buttons just shown to `user_id` in the chat (none: no press counts)."""
    async with writing(engine) as db:
        values = {"user_id": user_id, "choices_json": _dumps(choices), "offered_at": utcnow()}
        stmt = _insert(engine, ChatOffer).values(chat_id=chat_id, **values)
        await db.exec(stmt.on_conflict_do_update(index_elements=["chat_id"], set_=values))
        await db.commit()


# --- inbox ---------------------------------------------------------------------------------


class InboxEntry(NamedTuple):
    """One update to store. With `failure`, it is stored set aside: processed, with the
    reason, and without its payload (nothing the person wrote is kept for it)."""

    update_id: int
    chat_id: int | None
    payload: dict[str, Any]
    failure: str | None = None
    update_type: str | None = None


async def inbox_add_batch(
    *, engine: AsyncEngine, updates: list[InboxEntry | tuple[Any, ...]]
) -> set[int]:
    """Store a getUpdates batch in one transaction before it is confirmed; return the new ids.

    Each entry is an `InboxEntry` (a plain tuple in its order will do). Payloads are kept as
    ASCII JSON, so any text Telegram sends (a lone surrogate included) can be stored and read
    back as it was.
    """
    if not updates:
        return set()
    entries = [InboxEntry(*entry) for entry in updates]
    ids = [entry.update_id for entry in entries]
    insert = _insert(engine, InboxUpdate)

    def store(conn: Any) -> set[int]:
        query = select(InboxUpdate.update_id).where(col(InboxUpdate.update_id).in_(ids))
        known = set(conn.execute(query).scalars())
        now = utcnow()
        new = {}
        for entry in entries:
            if entry.update_id in known or entry.update_id in new:
                continue
            kept = {} if entry.failure else entry.payload
            new[entry.update_id] = {
                "update_id": entry.update_id,
                "chat_id": entry.chat_id,
                "payload_json": json.dumps(kept, ensure_ascii=True, sort_keys=True),
                "update_type": entry.update_type,
                "received_at": now,
                "processed_at": now if entry.failure else None,
                "failure": entry.failure[:200] if entry.failure else None,
            }
        if new:
            conn.execute(insert, list(new.values()))
        return set(new)

    return await _in_one_transaction(engine, store)


async def inbox_add(
    *, engine: AsyncEngine, update_id: int, chat_id: int | None, payload: dict[str, Any]
) -> bool:
    """Store one inbound update before it is confirmed; False when it was stored already."""
    stored = await inbox_add_batch(engine=engine, updates=[InboxEntry(update_id, chat_id, payload)])
    return update_id in stored


async def inbox_is_processed(*, engine: AsyncEngine, update_id: int) -> bool:
    """Whether an update has been processed to the end."""
    async with AsyncSession(engine) as db:
        row = await db.get(InboxUpdate, update_id)
        return row is not None and row.processed_at is not None


async def inbox_mark_processed(*, engine: AsyncEngine, update_id: int) -> None:
    """Mark an update processed (its reply has been produced and its records written).

    The payload (the person's words, name and username) is dropped: only a pending update needs
    it, and the row itself stays to recognise a second delivery of the same update.
    """
    stmt = (
        update(InboxUpdate)
        .where(col(InboxUpdate.update_id) == update_id, col(InboxUpdate.processed_at).is_(None))
        .values(processed_at=utcnow(), payload_json="{}")
    )
    await _execute_in_one_transaction(engine, [(stmt, {})])


async def inbox_mark_failed(*, engine: AsyncEngine, update_id: int, reason: str) -> None:
    """Set an update aside: not tried again, the reason kept for an operator and the payload
    (the person's words, name and phone number) dropped."""
    async with writing(engine) as db:
        await db.exec(
            update(InboxUpdate)
            .where(col(InboxUpdate.update_id) == update_id)
            .values(processed_at=utcnow(), failure=reason[:200], payload_json="{}")
        )
        await db.commit()


async def _inbox_rows(engine: AsyncEngine, condition: Any) -> list[InboxUpdate]:
    async with AsyncSession(engine) as db:
        query = select(InboxUpdate).where(condition).order_by(col(InboxUpdate.update_id))
        return list((await db.exec(query)).all())


async def inbox_failed(*, engine: AsyncEngine) -> list[InboxUpdate]:
    """Updates set aside as failed, oldest first."""
    return await _inbox_rows(engine, col(InboxUpdate.failure).is_not(None))


async def inbox_pending(
    *, engine: AsyncEngine, older_than: float | None = None
) -> list[InboxUpdate]:
    """Updates stored but not processed (a crash came between), oldest first; with
    `older_than`, only those stored at least that many seconds ago."""
    condition = col(InboxUpdate.processed_at).is_(None)
    if older_than is not None:
        cutoff = utcnow() - timedelta(seconds=older_than)
        condition = condition & (col(InboxUpdate.received_at) <= cutoff)
    return await _inbox_rows(engine, condition)


async def inbox_pending_for_chat(
    *, engine: AsyncEngine, chat_id: int, up_to: int
) -> list[InboxUpdate]:
    """A chat's stored, unfinished updates up to `up_to` (included), oldest first."""
    return await _inbox_rows(
        engine,
        (col(InboxUpdate.chat_id) == chat_id)
        & (col(InboxUpdate.update_id) <= up_to)
        & col(InboxUpdate.processed_at).is_(None),
    )


async def inbox_max_update_id(*, engine: AsyncEngine) -> int | None:
    """The highest update id ever stored (to resume polling after it)."""
    async with AsyncSession(engine) as db:
        return (await db.exec(select(func.max(InboxUpdate.update_id)))).one()


# --- sessions ------------------------------------------------------------------------------


async def open_session(*, engine: AsyncEngine, chat_id: int) -> ChatSession | None:
    """The chat's open session, if any."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(ChatSession)
            .where(ChatSession.chat_id == chat_id, ChatSession.status == "open")
            .order_by(col(ChatSession.started_at).desc())
        )
        return rows.first()


async def latest_session(*, engine: AsyncEngine, chat_id: int) -> ChatSession | None:
    """The chat's most recent session, whatever its status."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(ChatSession)
            .where(ChatSession.chat_id == chat_id)
            .order_by(col(ChatSession.started_at).desc())
        )
        return rows.first()


async def create_session(
    *, engine: AsyncEngine, chat_id: int, user_id: int | None, domain: str = "legal"
) -> ChatSession:
    """Start a new session for the chat: its row, its case and its first transition, in one
    transaction of Core statements (the ORM's flush and refresh cost more than the writes)."""
    session = ChatSession(id=uuid.uuid4().hex, chat_id=chat_id, user_id=user_id, domain=domain)
    master = CaseMaster(session_id=session.id)
    start = StateTransition(session_id=session.id, from_state=None, to_state="INIT")
    work = [
        (_insert(engine, ChatSession), session.model_dump()),  # the session row first: the others
        (_insert(engine, CaseMaster), master.model_dump(exclude={"id"})),  # refer to it
        (_insert(engine, StateTransition), start.model_dump(exclude={"id"})),
    ]
    await _execute_in_one_transaction(engine, work)
    return session


async def close_session(*, engine: AsyncEngine, session_id: str, status: str) -> None:
    """Mark a session completed or cancelled."""
    async with writing(engine) as db:
        session = await db.get(ChatSession, session_id)
        if session is None or session.status != "open":
            return
        session.status = status
        session.ended_at = session.updated_at = utcnow()
        db.add(session)
        await db.commit()


async def reopen_session(*, engine: AsyncEngine, session_id: str) -> bool:
    """Undo a cancel: the cancelled session is open again. False if it was not cancelled."""
    async with writing(engine) as db:
        session = await db.get(ChatSession, session_id)
        if session is None or session.status != "cancelled":
            return False
        session.status, session.ended_at, session.updated_at = "open", None, utcnow()
        db.add(session)
        await db.commit()
    return True


async def add_alerts(
    *,
    engine: AsyncEngine,
    chat_id: int,
    session_id: str | None,
    input_id: str | None,
    alerts: list[tuple[str, str]],
) -> bool:
    """Record the safety rules (code, category) that fired on one message of the chat.

    False, writing nothing, when that message (by its input id) was recorded already.
    """
    async with writing(engine) as db:
        if input_id is not None:
            seen = await db.exec(
                select(SafetyAlert.id).where(
                    SafetyAlert.chat_id == chat_id, SafetyAlert.input_id == input_id
                )
            )
            if seen.first() is not None:
                return False
        for code, category in alerts:
            db.add(
                SafetyAlert(
                    chat_id=chat_id,
                    session_id=session_id,
                    code=code,
                    category=category,
                    input_id=input_id,
                )
            )
        await db.commit()
    return True


async def alerts_for(*, engine: AsyncEngine, session_ids: Iterable[str]) -> dict[str, list[dict]]:
    """The safety alerts of each session (code, category, ISO time), oldest first."""
    ids = list(session_ids)
    if not ids:
        return {}
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(SafetyAlert)
            .where(col(SafetyAlert.session_id).in_(ids))
            .order_by(col(SafetyAlert.at))
        )
        found: dict[str, list[dict]] = {}
        for alert in rows.all():
            found.setdefault(alert.session_id or "", []).append(
                {"code": alert.code, "category": alert.category, "at": alert.at.isoformat()}
            )
        return found


async def forget_chat(*, engine: AsyncEngine, chat_id: int) -> list[str]:
    """Delete everything recorded for a chat (sessions and their records, the medical profile,
    its items and questions, inbox, alerts, offer).

    The chat's settings (ChatPreference: its language and the domain it talks to) stay, its
    safety memory cleared: they hold nothing the person said, and without them a chat in the medical assistant would fall
    back to the legal intake's commands ("/profile" unknown) and first-message routing.
    Returns the deleted session and profile ids: the caller deletes their checkpoint threads.
    """
    async with writing(engine) as db:
        ids = list(
            (await db.exec(select(ChatSession.id).where(ChatSession.chat_id == chat_id))).all()
        )
        if ids:
            for table in SESSION_TABLES:  # children first: foreign keys point at chatsession
                await db.exec(delete(table).where(col(table.session_id).in_(ids)))
            await db.exec(delete(ChatSession).where(col(ChatSession.id).in_(ids)))
        profiles = list(
            (
                await db.exec(select(MedicalProfile.id).where(MedicalProfile.chat_id == chat_id))
            ).all()
        )
        if profiles:
            for table in (ProfileItem, MedicalQuestion):
                await db.exec(delete(table).where(col(table.profile_id).in_(profiles)))
            await db.exec(delete(MedicalProfile).where(col(MedicalProfile.id).in_(profiles)))
            ids += profiles  # a medical thread id too
        await db.exec(delete(InboxUpdate).where(col(InboxUpdate.chat_id) == chat_id))
        await db.exec(delete(SafetyAlert).where(col(SafetyAlert.chat_id) == chat_id))
        await db.exec(delete(ChatOffer).where(col(ChatOffer.chat_id) == chat_id))
        await db.exec(  # the safety memory (term names of the last day) goes with the rest
            update(ChatPreference)
            .where(col(ChatPreference.chat_id) == chat_id)
            .values(safety_json=None)
        )
        await db.commit()
    return ids


async def list_sessions(*, engine: AsyncEngine, statuses: Iterable[str]) -> list[ChatSession]:
    """Sessions with one of `statuses`, most recently updated first."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(
            select(ChatSession)
            .where(col(ChatSession.status).in_(list(statuses)))
            .order_by(col(ChatSession.updated_at).desc())
        )
        return list(rows.all())


# --- case records --------------------------------------------------------------------------


async def sync_case(
    *,
    engine: AsyncEngine,
    session_id: str,
    snapshot: dict[str, Any],
    turn: dict[str, Any] | None = None,
) -> None:
    """Write a session's case records from a snapshot of its graph state, in one transaction.

    Idempotent: the same snapshot written twice leaves the same rows. The snapshot is plain
    JSON data: state, status, completion_rate, case_type, sub_type, confidence, description,
    emotions, facts, unknown, missing, counterparty, evidence_files, summary. `turn`, when
    given, is appended to the conversation history ({"field", "user_text", "bot_text"}, and
    "input_id": a turn of an input already in the history is not written twice).
    """
    now = utcnow()
    async with writing(engine) as db:
        session = await db.get(ChatSession, session_id)
        if session is None:
            raise LookupError(f"no session {session_id}")
        if session.current_state != snapshot["state"]:
            await db.exec(
                _insert(engine, StateTransition).values(
                    session_id=session_id,
                    from_state=session.current_state,
                    to_state=snapshot["state"],
                    at=now,
                )
            )
        changes: dict[str, Any] = {
            "current_state": snapshot["state"],
            "completion_rate": snapshot["completion_rate"],
            "updated_at": now,
        }
        if snapshot["status"] != "open" and session.status == "open":
            changes.update(status=snapshot["status"], ended_at=now)
        await db.exec(
            update(ChatSession).where(col(ChatSession.id) == session_id).values(**changes)
        )
        await db.exec(
            update(CaseMaster)
            .where(col(CaseMaster.session_id) == session_id)
            .values(
                case_type=snapshot.get("case_type"),
                sub_case_type=snapshot.get("sub_type"),
                confidence=snapshot.get("confidence") or 0.0,
                description=snapshot.get("description") or "",
                emotions_json=_dumps(snapshot.get("emotions") or []),
                updated_at=now,
            )
        )

        facts: dict[str, Any] = snapshot.get("facts") or {}
        unknown = set(snapshot.get("unknown") or [])
        if facts:
            detail = snapshot.get("facts_detail") or {}
            rows = [
                {
                    "session_id": session_id,
                    "key": key,
                    "value_json": _dumps(value),
                    "status": "unknown" if key in unknown else "answered",
                    "quote": (detail.get(key) or {}).get("quote"),
                    "said_at": (detail.get(key) or {}).get("at"),
                    "confirmed": (detail.get(key) or {}).get("confirmed"),
                    "updated_at": now,
                }
                for key, value in facts.items()
            ]
            stmt = _insert(engine, CaseFact).values(rows)
            await db.exec(
                stmt.on_conflict_do_update(
                    index_elements=["session_id", "key"],
                    set_={
                        "value_json": stmt.excluded.value_json,
                        "status": stmt.excluded.status,
                        "quote": stmt.excluded.quote,
                        "said_at": stmt.excluded.said_at,
                        "confirmed": stmt.excluded.confirmed,
                        "updated_at": stmt.excluded.updated_at,
                    },
                    where=(CaseFact.value_json != stmt.excluded.value_json)
                    | (CaseFact.status != stmt.excluded.status)
                    | (CaseFact.quote.is_distinct_from(stmt.excluded.quote))
                    | (CaseFact.confirmed.is_distinct_from(stmt.excluded.confirmed)),
                )
            )
        await db.exec(
            delete(CaseFact).where(
                col(CaseFact.session_id) == session_id, col(CaseFact.key).not_in(list(facts))
            )
        )

        await db.exec(
            delete(CaseMissingField).where(col(CaseMissingField.session_id) == session_id)
        )
        missing = snapshot.get("missing") or []
        if missing:
            await db.exec(
                _insert(engine, CaseMissingField).values(
                    [
                        {
                            "session_id": session_id,
                            "key": key,
                            "reason": "unknown" if key in unknown else "not_answered",
                        }
                        for key in missing
                    ]
                )
            )

        party = snapshot.get("counterparty") or {}
        if party.get("name") or party.get("party_type"):
            values = {"name": party.get("name"), "party_type": party.get("party_type")}
            stmt = _insert(engine, CaseParty).values(
                session_id=session_id, role="counterparty", **values
            )
            await db.exec(
                stmt.on_conflict_do_update(index_elements=["session_id", "role"], set_=values)
            )

        files = snapshot.get("evidence_files") or []
        if files:
            rows = [_evidence_row(session_id, item) for item in files]
            stmt = _insert(engine, CaseEvidence).values(rows)
            await db.exec(
                stmt.on_conflict_do_nothing(index_elements=["session_id", "file_unique_id"])
            )

        summary = snapshot.get("summary")
        if summary:
            values = {
                "summary_text": summary["text"],
                "structured_json": _dumps(summary["structured"]),
            }
            stmt = _insert(engine, CaseSummary).values(
                session_id=session_id, created_at=now, **values
            )
            await db.exec(stmt.on_conflict_do_update(index_elements=["session_id"], set_=values))

        if turn is not None and not (
            turn.get("input_id")
            and (
                await db.exec(
                    select(ChatTurn.id).where(
                        ChatTurn.session_id == session_id, ChatTurn.input_id == turn["input_id"]
                    )
                )
            ).first()
        ):
            await db.exec(_insert(engine, ChatTurn).values(session_id=session_id, at=now, **turn))
        await db.commit()


async def get_summary(*, engine: AsyncEngine, session_id: str) -> CaseSummary | None:
    """The session's summary, if written."""
    async with AsyncSession(engine) as db:
        rows = await db.exec(select(CaseSummary).where(CaseSummary.session_id == session_id))
        return rows.first()


async def case_record(*, engine: AsyncEngine, session: ChatSession) -> dict[str, Any]:
    """Everything staff see of one session, as JSON-able data (the export's row)."""
    async with AsyncSession(engine) as db:
        case = (
            await db.exec(select(CaseMaster).where(CaseMaster.session_id == session.id))
        ).first()
        facts = (await db.exec(select(CaseFact).where(CaseFact.session_id == session.id))).all()
        missing = (
            await db.exec(select(CaseMissingField).where(CaseMissingField.session_id == session.id))
        ).all()
        evidence = (
            await db.exec(select(CaseEvidence).where(CaseEvidence.session_id == session.id))
        ).all()
        summary = (
            await db.exec(select(CaseSummary).where(CaseSummary.session_id == session.id))
        ).first()
    return {
        "session_id": session.id,
        "chat_id": session.chat_id,
        "domain": session.domain,
        "status": session.status,
        "case_type": case.case_type if case else None,
        "sub_case_type": case.sub_case_type if case else None,
        "facts": {f.key: json.loads(f.value_json) for f in facts},
        "facts_detail": {
            f.key: {
                "value": json.loads(f.value_json),
                "quote": f.quote,
                "said_at": f.said_at,
                "confirmed": bool(f.confirmed),
            }
            for f in facts
        },
        "missing_fields": sorted(m.key for m in missing),
        "evidence_files": [
            {"kind": e.kind, "file_id": e.file_id, "file_name": e.file_name, "caption": e.caption}
            for e in evidence
        ],
        "completion_rate": round(session.completion_rate, 3),
        "summary_text": summary.summary_text if summary else None,
        "structured": json.loads(summary.structured_json) if summary else None,
        "created_at": session.started_at.isoformat(),
        "completed_at": session.ended_at.isoformat() if session.ended_at else None,
    }


# --- the turn: one read, one write ---------------------------------------------------------


@dataclass
class ChatView:
    """What a turn needs to know of a chat, read at once: its language, the buttons it was
    shown last (and to whom), and its latest session."""

    chat_id: int
    lang: str | None
    offer: tuple[int | None, list[str]] | None
    latest: ChatSession | None
    domain: str | None = None  # legal | medical, None until chosen
    safety: str | None = None  # the safety check's memory (JSON), None when nothing is kept
    lang_chosen: bool = False  # picked with /lang: kept whatever the person writes in

    @property
    def open(self) -> ChatSession | None:
        """The open session (a chat has at most one, and it is the latest)."""
        return self.latest if self.latest is not None and self.latest.status == "open" else None


_SESSION_COLUMNS = [c for c in ChatSession.__table__.columns]


async def chat_view(*, engine: AsyncEngine, chat_id: int) -> ChatView:
    """The chat's language, offer and latest session in one statement."""
    stmt, params = _turn_statements(engine.dialect.name).view, {"chat_id": chat_id}
    sync = _SYNC_ENGINES.get(engine)
    if sync is not None:  # one worker-thread call

        def read() -> Any:
            with sync.connect() as conn:
                return conn.execute(stmt, params).one()

        row = await asyncio.to_thread(read)
    else:
        async with engine.connect() as conn:
            row = (await conn.execute(stmt, params)).one()
    lang, domain, safety, lang_chosen, offer_user, offer_json, *session = row
    fields = dict(zip((c.name for c in _SESSION_COLUMNS), session, strict=True))
    return ChatView(
        chat_id=chat_id,
        lang=lang,
        offer=(offer_user, json.loads(offer_json)) if offer_json is not None else None,
        latest=ChatSession.model_construct(**fields) if fields["id"] is not None else None,
        domain=domain,
        safety=safety,
        lang_chosen=bool(lang_chosen),
    )


@dataclass
class CaseChanges:
    """What a turn changed in a session's records (from its record snapshots before and after)."""

    session_id: str
    state: str
    completion_rate: float
    transition_from: str | None = None  # set when the state changed
    finished: str | None = None  # "completed" when the intake ended
    master: dict[str, Any] | None = None
    facts: list[dict[str, Any]] = field(default_factory=list)  # rows to upsert
    dropped_facts: list[str] = field(default_factory=list)
    missing: list[dict[str, Any]] | None = None  # the whole new list, when it changed
    party: dict[str, Any] | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None


def _fact_rows(session_id: str, snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    unknown = set(snapshot.get("unknown") or [])
    detail = snapshot.get("facts_detail") or {}
    return {
        key: {
            "session_id": session_id,
            "key": key,
            "value_json": _dumps(value),
            "status": "unknown" if key in unknown else "answered",
            "quote": (detail.get(key) or {}).get("quote"),
            "said_at": (detail.get(key) or {}).get("at"),
            "confirmed": (detail.get(key) or {}).get("confirmed"),
        }
        for key, value in (snapshot.get("facts") or {}).items()
    }


def _evidence_row(session_id: str, item: dict[str, Any]) -> dict[str, Any]:
    """The CaseEvidence row of one evidence file of a record snapshot."""
    return {
        "session_id": session_id,
        "kind": item["kind"],
        "file_id": item["file_id"],
        "file_unique_id": item["file_unique_id"],
        "file_name": item.get("file_name"),
        "mime_type": item.get("mime_type"),
        "caption": item.get("caption"),
        "received_at": datetime.fromisoformat(item["at"]),
    }


def _master(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        "case_type": snapshot.get("case_type"),
        "sub_case_type": snapshot.get("sub_type"),
        "confidence": snapshot.get("confidence") or 0.0,
        "description": snapshot.get("description") or "",
        "emotions_json": _dumps(snapshot.get("emotions") or []),
    }


def _missing(snapshot: dict[str, Any]) -> list[tuple[str, str]]:
    unknown = set(snapshot.get("unknown") or [])
    return [
        (key, "unknown" if key in unknown else "not_answered")
        for key in snapshot.get("missing") or []
    ]


def case_changes(
    session_id: str, before: dict[str, Any], after: dict[str, Any], recorded_state: str
) -> CaseChanges:
    """The rows a turn must write, from the record snapshots (see `sync_case`) before and
    after it; `recorded_state` is the state the session row holds now."""
    changes = CaseChanges(
        session_id=session_id, state=after["state"], completion_rate=after["completion_rate"]
    )
    if recorded_state != after["state"]:
        changes.transition_from = recorded_state
    if after["status"] != "open":
        changes.finished = after["status"]
    if _master(before) != _master(after):
        changes.master = _master(after)
    old, new = _fact_rows(session_id, before), _fact_rows(session_id, after)
    changes.facts = [row for key, row in new.items() if old.get(key) != row]
    changes.dropped_facts = [key for key in old if key not in new]
    if _missing(before) != _missing(after):
        changes.missing = [
            {"session_id": session_id, "key": key, "reason": reason}
            for key, reason in _missing(after)
        ]
    party = after.get("counterparty") or {}
    if party != (before.get("counterparty") or {}) and (
        party.get("name") or party.get("party_type")
    ):
        changes.party = {"name": party.get("name"), "party_type": party.get("party_type")}
    known = {f["file_unique_id"] for f in before.get("evidence_files") or []}
    changes.evidence = [
        _evidence_row(session_id, item)
        for item in after.get("evidence_files") or []
        if item["file_unique_id"] not in known
    ]
    if after.get("summary") and after.get("summary") != before.get("summary"):
        changes.summary = after["summary"]
    return changes


async def write_turn(
    *,
    engine: AsyncEngine,
    chat_id: int,
    lang: str | None = None,
    offer: tuple[int | None, list[str]] | None = None,
    case: CaseChanges | None = None,
    turn: dict[str, Any] | None = None,
    safety: tuple[str, str] | None = None,
) -> None:
    """Everything a turn changed, in one short transaction of Core statements: the safety
    check's memory (`safety`: the chat's language, should the row be new, and the JSON), the
    chat's new language, its offer, the session row, the transition, changed facts, the missing list, the
    party, new evidence, the summary, and the question-answer row (`turn`, written once per
    input id)."""
    now = utcnow()
    the = _turn_statements(engine.dialect.name)
    work: list[tuple[Any, Any]] = []  # (statement, parameters)
    if safety is not None:  # before the language, which it never overwrites
        row_lang, safety_json = safety
        work.append(
            (the.safety, {"chat_id": chat_id, "lang": row_lang, "safety_json": safety_json})
        )
    if lang is not None:
        work.append((the.lang, {"chat_id": chat_id, "lang": lang}))
    if offer is not None:
        work.append(
            (
                the.offer,
                {
                    "chat_id": chat_id,
                    "user_id": offer[0],
                    "choices_json": _dumps(offer[1]),
                    "offered_at": now,
                },
            )
        )
    if case is not None:
        work += _case_work(the, case, now)
        if turn is not None:
            work.append((the.turn, {"session_id": case.session_id, "at": now, **turn}))
    await _execute_in_one_transaction(engine, work)


async def _execute_in_one_transaction(engine: AsyncEngine, work: list[tuple[Any, Any]]) -> None:
    """Run (statement, parameters) pairs in one transaction (see `_in_one_transaction`)."""
    if not work:
        return

    def run(conn: Any) -> None:
        for stmt, params in work:
            conn.execute(stmt, params)

    await _in_one_transaction(engine, run)


async def _in_one_transaction(engine: AsyncEngine, work: Callable[[Any], T]) -> T:
    """`work(connection)` in one transaction, its result returned. With SQLite, in one call
    to a worker thread on a plain sqlite3 connection (each statement through aiosqlite would be
    a thread hop of its own), one writer of this process at a time; with PostgreSQL, on the
    async connection (`run_sync`)."""
    sync = _SYNC_ENGINES.get(engine)
    if sync is None:
        async with engine.begin() as conn:
            return await conn.run_sync(work)

    def run() -> T:
        with sync.begin() as conn:
            return work(conn)

    async with _write_lock(engine):
        return await asyncio.to_thread(run)


def _case_work(the: TurnStatements, case: CaseChanges, now: datetime) -> list[tuple[Any, Any]]:
    """The (statement, parameters) pairs that write a turn's CaseChanges (see `write_turn`)."""
    sid = case.session_id
    work: list[tuple[Any, Any]] = []
    if case.finished:  # closed once: a finished session's status is never rewritten
        work.append((the.close, {"b_id": sid, "b_status": case.finished, "b_at": now}))
    work.append(
        (
            the.session,
            {"b_id": sid, "b_state": case.state, "b_rate": case.completion_rate, "b_at": now},
        )
    )
    if case.transition_from is not None:
        work.append(
            (
                the.transition,
                {"session_id": sid, "from_state": case.transition_from, "to_state": case.state}
                | {"at": now},
            )
        )
    if case.master is not None:
        work.append(
            (the.master, {f"b_{k}": v for k, v in case.master.items()} | {"b_id": sid, "b_at": now})
        )
    if case.facts:
        work.append((the.facts, [{**row, "updated_at": now} for row in case.facts]))
    if case.dropped_facts:
        work.append((the.drop_facts, {"b_id": sid, "b_keys": case.dropped_facts}))
    if case.missing is not None:
        work.append((the.clear_missing, {"b_id": sid}))
        if case.missing:
            work.append((the.missing, case.missing))
    if case.party is not None:
        work.append((the.party, {"session_id": sid, "role": "counterparty", **case.party}))
    if case.evidence:
        work.append((the.evidence, case.evidence))
    if case.summary is not None:
        work.append(
            (
                the.summary,
                {
                    "session_id": sid,
                    "summary_text": case.summary["text"],
                    "structured_json": _dumps(case.summary["structured"]),
                    "created_at": now,
                },
            )
        )
    return work


@dataclass(frozen=True)
class TurnStatements:
    """The statements of a turn's read and write, built once per dialect and run with
    parameters: building a statement costs more than running it on SQLite."""

    view: Any
    lang: Any
    safety: Any
    offer: Any
    close: Any
    session: Any
    transition: Any
    master: Any
    facts: Any
    drop_facts: Any
    clear_missing: Any
    missing: Any
    party: Any
    evidence: Any
    summary: Any
    turn: Any


def _upsert(dialect: Any, table: Any, keys: list[str], updated: list[str]) -> Any:
    """INSERT ... ON CONFLICT (keys) DO UPDATE SET each of `updated` to the inserted value."""
    stmt = dialect.insert(table)
    return stmt.on_conflict_do_update(
        index_elements=keys, set_={name: getattr(stmt.excluded, name) for name in updated}
    )


@functools.cache
def _turn_statements(dialect_name: str) -> TurnStatements:
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    chat = bindparam("chat_id", type_=BigInteger)
    anchor = select(chat.label("chat_id")).subquery()
    latest = (
        select(ChatSession.id)
        .where(ChatSession.chat_id == chat)
        .order_by(col(ChatSession.started_at).desc())
        .limit(1)
        .scalar_subquery()
    )
    view = (
        select(
            ChatPreference.lang,
            ChatPreference.domain,
            ChatPreference.safety_json,
            ChatPreference.lang_chosen,
            ChatOffer.user_id,
            ChatOffer.choices_json,
            *_SESSION_COLUMNS,
        )
        .select_from(anchor)
        .outerjoin(ChatPreference, ChatPreference.chat_id == anchor.c.chat_id)
        .outerjoin(ChatOffer, ChatOffer.chat_id == anchor.c.chat_id)
        .outerjoin(ChatSession, ChatSession.id == latest)
    )
    session_row = update(ChatSession).where(col(ChatSession.id) == bindparam("b_id"))
    fact_columns = ["value_json", "status", "quote", "said_at", "confirmed", "updated_at"]
    return TurnStatements(
        view=view,
        lang=_upsert(dialect, ChatPreference, ["chat_id"], ["lang"]),
        safety=_upsert(dialect, ChatPreference, ["chat_id"], ["safety_json"]),
        offer=_upsert(dialect, ChatOffer, ["chat_id"], ["user_id", "choices_json", "offered_at"]),
        close=session_row.where(col(ChatSession.status) == "open").values(
            status=bindparam("b_status"), ended_at=bindparam("b_at")
        ),
        session=session_row.values(
            current_state=bindparam("b_state"),
            completion_rate=bindparam("b_rate"),
            updated_at=bindparam("b_at"),
        ),
        transition=dialect.insert(StateTransition),
        master=update(CaseMaster)
        .where(col(CaseMaster.session_id) == bindparam("b_id"))
        .values(
            {
                name: bindparam(f"b_{name}")
                for name in ("case_type", "sub_case_type", "confidence", "description")
            }
            | {"emotions_json": bindparam("b_emotions_json"), "updated_at": bindparam("b_at")}
        ),
        facts=_upsert(dialect, CaseFact, ["session_id", "key"], fact_columns),
        drop_facts=delete(CaseFact).where(
            col(CaseFact.session_id) == bindparam("b_id"),
            col(CaseFact.key).in_(bindparam("b_keys", expanding=True)),
        ),
        clear_missing=delete(CaseMissingField).where(
            col(CaseMissingField.session_id) == bindparam("b_id")
        ),
        missing=dialect.insert(CaseMissingField),
        party=_upsert(dialect, CaseParty, ["session_id", "role"], ["name", "party_type"]),
        evidence=dialect.insert(CaseEvidence).on_conflict_do_nothing(
            index_elements=["session_id", "file_unique_id"]
        ),
        summary=_upsert(dialect, CaseSummary, ["session_id"], ["summary_text", "structured_json"]),
        turn=dialect.insert(ChatTurn).on_conflict_do_nothing(
            index_elements=["session_id", "input_id"]
        ),
    )
