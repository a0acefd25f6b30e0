"""The editor face's own protocol (issue 43): the setup requests answer within their
bound. Everything else the editor does, a prompt answered once, permission requests that
end, the answer held while the session's subagents work, is the session loop every face
shares (`rules.drive`, with `drive.EDITOR` its face; the `acp_*` laws check it there).

- `setup`: `initialize`, `session/new` and `session/load` (`Setup`) answer with their
  result, or fail at `SETUP_MS` with a cause (`acp_setup_bounded`).

Pure: standard library only. Times are integer milliseconds given by the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from eukhe.rules.drive import Do
from eukhe.rules.states import replace

SETUP_MS = 30_000
"""The latest `initialize`, `session/new` or `session/load` answers: its result, or a
failure with its cause (a store, a model or an MCP server that does not come)."""


# ---------------------------------------------------------------- acp_setup_bounded


@dataclass(frozen=True)
class Setup:
    """One `initialize`, `session/new` or `session/load`: when it came, and whether it was
    answered (with its result or a failure)."""

    started: int
    answered: bool = False
    failed: bool = False


def setup_step(s: Setup, done: bool, now: int) -> tuple[Setup, Do | None]:
    """`done`: the request's work ended (its result, or its own failure); else a tick at
    `now`. Answered once: with its work's end, or a failure at `SETUP_MS` after it came."""
    if s.answered:
        return s, None
    if done:
        return replace(s, answered=True), Do.RESPOND
    if now >= s.started + SETUP_MS:
        return replace(s, answered=True, failed=True), Do.RESPOND
    return s, None
