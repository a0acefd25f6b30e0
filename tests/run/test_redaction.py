"""Each of the run's choke points takes the secret values out (issue 40, item 5): the
transcript keeps a tool call's arguments redacted (the known gap until now) while the
tool, and the permission gate that decides on it, get the call as the model sent it; the
prompt enters redacted; every event's text and fields (a denial's arguments) pass the
redactor; and the store's codec, the chat's tables and the inbox write no secret value in
any row. The loop runs in memory against the faux model, its provider given no redaction,
so what is redacted is the loop's own doing."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.reply import Reply, Stop, ToolCall
from eukhe.ai.request import Message, Tool
from eukhe.memory.log import Entry, EntryKind
from eukhe.memory.tables import ChatStore
from eukhe.run.context import ProcessContext
from eukhe.run.loop import RunLoop
from eukhe.run.outcome import RunOutcome
from eukhe.settings.secrets import REDACTED, Redaction
from eukhe.store.codec import Codec
from eukhe.store.reports import STEER, Reports
from eukhe.store.session_runs import Carried
from tests.sinks import Kept

SECRET = 'sk-"run"\\key-é-0123456789'
TOOLS = (Tool("bash", "run a command", {"type": "object", "properties": {"command": {"type": "string"}}}),)


def spelled(found: Any) -> list[str]:
    """The spellings of SECRET in `found` (a text, or any value as JSON: as written, and as
    JSON escapes it once or twice)."""
    text = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, default=_plain)
    once = {SECRET, json.dumps(SECRET)[1:-1], json.dumps(SECRET, ensure_ascii=False)[1:-1]}
    every = once | {json.dumps(s, ensure_ascii=a)[1:-1] for s in once for a in (True, False)}
    return [s for s in every if s in text]


def _plain(v: Any) -> Any:
    return dataclasses.asdict(v) if dataclasses.is_dataclass(v) and not isinstance(v, type) else str(v)


@dataclass(frozen=True)
class Decision:
    """What the gate says of a call (`run.permit.Permit`'s JSON)."""

    runs: bool
    result: str

    def json(self) -> dict[str, Any]:
        return {"runs": self.runs, "outside": False, "result": self.result, "why": "a deny rule", "rule": ""}


@dataclass
class Gate:
    """A permission gate (`run.loop.Permits`) that decides as `decide` does."""

    decide: Callable[[ToolCall], Awaitable[Decision]]

    async def permit(self, c: ToolCall) -> Decision:
        return await self.decide(c)


def go(
    prompt: str, script: Any, permit: Callable[[ToolCall], Awaitable[Decision]] | None = None
) -> tuple[RunOutcome, list[Any], list[Any], list[ToolCall]]:
    """A run of `prompt` against `script`: its outcome, the bodies sent, the events shown,
    and the calls the tool ran."""
    ran: list[ToolCall] = []
    events: list[Any] = []

    async def tool(call: ToolCall, outside: bool = False) -> tuple[str, bool]:
        ran.append(call)
        return f"ran {call.arguments}", False

    async def main(url: str) -> RunOutcome:
        p = OpenAIChat("faux", base_url=url, timeout=20)  # no redaction of its own: the loop's is tested
        show = lambda kind, text, data=None: events.append((kind, text, data))  # noqa: E731
        g = RunLoop(
            p,
            "faux-model",
            TOOLS,
            tool,
            redact=Redaction((SECRET,)),
            show=show,
            gate=Gate(permit) if permit else None,
        )
        try:
            return await g.run(prompt)
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        out = asyncio.run(main(server.url))
        return out, [s.body for s in server.seen], events, ran


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def test_a_tool_calls_arguments_are_redacted_in_the_transcript_and_the_tool_runs_them_as_sent() -> None:
    out, bodies, events, ran = go("go", [bash(f"echo '{SECRET}'"), "done"])
    assert out.outcome == "answered", out.message
    assert [c.arguments for c in ran] == [{"command": f"echo '{SECRET}'"}]  # the tool got what the model sent
    [call] = out.transcript[1].calls
    assert call.arguments == {"command": f"echo '{REDACTED}'"} and json.loads(call.raw) == call.arguments
    assert not spelled(out.transcript), out.transcript
    assert not spelled(bodies), bodies[1]  # what went back to the model
    assert not spelled(events) and REDACTED in json.dumps(events)


def test_the_prompt_enters_the_transcript_and_the_wire_redacted() -> None:
    out, bodies, events, _ = go(f"deploy with {SECRET}", ["done"])
    assert out.transcript[0] == Message("user", f"deploy with {REDACTED}")
    assert not spelled(bodies) and not spelled(events)


def test_a_denied_calls_arguments_are_redacted_in_its_event_and_the_outcome() -> None:
    """The gate decides on the call as sent; its decision, its event's fields and the
    outcome's denials hold the arguments redacted."""
    asked: list[ToolCall] = []

    async def permit(call: ToolCall) -> Decision:
        asked.append(call)
        return Decision(False, f"denied: bash {call.raw}")

    out, _, events, ran = go("go", [bash(f"curl -H 'auth: {SECRET}' x"), "done"], permit)
    assert not ran and [c.arguments for c in asked] == [{"command": f"curl -H 'auth: {SECRET}' x"}]
    [denied] = [data for kind, _, data in events if kind == "denied"]
    assert REDACTED in denied["arguments"] and not spelled(denied), denied
    assert not spelled(out.denials) and not spelled(out.transcript) and not spelled(events)


def test_the_stores_codec_writes_no_secret_value_and_leaves_the_value_it_was_given() -> None:
    call = ToolCall("c1", "bash", json.dumps({"command": SECRET}), {"command": SECRET, SECRET: [SECRET]})
    reply = Reply((f"the key is {SECRET}",), calls=(call,), stop=Stop.TOOL_USE)
    value = Carried({"result": (SECRET, False), "error": ValueError(SECRET)}, (Message("user", SECRET),))
    for v in (reply, value, {"prompt": f"use {SECRET}"}):
        before = repr(v)
        row = Codec(Redaction((SECRET,))).serialize(v)
        assert not spelled(row) and REDACTED in row, row
        assert repr(v) == before  # what the step returns to the run is its own
        Codec().deserialize(row)  # still a row eukhe reads
    back = Codec().deserialize(Codec(Redaction((SECRET,))).serialize(reply))
    assert back.calls[0].arguments == {"command": REDACTED, REDACTED: [REDACTED]}


def test_the_chats_tables_and_the_inbox_write_no_secret_value(tmp_path: Path) -> None:
    """The chat's log, the entries handed to its writer and its lines, and the inbox's steers
    and reports, whoever wrote them (an import, a face, a subagent): each text redacted."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    chat = ChatStore(url, Redaction((SECRET,)))
    [logged] = chat.append([Entry("k1", EntryKind.USER, f"use {SECRET}", "2026-01-01T00:00:00+00:00")])
    chat.send([Entry("k2", EntryKind.TALK, f"said {SECRET}", "2026-01-01T00:00:00+00:00")])
    line = chat.save_line(1, 0, f"a line quoting {SECRET}")
    inbox = Reports(url, Redaction((SECRET,)))
    inbox.say("s1", STEER, f"steer with {SECRET}")
    inbox.submit("r1", "s1", "child-1", f"report holding {SECRET}")
    got = [logged.text, *(e.text for e in chat.inbox()), line, *(r.text for r in inbox.take("s1", "run#1"))]
    assert got == [
        f"use {REDACTED}",
        f"said {REDACTED}",
        f"a line quoting {REDACTED}",
        f"steer with {REDACTED}",
        f"report holding {REDACTED}",
    ]
    assert logged.size == len(f"use {REDACTED}".encode())
    chat.close()


def test_every_line_a_process_shows_passes_its_redaction() -> None:
    """What a run shows past its loop (a steer, a subagent's report, a notice) goes through
    the process's own redaction (`ProcessContext.show`) before its face's sink sees it."""
    kept = Kept()
    here = ProcessContext(sink=kept, redact=Redaction((SECRET,)))
    here.show("r1", "child", f"report: {SECRET}", {"state": "placed", "id": f"x{SECRET}"})
    here.show("r1", "notice", f"said {SECRET}")
    assert [(e.run, e.type, e.text, e.data) for e in kept.events] == [
        ("r1", "child", f"report: {REDACTED}", {"state": "placed", "id": f"x{REDACTED}"}),
        ("r1", "notice", f"said {REDACTED}", {}),
    ]
