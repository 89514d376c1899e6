"""Alembic environment: migrations run on the connection `db.migrate` hands over.

The schema is `SQLModel.metadata` (db/models.py). SQLite alters tables in batch mode (copy and
move), since it cannot drop or change a column in place.
"""

from alembic import context
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers every table on SQLModel.metadata)

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
