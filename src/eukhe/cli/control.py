"""`eukhe run --control`: a session driven by requests on standard input, one JSON object a
line, its events on standard output as `eukhe run --events` prints them (docs/run.md), as
pi's RPC mode does. Its runs go through the same `Runtime` as `eukhe run`'s, and through
the session loop every face shares (`run.drive.SessionDriver`): a steer and a follow-up
through the session's inbox, as the interactive agent's (`store.reports`).

Requests, each with an optional `id` (a string or a number) that its response carries back:

- `{"type": "prompt", "message": TEXT}`: the session's next run; while one is at work, a
  follow-up (the prompt of the run after it);
- `{"type": "steer", "message": TEXT}`: a message to the run at work, placed at its next
  round end;
- `{"type": "follow_up", "message": TEXT}`: the prompt of the run after the one at work (with
  none at work, a prompt);
- `{"type": "abort"}`: the run at work is aborted, as Ctrl-C aborts it (within its grace);
  what was queued for it waits for the session's next prompt;
- `{"type": "state"}`: the session, whether it is at work, and its run at work.

Every line gets exactly one `response` event: `{"type": "response", "id", "command",
"success", "error" (on a failure), "data"}`; a line that is not a request gets a failed one
that says why, and nothing else changes. Standard input closing ends the session once its
work has ended (at once after an abort); Ctrl-C aborts the run at work and ends it; the
deadline (`--timeout`) ends it too. The process exits with the last run's exit code.

Standard input is read by a thread of its own, which never holds a run or the process's end:
the process leaves (`process_exit.leave`) whatever that thread waits for."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from eukhe import waits
from eukhe.ai.image import ImageError
from eukhe.cli.printer import RunView
from eukhe.cli.prompt import PromptError, checked
from eukhe.errors import Code, EukheError
from eukhe.events import event
from eukhe.json_types import JsonObject, JsonValue
from eukhe.rules import drive
from eukhe.rules.wait import End
from eukhe.run.context import ProcessContext
from eukhe.run.drive import Request as Asked
from eukhe.run.drive import SessionDriver
from eukhe.run.home_store import FOLLOWUP, STEER
from eukhe.run.loop import ABORT_GRACE
from eukhe.run.runtime import Busy, Runtime
from eukhe.run.spec import SessionSetup
from eukhe.skills import SkillError
from eukhe.timing import timing

COMMANDS = ("prompt", "steer", "follow_up", "abort", "state")
"""The requests a control session takes, by their `type`."""

MESSAGES = frozenset({"prompt", "steer", "follow_up"})
"""The requests that carry a `message`."""

LINE_MAX = 32 << 20
"""The longest request line, in bytes: a prompt's 16 MiB, with room for JSON's escapes."""

_CLOCK = waits.LoopClock()


class BadRequest(EukheError, ValueError):
    """A line that is not a request: says which and why, with what it could read of it."""

    code = Code.INPUT

    def __init__(self, why: str, command: str | None = None, id: JsonValue = None) -> None:
        super().__init__(why)
        self.command, self.id = command, id


@dataclass(frozen=True)
class Request:
    command: str
    id: JsonValue = None
    message: str = ""


def request(line: bytes, n: int) -> Request:
    """The request on line `n` of standard input; BadRequest says what is wrong with it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRequest(f"line {n}: not UTF-8: byte 0x{line[e.start]:02x} at byte {e.start}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadRequest(f"line {n}: not JSON: {e.msg} at character {e.pos}") from None
    if not isinstance(obj, dict):
        raise BadRequest(f"line {n}: a request is a JSON object, not {_kind(obj)}")
    rid, command = obj.get("id"), obj.get("type")
    named = command if isinstance(command, str) else None
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, str | int | float)):
        raise BadRequest(f"line {n}: id is a string or a number, not {_kind(rid)}", named, rid)
    if not isinstance(command, str):
        raise BadRequest(
            f"line {n}: type is a string, one of {', '.join(COMMANDS)}; got {_kind(command)}", None, rid
        )
    if command not in COMMANDS:
        raise BadRequest(
            f"line {n}: no request is of type {command!r}; one of {', '.join(COMMANDS)}", command, rid
        )
    message = obj.get("message")
    if command not in MESSAGES:
        return Request(command, rid)
    if not isinstance(message, str):
        raise BadRequest(f"line {n}: {command} takes a message, a string; got {_kind(message)}", command, rid)
    try:
        checked(message, "in the message")
    except PromptError as e:
        raise BadRequest(f"line {n}: {command}: {e}", command, rid) from None
    return Request(command, rid, message)


def _kind(value: JsonValue) -> str:
    """A JSON value's kind in words, and the value when short (`null`, `3`, `an array`)."""
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


# ---------------------------------------------------------------- standard input


@dataclass(frozen=True)
class Line:
    n: int
    text: bytes
    over: bool = False  # longer than LINE_MAX: its bytes were passed over


@dataclass(frozen=True)
class Closed:
    """Standard input ended (`why`: it could not be read, and why)."""

    why: str | None = None


@dataclass(frozen=True)
class Finished:
    """The session's work ended after standard input closed (its SessionEnd, if any, fired)."""


Happening = Line | Closed | Finished


def read_lines(stdin: BinaryIO, post: Callable[[Happening], None]) -> None:
    """Each line of `stdin` to `post`, then `Closed`; a thread's whole work (a read blocks)."""
    n = 0
    try:
        while line := stdin.readline(LINE_MAX + 1):
            n += 1
            if len(line) > LINE_MAX and not line.endswith(b"\n"):  # pass over the rest of it
                while (rest := stdin.readline(LINE_MAX + 1)) and not rest.endswith(b"\n"):
                    pass
                post(Line(n, b"", over=True))
                if not rest:
                    break
                continue
            post(Line(n, line))
    except (OSError, ValueError) as e:
        post(Closed(f"standard input could not be read: {e}"))
        return
    post(Closed())


# ---------------------------------------------------------------- the session


class Control:
    """A control session: `session`'s runs as the requests ask, through its session loop
    (`run.drive.SessionDriver`, `drive.CONTROL` its face); `made` its setup (each prompt
    expanded and its files attached as `eukhe run` does); `view` where its events go (its
    printer the event stream, where the responses go too); `given`: the session was named
    (`--session`), so its first run resumes it. It parses, responds and hands the requests
    to the loop; the loop decides."""

    def __init__(
        self, runtime: Runtime, made: SessionSetup, view: RunView, session: str, given: bool
    ) -> None:
        self.runtime, self.made, self.view, self.session, self.given = runtime, made, view, session, given
        self.inbox: asyncio.Queue[Happening] = asyncio.Queue()
        self.interrupted = asyncio.Event()  # Ctrl-C: the run at work aborted, the session ended
        self.began = False  # its first run started (its SessionStart hooks with it)
        self.driver: SessionDriver | None = None
        self.finishing: asyncio.Future[None] | None = None  # standard input closed: the work's end

    @property
    def process(self) -> ProcessContext:
        return self.runtime.process

    def _loop(self, stop: asyncio.Event) -> SessionDriver:
        poll = int(timing().child_poll * 1000)
        work = drive.idle(drive.CONTROL, poll)
        return SessionDriver(
            self.runtime, self.session, self.made.cwd, work, self.made.spec(None), stop, clock=_CLOCK
        )

    @property
    def working(self) -> bool:
        return self.driver is not None and not self.driver.work.idle()

    async def serve(self, stdin: BinaryIO) -> int:
        """The session, from its first request to its end; its exit code."""
        loop = asyncio.get_running_loop()

        def post(item: Happening) -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the process is ending
                loop.call_soon_threadsafe(self.inbox.put_nowait, item)

        threading.Thread(target=read_lines, args=(stdin, post), daemon=True, name="eukhe-control").start()
        waits.on_ctrl_c(loop, self.interrupted.set)  # the loop below aborts the run at work (`_stopped`)
        stop = asyncio.Event()  # Ctrl-C and the deadline: the session loop's cancel
        self.process.stop = (loop, stop)
        timer = self.runtime.stop_at(self.made.deadline)
        deadline = self.made.deadline
        self.driver = driver = self._loop(stop)
        self.view.say(f"session {self.session}: requests on standard input, one JSON object a line")
        try:
            # what dead processes left, first: the session's own cut-off run ends before its next
            # one starts (Ctrl-C and the deadline end the wait); the requests wait in their queue
            mine, _ = await self.runtime.take_up(self.session, True, runs=True)
            if await self.runtime.finish(mine, self.view.say):
                self.view.ended(None, self.runtime.not_started(mine))
                return self.view.code
            while True:
                ends = None if deadline is None else _CLOCK.now() + (deadline.at - time.time())
                raced = await waits.race(self.inbox.get(), ends, self.interrupted, _CLOCK)
                if raced.end is not End.EVENT:  # Ctrl-C or the deadline: the session ends
                    await self._stopped(raced.end)
                    break
                item = raced.result()
                if isinstance(item, Finished):
                    break
                await self._happened(item)
        finally:
            driver.close()
            if timer is not None:
                timer.cancel()
        return self.view.code

    async def _stopped(self, end: End) -> None:
        """Ctrl-C or the deadline: the run at work ends within its grace (by its own deadline,
        or its cancel, set here), and its work with it, then the session ends (SessionEnd when
        nothing is left); a deadline that found none at work ends it with an outcome that says so."""
        assert self.driver is not None
        if end is End.CANCEL:  # Ctrl-C: the run at work aborted, as `eukhe run` aborts it
            self.process.interrupt()
        if self.working:
            await waits.race(self.driver.settled(), _CLOCK.now() + 3 * ABORT_GRACE, None, _CLOCK)
        elif end is End.DEADLINE and self.made.deadline is not None:
            self.view.ended(None, self.made.deadline.failure("no run was at work; the session ends"))
        if not self.working:
            await self.driver.finish()

    async def _happened(self, item: Line | Closed) -> None:
        if isinstance(item, Closed):
            if item.why:
                self.view.say(item.why)
            self.finishing = asyncio.ensure_future(self._finish())
        elif item.over:
            self._respond(
                None, None, f"line {item.n}: longer than {LINE_MAX:,} bytes, the most a request holds"
            )
        else:
            try:
                req = request(item.text, item.n)
            except BadRequest as e:
                self._respond(e.id, e.command, str(e))
                return
            await self._asked(req)

    async def _finish(self) -> None:
        """Standard input closed: the session ends with its work (`Finished` once it has)."""
        assert self.driver is not None
        try:
            await self.driver.finish()
        finally:
            self.inbox.put_nowait(Finished())

    # ---------------------------------------------------------------- the requests

    async def _asked(self, req: Request) -> None:
        assert self.driver is not None
        working = self.working
        if req.command == "state":
            data = {"session": self.session, "working": working, "run": self.view.current}
            self._respond(req.id, req.command, data=data)
        elif req.command == "abort":
            if not working:
                self._respond(req.id, req.command, "no run is at work to abort")
                return
            self.driver.cancel()  # the run's own cancel, within its grace
            self._respond(req.id, req.command, data={"run": self.view.current})
        elif req.command == "steer" and not working:
            self._respond(req.id, req.command, "no run is at work to steer: send it as a prompt")
        elif working:  # a steer, or a prompt or follow-up for the run after the one at work
            sender = STEER if req.command == "steer" else FOLLOWUP
            answer = await self.driver.submit(Asked(text=req.message, sender=sender))
            if answer.done() and answer.exception() is not None:
                self._respond(req.id, req.command, f"not queued: {answer.exception()}")
                return
            self._respond(req.id, req.command, data={"queued": "steer" if sender == STEER else "follow_up"})
        else:
            await self._start(req)

    async def _start(self, req: Request) -> None:
        """A prompt (or follow-up) with no run at work: the session's next run, started now."""
        assert self.driver is not None
        deadline = self.made.deadline
        if deadline is not None and deadline.passed(time.time()):
            self._respond(req.id, req.command, f"{deadline.message}: no run starts")
            return
        try:
            expanded = self.made.expand(req.message)
            attached = await asyncio.to_thread(self.made.attach, expanded, req.message)
        except (SkillError, ImageError, OSError) as e:
            self._respond(req.id, req.command, str(e))
            return
        except Exception as e:  # whatever else the expansion met: said, and the session goes on
            self._respond(req.id, req.command, f"the prompt could not be expanded: {type(e).__name__}: {e}")
            return
        for line in attached.said:
            self.view.say(line)
        spec = self.made.spec(attached.prompt, attached)
        if not self.began:  # its SessionStart hooks fire with its first run
            spec = dataclasses.replace(spec, session_start="resume" if self.given else "startup")
        try:
            run = await self.runtime.start(spec, self.session)
        except Busy as e:
            self._respond(req.id, req.command, str(e))
            return
        except Exception as e:  # the store: said, and the session goes on
            self._respond(req.id, req.command, f"the run did not start: {type(e).__name__}: {e}")
            return
        self.began = True
        self._respond(req.id, req.command, data={"run": run})
        self.driver.spec = self.made.spec(None)
        await self.driver.submit(Asked(spec, started=run))

    def _respond(
        self, rid: JsonValue, command: str | None, error: str | None = None, data: JsonObject | None = None
    ) -> None:
        """The one response to a request (or to a line that was none)."""
        fields: JsonObject = {"id": rid, "command": command, "success": error is None}
        if error is not None:
            fields["error"] = error
        if data is not None:
            fields["data"] = data
        text = error if error is not None else f"{command}: done"
        self.view.printer.event(event("response", text, None, fields))
