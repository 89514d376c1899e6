"""Data access: keyword-only functions over the record tables, one module per concern. No graph
or Telegram knowledge here.

tx (write sessions, one transaction, SQL helpers) · chats (language, domain, offer, the turn's
read) · inbox · sessions · alerts · forget · snapshot (what a case's rows should be) · cases
(the changes between two snapshots, their statements, and a whole case written from what is
stored) · profiles (a medical profile's rows) · case_reads (summary, export record) · turns (the
turn's one write) · statements (the turn's prepared statements) · research_cache (the research
assistant's response cache). Every public name is importable from here: `from db import repo` then
`repo.write_turn(...)`, or `from db.repo import writing`.
"""

from db.repo.alerts import add_alerts, alerts_for
from db.repo.case_reads import case_record, get_summary
from db.repo.cases import CaseChanges, case_changes, case_work, stored_case, sync_case
from db.repo.chats import ChatView, chat_view, get_lang, get_offer, set_domain, set_lang, set_offer
from db.repo.forget import SESSION_TABLES, forget_chat
from db.repo.inbox import (
    InboxEntry,
    inbox_add,
    inbox_add_batch,
    inbox_failed,
    inbox_is_processed,
    inbox_mark_failed,
    inbox_mark_processed,
    inbox_max_update_id,
    inbox_pending,
    inbox_pending_for_chat,
)
from db.repo.profiles import ProfileSnapshot, profile_work
from db.repo.research_cache import RecordsCache
from db.repo.sessions import (
    close_session,
    create_session,
    latest_session,
    list_sessions,
    open_session,
    reopen_session,
)
from db.repo.snapshot import CaseSnapshot, EvidenceFile, Fact, Party, Summary
from db.repo.statements import TurnStatements
from db.repo.turns import write_turn
from db.repo.tx import attach_sync_engine, plain_engine, writing

__all__ = [
    "SESSION_TABLES",
    "CaseChanges",
    "CaseSnapshot",
    "ChatView",
    "EvidenceFile",
    "Fact",
    "InboxEntry",
    "Party",
    "ProfileSnapshot",
    "RecordsCache",
    "Summary",
    "TurnStatements",
    "add_alerts",
    "alerts_for",
    "attach_sync_engine",
    "case_changes",
    "case_work",
    "case_record",
    "chat_view",
    "close_session",
    "create_session",
    "forget_chat",
    "get_lang",
    "get_offer",
    "get_summary",
    "inbox_add",
    "inbox_add_batch",
    "inbox_failed",
    "inbox_is_processed",
    "inbox_mark_failed",
    "inbox_mark_processed",
    "inbox_max_update_id",
    "inbox_pending",
    "inbox_pending_for_chat",
    "latest_session",
    "list_sessions",
    "open_session",
    "plain_engine",
    "profile_work",
    "reopen_session",
    "set_domain",
    "set_lang",
    "set_offer",
    "stored_case",
    "sync_case",
    "write_turn",
    "writing",
]
