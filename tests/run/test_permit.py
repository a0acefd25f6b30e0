"""The permission gate in a run (`run.permit.Gate` through `RunLoop.gate`), with
the faux model over loopback: a denied call does not run and its result says why and how
to allow it; an ask ends by an answer, its deadline (on a clock the test moves) or the
run's abort; "always" adds a rule; nobody to answer is a denial at once."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from eukhe.ai.faux import FauxServer, parse
from eukhe.ai.openai_chat import OpenAIChat
from eukhe.ai.reply import ToolCall
from eukhe.ai.request import Tool
from eukhe.rules import permission
from eukhe.rules.permission import Answer, Cfg, Kind, Mode, PermissionState, Policy, Rule, Source, Why
from eukhe.run.loop import RunLoop
from eukhe.run.outcome import RunOutcome
from eukhe.run.permit import Asked, Gate
from eukhe.waits import ManualClock

TOOLS = (
    Tool("bash", "run", {"type": "object", "properties": {"command": {"type": "string"}}}),
    Tool("write", "write", {"type": "object", "properties": {"path": {"type": "string"}}}),
)


def bash(command: str) -> dict[str, Any]:
    return {"calls": [{"name": "bash", "arguments": {"command": command}}]}


class Runner:
    def __init__(self) -> None:
        self.ran: list[tuple[str, bool]] = []

    async def __call__(self, c: ToolCall, outside: bool = False) -> tuple[str, bool]:
        self.ran.append((str((c.arguments or {}).get("command") or (c.arguments or {}).get("path")), outside))
        return "ran", False


class Person:
    """Answers in turn; `None`: never answers (the deadline or the abort ends the ask)."""

    def __init__(self, *answers: tuple[Answer, str] | None) -> None:
        self.answers = list(answers)
        self.asked: list[Asked] = []

    async def ask(self, q: Asked) -> tuple[Answer, str]:
        self.asked.append(q)
        got = self.answers.pop(0) if self.answers else None
        if got is None:
            await asyncio.Event().wait()  # nobody is there
        assert got is not None
        return got


def run(
    tmp_path: Path,
    script: list[dict[str, Any]],
    cfg: Cfg,
    person: Person | None = None,
    during: Any = None,
    runner: Runner | None = None,
    shown: list[tuple[str, str, Any]] | None = None,
) -> tuple[RunOutcome, Runner, Gate]:
    runner = runner or Runner()

    async def main(url: str) -> RunOutcome:
        provider = OpenAIChat("faux", base_url=url, timeout=20)
        clock = ManualClock()
        gate = Gate(PermissionState(cfg), tmp_path, tmp_path / "home", person, timeout=30.0, clock=clock)
        if shown is not None:
            gate.show = lambda kind, text, data=None: shown.append((kind, text, data))
        g = RunLoop(provider, "m", TOOLS, runner, gate=gate)
        gate.cancel = g.cancel
        holder.append(gate)
        task = asyncio.ensure_future(g.run("go"))
        if during is not None:
            await during(g, clock, person)
        try:
            return await asyncio.wait_for(task, 30)
        finally:
            await provider.close()

    holder: list[Gate] = []
    with FauxServer(parse(script)) as server:
        out = asyncio.run(main(server.url))
    return out, runner, holder[0]


def results(out: RunOutcome) -> list[str]:
    return [m.content for m in out.transcript if m.role == "tool"]


ASK_TOUCH = (Rule(Kind.ASK, "Bash", "touch *", Source.HOME),)


def interactive(rules: tuple[Rule, ...] = ASK_TOUCH, mode: Mode = Mode.WORKSPACE_WRITE) -> Cfg:
    return Cfg(mode, Policy.ON_REQUEST, True, True, rules)


def test_a_denied_call_does_not_run_and_its_result_says_why_and_the_run_goes_on(tmp_path: Path) -> None:
    cfg = Cfg(
        Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, False, True, (Rule(Kind.DENY, "Bash", "rm *", Source.HOME),)
    )
    out, runner, _ = run(
        tmp_path, [{"results": 0, **bash("ls && rm -rf x")}, {"results": 1, "text": "ok"}], cfg
    )
    assert out.outcome == "answered" and runner.ran == []
    assert results(out) == ["Tool bash was not run: permission denied: a deny rule matches it (Bash(rm *))."]
    assert out.denials == [
        {
            "tool": "bash",
            "arguments": '{"command": "ls && rm -rf x"}',
            "cause": "a deny rule matches it",
            "rule": "Bash(rm *)",
        }
    ]


def test_headless_an_ask_is_a_denial_at_once_saying_how_to_allow_it(tmp_path: Path) -> None:
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, False, True, ASK_TOUCH)
    out, runner, _ = run(tmp_path, [{"results": 0, **bash("touch a")}, {"results": 1, "text": "ok"}], cfg)
    assert out.outcome == "answered" and runner.ran == []
    [said] = results(out)
    assert said.startswith(
        "Tool bash was not run: permission denied: no person can answer an ask here (Bash(touch *));"
    )
    assert "allow it with a rule in permissions.allow" in said


def test_an_ask_answered_once_runs_the_call_and_asks_again_next_time(tmp_path: Path) -> None:
    person = Person((Answer.ONCE, ""), (Answer.NO, "not twice"))
    script = [
        {"results": 0, **bash("touch a")},
        {"results": 1, **bash("touch a")},
        {"results": 2, "text": "ok"},
    ]
    out, runner, _ = run(tmp_path, script, interactive(), person)
    assert runner.ran == [("touch a", False)] and len(person.asked) == 2
    assert person.asked[0].text == "touch a" and person.asked[0].why == "an ask rule matches it"
    assert results(out)[1] == (
        "Tool bash was not run: permission denied: a person denied it (Bash(touch *)); the user said no. "
        "The user's reason: not twice"
    )


def test_always_for_the_session_adds_a_rule_and_the_next_call_runs_unasked(tmp_path: Path) -> None:
    person = Person((Answer.SESSION, ""))
    script = [
        {"results": 0, **bash("make build")},
        {"results": 1, **bash("make build")},
        {"results": 2, "text": "ok"},
    ]
    cfg = Cfg(Mode.WORKSPACE_WRITE, Policy.UNTRUSTED, True, True, ())
    _, runner, gate = run(tmp_path, script, cfg, person)
    assert runner.ran == [("make build", False), ("make build", False)] and len(person.asked) == 1
    assert gate.session.cfg.rules == (Rule(Kind.ALLOW, "Bash", "make build", Source.SESSION),)


def test_an_ask_nobody_answers_is_denied_at_its_deadline_naming_it(tmp_path: Path) -> None:
    async def later(g: RunLoop, clock: ManualClock, person: Person) -> None:
        while not person.asked:
            await asyncio.sleep(0.01)
        clock.advance(30.0)

    person = Person(None)
    out, runner, _ = run(
        tmp_path,
        [{"results": 0, **bash("touch a")}, {"results": 1, "text": "ok"}],
        interactive(),
        person,
        later,
    )
    assert out.outcome == "answered" and runner.ran == []
    assert results(out) == [
        "Tool bash was not run: permission denied: nobody answered before permissions.askTimeoutMs "
        "(Bash(touch *)); nobody answered within 30 s (permissions.askTimeoutMs)."
    ]


def test_the_runs_abort_ends_an_ask_and_the_run(tmp_path: Path) -> None:
    async def abort(g: RunLoop, clock: ManualClock, person: Person) -> None:
        while not person.asked:
            await asyncio.sleep(0.01)
        g.cancel.set()

    person = Person(None)
    out, runner, _ = run(
        tmp_path,
        [{"results": 0, **bash("touch a")}, {"results": 1, "text": "ok"}],
        interactive(),
        person,
        abort,
    )
    assert out.outcome == "aborted" and runner.ran == []


def test_an_escape_runs_outside_only_on_a_persons_yes(tmp_path: Path) -> None:
    call = {"calls": [{"name": "bash", "arguments": {"command": "make", "outside_sandbox": True}}]}
    person = Person((Answer.SESSION, ""), (Answer.ONCE, ""))
    script = [{"results": 0, **call}, {"results": 1, **call}, {"results": 2, "text": "ok"}]
    cfg = Cfg(
        Mode.WORKSPACE_WRITE, Policy.ON_REQUEST, True, True, (Rule(Kind.ALLOW, "Bash", None, Source.HOME),)
    )
    _, runner, _ = run(tmp_path, script, cfg, person)
    assert runner.ran == [("make", True), ("make", True)]  # outside, by the person's answers
    assert len(person.asked) == 2  # an escape is asked each time, always or not
    assert person.asked[0].why == "it asks to run outside the sandbox"


def test_eukhes_own_files_are_refused_even_in_full_access(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write = {
        "calls": [{"name": "write", "arguments": {"path": str(home / "settings.json"), "content": "{}"}}]
    }
    eukhe = {"calls": [{"name": "write", "arguments": {"path": ".eukhe/skills/x.md", "content": "x"}}]}
    script = [{"results": 0, **write}, {"results": 1, **eukhe}, {"results": 2, "text": "ok"}]
    cfg = Cfg(Mode.FULL, Policy.ON_REQUEST, True, True, (Rule(Kind.ALLOW, "Edit", None, Source.HOME),))
    out, runner, _ = run(tmp_path, script, cfg, Person())
    assert runner.ran == []
    assert all(
        r.startswith("Tool write was not run: permission denied: it touches eukhe's own files")
        for r in results(out)
    )


def test_a_command_that_changes_the_home_is_refused_and_one_that_only_names_it_runs(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    script = [
        {"results": 0, **bash("echo home > notes.txt")},  # a word that happens to name the home
        {"results": 1, **bash("rm -rf home")},
        {"results": 2, "text": "ok"},
    ]
    cfg = Cfg(Mode.FULL, Policy.ON_REQUEST, True, True, ())
    out, runner, _ = run(tmp_path, script, cfg, Person())
    assert runner.ran == [("echo home > notes.txt", True)]
    assert results(out)[1].startswith(
        "Tool bash was not run: permission denied: it touches eukhe's own files"
    )


def test_always_holds_for_a_command_that_names_an_existing_file(tmp_path: Path) -> None:
    """The files a command names are for deny and ask rules; the allow rule "always" adds
    covers the command itself."""
    (tmp_path / "again.txt").write_text("")
    person = Person((Answer.SESSION, ""))
    script = [
        {"results": 0, **bash("touch again.txt")},
        {"results": 1, **bash("touch again.txt")},
        {"results": 2, "text": "ok"},
    ]
    _, runner, _ = run(tmp_path, script, Cfg(Mode.WORKSPACE_WRITE, Policy.UNTRUSTED, True, True, ()), person)
    assert runner.ran == [("touch again.txt", False), ("touch again.txt", False)] and len(person.asked) == 1


# ---------------------------------------------------------------- plan mode

WRITE_X = {"calls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x"}}]}


def exit_plan(plan: str) -> dict[str, Any]:
    return {"calls": [{"name": "exit_plan", "arguments": {"plan": plan}}]}


def test_exit_plan_asks_a_person_whatever_the_rules_a_no_keeps_plan_mode_and_a_yes_ends_it(
    tmp_path: Path,
) -> None:
    allow_all = tuple(Rule(Kind.ALLOW, t, None, Source.HOME) for t in ("Edit", "Bash", "exit_plan"))
    cfg = dataclasses.replace(interactive(allow_all), plan=True)
    person = Person((Answer.NO, "add tests first"), (Answer.SESSION, ""))
    script = [
        {"results": 0, **WRITE_X},
        {"results": 1, **exit_plan("1. write x.txt")},
        {"results": 2, **exit_plan("1. write a test\n2. write x.txt")},
        {"results": 3, **WRITE_X},
        {"results": 4, "text": "done"},
    ]
    shown: list[tuple[str, str, Any]] = []
    out, runner, gate = run(tmp_path, script, cfg, person, shown=shown)
    assert [(q.tool, q.why, q.text) for q in person.asked] == [
        ("exit_plan", Why.PLAN_EXIT.value, "1. write x.txt"),
        ("exit_plan", Why.PLAN_EXIT.value, "1. write a test\n2. write x.txt"),
    ]
    denied, refused, approved, wrote = results(out)
    assert denied.startswith("Tool write was not run: permission denied: plan mode is on")
    assert "plan mode stays on" in refused and refused.endswith("The user's reason: add tests first")
    assert approved == "ran" and wrote == "ran"  # the runner stands in for the tools
    assert [r[0] for r in runner.ran] == ["None", "x.txt"]  # exit_plan once approved, then the write
    assert not gate.session.cfg.plan and gate.session.cfg.rules == allow_all  # its "always" adds no rule
    assert [(k, d) for k, _, d in shown if k == "mode"] == [
        ("mode", {"plan": False, "mode": "workspace-write"})
    ]


class ShiftTab(Runner):
    """A person turns plan mode on (the agent's Shift+Tab) while the first call runs."""

    gate: Gate | None = None

    async def __call__(self, c: ToolCall, outside: bool = False) -> tuple[str, bool]:
        if self.gate is not None and not self.ran:
            self.gate.plan(True)
        return await super().__call__(c, outside)


def test_a_mode_change_reaches_the_run_at_work_from_its_next_call(tmp_path: Path) -> None:
    runner = ShiftTab()

    async def during(g: RunLoop, clock: ManualClock, person: Person | None) -> None:
        runner.gate = g.gate  # type: ignore[assignment]

    script = [
        {"results": 0, **bash("touch a")},
        {"results": 1, **bash("touch b")},
        {"results": 2, "text": "ok"},
    ]
    out, _, _ = run(tmp_path, script, interactive(()), None, during, runner)
    assert runner.ran == [("touch a", False)]
    assert results(out)[1].startswith("Tool bash was not run: permission denied: plan mode is on")


def test_the_gate_asks_the_plan_rule_swapped_a_write_runs_in_plan_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(permission, "planned", lambda cfg, call: None)  # a rule with no plan mode
    cfg = dataclasses.replace(interactive(()), plan=True)
    out, runner, _ = run(tmp_path, [{"results": 0, **WRITE_X}, {"results": 1, "text": "ok"}], cfg)
    assert runner.ran == [("x.txt", False)] and results(out) == ["ran"]


def test_a_persons_mode_change_reaches_every_gate_of_their_session_at_work_and_no_other(
    tmp_path: Path,
) -> None:
    from eukhe.run.context import ProcessContext

    async def main() -> list[bool]:
        here = ProcessContext()
        gates = [Gate(PermissionState(interactive(())), tmp_path, tmp_path / "home") for _ in range(3)]
        for run, g in zip(("s/0001", "s/0001.c1", "t/0001"), gates, strict=True):
            here.runs.begin(run, asyncio.Event()).assembled(g, None)
        here.plan_mode("s", True)  # from the agent's thread: each on its run's loop
        await asyncio.sleep(0.05)
        return [g.session.cfg.plan for g in gates]

    assert asyncio.run(main()) == [True, True, False]
