"""Whether a session's conversation can be rewound to before its run n, and which runs that
ends (`eukhe rewind --conversation`, `/rewind`): one rule for the command line and the agent.

Pure: standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence


def rewindable(session: str, n: int, own: Sequence[tuple[int, bool]]) -> tuple[int, str | None]:
    """A rewind of `session` to before its run n, over its own runs (number, in flight): the
    last run it ends, and None; or why it cannot be (no such run, a run in flight, in any
    process: a rewind never ends a run at work)."""
    numbers = [k for k, _ in own]
    last = max(numbers, default=0)
    flying = [k for k, live in own if live]
    if flying:
        return last, f"run {flying[-1]} of session {session} is in flight: rewind once it ends"
    if not 1 <= n <= last:
        return last, f"session {session} has no run {n}" + (f" (its last is run {last})" if last else "")
    return last, None
