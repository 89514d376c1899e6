"""Whether the chat's language was picked with /lang (else it follows what the person writes).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A database made before migrations gets its tables from the current models when it is
    # brought to 0001 (db/migrate.py): its chatpreference may have the column already.
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("chatpreference")}
    if "lang_chosen" not in have:
        with op.batch_alter_table("chatpreference") as batch:
            batch.add_column(
                sa.Column("lang_chosen", sa.Boolean(), nullable=False, server_default=sa.false())
            )


def downgrade() -> None:
    with op.batch_alter_table("chatpreference") as batch:
        batch.drop_column("lang_chosen")
