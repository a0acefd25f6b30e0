"""A session's conversation rewound, and a session forked: the records `store.lineage` keeps,
and the rewind's note in the chat's log, made once here for the command line and the agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from eukhe.client.client import ask_once
from eukhe.client.protocol import RequestKind
from eukhe.ids import new_session
from eukhe.memory.log import Entry, EntryKind, now
from eukhe.store.lineage import Lineages
from eukhe.store.urls import cause

__all__ = ["fork", "rewind_conversation"]


def fork(url: str, parent: str, upto: int) -> str:
    """A new session whose transcript begins with `parent`'s runs 1..`upto`: its id."""
    new = new_session()
    lines = Lineages(url)
    try:
        lines.fork(new, parent, upto)
    finally:
        lines.close()
    return new


async def rewind_conversation(url: str, home: Path, session: str, first: int, last: int) -> str:
    """End the session's runs first..last in its transcript, and note the rewind in the chat's
    log (which keeps what they said: it is append-only). What was done, in a line."""
    await asyncio.to_thread(_record, url, session, first, last)
    runs = f"run {first}" if first == last else f"runs {first} to {last}"
    text = f"The user rewound session {session} to before its run {first}: {runs} ended there."
    entry = Entry(f"rewind:{session}:{first}-{last}", EntryKind.NOTE, text, now())
    try:
        await ask_once(home, RequestKind.LOG, spawn=True, entries=[entry.json()])
    except Exception as e:  # the transcript is rewound: the chat's note is said missing, with its cause
        return f"the conversation is rewound; the chat's log could not note it: {cause(e)}"
    return f"the conversation is rewound: {runs} ended in the transcript; the chat's log notes it"


def _record(url: str, session: str, first: int, last: int) -> None:
    lines = Lineages(url)
    try:
        lines.rewind(session, first, last)
    finally:
        lines.close()
