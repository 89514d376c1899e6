"""An update set aside keeps only what diagnosis needs: its type (new column), chat and reason.

Set-aside rows kept their whole payload (the person's words and phone number), and one that
python-telegram-bot could not read had no chat id, so /forget could not find it. Each such row
is given its type and, where the payload holds one, its chat id, and its payload is dropped.
Pending rows get their type too; processed rows have no payload left to read it from.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INT64 = (-(2**63), 2**63 - 1)
INBOX = sa.table(
    "inboxupdate",
    sa.column("update_id", sa.BigInteger()),
    sa.column("chat_id", sa.BigInteger()),
    sa.column("payload_json", sa.String()),
    sa.column("update_type", sa.String()),
    sa.column("failure", sa.String()),
    sa.column("processed_at", sa.DateTime()),
)


def _int64(value: Any) -> int | None:
    return value if type(value) is int and INT64[0] <= value <= INT64[1] else None


def _kind_and_chat(payload_json: str) -> tuple[str | None, int | None]:
    """The update's type (its one key besides update_id, if it looks like one) and the chat
    id its object names (its chat, its message's chat, else its sender), as far as readable.
    A snapshot of bot/raw_updates.py as it was, so that this migration never changes."""
    try:
        raw = json.loads(payload_json)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(raw, dict):
        return None, None
    keys = [k for k in raw if k != "update_id"]
    kind = keys[0] if keys else None
    if kind is not None and not (kind.isascii() and kind.replace("_", "").isalpha()):
        kind = "other"
    for key in keys:
        item = raw[key]
        if not isinstance(item, dict):
            continue
        for holder, field in (
            (item, "chat"),
            (item.get("message"), "chat"),
            (item, "from"),
            (item, "user"),
        ):
            owner = holder.get(field) if isinstance(holder, dict) else None
            found = _int64(owner.get("id")) if isinstance(owner, dict) else None
            if found is not None:
                return kind, found
    return kind, None


def upgrade() -> None:
    # A database made before migrations gets its tables from the current models when it is
    # brought to 0001 (db/migrate.py): its inboxupdate may have the column already.
    bind = op.get_bind()
    have = {c["name"] for c in sa.inspect(bind).get_columns("inboxupdate")}
    if "update_type" not in have:
        with op.batch_alter_table("inboxupdate") as batch:
            batch.add_column(sa.Column("update_type", sqlmodel.AutoString(), nullable=True))
    rows = bind.execute(
        sa.select(INBOX.c.update_id, INBOX.c.chat_id, INBOX.c.payload_json, INBOX.c.failure).where(
            INBOX.c.payload_json != "{}"
        )
    ).all()
    for update_id, chat_id, payload_json, failure in rows:
        kind, found = _kind_and_chat(payload_json)
        values: dict[str, Any] = {"update_type": kind}
        if failure is not None:  # set aside: keep the ids, drop the words
            values["payload_json"] = "{}"
            if chat_id is None:
                values["chat_id"] = found
        bind.execute(sa.update(INBOX).where(INBOX.c.update_id == update_id).values(**values))


def downgrade() -> None:
    # The dropped payloads cannot come back; only the column goes.
    with op.batch_alter_table("inboxupdate") as batch:
        batch.drop_column("update_type")
