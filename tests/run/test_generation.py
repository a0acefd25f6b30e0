"""The spec's regressions of H4 and H4.8, each under its name, driven through the
faux model over loopback HTTP with the real OpenAI SDK."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Request, Tool
from eukhe.rules import recovery, run
from eukhe.run import notes
from eukhe.run.effects import Direct
from eukhe.run.loop import RunLoop, RunRules, Settings
from eukhe.run.outcome import RunOutcome

TOOLS = (Tool("read", "read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),)


class Runner:
    """A tool runner that records its calls; results from `answers` by path, else 'ok'."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.calls: list[ToolCall] = []
        self.answers = answers or {}

    async def __call__(self, call: ToolCall) -> tuple[str, bool]:
        self.calls.append(call)
        path = (call.arguments or {}).get("path", "")
        answer = self.answers.get(path, "ok")
        if callable(answer):
            answer = answer()
        return str(answer), False


def go(
    script: Any,
    settings: Settings | None = None,
    runner: Runner | None = None,
    request_hooks: Sequence[Any] = (),
    abort_after: float | None = None,
    **kw: Any,
) -> tuple[RunOutcome, FauxServer, list[float], Runner]:
    sleeps: list[float] = []
    runner = runner or Runner()

    async def sleep(s: float) -> None:
        sleeps.append(s)

    async def main(url: str) -> RunOutcome:
        p = OpenAIChat("faux", base_url=url, timeout=20)
        g = RunLoop(
            p,
            "faux-model",
            TOOLS,
            runner,
            settings or Settings(),
            request_hooks=request_hooks,
            effects=Direct(sleep),
            **kw,
        )
        if abort_after is not None:
            asyncio.get_running_loop().call_later(abort_after, g.cancel.set)
        try:
            return await g.run("go")
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        out = asyncio.run(main(server.url))
    return out, server, sleeps, runner


def last_user(server: FauxServer, i: int) -> str:
    return str(server.seen[i].body["messages"][-1]["content"])


def read(path: str) -> dict[str, Any]:
    return {"calls": [{"name": "read", "arguments": {"path": path}}]}


def test_a_run_that_keeps_calling_tools_fails_at_the_round_cap() -> None:
    out, _server, _, runner = go([read(f"f{i}") for i in range(10)], Settings(max_tool_rounds=3))
    assert out.outcome == "failed" and out.code == "run_limit" and out.rounds == 3
    assert "maxToolRounds = 3" in (out.message or "") and len(runner.calls) == 3


def test_an_abort_ends_a_run_stuck_in_a_request_hook() -> None:
    async def stuck(request: Request) -> Request:
        await asyncio.sleep(3600)
        return request

    out, server, _, _ = go(["never sent"], request_hooks=[stuck], abort_after=0.2)
    assert out.outcome == "aborted" and server.seen == []


def test_a_failed_transform_fails_the_turn_and_sends_nothing() -> None:
    """H6.1: a failing before_request hook fails the turn; no other prompt is sent
    (through the owner too: tests/owner/test_owner.py)."""

    async def broken(request: Request) -> Request:
        raise RuntimeError("the transform broke")

    out, server, _, _ = go(["never sent"], request_hooks=[broken])
    assert out.outcome == "failed" and server.seen == []
    assert out.message == "a before_request hook failed: RuntimeError: the transform broke"


def test_a_reply_of_only_thinking_is_retried_and_then_answers() -> None:
    out, server, sleeps, _ = go([{"thinking": "hmm " * 10}, {"when": "Harness note", "text": "The answer."}])
    assert out.outcome == "answered" and out.answer == "The answer." and out.notes == 1 and out.retries == 0
    assert last_user(server, 1).startswith(
        "Harness note, attempt 2: your previous reply had no text and no tool call"
    )
    failed = [m for m in out.transcript if m.is_error]
    assert len(failed) == 1 and failed[0].content == notes.no_answer("stop", 40)
    assert all("Harness note" not in m.content for m in out.transcript)  # never in the transcript
    assert sleeps == []  # sent at once


def test_a_retry_after_no_answer_ends_its_request_with_a_note_and_answers() -> None:
    out, server, _, _ = go([{"text": "  \n "}, {"when": "Harness note", "text": "Now with text."}])
    assert out.outcome == "answered" and out.answer == "Now with text."
    sent = [s.body["messages"] for s in server.seen]
    assert sent[1][:-1] == sent[0]  # the failed reply stays out of the next context
    assert sent[1][-1]["content"].startswith("Harness note, attempt 2:")


def test_a_retry_after_a_repeating_stream_ends_its_request_with_a_note_and_answers() -> None:
    script = {
        "replies": [
            {"when": "Harness note", "text": "Bitcoin, Ethereum, Solana."},
            {"repeat": {"line": "- r/Bitcoin", "times": 200}, "chunks": 200},
        ],
        "then": "last",  # greedy: without a note, the same request gets the same loop
    }
    out, server, _, _ = go(script)
    assert out.outcome == "answered" and out.answer == "Bitcoin, Ethereum, Solana." and len(server.seen) == 2
    assert last_user(server, 1) == notes.repeating(2, "- r/Bitcoin", 1)


def test_every_retry_after_a_cut_sends_a_new_request_until_the_notes_run_out() -> None:
    out, server, sleeps, _ = go({"replies": [{"thinking": "..."}], "then": "last"}, Settings(max_retries=2))
    assert out.outcome == "failed" and out.code == "model_error"
    assert out.notes == run.MAX_NOTES and out.retries == 0 and len(server.seen) == run.MAX_NOTES + 1
    requests = [json.dumps(s.body["messages"]) for s in server.seen]
    assert len(set(requests)) == len(requests)  # each retry is a new request
    assert sleeps == []


def test_replies_of_only_thinking_past_the_notes_fail_the_run_with_model_error() -> None:
    out, _, _, _ = go({"replies": [{"thinking": "abc"}], "then": "last"})
    assert out.code == "model_error" and out.message == notes.no_answer("stop", 3)


def test_a_reply_of_only_thinking_is_retried_with_a_note_when_the_retry_policy_is_disabled() -> None:
    out, _, _, _ = go(
        [{"thinking": "x"}, {"when": "Harness note", "text": "ok"}], Settings(retry_enabled=False)
    )
    assert out.outcome == "answered" and out.notes == 1


def test_a_noted_retry_is_sent_at_once_and_spends_no_retry() -> None:
    out, _, sleeps, _ = go(
        [{"thinking": "x"}, {"error": {"status": 503}}, {"text": "done"}], Settings(max_retries=1)
    )
    assert out.outcome == "answered" and out.notes == 1 and out.retries == 1 and len(sleeps) == 1


def test_a_transient_error_waits_at_least_the_servers_wait_and_resends_the_same_request() -> None:
    out, server, sleeps, _ = go([{"error": {"status": 429, "retryAfter": 7}}, "fine"])
    assert out.outcome == "answered" and sleeps == [7.0]
    assert server.seen[0].body == server.seen[1].body


def test_a_reply_with_stop_reason_stop_runs_its_tool_calls() -> None:
    out, _, _, runner = go([{**read("a"), "stop": "stop"}, "read it"])
    assert out.outcome == "answered" and [c.name for c in runner.calls] == ["read"]


def test_no_call_of_a_reply_cut_at_the_output_limit_runs() -> None:
    out, _server, _, runner = go([{**read("a"), "stop": "length", "usage": [5, 4096]}, "ok"])
    assert runner.calls == [] and out.rounds == 1
    results = [m for m in out.transcript if m.role == "tool"]
    assert results[0].content == notes.truncated("read", 4096)


def test_a_length_stop_while_reasoning_is_retried_with_a_length_note_and_answers() -> None:
    out, server, _, _ = go([{"thinking": "plan " * 50, "stop": "length", "usage": [5, 512]}, "Short answer."])
    assert out.outcome == "answered" and last_user(server, 1) == notes.length(2, 1, 512)


def test_a_length_stop_with_text_answers_cut_and_says_so() -> None:
    shown: list[tuple[str, str]] = []
    out, server, _, _ = go(
        [{"text": "The answer is", "stop": "length", "usage": [5, 3]}],
        show=lambda kind, text, data=None: shown.append((kind, text)),
    )
    assert out.outcome == "answered" and out.answer == "The answer is" and out.cut
    assert out.notes == 0 and len(server.seen) == 1  # a cut answer is no stuck model: not retried
    assert ("cut", notes.answer_cut(3)) in shown
    assert out.json()["cut"] is True


def test_length_stops_while_reasoning_fail_the_run_after_three_length_notes() -> None:
    out, server, _, _ = go({"replies": [{"thinking": "plan", "stop": "length"}], "then": "last"})
    assert out.outcome == "failed" and out.notes == recovery.LENGTH_NOTES and len(server.seen) == 4
    assert out.message == notes.length_gave_up(4)


def test_the_same_call_with_the_same_results_is_redirected_on_the_fifth_round_and_then_fails() -> None:
    out, server, _, runner = go({"replies": [read("a")], "then": "last"})
    assert len(runner.calls) == recovery.REPEAT_CALLS - 1  # four same rounds run, the fifth never
    assert out.outcome == "failed" and out.notes == recovery.REDIRECT_NOTES
    assert out.message == notes.repeat_gave_up(["read"], 5)
    assert last_user(server, 5).startswith(
        "Harness note, attempt 2: you made the same tool calls 5 times in a row"
    )


def test_the_same_calls_whose_results_change_keep_running() -> None:
    n = iter(range(100))
    runner = Runner({"log": lambda: f"progress {next(n)}"})
    out, _, _, runner = go([read("log")] * 12 + ["done"], runner=runner)
    assert out.outcome == "answered" and len(runner.calls) == 12


def test_the_loop_asks_the_rules_tie() -> None:
    """Swapping the run rule changes what the loop does: a rule that answers every
    reply ends the run at once, whatever the model said."""

    def answers(cfg: run.Cfg, s: run.Run, x: run.Input) -> run.Run:
        if x.kind is run.Kind.CALLS:
            return run.step(cfg, s, run.Input(run.Kind.ANSWER))
        return run.step(cfg, s, x)

    out, _, _, runner = go([read("a"), "done"], rules=RunRules(step=answers))
    assert out.outcome == "answered" and runner.calls == []

    def never_redo(cfg: recovery.RCfg, r: recovery.Rec, x: recovery.Reply) -> recovery.Step:
        t = recovery.step(cfg, r, x)
        return recovery.Step(recovery.Act.QUIT, t.rec) if t.act is recovery.Act.REDO else t

    out, _, _, _ = go([{"thinking": "p", "stop": "length"}, "ok"], rules=RunRules(recover=never_redo))
    assert out.outcome == "failed" and out.notes == 0


def test_a_hermes_tool_call_leaked_as_text_is_rebuilt_and_runs() -> None:
    from eukhe.run.leak import scan

    leaked = 'Let me look.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>'
    out, _server, _, runner = go([{"text": leaked, "chunks": 5}, "Read it."], scan=scan)
    assert out.outcome == "answered" and [c.arguments for c in runner.calls] == [{"path": "a.txt"}]
    assert out.notes == 0 and out.rounds == 1
    assistant = next(m for m in out.transcript if m.role == "assistant")
    assert assistant.content == "Let me look." and assistant.calls[0].name == "read"


def test_a_broken_leaked_tool_call_is_noted_and_then_stands_as_text_after_two_notes() -> None:
    from eukhe.run.leak import scan

    broken = '<tool_call>{"name": "read", "arguments": {"path": "a.txt"</tool_call>'
    out, server, _, runner = go({"replies": [{"text": broken}], "then": "last"}, scan=scan)
    assert runner.calls == [] and out.outcome == "answered" and out.answer == broken
    assert out.notes == recovery.LEAK_NOTES and len(server.seen) == 3
    assert last_user(server, 1).startswith(
        "Harness note, attempt 2: your previous reply wrote a tool call as hermes markup in its text"
    )
    assert last_user(server, 2).endswith("Leak note 2 of 2.")


PARSE_FAILURE = {
    "code": 500,
    "message": "The model produced output that does not match the expected peg-native format",
    "type": "server_error",
}
"""llama.cpp's answer when its tool-call parser rejects what the model wrote."""


def test_output_the_servers_parser_rejects_is_retried_with_a_note_as_a_new_request() -> None:
    rejected = {"error": {"status": 500, "body": {"error": PARSE_FAILURE}}}
    out, server, sleeps, _ = go([rejected, {"when": "Harness note", "text": "Four."}])
    assert out.outcome == "answered" and out.answer == "Four."
    assert out.notes == 1 and out.retries == 0 and sleeps == []  # noted: sent at once, spends no retry
    assert len(server.seen) == 2 and last_user(server, 1).startswith(
        "Harness note, attempt 2: your previous reply began a tool call that the server's tool-call parser"
    )
    failed = [m for m in out.transcript if m.is_error]
    assert len(failed) == 1 and "does not match the expected peg-native format" in failed[0].content


def test_output_the_servers_parser_keeps_rejecting_fails_the_run_after_two_notes() -> None:
    rejected = {"error": {"status": 500, "body": {"error": PARSE_FAILURE}}}
    out, server, sleeps, _ = go({"replies": [rejected], "then": "last"})
    assert out.outcome == "failed" and out.code == "model_error"
    assert out.notes == recovery.LEAK_NOTES and out.retries == 0 and sleeps == []
    assert len(server.seen) == 3  # each request new: attempts 1, 2 and 3
    assert [last_user(server, i)[:26] for i in (1, 2)] == [
        "Harness note, attempt 2: y",
        "Harness note, attempt 3: y",
    ]
    assert (out.message or "").endswith(
        "The server's tool-call parser rejected the model's output after 2 rejected notes in a row: "
        "use a different model, or serve it with a chat template whose tool-call format it follows."
    )
    assert "HTTP 500 (rejected)" in (out.message or "")


def background(
    script: Any, window: str, interval: float, **kw: Any
) -> tuple[RunOutcome, FauxServer, list[float]]:
    from eukhe.ai.openai_responses import OpenAIResponses

    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    async def main(url: str) -> RunOutcome:
        p = OpenAIResponses("faux", base_url=url, timeout=20)
        g = RunLoop(
            p,
            "faux-model",
            TOOLS,
            Runner(),
            Settings(),
            effects=Direct(sleep),
            background=True,
            window=window,
            poll_interval=interval,
            **kw,
        )
        try:
            return await g.run("go")
        finally:
            await p.close()

    with FauxServer(parse(script)) as server:
        out = asyncio.run(main(server.url))
    return out, server, sleeps


def test_a_deferred_answer_is_polled_until_it_is_ready() -> None:
    out, server, sleeps = background([{"text": "ready at last", "deferred": {"polls": 4}}], "15m", 60)
    assert out.outcome == "answered" and out.answer == "ready at last"
    assert [s.method for s in server.seen] == ["POST"] + ["GET"] * 5 and sleeps == [60.0] * 5


def test_fails_a_response_still_deferred_after_its_last_poll() -> None:
    out, server, _ = background([{"text": "never", "deferred": {"polls": 1000}}], "15m", 300)  # 3 polls
    assert out.outcome == "failed" and out.code == "model_error"
    assert (out.message or "").startswith("The model's deferred response was not ready by its deadline, ")
    methods = [(s.method, s.path.rsplit("/", 1)[-1]) for s in server.seen]
    assert methods[0][0] == "POST" and [m for m, _ in methods[1:4]] == ["GET"] * 3
    assert methods[-1] == ("POST", "cancel")  # the job is cancelled, the request never resent


def test_an_abort_drops_a_hook_that_ignores_the_cancel_after_the_grace() -> None:
    from eukhe.run.loop import ABORT_GRACE

    async def deaf(request: Request) -> Request:
        while True:  # swallows every cancel
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue

    async def main() -> tuple[RunOutcome, float]:
        g = RunLoop(None, "m", TOOLS, Runner(), request_hooks=[deaf])
        loop = asyncio.get_running_loop()
        loop.call_later(0.1, g.cancel.set)
        t0 = loop.time()
        out = await g.run("go")
        return out, loop.time() - t0

    from eukhe.run.tool_runner import run_to_end

    out, took = run_to_end(asyncio.wait_for(main(), timeout=ABORT_GRACE + 5))
    assert out.outcome == "aborted" and took < ABORT_GRACE + 2


def test_a_stalled_stream_is_retried_at_once_with_its_note_and_twice_the_idle_deadline() -> None:
    # the second reply goes silent for 0.6 s: past the first deadline (0.4 s), within twice it
    script = [
        {"text": "x" * 20, "chunks": 10, "stallAfter": 2, "stall": 30},
        {"when": "Harness note", "text": "slow but fine", "chunks": 4, "stallAfter": 1, "stall": 0.6},
    ]
    out, server, sleeps, _ = go(script, Settings(stream_idle_timeout_ms=400))
    assert out.outcome == "answered" and out.answer == "slow but fine" and out.notes == 1 and sleeps == []
    note = last_user(server, 1)
    assert note.startswith("Harness note, attempt 2: your previous reply produced no output for 0.4 s")


# ---------------------------------------------------------------- steering (issue 15)


class Steers:
    """A session's steers queued while the run works: taken at a round end only when the
    run says it takes them (`rules.run.takes_steers`); what it never takes is left."""

    def __init__(self, *texts: str, after_round: int = 1) -> None:
        self.left = list(texts)
        self.after_round = after_round
        self.asked: list[tuple[int, bool]] = []  # (round end, whether the run takes steers there)

    async def round_end(self, steers: bool) -> list[str]:
        self.asked.append((len(self.asked) + 1, steers))
        if not steers or len(self.asked) < self.after_round:
            return []
        taken, self.left = self.left, []
        return taken


def test_a_steer_enters_at_the_round_end_after_every_result_of_the_round() -> None:
    two = {
        "calls": [{"name": "read", "arguments": {"path": "a"}}, {"name": "read", "arguments": {"path": "b"}}]
    }
    steers = Steers("use b only")
    out, server, _, _ = go([two, {"when": "use b only", "text": "b it is."}], inbox=steers)
    assert out.outcome == "answered" and out.answer == "b it is."
    roles = [(m["role"], m.get("content")) for m in server.seen[1].body["messages"]]
    assert roles[-3:] == [("tool", "ok"), ("tool", "ok"), ("user", "use b only")]
    assert steers.asked == [(1, True)]


def test_a_steer_ends_a_repeat_row() -> None:
    """Four same rounds, a steer, then the same call again: it runs (the row starts anew)
    where a fifth same round would have been redirected."""
    steers = Steers("try again, the file changed", after_round=4)
    out, _server, _, runner = go([read("x")] * 6 + ["done"], inbox=steers)
    assert out.outcome == "answered" and out.notes == 0 and len(runner.calls) == 6


def test_a_steer_at_the_last_round_the_cap_allows_is_left_for_the_next_run() -> None:
    steers = Steers("and then this", after_round=1)
    out, _server, _, _ = go([read("a"), read("b")], Settings(max_tool_rounds=1), inbox=steers)
    assert out.outcome == "failed" and out.code == "run_limit"
    assert steers.asked == [(1, False)] and steers.left == ["and then this"]


def test_the_round_end_asks_the_rules_where_steers_enter_tie(monkeypatch: Any) -> None:
    monkeypatch.setattr(run, "takes_steers", lambda cfg, s, x: False)
    steers = Steers("never taken")
    out, _server, _, _ = go([read("a"), "done"], inbox=steers)
    assert out.outcome == "answered" and steers.asked == [(1, False)] and steers.left == ["never taken"]
    monkeypatch.undo()
    flipped = lambda calls, users: (run.Entry.USER,) * users + (run.Entry.RESULT,) * calls  # noqa: E731
    monkeypatch.setattr(run, "round_log", flipped)
    out, server, _, _ = go([read("a"), "done"], inbox=Steers("first"))
    assert [m["role"] for m in server.seen[1].body["messages"]][-2:] == ["user", "tool"]
