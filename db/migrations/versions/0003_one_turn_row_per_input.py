"""One question-answer row per input of a session, held by a unique index.

The turn's single write inserts its row with ON CONFLICT DO NOTHING instead of looking first.
Rows without an input id (the console) are not affected: NULLs never conflict. Duplicates
could not be written before (the writer looked first); any there are dropped, keeping the first.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "DELETE FROM chatturn WHERE input_id IS NOT NULL AND id NOT IN "
        "(SELECT min(id) FROM chatturn WHERE input_id IS NOT NULL GROUP BY session_id, input_id)"
    )
    op.create_index(
        "ux_chatturn_session_input", "chatturn", ["session_id", "input_id"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ux_chatturn_session_input", table_name="chatturn")
