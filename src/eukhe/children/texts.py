"""What a child's report says to its parent: a user message that begins with a
bracketed tag, one shape for each way a child ends (H5.1). Each text is here once."""

from __future__ import annotations

from eukhe.humanize import seconds as in_words
from eukhe.rules import child
from eukhe.rules.child import Owe, Part

DELETED_BY_PARENT = "Deleted by parent orchestrator"
LAST_TEXT = 4_000
"""Characters of the child's last assistant text a report carries."""


def report(owe: Owe, name: str, detail: str, changes: str = "", sub: int = 0) -> str:
    """The report owed, as its submission `sub` says it: its parts (`rules.child.parts`) in
    order. `detail` is the child's last assistant text (exited), or the cause (failed, stalled,
    unreachable, gone); `changes`, what its worktree left (`children.worktree.Changes.text`;
    "": none), told once."""
    said = {Part.HEAD: head(owe, name, detail), Part.CHANGES: changes}
    return "\n\n".join(said[p] for p in child.parts(owe, bool(changes), sub))


def head(owe: Owe, name: str, detail: str) -> str:
    """The report's first part: its `[child-...]` tag, and the last text or the cause."""
    if owe is Owe.EXITED:
        text = detail if len(detail) <= LAST_TEXT else detail[: LAST_TEXT - 1] + "…"
        return f"[child-exited: no-reply child:{name}] Last assistant text: {text}"
    if owe is Owe.CANCELLED:
        return f"[child-exited: cancelled child:{name}] {DELETED_BY_PARENT}"
    return f"[child-failed child:{name}] {detail}"


def stalled(seconds: float) -> str:
    return f"stalled: no progress for {in_words(seconds)} (subagentStallMs); its run was aborted"


def unreachable(polls: int) -> str:
    return (
        f"unreachable: {polls} failed polls in a row while its worker lived or restarted; its run was aborted"
    )


def gone() -> str:
    return "worker-exited: the process that ran it is gone"
