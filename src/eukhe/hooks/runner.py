"""Running an event's hooks, each one bounded (`rules.hook`'s `hook_ends`).

The API, for the run's workflow (and `eukhe hooks test`, through `run_event_blocking`):

    got = await run_event(
        event, hooks.for_event(event, tool), payload,
        cwd=project, env=secrets.env, environ=os.environ, cancel=run_cancel, clock=LoopClock(),
    )
    got.verdict   # rules.hook.Verdict: every hook's, combined (`rule.combine`)
    got.runs      # one HookRun a hook, in order: the hook, its rules.hook.Ran, its seconds

`payload` is the JSON object the hooks read on stdin, in Claude Code's field names
(`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`, ...):
the caller builds it. `env` is the environment a tool's bash gets (`run.secrets`'
`Secrets.env`: without secret values); `environ` the process's own, from which a hook gets
only the variables its `env` names. `cancel` is the run's abort; `clock` the clock every
deadline runs on (`waits.LoopClock`; a test's `waits.ManualClock`).

What holds, for each hook (all of an event's run at once):

- it runs as `bash -c COMMAND` (as Claude Code runs it), in `cwd`, leading a process group of
  its own, with `env`, `CLAUDE_PROJECT_DIR` and `EUKHE_PROJECT_DIR` set to `cwd`, and the
  variables of `environ` its `env` names;
- its payload is written to its stdin without blocking the loop, and stdin is closed as
  soon as it is written (a hook that never reads it does not hold anything: the writing
  ends with the hook, and is dropped when the hook's wait ends);
- stdout and stderr are read as they come, keeping the first `STDOUT_KEPT` bytes of stdout
  and the last `STDERR_KEPT` of stderr, the rest read and dropped: a hook that prints
  without end neither blocks nor fills memory;
- the rule steps its process (`rule.begin`, `rule.step`): every wait races the process's end
  (its exit and both pipes closed) against `Proc.wake` on `clock` and against `cancel`
  (`waits.race`). At its timeout its group gets SIGTERM; at the timeout plus the rule's
  grace, or at once on `cancel`, SIGKILL, and the wait ends there: a process that ignores
  SIGTERM, or a child that keeps a pipe open (in the group or out of it), never holds the
  turn past the deadline. The killed shell is reaped in the background (asyncio's child
  watcher), never waited for;
- its end is a `rule.Ran` (status as `subprocess` gives it, -N for a signal, None when the
  wait ended without it), and `rule.verdict` says what it means.

If the caller is cancelled, every hook's group is killed and the CancelledError goes on.
Nothing here raises for what a hook does; a hook that cannot start (bash missing, `cwd`
gone) ends with status 127 and the reason as its stderr, as a shell says a command it
cannot run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from eukhe import waits
from eukhe.hooks.config import Hook
from eukhe.json_types import JsonMapping, JsonValue
from eukhe.rules import hook as rule
from eukhe.rules.wait import End

__all__ = [
    "STDERR_KEPT",
    "STDOUT_KEPT",
    "EventRun",
    "HookRun",
    "answer",
    "environment",
    "run_event",
    "run_event_blocking",
    "run_hook",
]

STDOUT_KEPT = 1 << 20
"""The bytes of a hook's stdout kept (its answer); past them it is read and dropped, and the
answer is none (`answer`)."""
STDERR_KEPT = 64 << 10
"""The bytes of a hook's stderr kept: its last (the rule shows the tail of these)."""
CHUNK = 64 << 10
"""The most read from a pipe at once."""
CANNOT_START = 127
"""The status of a hook that could not be started (a shell's for a command it cannot run)."""

_INPUT = {End.EVENT: rule.Input.EXITED, End.DEADLINE: rule.Input.TICK, End.CANCEL: rule.Input.ABORT}


@dataclass(frozen=True)
class HookRun:
    """One hook of an event, as it ran: how it ended (`rule.Ran`), and in how many seconds
    of `clock`."""

    hook: Hook
    ran: rule.Ran
    seconds: float


@dataclass(frozen=True)
class EventRun:
    """An event's hooks: what they decide together, and each one's run, in order."""

    verdict: rule.Verdict
    runs: tuple[HookRun, ...]


async def run_event(
    event: rule.Event,
    hooks: Sequence[Hook],
    payload: JsonMapping,
    *,
    cwd: Path,
    env: Mapping[str, str],
    environ: Mapping[str, str],
    cancel: asyncio.Event,
    clock: waits.Clock,
) -> EventRun:
    """The event's `hooks`, all at once, each bounded; their verdicts combined by the rule
    (see the module's docstring). No hooks: the rule's empty verdict, nothing run."""
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    tasks: list[asyncio.Task[HookRun]] = []
    async with asyncio.TaskGroup() as group:
        for h in hooks:
            tasks.append(group.create_task(run_hook(event, h, data, cwd, env, environ, cancel, clock)))
    runs = tuple(t.result() for t in tasks)
    return EventRun(rule.combine([rule.verdict(event, r.ran) for r in runs]), runs)


def run_event_blocking(
    event: rule.Event,
    hooks: Sequence[Hook],
    payload: JsonMapping,
    *,
    cwd: Path,
    env: Mapping[str, str],
    environ: Mapping[str, str],
) -> EventRun:
    """`run_event` on an event loop of its own, to its end, on the loop's clock, Ctrl-C its
    cancel (every hook's group killed at once, each one's run `aborted`): for a command
    that runs an event's hooks by themselves (`eukhe hooks test`)."""

    async def go() -> EventRun:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        caught = waits.on_ctrl_c(loop, cancel.set)
        try:
            return await run_event(
                event,
                hooks,
                payload,
                cwd=cwd,
                env=env,
                environ=environ,
                cancel=cancel,
                clock=waits.LoopClock(),
            )
        finally:
            if caught:
                loop.remove_signal_handler(signal.SIGINT)

    return asyncio.run(go())


def environment(hook: Hook, cwd: Path, env: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """A hook's environment: the tools' (`env`), the variables of `environ` it names, and
    the project (`CLAUDE_PROJECT_DIR`, `EUKHE_PROJECT_DIR`)."""
    out = dict(env)
    out.update({n: environ[n] for n in hook.env_names if n in environ})
    out["CLAUDE_PROJECT_DIR"] = out["EUKHE_PROJECT_DIR"] = str(cwd)
    if hook.plugin_root:  # a plugin's hook: its folder, as Claude Code sets it
        out["CLAUDE_PLUGIN_ROOT"] = hook.plugin_root
    return out


def _ms(clock: waits.Clock) -> int:
    """The clock in the rule's milliseconds (up: a deadline the clock has reached is reached)."""
    return math.ceil(clock.now() * 1000)


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Pipe:
    """One of a hook's output pipes, read as it comes, keeping `cap` bytes (the first or
    the last) and dropping the rest."""

    def __init__(self, fd: int, cap: int, last: bool, on_eof: asyncio.Event) -> None:
        self.fd, self.cap, self.last, self.eof = fd, cap, last, on_eof
        self.kept = bytearray()
        self.over = False

    def readable(self) -> None:
        try:
            data = os.read(self.fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.fd)
            self.eof.set()
            return
        if self.last:
            self.kept += data
            self.over = self.over or len(self.kept) > self.cap
            del self.kept[: max(len(self.kept) - self.cap, 0)]
        else:
            room = self.cap - len(self.kept)
            self.over = self.over or len(data) > room
            self.kept += data[:room]


class _Writer:
    """A hook's stdin: the payload written as the pipe takes it, never blocking, then closed;
    a hook that exits unread ends it (EPIPE), and `close` drops what is left."""

    def __init__(self, fd: int, data: bytes) -> None:
        self.fd, self.left = fd, memoryview(data)
        self.watched = False

    def start(self) -> None:
        self.writable()
        if self.fd >= 0:
            asyncio.get_running_loop().add_writer(self.fd, self.writable)
            self.watched = True

    def writable(self) -> None:
        try:
            while self.left:
                n = os.write(self.fd, self.left[:CHUNK])
                self.left = self.left[n:]
        except BlockingIOError:
            return
        except OSError:  # the hook is gone, or closed its stdin: what is left is not read
            pass
        self.close()

    def close(self) -> None:
        if self.fd < 0:
            return
        if self.watched:
            asyncio.get_running_loop().remove_writer(self.fd)
        os.close(self.fd)
        self.fd = -1


async def run_hook(
    event: rule.Event,
    hook: Hook,
    data: bytes,
    cwd: Path,
    env: Mapping[str, str],
    environ: Mapping[str, str],
    cancel: asyncio.Event,
    clock: waits.Clock,
) -> HookRun:
    """One hook, `data` on its stdin, driven by the rule to its end (see the module's
    docstring). `event` is not the hook's business here: the verdict is the caller's."""
    t0 = clock.now()
    loop = asyncio.get_running_loop()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            hook.command,
            stdin=in_r,
            stdout=out_w,
            stderr=err_w,
            cwd=cwd,
            env=environment(hook, cwd, env, environ),
            start_new_session=True,
        )
    except BaseException as e:
        for fd in (in_w, out_r, err_r):
            os.close(fd)
        if not isinstance(e, OSError):
            raise
        p = rule.step(rule.begin(_ms(clock), hook.timeout_ms), rule.Input.EXITED, _ms(clock))[0]
        why = f"could not start bash -c: {e.strerror or e}"
        ran = rule.Ran(hook.command, p, CANNOT_START, why, rule.Answer(), hook.open_on_failure)
        return HookRun(hook, ran, clock.now() - t0)
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    pgid = proc.pid
    out_eof, err_eof, gone = asyncio.Event(), asyncio.Event(), asyncio.Event()
    out = _Pipe(out_r, STDOUT_KEPT, False, out_eof)
    err = _Pipe(err_r, STDERR_KEPT, True, err_eof)
    writer = _Writer(in_w, data)
    exited = asyncio.ensure_future(proc.wait())  # done when the child watcher reaps the shell
    exited.add_done_callback(lambda _: gone.set())

    async def ended() -> None:
        """The rule's EXITED: the shell exited and both its pipes closed (a wait the race bounds)."""
        for e in (gone, out_eof, err_eof):
            await e.wait()

    for pipe in (out, err):
        os.set_blocking(pipe.fd, False)
        loop.add_reader(pipe.fd, pipe.readable)
    os.set_blocking(in_w, False)
    try:
        writer.start()
        p = rule.begin(_ms(clock), hook.timeout_ms)
        while True:
            raced = await waits.race(ended(), p.wake / 1000, cancel, clock, grace=0.0)
            p, action = rule.step(p, _INPUT[raced.end], _ms(clock))
            if action is rule.Action.TERM:
                _killpg(pgid, signal.SIGTERM)
            elif action is rule.Action.KILL:
                _killpg(pgid, signal.SIGKILL)
                break
            elif action is rule.Action.DONE:
                break
    except BaseException:  # cancelled: the group goes with the wait
        _killpg(pgid, signal.SIGKILL)
        raise
    finally:
        writer.close()
        for pipe in (out, err):
            loop.remove_reader(pipe.fd)
            os.close(pipe.fd)
        # killed, `exited` is left to the child watcher, which reaps the shell: nothing waits for it
    status = proc.returncode if p.phase is rule.Phase.ENDED else None
    stderr = err.kept.decode("utf-8", "replace")
    ran = rule.Ran(hook.command, p, status, stderr, answer(bytes(out.kept), out.over), hook.open_on_failure)
    return HookRun(hook, ran, clock.now() - t0)


# ---------------------------------------------------------------- what a hook answered


def _text(obj: JsonMapping, key: str) -> str:
    v = obj.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise ValueError(key)
    return v


def answer(stdout: bytes, over: bool = False) -> rule.Answer | None:
    """A hook's stdout as the rule reads it: nothing, `Answer()`; a JSON object, its Claude
    Code fields (a PermissionRequest hook's `decision.behavior` and `.message` as a
    PreToolUse hook's `permissionDecision` and its reason); text that does not start with
    `{`, `Answer(plain=text)`; text that starts with `{` and is no JSON object of Claude
    Code's fields (one of them of the wrong kind too), None. `over`: stdout went past
    `STDOUT_KEPT`, so what was kept is not all it said: None."""
    if over:
        return None
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return rule.Answer()
    if not text.startswith("{"):
        return rule.Answer(plain=text)
    try:
        got: JsonValue = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(got, Mapping):
        return None
    try:
        specific = got.get("hookSpecificOutput")
        specific = {} if specific is None else specific
        if not isinstance(specific, Mapping):
            return None
        decision = got.get("decision")
        permission = specific.get("permissionDecision")
        permission_reason = _text(specific, "permissionDecisionReason")
        asked = specific.get("decision")  # PermissionRequest's: {"behavior": "allow" | "deny", "message"}
        if asked is not None:
            if not isinstance(asked, Mapping) or not isinstance(asked.get("behavior"), str):
                return None
            permission, permission_reason = asked["behavior"], _text(asked, "message")
        proceed = got.get("continue", True)
        if not isinstance(decision, str | None) or not isinstance(permission, str | None):
            return None
        if not isinstance(proceed, bool):
            return None
        return rule.Answer(
            decision=decision,
            reason=_text(got, "reason"),
            proceed=proceed,
            stop_reason=_text(got, "stopReason"),
            system_message=_text(got, "systemMessage"),
            permission=permission,
            permission_reason=permission_reason,
            context=_text(specific, "additionalContext"),
            updated_input="updatedInput" in specific,
        )
    except ValueError:
        return None
