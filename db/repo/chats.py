"""A chat's settings and what a turn reads of it: its language and domain, the buttons it was
offered last, and `chat_view`, the turn's one read (language, offer, latest session at once).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import ChatOffer, ChatPreference, ChatSession, utcnow
from db.repo.statements import SESSION_COLUMNS, turn_statements
from db.repo.tx import dialect_insert, dumps, plain_engine, writing


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
        stmt = dialect_insert(engine, ChatPreference).values(chat_id=chat_id, **values)
        await db.exec(stmt.on_conflict_do_update(index_elements=["chat_id"], set_=values))
        await db.commit()


async def set_domain(*, engine: AsyncEngine, chat_id: int, domain: str, lang: str) -> None:
    """Remember which domain (legal, medical) the chat's messages go to."""
    async with writing(engine) as db:
        stmt = dialect_insert(engine, ChatPreference).values(
            chat_id=chat_id, lang=lang, domain=domain
        )
        await db.exec(
            stmt.on_conflict_do_update(index_elements=["chat_id"], set_={"domain": domain})
        )
        await db.commit()


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
        values = {"user_id": user_id, "choices_json": dumps(choices), "offered_at": utcnow()}
        stmt = dialect_insert(engine, ChatOffer).values(chat_id=chat_id, **values)
        await db.exec(stmt.on_conflict_do_update(index_elements=["chat_id"], set_=values))
        await db.commit()


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


async def chat_view(*, engine: AsyncEngine, chat_id: int) -> ChatView:
    """The chat's language, offer and latest session in one statement."""
    stmt, params = turn_statements(engine.dialect.name).view, {"chat_id": chat_id}
    sync = plain_engine(engine)
    if sync is not None:  # one worker-thread call

        def read() -> Any:
            with sync.connect() as conn:
                return conn.execute(stmt, params).one()

        row = await asyncio.to_thread(read)
    else:
        async with engine.connect() as conn:
            row = (await conn.execute(stmt, params)).one()
    lang, domain, safety, lang_chosen, offer_user, offer_json, *session = row
    fields = dict(zip((c.name for c in SESSION_COLUMNS), session, strict=True))
    return ChatView(
        chat_id=chat_id,
        lang=lang,
        offer=(offer_user, json.loads(offer_json)) if offer_json is not None else None,
        latest=ChatSession.model_construct(**fields) if fields["id"] is not None else None,
        domain=domain,
        safety=safety,
        lang_chosen=bool(lang_chosen),
    )
