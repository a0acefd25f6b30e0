"""A root turn and the memory: the view it starts from, pinned for the whole run,
and the run's messages logged into the chat at its end (H2, H4).

The view goes at the end of the run's system prompt, after the layer that says
how to read it, so every request of the run sends it byte for byte (a durable
step keeps it across a crash) and the provider's prompt cache keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence

from eukhe.ai.request import Message
from eukhe.memory import prompts
from eukhe.memory.log import CAP, Entry, EntryKind, capped, tool_text


def system(base: str, view: str) -> str:
    """The run's system prompt: its own part, the memory's layer, then the pinned view."""
    return "\n\n".join(part for part in (base, prompts.VIEW_LAYER, view) if part)


def entries(run: str, transcript: Sequence[Message], date: str) -> list[Entry]:
    """A run's messages as the chat logs them, keyed by the run and their place, so a
    replay logs nothing twice: the user's words, the replies, each tool call (name and
    JSON input), each result (capped at CAP). Failed replies are the harness's text,
    not the model's: they stay out."""
    out: list[Entry] = []
    for k, m in enumerate(transcript):
        key = f"{run}/{k}"
        if m.role == "user":
            out.append(Entry(key, EntryKind.USER, m.content, date))
        elif m.role == "assistant" and not m.is_error:
            if m.content.strip():
                out.append(Entry(key, EntryKind.TALK, m.content, date))
            for j, c in enumerate(m.calls):
                out.append(Entry(f"{key}.{j}", EntryKind.TOOL, tool_text(c.name, c.arguments or c.raw), date))
        elif m.role == "tool":
            out.append(Entry(key, EntryKind.ECHO, capped(m.content, CAP), date))
    return out
