"""The research assistant's response cache: public search answers kept for a while.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "researchresponse",
        sa.Column("key", sqlmodel.AutoString(), nullable=False),
        sa.Column("body", sqlmodel.AutoString(), nullable=False),
        sa.Column("stored_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_researchresponse_expires_at", "researchresponse", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_researchresponse_expires_at", table_name="researchresponse")
    op.drop_table("researchresponse")
