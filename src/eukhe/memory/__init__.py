"""The endless chat: its log, tree of lines, view and compactor; imports of other agents' sessions."""

from typing import TYPE_CHECKING

# Named, not loaded: each is imported from its module (the chat's tables load SQLAlchemy).
if TYPE_CHECKING:
    from eukhe.memory import run_memory
    from eukhe.memory.access import Local, Memory, settle
    from eukhe.memory.browse import page
    from eukhe.memory.chat import Chat, Settled, Waiting, settle_ended
    from eukhe.memory.compactor import asker, request_tokens
    from eukhe.memory.imports import read_session
    from eukhe.memory.log import Entry, EntryKind, now
    from eukhe.memory.report import status_json, status_lines, zoomed
    from eukhe.memory.tables import ChatStore, ChatStoreError
    from eukhe.memory.tool import DATE, ZOOM

__all__ = [
    "DATE",
    "ZOOM",
    "Chat",
    "ChatStore",
    "ChatStoreError",
    "Entry",
    "EntryKind",
    "Local",
    "Memory",
    "Settled",
    "Waiting",
    "asker",
    "now",
    "page",
    "read_session",
    "request_tokens",
    "run_memory",
    "settle",
    "settle_ended",
    "status_json",
    "status_lines",
    "zoomed",
]
