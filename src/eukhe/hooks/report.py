"""The hooks as a person reads them: what is in effect in a folder (`listing`, and
`listing_json`: `eukhe hooks list`, `/hooks`), and how an event's hooks ran
(`ran_lines`: `eukhe hooks test`). Lines and JSON only: the faces print them."""

from __future__ import annotations

import signal
from pathlib import Path

from eukhe.hooks.config import Hook, Loaded, Matcher
from eukhe.hooks.runner import EventRun, HookRun
from eukhe.humanize import counted, seconds
from eukhe.json_types import JsonObject
from eukhe.rules import hook as rule

__all__ = ["clean", "ended", "listing", "listing_json", "ran_lines"]

DOCS = "docs/hooks.md"


def _one_line(command: str) -> str:
    return " ⏎ ".join(command.strip().splitlines())


def _timeout(h: Hook) -> str:
    if h.timeout_ms is None:
        return f"timeout {seconds(rule.TIMEOUT_MS / 1000)} (the default)"
    return f"timeout {seconds(h.timeout_ms / 1000)}"


def _matched(m: Matcher) -> str:
    """The matcher as a listing shows it: a tool event's (`[Bash] `, `[every tool] `), another
    event's with a matcher (`[startup] `, `[every source] `); nothing for the others, which
    take no matcher."""
    if not rule.has_matcher(m.event):
        return ""
    every = "every tool" if m.event in rule.MATCHED else f"every {rule.MATCHED_ON[m.event]}"
    return f"[{every}] " if m.matcher in ("", "*") else f"[{m.matcher}] "


def listing(got: Loaded, where: Path) -> list[str]:
    """Every hook in effect in `where`, by event (in the order a session meets them), each
    with its matcher, command, timeout, onFailure, the variables it also sees and the file
    it came from; then the Stop cap, and the notices of what was held back or left out.
    Nothing in effect: one line saying so, and where hooks go."""
    out: list[str] = []
    matchers = got.hooks.matchers
    for event in rule.Event:
        mine = [m for m in matchers if m.event is event]
        n = sum(len(m.hooks) for m in mine)
        if not n:
            continue
        out.append(f"{event.value} ({counted(n, 'hook')})")
        for m in mine:
            for h in m.hooks:
                out.append(f"  {_matched(m)}{_one_line(h.command)}")
                more = [_timeout(h), f"onFailure {'allow' if h.open_on_failure else 'deny'}"]
                more += [f"env {', '.join(h.env_names)}"] if h.env_names else []
                out.append(f"    {' · '.join(more)} · from {h.source}")
    if out:
        out.insert(0, f"hooks in effect in {where}:")
        if any(m.event in rule.STOPS for m in matchers):
            out.append(
                f"Stop hooks keep a run going at most {got.hooks.max_stop_blocks} times "
                "(hookLimits.maxStopBlocks)"
            )
    else:
        out.append(
            f"no hooks are in effect in {where}: they go in ~/.eukhe/settings.json ($EUKHE_HOME) "
            f"or a trusted project's .claude/settings.json (see {DOCS})"
        )
    if got.notices:
        out.append("held back or left out:")
        out += [f"  {line}" for line in got.notices]
    return out


def listing_json(got: Loaded, where: Path) -> JsonObject:
    """`listing` as one JSON object: `cwd`, `events` (each event's hooks, in order, each
    with `matcher`, `command`, `timeout` in seconds, `timeoutDefault`, `onFailure`, `env`,
    and `source`), `maxStopBlocks` and `notices`."""
    events: JsonObject = {}
    for event in rule.Event:
        hooks: list[JsonObject] = [
            {
                "matcher": m.matcher,
                "command": h.command,
                "timeout": (h.timeout_ms or rule.TIMEOUT_MS) / 1000,
                "timeoutDefault": h.timeout_ms is None,
                "onFailure": "allow" if h.open_on_failure else "deny",
                "env": list(h.env_names),
                "source": str(h.source),
            }
            for m in got.hooks.matchers
            if m.event is event
            for h in m.hooks
        ]
        if hooks:
            events[event.value] = list(hooks)
    return {
        "cwd": str(where),
        "events": events,
        "maxStopBlocks": got.hooks.max_stop_blocks,
        "notices": list(got.notices),
    }


def _signal(n: int) -> str:
    try:
        return f"signal {n} ({signal.Signals(n).name})"
    except ValueError:
        return f"signal {n}"


def ended(r: rule.Ran) -> str:
    """How a hook ended, in words: its exit status, a signal, its timeout (and what the
    SIGTERM, then the SIGKILL, did), or the Ctrl-C that ended the wait."""
    if r.proc.aborted:
        return "cancelled (Ctrl-C): its process group killed"
    if r.status is None:
        how = "no exit status"
    elif r.status < 0:
        how = f"killed by {_signal(-r.status)}"
    else:
        how = f"exit {r.status}" + (" (a block)" if r.status == rule.BLOCKS else "")
    if not r.proc.timed_out:
        return how
    took = f"timed out after {seconds(r.proc.timeout / 1000)}"
    if r.status is None:
        return f"{took}: SIGTERM, then SIGKILL {seconds(rule.GRACE_MS / 1000)} later"
    if r.status == -signal.SIGTERM:
        return f"{took}: ended by its SIGTERM"
    return f"{took}: SIGTERM, then {how}"


def _failure(event: rule.Event, run: HookRun) -> str | None:
    return rule.failure_line(event, run.ran)


def clean(event: rule.Event, got: EventRun) -> bool:
    """Whether every hook ran clean: none failed (`rule.failure_line`), timed out or was
    cancelled."""
    return all(_failure(event, r) is None and not r.ran.proc.aborted for r in got.runs)


def ran_lines(event: rule.Event, got: EventRun) -> list[str]:
    """How each hook of the event ran (its command, how it ended, in how long, its failure
    line), then the verdict they came to together: its kind, reason, context, whether a
    hook stopped the run, and the lines for people (`systemMessage`)."""
    out: list[str] = []
    for r in got.runs:
        out.append(f"`{_one_line(r.hook.command)}`: {ended(r.ran)}, in {seconds(r.seconds)}")
        failed = _failure(event, r)
        if failed is not None:
            out.append(f"  failed: {failed}")
    v = got.verdict
    out.append(f"verdict: {v.kind.value}")
    out += [f"  reason: {line}" for line in v.reason.splitlines()]
    out += [f"  context: {line}" for line in v.context.splitlines()]
    if v.stop:
        out.append("  stop: a hook said continue: false" + (f": {v.stop_reason}" if v.stop_reason else ""))
    out += [f"  message: {line}" for line in v.messages]
    return out
