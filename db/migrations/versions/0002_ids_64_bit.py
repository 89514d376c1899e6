"""Telegram ids in 64 bits; indexes for a chat's pending updates and its latest session.

On PostgreSQL the chat, user and update id columns become BIGINT (user ids pass 2**31, and
supergroups' chat ids are below -10**12). SQLite integers are 64-bit already, so there only
the indexes are added. The turn's read (a chat's latest session) and a process catching up
with a chat's stored updates (several processes) use the two indexes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID_COLUMNS = [  # (table, column, nullable)
    ("chatsession", "chat_id", False),
    ("chatsession", "user_id", True),
    ("inboxupdate", "update_id", False),
    ("inboxupdate", "chat_id", True),
    ("chatoffer", "chat_id", False),
    ("chatoffer", "user_id", True),
    ("safetyalert", "chat_id", False),
    ("chatpreference", "chat_id", False),
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table, column, nullable in ID_COLUMNS:
            op.alter_column(
                table,
                column,
                type_=sa.BigInteger(),
                existing_type=sa.Integer(),
                existing_nullable=nullable,
            )
    op.create_index(
        "ix_inboxupdate_chat_pending",
        "inboxupdate",
        ["chat_id", "processed_at"],
        if_not_exists=True,
    )
    op.create_index(
        "ix_chatsession_chat_started", "chatsession", ["chat_id", "started_at"], if_not_exists=True
    )


def downgrade() -> None:
    op.drop_index("ix_chatsession_chat_started", table_name="chatsession")
    op.drop_index("ix_inboxupdate_chat_pending", table_name="inboxupdate")
    if op.get_bind().dialect.name == "postgresql":
        for table, column, nullable in ID_COLUMNS:
            op.alter_column(
                table,
                column,
                type_=sa.Integer(),
                existing_type=sa.BigInteger(),
                existing_nullable=nullable,
            )
