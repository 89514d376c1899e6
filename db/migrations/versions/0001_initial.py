"""The schema as it was when migrations began (made by create_all until then).

Revision ID: 0001
Revises:
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chatoffer",
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("choices_json", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("offered_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("chat_id"),
    )
    op.create_table(
        "chatpreference",
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("lang", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.PrimaryKeyConstraint("chat_id"),
    )
    op.create_table(
        "chatsession",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("domain", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("current_state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("completion_rate", sa.Float(), nullable=False),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("ended_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("chatsession", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chatsession_chat_id"), ["chat_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_chatsession_status"), ["status"], unique=False)

    op.create_table(
        "inboxupdate",
        sa.Column("update_id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=True),
        sa.Column("payload_json", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("received_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("processed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("failure", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.PrimaryKeyConstraint("update_id"),
    )
    with op.batch_alter_table("inboxupdate", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_inboxupdate_chat_id"), ["chat_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_inboxupdate_processed_at"), ["processed_at"], unique=False
        )

    op.create_table(
        "safetyalert",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("code", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("category", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("input_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("safetyalert", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_safetyalert_chat_id"), ["chat_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_safetyalert_session_id"), ["session_id"], unique=False)

    op.create_table(
        "caseevidence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("file_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("file_unique_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("file_name", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("mime_type", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("caption", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("received_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "file_unique_id"),
    )
    with op.batch_alter_table("caseevidence", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_caseevidence_session_id"), ["session_id"], unique=False
        )

    op.create_table(
        "casefact",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("value_json", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("quote", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("said_at", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("confirmed", sa.Boolean(), nullable=True),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "key"),
    )
    with op.batch_alter_table("casefact", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_casefact_session_id"), ["session_id"], unique=False)

    op.create_table(
        "casemaster",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("case_type", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("sub_case_type", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("description", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("emotions_json", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id"),
    )
    op.create_table(
        "casemissingfield",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "key"),
    )
    with op.batch_alter_table("casemissingfield", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_casemissingfield_session_id"), ["session_id"], unique=False
        )

    op.create_table(
        "caseparty",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("role", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("party_type", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "role"),
    )
    with op.batch_alter_table("caseparty", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_caseparty_session_id"), ["session_id"], unique=False)

    op.create_table(
        "casesummary",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("summary_text", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("structured_json", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id"),
    )
    op.create_table(
        "chatturn",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("field", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("input_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("user_text", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("bot_text", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("chatturn", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chatturn_input_id"), ["input_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_chatturn_session_id"), ["session_id"], unique=False)

    op.create_table(
        "statetransition",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("from_state", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("to_state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chatsession.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("statetransition", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_statetransition_session_id"), ["session_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("statetransition", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_statetransition_session_id"))

    op.drop_table("statetransition")
    with op.batch_alter_table("chatturn", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chatturn_session_id"))
        batch_op.drop_index(batch_op.f("ix_chatturn_input_id"))

    op.drop_table("chatturn")
    op.drop_table("casesummary")
    with op.batch_alter_table("caseparty", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_caseparty_session_id"))

    op.drop_table("caseparty")
    with op.batch_alter_table("casemissingfield", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_casemissingfield_session_id"))

    op.drop_table("casemissingfield")
    op.drop_table("casemaster")
    with op.batch_alter_table("casefact", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_casefact_session_id"))

    op.drop_table("casefact")
    with op.batch_alter_table("caseevidence", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_caseevidence_session_id"))

    op.drop_table("caseevidence")
    with op.batch_alter_table("safetyalert", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_safetyalert_session_id"))
        batch_op.drop_index(batch_op.f("ix_safetyalert_chat_id"))

    op.drop_table("safetyalert")
    with op.batch_alter_table("inboxupdate", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inboxupdate_processed_at"))
        batch_op.drop_index(batch_op.f("ix_inboxupdate_chat_id"))

    op.drop_table("inboxupdate")
    with op.batch_alter_table("chatsession", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chatsession_status"))
        batch_op.drop_index(batch_op.f("ix_chatsession_chat_id"))

    op.drop_table("chatsession")
    op.drop_table("chatpreference")
    op.drop_table("chatoffer")
