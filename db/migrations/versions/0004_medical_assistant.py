"""The medical assistant: the chat's domain, profiles, their items and the questions asked.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A database made before migrations gets its tables from the current models when it is
    # brought to 0001 (db/migrate.py), a chatpreference made then already has the column.
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("chatpreference")}
    if "domain" not in have:
        with op.batch_alter_table("chatpreference") as batch:
            batch.add_column(sa.Column("domain", sqlmodel.AutoString(), nullable=True))
    op.create_table(
        "medicalprofile",
        sa.Column("id", sqlmodel.AutoString(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("subject", sqlmodel.AutoString(), nullable=False),
        sa.Column("summary_text", sqlmodel.AutoString(), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_medicalprofile_chat_id", "medicalprofile", ["chat_id"], unique=True)
    op.create_table(
        "profileitem",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("profile_id", sqlmodel.AutoString(), nullable=False),
        sa.Column("key", sqlmodel.AutoString(), nullable=False),
        sa.Column("slot", sqlmodel.AutoString(), nullable=False),
        sa.Column("name", sqlmodel.AutoString(), nullable=False),
        sa.Column("name_ko", sqlmodel.AutoString(), nullable=False),
        sa.Column("value_json", sqlmodel.AutoString(), nullable=False),
        sa.Column("text", sqlmodel.AutoString(), nullable=False),
        sa.Column("status", sqlmodel.AutoString(), nullable=False),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.Column("unsure", sa.Boolean(), nullable=False),
        sa.Column("first_said", sqlmodel.AutoString(), nullable=False),
        sa.Column("last_said", sqlmodel.AutoString(), nullable=False),
        sa.Column("mentions", sa.Integer(), nullable=False),
        sa.Column("importance", sa.Float(), nullable=False),
        sa.Column("history_json", sqlmodel.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(["profile_id"], ["medicalprofile.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("profile_id", "key"),
    )
    op.create_index("ix_profileitem_profile_id", "profileitem", ["profile_id"])
    op.create_table(
        "medicalquestion",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("profile_id", sqlmodel.AutoString(), nullable=False),
        sa.Column("question", sqlmodel.AutoString(), nullable=False),
        sa.Column("sources_json", sqlmodel.AutoString(), nullable=False),
        sa.Column("answered", sa.Boolean(), nullable=False),
        sa.Column("uncertainty", sa.Float(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("urgent", sa.Boolean(), nullable=False),
        sa.Column("input_id", sqlmodel.AutoString(), nullable=True),
        sa.Column("at", sqlmodel.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(["profile_id"], ["medicalprofile.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_medicalquestion_profile_id", "medicalquestion", ["profile_id"])


def downgrade() -> None:
    op.drop_index("ix_medicalquestion_profile_id", table_name="medicalquestion")
    op.drop_table("medicalquestion")
    op.drop_index("ix_profileitem_profile_id", table_name="profileitem")
    op.drop_table("profileitem")
    op.drop_index("ix_medicalprofile_chat_id", table_name="medicalprofile")
    op.drop_table("medicalprofile")
    with op.batch_alter_table("chatpreference") as batch:
        batch.drop_column("domain")
