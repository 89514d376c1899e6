"""What the model's calls of each intake cost: prompt and completion tokens (LLM mode).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("llm_prompt_tokens", "llm_completion_tokens")


def upgrade() -> None:
    # A database made before migrations gets its tables from the current models when it is
    # brought to 0001 (db/migrate.py): its chatsession may have the columns already.
    # A plain ADD COLUMN on both databases: SQLite's batch mode would copy chatsession into a
    # new table, which the foreign keys of the case tables refuse.
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("chatsession")}
    for name in COLUMNS:
        if name not in have:
            op.add_column(
                "chatsession",
                sa.Column(name, sa.Integer(), nullable=False, server_default=sa.text("0")),
            )


def downgrade() -> None:
    for name in COLUMNS:
        op.drop_column("chatsession", name)
