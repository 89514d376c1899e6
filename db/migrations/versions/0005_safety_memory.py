"""The safety check's memory of a chat's last day (term names, rules raised, a crisis).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A database made before migrations gets its tables from the current models when it is
    # brought to 0001 (db/migrate.py): its chatpreference may have the column already.
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("chatpreference")}
    if "safety_json" not in have:
        with op.batch_alter_table("chatpreference") as batch:
            batch.add_column(sa.Column("safety_json", sqlmodel.AutoString(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chatpreference") as batch:
        batch.drop_column("safety_json")
