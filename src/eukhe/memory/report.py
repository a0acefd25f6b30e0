"""The chat as a person reads it: its status and a zoom into one line, for `eukhe chat`
and the interactive agent's `/memory` and `/zoom`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eukhe.json_types import JsonObject

if TYPE_CHECKING:  # the chat loads its tables (SQLAlchemy); a report of it reads it
    from eukhe.memory.chat import Chat, Status


def status_json(s: Status, now: float) -> JsonObject:
    """The chat's status (`Chat.status()`) as `eukhe chat status --json` prints it."""
    running = [
        {"id": r.i << r.l, "n": 1 << r.l, "host": r.host, "pid": r.pid, "seconds": round(now - r.started, 1)}
        for r in s.running
    ]
    w = s.last_wait
    last = None
    if w is not None:
        ago, waited = round(now - w.at, 1), round(w.waited, 1)
        last = {"ago": ago, "waited": waited, "pending": w.pending, "ended": w.ended}
    return {
        "messages": s.messages,
        "lines": {"built": s.built, "pending": s.pending, "failed": s.failed},
        "viewBytes": s.view_bytes,
        "viewBudget": s.budget,
        "running": running,
        "lastWait": last,
    }


def status_lines(out: JsonObject) -> list[str]:
    """The status of `status_json` in lines."""
    lines = out["lines"]
    running = out["running"]
    calls = ", ".join(f"{r['id']}+{r['n']} ({r['seconds']:.0f} s, pid {r['pid']})" for r in running)
    said = [
        f"{out['messages']} messages; lines: {lines['built']} built, {lines['pending']} pending "
        f"({lines['failed']} with failed calls)",
        f"view: {out['viewBytes']} of {out['viewBudget']} bytes",
        f"compactor calls running: {len(running)}" + (f": {calls}" if calls else ""),
    ]
    last = out["lastWait"]
    if last is None:
        return [*said, "last settle wait: none yet"]
    how = {
        "settled": "every line was built",
        "deadline": f"the settle deadline passed with {last['pending']} lines shown cut",
        "cancelled": "the turn was cancelled",
    }[str(last["ended"])]
    return [*said, f"last settle wait: {last['ago']:.0f} s ago, waited {last['waited']:.1f} s; {how}"]


def zoomed(chat: Chat, id: int, n: int) -> tuple[str | None, str]:
    """Line `id+n` opened (or message `id` whole for n = 1), or None and why it is no line."""
    got = chat.zoom(id, n)
    if got is not None:
        return got, ""
    total = chat.status().messages
    return None, (
        f"{id}+{n} is no line of the chat: N is a power of 2, ID a multiple of N, and ID + N at most {total}"
    )
