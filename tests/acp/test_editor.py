"""`eukhe acp` driven as an editor drives it: the protocol's own SDK on the client side,
the real `eukhe` process on the other end of the pipes, and the faux model on loopback. A
prompt is answered once with its stop reason after its answer streamed as message chunks;
a tool call and its result are a `tool_call` and its `tool_call_update`, an edit with its
diff; a permission request answered each way, and one a PermissionRequest hook answers
first; a cancel mid-stream and during an ask; a session made by `eukhe run` loaded; a hostile
editor's garbage answered with errors; and a subagent that outlives its parent's run: the
prompt answered after the run its report starts, its ask reaching the editor meanwhile, and
a cancel then answered at once."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EnvVariable,
    McpServerStdio,
    RequestPermissionResponse,
)

from acp import PROTOCOL_VERSION, RequestError, image_block, spawn_agent_process, text_block
from eukhe.ai.faux import FauxServer, parse
from eukhe.rules.run import ABORT_GRACE
from tests import forks
from tests.proc import env, eukhe
from tests.run.test_images import encoded

HANDED = Path(__file__).parents[1] / "handed.py"
WAIT = 30.0


class Editor:
    """The editor's side: keeps every update, answers each permission request with `answer`
    (an option id; None: cancelled; "never": never answers)."""

    def __init__(self, answer: str | None = "once") -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.answer = answer
        self.got_ask = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        self.asked.append(tool_call)
        self.got_ask.set()
        if self.answer == "never":
            await asyncio.Event().wait()
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=self.answer, outcome="selected"))

    def on_connect(self, conn: Any) -> None:
        pass

    def text(self) -> str:
        return "".join(
            u.content.text for u in self.updates if getattr(u, "session_update", "") == "agent_message_chunk"
        )

    def kinds(self) -> list[str]:
        return [getattr(u, "session_update", "") for u in self.updates]


def home_for(tmp_path: Path, url: str, settings: dict[str, Any] | None = None) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {"model": "vllm/m", "providers": {"vllm": {"baseUrl": url}}}
    (home / "settings.json").write_text(json.dumps({**base, **(settings or {})}))
    return home


@asynccontextmanager
async def editor_on(tmp_path: Path, home: Path, client: Editor) -> AsyncIterator[tuple[Any, Any]]:
    """`eukhe acp` in `tmp_path` (forked by the test's template), connected and initialized."""
    args = [str(HANDED), forks.template().path, "acp"]
    async with spawn_agent_process(
        lambda agent: client, sys.executable, *args, env=env(home), cwd=tmp_path
    ) as (
        conn,
        proc,
    ):
        got = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), WAIT)
        assert got.agent_capabilities.load_session
        yield conn, proc


def drive(work: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(work(), 90))


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


def spawn(task: str) -> dict[str, Any]:
    return {"calls": [{"name": "spawn", "arguments": {"task": task}}]}


def test_a_prompt_streams_its_answer_and_is_answered_once_with_end_turn(tmp_path: Path) -> None:
    """... and the session's hooks fire in the editor too: SessionStart with its first run,
    SessionEnd once the editor has gone."""
    script = [{"results": 0, "text": "Hello from the faux model.", "chunks": 4}]
    said = tmp_path / "said"
    keep = {
        "hooks": [
            {"type": "command", "command": f"jq -r .hook_event_name >> {said} 2>/dev/null || cat >> {said}"}
        ]
    }
    hooks = {"hooks": {"SessionStart": [keep], "SessionEnd": [keep]}}

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url, hooks), client) as (conn, _):
                s = await asyncio.wait_for(conn.new_session(cwd=str(tmp_path), mcp_servers=[]), WAIT)
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("hi")]), WAIT
                )
                assert got.stop_reason == "end_turn"
                assert client.text() == "Hello from the faux model."
                assert client.kinds().count("agent_message_chunk") >= 2  # it streamed

    drive(go)
    text = said.read_text()
    assert (
        "SessionStart" in text
        and "SessionEnd" in text
        and text.index("SessionStart") < text.index("SessionEnd")
    )


ITEMS = [{"text": "greet the world", "state": "in_progress"}, {"text": "say so", "state": "pending"}]
TODO = {"name": "todo", "arguments": {"items": ITEMS}}
PLAN = [("greet the world", "in_progress", "medium"), ("say so", "pending", "medium")]


def plans(client: Editor) -> list[list[tuple[str, str, str]]]:
    """Each `plan` update the editor got: its entries (content, status, priority)."""
    return [
        [(e.content, e.status, e.priority) for e in u.entries]
        for u in client.updates
        if getattr(u, "session_update", "") == "plan"
    ]


def test_an_edit_is_a_tool_call_with_its_diff_then_its_update(tmp_path: Path) -> None:
    """... and the task list the model wrote before it is the editor's plan."""
    (tmp_path / "a.txt").write_text("hello\n")
    edit = {"name": "edit", "arguments": {"path": "a.txt", "old_text": "hello", "new_text": "hello, world"}}
    script = [{"results": 0, "calls": [TODO, edit]}, {"results": 2, "text": "Edited."}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("edit")]), WAIT
                )
                assert got.stop_reason == "end_turn"
        assert plans(client) == [PLAN]
        [start] = [
            u for u in client.updates if getattr(u, "session_update", "") == "tool_call" and u.kind == "edit"
        ]
        assert start.status == "in_progress"
        assert [loc.path for loc in start.locations] == [str(tmp_path / "a.txt")]
        [diff] = start.content
        assert (diff.path, diff.old_text, diff.new_text) == (str(tmp_path / "a.txt"), "hello", "hello, world")
        [done] = [u for u in client.updates if getattr(u, "tool_call_id", "") == start.tool_call_id][1:]
        assert done.session_update == "tool_call_update" and done.status == "completed"
        assert (tmp_path / "a.txt").read_text() == "hello, world\n"

    drive(go)


ASKS = {"permissions": {"ask": ["Bash(touch *)"]}}


@pytest.mark.parametrize(("answer", "runs"), [("once", True), ("no", False), (None, False)])
def test_a_permission_request_is_answered_each_way(tmp_path: Path, answer: str | None, runs: bool) -> None:
    script = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "Done."}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor(answer)
            async with editor_on(tmp_path, home_for(tmp_path, server.url, ASKS), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("go")]), WAIT
                )
                assert got.stop_reason == "end_turn"
        [asked] = client.asked
        assert "touch made" in asked.title
        assert (tmp_path / "made").exists() is runs

    drive(go)


def test_a_permission_request_hook_answers_the_editors_ask_before_the_editor_is_asked(tmp_path: Path) -> None:
    """The PermissionRequest hooks fire in the editor too (a person could be asked there): their
    allow runs the call, and the editor is never asked (docs/hooks.md)."""
    script = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "Done."}]
    said = tmp_path / "said"
    answer = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    allow = f"jq -r .hook_event_name >> {said}; echo '{json.dumps(answer)}'"
    hooks = {
        "hooks": {
            "PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": allow}]}]
        }
    }

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor("no")  # the editor would say no: the hook's yes comes first
            home = home_for(tmp_path, server.url, {**ASKS, **hooks})
            async with editor_on(tmp_path, home, client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("go")]), WAIT
                )
                assert got.stop_reason == "end_turn"
        assert client.asked == []
        assert (tmp_path / "made").exists()
        assert said.read_text() == "PermissionRequest\n"

    drive(go)


def test_a_cancel_during_an_ask_ends_the_ask_and_answers_the_prompt_cancelled(tmp_path: Path) -> None:
    script = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "Done."}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor("never")
            async with editor_on(tmp_path, home_for(tmp_path, server.url, ASKS), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                prompt = asyncio.ensure_future(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("go")])
                )
                await asyncio.wait_for(client.got_ask.wait(), WAIT)
                cancelled = time.monotonic()
                await conn.cancel(session_id=s.session_id)
                got = await asyncio.wait_for(prompt, ABORT_GRACE + 5)
                assert got.stop_reason == "cancelled"
                assert time.monotonic() - cancelled <= ABORT_GRACE + 1
        assert not (tmp_path / "made").exists()

    drive(go)


def test_a_cancel_mid_stream_answers_the_prompt_cancelled_within_the_grace(tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(200))
    script = [{"text": words, "chunks": 200, "delay": 0.05}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                prompt = asyncio.ensure_future(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("count")])
                )
                while "w3" not in client.text():
                    await asyncio.sleep(0.02)
                cancelled = time.monotonic()
                await conn.cancel(session_id=s.session_id)
                got = await asyncio.wait_for(prompt, ABORT_GRACE + 5)
                assert got.stop_reason == "cancelled"
                assert time.monotonic() - cancelled <= ABORT_GRACE + 1
                assert "w199" not in client.text()

    drive(go)


def test_a_session_eukhe_run_made_loads_as_its_conversation(tmp_path: Path) -> None:
    """... and with its task list as the plan."""
    script = [{"results": 0, "calls": [TODO]}, {"results": 1, "text": "The answer from the terminal."}]
    with FauxServer(parse(script)) as server:
        home = home_for(tmp_path, server.url)
        ran = eukhe("run", "--json", "a question from the terminal", cwd=tmp_path, home=home)
        assert ran.returncode == 0, ran.stderr
        listed = eukhe("sessions", "--json", cwd=tmp_path, home=home)
        [row] = json.loads(listed.stdout)["sessions"]

        async def go() -> None:
            client = Editor()
            async with editor_on(tmp_path, home, client) as (conn, _):
                await asyncio.wait_for(
                    conn.load_session(cwd=str(tmp_path), session_id=row["id"], mcp_servers=[]), WAIT
                )
            kinds = [k for k in client.kinds() if k != "available_commands_update"]
            assert kinds == [
                "user_message_chunk",
                "tool_call",
                "tool_call_update",
                "agent_message_chunk",
                "plan",
            ]
            assert plans(client) == [PLAN]
            said = [u for u in client.updates if getattr(u, "session_update", "") == "user_message_chunk"]
            assert said[0].content.text == "a question from the terminal"
            assert client.text() == "The answer from the terminal."

        drive(go)


def test_a_prompt_to_no_session_and_garbage_lines_get_errors_and_the_editor_goes_on(tmp_path: Path) -> None:
    script = [{"results": 0, "text": "Still here."}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url), client) as (conn, proc):
                with pytest.raises(RequestError, match="no session"):
                    await asyncio.wait_for(conn.prompt(session_id="nope", prompt=[text_block("hi")]), WAIT)
                proc.stdin.write(b'this is no json\n[1, 2]\n{"jsonrpc": "2.0"}\n')
                await proc.stdin.drain()
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("hi")]), WAIT
                )
                assert got.stop_reason == "end_turn" and client.text() == "Still here."

    drive(go)


def test_a_permission_request_nobody_answers_ends_at_its_deadline_as_a_denial_that_says_so(
    tmp_path: Path,
) -> None:
    script = [{"results": 0, **bash("touch made")}, {"results": 1, "text": "Done."}]
    settings = {"permissions": {"ask": ["Bash(touch *)"], "askTimeoutMs": 1000}}

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor("never")
            async with editor_on(tmp_path, home_for(tmp_path, server.url, settings), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("go")]), WAIT
                )
                assert got.stop_reason == "end_turn"
            told = [str(m["content"]) for m in server.seen[-1].body["messages"] if m["role"] == "tool"]
            assert any("nobody answered within 1 s (permissions.askTimeoutMs)" in t for t in told), told
        assert len(client.asked) == 1 and not (tmp_path / "made").exists()

    drive(go)


def test_an_editor_that_closes_mid_turn_leaves_its_run_to_the_owner_which_finishes_it(tmp_path: Path) -> None:
    slow = {"when": "long", "text": " ".join(f"s{i}" for i in range(20)), "chunks": 20, "delay": 0.05}
    script = [slow, slow, {"when": "and next?", "text": "The next one."}]  # cut off, then the owner's
    with FauxServer(parse(script)) as server:
        home = home_for(tmp_path, server.url)
        client = Editor()
        sid: list[str] = []

        async def go() -> None:
            async with editor_on(tmp_path, home, client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                sid.append(s.session_id)
                prompt = asyncio.ensure_future(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("long")])
                )
                while "s3" not in client.text():
                    await asyncio.sleep(0.02)
                prompt.cancel()  # the editor goes away with the turn at work

        drive(go)
        # the session's next run waits for the cut-off one, which the owner finishes
        after = eukhe("run", "--session", sid[0], "--json", "and next?", cwd=tmp_path, home=home)
        assert after.returncode == 0, after.stderr
        runs = eukhe("session", "show", "--json", sid[0], cwd=tmp_path, home=home)
    got = json.loads(runs.stdout)["runs"]
    assert [r["outcome"] for r in got] == ["answered", "answered"], got
    assert got[0]["messages"][-1]["content"].endswith("s19")  # the owner ran it to its end
    assert got[1]["messages"][-1]["content"] == "The next one."


def test_a_prompt_while_a_turn_works_steers_it_and_is_answered_with_it(tmp_path: Path) -> None:
    script = [
        {"when": "use the blue one", "text": "Steered to blue."},
        {"when": "paint it", "results": 0, **bash("sleep 1")},
    ]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                first = asyncio.ensure_future(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("paint it")])
                )
                while "tool_call" not in client.kinds():
                    await asyncio.sleep(0.02)
                steer = conn.prompt(session_id=s.session_id, prompt=[text_block("use the blue one")])
                got = await asyncio.wait_for(asyncio.gather(first, steer), WAIT)
                assert [g.stop_reason for g in got] == ["end_turn", "end_turn"]
                assert client.text() == "Steered to blue."
            last = json.dumps(server.seen[-1].body["messages"])
            assert "use the blue one" in last and "paint it" in last  # one run took both

    drive(go)


def test_the_editor_gets_eukhes_modes_and_commands_and_in_read_only_a_write_is_asked(tmp_path: Path) -> None:
    write = {"name": "write", "arguments": {"path": "new.txt", "content": "x\n"}}
    script = [{"results": 0, "calls": [write]}, {"results": 1, "text": "Tried."}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            home = home_for(tmp_path, server.url)
            (home / "prompts").mkdir()
            (home / "prompts" / "review.md").write_text(
                "---\ndescription: review the diff\n---\nReview $ARGUMENTS\n"
            )
            client = Editor("no")
            async with editor_on(tmp_path, home, client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                assert [m.id for m in s.modes.available_modes] == ["read-only", "workspace-write", "plan"]
                assert s.modes.current_mode_id == "workspace-write"
                await conn.set_session_mode(session_id=s.session_id, mode_id="read-only")
                with pytest.raises(RequestError, match="eukhe's modes here are"):
                    await conn.set_session_mode(session_id=s.session_id, mode_id="danger-full-access")
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("go")]), WAIT
                )
                assert got.stop_reason == "end_turn"
        [listed] = [
            u for u in client.updates if getattr(u, "session_update", "") == "available_commands_update"
        ]
        assert [(c.name, c.description) for c in listed.available_commands] == [("review", "review the diff")]
        assert len(client.asked) == 1 and not (tmp_path / "new.txt").exists()  # workspace-write would not ask

    drive(go)


TIME = Path(__file__).resolve().parents[2] / ".venv-mcp" / "bin" / "mcp-server-time"
TOKEN = "editor-token-7f3a9c1d"


def test_an_editors_mcp_server_is_started_for_its_session_and_its_tool_used(tmp_path: Path) -> None:
    if not TIME.exists():
        pytest.skip(f"{TIME} is not installed: make mcpservers installs it")
    call = {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}
    script = [{"results": 0, "calls": [call]}, {"results": 1, "text": "It is late."}]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor("once")
            gated = {"mcp": {"startupGateMs": 20_000}}  # the first request waits for the server
            async with editor_on(tmp_path, home_for(tmp_path, server.url, gated), client) as (conn, _):
                token = EnvVariable(name="TIME_TOKEN", value=TOKEN)  # an editor's server's secret
                time_server = McpServerStdio(name="time", command=str(TIME), args=[], env=[token])
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[time_server])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("time?")]), WAIT
                )
                assert got.stop_reason == "end_turn"
            [result] = [str(m["content"]) for m in server.seen[-1].body["messages"] if m["role"] == "tool"]
            assert "UTC" in result and "not run" not in result, result

    drive(go)
    stored = b"".join(f.read_bytes() for f in (tmp_path / "home").rglob("*") if f.is_file())
    assert TOKEN.encode() not in stored  # the editor's servers are never written to the home


def test_an_image_in_a_prompt_reaches_the_model_and_one_for_a_text_model_is_refused(tmp_path: Path) -> None:
    png = base64.b64encode(encoded("PNG", 4, 4)).decode()
    script = [{"results": 0, "text": "A small square."}]
    takes = {"models": {"vllm/m": {"input": ["text", "image"]}}}

    async def go(settings: dict[str, Any]) -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url, settings), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                blocks = [text_block("what is this?"), image_block(png, "image/png")]
                if not settings:
                    with pytest.raises(RequestError, match="does not take images"):
                        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=blocks), WAIT)
                    return
                got = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=blocks), WAIT)
                assert got.stop_reason == "end_turn"
            sent = json.dumps(server.seen[-1].body["messages"])
            assert f"data:image/png;base64,{png}" in sent

    drive(lambda: go(takes))
    drive(lambda: go({}))


def test_a_prompt_whose_subagent_outlives_its_run_is_answered_after_the_run_its_report_starts(
    tmp_path: Path,
) -> None:
    """... and the subagent's ask, which comes once the parent's run has ended, reaches the
    editor as the turn's own would."""
    script = [
        {"when": "make the file", "results": 0, **bash("sleep 0.5")},  # the parent's run ends meanwhile
        {"when": "make the file", "results": 1, **bash("touch made")},
        {"when": "make the file", "results": 2, "text": "made it"},
        {"when": "[child-exited", "results": 0, "text": "My child made the file."},
        {"when": "delegate", "results": 0, **spawn("make the file")},
        {"when": "delegate", "results": 1, "text": "Spawned it. "},
    ]

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor("once")
            async with editor_on(tmp_path, home_for(tmp_path, server.url, ASKS), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                got = await asyncio.wait_for(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("delegate")]), WAIT
                )
                said = client.text()  # all of it came before the answer
                assert got.stop_reason == "end_turn"
        assert said == "Spawned it. My child made the file.", said
        [asked] = client.asked
        assert "touch made" in asked.title and (tmp_path / "made").exists()
        last = json.dumps(server.seen[-1].body["messages"])
        assert "[child-exited: no-reply child:c1.1] Last assistant text: made it" in last

    drive(go)


def test_a_cancel_while_the_turn_waits_for_its_subagent_is_answered_cancelled_at_once(tmp_path: Path) -> None:
    """... once: the next prompt is a turn of its own, which waits for the subagent in turn."""
    gate = tmp_path / "gate"
    script = [
        {"when": "wait for the gate", "text": "the gate opened", "chunks": 2, "stallAfter": 1,
         "stallUntil": str(gate)},
        {"when": "[child-exited", "results": 0, "text": "The gate is open."},
        {"when": "delegate", "results": 0, **spawn("wait for the gate")},
        {"when": "delegate", "results": 1, "text": "Spawned it."},
        {"when": "and now?", "results": 1, "text": "Still waiting."},
    ]  # fmt: skip

    async def go() -> None:
        with FauxServer(parse(script)) as server:
            client = Editor()
            async with editor_on(tmp_path, home_for(tmp_path, server.url), client) as (conn, _):
                s = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                prompt = asyncio.ensure_future(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("delegate")])
                )
                while "Spawned it." not in client.text():
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.5)  # its run has ended: the turn waits for the subagent
                assert not prompt.done()
                cancelled = time.monotonic()
                await conn.cancel(session_id=s.session_id)
                got = await asyncio.wait_for(prompt, WAIT)
                assert got.stop_reason == "cancelled"
                assert time.monotonic() - cancelled < ABORT_GRACE - 1  # at once, not at the grace
                after = asyncio.ensure_future(
                    conn.prompt(session_id=s.session_id, prompt=[text_block("and now?")])
                )
                while "Still waiting." not in client.text():
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.3)
                assert not after.done()  # a turn of its own, held for the subagent in turn
                gate.touch()
                got = await asyncio.wait_for(after, WAIT)
                assert got.stop_reason == "end_turn"
                assert client.text() == "Spawned it.Still waiting.The gate is open."

    drive(go)
